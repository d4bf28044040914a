//! [`SharedKeyTable`]: documents sharing at least a minimum count of keys
//! (`neardup_core::Join::SharedKeys`: the classic fingerprints' "M of N" rules).
//!
//! # How
//!
//! The pairs are never gathered whole. Like the [`KeyTable`](crate::KeyTable), the table
//! sorts its `(key, document)` entries and indexes, per document, the buckets in which it has
//! earlier members (the anchors of a capped bucket). A document's partners are then found by
//! a merge of those buckets' member lists (each sorted by document): a partner met in at
//! least `min` of them qualifies, a run of members found in fewer is jumped over by binary
//! search (MergeSkip), and the merge stops as soon as the document has as many partners as
//! it may keep. So a template flood, where every document shares its keys with
//! thousands of others, costs a few times the partner limit per document and bucket, never
//! the `bucket_cap x keys` pairs per document that gathering the buckets' pairs held.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::generators::CandidateGenerator;
use crate::key_table::{partner_limit, BucketStats, CandidateLimits, PartnerIndex};

/// Documents sharing at least `min` distinct keys (`neardup_core::Join::SharedKeys`): the
/// n-gram index with a count filter. With `min = 1` it is the symmetric key table.
///
/// Each bucket pairs its members with its first `bucket_cap` (anchors), as in the key table;
/// the shared keys are counted over those pairs. The candidate budget then keeps each
/// document's best-ranked partners when the pairs would exceed `documents x
/// candidate_budget`, at the key table's water-filling level computed over each document's
/// number of qualifying partners (so the pairs are those of counting every pair, then
/// cutting). Time and memory are linear in the number of entries whatever the keys: a
/// document reads at most `bucket_cap` members per bucket, and usually only until it has a
/// few times the partner limit.
#[derive(Debug, Clone, Default)]
pub struct SharedKeyTable {
    entries: Vec<(u64, u32)>,
    min: u32,
    /// Documents that read at most `bucket_cap` members in all (sorted).
    bounded: Vec<u32>,
}

impl SharedKeyTable {
    /// A table of `(key, document)` entries keeping pairs that share `min` keys (at least 1).
    pub fn new(entries: Vec<(u64, u32)>, min: u32) -> SharedKeyTable {
        SharedKeyTable {
            entries,
            min: min.max(1),
            bounded: Vec::new(),
        }
    }

    /// Lets `documents` (sorted) read at most `bucket_cap` members in all, over their
    /// buckets, in document order: the templated texts of a flood, which meet their copies
    /// through their filling keys, and would meet only their template's other fillings
    /// here, their buckets filled to the cap.
    pub fn bounded(mut self, documents: Vec<u32>) -> SharedKeyTable {
        self.bounded = documents;
        self
    }
}

impl CandidateGenerator for SharedKeyTable {
    fn candidate_pairs(mut self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        self.entries.par_sort_unstable();
        self.entries.dedup();
        let index = PartnerIndex::new(&self.entries, limits.bucket_cap, 0);
        let walk = Walk {
            entries: &self.entries,
            index: &index,
            cap: limits.bucket_cap,
            min: self.min as usize,
            reads: AtomicU64::new(0),
            bounded: &self.bounded,
        };
        let limit = walk.partner_limit(limits.candidate_budget);
        let (mut packed, budget_hits) = walk.pairs(limit);
        packed.par_sort_unstable();
        let pairs = packed
            .into_iter()
            .map(|p| ((p >> 32) as u32, p as u32))
            .collect();
        let stats = BucketStats {
            budget_hits,
            partner_limit: limit,
            comparisons: walk.reads.into_inner(),
            ..index.stats
        };
        (pairs, stats)
    }
}

/// The sorted entries and their partner index, read per document.
struct Walk<'a> {
    entries: &'a [(u64, u32)],
    index: &'a PartnerIndex,
    cap: usize,
    min: usize,
    /// Members read and search steps made by every merge (the work, for the statistics).
    reads: AtomicU64,
    /// Documents that read at most `cap` members in all (sorted).
    bounded: &'a [u32],
}

impl Walk<'_> {
    fn documents(&self) -> u32 {
        self.index.upper_bounds.len() as u32
    }

    /// The partner limit of `documents x candidate_budget` pairs over the documents'
    /// qualifying partners (`u64::MAX` when they fit). The members before a document in its
    /// buckets, divided by `min`, bound its partners: when those bounds fit, nothing is
    /// counted. Otherwise the partners are counted up to a ceiling (4 x the budget, then 4
    /// times more while the level reaches it), so that a flood's documents stop early: the
    /// level is exact once it is below the ceiling or no count reached it.
    fn partner_limit(&self, candidate_budget: usize) -> u64 {
        let budget = u64::from(self.documents()).saturating_mul(candidate_budget as u64);
        let min = self.min as u64;
        let bounds: Vec<u64> = self.index.upper_bounds.iter().map(|&b| b / min).collect();
        if partner_limit(&bounds, budget) == u64::MAX {
            return u64::MAX;
        }
        let mut ceiling = (candidate_budget as u64).saturating_mul(4).max(1);
        loop {
            let counts: Vec<u64> = (0..self.documents())
                .into_par_iter()
                .map_init(Merge::default, |merge, document| {
                    merge.partners(self, document, ceiling).len() as u64
                })
                .collect();
            let level = partner_limit(&counts, budget);
            if level < ceiling || counts.iter().all(|&count| count < ceiling) {
                return level;
            }
            ceiling = ceiling.saturating_mul(4);
        }
    }

    /// The pairs packed `a << 32 | b`, each document keeping its `limit` best partners, and
    /// the number of documents that had more.
    fn pairs(&self, limit: u64) -> (Vec<u64>, u64) {
        let hits = AtomicU64::new(0);
        let keep = usize::try_from(limit).unwrap_or(usize::MAX);
        let packed = (0..self.documents())
            .into_par_iter()
            .map_init(Merge::default, |merge, document| {
                let partners = merge.partners(self, document, limit.saturating_add(1));
                let kept = partners.len().min(keep);
                if kept < partners.len() {
                    hits.fetch_add(1, Ordering::Relaxed);
                }
                let pack = |&partner: &u32| (u64::from(partner) << 32) | u64::from(document);
                partners[..kept].iter().map(pack).collect::<Vec<u64>>()
            })
            .flatten_iter()
            .collect();
        (packed, hits.into_inner())
    }
}

/// A k-way merge of a document's buckets, reused from document to document.
#[derive(Default)]
struct Merge {
    /// The next member of each bucket: `(member, bucket)`, smallest first.
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    /// Per bucket, the next entry to read and the end of its earlier members.
    cursors: Vec<(usize, usize)>,
    /// The buckets taken out of the heap in one step (emptied as they go back).
    popped: Vec<u32>,
    found: Vec<u32>,
    /// Members read and search steps made for the document being merged.
    reads: u64,
}

impl Merge {
    /// The first `stop` earlier partners of `document`, ascending, that share at least
    /// `min` of its buckets (members among each bucket's first `cap`).
    fn partners(&mut self, walk: &Walk<'_>, document: u32, stop: u64) -> &[u32] {
        self.heap.clear();
        self.cursors.clear();
        self.found.clear();
        self.reads = 0;
        let most_reads = match walk.bounded.binary_search(&document) {
            Ok(_) => walk.cap as u64,
            Err(_) => u64::MAX,
        };
        for &start in walk.index.starts_of(document) {
            let key = walk.entries[start].0;
            // The bucket holds `document`, so the search ends inside it.
            let before = walk.entries[start..].partition_point(|e| (e.0, e.1) < (key, document));
            let end = start + before.min(walk.cap);
            if start < end {
                self.heap
                    .push(Reverse((walk.entries[start].1, self.cursors.len() as u32)));
                self.cursors.push((start, end));
            }
        }
        // MergeSkip (Li, Lu, Lu, ICDE 2008): when fewer than `min` buckets hold the smallest
        // member, no member below the smallest next member of the other buckets can be in
        // `min` of them either: the buckets read so far jump there by binary search.
        while let Some(&Reverse((partner, _))) = self.heap.peek() {
            if self.reads >= most_reads {
                break;
            }
            self.popped.clear();
            while let Some(&Reverse((next, bucket))) = self.heap.peek() {
                if next != partner {
                    break;
                }
                self.heap.pop();
                self.popped.push(bucket);
            }
            if self.popped.len() >= walk.min {
                self.found.push(partner);
                while let Some(bucket) = self.popped.pop() {
                    self.seek(walk, bucket, partner + 1);
                }
                if self.found.len() as u64 >= stop {
                    break;
                }
                continue;
            }
            while self.popped.len() + 1 < walk.min {
                let Some(Reverse((_, bucket))) = self.heap.pop() else {
                    break;
                };
                self.popped.push(bucket);
            }
            // Fewer than `min` buckets left: nothing more can qualify.
            let Some(&Reverse((target, _))) = self.heap.peek() else {
                break;
            };
            while let Some(bucket) = self.popped.pop() {
                self.seek(walk, bucket, target);
            }
        }
        walk.reads.fetch_add(self.reads, Ordering::Relaxed);
        &self.found
    }

    /// Moves `bucket`'s cursor to its first member at or above `target`, and back into the
    /// heap unless the bucket is read out.
    ///
    /// Galloping (doubling steps from the cursor, then a binary search within the last
    /// step): the target is most often the next member, found in one read, where a binary
    /// search of the rest of a capped bucket took ten reads scattered over it.
    fn seek(&mut self, walk: &Walk<'_>, bucket: u32, target: u32) {
        let (at, end) = &mut self.cursors[bucket as usize];
        let members = &walk.entries[*at..*end];
        let mut step = 1;
        while step <= members.len() && members[step - 1].1 < target {
            step *= 2;
        }
        // members[..step / 2] are below the target; the first at or above it is within
        // members[step / 2..step] (or the end).
        let from = step / 2;
        let to = step.min(members.len());
        *at += from + members[from..to].partition_point(|e| e.1 < target);
        self.reads += u64::from(step.ilog2()) + 1;
        if *at < *end {
            self.heap.push(Reverse((walk.entries[*at].1, bucket)));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    fn entries(keys: &[Vec<u64>]) -> Vec<(u64, u32)> {
        let mut entries = Vec::new();
        for (document, document_keys) in keys.iter().enumerate() {
            entries.extend(document_keys.iter().map(|&k| (k, document as u32)));
        }
        entries
    }

    /// The slow reference: every anchor pair of every bucket counted, the pairs sharing
    /// `min` keys kept, then each document's partners cut at the water-filling level of
    /// their exact counts.
    fn reference(keys: &[Vec<u64>], min: usize, limits: CandidateLimits) -> Vec<(u32, u32)> {
        let mut buckets: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
        for (document, document_keys) in keys.iter().enumerate() {
            for &key in document_keys {
                buckets.entry(key).or_default().insert(document as u32);
            }
        }
        let mut shared: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        for members in buckets.values() {
            let members: Vec<u32> = members.iter().copied().collect();
            for (position, &b) in members.iter().enumerate() {
                for &a in &members[..position.min(limits.bucket_cap)] {
                    *shared.entry((a, b)).or_default() += 1;
                }
            }
        }
        let mut partners: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
        for (&(a, b), &count) in &shared {
            if count >= min {
                partners[b as usize].push(a);
            }
        }
        let counts: Vec<u64> = partners.iter().map(|p| p.len() as u64).collect();
        // Documents up to the last with a key, as the budget counts them.
        let documents = keys
            .iter()
            .rposition(|k| !k.is_empty())
            .map_or(0, |d| d + 1);
        let budget = (documents as u64).saturating_mul(limits.candidate_budget as u64);
        let limit = usize::try_from(partner_limit(&counts, budget)).unwrap_or(usize::MAX);
        let mut pairs: Vec<(u32, u32)> = (partners.iter().enumerate())
            .flat_map(|(b, p)| p.iter().take(limit).map(move |&a| (a, b as u32)))
            .collect();
        pairs.sort_unstable();
        pairs
    }

    fn key_sets(space: u64) -> impl Strategy<Value = Vec<Vec<u64>>> {
        prop::collection::vec(prop::collection::vec(0..space, 0..8), 0..60)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn counts_distinct_shared_keys(keys in key_sets(40), min in 1u32..4) {
            let sets: Vec<BTreeSet<u64>> = keys.iter().map(|k| k.iter().copied().collect()).collect();
            let mut expected = Vec::new();
            for a in 0..sets.len() {
                for b in a + 1..sets.len() {
                    if sets[a].intersection(&sets[b]).count() >= min as usize {
                        expected.push((a as u32, b as u32));
                    }
                }
            }
            let (pairs, _) = SharedKeyTable::new(entries(&keys), min)
                .candidate_pairs(CandidateLimits::UNLIMITED);
            prop_assert_eq!(pairs, expected);
        }

        #[test]
        fn limits_match_counting_every_pair(
            keys in key_sets(12),
            min in 1u32..4,
            bucket_cap in 1usize..20,
            candidate_budget in 1usize..6,
        ) {
            let limits = CandidateLimits { bucket_cap, candidate_budget, priority_keys: false };
            let (pairs, _) = SharedKeyTable::new(entries(&keys), min).candidate_pairs(limits);
            prop_assert_eq!(pairs, reference(&keys, min as usize, limits), "{:?}", limits);
        }
    }

    #[test]
    fn the_budget_keeps_each_documents_best_partners() {
        // A flood: every document shares one key with every other.
        let keys: Vec<Vec<u64>> = (0..50).map(|_| vec![7, 8]).collect();
        let (pairs, stats) =
            SharedKeyTable::new(entries(&keys), 2).candidate_pairs(CandidateLimits {
                bucket_cap: usize::MAX,
                candidate_budget: 2,
                priority_keys: false,
            });
        assert!(pairs.len() <= 50 * 2, "{}", pairs.len());
        assert!(stats.budget_hits > 0);
        // A document keeps its lowest-numbered partners.
        assert!(pairs.contains(&(0, 49)) && !pairs.contains(&(48, 49)));
    }

    #[test]
    fn the_ceiling_is_raised_until_the_count_is_exact() {
        // 2,000 documents share one key (their bounds overflow the budget, but no pair of
        // them shares two), and 40 share two keys: document i has i partners, 780 pairs in
        // all, which fit in the budget of 2,040. Counting stops at 4, then 16 partners per
        // document (counts that reach the ceiling), and is exact at 64.
        let mut keys: Vec<Vec<u64>> = (0..40).map(|_| vec![1, 2]).collect();
        keys.extend((0..2000u64).map(|d| vec![9, 100 + d]));
        let limits = CandidateLimits {
            bucket_cap: usize::MAX,
            candidate_budget: 1,
            priority_keys: false,
        };
        let (pairs, stats) = SharedKeyTable::new(entries(&keys), 2).candidate_pairs(limits);
        assert_eq!(pairs, reference(&keys, 2, limits));
        assert_eq!(pairs.len(), 780);
        assert_eq!((stats.budget_hits, stats.partner_limit), (0, u64::MAX));
    }
}
