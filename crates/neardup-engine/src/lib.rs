//! The pure dedup engines of neardup: no file, socket, environment or command line.
//!
//! # Overview
//!
//! - [`batch`] deduplicates a whole corpus at once: it sketches documents in parallel with a
//!   [`neardup_core::Method`], collapses exact copies, asks the candidate generator the
//!   method's [`neardup_core::method::Join`] names (a [`neardup_index::KeyTable`] for the
//!   symmetric keys every method has today) for candidate pairs, verifies them with the
//!   method's bounded [`neardup_core::Method::verify`] and clusters the verified pairs. Its
//!   result does not depend on the thread count.
//! - The online check-and-insert driver of the service (planned) stands on
//!   [`neardup_index::OnlineIndex`] beside it.
//!
//! Readers, writers and the `dedup` job around the engine live in `neardup-pipeline`; a
//! Python module or a server depends on this crate alone.
//!
//! # Example
//!
//! ```
//! use neardup_core::methods::minhash::MinHashBuilder;
//! use neardup_engine::{dedup, EngineOptions, NoProgress};
//!
//! let method = MinHashBuilder::new().threshold(0.6).build()?;
//! let texts = ["今天北京天气晴朗，适合出门散步。", "今天北京天气晴朗,适合出门散步!!", "完全不同的一句话。"];
//! let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress)?;
//! assert_eq!(outcome.assignment.duplicate_of, vec![None, Some(0), None]);
//! # Ok::<(), neardup_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! None.
#![deny(missing_docs)]

pub mod batch;
pub mod collection_index;
pub mod sketch_store;
pub mod spans;
pub mod stream;

/// The candidate factory's form of a method's join on Spark, for front ends that depend on the
/// engine alone (see [`spark_rules`]).
pub use neardup_index::{SparkForm, SparkGap};

/// The Hamming join in distributed steps and the fingerprint hook it reads (the Spark path).
pub use neardup_index::{
    distributed_passes, hamming_key, template_anchors, template_keys, HammingPass, READS_PER_CAP,
    TEMPLATE_ANCHORS,
};

pub use batch::{
    dedup, dedup_owned, learn_corpus, BoilerplateLine, BoilerplateStats, CorpusLearner,
    EngineOptions, EngineStats, Groups, Learned, NoProgress, Outcome, Progress, Sketcher,
    TemplateGroup, Templates, TEMPLATES_LISTED, TEMPLATE_SAMPLE,
};

pub mod online_rules;
pub mod spark_rules;
