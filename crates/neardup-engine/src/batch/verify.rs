//! The verify stage: every wanted candidate pair confirmed (or not) by the method's bounded
//! [`Method::verify`], read back chunk by chunk when the candidates were spilled.

use std::time::Instant;

use neardup_core::cluster::Pair;
use neardup_core::hash::mix64;
use neardup_core::{Method, Result, Verdict};
use rayon::prelude::*;

use super::candidates::CandidateList;
use super::options::{EngineOptions, Progress};
use crate::sketch_store::{Held, SketchStore};
use neardup_index::ExternalPairs;

/// Which candidate pairs a run compares: every pair without a reference corpus; with one,
/// the pairs of a new document with a reference document, and (`within`) with another new
/// document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wanted {
    /// Documents of the reference corpus (the first ones).
    pub(crate) reference: u32,
    /// Whether new documents are compared with each other.
    pub(crate) within: bool,
}

impl Wanted {
    /// The pairs `options` asks for.
    pub(crate) fn of(options: &EngineOptions) -> Wanted {
        Wanted {
            reference: options.reference,
            within: options.within,
        }
    }

    /// Whether the pair `(a, b)`, `a < b`, is compared.
    #[inline]
    pub(crate) fn admits(self, (a, b): (u32, u32)) -> bool {
        let new = |d: u32| d >= self.reference;
        self.reference == 0 || (new(b) && (self.within || !new(a)))
    }
}

/// What the verify stage hands on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verified {
    /// The confirmed pairs between leaders, in candidate order.
    pub(crate) pairs: Vec<Pair>,
    /// The pairs the template check refused ([`neardup_core::Verdict::Fillings`]), sorted.
    pub(crate) fillings: Vec<(u32, u32)>,
    /// Candidate pairs compared (the wanted ones).
    pub(crate) compared: u64,
    /// The budget hits of a spilled candidate list, known once it was read back.
    pub(crate) budget_hits: Option<u64>,
    /// Seconds of the candidate stage (begun at the start given) and of verification.
    pub(crate) seconds: [(&'static str, f64); 2],
}

/// Verifies the wanted pairs of `candidates`; the candidate stage began at `started`.
pub(crate) fn verify_candidates<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    candidates: CandidateList<'_>,
    wanted: Wanted,
    started: Instant,
    progress: &dyn Progress,
) -> Result<Verified> {
    match candidates {
        CandidateList::Held(mut candidates) => {
            candidates.retain(|&pair| wanted.admits(pair));
            let candidates_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            progress.stage("verify", candidates.len() as u64);
            let (pairs, fillings) = verify(method, sketches, &candidates, progress)?;
            Ok(Verified {
                pairs,
                fillings,
                compared: candidates.len() as u64,
                budget_hits: None,
                seconds: [
                    ("candidates", candidates_seconds),
                    ("verify", started.elapsed().as_secs_f64()),
                ],
            })
        }
        CandidateList::Spilled { pairs, by_rank } => {
            let candidates_seconds = started.elapsed().as_secs_f64();
            let mut verified = verify_spilled(method, sketches, pairs, &by_rank, wanted, progress)?;
            verified.seconds[0].1 = candidates_seconds;
            Ok(verified)
        }
    }
}

/// The spilled candidates, read back from their runs a chunk at a time and verified as they
/// come: the merge's time counts as verification's.
fn verify_spilled<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    pairs: ExternalPairs<'_>,
    by_rank: &[u32],
    wanted: Wanted,
    progress: &dyn Progress,
) -> Result<Verified> {
    let started = Instant::now();
    progress.stage("verify", 0);
    let mut leader_pairs = Vec::new();
    let mut fillings = Vec::new();
    let mut count = 0u64;
    let mut chunk_pairs: Vec<(u32, u32)> = Vec::new();
    let budget_hits = pairs.drain(VERIFY_CHUNK, |chunk| {
        chunk_pairs.clear();
        chunk_pairs.extend(chunk.iter().filter_map(|&(x, y)| {
            let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
            Some((a.min(b), a.max(b))).filter(|&pair| wanted.admits(pair))
        }));
        chunk_pairs.par_sort_unstable();
        count += chunk_pairs.len() as u64;
        let (pairs, refused) = verify(method, sketches, &chunk_pairs, progress)?;
        leader_pairs.extend(pairs);
        fillings.extend(refused);
        Ok(())
    })?;
    drop(chunk_pairs);
    // The order the in-memory path gives: by candidate, as candidates are sorted.
    leader_pairs.par_sort_unstable_by_key(|pair| (pair.a, pair.b));
    fillings.par_sort_unstable();
    Ok(Verified {
        pairs: leader_pairs,
        fillings,
        compared: count,
        budget_hits: Some(budget_hits),
        seconds: [
            ("candidates", 0.0),
            ("verify", started.elapsed().as_secs_f64()),
        ],
    })
}

/// Pairs of a spilled candidate list verified together: each chunk is sorted by its first
/// document, so that chunk reads each first document's sketch once.
const VERIFY_CHUNK: usize = 1 << 20;

/// The pairs [`verify`] confirmed, and the pairs the template check refused.
type Confirmed = (Vec<Pair>, Vec<(u32, u32)>);

/// The candidates confirmed by [`Method::verdict`], in candidate order, and the ones the
/// template check refused ([`Verdict::Fillings`]), in candidate order. Candidates are sorted
/// by their first document, so a chunk reads each first document's sketch once.
fn verify<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    candidates: &[(u32, u32)],
    progress: &dyn Progress,
) -> Result<Confirmed> {
    // Spilled sketches cost a read and a decoding each: the partners of one chunk of pairs
    // are kept in a small cache by document (a bucket's members meet again and again), and
    // the chunks are large enough for it to serve. In memory a sketch is borrowed for free.
    let (slots, chunk) = match sketches.is_spilled() {
        true => (
            VERIFY_CACHE,
            (candidates.len() / (4 * rayon::current_num_threads())).clamp(4096, 1 << 18),
        ),
        false => (0, 4096),
    };
    // Spilled sketches with pre-checks: a pair whose pre-checks cannot pass is refused
    // before either sketch is read (a few bytes from a small spill the page cache keeps).
    let prechecks = sketches.prechecks();
    let chunks: Vec<Result<Confirmed>> = candidates
        .par_chunks(chunk)
        .map(|chunk| {
            progress.advance(chunk.len() as u64);
            let (mut verified, mut fillings) = (Vec::new(), Vec::new());
            let mut last: Option<(u32, Held<'_, M::Sketch>)> = None;
            let mut cache: Vec<Option<(u32, Held<'_, M::Sketch>)>> =
                (0..slots).map(|_| None).collect();
            let (mut first_check, mut second_check) = (Vec::new(), Vec::new());
            let mut first_checked = None;
            for &(a, b) in chunk {
                if let Some(prechecks) = prechecks {
                    if first_checked != Some(a) {
                        prechecks.read(a, &mut first_check)?;
                        first_checked = Some(a);
                    }
                    prechecks.read(b, &mut second_check)?;
                    let may_agree = method
                        .pair_precheck()
                        .is_none_or(|check| (check.may_agree)(method, &first_check, &second_check));
                    if !may_agree {
                        continue;
                    }
                }
                if last.as_ref().is_none_or(|(document, _)| *document != a) {
                    last = Some((a, sketches.get(method, a)?));
                }
                let Some((_, sa)) = last.as_ref() else {
                    continue;
                };
                let fresh;
                let sb: &M::Sketch = match slots {
                    0 => {
                        fresh = sketches.get(method, b)?;
                        &fresh
                    }
                    _ => {
                        let entry = &mut cache[(mix64(u64::from(b)) as usize) % slots];
                        if entry.as_ref().is_none_or(|(document, _)| *document != b) {
                            *entry = Some((b, sketches.get(method, b)?));
                        }
                        match entry {
                            Some((_, held)) => held,
                            None => continue,
                        }
                    }
                };
                let similarity = match method.verdict(sa, sb) {
                    Verdict::Duplicate(similarity) => similarity,
                    Verdict::Fillings => {
                        fillings.push((a, b));
                        continue;
                    }
                    Verdict::Different => continue,
                };
                let distance = method.distance(sa, sb);
                verified.push(Pair {
                    a,
                    b,
                    similarity,
                    distance,
                });
            }
            Ok((verified, fillings))
        })
        .collect();
    let (mut pairs, mut fillings) = (Vec::new(), Vec::new());
    for chunk in chunks {
        let (verified, refused) = chunk?;
        pairs.extend(verified);
        fillings.extend(refused);
    }
    Ok((pairs, fillings))
}

/// Slots of the cache of partners' sketches that [`verify`] keeps per chunk of a spilled
/// store (each a decoded sketch: about a kilobyte for MinHash's defaults).
const VERIFY_CACHE: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::Words;
    use crate::NoProgress;

    #[test]
    fn a_reference_corpus_is_never_compared_with_itself() {
        let every = Wanted::of(&EngineOptions::default());
        assert!(every.admits((0, 1)));
        let against = Wanted {
            reference: 2,
            within: true,
        };
        assert!(!against.admits((0, 1)));
        assert!(against.admits((1, 2)));
        assert!(against.admits((2, 3)));
        let only = Wanted {
            within: false,
            ..against
        };
        assert!(only.admits((1, 2)));
        assert!(!only.admits((2, 3)));
    }

    #[test]
    fn only_pairs_reaching_the_threshold_are_kept() {
        let method = Words::default();
        let texts = ["a b c", "a b d", "x y", "a b c e"];
        let sketches = SketchStore::Memory(texts.iter().map(|t| method.sketch(t)).collect());
        let candidates = CandidateList::Held(vec![(0, 1), (0, 2), (0, 3), (1, 3)]);
        let wanted = Wanted {
            reference: 0,
            within: true,
        };
        let verified = verify_candidates(
            &method,
            &sketches,
            candidates,
            wanted,
            Instant::now(),
            &NoProgress,
        )
        .unwrap();
        let pairs: Vec<(u32, u32, f64)> = (verified.pairs.iter())
            .map(|p| (p.a, p.b, p.similarity))
            .collect();
        assert_eq!(pairs, vec![(0, 1, 0.5), (0, 3, 0.75)]);
        assert_eq!(verified.compared, 4);
        assert_eq!(verified.budget_hits, None);
        assert_eq!(verified.seconds.map(|s| s.0), ["candidates", "verify"]);
    }
}
