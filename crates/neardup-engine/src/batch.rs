//! The batch dedup engine: sketch, group exact copies, candidates, verify, cluster.
//!
//! Pure (no I/O) and parallel with rayon; the result is identical for any thread count
//! because every parallel stage either maps in input order or sorts its output.
//!
//! Exact copies (equal [`Sketch::identity`]) are collapsed first: one *leader* per group (the
//! best ranked under the keep policy) enters candidate generation, the other members follow
//! their leader. This keeps LSH buckets small on corpora with many verbatim repeats
//! (newswires, reposts, boilerplate). Identical feature sets have identical similarities to
//! everything, so a member is a duplicate exactly when its leader is; it is assigned to its
//! leader's representative, which all-pairs representative clustering would not always pick
//! (a document ranked between the leader and the member can be closer to both: the member
//! would then go to it). Every removed member is still verified similar to its representative.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use neardup_core::cluster::{self, Assignment, ClusterMode, KeepPolicy, Pair};
use neardup_core::hash::hash128_u64s;
use neardup_core::{CorpusStats, SketchNotes};
use neardup_core::{EditLimit, Join, JoinMeasure, Method, Sketch};
use neardup_index::{
    BucketStats, CandidateGenerator, CandidateLimits, EditBound, EditJoin, HammingJoin, KeyTable,
    NgramBuckets, PrefixJoin, ProbeTable, SetMeasure, SharedKeyTable,
};
use rayon::prelude::*;

use neardup_core::{Error, Result};

/// Options of [`dedup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// How verified pairs become clusters.
    pub cluster: ClusterMode,
    /// Which document of a cluster is kept.
    pub keep: KeepPolicy,
    /// Index buckets with more documents pair every member with their `bucket_cap`
    /// best-ranked members under `keep` only (see [`CandidateLimits`]). At least 1.
    pub bucket_cap: usize,
    /// Candidate pairs per document on average: at most `documents x candidate_budget`;
    /// when the buckets hold more, the documents with the most candidates keep their
    /// best-ranked ones only (see [`CandidateLimits`]). At least 1.
    pub candidate_budget: usize,
    /// Bytes of the document-frequency table of a method that learns from the corpus:
    /// counts are exact when they surely fit, else a count-min sketch of this size (see
    /// [`neardup_core::corpus`]).
    pub corpus_memory: usize,
    /// The first `reference` documents are an indexed corpus that the others are checked
    /// against (`dedup --against`): they rank before every other document whatever `keep`
    /// says, are never compared with each other and so never removed by each other; a
    /// document after them is a duplicate of one of them, or (with `within`) of a kept one
    /// among its own. 0 (the default): every document is new.
    pub reference: u32,
    /// With a reference corpus, whether the new documents are also deduplicated among
    /// themselves. Ignored without one.
    pub within: bool,
    /// Return the method's lexicon ([`Method::lexicon`]) in [`EngineStats::lexicon`]
    /// (`dedup --save-lexicon`); a method without one is an error (parameter
    /// `save_lexicon`).
    pub save_lexicon: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            cluster: ClusterMode::default(),
            keep: KeepPolicy::default(),
            bucket_cap: neardup_index::DEFAULT_BUCKET_CAP,
            candidate_budget: neardup_index::DEFAULT_CANDIDATE_BUDGET,
            corpus_memory: neardup_core::corpus::DEFAULT_CORPUS_MEMORY,
            reference: 0,
            within: true,
            save_lexicon: false,
        }
    }
}

impl EngineOptions {
    /// Checks the options before a run ([`dedup`] itself accepts anything: with a limit of
    /// 0 it compares no documents).
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `bucket_cap` or `candidate_budget` when it is 0.
    pub fn validate(&self) -> Result<()> {
        let at_least_one = |parameter: &'static str, value: usize, what: &str| {
            if value == 0 {
                let message = format!("0 (must be at least 1: {what}; 0 would compare nothing)");
                return Err(Error::invalid(parameter, message));
            }
            Ok(())
        };
        at_least_one(
            "bucket_cap",
            self.bucket_cap,
            "members of a larger bucket are compared with its N best-ranked members",
        )?;
        at_least_one(
            "candidate_budget",
            self.candidate_budget,
            "at most documents x N candidate pairs are compared",
        )
    }

    /// The candidate limits of the index.
    pub fn limits(&self) -> CandidateLimits {
        CandidateLimits {
            bucket_cap: self.bucket_cap,
            candidate_budget: self.candidate_budget,
        }
    }
}

/// Receives progress events; the CLI draws a bar, tests ignore them.
pub trait Progress: Sync {
    /// A stage starts with `total` units of work.
    fn stage(&self, _name: &'static str, _total: u64) {}
    /// `done` more units of the current stage are finished.
    fn advance(&self, _done: u64) {}
}

/// A [`Progress`] that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;
impl Progress for NoProgress {}

/// Counters and timings of one run of the engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineStats {
    /// Documents with no feature after normalisation (always kept alone).
    pub empty_documents: u64,
    /// Documents with too few features to compare approximately ([`Sketch::exact_only`]):
    /// matched as exact copies only.
    pub exact_only_documents: u64,
    /// Documents removed as exact copies of their group's leader.
    pub exact_copies: u64,
    /// Candidate pairs from the index (leaders only, deduplicated).
    pub candidate_pairs: u64,
    /// Candidate pairs confirmed by the true measure.
    pub verified_pairs: u64,
    /// Documents in the largest index bucket.
    pub largest_bucket: u64,
    /// Buckets over the cap, paired with their anchors only.
    pub capped_buckets: u64,
    /// Documents left out of capped buckets, summed over those buckets (`ngram`, whose
    /// greedy pass sees a bucket's first `bucket_cap` members only; 0 for other methods).
    pub capped_out: u64,
    /// Similarity computations made while finding candidates (`ngram`'s greedy pass).
    pub candidate_comparisons: u64,
    /// The pair limit an exact join passed (0: none): [`dedup`] then fails.
    pub pair_limit_passed: u64,
    /// Documents with more candidate partners than the partner limit, compared with their
    /// best-ranked ones only (0 unless a flood hit the candidate budget: then, and only then,
    /// the result may differ from comparing every candidate).
    pub budget_hits: u64,
    /// Most candidate partners a document could keep, `None` when the budget did not cut in
    /// (see [`CandidateLimits`]).
    pub partner_limit: Option<u64>,
    /// Seconds per stage: (corpus, when the method learns from it), sketch, candidates,
    /// verify, cluster.
    pub seconds: Vec<(&'static str, f64)>,
    /// What boilerplate handling found and removed (see [`neardup_core::boilerplate`]).
    pub boilerplate: BoilerplateStats,
    /// The method's lexicon as a file (with [`EngineOptions::save_lexicon`]).
    pub lexicon: Option<String>,
}

/// What boilerplate handling found and removed in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoilerplateStats {
    /// The document-frequency table of the corpus pass (`exact` or `count-min`) and its
    /// bytes, when the method learned from the corpus.
    pub table: Option<(&'static str, usize)>,
    /// Distinct documents the corpus pass counted (exact copies after normalisation count
    /// once).
    pub counted_documents: u64,
    /// The limits learned, in documents ([`Method::learned_limits`]).
    pub limits: Vec<(&'static str, u64)>,
    /// Documents with at least one boilerplate line removed.
    pub documents: u64,
    /// Boilerplate line occurrences removed.
    pub removed_lines: u64,
    /// Shingles (or features) dropped as common, summed over documents.
    pub discounted_features: u64,
    /// The distinct boilerplate lines removed, most documents first (then first seen).
    pub lines: Vec<BoilerplateLine>,
}

/// A boilerplate line and how many documents had it removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoilerplateLine {
    /// The line as its first document has it.
    pub text: String,
    /// Documents it was removed from.
    pub documents: u64,
    /// The first document (input order) it was removed from.
    pub first: u32,
}

/// The outcome of [`dedup`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Kept or duplicate, per document.
    pub assignment: Assignment,
    /// Verified pairs between group leaders.
    pub leader_pairs: Vec<Pair>,
    /// Exact-copy groups with two members or more, leader first, then members by rank.
    pub groups: Vec<Vec<u32>>,
    /// Counters and timings.
    pub stats: EngineStats,
    /// Whether pairs carry a Hamming distance ([`Method::distance`]).
    pub distances: bool,
}

impl Outcome {
    /// Every verified pair between documents: leader pairs expanded to all members of both
    /// groups, plus all pairs inside exact groups (similarity 1). Each pair has `a < b`.
    pub fn all_pairs(&self) -> impl Iterator<Item = Pair> + '_ {
        let documents = self.assignment.duplicate_of.len();
        let mut group_of: Vec<u32> = vec![u32::MAX; documents];
        for (index, group) in self.groups.iter().enumerate() {
            for &member in group {
                group_of[member as usize] = index as u32;
            }
        }
        let members = move |document: u32| -> Vec<u32> {
            match group_of[document as usize] {
                u32::MAX => vec![document],
                group => self.groups[group as usize].clone(),
            }
        };
        let between = self.leader_pairs.iter().flat_map(move |pair| {
            let right = members(pair.b);
            members(pair.a).into_iter().flat_map(move |a| {
                right.clone().into_iter().map(move |b| Pair {
                    distance: pair.distance,
                    ..ordered(a, b, pair.similarity)
                })
            })
        });
        let distance = self.distances.then_some(0);
        let within = self.groups.iter().flat_map(move |group| {
            group.iter().enumerate().flat_map(move |(i, &a)| {
                (group[i + 1..].iter()).map(move |&b| Pair {
                    distance,
                    ..ordered(a, b, 1.0)
                })
            })
        });
        between.chain(within)
    }
}

fn ordered(a: u32, b: u32, similarity: f64) -> Pair {
    Pair {
        a: a.min(b),
        b: a.max(b),
        similarity,
        distance: None,
    }
}

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
    let (learned, seconds, table) = learned(method, texts, options.corpus_memory, progress);
    let method = learned.as_ref().unwrap_or(method);
    let lexicon = saved_lexicon(method, options)?;
    let mut outcome = dedup_texts(method, texts.par_iter(), options, progress)?;
    outcome.stats.lexicon = lexicon;
    outcome
        .stats
        .boilerplate
        .limits
        .splice(0..0, method.learned_limits());
    outcome.stats.seconds.splice(0..0, seconds);
    outcome.stats.boilerplate.table = table.map(|t| (t.0, t.1));
    outcome.stats.boilerplate.counted_documents = table.map_or(0, |t| t.2);
    Ok(outcome)
}

/// The method with its corpus statistics learned from `texts`, when it learns any (see
/// [`Method::learns_from_corpus`]), and the time it took.
#[allow(clippy::type_complexity)]
fn learned<M: Method, S: AsRef<str> + Sync>(
    method: &M,
    texts: &[S],
    memory: usize,
    progress: &dyn Progress,
) -> (
    Option<M>,
    Option<(&'static str, f64)>,
    Option<(&'static str, usize, u64)>,
) {
    if !method.learns_from_corpus() {
        return (None, None, None);
    }
    let started = Instant::now();
    progress.stage("corpus", texts.len() as u64);
    let mut method = method.clone();
    let stats = std::sync::Arc::new(learn_corpus(&method, texts, memory, progress));
    method.learn(&stats);
    let table = (stats.kind(), stats.memory_bytes(), stats.documents());
    (
        Some(method),
        Some(("corpus", started.elapsed().as_secs_f64())),
        Some(table),
    )
}

/// The document frequencies of `method`'s corpus features over `texts` (see
/// [`Method::learns_from_corpus`]) in a table of at most `memory` bytes (exact when the
/// corpus surely fits, else count-min: [`neardup_core::corpus`]). Documents with the same
/// features (exact copies after normalisation) are counted once, so that a text reposted
/// verbatim many times does not look like boilerplate. Deterministic whatever the thread
/// count: the first of equal documents is counted, and counts are sums.
pub fn learn_corpus<M: Method, S: AsRef<str> + Sync>(
    method: &M,
    texts: &[S],
    memory: usize,
    progress: &dyn Progress,
) -> CorpusStats {
    // Exact counts until they outgrow `memory`, then count-min (the same cells whenever
    // the switch happens: see `CorpusStats::fit_within`).
    let mut stats = CorpusStats::exact();
    let mut seen: std::collections::HashSet<u128> = std::collections::HashSet::new();
    let mut start = 0;
    while start < texts.len() {
        // Blocks of about 4 MB of text bound the features held at once.
        let mut end = start;
        let mut block_bytes = 0;
        while end < texts.len() && (end == start || block_bytes < CORPUS_BLOCK_BYTES) {
            block_bytes += texts[end].as_ref().len();
            end += 1;
        }
        let featured: Vec<(u128, Vec<u64>)> = texts[start..end]
            .par_iter()
            .map(|text| {
                let mut features = Vec::new();
                method.corpus_features(text.as_ref(), &mut features);
                features.sort_unstable();
                features.dedup();
                (hash128_u64s(&features), features)
            })
            .collect();
        let fresh: Vec<Vec<u64>> = featured
            .into_iter()
            .filter_map(|(identity, features)| seen.insert(identity).then_some(features))
            .collect();
        if let Some(shards) = stats.exact_shards_mut() {
            shards.par_iter_mut().for_each(|shard| {
                for features in &fresh {
                    shard.add_sorted(features);
                }
            });
            stats.add_documents(fresh.len() as u64);
            stats.fit_within(memory);
        } else {
            fresh
                .par_iter()
                .for_each(|features| stats.add_shared(features));
            stats.add_documents(fresh.len() as u64);
        }
        progress.advance((end - start) as u64);
        start = end;
    }
    stats
}

/// Text bytes per block of the corpus pass.
const CORPUS_BLOCK_BYTES: usize = 4 << 20;

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
    let (learned, seconds, table) = learned(method, &texts, options.corpus_memory, progress);
    let method = learned.as_ref().unwrap_or(method);
    let lexicon = saved_lexicon(method, options)?;
    let mut outcome = dedup_texts(method, texts.into_par_iter(), options, progress)?;
    outcome.stats.lexicon = lexicon;
    outcome
        .stats
        .boilerplate
        .limits
        .splice(0..0, method.learned_limits());
    outcome.stats.seconds.splice(0..0, seconds);
    outcome.stats.boilerplate.table = table.map(|t| (t.0, t.1));
    outcome.stats.boilerplate.counted_documents = table.map_or(0, |t| t.2);
    Ok(outcome)
}

/// The method's lexicon when [`EngineOptions::save_lexicon`] asks for it, known before the
/// documents are sketched (so that a method without one fails at once).
fn saved_lexicon<M: Method>(method: &M, options: EngineOptions) -> Result<Option<String>> {
    if !options.save_lexicon {
        return Ok(None);
    }
    match method.lexicon() {
        Some(lexicon) => lexicon.map(Some),
        None => Err(Error::invalid(
            "save_lexicon",
            format!("method {} has no lexicon (imatch has one)", method.name()),
        )),
    }
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

/// The engine over the texts `texts` yields in input order.
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
    check_document_count(texts.len())?;
    let started = Instant::now();
    progress.stage("sketch", texts.len() as u64);
    type Noted = (usize, Option<Box<DocumentNotes>>);
    let first_lines = FirstLines::default();
    let (sketches, noted): (Vec<M::Sketch>, Vec<Noted>) = texts
        .enumerate()
        .map(|(document, text)| {
            sketch_one(
                method,
                document as u32,
                text.as_ref(),
                &first_lines,
                progress,
            )
        })
        .unzip();
    let mut lengths = Vec::with_capacity(noted.len());
    let mut notes = Vec::with_capacity(noted.len());
    for (length, note) in noted {
        lengths.push(length);
        notes.push(note);
    }
    let noted = boilerplate_stats(notes, first_lines);
    let mut outcome = dedup_sketched(method, sketches, lengths, started, options, progress);
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

/// What sketching removed from one document, when it removed anything: the keys of its
/// boilerplate lines (their texts are kept once, in [`FirstLines`]).
struct DocumentNotes {
    lines: Box<[u64]>,
    discounted: u64,
}

/// Line key -> ((document, position), text) of its first occurrence.
type FirstLineMap = std::collections::HashMap<u64, ((u32, u32), Box<str>)>;

/// Per boilerplate line key, the first document (input order) it was removed from and its
/// text there: filled by the parallel sketch stage (the smallest document index wins, so
/// the result does not depend on the order the documents were sketched in), in shards
/// behind locks.
struct FirstLines {
    shards: Vec<std::sync::Mutex<FirstLineMap>>,
}

impl Default for FirstLines {
    fn default() -> FirstLines {
        FirstLines {
            shards: (0..64).map(|_| Default::default()).collect(),
        }
    }
}

impl FirstLines {
    /// `at` is (document, position of the line among the document's removed lines).
    fn offer(&self, key: u64, at: (u32, u32), text: &str) {
        let shard = &self.shards[(key % 64) as usize];
        let mut map = shard
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match map.get_mut(&key) {
            Some(first) if first.0 <= at => {}
            Some(first) => *first = (at, text.into()),
            None => {
                map.insert(key, (at, text.into()));
            }
        }
    }

    fn into_map(self) -> FirstLineMap {
        (self.shards.into_iter())
            .flat_map(|shard| {
                shard
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            })
            .collect()
    }
}

fn sketch_one<M: Method>(
    method: &M,
    document: u32,
    text: &str,
    first_lines: &FirstLines,
    progress: &dyn Progress,
) -> (M::Sketch, (usize, Option<Box<DocumentNotes>>)) {
    let mut notes = SketchNotes::default();
    let sketch = method.sketch_noted(text, &mut notes);
    progress.advance(1);
    let noted = (!notes.removed_lines.is_empty() || notes.discounted_features > 0).then(|| {
        let mut lines: Vec<u64> = Vec::with_capacity(notes.removed_lines.len());
        for line in &notes.removed_lines {
            if !lines.contains(&line.key) {
                first_lines.offer(line.key, (document, lines.len() as u32), line.text);
                lines.push(line.key);
            }
        }
        Box::new(DocumentNotes {
            lines: lines.into_boxed_slice(),
            discounted: notes.discounted_features,
        })
    });
    (sketch, (text.chars().count(), noted))
}

/// Sums the documents' notes: per distinct line, its first text and the documents it was
/// removed from, most documents first.
fn boilerplate_stats(
    notes: Vec<Option<Box<DocumentNotes>>>,
    first_lines: FirstLines,
) -> BoilerplateStats {
    let mut stats = BoilerplateStats::default();
    let mut counts: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for note in notes.into_iter().flatten() {
        stats.discounted_features += note.discounted;
        if note.lines.is_empty() {
            continue;
        }
        stats.documents += 1;
        stats.removed_lines += note.lines.len() as u64;
        for &key in note.lines.iter() {
            *counts.entry(key).or_insert(0) += 1;
        }
    }
    let mut first = first_lines.into_map();
    let mut lines: Vec<(u64, (u32, u32), Box<str>)> = (counts.into_iter())
        .filter_map(|(key, documents)| {
            let (at, text) = first.remove(&key)?;
            Some((documents, at, text))
        })
        .collect();
    // Most documents first, then by first occurrence: (document, position) is unique.
    lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    stats.lines = (lines.into_iter())
        .map(|(documents, at, text)| BoilerplateLine {
            text: text.into(),
            documents,
            first: at.0,
        })
        .collect();
    stats
}

/// Everything after the sketch stage (which began at `started`).
fn dedup_sketched<M: Method>(
    method: &M,
    mut sketches: Vec<M::Sketch>,
    lengths: Vec<usize>,
    started: Instant,
    options: EngineOptions,
    progress: &dyn Progress,
) -> Outcome {
    let documents = sketches.len() as u64;
    let mut stats = EngineStats::default();
    stats
        .seconds
        .push(("sketch", started.elapsed().as_secs_f64()));
    stats.empty_documents = sketches.iter().filter(|s| s.is_empty()).count() as u64;
    stats.exact_only_documents = sketches.iter().filter(|s| s.exact_only()).count() as u64;
    let distances = (sketches.first()).is_some_and(|s| method.distance(s, s).is_some());

    let started = Instant::now();
    let rank = reference_first(cluster::ranks(&lengths, options.keep), options.reference);
    let (leaders, groups) = exact_groups(&sketches, &rank);
    if let Some(limit) = method.common_limit(leaders.len() as u64) {
        let marked = mark_common(method, &mut sketches, &leaders, limit);
        stats.boilerplate.discounted_features += marked;
        stats.boilerplate.limits.push(("max_df", limit));
    }
    progress.stage("candidates", leaders.len() as u64);
    let (mut candidates, bucket_stats) =
        candidate_pairs(method, &sketches, &leaders, &rank, options.limits());
    if options.reference > 0 {
        // Pairs inside the reference corpus, and among the new documents unless asked.
        let new = |d: u32| d >= options.reference;
        candidates.retain(|&(a, b)| new(b) && (options.within || !new(a)));
    }
    stats.candidate_pairs = candidates.len() as u64;
    stats.largest_bucket = bucket_stats.largest_bucket;
    stats.capped_buckets = bucket_stats.capped_buckets;
    stats.capped_out = bucket_stats.left_out;
    stats.candidate_comparisons = bucket_stats.comparisons;
    stats.pair_limit_passed = bucket_stats.pair_limit_passed;
    stats.budget_hits = bucket_stats.budget_hits;
    stats.partner_limit = Some(bucket_stats.partner_limit).filter(|&l| l != u64::MAX);
    stats
        .seconds
        .push(("candidates", started.elapsed().as_secs_f64()));

    let started = Instant::now();
    progress.stage("verify", candidates.len() as u64);
    let leader_pairs = verify(method, &sketches, &candidates, progress);
    drop(candidates);
    stats.verified_pairs = leader_pairs.len() as u64;
    stats
        .seconds
        .push(("verify", started.elapsed().as_secs_f64()));

    let started = Instant::now();
    progress.stage("cluster", documents);
    let mut assignment = match options.cluster {
        ClusterMode::Representative => cluster::representative(&rank, &leader_pairs),
        ClusterMode::Connected => cluster::connected(&rank, &leader_pairs, |a, b| {
            method.similarity(&sketches[a as usize], &sketches[b as usize])
        }),
    };
    let independent = (options.reference > 0 && !options.within).then_some(options.reference);
    stats.exact_copies = follow_leaders(&mut assignment, &groups, independent);
    progress.advance(documents);
    stats
        .seconds
        .push(("cluster", started.elapsed().as_secs_f64()));
    Outcome {
        assignment,
        leader_pairs,
        groups,
        stats,
        distances,
    }
}

/// Marks the common features of the crowded leaders' sketches (see [`crowded_documents`])
/// and returns how many were marked. A feature is common when more than `limit` leaders
/// have it (exact copies count once). Only the features of crowded leaders are counted: in
/// every crowded leader, and in a deterministic sample of one in [`SAMPLE`] of the others
/// (each counting [`SAMPLE`] times), by a sorted merge of each leader's features with them.
/// A template's wording is in all of its crowd; ordinary language is spread over the rest,
/// where a sample estimates its frequency.
fn mark_common<M: Method>(
    method: &M,
    sketches: &mut [M::Sketch],
    leaders: &[u32],
    limit: u64,
) -> u64 {
    let crowded = crowded_documents(method, sketches, leaders, CROWD);
    let common: Vec<u32> = {
        let mut keys: Vec<u32> = (leaders.iter())
            .filter(|&&leader| crowded[leader as usize])
            .flat_map(|&leader| method.frequency_features(&sketches[leader as usize]))
            .copied()
            .collect();
        if keys.is_empty() {
            return 0;
        }
        keys.par_sort_unstable();
        keys.dedup();
        let counts: Vec<AtomicU32> = keys.iter().map(|_| AtomicU32::new(0)).collect();
        // One bit per 24-bit prefix of a key: most features of most documents miss it and
        // are never searched for.
        let mut prefixes = vec![0u64; 1 << 18];
        for &key in &keys {
            prefixes[(key >> 14) as usize] |= 1 << ((key >> 8) & 63);
        }
        // Crowded leaders are counted one by one; of the others, every SAMPLE-th (by
        // position) counts SAMPLE times.
        let counted: Vec<(u32, u32)> = (leaders.iter().enumerate())
            .filter_map(|(position, &leader)| match crowded[leader as usize] {
                true => Some((leader, 1)),
                false => (position % SAMPLE == 0).then_some((leader, SAMPLE as u32)),
            })
            .collect();
        counted.par_iter().for_each(|&(leader, weight)| {
            let features = method.frequency_features(&sketches[leader as usize]);
            let mut at = 0;
            for &value in features {
                if prefixes[(value >> 14) as usize] & (1 << ((value >> 8) & 63)) == 0 {
                    continue;
                }
                at = gallop(&keys, at, value);
                if at == keys.len() {
                    break;
                }
                if keys[at] == value {
                    counts[at].fetch_add(weight, Ordering::Relaxed);
                }
            }
        });
        (keys.iter().zip(&counts))
            .filter(|(_, count)| u64::from(count.load(Ordering::Relaxed)) > limit)
            .map(|(&key, _)| key)
            .collect()
    };
    if common.is_empty() {
        return 0;
    }
    let is_common = |value: u32| common.binary_search(&value).is_ok();
    let mut is_leader = vec![false; sketches.len()];
    for &leader in leaders {
        is_leader[leader as usize] = true;
    }
    (sketches
        .par_iter_mut()
        .zip(is_leader.par_iter())
        .zip(crowded.par_iter()))
    .filter(|((_, leader), crowded)| **leader && **crowded)
    .map(|((sketch, _), _)| method.mark_common(sketch, &is_common))
    .sum()
}

/// One in this many uncrowded leaders is counted by [`mark_common`].
const SAMPLE: usize = 4;

/// The first index at or after `from` whose key is at least `value` (`keys` sorted):
/// exponential then binary search, so a walk over a sorted list costs the log of the gaps.
fn gallop(keys: &[u32], from: usize, value: u32) -> usize {
    let (mut low, mut high, mut step) = (from, from, 1);
    while high < keys.len() && keys[high] < value {
        low = high + 1;
        high += step;
        step *= 2;
    }
    let high = high.min(keys.len());
    low + keys[low..high].partition_point(|&k| k < value)
}

/// A bucket of more than this many distinct documents is a crowd (see
/// [`crowded_documents`]): ten texts that agree on a whole LSH band are one text in ten
/// copies or ten fillings of one template.
const CROWD: u64 = 10;

/// Per document, whether it shares a bucket key with more than `limit` other leaders: a
/// member of a large group of near-identical texts (a template's notices), as opposed to a
/// document whose common features are spread over ordinary language. Only such documents
/// get the rare-feature check. Methods that do not find candidates by shared keys have all
/// their documents checked.
fn crowded_documents<M: Method>(
    method: &M,
    sketches: &[M::Sketch],
    leaders: &[u32],
    limit: u64,
) -> Vec<bool> {
    if method.join() != Join::SymmetricKeys {
        return vec![true; sketches.len()];
    }
    let keys: Vec<(u32, Vec<u64>)> = leaders
        .par_iter()
        .map(|&leader| {
            let mut keys = Vec::new();
            method.keys(&sketches[leader as usize], &mut keys);
            keys.sort_unstable();
            keys.dedup();
            (leader, keys)
        })
        .collect();
    let mut all: Vec<u64> = keys.iter().flat_map(|(_, k)| k.iter().copied()).collect();
    all.par_sort_unstable();
    let crowded_keys: Vec<u64> = (all.chunk_by(|a, b| a == b))
        .filter(|run| run.len() as u64 > limit)
        .map(|run| run[0])
        .collect();
    drop(all);
    let mut crowded = vec![false; sketches.len()];
    for (leader, keys) in keys {
        crowded[leader as usize] = keys.iter().any(|k| crowded_keys.binary_search(k).is_ok());
    }
    crowded
}

/// Groups non-empty documents by identity. Returns the leaders (one per distinct identity,
/// in input order) and the groups of two or more (leader first, then by rank).
fn exact_groups<S: Sketch>(sketches: &[S], rank: &[u32]) -> (Vec<u32>, Vec<Vec<u32>>) {
    let mut by_identity: Vec<(u128, u32, u32)> = sketches
        .par_iter()
        .enumerate()
        .filter(|(_, sketch)| !sketch.is_empty())
        .map(|(document, sketch)| (sketch.identity(), rank[document], document as u32))
        .collect();
    by_identity.par_sort_unstable();
    let mut leaders = Vec::new();
    let mut groups = Vec::new();
    for group in by_identity.chunk_by(|x, y| x.0 == y.0) {
        leaders.push(group[0].2);
        if group.len() > 1 {
            groups.push(group.iter().map(|entry| entry.2).collect());
        }
    }
    leaders.sort_unstable();
    (leaders, groups)
}

/// Candidate pairs `(a, b)`, `a < b`, sorted, among the leaders, from the generator the
/// method's [`Join`] names. The generators see documents by rank, so that a bucket over the
/// cap takes its best-ranked members (the ones the keep policy would keep) as anchors, and a
/// document over the candidate budget keeps its best-ranked partners: the ones it can be a
/// duplicate of.
fn candidate_pairs<M: Method>(
    method: &M,
    sketches: &[M::Sketch],
    leaders: &[u32],
    rank: &[u32],
    limits: CandidateLimits,
) -> (Vec<(u32, u32)>, BucketStats) {
    // Documents with too few features take part in exact-copy groups only.
    let leaders: Vec<u32> = (leaders.iter().copied())
        .filter(|&document| !sketches[document as usize].exact_only())
        .collect();
    let leaders = &leaders[..];
    let entries = |emit: fn(&M, &M::Sketch, &mut Vec<u64>)| -> Vec<(u64, u32)> {
        leaders
            .par_iter()
            .flat_map_iter(|&document| {
                let mut keys = Vec::new();
                emit(method, &sketches[document as usize], &mut keys);
                let ranked = rank[document as usize];
                keys.into_iter().map(move |key| (key, ranked))
            })
            .collect()
    };
    let (ranked_pairs, stats) = match method.join() {
        Join::Identity => {
            let none = BucketStats {
                partner_limit: u64::MAX,
                ..BucketStats::default()
            };
            (Vec::new(), none)
        }
        Join::SymmetricKeys => {
            CandidateGenerator::candidate_pairs(KeyTable::from_entries(entries(M::keys)), limits)
        }
        Join::Probe => {
            ProbeTable::new(entries(M::keys), entries(M::probe_keys)).candidate_pairs(limits)
        }
        Join::SharedKeys { min } => {
            SharedKeyTable::new(entries(M::keys), min).candidate_pairs(limits)
        }
        Join::Prefix { measure, threshold } => {
            let sets = leaders
                .par_iter()
                .map(|&document| {
                    let mut tokens = Vec::new();
                    method.join_tokens(&sketches[document as usize], &mut tokens);
                    (rank[document as usize], tokens)
                })
                .collect();
            let measure = match measure {
                JoinMeasure::Jaccard => SetMeasure::Jaccard,
                JoinMeasure::Cosine => SetMeasure::Cosine,
                JoinMeasure::Containment => SetMeasure::Overlap,
            };
            PrefixJoin::new(sets, measure, threshold).candidate_pairs(limits)
        }
        Join::Edit { limit } => {
            let bound = match limit {
                EditLimit::Absolute(edits) => EditBound::Absolute(edits),
                EditLimit::Normalized(threshold) => EditBound::Normalized(threshold),
            };
            EditJoin::new(sequences(method, sketches, leaders, rank), bound).candidate_pairs(limits)
        }
        Join::NgramBuckets { m } => {
            let mut by_rank = vec![0u32; rank.len()];
            for (document, &r) in rank.iter().enumerate() {
                by_rank[r as usize] = document as u32;
            }
            let similar = |x: u32, y: u32| {
                let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
                method.verify(&sketches[a as usize], &sketches[b as usize])
            };
            NgramBuckets::new(
                sequences(method, sketches, leaders, rank),
                m as usize,
                similar,
            )
            .candidate_pairs(limits)
        }
        Join::Hamming => {
            let fingerprints = leaders
                .par_iter()
                .filter_map(|&document| {
                    let (fingerprint, radius) = method.hamming_key(&sketches[document as usize])?;
                    Some((rank[document as usize], fingerprint, radius))
                })
                .collect();
            HammingJoin::new(fingerprints).candidate_pairs(limits)
        }
    };
    let mut by_rank = vec![0u32; rank.len()];
    for (document, &r) in rank.iter().enumerate() {
        by_rank[r as usize] = document as u32;
    }
    let mut pairs: Vec<(u32, u32)> = ranked_pairs
        .into_par_iter()
        .map(|(x, y)| {
            let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.par_sort_unstable();
    (pairs, stats)
}

/// `(rank, join sequence)` of every leader, for the edit join and the n-gram index.
fn sequences<M: Method>(
    method: &M,
    sketches: &[M::Sketch],
    leaders: &[u32],
    rank: &[u32],
) -> Vec<(u32, Vec<u32>)> {
    leaders
        .par_iter()
        .map(|&document| {
            let sequence = method.join_sequence(&sketches[document as usize]);
            (rank[document as usize], sequence.to_vec())
        })
        .collect()
}

fn verify<M: Method>(
    method: &M,
    sketches: &[M::Sketch],
    candidates: &[(u32, u32)],
    progress: &dyn Progress,
) -> Vec<Pair> {
    candidates
        .par_chunks(4096)
        .flat_map_iter(|chunk| {
            progress.advance(chunk.len() as u64);
            chunk.iter().filter_map(|&(a, b)| {
                let (sa, sb) = (&sketches[a as usize], &sketches[b as usize]);
                let similarity = method.verify(sa, sb)?;
                let distance = method.distance(sa, sb);
                Some(Pair {
                    a,
                    b,
                    similarity,
                    distance,
                })
            })
        })
        .collect()
}

/// `rank` with the first `reference` documents moved before all others, each side in its
/// own order.
fn reference_first(rank: Vec<u32>, reference: u32) -> Vec<u32> {
    if reference == 0 {
        return rank;
    }
    let mut order: Vec<u32> = (0..rank.len() as u32).collect();
    order.sort_unstable_by_key(|&d| (d >= reference, rank[d as usize]));
    let mut reranked = vec![0u32; rank.len()];
    for (position, &document) in order.iter().enumerate() {
        reranked[document as usize] = position as u32;
    }
    reranked
}

/// Members of exact groups follow their leader: a duplicate of the leader when the leader is
/// kept, else a duplicate of the leader's kept document. Returns the number of members.
///
/// With `independent = Some(reference)` (new documents checked against a reference corpus
/// only), a group led by a new document (so holding no reference document: those rank
/// first) follows its leader only when the leader is a duplicate of a reference document;
/// otherwise its members are kept, as they would be one by one.
fn follow_leaders(
    assignment: &mut Assignment,
    groups: &[Vec<u32>],
    independent: Option<u32>,
) -> u64 {
    let mut members = 0;
    for group in groups {
        let leader = group[0] as usize;
        if independent.is_some_and(|reference| group[0] >= reference)
            && assignment.duplicate_of[leader].is_none()
        {
            continue;
        }
        let (target, similarity) = match assignment.duplicate_of[leader] {
            None => (group[0], 1.0),
            Some(kept) => (kept, assignment.similarity[leader].unwrap_or(1.0)),
        };
        for &member in &group[1..] {
            assignment.duplicate_of[member as usize] = Some(target);
            assignment.similarity[member as usize] = Some(similarity);
            members += 1;
        }
    }
    members
}
