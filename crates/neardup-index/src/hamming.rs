//! An exact Hamming-distance index of 64-bit fingerprints (SimHash): every stored
//! fingerprint within distance `k` of a query, and the all-pairs self-join, with no false
//! negatives and no false positives.
//!
//! # How
//!
//! Multi-index hashing (Norouzi, Punjani, Fleet, "Fast search in Hamming space with
//! multi-index hashing", CVPR 2012), which contains the permuted block tables of Manku, Jain
//! and Das Sarma (WWW 2007) as its radius-0 case: the 64 bits are cut into `m` contiguous
//! blocks, and two fingerprints within distance `k` agree on at least one block up to
//! `r = floor(k / m)` bits (pigeonhole: `m (r + 1) > k`). Each block has a table of the slots
//! grouped by block value; a query looks up, in every table, every block value within `r` of
//! its own, and checks the full distance of what it finds. With `m = k + 1` blocks the radius
//! is 0 (Manku's tables); fewer, wider blocks keep the buckets small on large indexes at the
//! cost of more probes. [`HammingIndex::blocks_for`] picks `m` from `k` and the number of
//! fingerprints so that a block has about `log2(n)` bits.
//!
//! A table holds only `u32` slots, grouped by the top bits of their block value through an
//! offset array (a counting sort, rebuilt at each merge): a lookup reads two offsets and the
//! bucket, no search. The key has `min(width, floor(log2 n) - 3)` bits, so the offsets cost
//! at most half a byte per fingerprint; when it is shorter than the block, the bucket also
//! holds neighbouring block values, told apart by the fingerprints read for the distance
//! anyway.
//!
//! A pair is reported once: by the first block (in block order) on which the two fingerprints
//! agree within the radius, so no set of seen pairs is kept. Identical fingerprints are
//! matches at distance 0.
//!
//! [`HammingIndex::self_join`] does not use the query tables: it is a batch multi-index join
//! with its own layout (see `hamming_join.rs`), which also serves [`crate::HammingJoin`] and
//! [`crate::self_join_128`] (128-bit fingerprints, by their 64-bit halves).
//!
//! # Incremental use
//!
//! The merged slots are sorted by id, so an id is found by binary search and no id map is
//! kept for them. [`HammingIndex::insert`] appends to a small unsorted buffer that queries
//! scan (with a hash map of its ids only), merged into the tables when it outgrows an eighth
//! of the index or 4,096 entries (amortised linear; the vectors grow by that much, not by
//! doubling); [`HammingIndex::remove`] clears a liveness bit, and dead slots are dropped at
//! the next merge (or when they are a quarter of the slots). [`HammingIndex::save`] and
//! [`HammingIndex::load`] write and check a versioned file (`NDHX` version 1: ids and
//! fingerprints; the tables are rebuilt on load).
//!
//! # Memory
//!
//! Per merged fingerprint: 8 bytes of fingerprint, 8 of id, 1 bit of liveness, and per block
//! table a 4-byte slot plus at most half a byte of offsets: `16.125 + 4.5 m` bytes at most,
//! 34.1 with the 4 tables of `k = 3` and `k = 10` on 2 million (2 tables for the largest),
//! so at most 40 bytes for up to 5 tables. Measured with [`HammingIndex::memory_bytes`]:
//! 33.6 bytes per fingerprint for 100,000 random fingerprints at `k = 3` (13-bit keys: 4 x
//! 8,193 offsets of 4 bytes = 1.3 bytes per fingerprint), 32.65 for 2 million (16-bit keys:
//! 0.5 bytes). The insert buffer costs 16 bytes per entry plus its id map (about 15 bytes an
//! entry) until the next merge.

use std::ops::ControlFlow;

use hashbrown::HashMap;
use rayon::prelude::*;

use crate::hamming_blocks::{binomial, for_each_within, layout, Block};
use crate::hamming_join::self_join_64;
use crate::hamming_scan::scan_within;

pub use crate::hamming_blocks::HammingError;

/// A budgeted query reads at most this many fingerprints per block value for each one within
/// the distance it may keep ([`HammingIndex::query_within`]).
const READS_PER_LIMIT: usize = 64;

/// The most block values one query may look up (a layout needing more is refused).
const MAX_PROBES: f64 = 1e7;

/// Block values a query at distance `k` looks up with `m` blocks: per block, every value
/// within `floor(k / m)` bits of a block of `ceil(64 / m)` bits.
fn probes_per_query(m: u32, k: u32) -> f64 {
    let width = 64u32.div_ceil(m);
    let radius = (k / m).min(width);
    f64::from(m) * (0..=radius).map(|i| binomial(width, i)).sum::<f64>()
}

/// The slots of one block table, grouped by the top `key_bits` bits of their block value
/// (all of it when the block is narrow enough): the slots of key `key` are
/// `slots[offsets[key]..offsets[key + 1]]`, in slot order. A lookup is two reads, no search;
/// when the key is shorter than the block, the candidates' own block values (read with their
/// fingerprints for the distance anyway) sort out the other values sharing the key.
///
/// A dense table also holds 32 bits of each slot's fingerprint outside the block inline, in
/// table order (`inline`, [`Block::residual`]), so that a bucket is scanned sequentially at 4
/// bytes a fingerprint rather than by one random read per slot; the slot and its whole
/// fingerprint are read only when the residuals are within the distance (for random
/// fingerprints at `k = 3`, about one in 800,000).
#[derive(Debug, Clone, Default)]
struct Table {
    key_bits: u32,
    offsets: Vec<u32>,
    slots: Vec<u32>,
    inline: Vec<u32>,
}

impl Table {
    /// A table of every slot (all live after a merge), keys of about `log2(n) - 3` bits so
    /// that the offsets cost at most half a byte per fingerprint, or `log2(n)` bits when
    /// `dense` (about one fingerprint per key: fewer reads per probe, 4 bytes of offsets per
    /// fingerprint).
    fn build(block: Block, fingerprints: &[u64], dense: bool) -> Table {
        let log2 = 63 - (fingerprints.len().max(16) as u64).leading_zeros();
        let key_bits = block.width.min(if dense { log2 } else { log2 - 3 });
        let key =
            |fingerprint: u64| (block.value(fingerprint) >> (block.width - key_bits)) as usize;
        let mut offsets = vec![0u32; (1usize << key_bits) + 1];
        for &fingerprint in fingerprints {
            offsets[key(fingerprint) + 1] += 1;
        }
        for at in 1..offsets.len() {
            offsets[at] += offsets[at - 1];
        }
        let mut next = offsets.clone();
        let mut slots = vec![0u32; fingerprints.len()];
        let mut inline = if dense {
            vec![0u32; fingerprints.len()]
        } else {
            Vec::new()
        };
        for (slot, &fingerprint) in fingerprints.iter().enumerate() {
            let at = &mut next[key(fingerprint)];
            slots[*at as usize] = slot as u32;
            if dense {
                inline[*at as usize] = block.residual(fingerprint);
            }
            *at += 1;
        }
        Table {
            key_bits,
            offsets,
            slots,
            inline,
        }
    }

    /// The table positions of the slots whose block value may be `value` (all of them when
    /// the key is the block).
    fn bucket(&self, block: Block, value: u64) -> std::ops::Range<usize> {
        let key = (value >> (block.width - self.key_bits)) as usize;
        self.offsets[key] as usize..self.offsets[key + 1] as usize
    }

    fn memory_bytes(&self) -> usize {
        4 * (self.offsets.capacity() + self.slots.capacity() + self.inline.capacity())
    }
}

/// Asks the CPU to bring the first two cache lines of `run` closer (no effect elsewhere).
#[inline(always)]
fn prefetch(run: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    for line in run.chunks(16).take(2) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86-64 CPU, and a prefetch never faults: it only
        // hints at an address, here one inside `run`.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = run;
}

/// An exact Hamming index of 64-bit fingerprints with `u64` ids (see the module docs).
#[derive(Debug, Clone)]
pub struct HammingIndex {
    max_distance: u32,
    blocks: Vec<Block>,
    /// Fingerprint and id per slot: slots `0..indexed` are in the tables, sorted by id (so an
    /// id is found by binary search); the rest are the unsorted insert buffer.
    fingerprints: Vec<u64>,
    ids: Vec<u64>,
    /// One bit per slot, set while the slot is live.
    live: Vec<u64>,
    indexed: usize,
    tables: Vec<Table>,
    /// The slots of the buffered ids.
    buffered: HashMap<u64, u32>,
    /// Slots removed since the last merge.
    dead: usize,
    /// Tables keyed on about `log2(n)` bits rather than `log2(n) - 3` (see `Table::build`).
    dense: bool,
}

impl crate::levels::Level for HammingIndex {
    fn docs(&self) -> usize {
        self.len()
    }

    fn holds(&self, seq: u64) -> bool {
        self.contains(seq)
    }

    fn docs_below(&self, seq: u64) -> usize {
        (self.ids.iter().enumerate())
            .filter(|&(slot, &id)| id < seq && self.is_live(slot))
            .count()
    }
}

/// Magic bytes of a saved index.
const MAGIC: &[u8; 4] = b"NDHX";
/// Version of the saved layout.
const VERSION: u32 = 1;

impl HammingIndex {
    /// The number of blocks for an index answering up to `max_distance` over about
    /// `fingerprints` entries: the `m` from 1 to `max_distance + 1` with the least expected
    /// work per query, `m` tables x the values probed per table (all within `floor(k / m)`
    /// bits of a `64 / m`-bit block) x (a lookup, modelled as `log2(n)` reads, + the
    /// bucket's expected size).
    pub fn blocks_for(max_distance: u32, fingerprints: usize) -> u32 {
        let n = fingerprints.max(2) as f64;
        let cost = |m: u32| {
            let width = 64 / m;
            probes_per_query(m, max_distance) * (n.log2() + n / 2f64.powi(width as i32))
        };
        (1..=(max_distance + 1).min(64))
            .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
            .unwrap_or(1)
    }

    /// An index of `(id, fingerprint)` pairs answering distances up to `max_distance`, with
    /// `blocks` tables (`None`: [`HammingIndex::blocks_for`]).
    ///
    /// # Errors
    /// A repeated id, `max_distance` above 63, or `blocks` 0 or above 64.
    pub fn build(
        entries: &[(u64, u64)],
        max_distance: u32,
        blocks: Option<u32>,
    ) -> Result<HammingIndex, HammingError> {
        if max_distance > 63 {
            return Err(HammingError::Parameter(format!(
                "max_distance {max_distance} (expected 0 to 63)"
            )));
        }
        let m = blocks.unwrap_or_else(|| Self::blocks_for(max_distance, entries.len()));
        if !(1..=64).contains(&m) {
            return Err(HammingError::Parameter(format!(
                "blocks {m} (expected 1 to 64)"
            )));
        }
        let probes = probes_per_query(m, max_distance);
        if probes > MAX_PROBES {
            return Err(HammingError::Parameter(format!(
                "blocks {m} for max_distance {max_distance}: a query would look up {probes:.0} \
                 block values (at most {MAX_PROBES:.0}); use more blocks"
            )));
        }
        let mut sorted = entries.to_vec();
        sorted.par_sort_unstable_by_key(|e| e.0);
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(HammingError::DuplicateId(pair[0].0));
        }
        let mut index = HammingIndex {
            max_distance,
            blocks: layout(m),
            fingerprints: Vec::new(),
            ids: Vec::new(),
            live: Vec::new(),
            indexed: 0,
            tables: Vec::new(),
            buffered: HashMap::new(),
            dead: 0,
            dense: false,
        };
        index.install(sorted);
        Ok(index)
    }

    /// As [`HammingIndex::build`], with tables keyed on about `log2(n)` bits instead of
    /// `log2(n) - 3`: each probe reads about one fingerprint rather than eight, for 4 bytes of
    /// table offsets per fingerprint and table instead of half a byte. For query-heavy use
    /// (the online service) with large radii, where a query probes hundreds of block values.
    ///
    /// # Errors
    /// As [`HammingIndex::build`].
    pub fn build_dense(
        entries: &[(u64, u64)],
        max_distance: u32,
        blocks: Option<u32>,
    ) -> Result<HammingIndex, HammingError> {
        Self::build_dense_from(entries.to_vec(), max_distance, blocks)
    }

    /// [`HammingIndex::build_dense`] taking the entries (no copy; entries already sorted by
    /// id, as the levels of an online index give them, are not sorted again).
    ///
    /// # Errors
    /// As [`HammingIndex::build`].
    pub fn build_dense_from(
        mut entries: Vec<(u64, u64)>,
        max_distance: u32,
        blocks: Option<u32>,
    ) -> Result<HammingIndex, HammingError> {
        if !entries.is_sorted_by_key(|e| e.0) {
            entries.par_sort_unstable_by_key(|e| e.0);
        }
        let (ids, fingerprints) = entries.into_iter().unzip();
        Self::build_dense_columns(ids, fingerprints, max_distance, blocks)
    }

    /// [`HammingIndex::build_dense`] from ids and their fingerprints in two columns of the
    /// same length (a merge gathers them so: no vector of pairs in between). Ids in
    /// increasing order are taken as they are; others are sorted first.
    ///
    /// # Errors
    /// As [`HammingIndex::build`]; columns of different lengths are a parameter error.
    pub fn build_dense_columns(
        ids: Vec<u64>,
        fingerprints: Vec<u64>,
        max_distance: u32,
        blocks: Option<u32>,
    ) -> Result<HammingIndex, HammingError> {
        if ids.len() != fingerprints.len() {
            return Err(HammingError::Parameter(format!(
                "{} ids for {} fingerprints",
                ids.len(),
                fingerprints.len()
            )));
        }
        if !ids.is_sorted() {
            let entries = ids.into_iter().zip(fingerprints).collect();
            return Self::build_dense_from(entries, max_distance, blocks);
        }
        let mut index = Self::build(&[], max_distance, blocks)?;
        index.dense = true;
        if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(HammingError::DuplicateId(pair[0]));
        }
        if !ids.is_empty() {
            index.install_columns(ids, fingerprints);
        }
        Ok(index)
    }

    /// Number of stored fingerprints.
    pub fn len(&self) -> usize {
        self.ids.len() - self.dead
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest distance answered exactly.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// The number of block tables.
    pub fn blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Heap bytes held: fingerprints, ids, liveness bits, tables and the buffer's id map.
    pub fn memory_bytes(&self) -> usize {
        let map_entry = std::mem::size_of::<(u64, u32)>() + 1;
        8 * (self.fingerprints.capacity() + self.ids.capacity() + self.live.capacity())
            + std::mem::size_of::<Block>() * self.blocks.capacity()
            + std::mem::size_of::<Table>() * self.tables.capacity()
            + self.tables.iter().map(Table::memory_bytes).sum::<usize>()
            + self.buffered.capacity() * map_entry * 8 / 7
    }

    fn is_live(&self, slot: usize) -> bool {
        self.live[slot / 64] >> (slot % 64) & 1 == 1
    }

    fn set_live(&mut self, slot: usize, live: bool) {
        let bit = 1u64 << (slot % 64);
        if slot / 64 == self.live.len() {
            self.live.push(0);
        }
        if live {
            self.live[slot / 64] |= bit;
        } else {
            self.live[slot / 64] &= !bit;
        }
    }

    /// The live slot of `id`, if stored.
    fn slot_of(&self, id: u64) -> Option<usize> {
        let merged = self.ids[..self.indexed].binary_search(&id).ok();
        merged
            .filter(|&slot| self.is_live(slot))
            .or_else(|| self.buffered.get(&id).map(|&slot| slot as usize))
    }

    /// Makes `entries` (sorted by id, distinct) the merged slots and builds the tables.
    fn install(&mut self, entries: Vec<(u64, u64)>) {
        let ids = entries.iter().map(|e| e.0).collect();
        let fingerprints = entries.iter().map(|e| e.1).collect();
        drop(entries);
        self.install_columns(ids, fingerprints);
    }

    /// [`HammingIndex::install`] from the two columns (same length, ids sorted, distinct).
    fn install_columns(&mut self, ids: Vec<u64>, fingerprints: Vec<u64>) {
        self.ids = ids;
        self.fingerprints = fingerprints;
        let count = self.ids.len();
        self.live = vec![u64::MAX; count / 64];
        if !count.is_multiple_of(64) {
            self.live.push((1u64 << (count % 64)) - 1);
        }
        self.indexed = count;
        self.buffered = HashMap::new();
        self.dead = 0;
        let fingerprints = &self.fingerprints;
        let dense = self.dense;
        self.tables = (self.blocks.par_iter())
            .map(|&block| Table::build(block, fingerprints, dense))
            .collect();
    }

    /// Rebuilds the tables over every live slot, dropping dead ones and sorting by id.
    fn merge(&mut self) {
        let mut entries: Vec<(u64, u64)> = (0..self.ids.len())
            .filter(|&slot| self.is_live(slot))
            .map(|slot| (self.ids[slot], self.fingerprints[slot]))
            .collect();
        entries.par_sort_unstable_by_key(|e| e.0);
        self.install(entries);
    }

    /// Stores `fingerprint` under `id`.
    ///
    /// # Errors
    /// [`HammingError::DuplicateId`] when `id` is stored; the index is unchanged.
    pub fn insert(&mut self, id: u64, fingerprint: u64) -> Result<(), HammingError> {
        if self.slot_of(id).is_some() {
            return Err(HammingError::DuplicateId(id));
        }
        let slot = self.ids.len();
        if slot == self.ids.capacity() {
            // Room for the buffer until the next merge, not a doubling of the index.
            let room = self.merge_threshold();
            self.ids.reserve_exact(room);
            self.fingerprints.reserve_exact(room);
            self.live.reserve_exact(room / 64 + 1);
        }
        self.buffered.insert(id, slot as u32);
        self.ids.push(id);
        self.fingerprints.push(fingerprint);
        self.set_live(slot, true);
        // The buffer is scanned by every query: merge when it outgrows a fraction of the
        // tables (amortised linear: each merge at least doubles what was merged before, or
        // holds at least 4,096 entries).
        if self.ids.len() - self.indexed >= self.merge_threshold() {
            self.merge();
        }
        Ok(())
    }

    /// The buffer size that triggers a merge.
    fn merge_threshold(&self) -> usize {
        4096.max(self.indexed / 8)
    }

    /// Whether `id` is stored (and not removed).
    pub fn contains(&self, id: u64) -> bool {
        self.slot_of(id).is_some_and(|slot| self.is_live(slot))
    }

    /// Removes `id`; false when it was not stored.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(slot) = self.slot_of(id) else {
            return false;
        };
        if slot >= self.indexed {
            self.buffered.remove(&id);
        }
        self.set_live(slot, false);
        self.dead += 1;
        if self.dead > 1024 && self.dead > self.ids.len() / 4 {
            self.merge();
        }
        true
    }

    /// Every stored `(id, distance)` within `k` of `fingerprint`, by id.
    ///
    /// # Errors
    /// [`HammingError::DistanceTooLarge`] when `k` exceeds the index's `max_distance`.
    pub fn query(&self, fingerprint: u64, k: u32) -> Result<Vec<(u64, u32)>, HammingError> {
        Ok(self.query_within(fingerprint, k, usize::MAX)?.0)
    }

    /// [`HammingIndex::query`] reading each probed block value's fingerprints in slot order
    /// (the lowest ids of the merged slots first) until `limit` of them were within `k`, or
    /// `64 limit` were read, and the insert buffer whole; also returns the most fingerprints
    /// one probed value had left unread (0 when all were read). A template flood of
    /// near-identical fingerprints then costs a query about `limit` reads per probed value,
    /// not the whole index, while a value crowded only by chance (about `n / 65,536`
    /// unrelated fingerprints per 16-bit block value: 763 at 50 million) is read whole; a
    /// pair within `k` may be missed only when something was left unread.
    ///
    /// # Errors
    /// [`HammingError::DistanceTooLarge`] when `k` exceeds the index's `max_distance`.
    pub fn query_within(
        &self,
        fingerprint: u64,
        k: u32,
        limit: usize,
    ) -> Result<(Vec<(u64, u32)>, u64), HammingError> {
        self.check(k)?;
        let mut found = Vec::new();
        let unread = self.probe(fingerprint, k, limit, &mut |slot, distance| {
            found.push((self.ids[slot as usize], distance));
        });
        found.sort_unstable();
        Ok((found, unread))
    }

    fn check(&self, k: u32) -> Result<(), HammingError> {
        if k > self.max_distance {
            return Err(HammingError::DistanceTooLarge {
                asked: k,
                max: self.max_distance,
            });
        }
        Ok(())
    }

    /// Calls `found(slot, distance)` once for every live slot within `k` of `fingerprint`
    /// among those read of each table bucket probed (until `limit` within `k` or
    /// [`READS_PER_LIMIT`] `x limit` read), and the buffer; returns the most slots one bucket
    /// left unread.
    fn probe(
        &self,
        fingerprint: u64,
        k: u32,
        limit: usize,
        found: &mut impl FnMut(u32, u32),
    ) -> u64 {
        let radius = k / self.blocks.len() as u32;
        let any_dead = self.dead > 0;
        let mut unread = 0;
        // The buckets of the own block values, which every probe reads, are asked for at
        // once: their misses overlap instead of following one another.
        for (&block, table) in self.blocks.iter().zip(&self.tables) {
            if !table.inline.is_empty() {
                let bucket = table.bucket(block, block.value(fingerprint));
                prefetch(&table.inline[bucket.start.min(table.inline.len() - 1)..]);
            }
        }
        for (index, (&block, table)) in self.blocks.iter().zip(&self.tables).enumerate() {
            let own = block.value(fingerprint);
            let residual = block.residual(fingerprint);
            let whole = table.key_bits == block.width;
            let inline = !table.inline.is_empty();
            let most_reads = limit.saturating_mul(READS_PER_LIMIT);
            for_each_within(own, block.width, radius, &mut |value| {
                let bucket = table.bucket(block, value);
                if limit == 0 {
                    unread = unread.max(bucket.len() as u64);
                    return;
                }
                let read_end = bucket.end.min(bucket.start.saturating_add(most_reads));
                let mut within = 0;
                // A fingerprint within `k` at table position `at`: counted against the
                // limit when it has the probed block value, reported when live and when
                // this is the first block on which the two are within the radius.
                let mut consider = |at: usize, other: u64| {
                    if (!whole && block.value(other) != value)
                        || (other ^ fingerprint).count_ones() > k
                    {
                        return ControlFlow::Continue(());
                    }
                    within += 1;
                    let slot = table.slots[at];
                    if (!any_dead || self.is_live(slot as usize))
                        && (index == 0 || self.first_block(fingerprint, other, radius) == index)
                    {
                        found(slot, (other ^ fingerprint).count_ones());
                    }
                    if within >= limit {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                };
                let end = if inline {
                    let run = &table.inline[bucket.start..read_end];
                    bucket.start
                        + scan_within(run, residual, k, &mut |offset| {
                            let at = bucket.start + offset;
                            consider(at, self.fingerprints[table.slots[at] as usize])
                        })
                } else {
                    let mut end = read_end;
                    for at in bucket.start..read_end {
                        let other = self.fingerprints[table.slots[at] as usize];
                        if consider(at, other).is_break() {
                            end = at + 1;
                            break;
                        }
                    }
                    end
                };
                unread = unread.max((bucket.end - end) as u64);
            });
        }
        for slot in self.indexed..self.ids.len() {
            let distance = (self.fingerprints[slot] ^ fingerprint).count_ones();
            if distance <= k && self.is_live(slot) {
                found(slot as u32, distance);
            }
        }
        unread
    }

    /// The first block on which `a` and `b` are within `radius`.
    fn first_block(&self, a: u64, b: u64, radius: u32) -> usize {
        (self.blocks.iter())
            .position(|block| (block.value(a) ^ block.value(b)).count_ones() <= radius)
            .unwrap_or(usize::MAX)
    }

    /// Every pair of stored fingerprints within `k`, as `(id_a, id_b, distance)` with
    /// `id_a < id_b`, each pair once, sorted.
    ///
    /// A batch join does not use the query tables: it groups the live fingerprints by the
    /// blocks of a layout chosen for the join (`k + 1` radius-0 blocks for small `k`, fewer
    /// blocks probed within a radius for large `k`) and compares neighbouring buckets in
    /// cache; a pair is kept by the first block on which the two are within the radius. For
    /// random fingerprints the work at small `k` is about `(k + 1) n^2 / 2^(64 / (k + 1) + 1)`
    /// comparisons.
    ///
    /// # Errors
    /// [`HammingError::DistanceTooLarge`] when `k` exceeds the index's `max_distance`.
    pub fn self_join(&self, k: u32) -> Result<Vec<(u64, u64, u32)>, HammingError> {
        self.check(k)?;
        let live: Vec<u32> = (0..self.ids.len() as u32)
            .filter(|&slot| self.is_live(slot as usize))
            .collect();
        let fingerprints: Vec<u64> = live
            .iter()
            .map(|&s| self.fingerprints[s as usize])
            .collect();
        let id = |position: u32| self.ids[live[position as usize] as usize];
        let mut pairs: Vec<(u64, u64, u32)> = (self_join_64(&fingerprints, k))
            .into_iter()
            .map(|(a, b, distance)| (id(a).min(id(b)), id(a).max(id(b)), distance))
            .collect();
        pairs.par_sort_unstable();
        Ok(pairs)
    }

    /// The stored ids (live or not) below `id`: a binary search of the merged slots and a
    /// scan of the insert buffer.
    pub fn ids_below(&self, id: u64) -> usize {
        let merged = self.ids[..self.indexed].partition_point(|&other| other < id);
        let buffered = self.ids[self.indexed..]
            .iter()
            .filter(|&&other| other < id)
            .count();
        merged + buffered
    }

    /// Every live `(id, fingerprint)`, in slot order (merged ones by id, then the buffer in
    /// insertion order).
    pub fn entries(&self) -> Vec<(u64, u64)> {
        let mut entries = Vec::with_capacity(self.len());
        self.extend_entries(&mut entries);
        entries
    }

    /// Appends [`HammingIndex::entries`] to `out` (a merge gathers several indexes in one
    /// vector).
    pub fn extend_entries(&self, out: &mut Vec<(u64, u64)>) {
        out.extend(
            (0..self.ids.len())
                .filter(|&slot| self.is_live(slot))
                .map(|slot| (self.ids[slot], self.fingerprints[slot])),
        );
    }

    /// Appends the live ids to `ids` and their fingerprints to `fingerprints`, in the order
    /// of [`HammingIndex::entries`].
    pub fn extend_columns(&self, ids: &mut Vec<u64>, fingerprints: &mut Vec<u64>) {
        for slot in (0..self.ids.len()).filter(|&slot| self.is_live(slot)) {
            ids.push(self.ids[slot]);
            fingerprints.push(self.fingerprints[slot]);
        }
    }

    /// The index as bytes: magic `NDHX`, version, max distance, blocks, count, then `(id,
    /// fingerprint)` little-endian in slot order (live slots only), then an xxh3 checksum of
    /// all that. Tables are rebuilt on load (a sort, faster than reading them).
    pub fn save(&self) -> Vec<u8> {
        let live: Vec<usize> = (0..self.ids.len()).filter(|&s| self.is_live(s)).collect();
        let mut out = Vec::with_capacity(24 + live.len() * 16 + 8);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.max_distance.to_le_bytes());
        out.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        out.extend_from_slice(&(live.len() as u64).to_le_bytes());
        for slot in live {
            out.extend_from_slice(&self.ids[slot].to_le_bytes());
            out.extend_from_slice(&self.fingerprints[slot].to_le_bytes());
        }
        let checksum = xxhash_rust::xxh3::xxh3_64(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Reads what [`HammingIndex::save`] wrote.
    ///
    /// # Errors
    /// [`HammingError::Format`] for bytes that are not a saved index, of another version, cut
    /// short, or damaged (checksum).
    pub fn load(bytes: &[u8]) -> Result<HammingIndex, HammingError> {
        let bad = |message: String| Err(HammingError::Format(message));
        if bytes.len() < 32 || &bytes[..4] != MAGIC {
            return bad("not a neardup Hamming index (no NDHX header)".into());
        }
        let (body, tail) = bytes.split_at(bytes.len() - 8);
        let word =
            |at: usize| u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
        let long = |at: usize| {
            let mut buffer = [0u8; 8];
            buffer.copy_from_slice(&body[at..at + 8]);
            u64::from_le_bytes(buffer)
        };
        let version = word(4);
        if version != VERSION {
            return bad(format!(
                "Hamming index version {version} (this build reads {VERSION})"
            ));
        }
        let mut checksum = [0u8; 8];
        checksum.copy_from_slice(tail);
        if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(checksum) {
            return bad("damaged Hamming index: checksum mismatch".into());
        }
        let (max_distance, blocks, count) = (word(8), word(12), long(16));
        let expected = count
            .checked_mul(16)
            .and_then(|n| n.checked_add(24))
            .filter(|&n| n == body.len() as u64);
        if expected.is_none() {
            return bad(format!(
                "damaged Hamming index: {count} entries do not fit its size"
            ));
        }
        let entries: Vec<(u64, u64)> = (0..count as usize)
            .map(|i| (long(24 + 16 * i), long(32 + 16 * i)))
            .collect();
        HammingIndex::build(&entries, max_distance, Some(blocks))
            .map_err(|error| HammingError::Format(format!("damaged Hamming index: {error}")))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn brute_force_query(entries: &[(u64, u64)], fingerprint: u64, k: u32) -> Vec<(u64, u32)> {
        let mut found: Vec<(u64, u32)> = (entries.iter())
            .map(|&(id, fp)| (id, (fp ^ fingerprint).count_ones()))
            .filter(|&(_, d)| d <= k)
            .collect();
        found.sort_unstable();
        found
    }

    fn brute_force_join(entries: &[(u64, u64)], k: u32) -> Vec<(u64, u64, u32)> {
        let mut pairs = Vec::new();
        for (i, &(a, fa)) in entries.iter().enumerate() {
            for &(b, fb) in &entries[i + 1..] {
                let d = (fa ^ fb).count_ones();
                if d <= k {
                    pairs.push((a, b, d));
                }
            }
        }
        pairs
    }

    /// Fingerprints around a few centres, a few bits flipped: tight clusters, duplicates.
    fn fingerprints() -> impl Strategy<Value = Vec<u64>> {
        let centres = prop::collection::vec(any::<u64>(), 1..4);
        (
            centres,
            prop::collection::vec((0usize..4, prop::collection::vec(0u32..64, 0..7)), 0..60),
        )
            .prop_map(|(centres, members)| {
                (members.into_iter())
                    .map(|(c, bits)| {
                        bits.iter()
                            .fold(centres[c % centres.len()], |fp, &bit| fp ^ (1u64 << bit))
                    })
                    .collect()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn queries_and_joins_equal_brute_force(
            fps in fingerprints(),
            max_distance in 0u32..13,
            blocks in prop::option::of(1u32..14),
            query in any::<u64>(),
        ) {
            let entries: Vec<(u64, u64)> = fps.iter().enumerate().map(|(i, &fp)| (i as u64 * 7 + 1, fp)).collect();
            let blocks = blocks.filter(|&m| probes_per_query(m, max_distance) <= 1e5);
            let index = HammingIndex::build(&entries, max_distance, blocks).unwrap();
            for k in 0..=max_distance {
                prop_assert_eq!(index.self_join(k).unwrap(), brute_force_join(&entries, k));
                let probe = fps.first().copied().unwrap_or(query);
                for q in [query, probe, probe ^ 1] {
                    prop_assert_eq!(index.query(q, k).unwrap(), brute_force_query(&entries, q, k));
                }
            }
            prop_assert!(index.query(0, max_distance + 1).is_err());
        }

        #[test]
        fn inserts_removes_and_save_load_keep_it_exact(
            fps in fingerprints(),
            removals in prop::collection::vec(0usize..60, 0..20),
            k in 0u32..13,
        ) {
            let mut index = HammingIndex::build(&[], 12, None).unwrap();
            let mut model: Vec<(u64, u64)> = Vec::new();
            for (i, &fp) in fps.iter().enumerate() {
                index.insert(i as u64, fp).unwrap();
                model.push((i as u64, fp));
            }
            for r in removals {
                let removed = index.remove(r as u64);
                prop_assert_eq!(removed, model.iter().any(|e| e.0 == r as u64));
                model.retain(|e| e.0 != r as u64);
            }
            prop_assert_eq!(index.len(), model.len());
            let loaded = HammingIndex::load(&index.save()).unwrap();
            for candidate in [&index, &loaded] {
                prop_assert_eq!(candidate.self_join(k).unwrap(), brute_force_join(&model, k));
                for &(_, fp) in model.iter().take(3) {
                    prop_assert_eq!(candidate.query(fp, k).unwrap(), brute_force_query(&model, fp, k));
                }
            }
        }
    }

    #[test]
    fn identical_fingerprints_match_once_and_ids_are_not_overwritten() {
        let entries = [(10, 5u64), (11, 5), (12, 5)];
        let mut index = HammingIndex::build(&entries, 3, None).unwrap();
        assert_eq!(
            index.self_join(0).unwrap(),
            vec![(10, 11, 0), (10, 12, 0), (11, 12, 0)]
        );
        assert_eq!(index.insert(11, 7), Err(HammingError::DuplicateId(11)));
        assert!(HammingIndex::build(&[(1, 0), (1, 1)], 3, None).is_err());
    }

    #[test]
    fn many_inserts_merge_and_stay_exact() {
        let mut index = HammingIndex::build(&[], 3, Some(4)).unwrap();
        let mut model = Vec::new();
        let mut state = 1u64;
        for id in 0..10_000u64 {
            // A few bits around a handful of centres.
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let fp = (id % 5).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (1u64 << (state >> 58));
            index.insert(id, fp).unwrap();
            model.push((id, fp));
        }
        assert!(index.indexed > 0, "the buffer was merged");
        assert_eq!(
            index.query(model[77].1, 3).unwrap(),
            brute_force_query(&model, model[77].1, 3)
        );
    }

    #[test]
    fn damaged_or_foreign_files_are_refused() {
        let index = HammingIndex::build(&[(1, 0xFF), (2, 0xFE)], 3, None).unwrap();
        let bytes = index.save();
        assert_eq!(HammingIndex::load(&bytes).unwrap().len(), 2);
        let mut damaged = bytes.clone();
        damaged[30] ^= 1;
        assert!(HammingIndex::load(&damaged)
            .unwrap_err()
            .to_string()
            .contains("checksum"));
        assert!(HammingIndex::load(&bytes[..bytes.len() - 1]).is_err());
        assert!(HammingIndex::load(b"not an index at all, not at all..").is_err());
        let mut other_version = bytes;
        other_version[4] = 9;
        assert!(HammingIndex::load(&other_version)
            .unwrap_err()
            .to_string()
            .contains("version 9"));
    }

    /// `count` random fingerprints (splitmix64) with ids.
    fn random_entries(count: u64) -> Vec<(u64, u64)> {
        let mut state = 0x1234_5678_9abc_def0u64;
        (0..count)
            .map(|id| {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (id * 3, z ^ (z >> 31))
            })
            .collect()
    }

    #[test]
    fn a_fingerprint_costs_at_most_40_bytes() {
        let entries = random_entries(100_000);
        let mut index = HammingIndex::build(&entries, 3, None).unwrap();
        assert_eq!(index.blocks(), 4);
        let bytes = index.memory_bytes();
        assert!(bytes <= 40 * entries.len() + 4096, "{bytes} bytes");
        // Still after inserts merged into the tables and removals.
        for &(id, fingerprint) in &random_entries(120_000)[100_000..] {
            index.insert(id, fingerprint ^ 1).unwrap();
        }
        for id in 0..1000 {
            assert!(index.remove(id * 3));
        }
        let bytes = index.memory_bytes();
        assert!(
            bytes <= 40 * index.len() + 4096 + 16 * 20_000,
            "{bytes} bytes"
        );
        assert_eq!(index.query(entries[5000].1, 3).unwrap(), vec![(15_000, 0)]);
    }

    #[test]
    fn a_version_1_file_written_by_hand_still_loads() {
        // NDHX v1 as the first release wrote it: header, (id, fingerprint) in slot order
        // (insertion order then, not sorted by id), xxh3 of all that.
        let mut bytes = b"NDHX".to_vec();
        for word in [1u32, 3, 2] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes.extend_from_slice(&3u64.to_le_bytes());
        for (id, fingerprint) in [(9u64, 0xF0u64), (4, 0xF1), (7, 0xFFFF_0000)] {
            bytes.extend_from_slice(&id.to_le_bytes());
            bytes.extend_from_slice(&fingerprint.to_le_bytes());
        }
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        let index = HammingIndex::load(&bytes).unwrap();
        assert_eq!(
            (index.len(), index.max_distance(), index.blocks()),
            (3, 3, 2)
        );
        assert_eq!(index.query(0xF0, 1).unwrap(), vec![(4, 1), (9, 0)]);
        assert_eq!(index.self_join(3).unwrap(), vec![(4, 9, 1)]);
    }

    #[test]
    fn a_budgeted_query_reads_a_flooded_value_up_to_the_limit() {
        // 10,000 copies of one fingerprint and one other within the distance.
        let mut entries: Vec<(u64, u64)> = (0..10_000u64).map(|id| (id, 0xABCD)).collect();
        entries.push((10_000, 0xABCF));
        let index = HammingIndex::build_dense(&entries, 6, None).unwrap();
        assert_eq!(index.query(0xABCD, 6).unwrap().len(), 10_001);
        let (found, unread) = index.query_within(0xABCD, 6, 100).unwrap();
        // The lowest ids of the flooded value, and what was left unread counted.
        assert!(found.len() <= 101, "{}", found.len());
        assert_eq!(
            &found[..100],
            &entries[..100].iter().map(|e| (e.0, 0)).collect::<Vec<_>>()[..]
        );
        assert!(unread >= 10_000 - 100, "{unread}");
        // A budget larger than the index reads everything.
        let (all, unread) = index.query_within(0xABCD, 6, 20_000).unwrap();
        assert_eq!((all.len(), unread), (10_001, 0));
    }

    /// Fingerprints sharing a block value by chance (far from the query) do not use up the
    /// budget: only those within the distance do, so a large index's crowded values are
    /// read whole and the one near fingerprint behind them is found.
    #[test]
    fn a_budgeted_query_reads_past_unrelated_fingerprints_of_a_crowded_value() {
        // 2,000 fingerprints sharing the low 16 bits with the query, at least 8 bits away.
        let mut entries: Vec<(u64, u64)> = (0..2_000u64)
            .map(|id| (id, 0xABCD | (0xFF00_0000_0000_0000 ^ (id << 16))))
            .collect();
        entries.push((2_000, 0xABCD | 0b111 << 40));
        let index = HammingIndex::build_dense(&entries, 3, Some(4)).unwrap();
        let (found, unread) = index.query_within(0xABCD, 3, 100).unwrap();
        assert_eq!((found, unread), (vec![(2_000, 3)], 0));
        // The read bound still holds: 64 x 10 reads per value.
        let (found, unread) = index.query_within(0xABCD, 3, 10).unwrap();
        assert!(found.is_empty() && unread > 0, "{found:?} {unread}");
    }

    /// Columns build the same index as pairs, sorted or not; a repeated id and columns of
    /// different lengths are refused.
    #[test]
    fn dense_indexes_from_columns_answer_as_from_pairs() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut entries: Vec<(u64, u64)> = (0..5000u64)
            .map(|id| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (id * 3, state)
            })
            .collect();
        let reference = HammingIndex::build_dense(&entries, 3, Some(4)).unwrap();
        entries.swap(10, 4000);
        for entries in [&entries[..], &reference.entries()[..]] {
            let (ids, fingerprints) = entries.iter().copied().unzip();
            let index = HammingIndex::build_dense_columns(ids, fingerprints, 3, Some(4)).unwrap();
            assert_eq!(index.entries(), reference.entries());
            for &(_, fingerprint) in entries.iter().step_by(97) {
                let query = fingerprint ^ 0b1001;
                assert_eq!(index.query(query, 3), reference.query(query, 3));
            }
        }
        let repeated = HammingIndex::build_dense_columns(vec![1, 1], vec![5, 6], 3, None);
        assert_eq!(repeated.unwrap_err(), HammingError::DuplicateId(1));
        let uneven = HammingIndex::build_dense_columns(vec![1, 2], vec![5], 3, None);
        assert!(matches!(uneven, Err(HammingError::Parameter(_))));
    }

    #[test]
    fn blocks_follow_the_index_size() {
        assert_eq!(HammingIndex::blocks_for(3, 50_000_000), 2);
        assert_eq!(HammingIndex::blocks_for(10, 50_000_000), 3);
        assert!(HammingIndex::build(&[], 12, Some(1)).is_err());
        assert_eq!(HammingIndex::blocks_for(3, 1000), 4);
        assert_eq!(HammingIndex::blocks_for(0, 1000), 1);
        let covered: u32 = layout(7).iter().map(|b| b.width).sum();
        assert_eq!(covered, 64);
    }
}
