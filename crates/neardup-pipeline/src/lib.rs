//! The batch pipeline of neardup: readers, writers and the parallel dedup engine.
//!
//! # Overview
//!
//! - [`input`] reads JSONL, plain text, CSV/TSV and Parquet (gzip and zstd transparently)
//!   into a [`input::Corpus`], with errors that name the file, line and field, or counted
//!   skips.
//! - [`engine`] is pure: it sketches documents in parallel, collapses exact copies, asks a
//!   [`neardup_index::KeyTable`] for candidate pairs, verifies them with the method's true
//!   measure and clusters the verified pairs. Its result does not depend on the thread count.
//! - [`output`] writes the kept documents in the input's format, and the clusters, pairs and
//!   statistics files, each through a temporary file renamed into place at the end.
//! - [`run`] ties them together for the `neardup dedup` command.
//!
//! # Example
//!
//! ```
//! use neardup_core::methods::minhash::MinHashBuilder;
//! use neardup_pipeline::engine::{dedup, EngineOptions, NoProgress};
//!
//! let method = MinHashBuilder::new().threshold(0.6).build()?;
//! let texts = ["今天北京天气晴朗，适合出门散步。", "今天北京天气晴朗,适合出门散步!!", "完全不同的一句话。"];
//! let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress);
//! assert_eq!(outcome.assignment.duplicate_of, vec![None, Some(0), None]);
//! # Ok::<(), neardup_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! None.
#![deny(missing_docs)]

pub mod engine;
pub mod error;
pub mod eval;
pub mod eval_io;
pub mod input;
pub mod output;
pub mod paths;
pub mod report;
pub mod report_io;
pub mod run;
pub mod stats;
pub mod synth;
pub mod synth_io;
pub mod tune;

pub use error::{Error, Result};
