use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

/// Sizes of the buckets seen by [`KeyTable::candidate_pairs_with_stats`], and how often the
/// [`CandidateLimits`] cut in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BucketStats {
    /// Buckets holding two documents or more.
    pub shared_buckets: u64,
    /// Documents in the largest bucket.
    pub largest_bucket: u64,
    /// Pairs the buckets hold under the bucket cap, before deduplication and before the
    /// candidate budget.
    pub raw_pairs: u64,
    /// Buckets larger than the cap, whose members were paired with the first `cap` only.
    pub capped_buckets: u64,
    /// Documents with more earlier partners than the partner limit set by the candidate
    /// budget, paired with their best-ranked ones only (0 unless the budget cut in).
    pub budget_hits: u64,
    /// Most earlier partners a document could keep (`u64::MAX` when the budget did not cut
    /// in): the level found for [`CandidateLimits::candidate_budget`].
    pub partner_limit: u64,
    /// Documents left out of capped buckets, summed over those buckets (the n-gram
    /// index, whose greedy pass sees the first `bucket_cap` members of a bucket only).
    pub left_out: u64,
    /// Work the generator did itself: the n-gram index's similarity computations, the
    /// Hamming join's fingerprint comparisons, the shared-key merge's reads.
    pub comparisons: u64,
    /// The pair limit an exact join passed and stopped at (0: none; see
    /// [`crate::JoinBudget`]): its pairs are then incomplete.
    pub pair_limit_passed: u64,
}

/// Default largest bucket paired in full (see [`CandidateLimits::bucket_cap`]).
pub const DEFAULT_BUCKET_CAP: usize = 1000;

/// Default candidate pairs per document, on average over the table (see
/// [`CandidateLimits::candidate_budget`]).
pub const DEFAULT_CANDIDATE_BUDGET: usize = 32;

/// What keeps candidate generation linear in the number of documents whatever the keys.
///
/// Documents are numbered by rank, best first (the engine numbers them by the keep policy,
/// so the documents that would be kept come first). Every candidate pair `(a, b)`, `a < b`,
/// belongs to its worse-ranked document `b`; `a` is one of the *earlier partners* of `b`.
/// That is all representative clustering needs: a document is only ever compared with an
/// already-kept, better-ranked one, and the best-ranked partners are the likeliest kept.
///
/// - `bucket_cap`: in a bucket of more than `bucket_cap` documents, a member's earlier
///   partners are the `bucket_cap` first members only, the bucket's *anchors*, instead of
///   every better-ranked member.
/// - `candidate_budget`: at most `documents x candidate_budget` pairs in all. The cap alone
///   does not bound a template flood (one-line notices, verification codes): each document
///   sits in dozens of buckets, capped or not, with different members. When the pairs of the
///   buckets would exceed the budget, a *partner limit* is set, the highest level `L` such
///   that the documents, each counted for at most `L` partners, fit in the budget (water
///   filling); a document with more than `L` distinct earlier partners keeps its `L`
///   best-ranked ones (a *budget hit*). Documents with few partners are never cut, `L` is at
///   least `candidate_budget`, and a corpus whose buckets fit the budget (every ordinary
///   corpus we measured: news, Reuters, THUCNews titles, Sohu pairs) gets exactly the pairs
///   of the buckets. The per-document count used for the level is the number of bucket
///   members before it (an upper bound of its distinct partners, cheap to compute).
///
/// Both must be at least 1 for any pair to be produced (the engine's options refuse 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CandidateLimits {
    /// Members of a larger bucket are paired with its `bucket_cap` best-ranked members only.
    pub bucket_cap: usize,
    /// Candidate pairs per document on average: at most `documents x candidate_budget` in
    /// all, where `documents` is the highest document number plus one.
    pub candidate_budget: usize,
    /// Whether keys with [`neardup_core::PRIORITY_KEY`] set are priority keys
    /// ([`neardup_core::Join::PriorityKeys`]): a document over the partner limit keeps the
    /// partners of its priority buckets first (the best-ranked of them), then its best-ranked
    /// other partners up to the limit. The level and the pairs' count are unchanged.
    pub priority_keys: bool,
}

impl CandidateLimits {
    /// No limit: every pair sharing a key (quadratic on a flood).
    pub const UNLIMITED: CandidateLimits = CandidateLimits {
        bucket_cap: usize::MAX,
        candidate_budget: usize::MAX,
        priority_keys: false,
    };
}

impl Default for CandidateLimits {
    fn default() -> Self {
        CandidateLimits {
            bucket_cap: DEFAULT_BUCKET_CAP,
            candidate_budget: DEFAULT_CANDIDATE_BUDGET,
            priority_keys: false,
        }
    }
}

/// A batch table of `(key, document)` entries.
#[derive(Debug, Clone, Default)]
pub struct KeyTable {
    entries: Vec<(u64, u32)>,
    /// The documents the candidate budget counts, at least (see [`KeyTable::with_documents`]).
    documents: usize,
}

impl KeyTable {
    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// A table from ready-made entries.
    pub fn from_entries(entries: Vec<(u64, u32)>) -> KeyTable {
        KeyTable {
            entries,
            documents: 0,
        }
    }

    /// Counts at least `documents` documents for the candidate budget (`documents x
    /// candidate_budget` pairs), whatever the entries: a table given only the entries of
    /// shared keys (the others pair nothing) keeps the budget of all its documents.
    pub fn with_documents(mut self, documents: usize) -> KeyTable {
        self.documents = documents;
        self
    }

    /// Adds the keys of `document`.
    pub fn insert(&mut self, document: u32, keys: &[u64]) {
        self.entries.extend(keys.iter().map(|&key| (key, document)));
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every pair `(a, b)` with `a < b` sharing at least one key, sorted, without repeats.
    pub fn candidate_pairs(self) -> Vec<(u32, u32)> {
        self.candidate_pairs_with_stats(CandidateLimits::UNLIMITED)
            .0
    }

    /// Candidate pairs `(a, b)`, `a < b`, sorted, without repeats, within `limits`, with
    /// bucket statistics. Document numbers are ranks: lower is better.
    ///
    /// A document `b` is paired with the documents `a < b` it shares a key with, except that
    /// in a bucket of more than `limits.bucket_cap` documents only the `bucket_cap` first
    /// members count (the anchors), and that when the pairs would exceed `documents x
    /// limits.candidate_budget`, a document keeps only its lowest-numbered partners, up to
    /// the partner limit (see [`CandidateLimits`]). Time and memory are linear in the number
    /// of entries whatever the keys: a flooded bucket is read up to the limit per member, and
    /// no pair beyond the limits is ever materialised.
    pub fn candidate_pairs_with_stats(
        mut self,
        limits: CandidateLimits,
    ) -> (Vec<(u32, u32)>, BucketStats) {
        self.entries.par_sort_unstable();
        self.entries.dedup();
        let index = PartnerIndex::new(&self.entries, limits.bucket_cap, self.documents);
        let documents = index.upper_bounds.len() as u64;
        let limit = partner_limit(
            &index.upper_bounds,
            documents.saturating_mul(limits.candidate_budget as u64),
        );
        let (mut packed, budget_hits) = index.pairs(&self.entries, limits, limit);
        let stats = BucketStats {
            budget_hits,
            partner_limit: limit,
            ..index.stats
        };
        drop(index);
        drop(self.entries);
        packed.par_sort_unstable();
        let pairs = packed
            .into_iter()
            .map(|p| ((p >> 32) as u32, p as u32))
            .collect();
        (pairs, stats)
    }
}

/// For every document, the buckets in which it has earlier partners: the start (in the
/// sorted entries) of each shared bucket where it is not the first member, grouped by
/// document (a counting sort, so linear).
pub(crate) struct PartnerIndex {
    /// `starts[offsets[d]..offsets[d + 1]]` are the bucket starts of document `d`.
    offsets: Vec<usize>,
    starts: Vec<usize>,
    /// Per document, the members before it in its buckets (anchors only in a capped one):
    /// an upper bound of its distinct earlier partners.
    pub(crate) upper_bounds: Vec<u64>,
    pub(crate) stats: BucketStats,
}

impl PartnerIndex {
    /// The index of sorted, deduplicated `(key, document)` entries under bucket cap `cap`,
    /// over at least `documents` documents.
    pub(crate) fn new(entries: &[(u64, u32)], cap: usize, documents: usize) -> PartnerIndex {
        let highest = entries.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
        let documents = highest.max(documents);
        let mut stats = BucketStats::default();
        let mut offsets = vec![0usize; documents + 1];
        let mut upper_bounds = vec![0u64; documents];
        for bucket in shared_buckets(entries) {
            stats.shared_buckets += 1;
            stats.largest_bucket = stats.largest_bucket.max(bucket.len() as u64);
            stats.raw_pairs += pair_count(bucket.len(), cap);
            stats.capped_buckets += u64::from(bucket.len() > cap);
            for (position, &(_, document)) in bucket.iter().enumerate().skip(1) {
                offsets[document as usize + 1] += 1;
                upper_bounds[document as usize] += position.min(cap) as u64;
            }
        }
        for d in 0..documents {
            offsets[d + 1] += offsets[d];
        }
        let mut next = offsets.clone();
        let mut starts = vec![0usize; offsets[documents]];
        let mut start = 0;
        for bucket in entries.chunk_by(|x, y| x.0 == y.0) {
            for &(_, document) in &bucket[1..] {
                starts[next[document as usize]] = start;
                next[document as usize] += 1;
            }
            start += bucket.len();
        }
        PartnerIndex {
            offsets,
            starts,
            upper_bounds,
            stats,
        }
    }

    /// The starts (in the sorted entries) of the shared buckets where `document` has
    /// earlier partners.
    pub(crate) fn starts_of(&self, document: u32) -> &[usize] {
        let document = document as usize;
        &self.starts[self.offsets[document]..self.offsets[document + 1]]
    }

    /// The pairs packed `a << 32 | b`, grouped by `b`, and the number of documents with more
    /// earlier partners than `limit`.
    fn pairs(
        &self,
        entries: &[(u64, u32)],
        limits: CandidateLimits,
        limit: u64,
    ) -> (Vec<u64>, u64) {
        let documents = self.offsets.len() - 1;
        let hits = AtomicU64::new(0);
        let take = (
            limits.bucket_cap,
            usize::try_from(limit).unwrap_or(usize::MAX),
        );
        let priority = limits.priority_keys && limit != u64::MAX;
        let packed = (0..documents as u32)
            .into_par_iter()
            .map_init(
                || (Vec::<u32>::new(), Vec::<u32>::new()),
                |(partners, others), document| {
                    let starts = self.starts_of(document);
                    let over = if priority {
                        priority_first(entries, starts, document, take, (partners, others))
                    } else {
                        best_partners(entries, starts, document, take, partners)
                    };
                    if over {
                        hits.fetch_add(1, Ordering::Relaxed);
                    }
                    let pack = |&partner: &u32| (u64::from(partner) << 32) | u64::from(document);
                    partners.iter().map(pack).collect::<Vec<u64>>()
                },
            )
            .flatten_iter()
            .collect();
        (packed, hits.into_inner())
    }
}

/// Shared buckets (two documents or more) of sorted, deduplicated entries.
fn shared_buckets(entries: &[(u64, u32)]) -> impl Iterator<Item = &[(u64, u32)]> {
    entries
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|bucket| bucket.len() > 1)
}

/// The partner limit: unlimited (`u64::MAX`) when the upper bounds fit in `budget` pairs,
/// else the highest `L` with `sum(min(bound, L)) <= budget` (at least `budget / documents`).
pub fn partner_limit(upper_bounds: &[u64], budget: u64) -> u64 {
    let total = |limit: u64| -> u64 { upper_bounds.par_iter().map(|&b| b.min(limit)).sum() };
    if total(u64::MAX) <= budget {
        return u64::MAX;
    }
    // total(low) <= budget < total(high).
    let (mut low, mut high) = (0u64, upper_bounds.iter().copied().max().unwrap_or(0));
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if total(middle) <= budget {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// [`best_partners`] under priority keys (see [`CandidateLimits::priority_keys`]): the best
/// partners of the priority buckets, then the best others up to `limit` in all, sorted; true
/// when `document` had more. `others` is scratch space.
fn priority_first(
    entries: &[(u64, u32)],
    starts: &[usize],
    document: u32,
    (bucket_cap, limit): (usize, usize),
    (partners, others): (&mut Vec<u32>, &mut Vec<u32>),
) -> bool {
    // The starts follow the sorted keys, and priority keys are the highest.
    let split = starts.partition_point(|&start| entries[start].0 < neardup_core::PRIORITY_KEY);
    let (ordinary, first) = starts.split_at(split);
    let limits = (bucket_cap, limit);
    let mut over = best_partners(entries, first, document, limits, partners);
    if ordinary.is_empty() {
        return over;
    }
    over |= best_partners(entries, ordinary, document, limits, others);
    let room = limit - partners.len();
    let mut added = 0;
    let kept = partners.len();
    for &other in others.iter() {
        if partners[..kept].binary_search(&other).is_ok() {
            continue;
        }
        if added == room {
            over = true;
            break;
        }
        partners.push(other);
        added += 1;
    }
    partners.sort_unstable();
    over
}

/// Puts in `partners` the `limit` best (lowest) distinct earlier partners of `document`,
/// sorted, from its buckets starting at `starts`, where `(bucket_cap, limit)` = `limits`;
/// true when it had more.
///
/// In a bucket, the earlier partners are the members before `document` (the bucket is
/// sorted by document and holds it), among the first `bucket_cap`. Once one bucket yields
/// `limit` partners, the largest of them bounds the answer, so later buckets are read only
/// below it: at most `limit` entries are read per bucket.
fn best_partners(
    entries: &[(u64, u32)],
    starts: &[usize],
    document: u32,
    (bucket_cap, limit): (usize, usize),
    partners: &mut Vec<u32>,
) -> bool {
    partners.clear();
    let mut bound = u32::MAX;
    let mut over = false;
    for &start in starts {
        let mut taken = 0;
        let earlier = entries[start..].iter().take(bucket_cap);
        for &(_, partner) in earlier.take_while(|e| e.1 < document) {
            if taken == limit || partner > bound {
                over = true;
                break;
            }
            partners.push(partner);
            taken += 1;
        }
        if taken == limit && limit > 0 {
            bound = bound.min(partners[partners.len() - 1]);
        }
    }
    partners.sort_unstable();
    partners.dedup();
    if partners.len() > limit {
        partners.truncate(limit);
        over = true;
    }
    over
}

/// The pairs a bucket of `size` documents holds under bucket cap `cap`.
fn pair_count(size: usize, cap: usize) -> u64 {
    let (size, anchors) = (size as u64, size.min(cap) as u64);
    // Pairs among the anchors, plus each other member with every anchor.
    (anchors * anchors.saturating_sub(1)) / 2 + (size - anchors) * anchors
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    /// The slow reference: compare every pair's key sets.
    fn brute_force(keys: &[Vec<u64>]) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for a in 0..keys.len() {
            for b in a + 1..keys.len() {
                if keys[a].iter().any(|k| keys[b].contains(k)) {
                    pairs.push((a as u32, b as u32));
                }
            }
        }
        pairs
    }

    /// The slow reference of the limits: per document, the members before it in each shared
    /// bucket among the bucket's `cap` first; the partner limit by trying every level from
    /// the top; the `limit` lowest partners kept.
    fn limited_brute_force(keys: &[Vec<u64>], limits: CandidateLimits) -> Vec<(u32, u32)> {
        let mut buckets: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
        for (document, document_keys) in keys.iter().enumerate() {
            for &key in document_keys {
                buckets.entry(key).or_default().insert(document as u32);
            }
        }
        let mut partners = vec![BTreeSet::new(); keys.len()];
        // Under priority keys, the partners of priority buckets.
        let mut firsts = vec![BTreeSet::new(); keys.len()];
        let mut upper_bounds = vec![0usize; keys.len()];
        for (&key, members) in &buckets {
            let members: Vec<u32> = members.iter().copied().collect();
            let first = limits.priority_keys && key >= neardup_core::PRIORITY_KEY;
            for (position, &b) in members.iter().enumerate() {
                let anchors = &members[..position.min(limits.bucket_cap)];
                partners[b as usize].extend(anchors);
                if first {
                    firsts[b as usize].extend(anchors);
                }
                upper_bounds[b as usize] += anchors.len();
            }
        }
        let fits = |limit: usize| {
            let total: usize = upper_bounds.iter().map(|&u| u.min(limit)).sum();
            total <= keys.len() * limits.candidate_budget
        };
        let most = upper_bounds.iter().copied().max().unwrap_or(0);
        let limit = if fits(most) {
            usize::MAX
        } else {
            (0..most).rev().find(|&l| fits(l)).unwrap_or(0)
        };
        let mut pairs = Vec::new();
        for (b, (partners, firsts)) in partners.into_iter().zip(firsts).enumerate() {
            let mut kept: Vec<u32> = firsts.iter().copied().take(limit).collect();
            let others = partners.into_iter().filter(|a| !firsts.contains(a));
            kept.extend(others.take(limit - kept.len()));
            pairs.extend(kept.into_iter().map(|a| (a, b as u32)));
        }
        pairs.sort_unstable();
        pairs
    }

    /// `documents` key lists of `per_document` keys below `key_space`.
    fn key_lists(
        documents: usize,
        per_document: usize,
        key_space: u64,
    ) -> impl Strategy<Value = Vec<Vec<u64>>> {
        let keys = prop::collection::vec(0..key_space, per_document);
        prop::collection::vec(keys, documents)
    }

    /// One deterministic sample of `strategy` (for workloads too large to run as many cases).
    fn sample<S: Strategy>(strategy: S) -> S::Value {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        proptest::strategy::ValueTree::current(&strategy.new_tree(&mut runner).unwrap())
    }

    fn table_of(keys: &[Vec<u64>]) -> KeyTable {
        let mut table = KeyTable::new();
        for (document, document_keys) in keys.iter().enumerate() {
            table.insert(document as u32, document_keys);
        }
        table
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn matches_brute_force(keys in (1usize..300, 1usize..6, 2u64..600)
            .prop_flat_map(|(documents, per_document, space)| key_lists(documents, per_document, space)))
        {
            prop_assert_eq!(table_of(&keys).candidate_pairs(), brute_force(&keys));
        }

        #[test]
        fn limits_match_the_reference_on_crowded_keys(
            keys in (1usize..200, 1usize..7, 2u64..60)
                .prop_flat_map(|(documents, per_document, space)| key_lists(documents, per_document, space)),
            bucket_cap in 1usize..60,
            candidate_budget in 1usize..30,
        ) {
            let limits = CandidateLimits { bucket_cap, candidate_budget, priority_keys: false };
            let (pairs, _) = table_of(&keys).candidate_pairs_with_stats(limits);
            prop_assert_eq!(pairs, limited_brute_force(&keys, limits), "{:?}", limits);
        }

        /// Under priority keys (a third of the key space), each document over the limit
        /// keeps its best priority partners, then its best others: the reference's pairs,
        /// as many as without priority, and the same pairs when the budget does not cut.
        #[test]
        fn priority_keys_match_the_reference_on_crowded_keys(
            keys in (1usize..200, 1usize..7, 3u64..60)
                .prop_flat_map(|(documents, per_document, space)| key_lists(documents, per_document, space)),
            bucket_cap in 1usize..60,
            candidate_budget in 1usize..30,
        ) {
            let keys = with_priority_keys(keys);
            let limits = CandidateLimits { bucket_cap, candidate_budget, priority_keys: true };
            let (pairs, stats) = table_of(&keys).candidate_pairs_with_stats(limits);
            prop_assert_eq!(&pairs, &limited_brute_force(&keys, limits), "{:?}", limits);
            let plain = CandidateLimits { priority_keys: false, ..limits };
            let (by_rank, plain_stats) = table_of(&keys).candidate_pairs_with_stats(plain);
            prop_assert_eq!(pairs.len(), by_rank.len());
            prop_assert_eq!(stats, plain_stats);
            if stats.budget_hits == 0 {
                prop_assert_eq!(pairs, by_rank);
            }
        }
    }

    /// `keys` with every key divisible by 3 made a priority key.
    fn with_priority_keys(keys: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        let priority = |key: u64| match key % 3 {
            0 => key | neardup_core::PRIORITY_KEY,
            _ => key,
        };
        (keys.into_iter())
            .map(|list| list.into_iter().map(priority).collect())
            .collect()
    }

    /// A flood of 300 documents in two ordinary buckets, where each document's copy (the
    /// document 150 ranks later) shares a priority key with it: under a budget of 2 pairs
    /// a document, every copy is kept, where ranks alone keep the flood's first members.
    #[test]
    fn a_flood_keeps_the_copies_of_priority_keys() {
        let copies = 150u64;
        let keys: Vec<Vec<u64>> = (0..2 * copies)
            .map(|d| vec![1, 2, (d % copies) | neardup_core::PRIORITY_KEY])
            .collect();
        let limits = CandidateLimits {
            bucket_cap: 1000,
            candidate_budget: 2,
            priority_keys: true,
        };
        let copy_pairs = |pairs: &[(u32, u32)]| {
            (pairs.iter())
                .filter(|&&(a, b)| u64::from(b - a) == copies)
                .count()
        };
        let (pairs, stats) = table_of(&keys).candidate_pairs_with_stats(limits);
        assert!(stats.budget_hits > 0, "{stats:?}");
        assert_eq!(copy_pairs(&pairs), copies as usize, "{stats:?}");
        let plain = CandidateLimits {
            priority_keys: false,
            ..limits
        };
        let (by_rank, _) = table_of(&keys).candidate_pairs_with_stats(plain);
        assert!(copy_pairs(&by_rank) < copies as usize / 10);
    }

    #[test]
    fn ordinary_keys_are_far_from_the_default_limits() {
        let keys = sample(key_lists(300, 4, 500));
        let (limited, stats) =
            table_of(&keys).candidate_pairs_with_stats(CandidateLimits::default());
        assert_eq!(limited, brute_force(&keys));
        assert_eq!((stats.capped_buckets, stats.budget_hits), (0, 0));
    }

    #[test]
    fn crowded_keys_hit_the_budget() {
        let keys = sample(key_lists(400, 6, 60));
        for (bucket_cap, candidate_budget) in [(5, 3), (50, 7), (1000, 20), (1, 1)] {
            let limits = CandidateLimits {
                bucket_cap,
                candidate_budget,
                priority_keys: false,
            };
            let (pairs, stats) = table_of(&keys).candidate_pairs_with_stats(limits);
            assert_eq!(pairs, limited_brute_force(&keys, limits), "{limits:?}");
            assert!(stats.budget_hits > 0, "{limits:?}");
        }
    }

    #[test]
    fn template_flood_candidates_stay_within_the_budget() {
        // 4,000 documents, each in 16 of 160 buckets: buckets of about 400 documents, under
        // the cap, with different members, so every document meets nearly all the others
        // (about 8 million pairs without the budget).
        let keys = sample(key_lists(4000, 16, 160));
        let (pairs, stats) = table_of(&keys).candidate_pairs_with_stats(CandidateLimits::default());
        assert_eq!(stats.capped_buckets, 0);
        assert!(stats.raw_pairs > 4_000_000, "{stats:?}");
        assert!(
            pairs.len() <= 4000 * DEFAULT_CANDIDATE_BUDGET,
            "{} pairs",
            pairs.len()
        );
        // Nearly every document is over the partner limit and keeps its best-ranked partners.
        assert!(stats.budget_hits > 3800, "{stats:?}");
        let last: Vec<u32> = pairs.iter().filter(|p| p.1 == 3999).map(|p| p.0).collect();
        assert_eq!(last.len() as u64, stats.partner_limit);
        assert!(last
            .iter()
            .all(|&a| a < 2 * DEFAULT_CANDIDATE_BUDGET as u32));
    }

    #[test]
    fn zero_limits_pair_nothing() {
        let keys = sample(key_lists(50, 4, 10));
        for limits in [
            CandidateLimits {
                bucket_cap: 0,
                ..CandidateLimits::default()
            },
            CandidateLimits {
                candidate_budget: 0,
                ..CandidateLimits::default()
            },
        ] {
            assert!(table_of(&keys)
                .candidate_pairs_with_stats(limits)
                .0
                .is_empty());
        }
    }

    #[test]
    fn repeated_keys_of_one_document_make_no_self_pair() {
        let mut table = KeyTable::new();
        table.insert(3, &[1, 1, 1]);
        table.insert(5, &[1]);
        let (pairs, stats) = table.candidate_pairs_with_stats(CandidateLimits::default());
        assert_eq!(pairs, vec![(3, 5)]);
        let expected = BucketStats {
            shared_buckets: 1,
            largest_bucket: 2,
            raw_pairs: 1,
            capped_buckets: 0,
            budget_hits: 0,
            partner_limit: u64::MAX,
            left_out: 0,
            comparisons: 0,
            pair_limit_passed: 0,
        };
        assert_eq!(stats, expected);
    }

    #[test]
    fn oversized_buckets_pair_members_with_anchors_only() {
        let mut table = KeyTable::new();
        for document in 0..6 {
            table.insert(document, &[9]);
        }
        let limits = CandidateLimits {
            bucket_cap: 2,
            ..CandidateLimits::default()
        };
        let (pairs, stats) = table.candidate_pairs_with_stats(limits);
        // Anchors 0 and 1: (0, 1), then 0 and 1 with each of 2..6.
        assert_eq!(pairs.len(), 1 + 2 * 4);
        assert!(pairs.iter().all(|&(a, _)| a < 2));
        assert_eq!((stats.raw_pairs, stats.capped_buckets), (9, 1));
    }
}
