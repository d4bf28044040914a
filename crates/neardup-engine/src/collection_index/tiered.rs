//! The Hamming part of an online index: fingerprints in levels of [`HammingIndex`], the
//! newest small, merged off the request path ([`Tiered`]).

use neardup_core::{Error, Result};
use neardup_index::{HammingIndex, Levels, Merge};

/// Fingerprints per level before it is frozen (see [`Tiered`]).
const LEVEL_BASE: usize = 8192;

/// A Hamming index that takes inserts one at a time at a bounded cost per query: levels of
/// [`HammingIndex`], the newest small. Inserts go to the newest level; when it holds
/// `LEVEL_BASE` fingerprints it is frozen and merged with the levels before it while they
/// are at most [`neardup_index::LEVEL_FANOUT`] times its size (so sizes fall geometrically, a
/// query probes O(log n) levels, and each fingerprint is rebuilt O(log n) times). A single
/// growing `HammingIndex` would instead scan a buffer of up to an eighth of its size on every
/// query. Levels use dense tables ([`HammingIndex::build_dense`]): a query with a large
/// radius probes hundreds of block values per level, each then reads about one fingerprint.
///
/// Frozen levels are immutable, behind an `Arc` ([`Levels`]): with [`Tiered::defer_merges`]
/// the owner takes a merge ([`Tiered::merge`]), builds it on a thread of its own
/// ([`build_hamming_merge`]) while queries and inserts go on, and installs it
/// ([`Tiered::install`]); removals made meanwhile are kept and skipped by queries.
#[derive(Debug)]
pub struct Tiered {
    max_distance: u32,
    /// The frozen levels, oldest and largest first.
    levels: Levels<HammingIndex>,
    /// The level taking inserts.
    newest: HammingIndex,
    /// The lowest and highest ids inserted into `newest`.
    newest_range: Option<(u64, u64)>,
    /// Frozen levels wait for the owner's merge instead of merging on insert.
    deferred: bool,
}

/// A merge of frozen Hamming levels, to build with [`build_hamming_merge`].
#[derive(Debug)]
pub struct HammingMerge {
    pub(super) merge: Merge<HammingIndex>,
    max_distance: u32,
}

impl Tiered {
    /// An empty index answering up to `max_distance`.
    ///
    /// # Errors
    /// A `max_distance` the Hamming index refuses.
    pub fn new(max_distance: u32) -> Result<Tiered> {
        Ok(Tiered {
            max_distance,
            levels: Levels::default(),
            newest: Self::level_from(Vec::new(), max_distance)?,
            newest_range: None,
            deferred: false,
        })
    }

    /// The same index, merging frozen levels only when asked (see [`Tiered`]).
    pub fn defer_merges(mut self) -> Tiered {
        self.deferred = true;
        self
    }

    /// Whether frozen levels wait for the owner's merge.
    pub fn set_deferred(&mut self, deferred: bool) {
        self.deferred = deferred;
    }

    /// The blocks of a level of `n` fingerprints: the `m` with the least expected work for a
    /// query at `max_distance`: `m` times the block values probed times (two cache misses,
    /// the offsets and the start of the bucket, plus the bucket's entries, read in sequence
    /// from the dense table's inline residuals, 4 bytes each, at about a 96th of a miss each).
    /// [`HammingIndex::blocks_for`] models a lookup as `log2(n)` reads, which favours few
    /// probes of crowded values. At radius 3 this keeps 4 blocks of 16 bits (4 probes, long
    /// sequential buckets) up to about 190 million fingerprints, where 2 blocks of 32 bits
    /// would make 66 random probes.
    fn blocks(max_distance: u32, n: usize) -> u32 {
        let binomial = |n: u32, k: u32| -> f64 {
            (0..k)
                .map(|i| f64::from(n - i) / f64::from(i + 1))
                .product()
        };
        let cost = |m: u32| {
            let width = 64u32.div_ceil(m);
            let radius = (max_distance / m).min(width);
            let probes = f64::from(m) * (0..=radius).map(|i| binomial(width, i)).sum::<f64>();
            probes * (2.0 + n as f64 / 2f64.powi(width as i32) / 96.0)
        };
        (1..=(max_distance + 1).min(16))
            .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
            .unwrap_or(1)
    }

    fn level_from(entries: Vec<(u64, u64)>, max_distance: u32) -> Result<HammingIndex> {
        let blocks = Self::blocks(max_distance, entries.len().max(LEVEL_BASE));
        HammingIndex::build_dense_from(entries, max_distance, Some(blocks))
            .map_err(|e| Error::invalid("max_distance", e.to_string()))
    }

    /// Stores `fingerprint` under `id` (a repeated id is ignored). Ids must increase.
    pub fn insert(&mut self, id: u64, fingerprint: u64) {
        if self.newest.insert(id, fingerprint).is_err() {
            return;
        }
        let (first, _) = self.newest_range.unwrap_or((id, id));
        self.newest_range = Some((first.min(id), id));
        if self.newest.len() < LEVEL_BASE {
            return;
        }
        // Freeze the newest level.
        let Ok(fresh) = Self::level_from(Vec::new(), self.max_distance) else {
            return;
        };
        let frozen = std::mem::replace(&mut self.newest, fresh);
        if let Some((first, last)) = self.newest_range.take() {
            self.levels.push(frozen, first, last);
        }
        if !self.deferred {
            while let Some(merge) = self.merge() {
                match build_hamming_merge(&merge) {
                    Ok(merged) => self.install(merge, merged),
                    Err(_) => return,
                };
            }
        }
    }

    /// The merge due, if any (see [`Levels::merge`]).
    pub fn merge(&self) -> Option<HammingMerge> {
        Some(HammingMerge {
            merge: self.levels.merge()?,
            max_distance: self.max_distance,
        })
    }

    /// Installs what [`build_hamming_merge`] built for `merge`; false when its levels are
    /// gone (a retention drop took one meanwhile).
    pub fn install(&mut self, merge: HammingMerge, merged: HammingIndex) -> bool {
        self.levels.install(merge.merge, merged)
    }

    /// Forgets every id below `seq` (the documents a retention drop removed): levels holding
    /// only such ids are dropped, the others skip them until their next merge.
    pub fn forget_below(&mut self, seq: u64) {
        self.levels.forget_below(seq);
        if self.newest_range.is_some_and(|(first, _)| first < seq) {
            let below: Vec<u64> = (self.newest.entries().into_iter())
                .map(|(id, _)| id)
                .filter(|&id| id < seq)
                .collect();
            for id in below {
                self.newest.remove(id);
            }
        }
    }

    /// An index of `entries` (distinct ids, ascending) in one level, as a restart wants: a
    /// query then probes one level instead of a dozen.
    ///
    /// # Errors
    /// A repeated id, or a `max_distance` the Hamming index refuses.
    pub fn from_entries(max_distance: u32, entries: &[(u64, u64)]) -> Result<Tiered> {
        let mut tiered = Tiered::new(max_distance)?;
        if let (Some(first), Some(last)) = (entries.first(), entries.last()) {
            let level = Self::level_from(entries.to_vec(), max_distance)?;
            tiered.levels.push(level, first.0, last.0);
        }
        Ok(tiered)
    }

    /// Removes `id`; false when absent.
    pub fn remove(&mut self, id: u64) -> bool {
        self.newest.remove(id) || self.levels.remove(id)
    }

    /// Every `(id, distance)` within `k` (at most the index's maximum), in no set order.
    pub fn query(&self, fingerprint: u64, k: u32, out: &mut Vec<(u64, u32)>) {
        self.query_within(fingerprint, k, usize::MAX, out);
    }

    /// [`Tiered::query`] reading at most `limit` fingerprints per block value of each level
    /// (see [`HammingIndex::query_within`]); returns, summed over the levels (which hold
    /// different documents), the most fingerprints one probed value had past `limit`.
    pub fn query_within(
        &self,
        fingerprint: u64,
        k: u32,
        limit: usize,
        out: &mut Vec<(u64, u32)>,
    ) -> u64 {
        let k = k.min(self.max_distance);
        let mut unread = 0;
        let from = out.len();
        for level in self.levels.iter().chain([&self.newest]) {
            if let Ok((found, left)) = level.query_within(fingerprint, k, limit) {
                out.extend(found);
                unread += left;
            }
        }
        if !self.levels.all_live() {
            let mut at = from;
            while at < out.len() {
                if self.levels.is_gone(out[at].0) {
                    out.swap_remove(at);
                } else {
                    at += 1;
                }
            }
        }
        unread
    }

    /// Stored fingerprints.
    pub fn len(&self) -> usize {
        self.levels.docs() + self.newest.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(HammingIndex::memory_bytes)
            .sum::<usize>()
            + self.newest.memory_bytes()
    }

    /// The number of levels, the newest included.
    pub fn levels(&self) -> usize {
        self.levels.len() + 1
    }
}

/// The level that replaces `merge`'s levels (from any thread): their live fingerprints,
/// less the documents removed or forgotten when the merge was planned.
///
/// # Errors
/// A `max_distance` the Hamming index refuses.
pub fn build_hamming_merge(merge: &HammingMerge) -> Result<HammingIndex> {
    let levels = merge.merge.levels();
    let count = levels.iter().map(|l| l.len()).sum();
    let (mut ids, mut fingerprints) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for level in levels {
        level.extend_columns(&mut ids, &mut fingerprints);
    }
    if (ids.iter()).any(|&id| merge.merge.is_gone(id)) {
        let mut kept = 0;
        for at in 0..ids.len() {
            if !merge.merge.is_gone(ids[at]) {
                ids[kept] = ids[at];
                fingerprints[kept] = fingerprints[at];
                kept += 1;
            }
        }
        ids.truncate(kept);
        fingerprints.truncate(kept);
    }
    let blocks = Tiered::blocks(merge.max_distance, ids.len().max(LEVEL_BASE));
    HammingIndex::build_dense_columns(ids, fingerprints, merge.max_distance, Some(blocks))
        .map_err(|e| Error::invalid("max_distance", e.to_string()))
}
