//! Candidate indexes: which documents to compare.
//!
//! # Overview
//!
//! Every neardup method emits bucket keys per document (LSH band hashes, SimHash block
//! values, n-grams, content hashes); two documents are candidates when they share a key.
//! [`KeyTable`] is the batch form of that index: it collects `(key, document)` entries and
//! turns them into the sorted, deduplicated list of candidate pairs with one parallel sort,
//! which is faster and far smaller in memory than a hash map of buckets for batch jobs.
//! [`CandidateLimits`] keep that list linear in the number of documents whatever the keys
//! (a template flood shares dozens of buckets per document): a bucket cap with anchors, and
//! a candidate budget that leaves each document its best-ranked partners only when the
//! buckets hold more than `documents x budget` pairs.
//! The online check-and-insert index (planned) keeps the same keys in incremental tables.
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

mod key_table;

pub use key_table::{
    BucketStats, CandidateLimits, KeyTable, DEFAULT_BUCKET_CAP, DEFAULT_CANDIDATE_BUDGET,
};
