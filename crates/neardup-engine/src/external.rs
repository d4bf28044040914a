//! The candidate stage of symmetric keys out of memory: `(key, rank)` entries spilled as
//! sorted runs, merged, and walked bucket by bucket twice (once for the partner limit of the
//! candidate budget, once for the pairs), with the same pairs and statistics as
//! [`neardup_index::KeyTable`] (a property test compares them).
//!
//! The entries of a large corpus are the bulk of a run's memory (16 bytes per LSH band per
//! document); here only a buffer of [`ExternalKeys::new`]'s budget is held, then the merge
//! holds one read buffer per run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use neardup_index::{BucketStats, CandidateLimits};
use rayon::prelude::*;

use crate::spill::{spill_error, Spill, SpillDir};
use neardup_core::Result;

/// Bytes read from each run at a time during a merge.
const RUN_READ_BYTES: usize = 256 << 10;
/// Bytes of one entry in a run: the key (8) and the rank (4), little-endian.
const ENTRY_BYTES: usize = 12;

/// `(key, rank)` entries gathered into sorted runs in spills.
pub(crate) struct ExternalKeys<'d> {
    dir: &'d dyn SpillDir,
    /// The runs are called `{name}-{n}`.
    name: &'static str,
    buffer: Vec<(u64, u32)>,
    capacity: usize,
    runs: Vec<(Box<dyn Spill>, u64)>,
    /// One more than the highest rank given: the documents the candidate budget is
    /// counted over, as [`neardup_index::KeyTable`] counts them.
    documents: usize,
    /// Bytes written to runs.
    pub(crate) spilled: u64,
}

impl<'d> ExternalKeys<'d> {
    /// Entries spilled to `dir` (as runs called `{name}-{n}`) whenever `budget` bytes of them
    /// are buffered.
    pub(crate) fn new(
        dir: &'d dyn SpillDir,
        name: &'static str,
        budget: usize,
    ) -> ExternalKeys<'d> {
        ExternalKeys {
            dir,
            name,
            buffer: Vec::new(),
            capacity: (budget / 16).max(1024),
            runs: Vec::new(),
            documents: 0,
            spilled: 0,
        }
    }

    /// Adds entries.
    pub(crate) fn extend(&mut self, entries: impl IntoIterator<Item = (u64, u32)>) -> Result<()> {
        for entry in entries {
            self.documents = self.documents.max(entry.1 as usize + 1);
            self.buffer.push(entry);
            if self.buffer.len() >= self.capacity {
                self.write_run()?;
            }
        }
        Ok(())
    }

    fn write_run(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.buffer.par_sort_unstable();
        self.buffer.dedup();
        let name = format!("{}-{}", self.name, self.runs.len());
        let mut spill = self.dir.create(&name).map_err(spill_error)?;
        let mut bytes = Vec::with_capacity(RUN_READ_BYTES);
        for &(key, rank) in &self.buffer {
            bytes.extend_from_slice(&key.to_le_bytes());
            bytes.extend_from_slice(&rank.to_le_bytes());
            if bytes.len() >= RUN_READ_BYTES {
                spill.append(&bytes).map_err(spill_error)?;
                bytes.clear();
            }
        }
        spill.append(&bytes).map_err(spill_error)?;
        spill.flush().map_err(spill_error)?;
        let length = (self.buffer.len() * ENTRY_BYTES) as u64;
        self.spilled += length;
        self.runs.push((spill, length));
        self.buffer.clear();
        Ok(())
    }

    /// The candidate pairs `(x, y)` of ranks, `x < y`, sorted, and the statistics that
    /// [`neardup_index::KeyTable`] gives for the same entries and limits.
    pub(crate) fn candidate_pairs(
        mut self,
        limits: CandidateLimits,
    ) -> Result<(Vec<(u32, u32)>, BucketStats)> {
        let documents = self.documents;
        self.write_run()?;
        self.buffer = Vec::new();
        let cap = limits.bucket_cap;
        // First walk: statistics and each document's most partners.
        let mut stats = BucketStats::default();
        let mut upper_bounds = vec![0u64; documents];
        self.walk(|_, bucket| {
            if bucket.len() < 2 {
                return;
            }
            stats.shared_buckets += 1;
            stats.largest_bucket = stats.largest_bucket.max(bucket.len() as u64);
            stats.raw_pairs += pair_count(bucket.len(), cap);
            stats.capped_buckets += u64::from(bucket.len() > cap);
            for (position, &document) in bucket.iter().enumerate().skip(1) {
                upper_bounds[document as usize] += position.min(cap) as u64;
            }
        })?;
        let budget = (documents as u64).saturating_mul(limits.candidate_budget as u64);
        let limit = neardup_index::partner_limit(&upper_bounds, budget);
        drop(upper_bounds);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        // Second walk: each document's partners in each bucket, at most `take` of them.
        // A pair is found once per shared band: the list is sorted and deduplicated whenever
        // it doubles, so it holds about twice the distinct pairs, not every finding.
        let mut packed: Vec<u64> = Vec::new();
        let mut distinct = 1 << 16;
        let mut over = vec![false; if take == usize::MAX { 0 } else { documents }];
        self.walk(|_, bucket| {
            for (position, &document) in bucket.iter().enumerate().skip(1) {
                let partners = position.min(cap);
                if partners > take {
                    over[document as usize] = true;
                }
                for &partner in &bucket[..partners.min(take)] {
                    packed.push((u64::from(document) << 32) | u64::from(partner));
                }
            }
            if packed.len() >= 2 * distinct {
                packed.par_sort_unstable();
                packed.dedup();
                distinct = packed.len().max(1 << 16);
            }
        })?;
        packed.par_sort_unstable();
        packed.dedup();
        packed.shrink_to_fit();
        let mut pairs = Vec::with_capacity(packed.len());
        for group in packed.chunk_by(|a, b| a >> 32 == b >> 32) {
            let document = (group[0] >> 32) as u32;
            if group.len() > take {
                over[document as usize] = true;
            }
            for &p in group.iter().take(take) {
                pairs.push((p as u32, document));
            }
        }
        drop(packed);
        stats.budget_hits = over.iter().filter(|&&o| o).count() as u64;
        stats.partner_limit = limit;
        pairs.par_sort_unstable();
        Ok((pairs, stats))
    }

    /// The keys that more than `limit` distinct documents have, sorted.
    pub(crate) fn crowded_keys(mut self, limit: u64) -> Result<Vec<u64>> {
        self.write_run()?;
        self.buffer = Vec::new();
        let mut crowded = Vec::new();
        self.walk(|key, bucket| {
            if bucket.len() as u64 > limit {
                crowded.push(key);
            }
        })?;
        Ok(crowded)
    }

    /// Calls `bucket` with every key and its documents' ranks, ascending, keys in order.
    fn walk(&self, mut bucket: impl FnMut(u64, &[u32])) -> Result<()> {
        let mut readers: Vec<RunReader<'_>> = (self.runs.iter())
            .map(|(spill, length)| RunReader::new(spill.as_ref(), *length))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (index, reader) in readers.iter_mut().enumerate() {
            if let Some(entry) = reader.next()? {
                heap.push(Reverse((entry, index)));
            }
        }
        let mut key = None;
        let mut members: Vec<u32> = Vec::new();
        while let Some(Reverse(((k, rank), index))) = heap.pop() {
            if key != Some(k) {
                if let (Some(key), false) = (key, members.is_empty()) {
                    bucket(key, &members);
                }
                members.clear();
                key = Some(k);
            }
            // Runs are deduplicated each, not across runs.
            if members.last() != Some(&rank) {
                members.push(rank);
            }
            if let Some(entry) = readers[index].next()? {
                heap.push(Reverse((entry, index)));
            }
        }
        if let (Some(key), false) = (key, members.is_empty()) {
            bucket(key, &members);
        }
        Ok(())
    }
}

/// Reads the entries of one run in order.
struct RunReader<'s> {
    spill: &'s dyn Spill,
    length: u64,
    offset: u64,
    buffer: Vec<u8>,
    at: usize,
}

impl<'s> RunReader<'s> {
    fn new(spill: &'s dyn Spill, length: u64) -> RunReader<'s> {
        RunReader {
            spill,
            length,
            offset: 0,
            buffer: Vec::new(),
            at: 0,
        }
    }

    fn next(&mut self) -> Result<Option<(u64, u32)>> {
        if self.at == self.buffer.len() {
            if self.offset == self.length {
                return Ok(None);
            }
            let entries = (RUN_READ_BYTES / ENTRY_BYTES) as u64;
            let size = (self.length - self.offset).min(entries * ENTRY_BYTES as u64);
            self.buffer.resize(size as usize, 0);
            self.spill
                .read_at(self.offset, &mut self.buffer)
                .map_err(spill_error)?;
            self.offset += size;
            self.at = 0;
        }
        let bytes = &self.buffer[self.at..self.at + ENTRY_BYTES];
        self.at += ENTRY_BYTES;
        let mut key = [0u8; 8];
        key.copy_from_slice(&bytes[..8]);
        let mut rank = [0u8; 4];
        rank.copy_from_slice(&bytes[8..]);
        Ok(Some((u64::from_le_bytes(key), u32::from_le_bytes(rank))))
    }
}

/// Pairs of a bucket of `size` under the cap (as [`neardup_index::KeyTable`] counts them).
fn pair_count(size: usize, cap: usize) -> u64 {
    let (size, anchors) = (size as u64, size.min(cap) as u64);
    (anchors * anchors.saturating_sub(1)) / 2 + (size - anchors) * anchors
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::spill::MemorySpillDir;
    use neardup_index::KeyTable;

    proptest! {
        #[test]
        fn external_keys_equal_the_key_table(
            keys in proptest::collection::vec(proptest::collection::vec(0u64..12, 0..5), 0..60),
            cap in 1usize..6,
            budget in 1usize..4,
            buffer in 1usize..40,
        ) {
            let limits = CandidateLimits { bucket_cap: cap, candidate_budget: budget };
            let entries: Vec<(u64, u32)> = (keys.iter().enumerate())
                .flat_map(|(d, ks)| ks.iter().map(move |&k| (k, d as u32)))
                .collect();
            let expected = KeyTable::from_entries(entries.clone()).candidate_pairs_with_stats(limits);
            let dir = MemorySpillDir;
            let mut external = ExternalKeys::new(&dir, "keys", 16);
            external.capacity = buffer;
            external.extend(entries).unwrap();
            let got = external.candidate_pairs(limits).unwrap();
            prop_assert_eq!(got.0, expected.0);
            prop_assert_eq!(got.1, expected.1);
        }
    }
}
