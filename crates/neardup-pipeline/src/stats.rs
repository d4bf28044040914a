//! The statistics file of a run (`neardup dedup --stats`), and its helpers.
//!
//! [`RunStats`] is the file's contract: `run` writes it, `neardup report` and the CLI summary
//! read it, and outside tooling relies on its field names. Fields are only ever added; the
//! `version` field says which fields a file can have.

use std::collections::BTreeMap;

use neardup_core::cluster::Assignment;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version of the stats file this build writes: 1 (the first versioned file; files
/// without a `version` are older, with the same fields minus the newer ones).
pub const STATS_VERSION: u32 = 1;

/// The statistics file of one `dedup` run. Every field has a default, so files of older
/// versions read too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStats {
    /// The version of the file's layout ([`STATS_VERSION`] when written by this build; 0 for a
    /// file written before the field existed).
    pub version: u32,
    /// The input paths.
    pub inputs: Vec<String>,
    /// The method and its parameters in effect.
    pub method: MethodStats,
    /// How verified pairs became clusters (`representative`, `connected`).
    pub cluster_mode: String,
    /// Which document of a cluster was kept (`first`, `longest`, `shortest`).
    pub keep: String,
    /// Documents read.
    pub documents_in: u64,
    /// Documents kept.
    pub kept: u64,
    /// Documents removed as duplicates.
    pub removed: u64,
    /// Bad records skipped under `on_error = skip`.
    pub skipped: u64,
    /// The messages of the first skipped records.
    pub skipped_first: Vec<String>,
    /// Documents with no feature after normalisation (kept alone).
    pub empty_documents: u64,
    /// Documents with too few features to compare approximately (SimHash `min_features`):
    /// matched as exact copies only.
    pub exact_only_documents: u64,
    /// Documents removed as exact copies (equal sketch identity).
    pub exact_copies: u64,
    /// Clusters of two documents or more.
    pub clusters: u64,
    /// Cluster size -> number of clusters of that size, ascending (singletons included).
    #[serde(with = "ordered_map")]
    pub cluster_sizes: Vec<(u64, u64)>,
    /// Candidate pairs from the index.
    pub candidate_pairs: u64,
    /// Candidate pairs confirmed by the true measure.
    pub verified_pairs: u64,
    /// Documents in the largest index bucket.
    pub largest_bucket: u64,
    /// Documents of the reference corpus (`dedup --against`) the inputs were checked
    /// against; 0 without one. They are not counted in `documents_in`.
    pub reference_documents: u64,
    /// Buckets over the bucket cap.
    pub capped_buckets: u64,
    /// Documents left out of capped buckets (`ngram` only: its greedy pass sees a bucket's
    /// first `bucket_cap` members), summed over those buckets.
    pub capped_out: u64,
    /// Work done while finding candidates: `ngram`'s similarity computations, the
    /// fingerprints `simhash`'s join compared, the members and search steps of the
    /// shared-key merge (`segments`, `sentences`); 0 for the key tables.
    pub candidate_comparisons: u64,
    /// Documents cut by the candidate budget.
    pub budget_hits: u64,
    /// The partner limit the budget set, `None` when it did not cut in.
    pub partner_limit: Option<u64>,
    /// Bytes read (after decompression).
    pub bytes_in: u64,
    /// Worker threads.
    pub threads: u64,
    /// Seconds per stage, in order: read, sketch, candidates, verify, cluster, write, total.
    #[serde(with = "ordered_map")]
    pub seconds: Vec<(String, f64)>,
    /// Peak resident memory of the process, where the system tells it.
    pub peak_rss_bytes: Option<u64>,
    /// Peak resident memory of each stage, in order (read, corpus, sketch, candidates,
    /// verify, cluster, write; `read+corpus` and `read+sketch` on the spilling path),
    /// sampled every 20 ms (Linux; empty elsewhere): a peak shorter than that can be missed,
    /// `peak_rss_bytes` has the true one.
    #[serde(with = "ordered_map")]
    pub peak_rss_by_stage: Vec<(String, u64)>,
    /// The memory limit of the run in bytes (`--memory-limit`, or the default taken from
    /// the machine's available memory).
    pub memory_limit_bytes: Option<u64>,
    /// How the run held its corpus: `memory` (records and sketches in memory) or `spill`
    /// (texts read back from the inputs, sketches in the temporary directory).
    pub memory_path: Option<String>,
    /// Why the run took its path (the estimate against the limit, or what forced it).
    pub memory_reason: Option<String>,
    /// Bytes written to temporary files (sketches, copies of standard input).
    pub spilled_bytes: u64,
    /// With `--resume` on the spilling path: the last stage whose checkpoint an earlier run
    /// left and this one took up (`corpus` or `sketch`), `null` when it started from the
    /// beginning; absent without `--resume`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<Option<String>>,
    /// With `--resume`: why the checkpoints found were not taken up (an input or an option
    /// changed), when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_discarded: Option<String>,
    /// What boilerplate handling found (methods with `max_df`, `boilerplate_df` or
    /// `boilerplate_file`; absent otherwise).
    pub boilerplate: Option<BoilerplateReport>,
    /// The templates the template check told apart (methods with `templates`; absent
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub templates: Option<TemplatesReport>,
}

/// The templates section of the stats file: documents joined by the candidate pairs that
/// the template check refused (two fillings of one template whose measure reached the
/// threshold).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TemplatesReport {
    /// Candidate pairs the template check refused.
    pub refused_pairs: u64,
    /// Templates found: groups of documents those pairs join.
    pub found: u64,
    /// Documents in those groups, exact copies included.
    pub documents: u64,
    /// The largest templates (at most 20), most documents first.
    pub top: Vec<TemplateReport>,
}

/// One template of the stats file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TemplateReport {
    /// Its documents, exact copies included.
    pub documents: u64,
    /// Candidate pairs of its documents that the template check refused.
    pub refused_pairs: u64,
    /// Its first documents (at most 8), by input order.
    pub ids: Vec<Value>,
    /// The text those documents share, `{}` in each slot; `null` when their texts could not
    /// be had again (standard input read as CSV or Parquet).
    pub fixed: Option<String>,
    /// Per document of `ids`, the text of each slot.
    pub slots: Vec<Vec<String>>,
}

/// The boilerplate section of the stats file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoilerplateReport {
    /// The document-frequency table of the corpus pass: `exact` or `count-min` (absent
    /// without a corpus pass).
    pub table: Option<String>,
    /// Its bytes.
    pub table_bytes: Option<u64>,
    /// Distinct documents counted by the corpus pass (exact copies once).
    pub counted_documents: u64,
    /// Shingles in more documents than this were dropped (`max_df` resolved).
    pub max_df: Option<u64>,
    /// Lines in at least this many documents were boilerplate (`boilerplate_df` resolved).
    pub boilerplate_df: Option<u64>,
    /// True when the count-min table was too small for the corpus to tell frequent lines
    /// from the rest: no line was removed by frequency (raise `--corpus-memory`).
    pub table_saturated: bool,
    /// Documents with boilerplate lines removed.
    pub documents: u64,
    /// Boilerplate line occurrences removed.
    pub removed_lines: u64,
    /// Distinct boilerplate lines removed.
    pub distinct_lines: u64,
    /// Shingles dropped as common, summed over documents.
    pub discounted_shingles: u64,
    /// The most frequent boilerplate lines (at most 20), most documents first.
    pub top_lines: Vec<BoilerplateLineReport>,
}

/// One boilerplate line of the stats file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoilerplateLineReport {
    /// The line as its first document has it.
    pub text: String,
    /// Documents it was removed from.
    pub documents: u64,
}

impl Default for RunStats {
    fn default() -> Self {
        RunStats {
            version: STATS_VERSION,
            inputs: Vec::new(),
            method: MethodStats::default(),
            cluster_mode: String::new(),
            keep: String::new(),
            documents_in: 0,
            kept: 0,
            removed: 0,
            skipped: 0,
            skipped_first: Vec::new(),
            empty_documents: 0,
            exact_only_documents: 0,
            exact_copies: 0,
            clusters: 0,
            cluster_sizes: Vec::new(),
            candidate_pairs: 0,
            verified_pairs: 0,
            largest_bucket: 0,
            reference_documents: 0,
            capped_buckets: 0,
            capped_out: 0,
            candidate_comparisons: 0,
            budget_hits: 0,
            partner_limit: None,
            bytes_in: 0,
            threads: 0,
            seconds: Vec::new(),
            peak_rss_bytes: None,
            peak_rss_by_stage: Vec::new(),
            memory_limit_bytes: None,
            memory_path: None,
            memory_reason: None,
            spilled_bytes: 0,
            resumed_from: None,
            resume_discarded: None,
            boilerplate: None,
            templates: None,
        }
    }
}

impl RunStats {
    /// The file's text: pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        // Plain numbers, strings and maps always serialise; the fallback is unreachable.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a stats file's JSON. A file without `version` is of version 0.
    ///
    /// # Errors
    /// When a field has the wrong type (the message names it).
    pub fn from_json(value: Value) -> Result<RunStats, serde_json::Error> {
        let versioned = value.get("version").is_some();
        let mut stats: RunStats = serde_json::from_value(value)?;
        if !versioned {
            stats.version = 0;
        }
        Ok(stats)
    }

    /// The seconds of the stage `name`.
    pub fn seconds_of(&self, name: &str) -> Option<f64> {
        self.seconds
            .iter()
            .find(|(stage, _)| stage == name)
            .map(|s| s.1)
    }
}

/// The method part of [`RunStats`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MethodStats {
    /// The method's registry name (`minhash`, `exact`).
    pub name: String,
    /// Its similarity threshold.
    pub threshold: f64,
    /// Its parameters in effect, derived ones included (LSH bands and rows, shingle sizes),
    /// by parameter name.
    pub params: Map<String, Value>,
    /// What the method learned from the corpus, in documents or words, by name: `max_df`
    /// and `boilerplate_df` resolved (also in the boilerplate section), imatch's
    /// `lexicon_words`, `lexicon_min_df` and `lexicon_max_df`. Empty when it learned nothing.
    pub learned: Map<String, Value>,
}

/// A `Vec<(K, V)>` as a JSON object in the vector's order (`{"1": 10, "2": 3}`, `{"read": 0.1}`):
/// the keys are written with `Display` and read with `FromStr`.
mod ordered_map {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::de::{DeserializeOwned, Deserializer, Error};
    use serde::ser::{SerializeMap, Serializer};
    use serde::{Deserialize, Serialize};

    pub fn serialize<K: Display, V: Serialize, S: Serializer>(
        pairs: &[(K, V)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(pairs.len()))?;
        for (key, value) in pairs {
            map.serialize_entry(&key.to_string(), value)?;
        }
        map.end()
    }

    pub fn deserialize<'de, K: FromStr, V: DeserializeOwned, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(K, V)>, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        (map.into_iter())
            .map(|(key, value)| {
                let parsed = key
                    .parse()
                    .map_err(|_| D::Error::custom(format!("key {key:?}")))?;
                let value = serde_json::from_value(value)
                    .map_err(|e| D::Error::custom(format!("value of {key:?}: {e}")))?;
                Ok((parsed, value))
            })
            .collect()
    }
}

/// Cluster size -> number of clusters of that size (singletons included), sorted by size.
pub fn cluster_size_histogram(assignment: &Assignment) -> Vec<(usize, u64)> {
    cluster_size_histogram_from(assignment, 0)
}

/// The histogram of the clusters holding a document from `first` on (`dedup --against`: the
/// documents before `first` are the reference corpus): each counts its documents from
/// `first` on, plus its representative when that is a reference document.
pub fn cluster_size_histogram_from(assignment: &Assignment, first: usize) -> Vec<(usize, u64)> {
    // 4 bytes a document (a cluster holds fewer than 2^32 of the run's documents).
    let mut sizes: Vec<u32> = vec![0; assignment.duplicate_of.len()];
    for document in first as u32..assignment.duplicate_of.len() as u32 {
        sizes[assignment.cluster_of(document) as usize] += 1;
    }
    for size in &mut sizes[..first] {
        if *size > 0 {
            *size += 1;
        }
    }
    let mut histogram: BTreeMap<usize, u64> = BTreeMap::new();
    for size in sizes.into_iter().filter(|&s| s > 0) {
        *histogram.entry(size as usize).or_default() += 1;
    }
    histogram.into_iter().collect()
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), or `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_round_trip_and_old_files_read() {
        let stats = RunStats {
            documents_in: 3,
            cluster_sizes: vec![(1, 1), (2, 1)],
            seconds: vec![("read".into(), 0.5), ("total".into(), 1.0)],
            partner_limit: Some(40),
            ..RunStats::default()
        };
        let text = stats.to_json_pretty();
        assert!(text.starts_with("{\n  \"version\": 1,"), "{text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(RunStats::from_json(value).unwrap(), stats);
        let old = serde_json::json!({"kept": 2, "seconds": {"total": 3.5}});
        let old = RunStats::from_json(old).unwrap();
        assert_eq!(
            (old.version, old.kept, old.seconds_of("total")),
            (0, 2, Some(3.5))
        );
        let error = RunStats::from_json(serde_json::json!({"kept": "two"})).unwrap_err();
        assert!(error.to_string().contains("invalid type"), "{error}");
    }

    #[test]
    fn histogram_counts_clusters_by_size() {
        let assignment = Assignment {
            duplicate_of: vec![None, Some(0), Some(0), None, None, Some(4)],
            similarity: vec![None; 6].into(),
        };
        assert_eq!(
            cluster_size_histogram(&assignment),
            vec![(1, 1), (2, 1), (3, 1)]
        );
    }
}
