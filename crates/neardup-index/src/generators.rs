//! The candidate generators besides the symmetric [`KeyTable`](crate::KeyTable) and the
//! [`SharedKeyTable`](crate::SharedKeyTable): a probe side that differs from the stored side,
//! and the exact joins that see every token set or sequence first.
//!
//! All of them number documents by rank (lower is better, as the engine numbers them by the
//! keep policy) and return the pairs `(a, b)`, `a < b`, sorted, without repeats.

use rayon::prelude::*;

use crate::key_table::{partner_limit, BucketStats, CandidateLimits};
use crate::{ngram_dedup, pass_join_within, set_join_within, EditBound, JoinBudget, SetMeasure};

/// The seam between a method's candidate shape and the engine: fed by the engine with every
/// document's keys (or tokens), asked once for the candidate pairs.
pub trait CandidateGenerator {
    /// The candidate pairs `(a, b)`, `a < b`, sorted, without repeats, within `limits` where
    /// the generator accepts them, with bucket statistics.
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats);
}

impl CandidateGenerator for crate::KeyTable {
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        self.candidate_pairs_with_stats(limits)
    }
}

/// Keeps each document's `limit` best partners when `pairs` (sorted, `a < b`) exceed
/// `documents x budget`, with the same water-filling level as the key table; returns the
/// number of documents cut and the level (`u64::MAX` when nothing was cut).
fn apply_budget(
    pairs: Vec<(u32, u32)>,
    documents: usize,
    budget: usize,
) -> (Vec<(u32, u32)>, u64, u64) {
    let mut partners = vec![0u64; documents];
    for &(_, b) in &pairs {
        partners[b as usize] += 1;
    }
    let limit = partner_limit(&partners, (documents as u64).saturating_mul(budget as u64));
    if limit == u64::MAX {
        return (pairs, 0, u64::MAX);
    }
    let hits = partners.iter().filter(|&&p| p > limit).count() as u64;
    // Group by the worse-ranked document, keep its lowest partners, sort back.
    let mut by_b: Vec<(u32, u32)> = pairs.into_iter().map(|(a, b)| (b, a)).collect();
    by_b.par_sort_unstable();
    let mut kept: Vec<(u32, u32)> = by_b
        .chunk_by(|x, y| x.0 == y.0)
        .flat_map(|group| group.iter().take(limit as usize).map(|&(b, a)| (a, b)))
        .collect();
    kept.par_sort_unstable();
    (kept, hits, limit)
}

/// Counts a shared bucket of `size` documents in `stats`.
fn count_bucket(stats: &mut BucketStats, size: usize, cap: usize) {
    stats.shared_buckets += 1;
    stats.largest_bucket = stats.largest_bucket.max(size as u64);
    stats.capped_buckets += u64::from(size > cap);
}

/// The candidate budget over sorted, distinct `pairs`, recorded in `stats`.
fn budgeted(
    pairs: Vec<(u32, u32)>,
    documents: usize,
    limits: CandidateLimits,
    mut stats: BucketStats,
) -> (Vec<(u32, u32)>, BucketStats) {
    let (pairs, hits, limit) = apply_budget(pairs, documents, limits.candidate_budget);
    stats.budget_hits = hits;
    stats.partner_limit = limit;
    (pairs, stats)
}

fn documents_in(entries: &[(u64, u32)]) -> usize {
    entries.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0)
}

/// Documents stored under some keys and looking up others (`neardup_core::Join::Probe`):
/// `(a, b)` is a candidate when a probe key of one is a stored key of the other. Multi-index
/// hashing stores the exact block values of a fingerprint and probes every value within a
/// radius; Pass-Join stores segments and probes substrings.
///
/// The bucket cap applies to the stored side (a probe meets at most `bucket_cap` stored
/// documents per key, the best-ranked ones); the candidate budget to the result.
#[derive(Debug, Clone, Default)]
pub struct ProbeTable {
    stored: Vec<(u64, u32)>,
    probes: Vec<(u64, u32)>,
}

impl ProbeTable {
    /// A table from `(key, document)` entries of both sides.
    pub fn new(stored: Vec<(u64, u32)>, probes: Vec<(u64, u32)>) -> ProbeTable {
        ProbeTable { stored, probes }
    }
}

impl CandidateGenerator for ProbeTable {
    fn candidate_pairs(mut self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        self.stored.par_sort_unstable();
        self.stored.dedup();
        self.probes.par_sort_unstable();
        self.probes.dedup();
        let documents = documents_in(&self.stored).max(documents_in(&self.probes));
        let mut stats = BucketStats::default();
        let mut pairs = Vec::new();
        let mut stored = self.stored.chunk_by(|x, y| x.0 == y.0).peekable();
        for probe in self.probes.chunk_by(|x, y| x.0 == y.0) {
            let key = probe[0].0;
            while stored.peek().is_some_and(|bucket| bucket[0].0 < key) {
                stored.next();
            }
            let Some(bucket) = stored.peek().filter(|bucket| bucket[0].0 == key) else {
                continue;
            };
            count_bucket(&mut stats, bucket.len(), limits.bucket_cap);
            for &(_, p) in probe {
                for &(_, s) in bucket.iter().take(limits.bucket_cap) {
                    if s != p {
                        pairs.push((s.min(p), s.max(p)));
                    }
                }
            }
        }
        stats.raw_pairs = pairs.len() as u64;
        pairs.par_sort_unstable();
        pairs.dedup();
        budgeted(pairs, documents, limits, stats)
    }
}

/// An exact set-similarity self-join (`neardup_core::Join::Prefix`): PPJoin with size,
/// prefix and positional filters and an early-exit verification ([`crate::set_join`]).
///
/// It sees every token set first (the token order is corpus-wide, rarest first). Every pair
/// reaching the threshold is a candidate and nothing below it is: the pairs come verified.
/// The candidate budget bounds the answer: more than `documents x candidate_budget` pairs (a
/// template flood, whose exact answer is quadratic) stops the join early and is reported in
/// [`BucketStats::pair_limit_passed`], which the engine turns into an error.
#[derive(Debug, Clone)]
pub struct PrefixJoin {
    sets: Vec<(u32, Vec<u64>)>,
    measure: SetMeasure,
    threshold: f64,
}

impl PrefixJoin {
    /// A join of `(document, tokens)` (tokens in any order, repeats ignored) under `measure`
    /// at `threshold`, in `(0, 1]`.
    pub fn new(sets: Vec<(u32, Vec<u64>)>, measure: SetMeasure, threshold: f64) -> PrefixJoin {
        PrefixJoin {
            sets,
            measure,
            threshold,
        }
    }
}

/// A join whose method checks templates (`neardup_core::RareJoin`): the join `plain` of the
/// documents that are not templated (the prefix join of their tokens, or the n-gram index of
/// their characters), and the join of rare elements, of which only the pairs with a templated
/// side are kept; with templates duplicate, the pairs of [`anchor_pairs`] too. A templated
/// document never enters `plain`, so a flood of one template's fillings, which share every
/// token and n-gram of the template, costs the rare join, not the square of a crowd.
/// Statistics add up; either join passing its pair limit stops the run as [`PrefixJoin`] does.
#[derive(Debug, Clone)]
pub struct TemplatedJoin<P> {
    /// The join of the documents that are not templated.
    pub(crate) plain: P,
    /// The join of rare elements; `None` when no document is templated.
    pub(crate) rare: Option<PrefixJoin>,
    /// The templated documents, ascending.
    pub(crate) templated: Vec<u32>,
    /// `(template key, rank)` of the templated documents with templates duplicate (see
    /// [`anchor_pairs`]); empty otherwise.
    pub(crate) anchors: Vec<(u64, u32)>,
}

/// The fillings each templated document is paired with among those sharing a template key:
/// the first ones by rank.
pub const TEMPLATE_ANCHORS: usize = 3;

/// The pairs of `(key, rank)` entries sharing a key, each member with the first
/// [`TEMPLATE_ANCHORS`] members of the key (by rank): at most that many pairs per entry, so
/// that a template's fillings meet its first ones in linear work, not every other one.
pub(crate) fn anchor_pairs(mut entries: Vec<(u64, u32)>) -> Vec<(u32, u32)> {
    entries.par_sort_unstable();
    entries.dedup();
    let mut pairs = Vec::new();
    for run in entries.chunk_by(|a, b| a.0 == b.0) {
        for (i, &(_, member)) in run.iter().enumerate().skip(1) {
            let anchors = &run[..i.min(TEMPLATE_ANCHORS)];
            pairs.extend(
                anchors
                    .iter()
                    .map(|&(_, anchor)| (anchor.min(member), anchor.max(member))),
            );
        }
    }
    pairs
}

impl<P: CandidateGenerator> CandidateGenerator for TemplatedJoin<P> {
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        let (mut pairs, mut stats) = self.plain.candidate_pairs(limits);
        let anchored = anchor_pairs(self.anchors);
        let extended = !anchored.is_empty();
        stats.raw_pairs += anchored.len() as u64;
        pairs.extend(anchored);
        let Some(rare) = self.rare else {
            // The plain join's pairs are sorted and distinct already.
            if extended {
                pairs.par_sort_unstable();
                pairs.dedup();
            }
            return (pairs, stats);
        };
        let (rare_pairs, rare_stats) = rare.candidate_pairs(limits);
        let templated = |document: u32| self.templated.binary_search(&document).is_ok();
        pairs.extend((rare_pairs.into_iter()).filter(|&(a, b)| templated(a) || templated(b)));
        pairs.par_sort_unstable();
        pairs.dedup();
        stats.raw_pairs += rare_stats.raw_pairs;
        stats.budget_hits += rare_stats.budget_hits;
        stats.pair_limit_passed = stats.pair_limit_passed.max(rare_stats.pair_limit_passed);
        (pairs, stats)
    }
}

/// Maps pairs of positions to pairs of documents, `a < b`, sorted.
fn by_document(documents: &[u32], pairs: impl Iterator<Item = (u32, u32)>) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = pairs
        .map(|(x, y)| {
            let (a, b) = (documents[x as usize], documents[y as usize]);
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

/// Statistics of an exact join under `budget`; `over` when it passed its pair limit.
fn join_stats(pairs: usize, cut: u64, over: bool, budget: JoinBudget) -> BucketStats {
    BucketStats {
        raw_pairs: pairs as u64,
        budget_hits: cut,
        partner_limit: u64::MAX,
        pair_limit_passed: if over { budget.pairs as u64 } else { 0 },
        ..BucketStats::default()
    }
}

/// The budget of an exact join of `documents` under `limits` (see [`JoinBudget`]).
fn join_budget(documents: usize, limits: CandidateLimits) -> JoinBudget {
    JoinBudget::for_corpus(documents, limits.candidate_budget)
}

impl CandidateGenerator for PrefixJoin {
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        let (documents, sets): (Vec<u32>, Vec<Vec<u64>>) = self.sets.into_iter().unzip();
        let budget = join_budget(sets.len(), limits);
        let (joined, cut, over) = set_join_within(&sets, self.measure, self.threshold, budget);
        let stats = join_stats(joined.len(), cut, over, budget);
        let pairs = by_document(&documents, joined.into_iter().map(|(a, b, _)| (a, b)));
        (pairs, stats)
    }
}

/// An exact edit-distance self-join (`neardup_core::Join::Edit`): Pass-Join's partition
/// filter and a verification that stops once the bound is out of reach
/// ([`crate::pass_join`]). The pairs come verified; the candidate budget applies as in
/// [`PrefixJoin`].
#[derive(Debug, Clone)]
pub struct EditJoin {
    sequences: Vec<(u32, Vec<u32>)>,
    bound: EditBound,
}

impl EditJoin {
    /// A join of `(document, items)` (characters after normalisation) within `bound`.
    pub fn new(sequences: Vec<(u32, Vec<u32>)>, bound: EditBound) -> EditJoin {
        EditJoin { sequences, bound }
    }
}

impl CandidateGenerator for EditJoin {
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        let (documents, sequences): (Vec<u32>, Vec<Vec<u32>>) = self.sequences.into_iter().unzip();
        let budget = join_budget(sequences.len(), limits);
        let (joined, cut, over) = pass_join_within(&sequences, self.bound, budget);
        let stats = join_stats(joined.len(), cut, over, budget);
        let pairs = by_document(&documents, joined.into_iter().map(|(a, b, _)| (a, b)));
        (pairs, stats)
    }
}

/// The all-m-gram index with its greedy bucket pass (`neardup_core::Join::NgramBuckets`,
/// [`crate::ngram_dedup`]): every `m`-gram of a document is a key, each bucket is walked in
/// rank order against its representatives so far with the method's own measure (`similar`),
/// and the pairs found are the candidates. Buckets over the bucket cap keep their first
/// `bucket_cap` (best-ranked) documents; the others are counted in
/// [`BucketStats::left_out`], never silently dropped. The candidate budget does not apply
/// (a document is paired with one representative per bucket at most).
pub struct NgramBuckets<F> {
    sequences: Vec<(u32, Vec<u32>)>,
    m: usize,
    similar: F,
}

impl<F: Fn(u32, u32) -> Option<f64> + Sync> NgramBuckets<F> {
    /// The index of `(document, items)` with `m`-gram keys; `similar(a, b)` (documents)
    /// returns the similarity of a duplicate pair.
    pub fn new(sequences: Vec<(u32, Vec<u32>)>, m: usize, similar: F) -> NgramBuckets<F> {
        NgramBuckets {
            sequences,
            m,
            similar,
        }
    }
}

impl<F: Fn(u32, u32) -> Option<f64> + Sync> CandidateGenerator for NgramBuckets<F> {
    fn candidate_pairs(self, limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        let mut sequences = self.sequences;
        // The greedy pass walks each bucket in rank order.
        sequences.sort_unstable_by_key(|(document, _)| *document);
        let (documents, sequences): (Vec<u32>, Vec<Vec<u32>>) = sequences.into_iter().unzip();
        let similar = &self.similar;
        let result = ngram_dedup(&sequences, self.m, limits.bucket_cap, |x, y| {
            similar(documents[x as usize], documents[y as usize])
        });
        let stats = BucketStats {
            raw_pairs: result.pairs.len() as u64,
            capped_buckets: result.capped_buckets,
            left_out: result.capped_texts,
            comparisons: result.comparisons,
            partner_limit: u64::MAX,
            ..BucketStats::default()
        };
        let pairs = by_document(&documents, result.pairs.into_iter().map(|(a, b, _)| (a, b)));
        (pairs, stats)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    /// A template key shared by a crowd pairs each member with its first anchors only: the
    /// pairs grow with the members, not their square, and every member meets the first one.
    #[test]
    fn anchor_pairs_link_every_member_to_the_first_in_linear_pairs() {
        let crowd = 1000u32;
        let mut keyed: Vec<(u64, u32)> = (0..crowd).rev().map(|rank| (7, rank)).collect();
        keyed.extend([(9, 5), (9, 3), (9, 5)]);
        let pairs = anchor_pairs(keyed);
        let most = TEMPLATE_ANCHORS as u32 * crowd;
        assert!(pairs.len() as u32 <= most, "{} pairs", pairs.len());
        for member in 1..crowd {
            assert!(pairs.contains(&(0, member)), "member {member}");
        }
        assert!(pairs.contains(&(3, 5)));
        assert!(pairs.iter().all(|&(a, b)| a < b));
    }

    fn entries(keys: &[Vec<u64>]) -> Vec<(u64, u32)> {
        let mut entries = Vec::new();
        for (document, document_keys) in keys.iter().enumerate() {
            entries.extend(document_keys.iter().map(|&k| (k, document as u32)));
        }
        entries
    }

    fn jaccard(a: &BTreeSet<u64>, b: &BTreeSet<u64>) -> f64 {
        let union = a.union(b).count();
        if union == 0 {
            return 0.0;
        }
        a.intersection(b).count() as f64 / union as f64
    }

    fn key_sets() -> impl Strategy<Value = Vec<Vec<u64>>> {
        prop::collection::vec(prop::collection::vec(0u64..40, 0..8), 0..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn probe_table_matches_brute_force(stored in key_sets(), probes in key_sets()) {
            let documents = stored.len().min(probes.len());
            let (stored, probes) = (&stored[..documents], &probes[..documents]);
            let mut expected = BTreeSet::new();
            for (a, stored_keys) in stored.iter().enumerate() {
                for (b, probe_keys) in probes.iter().enumerate() {
                    if a != b && probe_keys.iter().any(|k| stored_keys.contains(k)) {
                        expected.insert((a.min(b) as u32, a.max(b) as u32));
                    }
                }
            }
            let (pairs, _) = ProbeTable::new(entries(stored), entries(probes))
                .candidate_pairs(CandidateLimits::UNLIMITED);
            prop_assert_eq!(pairs, expected.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn prefix_join_has_no_false_negatives(keys in key_sets(), threshold in 0.2f64..1.0) {
            let sets: Vec<BTreeSet<u64>> = keys.iter().map(|k| k.iter().copied().collect()).collect();
            let input = keys.iter().enumerate().map(|(d, k)| (d as u32, k.clone())).collect();
            let (pairs, _) = PrefixJoin::new(input, SetMeasure::Jaccard, threshold).candidate_pairs(CandidateLimits::default());
            let found: BTreeSet<(u32, u32)> = pairs.iter().copied().collect();
            for a in 0..sets.len() {
                for b in a + 1..sets.len() {
                    let similarity = jaccard(&sets[a], &sets[b]);
                    if similarity >= threshold - 1e-9 {
                        prop_assert!(found.contains(&(a as u32, b as u32)), "{a} {b} {similarity}");
                    }
                }
            }
            // Nothing below the threshold: the join verifies.
            for &(a, b) in &pairs {
                let similarity = jaccard(&sets[a as usize], &sets[b as usize]);
                prop_assert!(similarity >= threshold - 1e-9, "{a} {b} {similarity}");
            }
        }
    }

    #[test]
    fn the_bucket_cap_limits_the_stored_side() {
        let stored: Vec<(u64, u32)> = (0..10).map(|d| (1, d)).collect();
        let (pairs, stats) =
            ProbeTable::new(stored, vec![(1, 10)]).candidate_pairs(CandidateLimits {
                bucket_cap: 3,
                candidate_budget: usize::MAX,
                priority_keys: false,
            });
        assert_eq!(pairs, vec![(0, 10), (1, 10), (2, 10)]);
        assert_eq!(stats.capped_buckets, 1);
    }
}
