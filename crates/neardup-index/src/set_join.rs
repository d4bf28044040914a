//! PPJoin: the exact self-join of token sets at a Jaccard, cosine or overlap-coefficient
//! threshold (Xiao, Wang, Lin, Yu, "Efficient similarity joins for near duplicate
//! detection", WWW 2008).
//!
//! Tokens are ranked by document frequency, rarest first, and every set sorted by rank; sets
//! are visited by size. Two sets reaching the threshold share a token within their prefixes
//! (prefix filter), so each set probes the index of the prefixes of the sets before it and
//! then indexes its own (shorter) indexing prefix. A partner too small for the threshold is
//! skipped (size filter); a match at positions `i` and `j` whose best possible overlap,
//! `count + 1 + min(|x| - i - 1, |y| - j - 1)`, is below the required one ends that partner
//! (positional filter). Candidates are verified by a merge that stops once the overlap can no
//! longer be reached. Empty sets join nothing. The indexing prefixes are indexed whole first;
//! every set then probes, in parallel, the sets before it in (size, position) order.

use hashbrown::HashMap;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

/// The measure of a set join.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SetMeasure {
    /// `|x ∩ y| / |x ∪ y|`.
    Jaccard,
    /// `|x ∩ y| / sqrt(|x| |y|)`.
    Cosine,
    /// `|x ∩ y| / min(|x|, |y|)` (the smaller set contained in the larger).
    Overlap,
}

const EPSILON: f64 = 1e-9;

impl SetMeasure {
    /// The similarity of sets of sizes `x` and `y` sharing `common` tokens.
    pub fn similarity(self, common: usize, x: usize, y: usize) -> f64 {
        if x == 0 || y == 0 {
            return 0.0;
        }
        let common = common as f64;
        match self {
            SetMeasure::Jaccard => common / ((x + y) as f64 - common),
            SetMeasure::Cosine => common / ((x as f64) * (y as f64)).sqrt(),
            SetMeasure::Overlap => common / x.min(y) as f64,
        }
    }

    /// The fewest common tokens for sizes `x` and `y` to reach `t`.
    fn required(self, t: f64, x: usize, y: usize) -> usize {
        let need = match self {
            SetMeasure::Jaccard => t / (1.0 + t) * (x + y) as f64,
            SetMeasure::Cosine => t * ((x as f64) * (y as f64)).sqrt(),
            SetMeasure::Overlap => t * x.min(y) as f64,
        };
        ((need - EPSILON).ceil().max(1.0)) as usize
    }

    /// The smallest partner size of a set of `size` (partners visited before it are smaller
    /// or equal).
    fn smallest_partner(self, t: f64, size: usize) -> usize {
        let s = size as f64;
        let min = match self {
            SetMeasure::Jaccard => t * s,
            SetMeasure::Cosine => t * t * s,
            SetMeasure::Overlap => 1.0,
        };
        ((min - EPSILON).ceil().max(1.0)) as usize
    }

    /// How many leading tokens of a set of `size` to probe with.
    fn probe_prefix(self, t: f64, size: usize) -> usize {
        match self {
            // A smaller partner may need only a few common tokens: probe with them all.
            SetMeasure::Overlap => size,
            _ => {
                let overlap = self.required(t, size, self.smallest_partner(t, size));
                (size + 1).saturating_sub(overlap).clamp(1, size)
            }
        }
    }

    /// How many leading tokens of a set of `size` to index (its partners come later and are
    /// at least as large).
    fn index_prefix(self, t: f64, size: usize) -> usize {
        let overlap = self.required(t, size, size);
        (size + 1).saturating_sub(overlap).clamp(1, size)
    }
}

/// Every pair `(a, b, similarity)` with `a < b` (positions in `sets`) whose similarity is at
/// least `threshold` (in `(0, 1]`), sorted. Tokens may come in any order and repeat.
pub fn set_join(sets: &[Vec<u64>], measure: SetMeasure, threshold: f64) -> Vec<(u32, u32, f64)> {
    set_join_within(sets, measure, threshold, JoinBudget::UNLIMITED).0
}

/// [`set_join`] within `budget`: each set keeps at most `budget.partners` partners (the
/// first in visiting order) and reads at most `budget.postings` postings, and the join stops
/// once it has found more than `budget.pairs` pairs. Returns the pairs, the number of sets a
/// per-set limit cut short, and whether the pair limit was passed (the pairs are then
/// incomplete; callers refuse them). With no limit reached the result is [`set_join`]'s.
pub fn set_join_within(
    sets: &[Vec<u64>],
    measure: SetMeasure,
    threshold: f64,
    budget: JoinBudget,
) -> (Vec<(u32, u32, f64)>, u64, bool) {
    let ranked = rank_tokens(sets);
    let mut visit: Vec<u32> = (0..sets.len() as u32)
        .filter(|&i| !ranked[i as usize].is_empty())
        .collect();
    visit.sort_by_key(|&i| (ranked[i as usize].len(), i));
    let mut place = vec![0u32; sets.len()];
    for (at, &id) in visit.iter().enumerate() {
        place[id as usize] = at as u32;
    }
    // token -> (set, position) of every indexing prefix, in visiting order. Built whole, so
    // that each set then probes the ones before it, in parallel.
    let mut index: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    for &x_id in &visit {
        let x = &ranked[x_id as usize];
        for (j, &token) in x
            .iter()
            .take(measure.index_prefix(threshold, x.len()))
            .enumerate()
        {
            index.entry(token).or_default().push((x_id, j as u32));
        }
    }
    let prober = Prober {
        ranked: &ranked,
        place: &place,
        index: &index,
        measure,
        t: threshold,
        budget,
        total: AtomicUsize::new(0),
        over: AtomicBool::new(false),
    };
    let (mut pairs, cut) = probe_all(&visit, HashMap::new, |x_id, overlap, pairs| {
        prober.probe(x_id, overlap, pairs)
    });
    pairs.sort_by_key(|p| (p.0, p.1));
    let over = prober.over.load(Ordering::Relaxed);
    (pairs, cut, over)
}

/// Every set deduplicated, its tokens replaced by their rank (rarest first: document
/// frequency, then the token, so the order is deterministic), sorted.
fn rank_tokens(sets: &[Vec<u64>]) -> Vec<Vec<u32>> {
    let mut frequency: HashMap<u64, u32> = HashMap::new();
    let mut deduped: Vec<Vec<u64>> = Vec::with_capacity(sets.len());
    for set in sets {
        let mut set = set.clone();
        set.sort_unstable();
        set.dedup();
        for &token in &set {
            *frequency.entry(token).or_default() += 1;
        }
        deduped.push(set);
    }
    let mut order: Vec<(u32, u64)> = frequency.iter().map(|(&t, &f)| (f, t)).collect();
    order.sort_unstable();
    let rank: HashMap<u64, u32> = order
        .iter()
        .enumerate()
        .map(|(r, &(_, token))| (token, r as u32))
        .collect();
    deduped
        .iter()
        .map(|set| {
            let mut r: Vec<u32> = set.iter().map(|t| rank[t]).collect();
            r.sort_unstable();
            r
        })
        .collect()
}

/// What every probe of [`set_join_within`] reads, and the pair count they share.
struct Prober<'a> {
    ranked: &'a [Vec<u32>],
    /// Each set's place in visiting order.
    place: &'a [u32],
    index: &'a HashMap<u32, Vec<(u32, u32)>>,
    measure: SetMeasure,
    t: f64,
    budget: JoinBudget,
    total: AtomicUsize,
    over: AtomicBool,
}

impl Prober<'_> {
    /// Probes set `x_id` against the sets before it, adding its pairs to `pairs`; true when a
    /// per-set limit cut it short.
    fn probe(
        &self,
        x_id: u32,
        overlap: &mut HashMap<u32, u32>,
        pairs: &mut Vec<(u32, u32, f64)>,
    ) -> bool {
        overlap.clear();
        if self.over.load(Ordering::Relaxed) {
            return false;
        }
        let mut cut = self.count_overlaps(x_id, overlap);
        let mut candidates: Vec<u32> = (overlap.iter())
            .filter(|&(_, &count)| count != u32::MAX && count != 0)
            .map(|(&y_id, _)| y_id)
            .collect();
        // In visiting order, so that a partner limit keeps the same partners on any thread.
        candidates.sort_unstable_by_key(|&y_id| self.place[y_id as usize]);
        let x = &self.ranked[x_id as usize];
        let mut found = 0;
        for y_id in candidates {
            if found == self.budget.partners {
                cut = true;
                break;
            }
            let y = &self.ranked[y_id as usize];
            let alpha = self.measure.required(self.t, x.len(), y.len());
            if let Some(common) = intersect_at_least(x, y, alpha) {
                let similarity = self.measure.similarity(common, x.len(), y.len());
                if similarity >= self.t - EPSILON {
                    pairs.push((x_id.min(y_id), x_id.max(y_id), similarity));
                    found += 1;
                }
            }
        }
        if self.total.fetch_add(found, Ordering::Relaxed) + found > self.budget.pairs {
            self.over.store(true, Ordering::Relaxed);
        }
        cut
    }

    /// Counts, in `overlap`, the prefix tokens `x_id` shares with each earlier set (size and
    /// positional filters applied: `u32::MAX` marks a partner ruled out); true when the
    /// postings budget cut it short.
    fn count_overlaps(&self, x_id: u32, overlap: &mut HashMap<u32, u32>) -> bool {
        let x = &self.ranked[x_id as usize];
        let smallest = self.measure.smallest_partner(self.t, x.len());
        let mut read = 0usize;
        let prefix = self.measure.probe_prefix(self.t, x.len());
        for (i, token) in x.iter().take(prefix).enumerate() {
            let Some(postings) = self.index.get(token) else {
                continue;
            };
            for &(y_id, j) in postings {
                if self.place[y_id as usize] >= self.place[x_id as usize] {
                    // Postings are in visiting order: the rest come after x too.
                    break;
                }
                read += 1;
                if read > self.budget.postings {
                    return true;
                }
                let y = &self.ranked[y_id as usize];
                if y.len() < smallest {
                    continue;
                }
                let count = overlap.entry(y_id).or_insert(0);
                if *count == u32::MAX {
                    continue;
                }
                let alpha = self.measure.required(self.t, x.len(), y.len());
                let best = *count as usize + 1 + (x.len() - i - 1).min(y.len() - j as usize - 1);
                if best >= alpha {
                    *count += 1;
                } else {
                    *count = u32::MAX;
                }
            }
        }
        false
    }
}

/// What an exact join may cost: partners kept and postings read per document, and pairs in
/// all. An exact join's answer is quadratic under a template flood (every text like every
/// other): the pair limit stops it early instead of filling the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinBudget {
    /// Most partners a document keeps (the first found in visiting order).
    pub partners: usize,
    /// Most index postings a document reads.
    pub postings: usize,
    /// Most pairs in all; the join stops once it has found more.
    pub pairs: usize,
    /// Pass-Join: a sequence whose bound against its longest partner needs this many edits
    /// or more is left out of the edit join (see [`crate::pass_join_within`]).
    pub edits: usize,
}

/// The edits a sequence of an edit join may need against its longest partner, at most, in
/// a corpus's budget ([`JoinBudget::for_corpus`]): 1,024. Probing a sequence cut for `tau`
/// edits reads about `tau^2 / 2` substrings per partner length, and verifying costs its
/// length times `tau / 64` per candidate; at 1,024 (texts of up to 2,389 characters at the
/// default edit similarity 0.7, 9,215 at 0.9; any length under `--max-edits`) a probe stays
/// within a few million lookups per length.
pub const MAX_JOIN_EDITS: usize = 1024;

impl JoinBudget {
    /// No limit: the exact join.
    pub const UNLIMITED: JoinBudget = JoinBudget {
        partners: usize::MAX,
        postings: usize::MAX,
        pairs: usize::MAX,
        edits: usize::MAX,
    };

    /// The budget of the engine's candidate budget `n` (pairs per document on average) over
    /// `documents`: every partner kept, `documents x n` pairs in all, no per-document
    /// postings limit (postings are bounded by the pairs they lead to in a flood), and edit
    /// bounds of less than [`MAX_JOIN_EDITS`] edits.
    pub fn for_corpus(documents: usize, n: usize) -> JoinBudget {
        JoinBudget {
            partners: usize::MAX,
            postings: usize::MAX,
            pairs: documents.max(1).saturating_mul(n.max(1)),
            edits: MAX_JOIN_EDITS,
        }
    }
}

/// `|x ∩ y|` of two sorted sets when at least `alpha`, else `None`, stopping as soon as the
/// rest cannot reach it.
pub fn intersect_at_least(x: &[u32], y: &[u32], alpha: usize) -> Option<usize> {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        if common + (x.len() - i).min(y.len() - j) < alpha {
            return None;
        }
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (common >= alpha).then_some(common)
}

/// Calls `probe(id, scratch, out)` on every id of `ids`, in parallel chunks, each worker with
/// its own `scratch`: the pairs the probes put in `out` (in no particular order) and how many
/// probes were cut short (returned true). Shared by the exact joins.
pub(crate) fn probe_all<S: Send, T: Send>(
    ids: &[u32],
    scratch: fn() -> S,
    probe: impl Fn(u32, &mut S, &mut Vec<T>) -> bool + Sync,
) -> (Vec<T>, u64) {
    ids.par_chunks(1024)
        .map_init(scratch, |scratch, chunk| {
            let mut out = Vec::new();
            let cut = chunk
                .iter()
                .filter(|&&id| probe(id, scratch, &mut out))
                .count();
            (out, cut as u64)
        })
        .reduce(
            || (Vec::new(), 0),
            |mut a, b| {
                a.0.extend(b.0);
                (a.0, a.1 + b.1)
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn brute_force(sets: &[Vec<u64>], measure: SetMeasure, t: f64) -> Vec<(u32, u32, f64)> {
        let sets: Vec<BTreeSet<u64>> = sets.iter().map(|s| s.iter().copied().collect()).collect();
        let mut pairs = Vec::new();
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                let common = sets[a].intersection(&sets[b]).count();
                let s = measure.similarity(common, sets[a].len(), sets[b].len());
                if s >= t - EPSILON && common > 0 {
                    pairs.push((a as u32, b as u32, s));
                }
            }
        }
        pairs
    }

    fn corpus() -> impl Strategy<Value = Vec<Vec<u64>>> {
        let seeds = prop::collection::vec(prop::collection::vec(0u64..30, 0..16), 1..5);
        (
            seeds,
            prop::collection::vec(
                (
                    0usize..5,
                    prop::collection::vec((0u64..30, any::<bool>()), 0..5),
                ),
                0..40,
            ),
        )
            .prop_map(|(seeds, edits)| {
                edits
                    .into_iter()
                    .map(|(seed, ops)| {
                        let mut s = seeds[seed % seeds.len()].clone();
                        for (token, add) in ops {
                            if add {
                                s.push(token);
                            } else {
                                s.retain(|&t| t != token);
                            }
                        }
                        s
                    })
                    .collect()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn set_join_equals_all_pairs(
            sets in corpus(),
            measure in prop::sample::select(vec![SetMeasure::Jaccard, SetMeasure::Cosine, SetMeasure::Overlap]),
            t in prop::sample::select(vec![0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 1.0]),
        ) {
            prop_assert_eq!(set_join(&sets, measure, t), brute_force(&sets, measure, t));
        }
    }

    #[test]
    fn adversarial_corpora_equal_all_pairs() {
        let identical = vec![vec![1, 2, 3, 4, 5]; 25];
        let common: Vec<Vec<u64>> = (0..80u64)
            .map(|i| vec![0, i % 9 + 1, i % 7 + 20, i % 5 + 40])
            .collect();
        let tiny: Vec<Vec<u64>> = (0..30u64)
            .map(|i| (0..i % 3).map(|k| k + i % 2).collect())
            .collect();
        for sets in [identical, common, tiny] {
            for measure in [SetMeasure::Jaccard, SetMeasure::Cosine, SetMeasure::Overlap] {
                for t in [0.5, 0.8, 0.95] {
                    assert_eq!(
                        set_join(&sets, measure, t),
                        brute_force(&sets, measure, t),
                        "{measure:?} {t}"
                    );
                }
            }
        }
    }
}
