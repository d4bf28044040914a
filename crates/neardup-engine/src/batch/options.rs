//! The options of a batch run and the progress events it reports.

use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::{Error, Result};
use neardup_index::CandidateLimits;

/// Options of [`dedup`](super::dedup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// How verified pairs become clusters.
    pub cluster: ClusterMode,
    /// Which document of a cluster is kept.
    pub keep: KeepPolicy,
    /// Index buckets with more documents pair every member with their `bucket_cap`
    /// best-ranked members under `keep` only (see [`CandidateLimits`]). At least 1.
    pub bucket_cap: usize,
    /// Candidate pairs per document on average: at most `documents x candidate_budget`;
    /// when the buckets hold more, the documents with the most candidates keep their
    /// best-ranked ones only (see [`CandidateLimits`]). At least 1.
    pub candidate_budget: usize,
    /// Bytes of the document-frequency table of a method that learns from the corpus:
    /// counts are exact when they surely fit, else a count-min sketch of this size (see
    /// [`neardup_core::corpus`]).
    pub corpus_memory: usize,
    /// The first `reference` documents are an indexed corpus that the others are checked
    /// against (`dedup --against`): they rank before every other document whatever `keep`
    /// says, are never compared with each other and so never removed by each other; a
    /// document after them is a duplicate of one of them, or (with `within`) of a kept one
    /// among its own. 0 (the default): every document is new.
    pub reference: u32,
    /// With a reference corpus, whether the new documents are also deduplicated among
    /// themselves. Ignored without one.
    pub within: bool,
    /// Return the method's lexicon ([`Method::lexicon`](neardup_core::Method::lexicon)) in
    /// [`EngineStats::lexicon`](super::EngineStats::lexicon) (`dedup --save-lexicon`); a method
    /// without one is an error (parameter `save_lexicon`).
    pub save_lexicon: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            cluster: ClusterMode::default(),
            keep: KeepPolicy::default(),
            bucket_cap: neardup_index::DEFAULT_BUCKET_CAP,
            candidate_budget: neardup_index::DEFAULT_CANDIDATE_BUDGET,
            corpus_memory: neardup_core::corpus::DEFAULT_CORPUS_MEMORY,
            reference: 0,
            within: true,
            save_lexicon: false,
        }
    }
}

impl EngineOptions {
    /// Checks the options before a run ([`dedup`](super::dedup) itself accepts anything: with a
    /// limit of 0 it compares no documents).
    ///
    /// # Errors
    /// An error (`Error`) naming `bucket_cap` or `candidate_budget` when it is 0.
    pub fn validate(&self) -> Result<()> {
        let at_least_one = |parameter: &'static str, value: usize, what: &str| {
            if value == 0 {
                let message = format!("0 (must be at least 1: {what}; 0 would compare nothing)");
                return Err(Error::invalid(parameter, message));
            }
            Ok(())
        };
        at_least_one(
            "bucket_cap",
            self.bucket_cap,
            "members of a larger bucket are compared with its N best-ranked members",
        )?;
        at_least_one(
            "candidate_budget",
            self.candidate_budget,
            "at most documents x N candidate pairs are compared",
        )
    }

    /// The candidate limits of the index.
    pub fn limits(&self) -> CandidateLimits {
        CandidateLimits {
            bucket_cap: self.bucket_cap,
            candidate_budget: self.candidate_budget,
            priority_keys: false,
        }
    }
}

/// Receives progress events; the CLI draws a bar, tests ignore them.
pub trait Progress: Sync {
    /// A stage starts with `total` units of work.
    fn stage(&self, _name: &'static str, _total: u64) {}
    /// A stage measured in bytes starts, with `total` bytes of work (0: unknown); by
    /// default a [`Progress::stage`] of bytes.
    fn stage_bytes(&self, name: &'static str, total: u64) {
        self.stage(name, total);
    }
    /// `done` more units of the current stage are finished.
    fn advance(&self, _done: u64) {}
}

/// A [`Progress`] that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;
impl Progress for NoProgress {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_options_are_valid() {
        assert!(EngineOptions::default().validate().is_ok());
    }

    #[test]
    fn a_zero_limit_is_refused_naming_its_parameter() {
        for (options, parameter) in [
            (
                EngineOptions {
                    bucket_cap: 0,
                    ..EngineOptions::default()
                },
                "bucket_cap",
            ),
            (
                EngineOptions {
                    candidate_budget: 0,
                    ..EngineOptions::default()
                },
                "candidate_budget",
            ),
        ] {
            let message = options.validate().unwrap_err().to_string();
            assert!(message.contains(parameter), "{message}");
        }
    }

    #[test]
    fn the_limits_are_the_options() {
        let options = EngineOptions {
            bucket_cap: 7,
            candidate_budget: 9,
            ..EngineOptions::default()
        };
        let limits = options.limits();
        assert_eq!((limits.bucket_cap, limits.candidate_budget), (7, 9));
    }

    #[test]
    fn a_stage_of_bytes_is_a_stage_by_default() {
        struct Recorder(std::sync::Mutex<Vec<(&'static str, u64)>>);
        impl Progress for Recorder {
            fn stage(&self, name: &'static str, total: u64) {
                self.0.lock().unwrap().push((name, total));
            }
        }
        let recorder = Recorder(Default::default());
        recorder.stage_bytes("read", 42);
        assert_eq!(*recorder.0.lock().unwrap(), vec![("read", 42)]);
    }
}
