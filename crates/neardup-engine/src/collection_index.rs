//! The online engine: the in-memory index of a stored collection, and the rule that turns its
//! candidates into verified matches.
//!
//! The service (crate `neardup-service`) keeps a collection's documents on disk as a sequence
//! of partitions in arrival order (segment files, dropped whole when their documents leave the
//! retention window), and one [`CollectionIndex`] over all of them: a retention drop forgets
//! the documents below a sequence number ([`CollectionIndex::forget_below`]). Documents are
//! known here by a sequence number (`seq`), dense and increasing within a collection; the
//! service maps ids to them and keeps the sketches on disk, so this module does no I/O:
//! [`CollectionIndex`] gives candidate sequence numbers and [`verify`] decides, given a stored
//! sketch, whether a candidate is a match.
//!
//! Which index a collection holds follows the method's [`Join`]: exact identities always (a
//! copy is found whatever the method); band keys for [`Join::SymmetricKeys`] (MinHash-LSH);
//! a [`HammingIndex`] for [`Join::Hamming`] (SimHash); for the exact joins of `join`
//! ([`Join::Prefix`], [`Join::Edit`]) the method's stored keys (its token-set prefix in hash
//! order, or its Pass-Join segments), looked up with its probe keys: every stored document
//! within the threshold shares a key with the text, so the online join misses nothing
//! either. The n-gram reference index has no online form and is refused by
//! [`CollectionIndex::new`].
//!
//! Like a batch run, a query keeps a candidate budget ([`QUERY_BUDGET`]): it reads at most
//! that many members per key or fingerprint block value and gives at most that many near
//! candidates, so that a template flood costs each check a bounded amount; the candidates
//! left out are returned to the caller, which counts them.

use std::borrow::Cow;
use std::sync::Arc;

/// A frozen key level and what every level tells, for the callers that write levels to
/// files and read them back ([`CollectionIndex::frozen_levels`]).
pub use neardup_index::{KeyLevel, Level};

mod tiered;
pub use tiered::{build_hamming_merge, HammingMerge, Tiered};

use neardup_core::{Error, Join, Method, Result, Sketch, PRIORITY_KEY};
use neardup_index::{
    build_key_merge, hamming_key, join_limits, online_form, template_anchors, without_priority,
    Buckets, CandidateLimits, HammingIndex, KeyIndex, Merge, OnlineForm,
};

/// What a collection stores of one document: enough to index it without its sketch, so that a
/// restart can rebuild the index from these alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexEntry {
    /// [`Sketch::identity`]: exact copies share it.
    pub identity: u128,
    /// The document is matched as an exact copy only ([`Sketch::exact_only`]).
    pub exact_only: bool,
    /// The fingerprint and its search radius, for [`Join::Hamming`].
    pub hamming: Option<(u64, u32)>,
    /// The band keys, for [`Join::SymmetricKeys`]; the stored keys ([`Method::keys`]) for
    /// the exact joins ([`Join::Prefix`], [`Join::Edit`]); the priority keys of a templated
    /// text for [`Join::Hamming`] (read beside its fingerprint, first).
    pub keys: Vec<u64>,
    /// For the exact joins, the keys the document looks up ([`Method::probe_keys`]); empty
    /// for other joins. Computed, never stored: only a text being checked needs them.
    pub probe_keys: Vec<u64>,
}

impl IndexEntry {
    /// The entry of `sketch` under `method`.
    pub fn of<M: Method>(method: &M, sketch: &M::Sketch) -> IndexEntry {
        let mut entry = IndexEntry {
            identity: sketch.identity(),
            exact_only: sketch.exact_only() || sketch.is_empty(),
            hamming: None,
            keys: Vec::new(),
            probe_keys: Vec::new(),
        };
        if !entry.exact_only {
            let join = method.join();
            match online_form(join.shape()) {
                Some(OnlineForm::Hamming) => {
                    entry.hamming = hamming_key(method, &join, sketch);
                    if let Join::Hamming {
                        priority: Some(priority),
                        ..
                    } = join
                    {
                        priority(method, sketch, &mut entry.keys);
                        entry.keys.sort_unstable();
                        entry.keys.dedup();
                    }
                }
                Some(OnlineForm::Keys { probe_side }) => {
                    method.keys(sketch, &mut entry.keys);
                    entry.keys.sort_unstable();
                    entry.keys.dedup();
                    if probe_side {
                        method.probe_keys(sketch, &mut entry.probe_keys);
                        entry.probe_keys.sort_unstable();
                        entry.probe_keys.dedup();
                    }
                }
                Some(OnlineForm::Identity) | None => {}
            }
            if let Some(anchors) = template_anchors(&join) {
                entry.add_template_keys(method, sketch, anchors, &join);
            }
        }
        entry
    }

    /// Templates duplicate: a templated text is stored and looked up under its template
    /// keys too (as priority keys where the index reads those first), so that a new filling
    /// meets its template's oldest fillings, which the check calls duplicates: the batch
    /// join's anchors ([`neardup_index::TEMPLATE_ANCHORS`]), whatever the distance.
    fn add_template_keys<M: Method>(
        &mut self,
        method: &M,
        sketch: &M::Sketch,
        anchors: neardup_core::method::RareHook<M>,
        join: &Join<M>,
    ) {
        let mut keys = Vec::new();
        if !anchors(method, sketch, &mut keys) {
            return;
        }
        if reads_priority_first(join) {
            keys.iter_mut().for_each(|key| *key |= PRIORITY_KEY);
        }
        let probe_side = online_form(join.shape()) == Some(OnlineForm::Keys { probe_side: true });
        let lists = match probe_side {
            true => vec![&mut self.keys, &mut self.probe_keys],
            false => vec![&mut self.keys],
        };
        for list in lists {
            list.extend_from_slice(&keys);
            list.sort_unstable();
            list.dedup();
        }
    }
}

/// Whether an index of `join` reads the priority keys of a text first: the Hamming form
/// (a templated text's filling keys beside its fingerprint) and the joins whose keys have
/// the two classes ([`join_limits`]).
fn reads_priority_first<M: Method>(join: &Join<M>) -> bool {
    join_limits(join, CandidateLimits::default()).priority_keys
        || online_form(join.shape()) == Some(OnlineForm::Hamming)
}

/// Candidates a query of [`CollectionIndex::candidates`] gives at most, by default: the
/// online form of the batch engine's candidate budget (32 pairs a document on average, at
/// least 32 for any document), four times that so that a check asking for up to 100
/// matches is cut only in a flood.
pub const QUERY_BUDGET: usize = 4 * neardup_index::DEFAULT_CANDIDATE_BUDGET;

/// The index of a collection: exact identities, and band keys or fingerprints.
///
/// A query gives at most [`QUERY_BUDGET`] near candidates (or the budget set with
/// [`CollectionIndex::with_budget`]) and reads at most that many members per key or
/// fingerprint block value, so that a template flood (every stored text sharing keys with
/// every new one) costs each query a bounded amount instead of a walk over the collection;
/// what the budget leaves out is counted and returned.
#[derive(Debug)]
pub struct CollectionIndex {
    /// The latest document per identity, keyed by its low 64 bits (a rare collision only
    /// adds a candidate, which verification rejects).
    /// In levels as the keys are (about 10 bytes a document, where a hash map took 20 to 37).
    identities: KeyIndex,
    keys: Option<KeyIndex>,
    hamming: Option<Tiered>,
    max_distance: u32,
    /// The keys looked up differ from the keys stored (the exact joins).
    probe_side: bool,
    /// Priority keys are read first ([`neardup_core::Join::PriorityKeys`]).
    priority_keys: bool,
    /// Near candidates a query gives at most.
    budget: usize,
    /// Hamming merges wait for the owner ([`CollectionIndex::defer_merges`]).
    deferred: bool,
    /// Per [`LevelKind`], the highest sequence number of the levels restored from files.
    restored: [Option<u64>; 2],
}

/// The key levels of an index that a level file can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LevelKind {
    /// The exact identities.
    Identities = 0,
    /// The band keys (or the join's stored keys).
    Keys = 1,
}

impl LevelKind {
    /// Both kinds.
    pub const ALL: [LevelKind; 2] = [LevelKind::Identities, LevelKind::Keys];

    /// Its name in file names.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::Identities => "identities",
            LevelKind::Keys => "keys",
        }
    }
}

/// How a join without an online form pairs texts, in words for a refusal (its `Debug` form,
/// `NgramBuckets { m: 4 }`, is for programmers).
fn join_in_words<M: Method>(join: &Join<M>) -> String {
    match join {
        Join::NgramBuckets { m, .. } => {
            format!("its join walks buckets of texts sharing a {m}-character n-gram")
        }
        Join::SharedKeys { min, .. } => {
            format!("its join counts the keys two texts share, at least {min}")
        }
        Join::Probe => "its join probes the keys other texts stored".to_owned(),
        _ => "its join has no online form".to_owned(),
    }
}

impl CollectionIndex {
    /// An empty index for `method`, whose Hamming radii go up to `max_distance`.
    ///
    /// # Errors
    /// A method whose join has no online form (parameter `method`), or a `max_distance` the
    /// Hamming index refuses (parameter `max_distance`).
    pub fn new<M: Method>(method: &M, max_distance: u32) -> Result<Self> {
        let join: Join<M> = method.join();
        let Some(form) = online_form(join.shape()) else {
            return Err(Error::invalid(
                "method",
                format!(
                    "{} has no online index ({}); use join, simhash, minhash or exact",
                    method.name(),
                    join_in_words(&join)
                ),
            ));
        };
        let (keys, hamming) = match form {
            OnlineForm::Identity => (None, None),
            OnlineForm::Keys { .. } => (Some(KeyIndex::new()), None),
            OnlineForm::Hamming => {
                let priority = matches!(
                    join,
                    Join::Hamming {
                        priority: Some(_),
                        ..
                    }
                );
                let anchored = template_anchors(&join).is_some();
                let keys = (priority || anchored).then(KeyIndex::new);
                (keys, Some(Tiered::new(max_distance)?))
            }
        };
        Ok(CollectionIndex {
            identities: KeyIndex::new(),
            keys,
            hamming,
            max_distance,
            probe_side: matches!(form, OnlineForm::Keys { probe_side: true }),
            priority_keys: join_limits(&join, CandidateLimits::default()).priority_keys
                || matches!(form, OnlineForm::Hamming),
            budget: QUERY_BUDGET,
            deferred: false,
            restored: [None; 2],
        })
    }

    /// The same index giving at most `budget` near candidates a query (at least 1).
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// Indexes document `seq`. A repeated `seq` is ignored by the near-duplicate indexes; an
    /// identity keeps its latest document.
    pub fn insert(&mut self, seq: u64, entry: &IndexEntry) {
        self.insert_deferred(seq, entry);
        if let (Some(index), Some((fingerprint, _)), false) =
            (self.hamming.as_mut(), entry.hamming, entry.exact_only)
        {
            index.insert(seq, fingerprint);
        }
    }

    /// Indexes document `seq` but leaves its fingerprint out: the caller collects the
    /// fingerprints of a whole collection and gives them to [`CollectionIndex::set_fingerprints`]
    /// (a restart builds the Hamming index in one go).
    pub fn insert_deferred(&mut self, seq: u64, entry: &IndexEntry) {
        let _ = self.identities.insert(seq, &[entry.identity as u64]);
        let Some(keys) = self.stored_keys(entry) else {
            return;
        };
        if let Some(index) = self.keys.as_mut() {
            let _ = index.insert(seq, &keys);
        }
    }

    /// The keys stored for `entry`, if any: the priority bit taken off (see
    /// `probe_priority_first`).
    fn stored_keys<'e>(&self, entry: &'e IndexEntry) -> Option<Cow<'e, [u64]>> {
        if entry.exact_only || entry.keys.is_empty() || self.keys.is_none() {
            return None;
        }
        Some(match self.priority_keys {
            true => Cow::Owned(without_priority(&entry.keys)),
            false => Cow::Borrowed(&entry.keys),
        })
    }

    /// Gathers document `seq` into `loading`, as [`CollectionIndex::insert_deferred`] would
    /// index it, for [`CollectionIndex::load`]; in the levels of a kind only when `seq` is
    /// above the levels restored ([`CollectionIndex::restore_level`]).
    pub fn gather(&self, loading: &mut Loading, seq: u64, entry: &IndexEntry) {
        let above = |restored: Option<u64>| restored.is_none_or(|last| seq > last);
        if above(self.restored(LevelKind::Identities)) {
            loading.identities.push((entry.identity as u64, seq));
        }
        if !above(self.restored(LevelKind::Keys)) {
            return;
        }
        if let Some(keys) = self.stored_keys(entry) {
            loading.keys.extend(keys.iter().map(|&key| (key, seq)));
        }
    }

    /// The highest sequence number up to which the levels restored from files hold every
    /// document's identity and keys (the lowest over the kinds the method has); `None`
    /// when a kind has no level restored.
    pub fn restored_through(&self) -> Option<u64> {
        (LevelKind::ALL.iter())
            .filter(|&&kind| self.key_index(kind).is_some())
            .map(|&kind| self.restored(kind))
            .try_fold(u64::MAX, |low, last| last.map(|last| low.min(last)))
    }

    /// Whether the index has fingerprints (a Hamming join).
    pub fn has_hamming(&self) -> bool {
        self.hamming.is_some()
    }

    /// The key index of `kind`, if the method has one.
    fn key_index(&self, kind: LevelKind) -> Option<&KeyIndex> {
        match kind {
            LevelKind::Identities => Some(&self.identities),
            LevelKind::Keys => self.keys.as_ref(),
        }
    }

    /// The highest sequence number the restored levels of `kind` may hold, if any.
    fn restored(&self, kind: LevelKind) -> Option<u64> {
        self.restored[kind as usize]
    }

    /// The frozen levels of `kind`, oldest first, each with the lowest and highest sequence
    /// numbers it may hold: what a level file keeps ([`KeyLevel::encode`]). None when the
    /// method stores no keys of that kind.
    pub fn frozen_levels(&self, kind: LevelKind) -> Vec<(u64, u64, Arc<KeyLevel>)> {
        self.key_index(kind)
            .map(KeyIndex::frozen)
            .unwrap_or_default()
    }

    /// Adds `level` of `kind`, read back from a level file, as its newest frozen level,
    /// holding `first..=last`: a restart loads the levels written before, oldest first,
    /// then gathers ([`CollectionIndex::gather`]) only the documents above them.
    ///
    /// # Errors
    /// A method without keys of that kind, or a level not above those of its kind.
    pub fn restore_level(
        &mut self,
        kind: LevelKind,
        level: KeyLevel,
        first: u64,
        last: u64,
    ) -> Result<()> {
        let index = match kind {
            LevelKind::Identities => Some(&mut self.identities),
            LevelKind::Keys => self.keys.as_mut(),
        };
        let Some(index) = index else {
            return Err(Error::invalid("level", "this method stores no keys"));
        };
        index.restore_level(level, first, last).map_err(|e| {
            Error::invalid(
                "level",
                format!("{e}: a restored level must hold documents above every one indexed"),
            )
        })?;
        self.restored[kind as usize] = Some(last);
        Ok(())
    }

    /// Indexes the documents gathered in `loading` (fingerprints left out, as
    /// [`CollectionIndex::insert_deferred`] leaves them), each of its identities and keys in
    /// one level built by a sort: a restart loads a segment at a time so, several times
    /// faster than document by document with the merges of small levels that follow.
    ///
    /// # Errors
    /// A gathered document not above every document indexed, or a span of more than
    /// `u32::MAX` sequence numbers.
    pub fn load(&mut self, loading: Loading) -> Result<()> {
        let refused = |e: neardup_index::DuplicateId| {
            Error::invalid(
                "seq",
                format!("{e}: a loaded level must hold documents above every one indexed"),
            )
        };
        self.identities
            .load_level(loading.identities)
            .map_err(refused)?;
        if let Some(index) = self.keys.as_mut() {
            index.load_level(loading.keys).map_err(refused)?;
        }
        Ok(())
    }

    /// Replaces the Hamming index by one level of `entries` (no effect without one).
    ///
    /// # Errors
    /// A repeated id.
    pub fn set_fingerprints(&mut self, entries: &[(u64, u64)]) -> Result<()> {
        if self.hamming.is_some() {
            let tiered = Tiered::from_entries(self.max_distance, entries)?;
            self.hamming = Some(if self.deferred {
                tiered.defer_merges()
            } else {
                tiered
            });
        }
        Ok(())
    }

    /// The same index with merges of its frozen levels left to the owner
    /// ([`CollectionIndex::merge`], [`IndexMerge::build`], [`CollectionIndex::install`]), as
    /// a collection-wide index wants: it builds them on a thread of its own.
    pub fn defer_merges(mut self) -> Self {
        self.set_deferred(true);
        self
    }

    /// Whether merges wait for the owner ([`CollectionIndex::defer_merges`]) or run as levels
    /// freeze (as a restart wants while it replays the segments, with nobody to wait for).
    pub fn set_deferred(&mut self, deferred: bool) {
        if let Some(hamming) = self.hamming.as_mut() {
            hamming.set_deferred(deferred);
        }
        if let Some(keys) = self.keys.as_mut() {
            keys.set_deferred(deferred);
        }
        self.identities.set_deferred(deferred);
        self.deferred = deferred;
    }

    /// The merge due, if any: of the Hamming levels first, then of the key levels.
    pub fn merge(&self) -> Option<IndexMerge> {
        let hamming = self.hamming.as_ref().and_then(Tiered::merge);
        (hamming.map(IndexMerge::Hamming))
            .or_else(|| {
                let keys = self.keys.as_ref().and_then(KeyIndex::merge);
                keys.map(IndexMerge::Keys)
            })
            .or_else(|| self.identities.merge().map(IndexMerge::Identities))
    }

    /// Installs what [`IndexMerge::build`] built; false when its levels are gone (a
    /// retention drop took one meanwhile) or it does not fit.
    pub fn install(&mut self, merge: IndexMerge, merged: MergedLevel) -> bool {
        match (merge, merged, self.hamming.as_mut(), self.keys.as_mut()) {
            (IndexMerge::Hamming(merge), MergedLevel::Hamming(level), Some(hamming), _) => {
                hamming.install(merge, level)
            }
            (IndexMerge::Keys(merge), MergedLevel::Keys(level), _, Some(keys)) => {
                keys.install(merge, level)
            }
            (IndexMerge::Identities(merge), MergedLevel::Keys(level), _, _) => {
                self.identities.install(merge, level)
            }
            _ => false,
        }
    }

    /// Forgets the documents below `seq` (a retention drop took them): their identities,
    /// keys and fingerprints. Levels wholly below are dropped; the others skip them until
    /// their next merge.
    pub fn forget_below(&mut self, seq: u64) {
        self.identities.forget_below(seq);
        if let Some(keys) = self.keys.as_mut() {
            keys.forget_below(seq);
        }
        if let Some(hamming) = self.hamming.as_mut() {
            hamming.forget_below(seq);
        }
    }

    /// Takes document `seq` out of the near-duplicate indexes (its identity stays until a
    /// retention drop forgets it: callers check liveness).
    pub fn remove(&mut self, seq: u64) {
        if let Some(index) = self.hamming.as_mut() {
            index.remove(seq);
        }
        if let Some(index) = self.keys.as_mut() {
            index.remove(seq);
        }
    }

    /// Puts in `out` (cleared first) the documents that may match `entry`, ascending, without
    /// repeats, each with its Hamming distance when the method has fingerprints. Removed
    /// documents may appear through their identity.
    ///
    /// Within the budget (see [`CollectionIndex`]): besides the exact copy, at most the
    /// budget's near candidates, the oldest sharing a key (band keys, the join's keys) or the
    /// nearest fingerprints. Returns an estimate of the candidates the budget left out (0
    /// unless a flood cut in): the most members one key or block value had past the budget
    /// (at least that many were not read), plus the candidates found past it.
    pub fn candidates(&self, entry: &IndexEntry, out: &mut Vec<(u64, Option<u32>)>) -> u64 {
        out.clear();
        let mut left_out = 0;
        if let Some(seq) = self.identity(entry.identity) {
            out.push((seq, entry.hamming.map(|_| 0)));
        }
        if !entry.exact_only {
            if let (Some(index), Some((fingerprint, radius))) = (&self.hamming, entry.hamming) {
                let mut near = Vec::new();
                let k = radius.min(self.max_distance);
                left_out += index.query_within(fingerprint, k, self.budget, &mut near);
                if near.len() > self.budget {
                    near.sort_unstable_by_key(|&(seq, distance)| (distance, seq));
                    left_out += (near.len() - self.budget) as u64;
                    near.truncate(self.budget);
                }
                out.extend(near.into_iter().map(|(seq, d)| (seq, Some(d))));
            }
            if let Some(index) = &self.keys {
                let mut near = Vec::new();
                let probes = if self.probe_side {
                    &entry.probe_keys
                } else {
                    &entry.keys
                };
                left_out += match self.priority_keys {
                    true => index.probe_priority_first(probes, self.budget, &mut near),
                    false => index.probe_within(probes, self.budget, &mut near),
                };
                out.extend(near.into_iter().map(|seq| (seq, None)));
            }
        }
        out.sort_unstable();
        out.dedup_by_key(|c| c.0);
        left_out
    }

    /// The document of this collection with identity `identity` (the latest), if any.
    pub fn identity(&self, identity: u128) -> Option<u64> {
        let mut stored = Vec::new();
        self.identities
            .read_bucket(identity as u64, usize::MAX, &mut stored);
        stored.last().copied()
    }

    /// Documents in the near-duplicate index (identities not counted).
    pub fn len(&self) -> usize {
        match (&self.hamming, &self.keys) {
            (Some(index), _) => index.len(),
            (_, Some(index)) => index.len(),
            _ => self.identities.len(),
        }
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.identities.is_empty()
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        let identities = self.identities.memory_bytes();
        let hamming = self.hamming.as_ref().map_or(0, Tiered::memory_bytes);
        let keys = self.keys.as_ref().map_or(0, KeyIndex::memory_bytes);
        identities + hamming + keys
    }
}

/// Documents gathered for [`CollectionIndex::load`] ([`CollectionIndex::gather`]): their
/// identities and stored keys, each with its sequence number.
#[derive(Debug, Default)]
pub struct Loading {
    identities: Vec<(u64, u64)>,
    keys: Vec<(u64, u64)>,
}

/// A merge of an index's frozen levels ([`CollectionIndex::merge`]): it holds its levels
/// behind `Arc`s, so it is built with no lock held, on any thread.
#[derive(Debug)]
pub enum IndexMerge {
    /// Of Hamming levels.
    Hamming(HammingMerge),
    /// Of key levels.
    Keys(Merge<KeyLevel>),
    /// Of identity levels.
    Identities(Merge<KeyLevel>),
}

/// What [`IndexMerge::build`] built.
#[derive(Debug)]
pub enum MergedLevel {
    /// A Hamming level.
    Hamming(HammingIndex),
    /// A key level.
    Keys(KeyLevel),
}

/// The levels a merge replaces, held so that the owner frees them after its lock.
#[derive(Debug)]
pub struct HeldLevels {
    _hamming: Vec<std::sync::Arc<HammingIndex>>,
    _keys: Vec<std::sync::Arc<KeyLevel>>,
}

impl IndexMerge {
    /// Another hold on the levels this merge replaces: installing the merge then does not
    /// free them (the owner drops this after releasing its lock).
    pub fn hold(&self) -> HeldLevels {
        match self {
            IndexMerge::Hamming(merge) => HeldLevels {
                _hamming: merge.merge.levels().to_vec(),
                _keys: Vec::new(),
            },
            IndexMerge::Keys(merge) | IndexMerge::Identities(merge) => HeldLevels {
                _hamming: Vec::new(),
                _keys: merge.levels().to_vec(),
            },
        }
    }

    /// The merged level.
    ///
    /// # Errors
    /// A `max_distance` the Hamming index refuses.
    pub fn build(&self) -> Result<MergedLevel> {
        match self {
            IndexMerge::Hamming(merge) => build_hamming_merge(merge).map(MergedLevel::Hamming),
            IndexMerge::Keys(merge) | IndexMerge::Identities(merge) => {
                Ok(MergedLevel::Keys(build_key_merge(merge)))
            }
        }
    }
}

/// A stored document that a text matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// Its sequence number.
    pub seq: u64,
    /// The verified similarity (1 for an exact copy).
    pub similarity: f64,
    /// The Hamming distance, for methods with fingerprints.
    pub distance: Option<u32>,
}

/// Whether candidate `seq` (with `stored`, its sketch, and `stored_entry`) matches the text
/// whose sketch is `sketch` and entry `entry`: an empty text matches nothing, an exact copy
/// always does (similarity 1), an exact-only document on either side matches nothing else, and otherwise the method's
/// verification decides, within the fingerprint radius when there is one.
pub fn verify<M: Method>(
    method: &M,
    sketch: &M::Sketch,
    entry: &IndexEntry,
    seq: u64,
    stored: &M::Sketch,
    stored_entry: &IndexEntry,
) -> Option<Match> {
    // An empty text (nothing left after normalisation) is kept on its own, as in batch runs:
    // never a duplicate of another empty text.
    if sketch.is_empty() || stored.is_empty() {
        return None;
    }
    let distance = method.distance(sketch, stored);
    if entry.identity == stored_entry.identity {
        return Some(Match {
            seq,
            similarity: 1.0,
            distance,
        });
    }
    if entry.exact_only || stored_entry.exact_only {
        return None;
    }
    if let (Some((_, a)), Some((_, b)), Some(d)) = (entry.hamming, stored_entry.hamming, distance) {
        // A pair takes the smaller of its two documents' radii, as in the batch engine;
        // with templates duplicate, two fillings met under their template keys are
        // duplicates at any distance, and the method's verdict, which asks the template
        // first, decides.
        if d > a.min(b) && template_anchors(&method.join()).is_none() {
            return None;
        }
    }
    method.verify(sketch, stored).map(|similarity| Match {
        seq,
        similarity,
        distance,
    })
}

/// Sorts matches best first: similarity, then distance, then the older document.
pub fn rank(matches: &mut [Match]) {
    matches.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(a.distance.cmp(&b.distance))
            .then(a.seq.cmp(&b.seq))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::methods::exact::Exact;
    use neardup_core::methods::minhash::MinHash;
    use neardup_core::methods::simhash::SimHash;
    use neardup_core::registry::{Params, Registered};

    const NEWS: &str =
        "国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施，\
         会议决定加大对基础设施建设的投入，并要求各地加快推进重点项目的审批和开工。";
    const REPOST: &str =
        "國務院總理李克強今天在北京主持召開國務院常務會議,部署進一步擴大內需的措施!\
         會議決定加大對基礎設施建設的投入,並要求各地加快推進重點項目的審批和開工。";
    const OTHER: &str = "今天上海天气晴朗，适合出门散步，傍晚可能有小雨，请带好雨具出行。\
                         明天气温回升，最高气温二十五度，空气质量良好，适合户外运动。";

    /// A sequential online dedup over one collection, for the tests.
    fn run<M: Method>(method: M, max_distance: u32, texts: &[&str]) -> Vec<Option<u64>> {
        let mut index = CollectionIndex::new(&method, max_distance).unwrap();
        let mut stored: Vec<(M::Sketch, IndexEntry)> = Vec::new();
        let mut answers = Vec::new();
        let mut candidates = Vec::new();
        for text in texts {
            let sketch = method.sketch(text);
            let entry = IndexEntry::of(&method, &sketch);
            index.candidates(&entry, &mut candidates);
            let mut found: Vec<Match> = candidates
                .iter()
                .filter_map(|&(seq, _)| {
                    let (s, e) = &stored[seq as usize];
                    verify(&method, &sketch, &entry, seq, s, e)
                })
                .collect();
            rank(&mut found);
            let seq = stored.len() as u64;
            index.insert(seq, &entry);
            stored.push((sketch, entry));
            answers.push(found.first().map(|m| m.seq));
        }
        answers
    }

    #[test]
    fn every_online_method_finds_the_repost_and_keeps_the_other() {
        let texts = [NEWS, REPOST, OTHER, NEWS];
        let minhash = MinHash::from_params(&Params::new().set("max_df", "off")).unwrap();
        assert_eq!(run(minhash, 0, &texts), vec![None, Some(0), None, Some(0)]);
        let simhash = SimHash::from_params(&Params::new()).unwrap();
        assert_eq!(run(simhash, 24, &texts), vec![None, Some(0), None, Some(0)]);
        // Exact: the repost folds to the same text (an exact copy after normalisation); the
        // identity keeps its latest document.
        assert_eq!(
            run(Exact::default(), 0, &texts),
            vec![None, Some(0), None, Some(1)]
        );
        let edited = NEWS.replace("投入", "资金");
        assert_eq!(run(Exact::default(), 0, &[NEWS, &edited]), vec![None, None]);
    }

    /// A xorshift generator of test fingerprints from `seed` (not 0).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The tiered index answers as brute force does, through inserts, merges and removals.
    #[test]
    fn tiered_levels_answer_as_brute_force() {
        let mut index = Tiered::new(12).unwrap();
        let mut live: Vec<(u64, u64)> = Vec::new();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let centres: Vec<u64> = (0..50).map(|_| next()).collect();
        for id in 0..60_000u64 {
            // Clustered fingerprints: a centre with a few bits flipped.
            let mut fingerprint = centres[(next() % 50) as usize];
            for _ in 0..next() % 10 {
                fingerprint ^= 1 << (next() % 64);
            }
            index.insert(id, fingerprint);
            live.push((id, fingerprint));
            if id % 7 == 3 {
                let victim = live.swap_remove((next() % live.len() as u64) as usize);
                assert!(index.remove(victim.0));
                assert!(!index.remove(victim.0));
            }
            if id % 5000 == 4999 {
                for _ in 0..20 {
                    let probe = centres[(next() % 50) as usize] ^ (1 << (next() % 64));
                    let k = (next() % 13) as u32;
                    let mut got = Vec::new();
                    index.query(probe, k, &mut got);
                    got.sort_unstable();
                    let mut want: Vec<(u64, u32)> = live
                        .iter()
                        .map(|&(i, f)| (i, (f ^ probe).count_ones()))
                        .filter(|&(_, d)| d <= k)
                        .collect();
                    want.sort_unstable();
                    assert_eq!(got, want, "k {k} after {id} inserts");
                }
            }
        }
        assert_eq!(index.len(), live.len());
        assert!(index.levels() < 12, "{} levels", index.levels());
        let entries: Vec<(u64, u64)> = live.clone();
        let one = Tiered::from_entries(12, &entries).unwrap();
        assert_eq!(one.levels(), 2);
        for &(_, fingerprint) in live.iter().step_by(997) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            index.query(fingerprint, 9, &mut a);
            one.query(fingerprint, 9, &mut b);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
        }
    }

    /// Merges left to the owner (built from `&self`, installed later) and retention drops
    /// (`forget_below`) answer as brute force over the ids kept; ids below the cut may still
    /// come back from a level not yet rebuilt (callers skip them), never ids that were not
    /// stored, and the levels stay few.
    #[test]
    fn deferred_merges_and_forgetting_answer_as_brute_force() {
        let mut next = xorshift(0x243f_6a88_85a3_08d3u64);
        let centres: Vec<u64> = (0..40).map(|_| next()).collect();
        let mut index = Tiered::new(6).unwrap().defer_merges();
        let mut stored: Vec<(u64, u64)> = Vec::new();
        let mut cut = 0u64;
        for id in 0..90_000u64 {
            let mut fingerprint = centres[(next() % 40) as usize];
            for _ in 0..next() % 8 {
                fingerprint ^= 1 << (next() % 64);
            }
            index.insert(id, fingerprint);
            stored.push((id, fingerprint));
            if id % 3000 == 2999 {
                while let Some(merge) = index.merge() {
                    let built = build_hamming_merge(&merge).unwrap();
                    assert!(index.install(merge, built));
                }
            }
            if id % 20_000 == 19_999 {
                cut = id - 15_000 + next() % 10_000;
                index.forget_below(cut);
            }
            if id % 7_000 == 6_999 {
                for _ in 0..10 {
                    let probe = centres[(next() % 40) as usize] ^ (1 << (next() % 64));
                    let k = (next() % 7) as u32;
                    let mut got = Vec::new();
                    index.query(probe, k, &mut got);
                    assert!(got.iter().all(|&(i, d)| i <= id
                        && d == (stored[i as usize].1 ^ probe).count_ones()
                        && d <= k));
                    got.retain(|&(i, _)| i >= cut);
                    got.sort_unstable();
                    let want: Vec<(u64, u32)> = stored[cut as usize..]
                        .iter()
                        .map(|&(i, f)| (i, (f ^ probe).count_ones()))
                        .filter(|&(_, d)| d <= k)
                        .collect();
                    assert_eq!(got, want, "k {k} after {id} inserts, cut {cut}");
                }
            }
        }
        assert!(index.levels() < 16, "{} levels", index.levels());
        assert!(index.len() < 90_000 - 30_000, "{} kept", index.len());
    }

    /// The query budget bounds floods, not chance: with a budget of 1, every near copy of a
    /// stored fingerprint is still found though its block values are shared by unrelated
    /// fingerprints (an index of millions has hundreds per 16-bit value).
    #[test]
    fn a_budget_smaller_than_the_chance_buckets_still_finds_every_near_copy() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut index = Tiered::new(3).unwrap();
        let stored: Vec<u64> = (0..60_000).map(|_| next()).collect();
        for (id, &fingerprint) in stored.iter().enumerate() {
            index.insert(id as u64, fingerprint);
        }
        for (id, &fingerprint) in stored.iter().enumerate().step_by(211) {
            let near = fingerprint ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
            let mut found = Vec::new();
            index.query_within(near, 3, 1, &mut found);
            assert!(
                found.iter().any(|&(other, _)| other == id as u64),
                "{id} not found: {found:?}"
            );
        }
    }

    #[test]
    fn a_removed_document_is_no_longer_a_near_candidate() {
        let method = SimHash::from_params(&Params::new()).unwrap();
        let mut index = CollectionIndex::new(&method, 24).unwrap();
        let entry = IndexEntry::of(&method, &method.sketch(NEWS));
        let edited = NEWS.replace("投入", "资金");
        let repost = IndexEntry::of(&method, &method.sketch(&edited));
        assert_ne!(repost.identity, entry.identity);
        index.insert(7, &entry);
        let mut out = Vec::new();
        index.candidates(&repost, &mut out);
        assert_eq!(out.iter().map(|c| c.0).collect::<Vec<_>>(), vec![7]);
        index.remove(7);
        index.candidates(&repost, &mut out);
        assert!(out.is_empty());
        // The identity stays (the caller checks liveness).
        index.candidates(&entry, &mut out);
        assert_eq!(out, vec![(7, Some(0))]);
    }
}

#[cfg(test)]
mod template_anchor_tests {
    use super::*;
    use neardup_core::methods::simhash::SimHash;
    use neardup_core::registry::{Params, Registered};
    use neardup_core::CommonMarking;

    /// A parcel notice whose filling is a place and a code of its own: long enough that two
    /// fillings' fingerprints are past the radius of a short text.
    fn parcel(i: u64) -> String {
        let places = [
            "北京市朝阳区望京街道阜通东大街六号院",
            "上海市浦东新区陆家嘴环路一千号恒生银行大厦",
            "广州市天河区珠江新城花城大道八十五号",
            "深圳市南山区科技园高新南一道飞亚达大厦",
            "成都市武侯区天府大道北段一千七百号",
        ];
        format!(
            "【顺达快递】尊敬的客户您好，您的包裹已到达{}驿站，请凭取件码{}前往领取，\
             如有疑问请致电客服热线，感谢您的支持。",
            places[(i % 5) as usize],
            1000 + i * 7
        )
    }

    /// With templates duplicate, a new filling of a template meets the template's oldest
    /// fillings under its template keys and is their duplicate, at any Hamming distance: the
    /// online form of the batch join's anchors. Before, the index read the fingerprints within
    /// the radius and verification refused any stored filling past it, so the fillings of a
    /// template were merged only within the distance.
    #[test]
    fn templates_duplicate_meets_the_templates_first_fillings_past_the_distance() {
        let params = Params::new().set("templates", "duplicate");
        let method = SimHash::from_params(&params).unwrap();
        let texts: Vec<String> = (0..10).map(parcel).collect();
        let mut sketches: Vec<_> = texts.iter().map(|t| method.sketch(t)).collect();
        // The template's elements are in every notice: common, as a corpus marks them.
        let features = |s: &<SimHash as Method>::Sketch| method.frequency_features(s).to_vec();
        let shared: Vec<u32> = (features(&sketches[0]).into_iter())
            .filter(|f| sketches.iter().all(|s| features(s).contains(f)))
            .collect();
        for sketch in &mut sketches {
            method.mark_common(sketch, &|f| shared.contains(&f));
        }
        let mut index = CollectionIndex::new(&method, 24).unwrap();
        let entries: Vec<IndexEntry> = sketches
            .iter()
            .map(|s| IndexEntry::of(&method, s))
            .collect();
        index.insert(0, &entries[0]);
        let mut past_the_distance = 0;
        let mut candidates = Vec::new();
        for i in 1..texts.len() {
            let (a, b) = (entries[i].hamming.unwrap(), entries[0].hamming.unwrap());
            if (a.0 ^ b.0).count_ones() > a.1.min(b.1) {
                past_the_distance += 1;
            }
            index.candidates(&entries[i], &mut candidates);
            assert!(candidates.iter().any(|c| c.0 == 0), "{i}: {candidates:?}");
            let found = verify(
                &method,
                &sketches[i],
                &entries[i],
                0,
                &sketches[0],
                &entries[0],
            );
            assert!(found.is_some(), "{i}: {}", texts[i]);
        }
        assert!(past_the_distance > 0, "no filling is past the distance");
    }
}
