//! The spilling key table: the candidate stage of symmetric keys out of memory. `(key, rank)`
//! entries are spilled as sorted runs, merged, and walked bucket by bucket twice (once for the
//! partner limit of the candidate budget, once for the pairs), with the same pairs and
//! statistics as [`KeyTable`](crate::KeyTable) (a property test compares them). A caller that
//! walks the runs for its own reasons first (the engine's crowd check) takes the first of the
//! two walks with it ([`ExternalKeys::walk_first`]), and the runs are merged once fewer.
//!
//! The entries of a large corpus are the bulk of a run's memory (16 bytes per LSH band per
//! document); here only a buffer of [`ExternalKeys::new`]'s budget is held, then the merge
//! holds one read buffer per run.

use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use neardup_core::Result;

use crate::key_table::{partner_limit, BucketStats, CandidateLimits};
use crate::runs::Runs;
use crate::spill_dir::SpillDir;

/// Maps a run's member to the rank it is paired under, or `None` to leave it out: for runs
/// gathered by document (the engine's crowd check), walked for candidates by rank.
pub type Remap<'m> = &'m (dyn Fn(u32) -> Option<u32> + Sync);

/// `(key, rank)` entries gathered into sorted runs in spills: the [`KeyTable`](crate::KeyTable)
/// of a corpus whose entries do not fit in memory.
pub struct ExternalKeys<'d> {
    runs: Runs<'d, (u64, u32)>,
    /// One more than the highest rank given: the documents the candidate budget is
    /// counted over, as [`KeyTable`](crate::KeyTable) counts them.
    documents: usize,
    /// Members past the anchors a bucket needs before its anchors are remembered (see
    /// [`AnchorRepeats`]); a field so that tests can lower it.
    flood_members: usize,
    /// The documents the budget counts, at least, when remapped (see
    /// [`ExternalKeys::with_ranked_documents`]).
    ranked_documents: usize,
    /// The first walk of [`ExternalKeys::candidate_pairs`], taken already by
    /// [`ExternalKeys::walk_first`], with the bucket cap and ranks it was taken for.
    first: Option<Box<(FirstWalk, usize, usize)>>,
}

impl<'d> ExternalKeys<'d> {
    /// Entries spilled to `dir` (as runs called `{name}-{n}`) whenever `budget` bytes of them
    /// are buffered.
    pub fn new(dir: &'d dyn SpillDir, name: &'static str, budget: usize) -> ExternalKeys<'d> {
        ExternalKeys {
            runs: Runs::new(dir, name, (budget / 16).max(1024)),
            documents: 0,
            flood_members: FLOOD_MEMBERS,
            ranked_documents: 0,
            first: None,
        }
    }

    /// Counts at least `documents` ranked documents for the candidate budget when the
    /// entries are remapped to ranks, whatever ranks the entries hold: entries of shared keys
    /// only (the others pair nothing) keep the budget of every document with a key.
    pub fn with_ranked_documents(mut self, documents: usize) -> ExternalKeys<'d> {
        self.ranked_documents = documents;
        self
    }

    /// Adds entries.
    ///
    /// # Errors
    /// A run that cannot be written (parameter `temp_dir`).
    pub fn extend(&mut self, entries: impl IntoIterator<Item = (u64, u32)>) -> Result<()> {
        for entry in entries {
            self.documents = self.documents.max(entry.1 as usize + 1);
            self.runs.push(entry)?;
        }
        Ok(())
    }

    /// Writes the buffered entries to a last run: the entries are all in runs.
    ///
    /// # Errors
    /// A run that cannot be written (parameter `temp_dir`).
    pub fn finish(&mut self) -> Result<()> {
        self.runs.finish()
    }

    /// Bytes written to runs.
    pub fn spilled(&self) -> u64 {
        self.runs.spilled
    }

    /// The candidate pairs `(x, y)` of ranks, `x < y`, and the statistics that
    /// [`KeyTable`](crate::KeyTable) gives for the same entries and limits; the pairs are
    /// themselves sorted in runs in the spill directory and handed out by
    /// [`ExternalPairs::drain`], which completes the statistics (`budget_hits`).
    ///
    /// With `remap = (map, ranks)`, the entries' second halves are not ranks but what `map`
    /// turns into ranks below `ranks` (or leaves out): the pairs and statistics are those of
    /// the mapped entries.
    ///
    /// # Errors
    /// A run that cannot be written or read back (parameter `temp_dir`).
    pub fn candidate_pairs(
        mut self,
        limits: CandidateLimits,
        remap: Option<(Remap<'_>, usize)>,
    ) -> Result<(ExternalPairs<'d>, BucketStats)> {
        self.finish()?;
        let (map, ranks) = match remap {
            Some((map, ranks)) => (Some(map), ranks),
            None => (None, self.documents),
        };
        let taken = match self.first.take().map(|first| *first) {
            Some((walk, cap, taken_ranks)) if cap == limits.bucket_cap && taken_ranks == ranks => {
                Some(walk)
            }
            _ => None,
        };
        let FirstWalk {
            mut stats,
            upper_bounds,
            mut documents,
        } = match taken {
            Some(walk) => walk,
            None => self.first_walk(map, ranks, limits.bucket_cap)?,
        };
        if map.is_some() {
            documents = documents.max(self.ranked_documents);
        }
        let budget = (documents as u64).saturating_mul(limits.candidate_budget as u64);
        let limit = partner_limit(&upper_bounds, budget);
        drop(upper_bounds);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        // The class of a pair is told by the partner's top bit, which ranks below 2^31 leave
        // free; past them, partners are kept by rank alone.
        let priority = limits.priority_keys && take != usize::MAX && documents <= 1 << 31;
        let limits = (limits.bucket_cap, take, priority);
        let (pairs, over) = self.partner_runs(map, limits, documents)?;
        stats.partner_limit = limit;
        let keys_spilled = self.runs.spilled;
        Ok((
            ExternalPairs {
                pairs,
                take,
                priority,
                over,
                keys_spilled,
            },
            stats,
        ))
    }

    /// The first walk: the statistics, each document's most partners under the cap, and the
    /// documents the budget is counted over (one more than the highest rank with a key; at
    /// least [`ExternalKeys::with_ranked_documents`]'s when remapped, added by the caller).
    fn first_walk(&self, map: Option<Remap<'_>>, ranks: usize, cap: usize) -> Result<FirstWalk> {
        let mut walk = FirstWalk::new(ranks);
        self.walk(map, |_, bucket| walk.add(bucket, cap))?;
        Ok(walk)
    }

    /// [`ExternalKeys::walk`] without a map, that also takes the first of the two walks
    /// [`ExternalKeys::candidate_pairs`] makes, for `remap` and `cap`, and keeps it for
    /// it: a caller that walks the runs anyway (the engine's crowd check) spares the
    /// candidate stage one merge of every run. `candidate_pairs` uses it when given the
    /// same bucket cap and ranks, and must be given the same map.
    ///
    /// # Errors
    /// A run that cannot be read back (parameter `temp_dir`).
    pub fn walk_first(
        &mut self,
        (map, ranks): (Remap<'_>, usize),
        cap: usize,
        mut bucket: impl FnMut(u64, &[u32]),
    ) -> Result<()> {
        let mut walk = FirstWalk::new(ranks);
        let mut mapped: Vec<u32> = Vec::new();
        self.walk(None, |key, members| {
            bucket(key, members);
            mapped.clear();
            mapped.extend(members.iter().filter_map(|&member| map(member)));
            mapped.sort_unstable();
            if !mapped.is_empty() {
                walk.add(&mapped, cap);
            }
        })?;
        self.first = Some(Box::new((walk, cap, ranks)));
        Ok(())
    }

    /// The second walk: each document's partners in each bucket, at most `take` of them,
    /// packed as `document << 32 | partner` and sorted in runs of their own. A pair is found
    /// once per shared band: runs are deduplicated, and the merge drops repeats. Also returns
    /// per document whether it had more than `take` partners (empty when unlimited).
    ///
    /// With `priority` (see [`CandidateLimits::priority_keys`]), a partner met in an ordinary
    /// bucket is pushed with [`ORDINARY_PARTNER`] set, so that a document's priority partners
    /// sort first; [`ExternalPairs::drain`] clears it.
    fn partner_runs(
        &self,
        map: Option<Remap<'_>>,
        (cap, take, priority): (usize, usize, bool),
        documents: usize,
    ) -> Result<(Runs<'d, u64>, Vec<bool>)> {
        let capacity = self.runs.capacity;
        let mut pairs = Runs::new(self.runs.dir(), "pairs", (capacity * 16 / 8).max(1));
        let mut over = vec![false; if take == usize::MAX { 0 } else { documents }];
        let mut failed = None;
        let anchored = cap.min(take);
        let mut repeats = AnchorRepeats::new(capacity / 2, self.flood_members);
        let ordinary = if priority { ORDINARY_PARTNER } else { 0 };
        self.walk(map, |key, bucket| {
            if failed.is_some() {
                return;
            }
            if priority && key >= neardup_core::PRIORITY_KEY {
                // A priority bucket: its best partners, whatever the anchors of the others.
                for (position, &document) in bucket.iter().enumerate().skip(1) {
                    let partners = position.min(cap);
                    if partners > take {
                        over[document as usize] = true;
                    }
                    for &partner in &bucket[..partners.min(take)] {
                        let packed = (u64::from(document) << 32) | u64::from(partner);
                        if let Err(error) = pairs.push(packed) {
                            failed = Some(error);
                            return;
                        }
                    }
                }
                return;
            }
            // The members past the first `anchored` all pair with those same anchors.
            let anchors = repeats.intern(bucket, anchored);
            for (position, &document) in bucket.iter().enumerate().skip(1) {
                let partners = position.min(cap);
                if partners > take {
                    over[document as usize] = true;
                }
                let mut partners = &bucket[..partners.min(take)];
                let mut before: &[u32] = &[];
                if position >= anchored {
                    if let Some(anchors) = anchors {
                        // `partners` is the anchors: only those not paired before go, and
                        // none ranked past `take` partners the document has already.
                        let (last, bound) = repeats.pair(document, anchors, anchored == take);
                        before = last.map_or(&[], |last| repeats.anchors(last));
                        if last == Some(anchors) {
                            partners = &[];
                        }
                        let within = partners.partition_point(|&p| p <= bound);
                        if within < partners.len() {
                            // More than `take` partners: the drain would have said so.
                            over[document as usize] = true;
                            partners = &partners[..within];
                        }
                    }
                }
                for &partner in partners {
                    if before.binary_search(&partner).is_ok() {
                        continue;
                    }
                    let partner = partner | ordinary;
                    if let Err(error) = pairs.push((u64::from(document) << 32) | u64::from(partner))
                    {
                        failed = Some(error);
                        return;
                    }
                }
            }
        })?;
        if let Some(error) = failed {
            return Err(error);
        }
        pairs.write_run()?;
        Ok((pairs, over))
    }

    /// Calls `bucket` with every key and its documents' ranks, ascending, keys in order (the
    /// runs are complete: see [`ExternalKeys::finish`]). With `map`, the ranks are the mapped
    /// members, and a key none of whose members maps is skipped.
    ///
    /// # Errors
    /// A run that cannot be read back (parameter `temp_dir`).
    pub fn walk(&self, map: Option<Remap<'_>>, mut bucket: impl FnMut(u64, &[u32])) -> Result<()> {
        debug_assert!(self.runs.is_finished(), "walked before finish");
        let mut mapped: Vec<u32> = Vec::new();
        let mut emit = |key: u64, members: &[u32]| match map {
            None => bucket(key, members),
            Some(map) => {
                mapped.clear();
                mapped.extend(members.iter().filter_map(|&member| map(member)));
                mapped.sort_unstable();
                if !mapped.is_empty() {
                    bucket(key, &mapped);
                }
            }
        };
        let mut key = None;
        let mut members: Vec<u32> = Vec::new();
        self.runs.merge(|(k, rank)| {
            if key != Some(k) {
                if let (Some(key), false) = (key, members.is_empty()) {
                    emit(key, &members);
                }
                members.clear();
                key = Some(k);
            }
            // Runs are deduplicated each, not across runs.
            if members.last() != Some(&rank) {
                members.push(rank);
            }
            Ok(())
        })?;
        if let (Some(key), false) = (key, members.is_empty()) {
            emit(key, &members);
        }
        Ok(())
    }
}

/// What the first walk of [`ExternalKeys::candidate_pairs`] finds.
struct FirstWalk {
    /// The statistics, but for the partner limit and the budget hits.
    stats: BucketStats,
    /// Per rank, its most partners under the bucket cap.
    upper_bounds: Vec<u64>,
    /// One more than the highest rank with a key.
    documents: usize,
}

impl FirstWalk {
    fn new(ranks: usize) -> FirstWalk {
        FirstWalk {
            stats: BucketStats::default(),
            upper_bounds: vec![0u64; ranks],
            documents: 0,
        }
    }

    /// Counts one bucket's ranks (ascending, mapped).
    fn add(&mut self, bucket: &[u32], cap: usize) {
        if let Some(&last) = bucket.last() {
            self.documents = self.documents.max(last as usize + 1);
        }
        if bucket.len() < 2 {
            return;
        }
        let stats = &mut self.stats;
        stats.shared_buckets += 1;
        stats.largest_bucket = stats.largest_bucket.max(bucket.len() as u64);
        stats.raw_pairs += pair_count(bucket.len(), cap);
        stats.capped_buckets += u64::from(bucket.len() > cap);
        for (position, &document) in bucket.iter().enumerate().skip(1) {
            self.upper_bounds[document as usize] += position.min(cap) as u64;
        }
    }
}

/// A bucket with at least this many members past its anchors has its anchors remembered.
const FLOOD_MEMBERS: usize = 64;

/// The anchors of large buckets, and per document the last anchors it was paired with: a
/// template flood's documents share a bucket in each of its LSH bands, and in each such
/// bucket every member past the first `bucket_cap` (or partner-limit) members pairs with
/// those first members, mostly the same ones from band to band. Without this, the second
/// walk pushed each of those pairs once a band (a flood of a million one-template messages
/// spilled 9.8 GB of pairs for a 189 MB input). A document past a bucket's anchors pushes
/// only the anchors that were not among the last anchors it was paired with, which are in
/// the runs already: the pairs are the same, fewer repeats reach the runs.
struct AnchorRepeats {
    /// Interned anchor lists, by a hash of their content: their ids (a list whose hash is
    /// another list's is not interned).
    ids: HashMap<u64, u32, FixedState>,
    /// The interned anchor lists, by id.
    lists: Vec<Box<[u32]>>,
    /// Members held by `lists`, bounded by `slots`.
    held: usize,
    /// Slot `document % slots.len()`: `document << 32 | anchors id + 1` of its last pairing
    /// with interned anchors (0: none); allocated with the first large bucket.
    seen: Vec<u64>,
    /// Per slot, the highest rank among `take` partners its document has been paired with
    /// (`u32::MAX`: not known): a partner ranked past it can never be kept.
    bounds: Vec<u32>,
    slots: usize,
    flood_members: usize,
}

impl AnchorRepeats {
    fn new(slots: usize, flood_members: usize) -> AnchorRepeats {
        AnchorRepeats {
            ids: HashMap::default(),
            lists: Vec::new(),
            held: 0,
            seen: Vec::new(),
            bounds: Vec::new(),
            slots: slots.max(1024).next_power_of_two(),
            flood_members,
        }
    }

    /// The id of `bucket`'s first `anchored` members when the bucket is large enough to be
    /// worth it and room is left; `None` otherwise.
    fn intern(&mut self, bucket: &[u32], anchored: usize) -> Option<u32> {
        if anchored == 0 || bucket.len() < anchored.saturating_add(self.flood_members) {
            return None;
        }
        let anchors = &bucket[..anchored];
        let hash = FixedState::default().hash_one(anchors);
        if let Some(&id) = self.ids.get(&hash) {
            return (*self.lists[id as usize] == *anchors).then_some(id);
        }
        if self.held + anchored > self.slots || self.lists.len() >= u32::MAX as usize - 1 {
            return None;
        }
        if self.seen.is_empty() {
            self.seen = vec![0; self.slots];
            self.bounds = vec![u32::MAX; self.slots];
        }
        let id = self.lists.len() as u32;
        self.ids.insert(hash, id);
        self.lists.push(anchors.into());
        self.held += anchored;
        Some(id)
    }

    /// The anchors of `id`, sorted.
    fn anchors(&self, id: u32) -> &[u32] {
        &self.lists[id as usize]
    }

    /// Records that `document` is paired with the anchors `id` (all `take` of its partners
    /// when `full`); returns the anchors it was last paired with and its bound (see `bounds`)
    /// before this pairing, if remembered (its slot may have gone to another document).
    fn pair(&mut self, document: u32, id: u32, full: bool) -> (Option<u32>, u32) {
        let index = document as usize & (self.slots - 1);
        let slot = &mut self.seen[index];
        let known = *slot >> 32 == u64::from(document) && *slot != 0;
        let last = known.then(|| (*slot & u64::from(u32::MAX)) as u32 - 1);
        let bound = if known { self.bounds[index] } else { u32::MAX };
        *slot = (u64::from(document) << 32) | u64::from(id + 1);
        let anchors = &self.lists[id as usize];
        self.bounds[index] = match (full, anchors.last()) {
            (true, Some(&highest)) => bound.min(highest),
            _ => bound,
        };
        (last, bound)
    }
}

/// Candidate pairs of ranks sorted in runs (see [`ExternalKeys::candidate_pairs`]).
pub struct ExternalPairs<'d> {
    pairs: Runs<'d, u64>,
    /// Most partners a document keeps (the partner limit).
    take: usize,
    /// Whether the partners of ordinary buckets carry [`ORDINARY_PARTNER`].
    priority: bool,
    /// Per document, whether it had more partners than `take` (empty when unlimited).
    over: Vec<bool>,
    /// Bytes of the key entries' runs the pairs came from.
    keys_spilled: u64,
}

impl ExternalPairs<'_> {
    /// Bytes written to runs: the key entries' and the pairs'.
    pub fn spilled(&self) -> u64 {
        self.keys_spilled + self.pairs.spilled
    }

    /// Hands the pairs `(x, y)` of ranks, `x < y`, to `chunk` in chunks of at most `size`,
    /// grouped by `y` ascending and sorted by `x` within a group: the pairs, and the order,
    /// [`KeyTable`](crate::KeyTable) gives when sorted by `y`. Returns the budget hits.
    /// Under priority keys, a document keeps its priority partners first, then its ordinary
    /// ones not among them, up to the partner limit.
    ///
    /// # Errors
    /// A run that cannot be read back (parameter `temp_dir`), or an error of `chunk`.
    pub fn drain(
        mut self,
        size: usize,
        mut chunk: impl FnMut(&[(u32, u32)]) -> Result<()>,
    ) -> Result<u64> {
        let (take, priority) = (self.take, self.priority);
        let mut buffer: Vec<(u32, u32)> = Vec::with_capacity(size.min(1 << 20));
        // The current document and its kept partners: the priority ones lead, sorted.
        let mut document = None;
        let mut group: Vec<u32> = Vec::new();
        let mut firsts = 0usize;
        let mut last = None;
        let over = &mut self.over;
        let mut flush = |y: u32, group: &mut Vec<u32>, buffer: &mut Vec<(u32, u32)>| {
            group.sort_unstable();
            for &x in group.iter() {
                buffer.push((x, y));
                if buffer.len() >= size {
                    chunk(buffer)?;
                    buffer.clear();
                }
            }
            group.clear();
            Ok::<(), neardup_core::Error>(())
        };
        self.pairs.finish()?;
        self.pairs.merge(|packed| {
            if last == Some(packed) {
                return Ok(());
            }
            last = Some(packed);
            let (y, x) = ((packed >> 32) as u32, packed as u32);
            if document != Some(y) {
                if let Some(previous) = document {
                    flush(previous, &mut group, &mut buffer)?;
                }
                document = Some(y);
                firsts = 0;
            }
            // Without priority keys, every partner is a first one.
            let first = !priority || x & ORDINARY_PARTNER == 0;
            let x = if priority { x & !ORDINARY_PARTNER } else { x };
            if !first && group[..firsts].binary_search(&x).is_ok() {
                return Ok(());
            }
            if group.len() == take {
                over[y as usize] = true;
                return Ok(());
            }
            group.push(x);
            firsts += usize::from(first);
            Ok(())
        })?;
        if let Some(previous) = document {
            flush(previous, &mut group, &mut buffer)?;
        }
        if !buffer.is_empty() {
            chunk(&buffer)?;
        }
        Ok(self.over.iter().filter(|&&o| o).count() as u64)
    }
}

/// The bit a partner met in an ordinary bucket carries in the pair runs under priority keys
/// (see [`ExternalKeys::partner_runs`]).
const ORDINARY_PARTNER: u32 = 1 << 31;

/// Pairs of a bucket of `size` under the cap (as [`KeyTable`](crate::KeyTable) counts them).
fn pair_count(size: usize, cap: usize) -> u64 {
    let (size, anchors) = (size as u64, size.min(cap) as u64);
    (anchors * anchors.saturating_sub(1)) / 2 + (size - anchors) * anchors
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::spill_dir::MemorySpillDir;
    use crate::KeyTable;

    /// The pairs `drain` hands out in chunks of `size`, sorted, and its budget hits.
    fn drained(pairs: ExternalPairs<'_>, size: usize) -> (Vec<(u32, u32)>, u64) {
        let mut got = Vec::new();
        let hits = pairs
            .drain(size, |c| {
                got.extend_from_slice(c);
                Ok(())
            })
            .unwrap();
        got.sort_unstable();
        (got, hits)
    }

    /// A template flood: every document in the same five buckets. The members past the
    /// bucket cap pair with the same anchors in each bucket; those pairs reach the runs once,
    /// not five times, and the pairs are still the key table's.
    #[test]
    fn a_flood_pushes_its_anchor_pairs_once() {
        let limits = CandidateLimits {
            bucket_cap: 4,
            candidate_budget: 1000,
            priority_keys: false,
        };
        let entries: Vec<(u64, u32)> = (0..300u32)
            .flat_map(|d| (1..=5u64).map(move |k| (k, d)))
            .collect();
        let expected = KeyTable::from_entries(entries.clone()).candidate_pairs_with_stats(limits);
        let dir = MemorySpillDir;
        let mut external = ExternalKeys::new(&dir, "keys", 16);
        external.runs.capacity = 64;
        external.extend(entries).unwrap();
        let (pairs, mut stats) = external.candidate_pairs(limits, None).unwrap();
        // One bucket's pairs: 296 members with 4 anchors each, and the anchors among
        // themselves; 8 bytes each.
        let once = (296 * 4 + 6) * 8;
        assert!(
            pairs.pairs.spilled <= once + 64 * 16,
            "{} > {once}",
            pairs.pairs.spilled
        );
        let got;
        (got, stats.budget_hits) = drained(pairs, 1000);
        assert_eq!(got, expected.0);
        assert_eq!(stats, expected.1);
    }

    /// A flood whose documents each miss some of its buckets, so that the anchors differ
    /// from bucket to bucket: the pairs are still the key table's, and far fewer than a
    /// push per bucket reach the runs.
    #[test]
    fn a_flood_with_varying_anchors_gives_the_key_tables_pairs() {
        for budget in [1000, 3] {
            let limits = CandidateLimits {
                bucket_cap: 6,
                candidate_budget: budget,
                priority_keys: false,
            };
            let entries: Vec<(u64, u32)> = (0..400u32)
                .flat_map(|d| (1..=8u64).map(move |k| (k, d)))
                .filter(|&(k, d)| (u64::from(d) + k) % 5 != 0)
                .collect();
            let expected =
                KeyTable::from_entries(entries.clone()).candidate_pairs_with_stats(limits);
            let dir = MemorySpillDir;
            let mut external = ExternalKeys::new(&dir, "keys", 16);
            external.runs.capacity = 64;
            external.extend(entries).unwrap();
            let (pairs, mut stats) = external.candidate_pairs(limits, None).unwrap();
            // A push per bucket would be about 8 x 314 x 6 pairs of 8 bytes.
            assert!(
                pairs.pairs.spilled < 8 * 314 * 6 * 8 / 2,
                "{}",
                pairs.pairs.spilled
            );
            let got;
            (got, stats.budget_hits) = drained(pairs, 1000);
            assert_eq!(got, expected.0, "budget {budget}");
            assert_eq!(stats, expected.1, "budget {budget}");
        }
    }

    proptest! {
        #[test]
        fn external_keys_equal_the_key_table(
            keys in proptest::collection::vec(proptest::collection::vec(0u64..12, 0..5), 0..60),
            cap in 1usize..6,
            budget in 1usize..4,
            buffer in 1usize..40,
            chunk in 1usize..7,
            flood in 1usize..4,
            priority_keys in any::<bool>(),
        ) {
            let limits = CandidateLimits { bucket_cap: cap, candidate_budget: budget, priority_keys };
            // Keys above 8 are priority keys (they count under `priority_keys` only).
            let key = |k: u64| if k > 8 { k | neardup_core::PRIORITY_KEY } else { k };
            let entries: Vec<(u64, u32)> = (keys.iter().enumerate())
                .flat_map(|(d, ks)| ks.iter().map(move |&k| (key(k), d as u32)))
                .collect();
            let expected = KeyTable::from_entries(entries.clone()).candidate_pairs_with_stats(limits);
            let dir = MemorySpillDir;
            let mut external = ExternalKeys::new(&dir, "keys", 16);
            external.runs.capacity = buffer;
            external.flood_members = flood;
            external.extend(entries).unwrap();
            let (pairs, mut stats) = external.candidate_pairs(limits, None).unwrap();
            let got;
            (got, stats.budget_hits) = drained(pairs, chunk);
            prop_assert_eq!(got, expected.0);
            prop_assert_eq!(stats, expected.1);
        }

        /// Runs gathered by document, each key once a document, and walked through a map
        /// to ranks that leaves some documents out, give the pairs and statistics of the
        /// ranks' own entries.
        #[test]
        fn remapped_runs_equal_the_key_table_of_the_ranks(
            keys in proptest::collection::vec(proptest::collection::vec(0u64..12, 0..5), 0..60),
            left_out in proptest::collection::vec(any::<bool>(), 60),
            shift in 0usize..60,
            cap in 1usize..6,
            budget in 1usize..4,
            buffer in 1usize..40,
            walked_first in any::<bool>(),
        ) {
            let limits = CandidateLimits { bucket_cap: cap, candidate_budget: budget, priority_keys: false };
            let n = keys.len();
            // A permutation of the documents: rank = (document + shift) mod n.
            let rank = |d: usize| ((d + shift) % n.max(1)) as u32;
            let by_rank: Vec<(u64, u32)> = (keys.iter().enumerate())
                .filter(|&(d, _)| !left_out[d])
                .flat_map(|(d, ks)| ks.iter().map(move |&k| (k, rank(d))))
                .collect();
            let expected = KeyTable::from_entries(by_rank).candidate_pairs_with_stats(limits);
            let dir = MemorySpillDir;
            let mut external = ExternalKeys::new(&dir, "crowd", 16);
            external.runs.capacity = buffer;
            external.flood_members = 1;
            external.extend((keys.iter().enumerate()).flat_map(|(d, ks)| {
                let mut ks = ks.clone();
                ks.sort_unstable();
                ks.dedup();
                ks.into_iter().map(move |k| (k, d as u32))
            })).unwrap();
            let map = |d: u32| (!left_out[d as usize]).then(|| rank(d as usize));
            // The first walk taken by a walk of the raw members, or by the candidate stage:
            // the same pairs and statistics, and the raw walk sees every member.
            if walked_first {
                let mut seen = 0;
                external.finish().unwrap();
                external.walk_first((&map, n), cap, |_, members| seen += members.len()).unwrap();
                let distinct: usize = (keys.iter())
                    .map(|ks| { let mut ks = ks.clone(); ks.sort_unstable(); ks.dedup(); ks.len() })
                    .sum();
                prop_assert_eq!(seen, distinct);
            }
            let (pairs, mut stats) = external.candidate_pairs(limits, Some((&map, n))).unwrap();
            let got;
            (got, stats.budget_hits) = drained(pairs, 7);
            prop_assert_eq!(got, expected.0);
            prop_assert_eq!(stats, expected.1);
        }
    }
}
