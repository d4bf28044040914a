//! Batch Hamming joins: the all-pairs self-join behind [`HammingIndex::self_join`], its
//! 128-bit form [`self_join_128`], and [`HammingJoin`], the candidate generator with a
//! radius per document.
//!
//! # How
//!
//! Multi-index hashing as a join: the 64 bits are cut into `m` blocks, and two fingerprints
//! within `k` agree on some block up to `r = floor(k / m)` bits. Per block, the fingerprints
//! are grouped by block value (a counting sort when the block is narrow, one pass over a
//! `2^width` offset array; a sort otherwise), each bucket is joined with itself and with
//! every bucket whose value is within `r` of its own, and a pair is kept only by the first
//! block on which the two are within `r`, so it is reported once without a set of seen pairs.
//! The members of a bucket are stored with their fingerprints, so a bucket is compared in
//! cache. `m` is chosen by estimated work (see [`join_blocks`]): `k + 1` radius-0 blocks for
//! small `k` (Manku's tables), fewer, wider blocks probed within a radius for large `k`,
//! where 6-bit radius-0 blocks would make buckets of `n / 64`.
//!
//! [`HammingIndex::self_join`]: crate::HammingIndex::self_join

use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use crate::generators::CandidateGenerator;
use crate::hamming_blocks::{binomial, for_each_nearest_first, layout, Block, HammingError};
use crate::key_table::{partner_limit, BucketStats, CandidateLimits};

/// A member reads at most this many times the bucket cap of earlier fingerprints per block,
/// over all the buckets within the radius (nearest block values first): the cap bounds
/// each bucket, but at a large distance a block has hundreds of neighbouring values, and a
/// template flood fills them all (a 100,000-notice flood read 697 capped buckets per member
/// and block).
pub const CAPS_READ_PER_BLOCK: usize = 4;

/// The most members of a bucket one task reads (see [`Buckets::tasks`]).
const MEMBERS_PER_TASK: usize = 256;

/// The number of blocks for a join at distance `k` of `n` fingerprints: the `m` from 1 to
/// `k + 1` with the least estimated work, `m` x (grouping the `n` fingerprints + looking up
/// the neighbour values of every bucket + comparing the pairs of neighbouring buckets).
fn join_blocks(k: u32, n: usize) -> u32 {
    let n = n.max(2) as f64;
    let cost = |m: u32| {
        let width = 64 / m;
        let radius = (k / m).min(width);
        let neighbours: f64 = (0..=radius).map(|i| binomial(width, i)).sum();
        let values = 2f64.powi(width as i32);
        let lookups = n.min(values) * neighbours;
        let comparisons = n * n * neighbours / values / 2.0;
        f64::from(m) * (2.0 * n + 3.0 * lookups + comparisons)
    };
    (1..=(k + 1).min(64))
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(1)
}

/// One block's buckets: the positions sorted by block value then position, with their
/// fingerprints alongside, and a way from a block value to its bucket.
struct Buckets {
    /// Distinct block values, and where each bucket starts (one more start at the end).
    values: Vec<u64>,
    starts: Vec<u32>,
    positions: Vec<u32>,
    fingerprints: Vec<u64>,
    /// `offsets[v]..offsets[v + 1]` is the bucket of value `v` (counting sort), or empty
    /// when the block is too wide (binary search in `values`).
    offsets: Vec<u32>,
}

impl Buckets {
    fn new(block: Block, fingerprints: &[u64]) -> Buckets {
        // Offsets of up to 2^22 values (16 MB) make a lookup one read instead of a binary
        // search, worth it when the fingerprints are not much sparser than the values.
        let narrow = block.width <= 22 && (1usize << block.width) <= 16 * fingerprints.len();
        if narrow {
            Buckets::by_counting(block, fingerprints)
        } else {
            Buckets::by_sorting(block, fingerprints)
        }
    }

    /// A counting sort by block value: stable, so each bucket is in position order.
    fn by_counting(block: Block, fingerprints: &[u64]) -> Buckets {
        let size = 1usize << block.width;
        let mut offsets = vec![0u32; size + 1];
        for &fingerprint in fingerprints {
            offsets[block.value(fingerprint) as usize + 1] += 1;
        }
        for value in 0..size {
            offsets[value + 1] += offsets[value];
        }
        let mut next = offsets[..size].to_vec();
        let mut positions = vec![0u32; fingerprints.len()];
        let mut sorted = vec![0u64; fingerprints.len()];
        for (position, &fingerprint) in fingerprints.iter().enumerate() {
            let at = &mut next[block.value(fingerprint) as usize];
            positions[*at as usize] = position as u32;
            sorted[*at as usize] = fingerprint;
            *at += 1;
        }
        let (mut values, mut starts) = (Vec::new(), Vec::new());
        for value in 0..size {
            if offsets[value + 1] > offsets[value] {
                values.push(value as u64);
                starts.push(offsets[value]);
            }
        }
        starts.push(fingerprints.len() as u32);
        Buckets {
            values,
            starts,
            positions,
            fingerprints: sorted,
            offsets,
        }
    }

    fn by_sorting(block: Block, fingerprints: &[u64]) -> Buckets {
        let mut keyed: Vec<(u64, u32)> = (fingerprints.iter().enumerate())
            .map(|(position, &fingerprint)| (block.value(fingerprint), position as u32))
            .collect();
        keyed.par_sort_unstable();
        let (mut values, mut starts) = (Vec::new(), Vec::new());
        for (at, entry) in keyed.iter().enumerate() {
            if values.last() != Some(&entry.0) {
                values.push(entry.0);
                starts.push(at as u32);
            }
        }
        starts.push(keyed.len() as u32);
        Buckets {
            values,
            starts,
            positions: keyed.iter().map(|e| e.1).collect(),
            fingerprints: keyed.iter().map(|e| fingerprints[e.1 as usize]).collect(),
            offsets: Vec::new(),
        }
    }

    /// The work of a block: each bucket's members (positions in the sorted order) in parts of
    /// at most [`MEMBERS_PER_TASK`], so that the one bucket of a flood is read by every
    /// thread.
    fn tasks(&self) -> Vec<(u32, std::ops::Range<usize>)> {
        let mut tasks = Vec::with_capacity(self.values.len());
        for (bucket, bounds) in self.starts.windows(2).enumerate() {
            let (start, end) = (bounds[0] as usize, bounds[1] as usize);
            for from in (start..end).step_by(MEMBERS_PER_TASK) {
                tasks.push((bucket as u32, from..end.min(from + MEMBERS_PER_TASK)));
            }
        }
        tasks
    }

    /// The range of the bucket of `value` (empty when no fingerprint has it).
    fn range_of(&self, value: u64) -> std::ops::Range<usize> {
        if !self.offsets.is_empty() {
            let value = value as usize;
            return self.offsets[value] as usize..self.offsets[value + 1] as usize;
        }
        match self.values.binary_search(&value) {
            Ok(bucket) => self.starts[bucket] as usize..self.starts[bucket + 1] as usize,
            Err(_) => 0..0,
        }
    }

    fn stats(&self, cap: usize) -> BucketStats {
        let mut stats = BucketStats::default();
        for bounds in self.starts.windows(2) {
            let size = (bounds[1] - bounds[0]) as usize;
            if size > 1 {
                stats.shared_buckets += 1;
                stats.largest_bucket = stats.largest_bucket.max(size as u64);
                stats.capped_buckets += u64::from(size > cap);
            }
        }
        stats
    }
}

/// What a join compares: the fingerprints by position (lower first), the distance, the
/// bucket cap, and the most partners within the distance a member reads per block (set
/// when one stopped there); the join stops reading once `aborted` is set.
#[derive(Clone, Copy)]
struct Scan<'a> {
    fingerprints: &'a [u64],
    k: u32,
    cap: usize,
    limit: usize,
    /// Read for the `limit` nearest partners of each document, kept in its heap (see
    /// [`BucketJoin::bucket`]), rather than visit pairs and stop after `limit` partners in
    /// the block.
    nearest: Option<Nearest<'a>>,
    stopped: &'a AtomicBool,
    aborted: &'a AtomicBool,
    /// Fingerprint comparisons made, summed over the members and blocks.
    comparisons: &'a AtomicU64,
}

/// A document's nearest partners: `(distance, partner rank)`, the worst on top.
type NearestHeap = Mutex<BinaryHeap<(u32, u32)>>;

/// The nearest partners of every document over the blocks and radius passes: a heap per
/// document by rank, of `(distance, partner rank)`, at most the limit, the worst on top;
/// the ranks and radii of the pass's positions.
#[derive(Clone, Copy)]
struct Nearest<'a> {
    heaps: &'a [NearestHeap],
    ranks: &'a [u32],
    radii: &'a [u32],
}

impl Nearest<'_> {
    /// The heap of the document at `position`, taken out (a block's bucket is the only
    /// reader of its members' heaps while the blocks are read one after the other).
    fn take(&self, position: u32) -> BinaryHeap<(u32, u32)> {
        let heap = &self.heaps[self.ranks[position as usize] as usize];
        std::mem::take(&mut *heap.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn put(&self, position: u32, kept: BinaryHeap<(u32, u32)>) {
        let heap = &self.heaps[self.ranks[position as usize] as usize];
        *heap.lock().unwrap_or_else(PoisonError::into_inner) = kept;
    }
}

impl Scan<'_> {
    /// Calls `visit(accumulator, a, b, distance)` for every pair of positions `a < b` within
    /// `k` found in its first block within the radius, `b` meeting in each bucket within the
    /// radius of its own the members before it among the first `cap`; a member stops reading
    /// a block after `limit` partners within `k` (over the buckets within the radius).
    /// Returns the accumulators and the statistics of the buckets.
    fn run<R: Send>(
        self,
        init: impl Fn() -> R + Send + Sync,
        visit: impl Fn(&mut R, u32, u32, u32) + Send + Sync,
    ) -> (Vec<R>, BucketStats) {
        let m = join_blocks(self.k, self.fingerprints.len());
        let blocks = layout(m);
        let radius = self.k / m;
        let one_block = |(index, &block): (usize, &Block)| {
            let buckets = Buckets::new(block, self.fingerprints);
            let found = (buckets.tasks().into_par_iter())
                .with_min_len(16)
                .fold(&init, |mut accumulator, (bucket, members)| {
                    if self.aborted.load(Ordering::Relaxed) {
                        return accumulator;
                    }
                    let join = BucketJoin {
                        scan: self,
                        blocks: &blocks,
                        index,
                        radius,
                        buckets: &buckets,
                    };
                    join.bucket(bucket as usize, members, &mut accumulator, &visit);
                    accumulator
                })
                .collect();
            (found, buckets.stats(self.cap))
        };
        // The heaps of the nearest partners are read and written by one block at a time.
        let per_block: Vec<(Vec<R>, BucketStats)> = if self.nearest.is_some() {
            blocks.iter().enumerate().map(one_block).collect()
        } else {
            blocks.par_iter().enumerate().map(one_block).collect()
        };
        let mut stats = BucketStats::default();
        let mut accumulators = Vec::new();
        for (found, block_stats) in per_block {
            accumulators.extend(found);
            stats.shared_buckets += block_stats.shared_buckets;
            stats.largest_bucket = stats.largest_bucket.max(block_stats.largest_bucket);
            stats.capped_buckets += block_stats.capped_buckets;
        }
        (accumulators, stats)
    }
}

/// The join of the buckets of one block.
struct BucketJoin<'a> {
    scan: Scan<'a>,
    blocks: &'a [Block],
    index: usize,
    radius: u32,
    buckets: &'a Buckets,
}

impl BucketJoin<'_> {
    /// Joins the members of bucket number `bucket` with the members before them of every
    /// bucket within the radius (its own included).
    fn bucket<R>(
        &self,
        bucket: usize,
        members: std::ops::Range<usize>,
        accumulator: &mut R,
        visit: &impl Fn(&mut R, u32, u32, u32),
    ) {
        let buckets = self.buckets;
        let bucket_range = buckets.starts[bucket] as usize..buckets.starts[bucket + 1] as usize;
        let own = members;
        let width = self.blocks[self.index].width;
        // Partners within the distance each member has seen in this block, over all the
        // buckets within the radius (nearest block values first, in a fixed order, so the
        // result does not depend on the threads): a member of a flood stops after `limit`
        // of them in the block, not after `limit` in each of the hundreds of neighbouring
        // buckets. Whatever it finds, a member reads at most `CAPS_READ_PER_BLOCK` caps of
        // earlier members in the block.
        //
        // Reading for the nearest partners (`nearest`), a member keeps the `limit` nearest
        // partners (by distance, then rank) in its heap, which it carries from block to
        // block and pass to pass: a pair is offered to it once, in the first block on which
        // the two are within the radius and in the pass of their smaller radius, and a
        // partner no nearer than the worst of a full heap is passed over. The heap ends as
        // the `limit` nearest of every partner read, whatever the order of reading, so that
        // a crowd of a template's fillings, all within the distance, never cuts a
        // document's own copy in favour of a better-ranked filling further away; and a
        // flood holds `limit` partners a document, not those of every block.
        let mut seen = vec![0usize; own.len()];
        let mut read = vec![0usize; own.len()];
        let most_reads = self.scan.cap.saturating_mul(CAPS_READ_PER_BLOCK);
        let mut kept: Vec<BinaryHeap<(u32, u32)>> = match self.scan.nearest {
            Some(nearest) => (own.clone())
                .map(|at| nearest.take(buckets.positions[at]))
                .collect(),
            None => Vec::new(),
        };
        let mut comparisons = 0u64;
        for_each_nearest_first(buckets.values[bucket], width, self.radius, &mut |value| {
            let other = buckets.range_of(value);
            let anchors = other.start..other.end.min(other.start.saturating_add(self.scan.cap));
            if anchors.is_empty() || (bucket_range.len() == 1 && anchors == bucket_range) {
                return;
            }
            let anchor_positions = &buckets.positions[anchors.clone()];
            let anchor_fingerprints = &buckets.fingerprints[anchors];
            for at in own.clone() {
                if self.scan.aborted.load(Ordering::Relaxed) {
                    return;
                }
                let (b, fb) = (buckets.positions[at], buckets.fingerprints[at]);
                let index = at - own.start;
                // Partners within the distance seen, kept here or by an earlier block.
                if (self.scan.nearest.is_none() && seen[index] >= self.scan.limit)
                    || read[index] >= most_reads
                {
                    continue;
                }
                let earlier = anchor_positions.partition_point(|&a| a < b);
                let readable = earlier.min(most_reads - read[index]);
                read[index] += readable;
                comparisons += readable as u64;
                let anchors = anchor_positions[..readable].iter();
                for (&a, &fa) in anchors.zip(anchor_fingerprints) {
                    let distance = (fa ^ fb).count_ones();
                    if distance > self.scan.k {
                        continue;
                    }
                    if let Some(nearest) = self.scan.nearest {
                        self.offer(nearest, &mut kept[index], (a, fa), (b, fb), distance);
                        continue;
                    }
                    if self.first_block(fa, fb) == self.index {
                        visit(accumulator, a, b, distance);
                    }
                    seen[index] += 1;
                    if seen[index] == self.scan.limit {
                        self.scan.stopped.store(true, Ordering::Relaxed);
                        break;
                    }
                }
            }
        });
        if let Some(nearest) = self.scan.nearest {
            for (at, heap) in own.zip(kept) {
                nearest.put(buckets.positions[at], heap);
            }
        }
        self.scan
            .comparisons
            .fetch_add(comparisons, Ordering::Relaxed);
    }

    /// Offers partner `a` of `b` to `b`'s heap of nearest partners: kept when nearer than
    /// the worst of a full heap, and when this block and pass are the pair's own.
    fn offer(
        &self,
        nearest: Nearest<'_>,
        kept: &mut BinaryHeap<(u32, u32)>,
        (a, fa): (u32, u64),
        (b, fb): (u32, u64),
        distance: u32,
    ) {
        let entry = (distance, nearest.ranks[a as usize]);
        let full = kept.len() >= self.scan.limit;
        if full && kept.peek().is_some_and(|&worst| entry >= worst) {
            return;
        }
        let pass = nearest.radii[a as usize].min(nearest.radii[b as usize]);
        if pass != self.scan.k || self.first_block(fa, fb) != self.index {
            return;
        }
        if full {
            kept.pop();
        }
        kept.push(entry);
    }

    /// The first block on which `a` and `b` are within the radius.
    fn first_block(&self, a: u64, b: u64) -> usize {
        (self.blocks.iter())
            .position(|block| (block.value(a) ^ block.value(b)).count_ones() <= self.radius)
            .unwrap_or(usize::MAX)
    }
}

/// Every pair of positions `(a, b, distance)` of 64-bit fingerprints, `a < b`, within `k`
/// (any `k`; 64 and above pair everything), sorted, each once; exact. The batch join behind
/// [`HammingIndex::self_join`](crate::HammingIndex::self_join), without building an index.
pub fn self_join_64(fingerprints: &[u64], k: u32) -> Vec<(u32, u32, u32)> {
    self_join_64_within(fingerprints, k, u64::MAX).unwrap_or_default()
}

/// [`self_join_64`] stopping as soon as it has found more than `max_pairs` pairs (`None`
/// then): at most `max_pairs` pairs (and one more per thread) are ever held, so a file of
/// near-identical fingerprints is refused in bounded memory instead of filling it.
pub fn self_join_64_within(
    fingerprints: &[u64],
    k: u32,
    max_pairs: u64,
) -> Option<Vec<(u32, u32, u32)>> {
    let (aborted, count) = (AtomicBool::new(false), AtomicU64::new(0));
    let scan = Scan {
        fingerprints,
        k: k.min(64),
        cap: usize::MAX,
        limit: usize::MAX,
        nearest: None,
        stopped: &AtomicBool::new(false),
        aborted: &aborted,
        comparisons: &AtomicU64::new(0),
    };
    let (found, _) = scan.run(Vec::new, |found: &mut Vec<(u32, u32, u32)>, a, b, d| {
        if count.fetch_add(1, Ordering::Relaxed) >= max_pairs {
            aborted.store(true, Ordering::Relaxed);
            return;
        }
        found.push((a, b, d));
    });
    if aborted.into_inner() {
        return None;
    }
    let mut pairs: Vec<(u32, u32, u32)> = found.into_iter().flatten().collect();
    pairs.par_sort_unstable();
    Some(pairs)
}

/// Every pair of positions `(a, b, distance)` of 128-bit fingerprints, `a < b`, within `k`,
/// sorted, each once; exact.
///
/// Two fingerprints within `k` are within `floor(k / 2)` on one of their 64-bit halves
/// (pigeonhole): each half is joined at that distance, the full distance is checked, and a
/// pair found on the high half is kept only if its low halves are farther apart (else the low
/// half reported it).
///
/// # Errors
/// [`HammingError::Parameter`] for more than `u32::MAX` fingerprints (positions are `u32`).
pub fn self_join_128(fingerprints: &[u128], k: u32) -> Result<Vec<(u32, u32, u32)>, HammingError> {
    Ok(self_join_128_within(fingerprints, k, u64::MAX)?.unwrap_or_default())
}

/// A pair of positions `a < b` and their Hamming distance.
pub type DistancePair = (u32, u32, u32);

/// [`self_join_128`] stopping as soon as either half's join has found more than
/// `max_pairs` candidate pairs (`Ok(None)` then; see [`self_join_64_within`]).
///
/// # Errors
/// As [`self_join_128`].
pub fn self_join_128_within(
    fingerprints: &[u128],
    k: u32,
    max_pairs: u64,
) -> Result<Option<Vec<DistancePair>>, HammingError> {
    if u32::try_from(fingerprints.len()).is_err() {
        return Err(HammingError::Parameter(format!(
            "{} fingerprints (at most {} can be joined)",
            fingerprints.len(),
            u32::MAX
        )));
    }
    let half = k.min(128) / 2;
    let low: Vec<u64> = fingerprints.iter().map(|&f| f as u64).collect();
    let high: Vec<u64> = fingerprints.iter().map(|&f| (f >> 64) as u64).collect();
    let full = |a: u32, b: u32| (fingerprints[a as usize] ^ fingerprints[b as usize]).count_ones();
    let Some(low_pairs) = self_join_64_within(&low, half, max_pairs) else {
        return Ok(None);
    };
    let mut pairs: Vec<(u32, u32, u32)> = (low_pairs.into_iter())
        .map(|(a, b, _)| (a, b, full(a, b)))
        .filter(|&(_, _, distance)| distance <= k)
        .collect();
    let Some(high_pairs) = self_join_64_within(&high, half, max_pairs) else {
        return Ok(None);
    };
    for (a, b, high_distance) in high_pairs {
        let distance = full(a, b);
        if distance <= k && distance - high_distance > half {
            pairs.push((a, b, distance));
        }
    }
    pairs.par_sort_unstable();
    Ok(Some(pairs))
}

/// Documents within a Hamming distance of their own (`neardup_core::Join::Hamming` with a
/// radius per document): `(a, b)` is a pair when the fingerprints of `a` and `b` differ in at
/// most `min(radius_a, radius_b)` bits. The engine gives short texts a larger radius; the
/// stricter of the two applies to a pair.
///
/// For every distinct radius `k`, largest first, the documents of radius at least `k` are
/// self-joined at distance `k` (see the module docs of the join) and the pairs whose smaller
/// radius is `k` are kept (the others belong to a smaller radius), so each pair is found
/// once. Exact (no false negatives or positives) whenever no bucket exceeds
/// [`CandidateLimits::bucket_cap`] and no member has more than [`CAPS_READ_PER_BLOCK`]
/// `x bucket_cap` earlier members in the buckets within the radius of a block: in a larger
/// bucket a member meets the `bucket_cap` best-ranked members only (`capped_buckets` counts
/// them), and it reads the buckets nearest its block value first and stops at that many, so
/// a flood of near-identical fingerprints costs at most `CAPS_READ_PER_BLOCK x bucket_cap`
/// comparisons per member and block, whatever the number of neighbouring buckets.
///
/// Then the candidate budget applies as in the key table, over the pairs found, except that
/// a document keeps its *nearest* earlier partners (by distance, then rank) up to the
/// partner limit when the pairs exceed `documents x candidate_budget`: in a template flood
/// every filling is within the distance, and ranks alone would cut a notice's own copies
/// for better-ranked fillings. A first pass counts each document's earlier partners, a
/// member reading a bucket only until `4 x candidate_budget` partners within its distance
/// (deeper only if the level reaches that), the limit is set from the counts, and a second
/// pass reads every member under the limits above, offering each pair once to its worse
/// document's heap of nearest partners, which keeps the limit (blocks are read one after
/// the other, so a document's heap is in one place; memory is the limit a document,
/// whatever the flood).
/// Below the limit nothing is lost; the level is exact unless a member stopped reading
/// (then its count is a lower bound).
///
/// Statistics: `shared_buckets`, `largest_bucket` and `capped_buckets` over the blocks of
/// every radius pass (a bucket is the documents sharing one block value); `raw_pairs` is the
/// pairs found under the cap (counted, so a lower bound when members stopped reading);
/// `budget_hits` and `partner_limit` as in the key table; `comparisons` the fingerprints
/// compared over both passes.
#[derive(Debug, Clone, Default)]
pub struct HammingJoin {
    entries: Vec<(u32, u64, u32)>,
}

impl HammingJoin {
    /// A join of `(rank, fingerprint, radius)` per document: ranks distinct, lower is better.
    /// Radii above 64 count as 64 (every pair).
    pub fn new(entries: Vec<(u32, u64, u32)>) -> HammingJoin {
        HammingJoin { entries }
    }

    /// The documents of radius at least `k`, in rank order: ranks, fingerprints, radii.
    fn at_least(&self, k: u32) -> (Vec<u32>, Vec<u64>, Vec<u32>) {
        let members = self.entries.iter().filter(|e| e.2 >= k);
        let ranks = members.clone().map(|e| e.0).collect();
        let fingerprints = members.clone().map(|e| e.1).collect();
        (ranks, fingerprints, members.map(|e| e.2).collect())
    }

    /// The distinct radii, largest first.
    fn radii(&self) -> Vec<u32> {
        let mut radii: Vec<u32> = self.entries.iter().map(|e| e.2).collect();
        radii.sort_unstable_by(|a, b| b.cmp(a));
        radii.dedup();
        radii
    }

    /// Runs `visit(accumulator, rank_a, rank_b, distance)` over every pair of every radius,
    /// under the cap, a member reading at most `limit` partners per block (`stopped` set
    /// when one stopped there), or, given the heaps of the nearest partners by rank, keeps
    /// each document's `limit` nearest partners in its heap instead (no visit); the
    /// accumulators and the statistics of the buckets.
    fn scan_all<R: Send>(
        &self,
        cap: usize,
        (limit, stopped, heaps): (usize, &AtomicBool, Option<&[NearestHeap]>),
        init: impl Fn() -> R + Send + Sync,
        visit: impl Fn(&mut R, u32, u32, u32) + Send + Sync,
    ) -> (Vec<R>, BucketStats) {
        let mut stats = BucketStats::default();
        let mut accumulators = Vec::new();
        let comparisons = AtomicU64::new(0);
        for k in self.radii() {
            let (ranks, fingerprints, radii) = self.at_least(k);
            let scan = Scan {
                fingerprints: &fingerprints,
                k,
                cap,
                limit,
                nearest: heaps.map(|heaps| Nearest {
                    heaps,
                    ranks: &ranks,
                    radii: &radii,
                }),
                stopped,
                aborted: &AtomicBool::new(false),
                comparisons: &comparisons,
            };
            let (found, pass_stats) = scan.run(&init, |accumulator, a, b, distance| {
                if radii[a as usize].min(radii[b as usize]) == k {
                    visit(accumulator, ranks[a as usize], ranks[b as usize], distance);
                }
            });
            accumulators.extend(found);
            stats.shared_buckets += pass_stats.shared_buckets;
            stats.largest_bucket = stats.largest_bucket.max(pass_stats.largest_bucket);
            stats.capped_buckets += pass_stats.capped_buckets;
        }
        stats.comparisons = comparisons.into_inner();
        (accumulators, stats)
    }

    /// Per document, the number of earlier partners found under the cap, a member reading at
    /// most `truncate` partners per block; true when one stopped (then the counts of such
    /// members are lower bounds); the comparisons made.
    fn partner_counts(
        &self,
        cap: usize,
        documents: usize,
        truncate: usize,
    ) -> (Vec<u64>, bool, u64) {
        let counts: Vec<AtomicU64> = (0..documents).map(|_| AtomicU64::new(0)).collect();
        let stopped = AtomicBool::new(false);
        let (_, stats) = self.scan_all(
            cap,
            (truncate, &stopped, None),
            || (),
            |_, _, b, _| {
                counts[b as usize].fetch_add(1, Ordering::Relaxed);
            },
        );
        let counts = counts.into_iter().map(AtomicU64::into_inner).collect();
        (counts, stopped.into_inner(), stats.comparisons)
    }

    /// The partner limit of the candidate budget over the pairs found under the cap
    /// (`u64::MAX` when they fit), the documents over it, the pairs counted, and the
    /// comparisons made.
    ///
    /// A member stops counting in a block after `truncate` partners within its distance:
    /// the water level `L` only sees counts up to `L` (`sum(min(count, L))`), so a level
    /// below `truncate` is the one of the full counts, up to the members that stopped (who
    /// have at least `truncate` partners there, some of them counted by another block). When
    /// the level is not below `truncate`, counting starts again with a larger one. A flood
    /// is thus read a few times the budget deep per member and block, not `bucket_cap` per bucket.
    fn budget(&self, limits: CandidateLimits, documents: usize) -> (u64, u64, u64, u64) {
        let budget = (documents as u64).saturating_mul(limits.candidate_budget as u64);
        let mut truncate = limits.candidate_budget.saturating_mul(4).max(64);
        let mut comparisons = 0;
        loop {
            let (counts, stopped, made) =
                self.partner_counts(limits.bucket_cap, documents, truncate);
            comparisons += made;
            let limit = partner_limit(&counts, budget);
            if !stopped || limit < truncate as u64 || truncate == usize::MAX {
                let hits = counts.iter().filter(|&&count| count > limit).count() as u64;
                return (limit, hits, counts.iter().sum(), comparisons);
            }
            truncate = truncate.saturating_mul(16);
        }
    }
}

impl CandidateGenerator for HammingJoin {
    fn candidate_pairs(mut self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        self.entries.par_sort_unstable_by_key(|e| e.0);
        for entry in &mut self.entries {
            entry.2 = entry.2.min(64);
        }
        let documents = self.entries.last().map_or(0, |e| e.0 as usize + 1);
        let cap = limits.bucket_cap;
        let (mut limit, mut hits, mut raw, mut counting) = (u64::MAX, 0, None, 0);
        if limits.candidate_budget != usize::MAX {
            let counted;
            (limit, hits, counted, counting) = self.budget(limits, documents);
            raw = Some(counted);
        }
        let per_member = usize::try_from(limit).unwrap_or(usize::MAX);
        let stopped = AtomicBool::new(false);
        let (mut pairs, mut stats) = if per_member == usize::MAX {
            // Under the budget: every pair found.
            let (found, stats) = self.scan_all(
                cap,
                (per_member, &stopped, None),
                Vec::new,
                |found, a, b, _| found.push((a, b)),
            );
            (found.into_iter().flatten().collect::<Vec<_>>(), stats)
        } else {
            // Each document keeps its nearest partners up to the limit (by distance, then
            // rank) in its heap.
            let heaps: Vec<NearestHeap> = (0..documents).map(|_| Mutex::default()).collect();
            let reading = (per_member, &stopped, Some(heaps.as_slice()));
            let (_, stats) = self.scan_all(cap, reading, || (), |_, _, _, _| {});
            let pairs = (heaps.into_par_iter().enumerate())
                .flat_map_iter(|(b, heap)| {
                    let heap = heap.into_inner().unwrap_or_else(PoisonError::into_inner);
                    heap.into_iter().map(move |(_, a)| (a, b as u32))
                })
                .collect();
            (pairs, stats)
        };
        // When the budget cut in, counting stopped early: the pairs counted are a lower bound.
        stats.raw_pairs = raw.unwrap_or(0).max(pairs.len() as u64);
        pairs.par_sort_unstable();
        stats.budget_hits = hits;
        stats.partner_limit = limit;
        stats.comparisons += counting;
        (pairs, stats)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::DEFAULT_CANDIDATE_BUDGET;

    fn brute_force(fingerprints: &[u64], k: u32) -> Vec<(u32, u32, u32)> {
        let mut pairs = Vec::new();
        for (a, &fa) in fingerprints.iter().enumerate() {
            for (b, &fb) in fingerprints.iter().enumerate().skip(a + 1) {
                let distance = (fa ^ fb).count_ones();
                if distance <= k {
                    pairs.push((a as u32, b as u32, distance));
                }
            }
        }
        pairs
    }

    fn brute_force_radii(entries: &[(u32, u64, u32)]) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for x in entries {
            for y in entries {
                let limit = x.2.min(y.2);
                if x.0 < y.0 && (x.1 ^ y.1).count_ones() <= limit {
                    pairs.push((x.0, y.0));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    /// Adversarial sets: one value repeated, tight clusters, a few varying bits, random.
    fn fingerprints() -> impl Strategy<Value = Vec<u64>> {
        let clusters = (
            prop::collection::vec(any::<u64>(), 1..4),
            prop::collection::vec((0usize..4, prop::collection::vec(0u32..64, 0..8)), 0..80),
        )
            .prop_map(|(centres, members)| {
                (members.into_iter())
                    .map(|(c, bits)| {
                        bits.iter()
                            .fold(centres[c % centres.len()], |fp, &bit| fp ^ (1u64 << bit))
                    })
                    .collect::<Vec<u64>>()
            });
        let few_bits = (
            any::<u64>(),
            prop::collection::vec(0u64..16, 0..80),
            0u32..60,
        )
            .prop_map(|(base, low, shift)| low.iter().map(|&v| base ^ (v << shift)).collect());
        let identical = (any::<u64>(), 0usize..60).prop_map(|(fp, n)| vec![fp; n]);
        prop_oneof![
            clusters,
            few_bits,
            identical,
            prop::collection::vec(any::<u64>(), 0..80)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn joins_equal_brute_force(fps in fingerprints(), k in 0u32..=12) {
            prop_assert_eq!(self_join_64(&fps, k), brute_force(&fps, k));
        }

        #[test]
        fn budgeted_joins_are_whole_or_refused(
            fps in fingerprints(),
            k in 0u32..=12,
            max_pairs in 0u64..40,
        ) {
            let expected = brute_force(&fps, k);
            let want = (expected.len() as u64 <= max_pairs).then_some(expected);
            prop_assert_eq!(self_join_64_within(&fps, k, max_pairs), want.clone());
            let wide: Vec<u128> = fps.iter().map(|&f| u128::from(f)).collect();
            let found = self_join_128_within(&wide, k, max_pairs).unwrap();
            // The halves' candidates count against the budget: refused at least as often.
            if let Some(pairs) = found {
                prop_assert_eq!(Some(pairs), want);
            }
        }

        #[test]
        fn joins_of_128_bits_equal_brute_force(
            halves in (fingerprints(), fingerprints()),
            k in 0u32..=24,
        ) {
            let count = halves.0.len().min(halves.1.len());
            let fps: Vec<u128> = (0..count)
                .map(|i| (u128::from(halves.1[i]) << 64) | u128::from(halves.0[i]))
                .collect();
            let mut expected = Vec::new();
            for a in 0..count {
                for b in a + 1..count {
                    let distance = (fps[a] ^ fps[b]).count_ones();
                    if distance <= k {
                        expected.push((a as u32, b as u32, distance));
                    }
                }
            }
            prop_assert_eq!(self_join_128(&fps, k).unwrap(), expected);
        }

        #[test]
        fn per_document_radii_equal_brute_force(
            fps in fingerprints(),
            radii in prop::collection::vec(0u32..=12, 80),
            shuffle in any::<u64>(),
        ) {
            // Ranks are a permutation of the positions, entries in any order.
            let count = fps.len() as u64;
            let rank = |i: u64| ((i * 7 + shuffle) % count.max(1)) as u32;
            let permutation_ok = count == 0 || !count.is_multiple_of(7);
            prop_assume!(permutation_ok);
            let entries: Vec<(u32, u64, u32)> = (fps.iter().enumerate())
                .map(|(i, &fp)| (rank(i as u64), fp, radii[i]))
                .collect();
            let expected = brute_force_radii(&entries);
            let (pairs, stats) = HammingJoin::new(entries.clone()).candidate_pairs(CandidateLimits::UNLIMITED);
            prop_assert_eq!(&pairs, &expected);
            prop_assert_eq!(stats.raw_pairs, expected.len() as u64);
            // The default limits cut only a set holding more pairs than the budget.
            let (pairs, stats) = HammingJoin::new(entries).candidate_pairs(CandidateLimits::default());
            prop_assert_eq!(stats.capped_buckets, 0);
            if expected.len() <= fps.len() * DEFAULT_CANDIDATE_BUDGET {
                prop_assert_eq!(pairs, expected);
                prop_assert_eq!(stats.budget_hits, 0);
            } else {
                prop_assert!(pairs.iter().all(|pair| expected.binary_search(pair).is_ok()));
                prop_assert!(pairs.len() <= fps.len() * DEFAULT_CANDIDATE_BUDGET);
            }
        }
    }

    #[test]
    fn the_layout_follows_the_distance() {
        assert_eq!(join_blocks(3, 2_000_000), 4);
        assert!(join_blocks(10, 2_000_000) < 6);
        assert_eq!(join_blocks(0, 10), 1);
    }

    /// `count` fingerprints within 2 bits of one value (0, 1 or 2 bits flipped), in rank
    /// order, radius 3.
    pub(crate) fn flood(count: u32) -> Vec<(u32, u64, u32)> {
        let centre = 0x5DEE_CE66_D1CE_4E5Bu64;
        let mut state = 7u64;
        (0..count)
            .map(|rank| {
                state = (state.wrapping_mul(6364136223846793005)).wrapping_add(1442695040888963407);
                let flips = [1u64 << (state >> 58), 1u64 << ((state >> 52) & 63)];
                let fingerprint = (flips.iter().take((state >> 20) as usize % 3))
                    .fold(centre, |fp, flip| fp ^ flip);
                (rank, fingerprint, 3)
            })
            .collect()
    }

    #[test]
    fn a_capped_flood_stays_bounded_and_counts_the_cap() {
        let limits = CandidateLimits {
            bucket_cap: 50,
            candidate_budget: 8,
            priority_keys: false,
        };
        let count = 20_000u64;
        let (pairs, stats) = HammingJoin::new(flood(count as u32)).candidate_pairs(limits);
        assert!(stats.capped_buckets > 0, "{stats:?}");
        assert!(stats.largest_bucket > 5_000, "{stats:?}");
        // A member meets at most `cap` members per block (4 blocks at k = 3).
        assert!(stats.raw_pairs <= count * 50 * 4, "{stats:?}");
        assert!(stats.raw_pairs >= count * 10, "{stats:?}");
        assert!(pairs.len() as u64 <= count * 8, "{}", pairs.len());
        assert!(
            stats.budget_hits > 0 && stats.partner_limit >= 8,
            "{stats:?}"
        );
        // Pairs are within the radius, sorted and distinct, nearest partners first.
        let entries = flood(count as u32);
        assert!(pairs.windows(2).all(|w| w[0] < w[1]));
        for &(a, b) in &pairs {
            assert!(a < b && (entries[a as usize].1 ^ entries[b as usize].1).count_ones() <= 3);
        }
        let last = pairs.iter().filter(|p| p.1 == 19_999).count() as u64;
        assert!(last <= stats.partner_limit, "{last} {stats:?}");
    }

    #[test]
    fn a_flood_at_a_large_radius_reads_each_block_only_a_budget_deep() {
        // Radius 15 probes hundreds of neighbouring buckets per block: a member of a flood
        // must stop after a few times the budget per block, not per neighbouring bucket
        // (which made a 200k-document flood take minutes and gigabytes).
        let count = 20_000u64;
        // Up to 6 bits flipped from one centre: every pair is within 12, and the members
        // spread over many neighbouring buckets of every block.
        let entries = wide_flood(count as u32);
        let (pairs, stats) = HammingJoin::new(entries).candidate_pairs(CandidateLimits::default());
        let blocks = u64::from(join_blocks(15, count as usize));
        let truncate = (4 * DEFAULT_CANDIDATE_BUDGET).max(64) as u64;
        assert!(stats.raw_pairs <= count * blocks * truncate, "{stats:?}");
        assert!(stats.budget_hits > 0, "{stats:?}");
        assert!(
            pairs.len() as u64 <= count * stats.partner_limit,
            "{}",
            pairs.len()
        );
    }

    /// `count` fingerprints up to 6 bits from one centre (a template flood at radius 15), in
    /// rank order.
    fn wide_flood(count: u32) -> Vec<(u32, u64, u32)> {
        let mut state = 11u64;
        (0..count)
            .map(|rank| {
                let mut fingerprint = 0x5DEE_CE66_D1CE_4E5Bu64;
                for _ in 0..6 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    fingerprint ^= 1u64 << (state >> 58);
                }
                (rank, fingerprint, 15)
            })
            .collect()
    }

    #[test]
    fn a_flood_costs_the_same_per_document_at_twice_the_size() {
        // Issue 43: at 100,000 notices of one template, the layout at radius 15 has four
        // 16-bit blocks, each probing 697 neighbouring values, and the flood fills them all:
        // a member read up to the cap in each of them (17 s and 610 MB for 100,000 notices,
        // 1 s for 10,000). It now reads at most `CAPS_READ_PER_BLOCK` caps per block.
        let limits = CandidateLimits {
            bucket_cap: 10,
            ..CandidateLimits::default()
        };
        let per_document = |count: u32| {
            assert_eq!(join_blocks(15, count as usize), 4);
            let (pairs, stats) = HammingJoin::new(wide_flood(count)).candidate_pairs(limits);
            assert!(pairs.len() as u64 <= u64::from(count) * 32, "{stats:?}");
            stats.comparisons as f64 / f64::from(count)
        };
        let (small, large) = (per_document(100_000), per_document(200_000));
        // Two passes (counting, then the nearest partners), 4 blocks, 4 caps a block.
        let most = (2 * 4 * CAPS_READ_PER_BLOCK * 10) as f64;
        assert!(small > 10.0 && large <= most, "{small} {large} {most}");
        assert!(
            large <= small * 1.1,
            "{small} then {large} comparisons a document"
        );
    }

    #[test]
    fn under_the_budget_each_document_keeps_its_nearest_partners() {
        // Fingerprints spread over many neighbouring buckets (radius 15, up to 6 bits flipped
        // from one of two centres): whatever the order the buckets are read in, a document
        // keeps exactly its `partner_limit` nearest partners within the radius (by distance,
        // then rank).
        let mut state = 5u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let entries: Vec<(u32, u64, u32)> = (0..1_500u32)
            .map(|rank| {
                let mut fingerprint =
                    [0x5DEE_CE66_D1CE_4E5Bu64, 0x0123_4567_89AB_CDEF][rank as usize % 2];
                for _ in 0..6 {
                    fingerprint ^= 1u64 << (next() % 64);
                }
                (rank, fingerprint, if next() % 3 == 0 { 15 } else { 11 })
            })
            .collect();
        let limits = CandidateLimits {
            candidate_budget: 4,
            ..CandidateLimits::default()
        };
        let (pairs, stats) = HammingJoin::new(entries.clone()).candidate_pairs(limits);
        assert!(
            stats.budget_hits > 0 && stats.partner_limit >= 2,
            "{stats:?}"
        );
        let mut expected = Vec::new();
        for y in &entries {
            let mut partners: Vec<(u32, u32)> = (entries.iter())
                .filter(|x| x.0 < y.0 && (x.1 ^ y.1).count_ones() <= x.2.min(y.2))
                .map(|x| ((x.1 ^ y.1).count_ones(), x.0))
                .collect();
            partners.sort_unstable();
            partners.truncate(stats.partner_limit as usize);
            expected.extend(partners.into_iter().map(|(_, x)| (x, y.0)));
        }
        expected.sort_unstable();
        assert_eq!(pairs, expected);
    }

    #[test]
    fn a_flood_under_the_cap_is_exact() {
        let entries = flood(400);
        let limits = CandidateLimits {
            candidate_budget: usize::MAX,
            ..CandidateLimits::default()
        };
        let (pairs, stats) = HammingJoin::new(entries.clone()).candidate_pairs(limits);
        assert_eq!(pairs, brute_force_radii(&entries));
        assert_eq!(stats.capped_buckets, 0);
    }
}
