//! The batch pipeline of neardup: readers, writers and the `dedup` job around the engine.
//!
//! # Overview
//!
//! - [`input`] reads JSONL, plain text, CSV/TSV and Parquet (gzip and zstd transparently)
//!   into a [`input::Corpus`], with errors that name the file, line and field, or counted
//!   skips.
//! - The engine (`neardup-engine`) is pure: it sketches, finds candidates, verifies and
//!   clusters; this crate feeds it and writes what it decided.
//! - [`output`] writes the kept documents in the input's format, and the clusters, pairs and
//!   statistics files, each through a temporary file renamed into place at the end;
//!   [`paths`] decides what stands at an output path and refuses an output that is a file the
//!   run reads; [`stale`] names and locks temporary files so that a later run removes those
//!   a killed run left; [`rows`] are the rows of the clusters, pairs, fingerprint and
//!   groups files, one serde type each, shared by their writers and readers.
//! - [`run`] ties them together for the `neardup dedup` command: any method of the registry
//!   ([`neardup_core::registry`]) by name and parameters, the [`stats::RunStats`] file.
//!
//! # Example
//!
//! ```
//! use neardup_core::registry::Params;
//! use neardup_pipeline::run::{run, RunConfig};
//! # let dir = tempfile::tempdir()?;
//! # let input = dir.path().join("in.txt");
//! # std::fs::write(&input, "今天北京天气晴朗，适合出门散步。\n今天北京天气晴朗,适合出门散步!!\n完全不同的一句话。\n")?;
//! # let output = dir.path().join("kept.txt");
//!
//! let config = RunConfig::new(
//!     vec![input.display().to_string()],
//!     output.display().to_string(),
//!     "minhash",
//!     Params::new().set("threshold", "0.6"),
//! );
//! let report = run(&config, &neardup_engine::NoProgress)?;
//! assert_eq!(report.stats.kept, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! - `parquet` (default): Parquet input and output through `arrow` and `parquet`. Without it,
//!   a Parquet input is refused with an error naming the feature.
#![deny(missing_docs)]

mod compression;
pub mod error;
pub mod file_spill;
pub mod fingerprints;
pub mod input;
pub mod memory_plan;
pub mod memory_rule;
pub mod output;
pub mod paths;
pub mod resume;
pub mod rows;
pub mod run;
pub mod spans;
pub mod stale;
pub mod stats;

pub use error::{Error, Result};
