//! The candidate stage: the pairs of leaders worth verifying, from the generator the
//! index crate's factory builds for the method's join ([`ranked_candidates`]). The generators
//! see documents by rank, so that a bucket over the cap takes its best-ranked members (the
//! ones the keep policy would keep) as anchors, and a document over the candidate budget keeps
//! its best-ranked partners: the ones it can be a duplicate of.

use std::sync::OnceLock;

use neardup_core::{JoinShape, Method, Result, Verdict};
use neardup_index::{
    join_limits, ranked_candidates, template_anchors, BucketStats, CandidateLimits, ExternalKeys,
    ExternalPairs, KeyTable, RankedSketches,
};
use rayon::prelude::*;

use super::keys::{ExcludedRanks, GatheredKeys, Keyed};
use super::templates::RefusedPairs;
use super::{for_each_sized_chunk, FirstError};
use crate::sketch_store::{SketchStore, Spilling};

/// What the candidate stage hands on: the pairs, the generator's statistics, and the bytes
/// it spilled.
pub(crate) struct Candidates<'d> {
    /// The candidate pairs of documents.
    pub(crate) list: CandidateList<'d>,
    /// The generator's statistics (a spilled list's lack `budget_hits` until it is read).
    pub(crate) stats: BucketStats,
    /// Bytes written to the spill directory.
    pub(crate) spilled: u64,
    /// What a generator that verifies (the n-gram index) found refused by the template
    /// check ([`neardup_core::Verdict::Fillings`]).
    pub(crate) refused: Option<RefusedPairs>,
}

/// The candidate pairs of documents, `(a, b)` with `a < b`.
pub(crate) enum CandidateList<'d> {
    /// In memory, sorted.
    Held(Vec<(u32, u32)>),
    /// Pairs of ranks sorted in runs in the spill directory, mapped to documents by
    /// `by_rank` as they are read back (their statistics lack `budget_hits` until then).
    Spilled {
        pairs: ExternalPairs<'d>,
        by_rank: Vec<u32>,
    },
}

/// The leaders a generator sees, numbered by rank.
struct Ranked<'a, M: Method> {
    method: &'a M,
    sketches: &'a SketchStore<M::Sketch>,
    /// The leaders that take part (not [`neardup_core::Sketch::exact_only`]), ascending.
    leaders: &'a [u32],
    /// Per document, its rank.
    rank: &'a [u32],
    /// Per rank, its document: made when a generator first verifies.
    by_rank: OnceLock<Vec<u32>>,
    /// The first sketch that could not be read while verifying.
    failed: FirstError,
    /// The pairs the template check refused while verifying (made at the first).
    refused: OnceLock<RefusedPairs>,
}

/// Candidate pairs `(a, b)`, `a < b`, sorted, among the leaders (see the module docs).
///
/// `gathered`: the crowd check's runs of every leader's keys (spilling, and keys that marks
/// do not change), walked instead of gathering the keys again.
pub(crate) fn candidate_pairs<'d, M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    (spilling, gathered): (Option<&'d Spilling>, Option<GatheredKeys<'d>>),
    exact_only: &[bool],
    leaders: &[u32],
    rank: &[u32],
    limits: CandidateLimits,
) -> Result<Candidates<'d>> {
    // Documents with too few features take part in exact-copy groups only.
    let leaders: Vec<u32> = (leaders.iter().copied())
        .filter(|&document| !exact_only[document as usize])
        .collect();
    let ranked = Ranked {
        method,
        sketches,
        leaders: &leaders,
        rank,
        by_rank: OnceLock::new(),
        failed: FirstError::default(),
        refused: OnceLock::new(),
    };
    let join = method.join();
    let limits = join_limits(&join, limits);
    // The engine walks a symmetric join's keys itself (spilled, or gathered for the crowd
    // check); with template anchors (templates duplicate), the factory adds their pairs.
    let shape = match template_anchors(&join) {
        Some(_) => None,
        None => Some(join.shape()),
    };
    let (ranked_pairs, stats) = match (shape, spilling, gathered) {
        (Some(JoinShape::SymmetricKeys), Some(spilling), gathered) => {
            let gathered = match gathered {
                Some(GatheredKeys::Spilled(keys, keyed)) => {
                    Some(keys.with_ranked_documents(ranked_documents(&keyed, exact_only, rank)))
                }
                _ => None,
            };
            let excluded = ExcludedRanks::new(exact_only, rank);
            return spilled_symmetric_pairs(&ranked, spilling, gathered, &excluded, limits);
        }
        (Some(JoinShape::SymmetricKeys), None, Some(GatheredKeys::Held { entries, keyed })) => {
            let documents = ranked_documents(&keyed, exact_only, rank);
            let table = KeyTable::from_entries(ranked_entries(entries, exact_only, rank));
            table
                .with_documents(documents)
                .candidate_pairs_with_stats(limits)
        }
        _ => {
            let found = ranked_candidates(method, &ranked, limits);
            ranked.failed.check()?;
            found?
        }
    };
    let by_rank = documents_by_rank(rank);
    let mut pairs: Vec<(u32, u32)> = ranked_pairs
        .into_par_iter()
        .map(|(x, y)| {
            let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.par_sort_unstable();
    Ok(Candidates {
        list: CandidateList::Held(pairs),
        stats,
        spilled: 0,
        refused: ranked.refused.into_inner(),
    })
}

/// The crowd check's `(key, leader)` entries (sorted) as `(key, rank)` entries sorted by key
/// then rank, the exact-only leaders left out: each key's run sorted again, no sort of the
/// whole list.
fn ranked_entries(
    mut entries: Vec<(u64, u32)>,
    exact_only: &[bool],
    rank: &[u32],
) -> Vec<(u64, u32)> {
    entries.retain(|&(_, leader)| !exact_only[leader as usize]);
    for entry in &mut entries {
        entry.1 = rank[entry.1 as usize];
    }
    for run in entries.chunk_by_mut(|a, b| a.0 == b.0) {
        if run.len() > 1 {
            run.sort_unstable_by_key(|entry| entry.1);
        }
    }
    entries
}

/// The documents the candidate budget counts when only the shared keys' entries are given:
/// up to the last ranked leader with a key, as when every key is given.
fn ranked_documents(keyed: &Keyed, exact_only: &[bool], rank: &[u32]) -> usize {
    (keyed.iter())
        .filter(|&leader| !exact_only[leader as usize])
        .map(|leader| rank[leader as usize] as usize + 1)
        .max()
        .unwrap_or(0)
}

/// Per rank, its document.
fn documents_by_rank(rank: &[u32]) -> Vec<u32> {
    let mut by_rank = vec![0u32; rank.len()];
    for (document, &r) in rank.iter().enumerate() {
        by_rank[r as usize] = document as u32;
    }
    by_rank
}

/// The symmetric keys' candidates sorted in runs in the spill directory, from the crowd
/// check's runs when given, else from the leaders' keys.
fn spilled_symmetric_pairs<'d, M: Method>(
    ranked: &Ranked<'_, M>,
    spilling: &'d Spilling,
    gathered: Option<ExternalKeys<'d>>,
    excluded: &ExcludedRanks,
    limits: CandidateLimits,
) -> Result<Candidates<'d>> {
    let (method, sketches) = (ranked.method, ranked.sketches);
    let (leaders, rank) = (ranked.leaders, ranked.rank);
    let (pairs, stats) = match gathered {
        Some(gathered) => {
            // Entries by rank, of every leader: the exact-only ones left out (the crowd
            // check's walk took the first walk with the same map).
            let map = |ranked: u32| excluded.map(ranked);
            gathered.candidate_pairs(limits, Some((&map, rank.len())))?
        }
        None => {
            let mut external = ExternalKeys::new(spilling.dir.as_ref(), "keys", spilling.budget);
            for_each_sized_chunk(leaders, spilling.budget, |chunk| {
                let keyed = sketches.map_sorted(method, chunk, |document, sketch| {
                    let mut keys = Vec::new();
                    method.keys(sketch, &mut keys);
                    (keys, rank[document as usize])
                })?;
                let bytes = (keyed.iter()).map(|(keys, _)| 32 + 8 * keys.len()).sum();
                external.extend(
                    keyed
                        .into_iter()
                        .flat_map(|(keys, ranked)| keys.into_iter().map(move |key| (key, ranked))),
                )?;
                Ok(bytes)
            })?;
            external.candidate_pairs(limits, None)?
        }
    };
    let spilled = pairs.spilled();
    let by_rank = documents_by_rank(rank);
    Ok(Candidates {
        list: CandidateList::Spilled { pairs, by_rank },
        stats,
        spilled,
        refused: None,
    })
}

impl<M: Method> RankedSketches<M> for Ranked<'_, M> {
    fn map<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(u32, &M::Sketch) -> R + Sync,
    {
        let rank = self.rank;
        (self.sketches).map_sorted(self.method, self.leaders, |document, sketch| {
            f(rank[document as usize], sketch)
        })
    }

    fn verify(&self, x: u32, y: u32) -> Option<f64> {
        let by_rank = self.by_rank.get_or_init(|| documents_by_rank(self.rank));
        let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
        match (
            self.sketches.get(self.method, a),
            self.sketches.get(self.method, b),
        ) {
            (Ok(sa), Ok(sb)) => match self.method.verdict(&*sa, &*sb) {
                Verdict::Fillings => {
                    (self.refused)
                        .get_or_init(|| RefusedPairs::new(self.rank.len()))
                        .add(a, b);
                    None
                }
                verdict => verdict.similarity(),
            },
            (Err(error), _) | (_, Err(error)) => {
                self.failed.keep(error);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::batch::testing::{WordSet, Words};
    use crate::sketch_store::MemorySpillDir;
    use neardup_core::Join;

    const TEXTS: [&str; 5] = ["a b", "a c", "d e", "d f", "g"];

    fn store(method: &Words) -> SketchStore<WordSet> {
        SketchStore::Memory(TEXTS.iter().map(|t| method.sketch(t)).collect())
    }

    fn held(candidates: Candidates<'_>) -> Vec<(u32, u32)> {
        match candidates.list {
            CandidateList::Held(pairs) => pairs,
            CandidateList::Spilled { .. } => unreachable!("in memory"),
        }
    }

    fn pairs_of(method: &Words, exact_only: &[bool], rank: &[u32]) -> Vec<(u32, u32)> {
        let leaders: Vec<u32> = (0..5).collect();
        let limits = CandidateLimits::default();
        let sketches = store(method);
        held(
            candidate_pairs(
                method,
                &sketches,
                (None, None),
                exact_only,
                &leaders,
                rank,
                limits,
            )
            .unwrap(),
        )
    }

    #[test]
    fn documents_sharing_a_key_are_candidates_by_document() {
        let method = Words::default();
        let expected = vec![(0, 1), (2, 3)];
        assert_eq!(pairs_of(&method, &[false; 5], &[0, 1, 2, 3, 4]), expected);
        // Whatever the ranks, the pairs name documents.
        assert_eq!(pairs_of(&method, &[false; 5], &[4, 3, 2, 1, 0]), expected);
    }

    #[test]
    fn exact_only_documents_are_left_out() {
        let method = Words::default();
        let exact_only = [false, true, false, false, false];
        assert_eq!(
            pairs_of(&method, &exact_only, &[0, 1, 2, 3, 4]),
            vec![(2, 3)]
        );
    }

    #[test]
    fn an_identity_join_has_no_candidates() {
        let method = Words {
            join: Join::Identity,
            ..Words::default()
        };
        assert!(pairs_of(&method, &[false; 5], &[0, 1, 2, 3, 4]).is_empty());
    }

    #[test]
    fn spilled_symmetric_keys_give_the_held_pairs() {
        let method = Words::default();
        let spilling = Spilling {
            dir: Arc::new(MemorySpillDir),
            budget: 64,
        };
        let (leaders, rank) = ((0..5).collect::<Vec<u32>>(), [3, 1, 4, 0, 2]);
        let sketches = store(&method);
        let candidates = candidate_pairs(
            &method,
            &sketches,
            (Some(&spilling), None),
            &[false; 5],
            &leaders,
            &rank,
            CandidateLimits::default(),
        )
        .unwrap();
        assert!(candidates.spilled > 0);
        let CandidateList::Spilled { pairs, by_rank } = candidates.list else {
            unreachable!("spilled")
        };
        let mut got = Vec::new();
        pairs
            .drain(2, |chunk| {
                got.extend(chunk.iter().map(|&(x, y)| {
                    let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
                    (a.min(b), a.max(b))
                }));
                Ok(())
            })
            .unwrap();
        got.sort_unstable();
        assert_eq!(got, pairs_of(&method, &[false; 5], &rank));
    }
}
