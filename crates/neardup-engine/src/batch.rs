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
use neardup_core::hash::{hash128_u64s, mix64};
use neardup_core::sharded::ShardedTable;
use neardup_core::{CorpusStats, SketchNotes};
use neardup_core::{EditLimit, Join, JoinMeasure, Method, Sketch};
use neardup_index::{
    BucketStats, CandidateGenerator, CandidateLimits, EditBound, EditJoin, HammingJoin, KeyTable,
    NgramBuckets, PrefixJoin, ProbeTable, SetMeasure, SharedKeyTable,
};
use rayon::prelude::*;

use neardup_core::{Error, Result};

use crate::external::{ExternalKeys, ExternalPairs};
use crate::spill::{Held, SketchStore, Spilling, StoreBuilder};
use neardup_core::codec::{self, Decoder, Encoder};

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
    /// A stage measured in bytes starts, with `total` bytes of work (0: unknown); by
    /// default a [`Progress::stage`] of bytes.
    fn stage_bytes(&self, name: &'static str, total: u64) {
        self.stage(name, total);
    }
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
    /// Bytes of sketches written to the spill (0 when they were held in memory).
    pub spilled_bytes: u64,
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
    pub groups: Groups,
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
                group => self.groups.get(group as usize).to_vec(),
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

/// Groups of documents, end to end in one list: 4 bytes a member and 4 a group, where a
/// `Vec` per group took 24 bytes and an allocation (about 100 MB for 2 million groups).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    members: Vec<u32>,
    /// Where each group ends in `members`.
    ends: Vec<u32>,
}

impl Groups {
    /// Adds a group.
    pub fn push(&mut self, group: impl IntoIterator<Item = u32>) {
        self.members.extend(group);
        self.ends.push(self.members.len() as u32);
    }

    /// Group `index`.
    pub fn get(&self, index: usize) -> &[u32] {
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] as usize,
        };
        &self.members[start..self.ends[index] as usize]
    }

    /// Groups held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no group is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The groups in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }
}

impl From<Vec<Vec<u32>>> for Groups {
    fn from(groups: Vec<Vec<u32>>) -> Groups {
        let mut flat = Groups::default();
        for group in groups {
            flat.push(group);
        }
        flat
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
    let learned = Learned::from_texts(method, texts, options, progress)?;
    let mut outcome = dedup_texts(learned.method(), texts.par_iter(), options, progress)?;
    learned.complete(&mut outcome);
    Ok(outcome)
}

/// A method ready to sketch: learned from the corpus when it learns from one (see
/// [`Method::learns_from_corpus`]), with what the run reports of that pass (its time, its
/// table, the lexicon to save). A run that reads its corpus in blocks makes the pass with a
/// [`CorpusLearner`] and gives it to [`Learned::new`].
pub struct Learned<M: Method> {
    method: M,
    /// Seconds of the corpus pass and (kind, bytes, documents) of its table.
    corpus: Option<(f64, (&'static str, usize, u64))>,
    lexicon: Option<String>,
}

impl<M: Method> Learned<M> {
    /// `method` after learning `corpus` (the counts of its corpus pass and the seconds it
    /// took), or as it is without one.
    ///
    /// # Errors
    /// [`EngineOptions::save_lexicon`] for a method without a lexicon (parameter
    /// `save_lexicon`), or a lexicon that cannot be written.
    pub fn new(
        method: &M,
        corpus: Option<(CorpusStats, f64)>,
        options: EngineOptions,
    ) -> Result<Learned<M>> {
        let mut method = method.clone();
        let corpus = corpus.map(|(stats, seconds)| {
            let stats = std::sync::Arc::new(stats);
            method.learn(&stats);
            (
                seconds,
                (stats.kind(), stats.memory_bytes(), stats.documents()),
            )
        });
        let lexicon = saved_lexicon(&method, options)?;
        Ok(Learned {
            method,
            corpus,
            lexicon,
        })
    }

    /// Learns from `texts` in memory when the method learns from a corpus.
    fn from_texts<S: AsRef<str> + Sync>(
        method: &M,
        texts: &[S],
        options: EngineOptions,
        progress: &dyn Progress,
    ) -> Result<Learned<M>> {
        let corpus = method.learns_from_corpus().then(|| {
            let started = Instant::now();
            progress.stage("corpus", texts.len() as u64);
            let stats = learn_corpus(method, texts, options.corpus_memory, progress);
            (stats, started.elapsed().as_secs_f64())
        });
        Learned::new(method, corpus, options)
    }

    /// The method to sketch with.
    pub fn method(&self) -> &M {
        &self.method
    }

    /// Adds what was learned to the statistics of `outcome` (an outcome of
    /// [`Learned::method`]).
    pub fn complete(self, outcome: &mut Outcome) {
        let stats = &mut outcome.stats;
        stats.lexicon = self.lexicon;
        (stats.boilerplate.limits).splice(0..0, self.method.learned_limits());
        if let Some((seconds, table)) = self.corpus {
            stats.seconds.insert(0, ("corpus", seconds));
            stats.boilerplate.table = Some((table.0, table.1));
            stats.boilerplate.counted_documents = table.2;
        }
    }
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
    let mut learner = CorpusLearner::new(memory);
    learner.push(method, texts, progress);
    learner.finish()
}

/// The corpus pass of [`learn_corpus`], fed block by block (a run that reads its input in
/// blocks gives each block to [`CorpusLearner::push`]); the counts do not depend on how the
/// texts were cut into blocks.
pub struct CorpusLearner {
    stats: CorpusStats,
    /// The texts counted so far, by the upper 64 bits of their identity (a hash of their
    /// distinct features), in shards so that growing does not hold the table twice: 9 bytes
    /// a slot where a set of the whole identities took 17, and a text counts once. Two
    /// different texts whose identities agree in 64 bits (about one chance in 10^5 at 20
    /// million texts) would count as one: the later one's features go uncounted, which moves
    /// a document frequency by one.
    seen: ShardedTable<u64>,
    memory: usize,
}

impl CorpusLearner {
    /// A corpus pass whose table holds at most `memory` bytes.
    pub fn new(memory: usize) -> CorpusLearner {
        // Exact counts until they outgrow `memory`, then count-min (the same cells whenever
        // the switch happens: see `CorpusStats::fit_within`).
        CorpusLearner {
            stats: CorpusStats::exact(),
            seen: ShardedTable::new(),
            memory,
        }
    }

    /// Counts the features of the next texts.
    pub fn push<M: Method, S: AsRef<str> + Sync>(
        &mut self,
        method: &M,
        texts: &[S],
        progress: &dyn Progress,
    ) {
        let (stats, seen) = (&mut self.stats, &mut self.seen);
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
                .filter_map(|(identity, features)| {
                    let upper = (identity >> 64) as u64;
                    (seen.insert_new(upper, upper, |&v| v == upper, |&v| v)).then_some(features)
                })
                .collect();
            if let Some(shards) = stats.exact_shards_mut() {
                shards.par_iter_mut().for_each(|shard| {
                    for features in &fresh {
                        shard.add_sorted(features);
                    }
                });
                stats.add_documents(fresh.len() as u64);
                stats.fit_within(self.memory);
            } else {
                fresh
                    .par_iter()
                    .for_each(|features| stats.add_shared(features));
                stats.add_documents(fresh.len() as u64);
            }
            progress.advance((end - start) as u64);
            start = end;
        }
    }

    /// The counts.
    pub fn finish(self) -> CorpusStats {
        self.stats
    }
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
    let learned = Learned::from_texts(method, &texts, options, progress)?;
    let mut outcome = dedup_texts(learned.method(), texts.into_par_iter(), options, progress)?;
    learned.complete(&mut outcome);
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

/// Per document, what the engine keeps in memory whatever holds the sketches.
#[derive(Default)]
struct Facts {
    /// [`Sketch::identity`].
    identity: Vec<u128>,
    /// [`Sketch::is_empty`].
    empty: Vec<bool>,
    /// [`Sketch::exact_only`].
    exact_only: Vec<bool>,
    /// Characters of the text (for the keep policy), at most `u32::MAX`.
    lengths: Vec<u32>,
    /// Whether pairs carry a distance ([`Method::distance`] of the first sketch with itself).
    distances: Option<bool>,
}

/// The sketch stage, fed block by block: [`dedup`] gives it every text at once; a run whose
/// corpus does not fit in memory reads its input in blocks, gives each block to
/// [`Sketcher::push_owned`], and has the sketches spilled ([`crate::spill`]). Either way
/// [`Sketcher::finish`] gives the same outcome for the same texts, however they were cut
/// into blocks.
pub struct Sketcher<'m, M: Method> {
    method: &'m M,
    documents: Option<usize>,
    store: StoreBuilder<M::Sketch>,
    spilling: Option<Spilling>,
    facts: Facts,
    notes: NoteTotals,
    first_lines: FirstLines,
    started: Instant,
}

impl Facts {
    /// Room for `documents` documents, so that a known corpus takes no growth slack.
    fn with_capacity(documents: usize) -> Facts {
        Facts {
            identity: Vec::with_capacity(documents),
            empty: Vec::with_capacity(documents),
            exact_only: Vec::with_capacity(documents),
            lengths: Vec::with_capacity(documents),
            distances: None,
        }
    }
}

impl<'m, M: Method> Sketcher<'m, M> {
    /// A sketch stage with `method` (already learned, see [`Learned`]) for `documents`
    /// texts when their number is known (the stage's progress counts them, and
    /// [`Sketcher::finish`] checks that all came; a caller that does not know it reports
    /// progress itself). With `spilling`, sketches are written to a spill in its
    /// directory, and the candidate stage of symmetric keys sorts its entries in runs there
    /// (see [`crate::external`]); else everything is kept in memory.
    ///
    /// # Errors
    /// More than [`MAX_DOCUMENTS`] documents (parameter `documents`).
    pub fn new(
        method: &'m M,
        documents: Option<usize>,
        spilling: Option<Spilling>,
        progress: &dyn Progress,
    ) -> Result<Sketcher<'m, M>> {
        let spill = match &spilling {
            Some(spilling) => {
                Some((spilling.dir.create("sketches")).map_err(crate::spill::spill_error)?)
            }
            None => None,
        };
        if let Some(documents) = documents {
            check_document_count(documents)?;
            progress.stage("sketch", documents as u64);
        }
        Ok(Sketcher {
            method,
            documents,
            store: StoreBuilder::new(spill, documents.unwrap_or(0)),
            spilling,
            facts: Facts::with_capacity(documents.unwrap_or(0)),
            notes: NoteTotals::default(),
            first_lines: FirstLines::default(),
            started: Instant::now(),
        })
    }

    /// The state of a spilling sketch stage, to save as a checkpoint: the facts and notes of
    /// every document sketched so far and where its sketch is in the spill (which is
    /// flushed, and must be kept with the checkpoint). [`Sketcher::resume`] reads it back.
    ///
    /// # Errors
    /// A sketch stage that does not spill (parameter `checkpoint`), or a spill that cannot
    /// be written (parameter `temp_dir`).
    pub fn checkpoint(&mut self) -> Result<Vec<u8>> {
        let offsets = match self.store.flushed_offsets()? {
            Some(offsets) => offsets,
            None => {
                return Err(Error::invalid(
                    "checkpoint",
                    "only a spilling sketch stage saves checkpoints",
                ))
            }
        };
        let mut out = Encoder::new();
        out.u64(self.documents.map_or(u64::MAX, |d| d as u64));
        out.f64(self.started.elapsed().as_secs_f64());
        out.u64(offsets.len() as u64);
        for offset in offsets.iter() {
            out.u64(offset);
        }
        let facts = &self.facts;
        out.seq(&facts.identity, |out, &identity| out.u128(identity));
        out.seq(&facts.empty, |out, &empty| out.bool(empty));
        out.seq(&facts.exact_only, |out, &only| out.bool(only));
        out.seq(&facts.lengths, |out, &length| out.u32(length));
        out.u8(match facts.distances {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
        self.notes.encode(&mut out);
        let mut first: Vec<(u64, (u32, u32), Box<str>)> = (self.first_lines.shards.iter())
            .flat_map(|shard| {
                let map = shard
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                (map.iter())
                    .map(|(&key, (at, text))| (key, *at, text.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        first.sort_unstable();
        out.seq(&first, |out, (key, (document, position), text)| {
            out.u64(*key);
            out.u32(*document);
            out.u32(*position);
            out.str(text);
        });
        Ok(out.finish())
    }

    /// A sketch stage resumed from a [`Sketcher::checkpoint`] of the same method (learned
    /// the same way) and the same texts, its sketches in the spill `sketches` of
    /// `spilling`'s directory. Its seconds count on from the checkpoint's.
    ///
    /// # Errors
    /// The checkpoint is malformed (parameter `checkpoint`), or its spill is missing or
    /// shorter than it says (parameter `temp_dir`).
    pub fn resume(method: &'m M, checkpoint: &[u8], spilling: Spilling) -> Result<Sketcher<'m, M>> {
        let mut from = Decoder::new(checkpoint)?;
        let documents = match from.u64()? {
            u64::MAX => None,
            d => Some(usize::try_from(d).map_err(|_| codec::corrupt("a document count"))?),
        };
        let seconds = from.f64()?;
        let offsets = from.seq(8, |d| d.u64())?;
        let identity = from.seq(16, |d| d.u128())?;
        let empty = from.seq(1, |d| d.bool())?;
        let exact_only = from.seq(1, |d| d.bool())?;
        let lengths = from.seq(4, |d| d.u32())?;
        let distances = match from.u8()? {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            other => return Err(codec::corrupt(format!("distances {other}"))),
        };
        let notes = NoteTotals::decode(&mut from)?;
        let first = from.seq(24, |d| {
            Ok((d.u64()?, (d.u32()?, d.u32()?), Box::<str>::from(d.str()?)))
        })?;
        from.end()?;
        let count = lengths.len();
        if offsets.is_empty()
            || [
                identity.len(),
                empty.len(),
                exact_only.len(),
                offsets.len() - 1,
            ]
            .iter()
            .any(|&n| n != count)
        {
            return Err(codec::corrupt("its per-document lists differ in length"));
        }
        let first_lines = FirstLines::default();
        for (key, at, text) in first {
            first_lines.shards[(key % 64) as usize]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(key, (at, text));
        }
        let spill = (spilling.dir.open("sketches")).map_err(crate::spill::spill_error)?;
        let store = StoreBuilder::reopened(spill, offsets)?;
        let started = Instant::now()
            .checked_sub(std::time::Duration::from_secs_f64(seconds.max(0.0)))
            .unwrap_or_else(Instant::now);
        Ok(Sketcher {
            method,
            documents,
            store,
            spilling: Some(spilling),
            facts: Facts {
                identity,
                empty,
                exact_only,
                lengths,
                distances,
            },
            notes,
            first_lines,
            started,
        })
    }

    /// Sketches the next texts (borrowed).
    ///
    /// # Errors
    /// More texts than announced, or a spill that cannot be written (parameter `temp_dir`).
    pub fn push<S: AsRef<str> + Sync>(
        &mut self,
        texts: &[S],
        progress: &dyn Progress,
    ) -> Result<()> {
        self.push_iter(texts.par_iter(), progress)
    }

    /// Sketches the next texts, dropping each once it is sketched.
    ///
    /// # Errors
    /// As [`Sketcher::push`].
    pub fn push_owned(&mut self, texts: Vec<String>, progress: &dyn Progress) -> Result<()> {
        self.push_iter(texts.into_par_iter(), progress)
    }

    fn push_iter<I>(&mut self, texts: I, progress: &dyn Progress) -> Result<()>
    where
        I: IndexedParallelIterator,
        I::Item: AsRef<str>,
    {
        let first = self.facts.lengths.len();
        check_document_count(first + texts.len())?;
        if let Some(documents) = self.documents.filter(|&d| first + texts.len() > d) {
            return Err(Error::invalid(
                "documents",
                format!(
                    "{} texts given to a sketch stage of {documents}",
                    first + texts.len()
                ),
            ));
        }
        type Noted = (u32, Option<DocumentNotes>);
        let (method, first_lines) = (self.method, &self.first_lines);
        let (sketches, noted): (Vec<M::Sketch>, Vec<Noted>) = texts
            .enumerate()
            .map(|(i, text)| {
                sketch_one(
                    method,
                    (first + i) as u32,
                    text.as_ref(),
                    first_lines,
                    progress,
                )
            })
            .unzip();
        let facts = &mut self.facts;
        if facts.distances.is_none() {
            facts.distances = (sketches.first()).map(|s| method.distance(s, s).is_some());
        }
        for sketch in &sketches {
            facts.identity.push(sketch.identity());
            facts.empty.push(sketch.is_empty());
            facts.exact_only.push(sketch.exact_only());
        }
        for (length, note) in noted {
            facts.lengths.push(length);
            if let Some(note) = note {
                self.notes.add(&note);
            }
        }
        self.store.extend(sketches)
    }

    /// Everything after the sketch stage: exact groups, candidates, verification, clusters.
    ///
    /// # Errors
    /// Fewer texts than announced (parameter `documents`), an exact join over its pair limit
    /// (parameter `candidate_budget`), or a spill that cannot be read (parameter `temp_dir`).
    pub fn finish(self, options: EngineOptions, progress: &dyn Progress) -> Result<Outcome> {
        let given = self.facts.lengths.len();
        if let Some(documents) = self.documents.filter(|&d| d != given) {
            return Err(Error::invalid(
                "documents",
                format!("{given} texts given to a sketch stage of {documents}"),
            ));
        }
        let noted = boilerplate_stats(self.notes, self.first_lines);
        let store = self.store.finish()?;
        let spilled = store.spilled_bytes();
        let mut outcome = dedup_sketched(
            self.method,
            (store, self.spilling.as_ref()),
            self.facts,
            self.started,
            options,
            progress,
        )?;
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

/// What sketching removed from one document, when it removed anything: the keys of its
/// boilerplate lines (their texts are kept once, in [`FirstLines`]).
struct DocumentNotes {
    lines: Vec<u64>,
    discounted: u64,
}

/// The documents' notes summed as they are sketched (sums and counts, so the order of the
/// documents does not change them): nothing is held per document.
#[derive(Default)]
struct NoteTotals {
    /// Features discounted, over all documents.
    discounted: u64,
    /// Documents with at least one boilerplate line removed.
    documents: u64,
    /// Lines removed, over all documents.
    removed_lines: u64,
    /// Per distinct line key, the documents it was removed from.
    counts: std::collections::HashMap<u64, u64>,
}

impl NoteTotals {
    fn add(&mut self, note: &DocumentNotes) {
        self.discounted += note.discounted;
        if note.lines.is_empty() {
            return;
        }
        self.documents += 1;
        self.removed_lines += note.lines.len() as u64;
        for &key in &note.lines {
            *self.counts.entry(key).or_insert(0) += 1;
        }
    }

    fn encode(&self, out: &mut Encoder) {
        out.u64(self.discounted);
        out.u64(self.documents);
        out.u64(self.removed_lines);
        let mut counts: Vec<(u64, u64)> = self.counts.iter().map(|(&k, &n)| (k, n)).collect();
        counts.sort_unstable();
        out.seq(&counts, |out, &(key, documents)| {
            out.u64(key);
            out.u64(documents);
        });
    }

    fn decode(from: &mut Decoder<'_>) -> Result<NoteTotals> {
        let (discounted, documents, removed_lines) = (from.u64()?, from.u64()?, from.u64()?);
        let counts = from.seq(16, |d| Ok((d.u64()?, d.u64()?)))?;
        Ok(NoteTotals {
            discounted,
            documents,
            removed_lines,
            counts: counts.into_iter().collect(),
        })
    }
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
) -> (M::Sketch, (u32, Option<DocumentNotes>)) {
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
        DocumentNotes {
            lines,
            discounted: notes.discounted_features,
        }
    });
    let length = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
    (sketch, (length, noted))
}

/// Sums the documents' notes: per distinct line, its first text and the documents it was
/// removed from, most documents first.
fn boilerplate_stats(notes: NoteTotals, first_lines: FirstLines) -> BoilerplateStats {
    let mut stats = BoilerplateStats {
        discounted_features: notes.discounted,
        documents: notes.documents,
        removed_lines: notes.removed_lines,
        ..BoilerplateStats::default()
    };
    let counts = notes.counts;
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

/// Everything after the sketch stage (which began at `started`).
fn dedup_sketched<M: Method>(
    method: &M,
    (mut sketches, spilling): (SketchStore<M::Sketch>, Option<&Spilling>),
    facts: Facts,
    started: Instant,
    options: EngineOptions,
    progress: &dyn Progress,
) -> Result<Outcome> {
    let documents = sketches.len() as u64;
    let mut stats = EngineStats::default();
    stats
        .seconds
        .push(("sketch", started.elapsed().as_secs_f64()));
    // Each fact is dropped once it has served, so that the later stages do not hold it.
    let Facts {
        identity,
        empty,
        exact_only,
        lengths,
        distances,
    } = facts;
    stats.empty_documents = empty.iter().filter(|&&e| e).count() as u64;
    stats.exact_only_documents = exact_only.iter().filter(|&&e| e).count() as u64;
    let distances = distances.unwrap_or(false);

    let started = Instant::now();
    let rank = reference_first(cluster::ranks(&lengths, options.keep), options.reference);
    drop(lengths);
    let (leaders, groups) = exact_groups(&identity, &empty, &rank);
    drop((identity, empty));
    // A spilling run's crowd check sorts the leaders' keys; when marks leave keys alone,
    // the candidates are found from those runs instead of sorting the keys again.
    let mut gathered = None;
    if let Some(limit) = method.common_limit(leaders.len() as u64) {
        progress.stage("common", leaders.len() as u64);
        let (marked, keys, spilled) =
            mark_common(method, &mut sketches, spilling, &leaders, limit)?;
        stats.boilerplate.discounted_features += marked;
        stats.boilerplate.limits.push(("max_df", limit));
        stats.spilled_bytes += spilled;
        if let Some(keys) = keys {
            // The runs' bytes count once: here, or with the candidates that read them.
            match method.marks_change_keys() {
                true => stats.spilled_bytes += keys.spilled,
                false => gathered = Some(keys),
            }
        }
    }
    progress.stage("candidates", leaders.len() as u64);
    let (candidates, bucket_stats) = candidate_pairs(
        method,
        &sketches,
        (spilling, gathered),
        &exact_only,
        &leaders,
        &rank,
        options.limits(),
    )?;
    drop((exact_only, leaders));
    stats.spilled_bytes += bucket_stats.1;
    let mut bucket_stats = bucket_stats.0;
    // Pairs inside the reference corpus, and among the new documents unless asked.
    let wanted = |(a, b): (u32, u32)| {
        let new = |d: u32| d >= options.reference;
        options.reference == 0 || (new(b) && (options.within || !new(a)))
    };
    let leader_pairs = match candidates {
        CandidateList::Held(mut candidates) => {
            candidates.retain(|&pair| wanted(pair));
            stats.candidate_pairs = candidates.len() as u64;
            stats
                .seconds
                .push(("candidates", started.elapsed().as_secs_f64()));
            let started = Instant::now();
            progress.stage("verify", candidates.len() as u64);
            let leader_pairs = verify(method, &sketches, &candidates, progress)?;
            stats
                .seconds
                .push(("verify", started.elapsed().as_secs_f64()));
            leader_pairs
        }
        CandidateList::Spilled { pairs, by_rank } => {
            // The pairs are read back from their runs a chunk at a time and verified as
            // they come: the merge's time counts as verification's.
            stats
                .seconds
                .push(("candidates", started.elapsed().as_secs_f64()));
            let started = Instant::now();
            progress.stage("verify", 0);
            let mut leader_pairs = Vec::new();
            let mut count = 0u64;
            let mut chunk_pairs: Vec<(u32, u32)> = Vec::new();
            bucket_stats.budget_hits = pairs.drain(VERIFY_CHUNK, |chunk| {
                chunk_pairs.clear();
                chunk_pairs.extend(chunk.iter().filter_map(|&(x, y)| {
                    let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
                    Some((a.min(b), a.max(b))).filter(|&pair| wanted(pair))
                }));
                chunk_pairs.par_sort_unstable();
                count += chunk_pairs.len() as u64;
                leader_pairs.extend(verify(method, &sketches, &chunk_pairs, progress)?);
                Ok(())
            })?;
            drop(chunk_pairs);
            // The order the in-memory path gives: by candidate, as candidates are sorted.
            leader_pairs.par_sort_unstable_by_key(|pair| (pair.a, pair.b));
            stats.candidate_pairs = count;
            stats
                .seconds
                .push(("verify", started.elapsed().as_secs_f64()));
            leader_pairs
        }
    };
    stats.largest_bucket = bucket_stats.largest_bucket;
    stats.capped_buckets = bucket_stats.capped_buckets;
    stats.capped_out = bucket_stats.left_out;
    stats.candidate_comparisons = bucket_stats.comparisons;
    stats.pair_limit_passed = bucket_stats.pair_limit_passed;
    stats.budget_hits = bucket_stats.budget_hits;
    stats.partner_limit = Some(bucket_stats.partner_limit).filter(|&l| l != u64::MAX);
    stats.verified_pairs = leader_pairs.len() as u64;

    let started = Instant::now();
    progress.stage("cluster", documents);
    let mut assignment = match options.cluster {
        ClusterMode::Representative => {
            // The sketches are not read again: their offsets need not stay.
            drop(sketches);
            cluster::representative(&rank, &leader_pairs)
        }
        ClusterMode::Connected => {
            let failed = FirstError::default();
            let assignment = cluster::connected(&rank, &leader_pairs, |a, b| {
                match (sketches.get(method, a), sketches.get(method, b)) {
                    (Ok(a), Ok(b)) => method.similarity(&*a, &*b),
                    (Err(error), _) | (_, Err(error)) => {
                        failed.keep(error);
                        0.0
                    }
                }
            });
            failed.check()?;
            assignment
        }
    };
    let independent = (options.reference > 0 && !options.within).then_some(options.reference);
    stats.exact_copies = follow_leaders(&mut assignment, &groups, independent);
    progress.advance(documents);
    stats
        .seconds
        .push(("cluster", started.elapsed().as_secs_f64()));
    Ok(Outcome {
        assignment,
        leader_pairs,
        groups,
        stats,
        distances,
    })
}

/// Marks the common features of the crowded leaders' sketches (see [`crowded_documents`])
/// and returns how many were marked. A feature is common when more than `limit` leaders
/// have it (exact copies count once). Only the features of crowded leaders are counted: in
/// every crowded leader, and in a deterministic sample of one in [`SAMPLE`] of the others
/// (each counting [`SAMPLE`] times), by a sorted merge of each leader's features with them.
/// A template's wording is in all of its crowd; ordinary language is spread over the rest,
/// where a sample estimates its frequency.
///
/// When spilling, also returns the crowd check's runs of `(key, leader)` entries (see
/// [`crowded_documents`]) and the bytes the count of common features spilled.
fn mark_common<'d, M: Method>(
    method: &M,
    sketches: &mut SketchStore<M::Sketch>,
    spilling: Option<&'d Spilling>,
    leaders: &[u32],
    limit: u64,
) -> Result<(u64, Option<ExternalKeys<'d>>, u64)> {
    let (crowded, gathered) = crowded_documents(method, sketches, spilling, leaders, CROWD)?;
    let crowded_leaders: Vec<u32> = (leaders.iter().copied())
        .filter(|&leader| crowded[leader as usize])
        .collect();
    if let Some(spilling) = spilling {
        let (common, spilled) =
            common_features_external(method, sketches, spilling, leaders, &crowded, limit)?;
        if common.is_empty() {
            return Ok((0, gathered, spilled));
        }
        let mut marked = vec![false; sketches.len()];
        for &leader in &crowded_leaders {
            marked[leader as usize] = true;
        }
        return Ok((
            sketches.mark_common(method, common, marked)?,
            gathered,
            spilled,
        ));
    }
    let mut keys: Vec<u32> = sketches
        .map_sorted(method, &crowded_leaders, |_, sketch| {
            method.frequency_features(sketch).to_vec()
        })?
        .concat();
    if keys.is_empty() {
        return Ok((0, None, 0));
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
    let weights: Vec<u32> = counted.iter().map(|c| c.1).collect();
    let counted: Vec<u32> = counted.iter().map(|c| c.0).collect();
    // `counted` is sorted (leaders are): a leader's weight is found by its position.
    let position_of = |leader: u32| counted.binary_search(&leader).unwrap_or(0);
    sketches.map_sorted(method, &counted, |leader, sketch| {
        let weight = weights[position_of(leader)];
        let features = method.frequency_features(sketch);
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
    })?;
    let common: Vec<u32> = (keys.iter().zip(&counts))
        .filter(|(_, count)| u64::from(count.load(Ordering::Relaxed)) > limit)
        .map(|(&key, _)| key)
        .collect();
    if common.is_empty() {
        return Ok((0, None, 0));
    }
    let mut marked = vec![false; sketches.len()];
    for &leader in &crowded_leaders {
        marked[leader as usize] = true;
    }
    Ok((sketches.mark_common(method, common, marked)?, None, 0))
}

/// The common features that [`mark_common`] finds, counted by sorting `(feature, leader)`
/// entries in runs in the spill directory instead of gathering the crowded leaders' features
/// in memory: the same leaders are counted with the same weights (a crowded leader once, one
/// in [`SAMPLE`] of the others by position [`SAMPLE`] times), and a feature counts only when a
/// crowded leader has it. Also returns the bytes its runs took.
fn common_features_external<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    spilling: &Spilling,
    leaders: &[u32],
    crowded: &[bool],
    limit: u64,
) -> Result<(Vec<u32>, u64)> {
    let counted: Vec<u32> = (leaders.iter().enumerate())
        .filter(|&(position, &leader)| crowded[leader as usize] || position % SAMPLE == 0)
        .map(|(_, &leader)| leader)
        .collect();
    let mut external = ExternalKeys::new(spilling.dir.as_ref(), "common", spilling.budget);
    for chunk in counted.chunks(KEY_CHUNK) {
        let features = sketches.map_sorted(method, chunk, |_, sketch| {
            method.frequency_features(sketch).to_vec()
        })?;
        external.extend(
            (chunk.iter().zip(features)).flat_map(|(&leader, features)| {
                features
                    .into_iter()
                    .map(move |feature| (u64::from(feature), leader))
            }),
        )?;
    }
    let mut common = Vec::new();
    external.finish()?;
    external.walk(None, |feature, members| {
        if !members.iter().any(|&m| crowded[m as usize]) {
            return;
        }
        let count: u64 = (members.iter())
            .map(|&m| {
                if crowded[m as usize] {
                    1
                } else {
                    SAMPLE as u64
                }
            })
            .sum();
        if count > limit {
            common.push(feature as u32);
        }
    })?;
    Ok((common, external.spilled))
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
///
/// When spilling, also returns the runs the check sorted: every leader's distinct keys, as
/// `(key, leader)` entries.
fn crowded_documents<'d, M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    spilling: Option<&'d Spilling>,
    leaders: &[u32],
    limit: u64,
) -> Result<(Vec<bool>, Option<ExternalKeys<'d>>)> {
    if method.join() != Join::SymmetricKeys {
        return Ok((vec![true; sketches.len()], None));
    }
    let leader_keys = |documents: &[u32]| {
        sketches.map_sorted(method, documents, |_, sketch| {
            let mut keys = Vec::new();
            method.keys(sketch, &mut keys);
            keys.sort_unstable();
            keys.dedup();
            keys
        })
    };
    if let Some(spilling) = spilling {
        // The same, with the entries sorted in runs: the crowded keys first, then each
        // leader's keys looked up in them.
        let mut external = ExternalKeys::new(spilling.dir.as_ref(), "crowd", spilling.budget);
        for chunk in leaders.chunks(KEY_CHUNK) {
            let keys = leader_keys(chunk)?;
            external.extend(
                (chunk.iter().zip(keys))
                    .flat_map(|(&leader, keys)| keys.into_iter().map(move |key| (key, leader))),
            )?;
        }
        // A leader is crowded when one of its keys is: the members of the crowded keys'
        // buckets, marked as the merge meets them (no second scan of the sketches).
        let mut crowded = vec![false; sketches.len()];
        external.finish()?;
        external.walk(None, |_, members| {
            if members.len() as u64 > limit {
                for &member in members {
                    crowded[member as usize] = true;
                }
            }
        })?;
        return Ok((crowded, Some(external)));
    }
    let keys: Vec<Vec<u64>> = sketches.map_sorted(method, leaders, |_, sketch| {
        let mut keys = Vec::new();
        method.keys(sketch, &mut keys);
        keys.sort_unstable();
        keys.dedup();
        keys
    })?;
    let mut all: Vec<u64> = keys.iter().flat_map(|k| k.iter().copied()).collect();
    all.par_sort_unstable();
    let crowded_keys: Vec<u64> = (all.chunk_by(|a, b| a == b))
        .filter(|run| run.len() as u64 > limit)
        .map(|run| run[0])
        .collect();
    drop(all);
    let mut crowded = vec![false; sketches.len()];
    for (&leader, keys) in leaders.iter().zip(keys) {
        crowded[leader as usize] = keys.iter().any(|k| crowded_keys.binary_search(k).is_ok());
    }
    Ok((crowded, None))
}

/// Slices of [`exact_groups`]' first pass (by the top 4 bits of the identities).
const UPPER_SLICES: u64 = 16;

/// Groups non-empty documents by identity. Returns the leaders (one per distinct identity,
/// in input order) and the groups of two or more (leader first, then by rank).
///
/// A first pass sorts only the identities' upper 64 bits to find the ones that repeat, a
/// sixteenth of them at a time (by their top 4 bits: `repeated` comes out sorted); only the
/// documents whose upper bits repeat are then sorted by full identity and rank, so a corpus
/// with few exact copies takes half a byte a document here, not the 24 of sorting every
/// `(identity, rank, document)`.
fn exact_groups(identity: &[u128], empty: &[bool], rank: &[u32]) -> (Vec<u32>, Groups) {
    let upper = |id: u128| (id >> 64) as u64;
    // In slices by the top bits of the upper half, so that one slice's 8 bytes a document
    // are held at a time (a sixteenth of the corpus's), not the whole corpus's.
    let mut repeated: Vec<u64> = Vec::new();
    for slice in 0..UPPER_SLICES {
        let mut uppers: Vec<u64> = (identity.par_iter().zip(empty.par_iter()))
            .filter(|(&id, &empty)| !empty && upper(id) >> 60 == slice)
            .map(|(&id, _)| upper(id))
            .collect();
        uppers.par_sort_unstable();
        repeated.extend(
            (uppers.chunk_by(|x, y| x == y))
                .filter(|run| run.len() > 1)
                .map(|run| run[0]),
        );
    }
    let mut by_identity: Vec<(u128, u32, u32)> = (identity.par_iter().zip(empty.par_iter()))
        .enumerate()
        .filter(|(_, (&id, &empty))| !empty && repeated.binary_search(&upper(id)).is_ok())
        .map(|(document, (&id, _))| (id, rank[document], document as u32))
        .collect();
    drop(repeated);
    by_identity.par_sort_unstable();
    let mut groups = Groups::default();
    let mut followers: Vec<u32> = Vec::new();
    for group in by_identity.chunk_by(|x, y| x.0 == y.0) {
        if group.len() > 1 {
            groups.push(group.iter().map(|entry| entry.2));
            followers.extend(group[1..].iter().map(|entry| entry.2));
        }
    }
    drop(by_identity);
    followers.par_sort_unstable();
    let mut next = followers.iter().peekable();
    let leaders = (0..identity.len() as u32)
        .filter(|&document| {
            if next.next_if_eq(&&document).is_some() {
                return false;
            }
            !empty[document as usize]
        })
        .collect();
    (leaders, groups)
}

/// Candidate pairs `(a, b)`, `a < b`, sorted, among the leaders, from the generator the
/// method's [`Join`] names. The generators see documents by rank, so that a bucket over the
/// cap takes its best-ranked members (the ones the keep policy would keep) as anchors, and a
/// document over the candidate budget keeps its best-ranked partners: the ones it can be a
/// duplicate of.
///
/// `gathered`: the crowd check's runs of every leader's keys (spilling, and keys that marks
/// do not change), walked instead of gathering the keys again.
fn candidate_pairs<'d, M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    (spilling, gathered): (Option<&'d Spilling>, Option<ExternalKeys<'d>>),
    exact_only: &[bool],
    leaders: &[u32],
    rank: &[u32],
    limits: CandidateLimits,
) -> Result<Candidates<'d>> {
    let mut spilled = 0;
    // Documents with too few features take part in exact-copy groups only.
    let leaders: Vec<u32> = (leaders.iter().copied())
        .filter(|&document| !exact_only[document as usize])
        .collect();
    let leaders = &leaders[..];
    let entries = |emit: fn(&M, &M::Sketch, &mut Vec<u64>)| -> Result<Vec<(u64, u32)>> {
        let keyed = sketches.map_sorted(method, leaders, |document, sketch| {
            let mut keys = Vec::new();
            emit(method, sketch, &mut keys);
            let ranked = rank[document as usize];
            keys.into_iter()
                .map(|key| (key, ranked))
                .collect::<Vec<_>>()
        })?;
        Ok(keyed.concat())
    };
    let (ranked_pairs, stats) = match method.join() {
        Join::Identity => {
            let none = BucketStats {
                partner_limit: u64::MAX,
                ..BucketStats::default()
            };
            (Vec::new(), none)
        }
        Join::SymmetricKeys => match spilling {
            Some(spilling) => {
                let (pairs, stats) = match gathered {
                    Some(gathered) => {
                        // Entries by leader, of every leader: the exact-only ones left out,
                        // the others paired by rank.
                        let map = |leader: u32| {
                            (!exact_only[leader as usize]).then(|| rank[leader as usize])
                        };
                        gathered.candidate_pairs(limits, Some((&map, rank.len())))?
                    }
                    None => {
                        let mut external =
                            ExternalKeys::new(spilling.dir.as_ref(), "keys", spilling.budget);
                        for chunk in leaders.chunks(KEY_CHUNK) {
                            let keyed =
                                sketches.map_sorted(method, chunk, |document, sketch| {
                                    let mut keys = Vec::new();
                                    method.keys(sketch, &mut keys);
                                    (keys, rank[document as usize])
                                })?;
                            external.extend(keyed.into_iter().flat_map(|(keys, ranked)| {
                                keys.into_iter().map(move |key| (key, ranked))
                            }))?;
                        }
                        external.candidate_pairs(limits, None)?
                    }
                };
                spilled = pairs.spilled();
                let mut by_rank = vec![0u32; rank.len()];
                for (document, &r) in rank.iter().enumerate() {
                    by_rank[r as usize] = document as u32;
                }
                return Ok((CandidateList::Spilled { pairs, by_rank }, (stats, spilled)));
            }
            None => CandidateGenerator::candidate_pairs(
                KeyTable::from_entries(entries(M::keys)?),
                limits,
            ),
        },
        Join::Probe => {
            ProbeTable::new(entries(M::keys)?, entries(M::probe_keys)?).candidate_pairs(limits)
        }
        Join::SharedKeys { min } => {
            SharedKeyTable::new(entries(M::keys)?, min).candidate_pairs(limits)
        }
        Join::Prefix { measure, threshold } => {
            let sets = sketches.map_sorted(method, leaders, |document, sketch| {
                let mut tokens = Vec::new();
                method.join_tokens(sketch, &mut tokens);
                (rank[document as usize], tokens)
            })?;
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
            EditJoin::new(sequences(method, sketches, leaders, rank)?, bound)
                .candidate_pairs(limits)
        }
        Join::NgramBuckets { m } => {
            let mut by_rank = vec![0u32; rank.len()];
            for (document, &r) in rank.iter().enumerate() {
                by_rank[r as usize] = document as u32;
            }
            let failed = FirstError::default();
            let similar = |x: u32, y: u32| {
                let (a, b) = (by_rank[x as usize], by_rank[y as usize]);
                match (sketches.get(method, a), sketches.get(method, b)) {
                    (Ok(a), Ok(b)) => method.verify(&*a, &*b),
                    (Err(error), _) | (_, Err(error)) => {
                        failed.keep(error);
                        None
                    }
                }
            };
            let found = NgramBuckets::new(
                sequences(method, sketches, leaders, rank)?,
                m as usize,
                similar,
            )
            .candidate_pairs(limits);
            failed.check()?;
            found
        }
        Join::Hamming => {
            let fingerprints = sketches
                .map_sorted(method, leaders, |document, sketch| {
                    let (fingerprint, radius) = method.hamming_key(sketch)?;
                    Some((rank[document as usize], fingerprint, radius))
                })?
                .into_iter()
                .flatten()
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
    Ok((CandidateList::Held(pairs), (stats, spilled)))
}

/// Candidate pairs, the generator's statistics, and the bytes it spilled.
type Candidates<'d> = (CandidateList<'d>, (BucketStats, u64));

/// The candidate pairs of documents, `(a, b)` with `a < b`.
enum CandidateList<'d> {
    /// In memory, sorted.
    Held(Vec<(u32, u32)>),
    /// Pairs of ranks sorted in runs in the spill directory, mapped to documents by
    /// `by_rank` as they are read back (their statistics lack `budget_hits` until then).
    Spilled {
        pairs: ExternalPairs<'d>,
        by_rank: Vec<u32>,
    },
}

/// Pairs of a spilled candidate list verified together: each chunk is sorted by its first
/// document, so that chunk reads each first document's sketch once.
const VERIFY_CHUNK: usize = 1 << 20;

/// Leaders whose keys are computed together by a spilling candidate stage.
const KEY_CHUNK: usize = 1 << 16;

/// `(rank, join sequence)` of every leader, for the edit join and the n-gram index.
fn sequences<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    leaders: &[u32],
    rank: &[u32],
) -> Result<Vec<(u32, Vec<u32>)>> {
    sketches.map_sorted(method, leaders, |document, sketch| {
        let sequence = method.join_sequence(sketch);
        (rank[document as usize], sequence.to_vec())
    })
}

/// The candidates confirmed by [`Method::verify`], in candidate order. Candidates are sorted
/// by their first document, so a chunk reads each first document's sketch once.
fn verify<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    candidates: &[(u32, u32)],
    progress: &dyn Progress,
) -> Result<Vec<Pair>> {
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
    let chunks: Vec<Result<Vec<Pair>>> = candidates
        .par_chunks(chunk)
        .map(|chunk| {
            progress.advance(chunk.len() as u64);
            let mut verified = Vec::new();
            let mut last: Option<(u32, Held<'_, M::Sketch>)> = None;
            let mut cache: Vec<Option<(u32, Held<'_, M::Sketch>)>> =
                (0..slots).map(|_| None).collect();
            for &(a, b) in chunk {
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
                let Some(similarity) = method.verify(sa, sb) else {
                    continue;
                };
                let distance = method.distance(sa, sb);
                verified.push(Pair {
                    a,
                    b,
                    similarity,
                    distance,
                });
            }
            Ok(verified)
        })
        .collect();
    let mut pairs = Vec::new();
    for chunk in chunks {
        pairs.extend(chunk?);
    }
    Ok(pairs)
}

/// Slots of the cache of partners' sketches that [`verify`] keeps per chunk of a spilled
/// store (each a decoded sketch: about a kilobyte for MinHash's defaults).
const VERIFY_CACHE: usize = 4096;

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
fn follow_leaders(assignment: &mut Assignment, groups: &Groups, independent: Option<u32>) -> u64 {
    let mut members = 0;
    for group in groups.iter() {
        let leader = group[0] as usize;
        if independent.is_some_and(|reference| group[0] >= reference)
            && assignment.duplicate_of[leader].is_none()
        {
            continue;
        }
        let (target, similarity) = match assignment.duplicate_of[leader] {
            None => (group[0], 1.0),
            Some(kept) => (kept, assignment.similarity.get(leader).unwrap_or(1.0)),
        };
        for &member in &group[1..] {
            assignment.duplicate_of[member as usize] = Some(target);
            assignment.similarity.set(member as usize, Some(similarity));
            members += 1;
        }
    }
    members
}
