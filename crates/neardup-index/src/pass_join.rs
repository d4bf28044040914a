//! Pass-Join: the exact self-join of sequences under an edit-distance bound (Li, Deng, Wang,
//! Feng, "Pass-Join: a partition-based method for similarity joins", PVLDB 2011).
//!
//! A sequence within `tau` edits of another contains one of that other's `tau + 1` segments
//! unchanged (pigeonhole: each edit touches at most one segment). Sequences are visited by
//! length; each is probed against the segments of the shorter-or-equal ones already indexed,
//! looking up only the substrings at the positions where a matching segment can be
//! (multi-match-aware selection: segment `i` of a sequence of length `l` can be found in a
//! sequence `Δ` longer only between `p_i - i` and `p_i + i`, and between
//! `p_i + Δ - (tau - i)` and `p_i + Δ + (tau - i)`), then indexed itself. Every candidate is
//! verified with an edit distance that stops once the bound is out of reach
//! ([`edit_distance_within`], the core's one implementation), so the result has no false
//! positive; the pigeonhole makes it have no false negative (property tests compare it with
//! all pairs).
//!
//! The segment index is built whole first; the probes then run in parallel, each sequence
//! against the ones before it in (length, position) order, so each pair is found once.
//!
//! Sequences too short to be cut into `tau + 1` non-empty segments are compared with every
//! sequence of a length within reach directly: their pairs are then a real part of the
//! answer (any two sequences of at most `tau` items are within `tau` edits).
//!
//! With a normalised bound (similarity `1 - d / max(len)` at least `t`), a pair of lengths
//! `l <= |s|` is within `floor((1 - t) |s|)` edits, and `|s| <= l / t`; so a sequence of
//! length `l` is cut for `tau_l = floor((1 - t) l / t)` edits, the most any longer partner
//! allows, and probed against lengths from `ceil(t |s|)`.

use hashbrown::HashMap;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use xxhash_rust::xxh3::xxh3_64;

pub use neardup_core::measure::edit_distance_within;

use crate::set_join::{probe_all, JoinBudget};

/// The edit-distance bound of a join.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EditBound {
    /// At most this many edits (insertions, deletions, substitutions).
    Absolute(u32),
    /// Edit similarity `1 - d / max(|a|, |b|)` at least this (two empty sequences: 1).
    Normalized(f64),
}

impl EditBound {
    /// The most edits a pair whose longer side has `longer` items may have.
    pub fn max_edits(self, longer: usize) -> u32 {
        match self {
            EditBound::Absolute(tau) => tau,
            EditBound::Normalized(t) => ((1.0 - t) * longer as f64 + 1e-9).floor().max(0.0) as u32,
        }
    }

    /// The shortest partner length of a sequence of `len` items.
    fn shortest_partner(self, len: usize) -> usize {
        match self {
            EditBound::Absolute(tau) => len.saturating_sub(tau as usize),
            EditBound::Normalized(t) => ((t * len as f64) - 1e-9).ceil().max(0.0) as usize,
        }
    }

    /// The edits a sequence of `len` items is cut for: the most any longer partner allows.
    fn cut_for(self, len: usize) -> u32 {
        match self {
            EditBound::Absolute(tau) => tau,
            EditBound::Normalized(t) if t > 0.0 => {
                ((1.0 - t) * len as f64 / t + 1e-9).floor().max(0.0) as u32
            }
            EditBound::Normalized(_) => u32::MAX,
        }
    }

    /// True when a pair at distance `d` with longer side `longer` is in the answer.
    pub fn accepts(self, d: u32, longer: usize) -> bool {
        d <= self.max_edits(longer)
    }
}

/// Start and length of segment `i` of `k` in a sequence of `len` items: the first
/// `k - len % k` segments have `len / k` items, the rest one more.
fn segment(len: usize, k: usize, i: usize) -> (usize, usize) {
    let base = len / k;
    let longer = len % k;
    let shorter = k - longer;
    if i < shorter {
        (i * base, base)
    } else {
        (shorter * base + (i - shorter) * (base + 1), base + 1)
    }
}

/// Every pair `(a, b, distance)` with `a < b` (positions in `sequences`) within `bound`,
/// sorted.
pub fn pass_join(sequences: &[Vec<u32>], bound: EditBound) -> Vec<(u32, u32, u32)> {
    pass_join_within(sequences, bound, JoinBudget::UNLIMITED).0
}

/// [`pass_join`] within `budget` (see [`JoinBudget`]): returns the pairs, the number of
/// sequences a per-sequence limit cut short or left out, and whether the pair limit was
/// passed.
///
/// A sequence whose bound against its longest partner needs `budget.edits` edits or more
/// (a long text under a normalised bound: probing it costs about the square of its
/// segments per partner length) is left out of the join: it has no pair, and counts as cut.
/// Memory is linear in the segments of the sequences joined: the index holds the lengths
/// that occur, not every length up to the longest.
pub fn pass_join_within(
    sequences: &[Vec<u32>],
    bound: EditBound,
    budget: JoinBudget,
) -> (Vec<(u32, u32, u32)>, u64, bool) {
    let left_out = |len: usize| (bound.cut_for(len) as usize).min(len) >= budget.edits;
    let mut order: Vec<u32> = (0..sequences.len() as u32)
        .filter(|&i| !left_out(sequences[i as usize].len()))
        .collect();
    let excluded = (sequences.len() - order.len()) as u64;
    order.sort_by_key(|&i| (sequences[i as usize].len(), i));
    // Every sequence's place in the visiting order: a sequence pairs with those before it.
    let mut place = vec![u32::MAX; sequences.len()];
    for (at, &id) in order.iter().enumerate() {
        place[id as usize] = at as u32;
    }
    let index = SegmentIndex::new(sequences, &order, bound);
    let histograms: Vec<Histogram> = sequences.par_iter().map(|s| Histogram::of(s)).collect();
    let (total, over) = (AtomicUsize::new(0), AtomicBool::new(false));
    let probe = |s_id: u32, candidates: &mut Vec<u32>, out: &mut Vec<(u32, u32, u32)>| {
        let s = &sequences[s_id as usize];
        let bound_s = bound.max_edits(s.len());
        if over.load(Ordering::Relaxed) {
            return false;
        }
        let before = |r: u32| place[r as usize] < place[s_id as usize];
        let mut cut = index.candidates(s, place[s_id as usize], budget, before, candidates);
        candidates.sort_unstable();
        candidates.dedup();
        let histogram = &histograms[s_id as usize];
        let mut found = 0;
        for &r_id in candidates.iter() {
            if found == budget.partners {
                cut = true;
                break;
            }
            let r = &sequences[r_id as usize];
            if histogram.distance(&histograms[r_id as usize]) > bound_s {
                continue;
            }
            if let Some(d) = edit_distance_within(r, s, bound_s) {
                out.push((r_id.min(s_id), r_id.max(s_id), d));
                found += 1;
            }
        }
        if total.fetch_add(found, Ordering::Relaxed) + found > budget.pairs {
            over.store(true, Ordering::Relaxed);
        }
        cut
    };
    let (mut pairs, cut) = probe_all(&order, Vec::new, probe);
    pairs.sort_unstable();
    let over = over.load(Ordering::Relaxed);
    (pairs, cut + excluded, over)
}

/// Pass-Join's index, built whole before the probes: per length that occurs (ascending),
/// the place of its first sequence in the visiting order, the segments of its sequences
/// under `(segment number, segment hash)` (or the sequences themselves when too short to
/// cut). A probe reads one small map per partner length, as with a table per possible
/// length, without one for every length up to the longest.
struct SegmentIndex {
    bound: EditBound,
    lengths: Vec<Length>,
}

/// The sequences of one length in a [`SegmentIndex`].
struct Length {
    len: usize,
    first: u32,
    short: Vec<u32>,
    segments: HashMap<(u32, u64), Vec<u32>>,
}

impl SegmentIndex {
    /// The index of the sequences in visiting `order` (by length, then position).
    fn new(sequences: &[Vec<u32>], order: &[u32], bound: EditBound) -> SegmentIndex {
        let mut lengths: Vec<Length> = Vec::new();
        for (at, &id) in order.iter().enumerate() {
            let s = &sequences[id as usize];
            if lengths.last().map(|l| l.len) != Some(s.len()) {
                lengths.push(Length {
                    len: s.len(),
                    first: at as u32,
                    short: Vec::new(),
                    segments: HashMap::new(),
                });
            }
            let Some(length) = lengths.last_mut() else {
                continue;
            };
            let tau = bound.cut_for(s.len());
            if tau as usize >= s.len() {
                length.short.push(id);
                continue;
            }
            let k = tau as usize + 1;
            for i in 0..k {
                let (p, len) = segment(s.len(), k, i);
                let key = (i as u32, hash(&s[p..p + len]));
                length.segments.entry(key).or_default().push(id);
            }
        }
        SegmentIndex { bound, lengths }
    }

    /// Puts in `candidates` (cleared first) the sequences `before(r)` whose segment `s`
    /// (at visiting place `place`) contains where a partner's segment can be, or too short to
    /// cut and of a length within reach; true when more than `budget.postings` were met
    /// (the search then stopped).
    fn candidates(
        &self,
        s: &[u32],
        place: u32,
        budget: JoinBudget,
        before: impl Fn(u32) -> bool,
        candidates: &mut Vec<u32>,
    ) -> bool {
        candidates.clear();
        let shortest = self.bound.shortest_partner(s.len());
        let from = self.lengths.partition_point(|l| l.len < shortest);
        let to = self.lengths.partition_point(|l| l.len <= s.len());
        for length in &self.lengths[from..to] {
            if length.first >= place {
                // No sequence of this length, or of any longer one, comes before `s`.
                break;
            }
            let l = length.len;
            candidates.extend(length.short.iter().copied().filter(|&r| before(r)));
            if candidates.len() > budget.postings {
                return true;
            }
            if length.segments.is_empty() {
                continue;
            }
            let tau = self.bound.cut_for(l) as usize;
            let k = tau + 1;
            let delta = s.len() - l;
            for i in 0..k {
                let (p, len) = segment(l, k, i);
                let low = p.saturating_sub(i).max((p + delta).saturating_sub(tau - i));
                let high = (p + i).min(p + delta + (tau - i)).min(s.len() - len);
                for start in low..=high {
                    let key = (i as u32, hash(&s[start..start + len]));
                    if let Some(ids) = length.segments.get(&key) {
                        candidates.extend(ids.iter().copied().filter(|&r| before(r)));
                        if candidates.len() > budget.postings {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

/// Item counts in 64 buckets (item modulo 64, each count capped at 255): a lower bound of the
/// edit distance, 64 bytes a sequence, checked before every verification. Each insertion or
/// deletion changes one bucket by one, each substitution at most two buckets by one each, in
/// opposite directions; so the larger of the total surplus and the total deficit of one
/// sequence's buckets over the other's never exceeds their edit distance (merging items into
/// buckets, and capping counts, only lower it).
struct Histogram([u8; 64]);

impl Histogram {
    fn of(items: &[u32]) -> Histogram {
        let mut counts = [0u8; 64];
        for &item in items {
            let count = &mut counts[(item % 64) as usize];
            *count = count.saturating_add(1);
        }
        Histogram(counts)
    }

    /// The frequency distance of the two sequences (a lower bound of their edit distance).
    fn distance(&self, other: &Histogram) -> u32 {
        let (mut surplus, mut deficit) = (0u32, 0u32);
        for (&a, &b) in self.0.iter().zip(&other.0) {
            surplus += u32::from(a.saturating_sub(b));
            deficit += u32::from(b.saturating_sub(a));
        }
        surplus.max(deficit)
    }
}

/// A 64-bit hash of a segment (collisions only cost a verification).
fn hash(items: &[u32]) -> u64 {
    let mut bytes = [0u8; 64];
    if items.len() <= 16 {
        for (chunk, item) in bytes.chunks_exact_mut(4).zip(items) {
            chunk.copy_from_slice(&item.to_le_bytes());
        }
        return xxh3_64(&bytes[..4 * items.len()]);
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for item in items {
        hasher.update(&item.to_le_bytes());
    }
    hasher.digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_frequency_distance_never_exceeds_the_edit_distance(
            a in prop::collection::vec(0u32..200, 0..300),
            b in prop::collection::vec(0u32..200, 0..300),
        ) {
            prop_assert!(Histogram::of(&a).distance(&Histogram::of(&b)) <= levenshtein(&a, &b));
        }
    }

    fn levenshtein(a: &[u32], b: &[u32]) -> u32 {
        let mut row: Vec<u32> = (0..=b.len() as u32).collect();
        for i in 1..=a.len() {
            let mut diagonal = row[0];
            row[0] = i as u32;
            for j in 1..=b.len() {
                let above = row[j];
                row[j] = (diagonal + u32::from(a[i - 1] != b[j - 1]))
                    .min(above + 1)
                    .min(row[j - 1] + 1);
                diagonal = above;
            }
        }
        row[b.len()]
    }

    fn brute_force(sequences: &[Vec<u32>], bound: EditBound) -> Vec<(u32, u32, u32)> {
        let mut pairs = Vec::new();
        for a in 0..sequences.len() {
            for b in a + 1..sequences.len() {
                let d = levenshtein(&sequences[a], &sequences[b]);
                let longer = sequences[a].len().max(sequences[b].len());
                if bound.accepts(d, longer) {
                    pairs.push((a as u32, b as u32, d));
                }
            }
        }
        pairs
    }

    /// Sequences over a small alphabet, many of them edits of a few seeds.
    fn corpus() -> impl Strategy<Value = Vec<Vec<u32>>> {
        let seeds = prop::collection::vec(prop::collection::vec(0u32..4, 0..14), 1..5);
        (
            seeds,
            prop::collection::vec(
                (
                    0usize..5,
                    prop::collection::vec((0usize..14, 0u32..5, 0u8..3), 0..4),
                ),
                0..40,
            ),
        )
            .prop_map(|(seeds, edits)| {
                edits
                    .into_iter()
                    .map(|(seed, ops)| {
                        let mut s = seeds[seed % seeds.len()].clone();
                        for (at, c, op) in ops {
                            let at = at.min(s.len());
                            match op {
                                0 if at < s.len() => s[at] = c,
                                1 => s.insert(at, c),
                                _ if at < s.len() => {
                                    s.remove(at);
                                }
                                _ => s.push(c),
                            }
                        }
                        s
                    })
                    .collect()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn absolute_join_equals_all_pairs(sequences in corpus(), tau in 0u32..6) {
            let bound = EditBound::Absolute(tau);
            prop_assert_eq!(pass_join(&sequences, bound), brute_force(&sequences, bound));
        }

        #[test]
        fn normalised_join_equals_all_pairs(
            sequences in corpus(),
            t in prop::sample::select(vec![0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]),
        ) {
            let bound = EditBound::Normalized(t);
            prop_assert_eq!(pass_join(&sequences, bound), brute_force(&sequences, bound));
        }
    }

    #[test]
    fn adversarial_corpora_equal_all_pairs() {
        let identical = vec![vec![1, 2, 3, 4, 5, 6]; 30];
        let tiny: Vec<Vec<u32>> = (0..20).map(|i| vec![i % 3; (i % 3) as usize]).collect();
        let mut common: Vec<Vec<u32>> = (0..60u32)
            .map(|i| vec![7, 7, 7, i / 7, i % 7, i % 5, 9])
            .collect();
        common.push(Vec::new());
        for corpus in [identical, tiny, common] {
            for tau in 0..=5 {
                let bound = EditBound::Absolute(tau);
                assert_eq!(
                    pass_join(&corpus, bound),
                    brute_force(&corpus, bound),
                    "tau {tau}"
                );
            }
            for t in [0.5, 0.8, 0.9] {
                let bound = EditBound::Normalized(t);
                assert_eq!(
                    pass_join(&corpus, bound),
                    brute_force(&corpus, bound),
                    "t {t}"
                );
            }
        }
    }
}
