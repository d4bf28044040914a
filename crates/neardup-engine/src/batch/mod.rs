//! The batch dedup engine: sketch, group exact copies, candidates, verify, cluster.
//!
//! Pure (no I/O) and parallel with rayon; the result is identical for any thread count
//! because every parallel stage either maps in input order or sorts its output.
//!
//! Exact copies (equal [`Sketch::identity`](neardup_core::Sketch::identity)) are collapsed first:
//! one *leader* per group (the best ranked under the keep policy) enters candidate generation, the
//! other members follow their leader. This keeps LSH buckets small on corpora with many verbatim
//! repeats (newswires, reposts, boilerplate). Identical feature sets have identical similarities to
//! everything, so a member is a duplicate exactly when its leader is; it is assigned to its
//! leader's representative, which all-pairs representative clustering would not always pick (a
//! document ranked between the leader and the member can be closer to both: the member would then
//! go to it). Every removed member is still verified similar to its representative.

//!
//! One module per stage, each handing the next a typed value:
//!
//! | stage | module | hands on |
//! |---|---|---|
//! | options and progress | `options` | [`EngineOptions`] |
//! | corpus pass | `corpus` | [`Learned`] |
//! | sketch | `sketch` (saved and resumed by `checkpoint`) | `Sketched` |
//! | ranks and exact copies | `groups` | `Leaders` |
//! | common shingles | `common` | `CommonMarks` |
//! | candidates | `candidates` | `Candidates` |
//! | verify | `verify` | `Verified` (and the templates it refused: `templates`) |
//! | cluster | `cluster` | `Clustered`, then [`Outcome`] (`outcome`) |

mod candidates;
mod checkpoint;
mod cluster;
mod common;
mod corpus;
mod groups;
mod keys;
mod options;
mod outcome;
mod sketch;
mod templates;
#[cfg(test)]
mod testing;
mod verify;

use std::time::Instant;

use neardup_core::{Error, Method, Result};
use neardup_index::BucketStats;
use rayon::prelude::*;

pub use corpus::{learn_corpus, CorpusLearner, Learned};
pub use groups::Groups;
pub use options::{EngineOptions, NoProgress, Progress};
pub use outcome::{BoilerplateLine, BoilerplateStats, EngineStats, Outcome};
pub use sketch::Sketcher;
pub use templates::{TemplateGroup, Templates, TEMPLATES_LISTED, TEMPLATE_SAMPLE};

use crate::sketch_store::Spilling;
use candidates::candidate_pairs;
use cluster::Clustered;
use groups::Leaders;
use sketch::{Facts, Sketched};
use verify::{verify_candidates, Verified, Wanted};

/// Most leaders whose keys are computed together by a spilling stage (common shingles,
/// candidates); see [`for_each_sized_chunk`].
const KEY_CHUNK: usize = 1 << 16;

/// Calls `f` on consecutive chunks of `documents`, each sized so that what `f` gathers for
/// it (the bytes `f` returns) stays near `budget`: the first chunk is small, the next ones
/// take the bytes a document gave so far, between [`MIN_CHUNK`] and [`KEY_CHUNK`]
/// documents. Chunks counted in documents only held 16 bytes a band key for 65,536 documents
/// at once: 134 MB at 128 bands, past `--memory-limit 256M`.
///
/// # Errors
/// The first error of `f`.
fn for_each_sized_chunk(
    documents: &[u32],
    budget: usize,
    mut f: impl FnMut(&[u32]) -> Result<usize>,
) -> Result<()> {
    let (mut at, mut len) = (0, FIRST_CHUNK);
    let (mut bytes, mut seen) = (0usize, 0usize);
    while at < documents.len() {
        let end = (at + len).min(documents.len());
        bytes = bytes.saturating_add(f(&documents[at..end])?);
        seen += end - at;
        at = end;
        let per_document = bytes.div_ceil(seen).max(1);
        len = (budget / per_document).clamp(MIN_CHUNK, KEY_CHUNK);
    }
    Ok(())
}

/// The first chunk of [`for_each_sized_chunk`], before a document's bytes are known.
const FIRST_CHUNK: usize = 1024;

/// The fewest documents of a chunk of [`for_each_sized_chunk`] (a block of spilled sketches
/// is read for each chunk).
const MIN_CHUNK: usize = 256;

/// Most documents one batch run takes: documents are numbered with `u32`, and `u32::MAX`
/// marks "none" in the engine's tables.
pub const MAX_DOCUMENTS: usize = u32::MAX as usize - 1;

/// Runs the engine over `texts` with `method`.
///
/// # Errors
/// More than [`MAX_DOCUMENTS`] texts (parameter `documents`).
pub fn dedup<M: Method, S: AsRef<str> + Sync>(
    method: &M,
    texts: &[S],
    options: EngineOptions,
    progress: &dyn Progress,
) -> Result<Outcome> {
    check_document_count(texts.len())?;
    let learned = Learned::from_texts(method, texts, options, progress)?;
    let mut outcome = dedup_texts(learned.method(), texts.par_iter(), options, progress)?;
    learned.complete(&mut outcome);
    Ok(outcome)
}

/// [`dedup`] over owned texts, each dropped as soon as it is sketched: the peak memory of a
/// run then holds the sketches, not the sketches and all the texts.
///
/// # Errors
/// More than [`MAX_DOCUMENTS`] texts (parameter `documents`).
pub fn dedup_owned<M: Method>(
    method: &M,
    texts: Vec<String>,
    options: EngineOptions,
    progress: &dyn Progress,
) -> Result<Outcome> {
    check_document_count(texts.len())?;
    let learned = Learned::from_texts(method, &texts, options, progress)?;
    let mut outcome = dedup_texts(learned.method(), texts.into_par_iter(), options, progress)?;
    learned.complete(&mut outcome);
    Ok(outcome)
}

/// Refuses a corpus too large to number with `u32`.
///
/// # Errors
/// More than [`MAX_DOCUMENTS`] documents (parameter `documents`).
pub fn check_document_count(documents: usize) -> Result<()> {
    if documents > MAX_DOCUMENTS {
        return Err(Error::invalid(
            "documents",
            format!("{documents} (one batch run takes at most {MAX_DOCUMENTS}; split the input)"),
        ));
    }
    Ok(())
}

/// The engine over the texts `texts` yields in input order, all in memory.
fn dedup_texts<M, I>(
    method: &M,
    texts: I,
    options: EngineOptions,
    progress: &dyn Progress,
) -> Result<Outcome>
where
    M: Method,
    I: IndexedParallelIterator,
    I::Item: AsRef<str>,
{
    let mut sketcher = Sketcher::new(method, Some(texts.len()), None, progress)?;
    sketcher.push_iter(texts, progress)?;
    sketcher.finish(options, progress)
}

/// A slot for the first error of closures that cannot return one (a spilled sketch that
/// cannot be read inside a generator's or the clustering's callback).
#[derive(Default)]
struct FirstError(std::sync::Mutex<Option<Error>>);

impl FirstError {
    fn keep(&self, error: Error) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert(error);
    }
    fn check(self) -> Result<()> {
        match self
            .0
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl<M: Method> Sketcher<'_, M> {
    /// Everything after the sketch stage: exact groups, candidates, verification, clusters.
    ///
    /// # Errors
    /// Fewer texts than announced (parameter `documents`), an exact join over its pair limit
    /// (parameter `candidate_budget`), or a spill that cannot be read (parameter `temp_dir`).
    pub fn finish(self, options: EngineOptions, progress: &dyn Progress) -> Result<Outcome> {
        let method = self.method;
        let (mut sketched, spilling) = self.into_sketched()?;
        let noted = std::mem::take(&mut sketched.boilerplate);
        let spilled = sketched.sketches.spilled_bytes();
        let mut outcome = dedup_sketched(method, sketched, spilling.as_ref(), options, progress)?;
        outcome.stats.spilled_bytes += spilled;
        if outcome.stats.pair_limit_passed > 0 {
            return Err(Error::invalid(
                "candidate_budget",
                format!(
                    "{}: the exact join found more than {} similar pairs (the candidate budget \
                     per distinct text) and stopped: its answer grows with the square of the \
                     corpus (texts from one template?); use --method minhash, which bounds the \
                     work, or raise --candidate-budget",
                    options.candidate_budget, outcome.stats.pair_limit_passed
                ),
            ));
        }
        let found = &mut outcome.stats.boilerplate;
        found.discounted_features += noted.discounted_features;
        found.documents = noted.documents;
        found.removed_lines = noted.removed_lines;
        found.lines = noted.lines;
        Ok(outcome)
    }
}

/// Everything after the sketch stage: the stages in a row, each dropping what it no longer
/// needs, so that the later ones do not hold it.
fn dedup_sketched<M: Method>(
    method: &M,
    sketched: Sketched<M::Sketch>,
    spilling: Option<&Spilling>,
    options: EngineOptions,
    progress: &dyn Progress,
) -> Result<Outcome> {
    let Sketched {
        mut sketches,
        facts,
        started,
        ..
    } = sketched;
    let documents = sketches.len() as u64;
    let mut stats = EngineStats::default();
    stats
        .seconds
        .push(("sketch", started.elapsed().as_secs_f64()));
    let Facts {
        identity,
        empty,
        exact_only,
        lengths,
        distances,
    } = facts;
    stats.empty_documents = empty.iter().filter(|&&e| e).count() as u64;
    stats.exact_only_documents = exact_only.iter().filter(|&&e| e).count() as u64;

    let started = Instant::now();
    let Leaders {
        rank,
        leaders,
        groups,
    } = Leaders::find(lengths, identity, empty, &options);
    // A spilling run's crowd check sorts the leaders' keys; when marks leave keys alone,
    // the candidates are found from those runs instead of sorting the keys again.
    let ranking = common::Ranking {
        leaders: &leaders,
        rank: &rank,
        exact_only: &exact_only,
        bucket_cap: options.limits().bucket_cap,
    };
    let marks = common::mark_common_features(method, &mut sketches, spilling, ranking, progress)?;
    let gathered = marks.and_then(|marks| marks.record(&mut stats));
    progress.stage("candidates", leaders.len() as u64);
    let candidates = candidate_pairs(
        method,
        &sketches,
        (spilling, gathered),
        &exact_only,
        &leaders,
        &rank,
        options.limits(),
    )?;
    let keyed = match neardup_index::rare_join_templates(&method.join()) {
        Some(keys) => templates::template_links(method, &sketches, &leaders, keys)?,
        None => Vec::new(),
    };
    drop((exact_only, leaders));
    stats.spilled_bytes += candidates.spilled;
    let refused = candidates.refused;
    let wanted = Wanted::of(&options);
    let verified = verify_candidates(
        method,
        &sketches,
        candidates.list,
        wanted,
        started,
        progress,
    )?;
    record_candidates(&mut stats, candidates.stats, &verified);
    stats.templates = match refused {
        Some(refused) => refused.templates(&verified.fillings, &keyed, &groups),
        None => Templates::linked(&verified.fillings, &keyed, &groups),
    };
    drop(keyed);

    let started = Instant::now();
    progress.stage("cluster", documents);
    let leader_pairs = verified.pairs;
    let Clustered {
        assignment,
        exact_copies,
    } = cluster::cluster(method, sketches, &rank, &leader_pairs, &groups, &options)?;
    stats.exact_copies = exact_copies;
    progress.advance(documents);
    stats
        .seconds
        .push(("cluster", started.elapsed().as_secs_f64()));
    Ok(Outcome {
        assignment,
        leader_pairs,
        groups,
        stats,
        distances: distances.unwrap_or(false),
    })
}

/// Adds the candidate and verify stages' counts and seconds to `stats`.
fn record_candidates(stats: &mut EngineStats, mut buckets: BucketStats, verified: &Verified) {
    if let Some(hits) = verified.budget_hits {
        buckets.budget_hits = hits;
    }
    stats.candidate_pairs = verified.compared;
    stats.seconds.extend(verified.seconds);
    stats.largest_bucket = buckets.largest_bucket;
    stats.capped_buckets = buckets.capped_buckets;
    stats.capped_out = buckets.left_out;
    stats.candidate_comparisons = buckets.comparisons;
    stats.pair_limit_passed = buckets.pair_limit_passed;
    stats.budget_hits = buckets.budget_hits;
    stats.partner_limit = Some(buckets.partner_limit).filter(|&l| l != u64::MAX);
    stats.verified_pairs = verified.pairs.len() as u64;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sketch_store::MemorySpillDir;
    use testing::Words;

    const TEXTS: [&str; 6] = ["a b c", "a b c", "a b d", "x y z", "", "x y w v"];

    #[test]
    fn the_stages_in_a_row_give_the_outcome() {
        let outcome = dedup(
            &Words::default(),
            &TEXTS,
            EngineOptions::default(),
            &NoProgress,
        )
        .unwrap();
        let duplicate_of = &outcome.assignment.duplicate_of;
        assert_eq!(
            duplicate_of,
            &vec![None, Some(0), Some(0), None, None, None]
        );
        assert_eq!(outcome.groups, Groups::from(vec![vec![0, 1]]));
        let stats = &outcome.stats;
        assert_eq!(stats.empty_documents, 1);
        assert_eq!(stats.exact_copies, 1);
        assert_eq!((stats.candidate_pairs, stats.verified_pairs), (2, 1));
        let stages: Vec<&str> = stats.seconds.iter().map(|s| s.0).collect();
        assert_eq!(stages, ["sketch", "candidates", "verify", "cluster"]);
        let pairs: Vec<(u32, u32)> = outcome.all_pairs().map(|p| (p.a, p.b)).collect();
        assert_eq!(pairs.len(), 3);
    }

    #[test]
    fn a_spilling_run_gives_the_held_outcome() {
        let options = EngineOptions::default();
        let method = Words::default();
        let held = dedup(&method, &TEXTS, options, &NoProgress).unwrap();
        let spilling = Spilling {
            dir: Arc::new(MemorySpillDir),
            budget: 64,
        };
        let mut sketcher = Sketcher::new(&method, None, Some(spilling), &NoProgress).unwrap();
        sketcher.push(&TEXTS[..4], &NoProgress).unwrap();
        sketcher.push(&TEXTS[4..], &NoProgress).unwrap();
        let spilled = sketcher.finish(options, &NoProgress).unwrap();
        assert_eq!(spilled.assignment, held.assignment);
        assert_eq!(spilled.leader_pairs, held.leader_pairs);
        assert_eq!(spilled.groups, held.groups);
        assert!(spilled.stats.spilled_bytes > 0);
    }

    #[test]
    fn chunks_follow_the_bytes_a_document_gives() {
        let documents: Vec<u32> = (0..100_000).collect();
        let mut lengths = Vec::new();
        let mut covered = Vec::new();
        for_each_sized_chunk(&documents, 1 << 20, |chunk| {
            lengths.push(chunk.len());
            covered.extend_from_slice(chunk);
            Ok(chunk.len() * 2048)
        })
        .unwrap();
        assert_eq!(covered, documents);
        // 2 KB a document under a 1 MB budget: 512 documents a chunk after the first.
        assert_eq!(lengths[0], FIRST_CHUNK);
        assert!(lengths[1..lengths.len() - 1].iter().all(|&l| l == 512));
        // Small documents take the largest chunks; errors stop the walk.
        let mut calls = 0;
        for_each_sized_chunk(&documents, 1 << 30, |_| Ok(1)).unwrap();
        let stopped = for_each_sized_chunk(&documents, 1 << 20, |_| {
            calls += 1;
            Err(Error::invalid("temp_dir", "full"))
        });
        assert!(stopped.is_err() && calls == 1);
    }

    #[test]
    fn too_many_documents_are_refused() {
        assert!(check_document_count(MAX_DOCUMENTS).is_ok());
        let refused = check_document_count(MAX_DOCUMENTS + 1).unwrap_err();
        assert!(refused.to_string().contains("documents"), "{refused}");
    }
}
