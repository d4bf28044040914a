//! The pure core of neardup: everything that decides whether two texts are near-duplicates,
//! and nothing that touches a file, a socket, the environment or a command line.
//!
//! # Overview
//!
//! A near-duplicate method is split into four pure steps, each a module here:
//!
//! 1. [`normalize`]: Unicode NFKC, case folding, optional traditional-to-simplified Chinese,
//!    punctuation and whitespace folding, optional HTML stripping. Punctuation edits,
//!    full-width/half-width changes and script variants disappear at this step, which is why
//!    neardup finds them where byte-level tools do not.
//! 2. [`tokenize`]: characters, words (jieba for Chinese, Unicode words elsewhere) or `auto`
//!    (one token per CJK character, one per Latin word), then shingles of `n` tokens, hashed
//!    with xxh3 into a sorted set of `u64`.
//! 3. A [`Method`] (see [`methods`]) turns a document into a *sketch*, emits bucket *keys*
//!    (two documents are candidates when they share a key) and computes the true similarity
//!    of two sketches. Exact hashing and MinHash-LSH live in [`methods`]; later methods
//!    (SimHash block tables, n-gram indexes) plug into the same trait because every one of
//!    them is "shared key, then verify".
//! 4. [`cluster`]: turns verified pairs into kept documents and duplicates, either by the
//!    greedy *representative* rule (every removed document is verified similar to the kept
//!    one, so chains A~B~C never merge A with C) or by connected components.
//!
//! The crate never panics on user text: parameters are validated by builders that return
//! [`Error`], and every function accepts any `&str`.
//!
//! # Example
//!
//! ```
//! use neardup_core::methods::minhash::MinHashBuilder;
//! use neardup_core::Method;
//!
//! let method = MinHashBuilder::new().threshold(0.5).build()?;
//! let a = method.sketch("妈妈喊你来吃饭，快回家吧，饭菜都要凉了");
//! let b = method.sketch("妈妈叫你来吃饭！快回家吧，饭菜都要凉了");
//! assert!(method.similarity(&a, &b) >= 0.5);
//! # Ok::<(), neardup_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! - `jieba` (default): the `word` tokenizer, which segments Chinese with jieba (its
//!   dictionary is embedded, a few MB). Without it, asking for `word` is an error naming the
//!   parameter `tokenizer`; every other tokenizer and method works the same.
#![deny(missing_docs)]

pub mod boilerplate;
pub mod choices;
pub mod cluster;
pub mod codec;
pub mod corpus;
pub mod df_limit;
mod error;
pub mod hash;
mod html;
pub mod length_rule;
pub mod lsh;
pub mod measure;
pub mod method;
pub mod methods;
pub mod minhash;
pub mod normalize;
pub mod offsets;
pub mod params;
pub mod registry;
pub mod sharded;
pub mod simhash;
pub mod size;
pub mod sketch_kind;
pub mod slots;
mod t2s_table;
pub mod template_text;
#[doc(hidden)]
pub mod testing;
pub mod tokenize;

pub use error::{Error, Result};
pub use method::{
    CommonMarking, CommonMarks, CorpusStats, EditLimit, Join, JoinMeasure, JoinShape, Method,
    PairPrecheck, RareJoin, Sketch, SketchNotes, Verdict, PRIORITY_KEY,
};
pub use sketch_kind::SketchKind;
