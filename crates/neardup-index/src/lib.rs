//! Candidate indexes: which documents to compare.
//!
//! # Overview
//!
//! A method says how its candidates are found (`neardup_core::Join`); each shape is one
//! [`CandidateGenerator`] here, which the batch engine feeds with every document's keys and
//! asks once for the candidate pairs:
//!
//! - [`KeyTable`]: documents sharing a key (LSH bands, content hashes). The bucket cap and
//!   the candidate budget belong to it.
//! - [`ExternalKeys`]: the [`KeyTable`] of a corpus whose entries do not fit in memory: sorted
//!   runs in a [`spill::SpillDir`], merged and walked twice, with the same pairs and statistics.
//! - [`ProbeTable`]: stored keys on one side, probe keys on the other (multi-index hashing,
//!   Pass-Join).
//! - [`SharedKeyTable`]: documents sharing at least a minimum count of keys (n-gram index,
//!   the classic fingerprints' "M of N"), a merge of each document's buckets that stops at
//!   its partner limit; the bucket cap and the candidate budget apply.
//! - [`PrefixJoin`]: the exact set-similarity join (PPJoin: Jaccard, cosine, overlap) that
//!   sees every token set first; no cap, since a cap would lose pairs.
//! - [`EditJoin`]: the exact edit-distance join (Pass-Join), absolute or normalised.
//! - [`NgramBuckets`]: the all-m-gram index with its greedy bucket pass, the
//!   reference the exact joins are measured against; capped and counted.
//! - [`HammingJoin`]: fingerprints within a Hamming radius of their own per document (the
//!   smaller of the two radii per pair), exact under the bucket cap.
//!
//! [`ranked_candidates`] is the one factory from a method's join to its generator, serving the
//! batch engine; the online index asks it what a collection's index holds ([`online_form`]) and
//! the Spark path the form it runs ([`spark_form`]).
//!
//! [`HammingIndex`] is the exact Hamming-distance index of 64-bit fingerprints (SimHash):
//! multi-index hashing with blocks chosen from the distance and the index size, single
//! queries, inserts and removals by `u64` id, an all-pairs self-join, and a versioned,
//! checksummed file format. Against brute force it has no false negatives and no false
//! positives (property tests). [`self_join_128`] joins 128-bit fingerprints.
//!
//! [`OnlineIndex`] is the one-document-at-a-time form (insert, probe, remove by 64-bit id)
//! that the service implements on disk; [`MemoryIndex`] is its in-memory implementation.
//!
//! # The symmetric key table
//!
//! [`KeyTable`] is the batch form of the shared-key index: it collects `(key, document)` entries and
//! turns them into the sorted, deduplicated list of candidate pairs with one parallel sort,
//! which is faster and far smaller in memory than a hash map of buckets for batch jobs.
//! [`CandidateLimits`] keep that list linear in the number of documents whatever the keys
//! (a template flood shares dozens of buckets per document): a bucket cap with anchors, and
//! a candidate budget that leaves each document its best-ranked partners only when the
//! buckets hold more than `documents x budget` pairs.
//!
//! # Example
//!
//! ```
//! use neardup_index::KeyTable;
//! let mut table = KeyTable::new();
//! table.insert(0, &[10, 11]);
//! table.insert(1, &[11, 12]);
//! table.insert(2, &[13]);
//! assert_eq!(table.candidate_pairs(), vec![(0, 1)]);
//! ```
//!
//! # Crate features
//!
//! None.
#![deny(missing_docs)]

mod candidates;
mod distributed_hamming;
mod external_keys;
mod generators;
mod hamming;
mod hamming_blocks;
mod hamming_join;
mod hamming_scan;
mod key_levels;
mod key_table;
mod levels;
mod ngram_index;
mod online_index;
mod pass_join;
mod runs;
mod set_join;
mod shared_keys;
pub mod spill_dir;

pub use candidates::{
    hamming_key, join_limits, online_form, ranked_candidates, rare_join_templates, spark_form,
    template_anchors, template_keys, OnlineForm, RankedSketches, SparkForm, SparkGap,
};
pub use distributed_hamming::{distributed_passes, HammingPass, READS_PER_CAP, ROW_COST};
pub use external_keys::{ExternalKeys, ExternalPairs, Remap};
pub use generators::{
    CandidateGenerator, EditJoin, NgramBuckets, PrefixJoin, ProbeTable, TEMPLATE_ANCHORS,
};
pub use hamming::{HammingError, HammingIndex};
pub use hamming_join::{
    self_join_128, self_join_128_within, self_join_64, self_join_64_within, DistancePair,
    HammingJoin,
};
pub use key_levels::{build_merge as build_key_merge, KeyIndex, KeyLevel, KEY_LEVEL_BASE};
pub use levels::{Level, Levels, Merge, LEVEL_FANOUT};
pub use ngram_index::{ngram_dedup, NgramResult};
pub use online_index::{without_priority, Buckets, DuplicateId, MemoryIndex, OnlineIndex};
pub use pass_join::{edit_distance_within, pass_join, pass_join_within, EditBound};
pub use set_join::{
    intersect_at_least, set_join, set_join_within, JoinBudget, SetMeasure, MAX_JOIN_EDITS,
};
pub use shared_keys::SharedKeyTable;

pub use key_table::{
    partner_limit, BucketStats, CandidateLimits, KeyTable, DEFAULT_BUCKET_CAP,
    DEFAULT_CANDIDATE_BUDGET,
};
