//! Document frequencies over a corpus: exact counts where they fit in memory, a count-min
//! sketch of fixed size beyond.
//!
//! A method that learns from its corpus (TF-IDF weights, common shingles, boilerplate lines;
//! see [`Method::learns_from_corpus`](crate::Method::learns_from_corpus)) gets the counts of
//! its features as a [`CorpusStats`]. Counting starts exact; the table turns count-min once it
//! would outgrow the memory given ([`CorpusStats::fit_within`]), with the same cells whenever
//! the switch happens, so the result is the same on every run and thread count:
//!
//! - **exact** ([`CorpusStats::exact`]): a hash map, about [`EXACT_BYTES_PER_FEATURE`] bytes per
//!   distinct feature, in shards by the top bits of the feature;
//! - **count-min** ([`CorpusStats::count_min`]): [`COUNT_MIN_DEPTH`] counters of 32 bits a
//!   feature filling the memory given, blocked: the counters of a feature are four of the 16
//!   of one 64-byte line, so a lookup or an increment is one cache miss, not four (a
//!   streaming service looks up and counts about 150 features a document). An estimate is
//!   never below the true count; it exceeds it by about `e x total / width` (Cormode and
//!   Muthukrishnan, 2005; the blocked layout makes the rows' collisions slightly correlated),
//!   where `total` is the sum of the documents' distinct feature counts. Counts are
//!   added with atomic increments, so a parallel count gives the same table whatever the
//!   order.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::codec::{corrupt, Decoder, Encoder};
use crate::hash::mix64;
use crate::Result;

/// The default memory of the document-frequency table: 64 MiB.
pub const DEFAULT_CORPUS_MEMORY: usize = 64 << 20;

/// What one distinct feature costs in an exact table (key, count, hash map slack and growth),
/// for the choice between exact and count-min counting.
pub const EXACT_BYTES_PER_FEATURE: usize = 32;

/// Rows of a count-min table.
pub const COUNT_MIN_DEPTH: usize = 4;

/// Document frequencies of features over a corpus.
#[derive(Debug, Default)]
pub struct CorpusStats {
    documents: u64,
    table: Table,
}

#[derive(Debug)]
enum Table {
    Exact(Box<[ExactShard]>),
    CountMin {
        mask: u64,
        counters: Box<[AtomicU32]>,
    },
}

impl Default for Table {
    fn default() -> Table {
        Table::Exact((0..SHARDS).map(ExactShard::new).collect())
    }
}

/// Shards of an exact table: by the top 6 bits of the feature, so that a sorted feature
/// list has each shard's features in one slice and shards can be counted in parallel.
pub const SHARDS: usize = 64;

/// One shard of an exact table: the features whose top 6 bits are its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactShard {
    index: usize,
    counts: foldhash::HashMap<u64, u32>,
}

impl ExactShard {
    fn new(index: usize) -> ExactShard {
        ExactShard {
            index,
            counts: foldhash::HashMap::default(),
        }
    }

    /// Counts one document occurrence of each of `features`, which all belong to this shard
    /// ([`ExactShard::shard_of`]); a feature repeated in `features` counts once per repeat
    /// (each document's features are distinct, so give each document's once).
    pub fn add_each(&mut self, features: &[u64]) {
        debug_assert!(features.iter().all(|&f| shard_of(f) == self.index));
        for &feature in features {
            let count = self.counts.entry(feature).or_insert(0);
            *count = count.saturating_add(1);
        }
    }

    /// The shard a feature belongs to: its top 6 bits.
    #[inline]
    pub fn shard_of(feature: u64) -> usize {
        shard_of(feature)
    }
}

/// The counters a row of a count-min table of about `memory` bytes holds: the largest power
/// of two that fits, at least 1,024.
fn count_min_width(memory: usize) -> usize {
    let per_row = (memory / (COUNT_MIN_DEPTH * 4)).max(1024);
    1usize << (usize::BITS - 1 - per_row.leading_zeros())
}

#[inline]
fn shard_of(feature: u64) -> usize {
    (feature >> 58) as usize
}

impl Clone for CorpusStats {
    fn clone(&self) -> CorpusStats {
        let table = match &self.table {
            Table::Exact(shards) => Table::Exact(shards.clone()),
            Table::CountMin { mask, counters } => Table::CountMin {
                mask: *mask,
                counters: counters
                    .iter()
                    .map(|c| AtomicU32::new(c.load(Ordering::Relaxed)))
                    .collect(),
            },
        };
        CorpusStats {
            documents: self.documents,
            table,
        }
    }
}

impl PartialEq for CorpusStats {
    fn eq(&self, other: &CorpusStats) -> bool {
        self.documents == other.documents
            && match (&self.table, &other.table) {
                (Table::Exact(a), Table::Exact(b)) => a == b,
                (
                    Table::CountMin { mask, counters },
                    Table::CountMin {
                        mask: other_mask,
                        counters: other_counters,
                    },
                ) => {
                    mask == other_mask
                        && counters
                            .iter()
                            .zip(other_counters.iter())
                            .all(|(a, b)| a.load(Ordering::Relaxed) == b.load(Ordering::Relaxed))
                }
                _ => false,
            }
    }
}

impl CorpusStats {
    /// Appends the table to a checkpoint ([`crate::codec`]).
    pub fn encode(&self, out: &mut Encoder) {
        out.u64(self.documents);
        match &self.table {
            Table::Exact(shards) => {
                out.u8(0);
                for shard in shards.iter() {
                    let mut counts: Vec<(u64, u32)> =
                        shard.counts.iter().map(|(&f, &c)| (f, c)).collect();
                    counts.sort_unstable();
                    out.seq(&counts, |out, &(feature, count)| {
                        out.u64(feature);
                        out.u32(count);
                    });
                }
            }
            Table::CountMin { mask, counters } => {
                out.u8(2);
                out.u64(*mask);
                let counts: Vec<u32> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
                out.seq(&counts, |out, &count| out.u32(count));
            }
        }
    }

    /// Reads a table written by [`CorpusStats::encode`].
    ///
    /// # Errors
    /// The checkpoint is malformed (parameter `checkpoint`).
    pub fn decode(from: &mut Decoder<'_>) -> Result<CorpusStats> {
        let documents = from.u64()?;
        let table = match from.u8()? {
            0 => {
                let mut shards = Vec::with_capacity(SHARDS);
                for index in 0..SHARDS {
                    let mut shard = ExactShard::new(index);
                    for (feature, count) in from.seq(12, |d| Ok((d.u64()?, d.u32()?)))? {
                        if shard_of(feature) != index {
                            return Err(corrupt("a feature is in the wrong shard"));
                        }
                        shard.counts.insert(feature, count);
                    }
                    shards.push(shard);
                }
                Table::Exact(shards.into_boxed_slice())
            }
            1 => {
                return Err(corrupt(
                    "a count-min table of the layout before the blocked one (count again)",
                ))
            }
            2 => {
                let mask = from.u64()?;
                let counters: Box<[AtomicU32]> = from
                    .seq(4, |d| Ok(AtomicU32::new(d.u32()?)))?
                    .into_boxed_slice();
                let width = mask.checked_add(1).filter(|w| w.is_power_of_two());
                if width.is_none_or(|w| {
                    w.saturating_mul(COUNT_MIN_DEPTH as u64) != counters.len() as u64
                }) {
                    return Err(corrupt("a count-min table of the wrong size"));
                }
                Table::CountMin { mask, counters }
            }
            other => return Err(corrupt(format!("table kind {other}"))),
        };
        Ok(CorpusStats { documents, table })
    }

    /// An empty exact table.
    pub fn exact() -> CorpusStats {
        CorpusStats::default()
    }

    /// An empty count-min table of about `memory` bytes (at least 4 KiB; the width is the
    /// largest power of two that fits).
    pub fn count_min(memory: usize) -> CorpusStats {
        let width = count_min_width(memory);
        let counters = (0..width * COUNT_MIN_DEPTH)
            .map(|_| AtomicU32::new(0))
            .collect();
        CorpusStats {
            documents: 0,
            table: Table::CountMin {
                mask: width as u64 - 1,
                counters,
            },
        }
    }

    /// The bytes of a count-min table of about `memory` bytes
    /// ([`CorpusStats::count_min`]), without allocating it.
    pub fn count_min_bytes(memory: usize) -> usize {
        count_min_width(memory) * COUNT_MIN_DEPTH * 4
    }

    /// Turns an exact table into a count-min table of `memory` bytes once it holds more
    /// features than fit (at [`EXACT_BYTES_PER_FEATURE`] each). The count-min cells are the
    /// same as if every count had gone there from the start, so when the switch happens does
    /// not change the result: only whether the final table is too large for exact counts.
    pub fn fit_within(&mut self, memory: usize) {
        let Some(distinct) = self.distinct_features() else {
            return;
        };
        if distinct.saturating_mul(EXACT_BYTES_PER_FEATURE) <= memory {
            return;
        }
        let mut sketch = CorpusStats::count_min(memory);
        sketch.documents = self.documents;
        if let Table::Exact(shards) = std::mem::take(&mut self.table) {
            for shard in shards.into_vec() {
                for (feature, count) in shard.counts {
                    sketch.add_count(feature, count);
                }
            }
        }
        *self = sketch;
    }

    /// Adds `count` occurrences of one feature to a count-min table.
    fn add_count(&self, feature: u64, count: u32) {
        if let Table::CountMin { mask, counters } = &self.table {
            for slot in slots(feature, *mask) {
                let _ = counters[slot].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                    Some(c.saturating_add(count))
                });
            }
        }
    }

    /// The shards of an exact table, to count documents into in parallel (with
    /// [`ExactShard::add_each`], then [`CorpusStats::add_documents`]); `None` for count-min.
    pub fn exact_shards_mut(&mut self) -> Option<&mut [ExactShard]> {
        match &mut self.table {
            Table::Exact(shards) => Some(shards),
            Table::CountMin { .. } => None,
        }
    }

    /// The features that `wanted` accepts and that occur in at least `min` documents, sorted;
    /// `None` for a count-min table (it cannot list its features).
    pub fn frequent_features(&self, wanted: impl Fn(u64) -> bool, min: u32) -> Option<Vec<u64>> {
        let mut found: Vec<u64> = (self.frequent_feature_counts(wanted, min)?)
            .into_iter()
            .map(|(feature, _)| feature)
            .collect();
        found.sort_unstable();
        Some(found)
    }

    /// The features that `wanted` accepts and that occur in at least `min` documents, with
    /// their document frequencies, in no particular order; `None` for a count-min table.
    pub fn frequent_feature_counts(
        &self,
        wanted: impl Fn(u64) -> bool,
        min: u32,
    ) -> Option<Vec<(u64, u32)>> {
        let Table::Exact(shards) = &self.table else {
            return None;
        };
        Some(
            (shards.iter())
                .flat_map(|shard| shard.counts.iter())
                .filter(|&(&feature, &count)| count >= min && wanted(feature))
                .map(|(&feature, &count)| (feature, count))
                .collect(),
        )
    }

    /// For a count-min table, the mean value of a cell: the expected over-count of an
    /// estimate from one row. `None` for an exact table.
    pub fn mean_cell(&self) -> Option<f64> {
        match &self.table {
            Table::Exact(_) => None,
            Table::CountMin { mask, counters } => {
                let width = (*mask + 1) as usize;
                let total: u64 = (counters[..width].iter())
                    .map(|c| u64::from(c.load(Ordering::Relaxed)))
                    .sum();
                Some(total as f64 / width as f64)
            }
        }
    }

    /// True for an exact table.
    pub fn is_exact(&self) -> bool {
        matches!(self.table, Table::Exact(_))
    }

    /// `exact` or `count-min`.
    pub fn kind(&self) -> &'static str {
        match self.table {
            Table::Exact(_) => "exact",
            Table::CountMin { .. } => "count-min",
        }
    }

    /// Bytes the table holds (an estimate for the exact table).
    pub fn memory_bytes(&self) -> usize {
        match &self.table {
            Table::Exact(shards) => shards.iter().map(|s| s.counts.capacity() * 13).sum(),
            Table::CountMin { counters, .. } => counters.len() * 4,
        }
    }

    /// Distinct features counted, for an exact table.
    pub fn distinct_features(&self) -> Option<usize> {
        match &self.table {
            Table::Exact(shards) => Some(shards.iter().map(|s| s.counts.len()).sum()),
            Table::CountMin { .. } => None,
        }
    }

    /// Documents counted.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// An exact table of `documents` documents with the given `(feature, count)` pairs, as
    /// counted elsewhere (a distributed corpus pass). A feature left out counts 0: give every
    /// feature whose count can reach a limit the method resolves
    /// ([`Method::learned_limits`](crate::Method::learned_limits)), and the method learns what
    /// it would from the whole table. A feature given twice adds its counts.
    pub fn from_counts(
        documents: u64,
        counts: impl IntoIterator<Item = (u64, u32)>,
    ) -> CorpusStats {
        let mut stats = CorpusStats::exact();
        stats.documents = documents;
        if let Table::Exact(shards) = &mut stats.table {
            for (feature, count) in counts {
                let cell = shards[shard_of(feature)].counts.entry(feature).or_insert(0);
                *cell = cell.saturating_add(count);
            }
        }
        stats
    }

    /// Counts `documents` more documents (their features are added separately, with
    /// [`CorpusStats::add_shared`]).
    pub fn add_documents(&mut self, documents: u64) {
        self.documents += documents;
    }

    /// Counts the features of one document (distinct, as
    /// [`Method::corpus_features`](crate::Method::corpus_features) gives them after the
    /// engine removed repeats).
    pub fn add_document(&mut self, features: &[u64]) {
        self.add_document_noting(features, u32::MAX, |_| {});
    }

    /// [`CorpusStats::add_document`], calling `noted` with each feature whose count (its
    /// estimate, for count-min: the least of its counters, read in the cache line the
    /// increment brought in) reaches `min` after the addition: a stream finds its frequent
    /// features as it counts them, at no extra lookup, where a count-min table cannot list
    /// them afterwards.
    pub fn add_document_noting(&mut self, features: &[u64], min: u32, mut noted: impl FnMut(u64)) {
        self.documents += 1;
        match &mut self.table {
            Table::Exact(shards) => {
                for &feature in features {
                    let count = shards[shard_of(feature)].counts.entry(feature).or_insert(0);
                    *count = count.saturating_add(1);
                    if *count >= min {
                        noted(feature);
                    }
                }
            }
            Table::CountMin { mask, counters } => {
                // Held exclusively: plain increments, which the processor overlaps from one
                // feature to the next, where an atomic one waits for each cache miss.
                for &feature in features {
                    let mut estimate = u32::MAX;
                    for slot in slots(feature, *mask) {
                        let counter = counters[slot].get_mut();
                        *counter = counter.saturating_add(1);
                        estimate = estimate.min(*counter);
                    }
                    if estimate >= min {
                        noted(feature);
                    }
                }
            }
        }
    }

    /// Adds one document's features to a count-min table through a shared reference (atomic
    /// increments, so threads may count at once); the document itself is counted with
    /// [`CorpusStats::add_documents`]. On an exact table this does nothing: exact tables are
    /// counted in parts and merged.
    pub fn add_shared(&self, features: &[u64]) {
        if let Table::CountMin { mask, counters } = &self.table {
            for &feature in features {
                for slot in slots(feature, *mask) {
                    // Saturating: a counter at u32::MAX stays there.
                    let _ =
                        counters[slot].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                            c.checked_add(1)
                        });
                }
            }
        }
    }

    /// Adds the counts of `other`, a partial count of another part of the corpus in a table
    /// of the same kind and size (exact into exact; count-min cell by cell).
    pub fn merge(&mut self, other: CorpusStats) {
        self.documents += other.documents;
        match (&mut self.table, other.table) {
            (Table::Exact(shards), Table::Exact(other)) => {
                for (shard, other) in shards.iter_mut().zip(other.into_vec()) {
                    for (feature, count) in other.counts {
                        let entry = shard.counts.entry(feature).or_insert(0);
                        *entry = entry.saturating_add(count);
                    }
                }
            }
            (
                Table::CountMin { counters, .. },
                Table::CountMin {
                    counters: other, ..
                },
            ) if counters.len() == other.len() => {
                for (a, b) in counters.iter().zip(other.iter()) {
                    let sum = a
                        .load(Ordering::Relaxed)
                        .saturating_add(b.load(Ordering::Relaxed));
                    a.store(sum, Ordering::Relaxed);
                }
            }
            (Table::CountMin { .. }, Table::Exact(other)) => {
                for shard in other.into_vec() {
                    for (feature, count) in shard.counts {
                        self.add_count(feature, count);
                    }
                }
            }
            (table @ Table::Exact(_), other @ Table::CountMin { .. }) => {
                if let Table::Exact(shards) = std::mem::replace(table, other) {
                    for shard in shards.into_vec() {
                        for (feature, count) in shard.counts {
                            self.add_count(feature, count);
                        }
                    }
                }
            }
            (Table::CountMin { .. }, Table::CountMin { .. }) => {
                debug_assert!(
                    false,
                    "count-min tables of different widths cannot be merged"
                );
            }
        }
    }

    /// In how many documents `feature` occurs (an upper estimate for count-min).
    pub fn document_frequency(&self, feature: u64) -> u32 {
        match &self.table {
            Table::Exact(shards) => (shards[shard_of(feature)].counts.get(&feature))
                .copied()
                .unwrap_or(0),
            Table::CountMin { mask, counters } => (slots(feature, *mask).into_iter())
                .map(|slot| counters[slot].load(Ordering::Relaxed))
                .min()
                .unwrap_or(0),
        }
    }

    /// The smoothed inverse document frequency of a feature, `ln((N + 1) / (df + 1)) + 1`:
    /// 1 for a feature in every document, larger for rarer ones, finite for unseen ones.
    pub fn idf(&self, feature: u64) -> f64 {
        let df = self.document_frequency(feature);
        ((self.documents as f64 + 1.0) / (f64::from(df) + 1.0)).ln() + 1.0
    }
}

/// Counters in a line of a count-min table: 16 of 32 bits, 64 bytes, a cache line.
const LINE: usize = 16;

/// The [`COUNT_MIN_DEPTH`] counters of `feature` in a table of `(mask + 1) x
/// COUNT_MIN_DEPTH` counters: distinct counters of one 64-byte line (a blocked count-min),
/// so that a lookup or an increment costs one cache miss instead of one a row. The line is
/// picked by the low bits of a hash, the counters within it by four 4-bit fields of its top
/// bits (a field naming a counter taken already moves to the next free one, so the four are
/// distinct: two features of one line share all four counters about once in 1,820).
#[inline]
fn slots(feature: u64, mask: u64) -> [usize; COUNT_MIN_DEPTH] {
    const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
    let lines = ((mask + 1) as usize * COUNT_MIN_DEPTH / LINE).max(1);
    let hash = mix64(feature ^ SEED);
    let base = (hash as usize & (lines - 1)) * LINE;
    let mut taken = 0u16;
    std::array::from_fn(|row| {
        let mut at = (hash >> (60 - 4 * row)) as usize & (LINE - 1);
        while taken & 1 << at != 0 {
            at = (at + 1) & (LINE - 1);
        }
        taken |= 1 << at;
        base + at
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_and_merges() {
        let mut a = CorpusStats::exact();
        a.add_document(&[1, 2, 3]);
        a.add_document(&[2, 3]);
        let mut b = CorpusStats::exact();
        b.add_document(&[3, 4]);
        a.merge(b);
        assert_eq!(a.documents(), 3);
        let counts: Vec<u32> = (0..6).map(|f| a.document_frequency(f)).collect();
        assert_eq!(counts, [0, 1, 2, 3, 1, 0]);
        assert_eq!(a.distinct_features(), Some(4));
        assert!(a.idf(1) > a.idf(3));
        assert!((a.idf(3) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn count_min_never_underestimates_and_is_close_when_wide() {
        let stats = CorpusStats::count_min(4 << 20);
        let mut truth = std::collections::HashMap::new();
        for document in 0..2000u64 {
            // 20 template features in every document, 30 of its own.
            let features: Vec<u64> = (0..20)
                .map(mix64)
                .chain((0..30).map(|i| mix64(1_000_000 + document * 100 + i)))
                .collect();
            for &f in &features {
                *truth.entry(f).or_insert(0u32) += 1;
            }
            stats.add_shared(&features);
        }
        let mut over = 0u64;
        for (&feature, &count) in &truth {
            let estimate = stats.document_frequency(feature);
            assert!(estimate >= count, "{feature}: {estimate} < {count}");
            over += u64::from(estimate - count);
        }
        assert_eq!(stats.document_frequency(mix64(3)), 2000);
        // 1,048,576 counters for 100,000 increments: over-counts are rare (the blocked layout's
        // correlated counters give about 1.2% of a count in all, the classic one under 1%).
        assert!(over * 50 < truth.len() as u64, "over-count {over}");
    }

    #[test]
    fn a_tiny_count_min_overestimates_but_stays_bounded() {
        let stats = CorpusStats::count_min(0);
        assert_eq!(stats.memory_bytes(), 1024 * 4 * COUNT_MIN_DEPTH);
        for document in 0..100u64 {
            let features: Vec<u64> = (0..100).map(|i| mix64(document * 1000 + i)).collect();
            stats.add_shared(&features);
        }
        // 10,000 increments over 1,024 cells per row: about 10 per cell, never below 1.
        let estimate = stats.document_frequency(mix64(5));
        assert!((1..=40).contains(&estimate), "{estimate}");
    }

    #[test]
    fn the_table_kind_follows_the_memory() {
        let mut stats = CorpusStats::exact();
        stats.add_document(&[mix64(1)]);
        stats.fit_within(1 << 20);
        assert_eq!(stats.kind(), "exact");
        stats.fit_within(0);
        assert_eq!(stats.kind(), "count-min");
        assert_eq!(CorpusStats::count_min(1 << 20).memory_bytes(), 1 << 20);
        for memory in [0, 5000, 1 << 20, 3 << 20] {
            assert_eq!(
                CorpusStats::count_min_bytes(memory),
                CorpusStats::count_min(memory).memory_bytes()
            );
        }
    }

    #[test]
    fn an_exact_table_that_outgrows_its_memory_becomes_count_min() {
        let features: Vec<u64> = (0..1000).map(mix64).collect();
        let mut switched = CorpusStats::exact();
        switched.add_document(&features[..500]);
        switched.fit_within(1 << 20);
        assert!(switched.is_exact());
        switched.fit_within(500 * EXACT_BYTES_PER_FEATURE - 1);
        assert!(!switched.is_exact());
        let memory = switched.memory_bytes();
        switched.add_document(&features);
        let from_start = CorpusStats::count_min(memory);
        from_start.add_shared(&features[..500]);
        from_start.add_shared(&features);
        let mut from_start = from_start;
        from_start.add_documents(2);
        assert_eq!(switched, from_start);
        // 1,000 features in 4,096 counters: an estimate may be over, never under.
        assert!(switched.document_frequency(features[0]) >= 2);
    }

    #[test]
    fn count_min_merge_adds_cells() {
        let a_features = [mix64(1), mix64(2)];
        let mut a = CorpusStats::count_min(1 << 16);
        a.add_document(&a_features);
        let mut b = CorpusStats::count_min(1 << 16);
        b.add_document(&a_features[..1]);
        a.merge(b);
        assert_eq!(a.documents(), 2);
        assert_eq!(a.document_frequency(mix64(1)), 2);
        assert_eq!(a.document_frequency(mix64(2)), 1);
    }

    #[test]
    fn tables_read_back_from_a_checkpoint() {
        let mut exact = CorpusStats::exact();
        exact.add_document(&[1, 5 << 58, u64::MAX]);
        exact.add_document(&[1, 7]);
        let count_min = CorpusStats::count_min(1 << 16);
        count_min.add_shared(&[3, 9, 27]);
        for stats in [exact, count_min, CorpusStats::exact()] {
            let mut out = crate::codec::Encoder::new();
            stats.encode(&mut out);
            let bytes = out.finish();
            let mut from = crate::codec::Decoder::new(&bytes).unwrap();
            let back = CorpusStats::decode(&mut from).unwrap();
            from.end().unwrap();
            assert_eq!(back, stats);
            assert_eq!(back.document_frequency(1), stats.document_frequency(1));
        }
    }

    #[test]
    fn a_table_from_counts_equals_the_counted_one() {
        let documents: [&[u64]; 3] = [&[1, 5, 1 << 60], &[5, 1 << 60], &[5]];
        let mut counted = CorpusStats::exact();
        for features in documents {
            counted.add_document(features);
        }
        let given = CorpusStats::from_counts(3, [(5, 3), (1 << 60, 1), (1, 1), (1 << 60, 1)]);
        assert_eq!(given, counted);
        assert_eq!(given.document_frequency(1 << 60), 2);
        assert_eq!(given.frequent_features(|_| true, 2), Some(vec![5, 1 << 60]));
    }
}
