//! Evaluation tooling of neardup: how good is a dedup result, and which parameters to run.
//!
//! # Overview
//!
//! - [`eval`] and [`eval_io`]: pairwise precision, recall and F1 and the adjusted Rand index
//!   of a clusters file against ground truth (clusters or labelled pairs), `neardup eval`.
//! - `synth` and `synth_io` (feature `synth`): a near-duplicate benchmark made from any
//!   corpus (edited copies, hard negatives, the truth), `neardup synth`.
//! - [`tune`]: parameter sweeps of any registered method scored with [`eval`], and a
//!   recommendation, `neardup tune`.
//! - [`report`] and [`report_io`]: the self-contained HTML page about a run, `neardup report`.
//!
//! The engine and the readers and writers come from `neardup-engine` and `neardup-pipeline`;
//! nothing here is needed to deduplicate.
//!
//! # Crate features
//!
//! - `synth` (default): the `synth` and `synth_io` modules. Their traditional-Chinese edit
//!   converts through `zhconv`, which nothing else here needs; a front end without
//!   `neardup synth` leaves it out (`default-features = false`).
#![deny(missing_docs)]

pub mod eval;
pub mod eval_io;
pub mod report;
pub mod report_io;
#[cfg(feature = "synth")]
pub mod synth;
#[cfg(feature = "synth")]
pub mod synth_io;
pub mod tune;

#[cfg(test)]
pub(crate) mod tests {
    /// Writes `bytes` to `name` in `dir` and returns the path.
    pub(crate) fn write_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write test file");
        path.to_string_lossy().into_owned()
    }
}
