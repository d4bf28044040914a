//! The trait every near-duplicate method implements.
//!
//! Every method neardup has or plans (exact hashing, MinHash-LSH, SimHash block tables,
//! n-gram inverted indexes, similarity joins, I-Match, shingle fingerprints) computes a
//! per-document *sketch*, says how candidate pairs are found (its [`Join`]), and confirms
//! each candidate with a true similarity measure. The engines (`neardup-engine`) and the
//! candidate generators (`neardup-index`) only see this trait, so a new method is one module
//! in [`crate::methods`] plus one entry in [`crate::registry`].

use crate::{Error, Result};

/// What a method computes once per document.
pub trait Sketch: Send + Sync + Sized + 'static {
    /// True when the document has no feature at all (empty after normalisation): it is then
    /// never a candidate and never a duplicate; it is always kept on its own.
    fn is_empty(&self) -> bool;

    /// True when the document has too few features to be compared approximately (a SimHash
    /// of two words is noise): it takes part in exact-copy grouping ([`Sketch::identity`])
    /// only, never in candidate generation. Engines count such documents. False by default.
    fn exact_only(&self) -> bool {
        false
    }

    /// A 128-bit identity of the document's features: equal identities mean identical
    /// features, so similarity 1 without comparing. Engines use it to collapse exact copies
    /// before candidate generation, which keeps LSH buckets small on corpora with many
    /// verbatim repeats.
    fn identity(&self) -> u128;

    /// Appends the versioned binary encoding of the sketch (see [`SketchEncoder`]): the
    /// service stores it, Spark ships it between workers.
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads a sketch written by [`Sketch::encode`].
    ///
    /// # Errors
    /// Bytes that are not a sketch of this kind and version, or are cut short or too long
    /// (parameter `sketch`).
    fn decode(bytes: &[u8]) -> Result<Self>;
}

/// The characters of a sketch, for [`Join::Edit`] and [`Join::NgramBuckets`].
pub type SequenceHook<M> = for<'s> fn(&M, &'s <M as Method>::Sketch) -> &'s [u32];

/// The 64-bit fingerprint and the Hamming radius of a sketch, for [`Join::Hamming`]; `None`
/// leaves the document out of candidate generation.
pub type HammingHook<M> = fn(&M, &<M as Method>::Sketch) -> Option<(u64, u32)>;

/// The rare elements of a templated sketch, for [`RareJoin`]: appends them to the vector and
/// returns `true`, or returns `false` (nothing appended) for a sketch the template check does
/// not treat as templated.
pub type RareHook<M> = fn(&M, &<M as Method>::Sketch, &mut Vec<u64>) -> bool;

/// The second half of a [`Join::Prefix`] whose method checks templates: templated sketches
/// (a flood's notices, whose template text every filling shares) leave the join of their
/// tokens, whose answer would be quadratic, and are joined on their rare elements (what is
/// their own: the filling) at `threshold` in Jaccard, against every sketch. The method's
/// verification refuses a pair with a templated side below that threshold, so the two joins
/// together still find every pair it can accept.
///
/// With templates duplicate, `anchors` gives a templated sketch's *template keys* (see
/// [`crate::methods::shared::template::TemplatePart::template_keys`]): the fillings of one
/// template share one with high probability, and each of them is paired with the first few
/// sketches (by rank) that have it, so that the fillings meet their template's first ones in
/// bounded work (the exact answer, every filling with every other, is quadratic).
pub struct RareJoin<M: Method> {
    /// Least Jaccard of the rare elements, in `(0, 1]`.
    pub threshold: f64,
    /// The rare elements of a sketch.
    pub elements: RareHook<M>,
    /// The template keys of a templated sketch (templates duplicate); `None` otherwise.
    pub anchors: Option<RareHook<M>>,
    /// The template sample of a templated sketch, whatever the policy (see
    /// [`crate::methods::shared::template::TemplatePart::template_sample`]): the stats group
    /// the templated texts this join takes by it. With templates distinct the rare join pairs
    /// only what the check can accept, so the pairs it refuses do not show the templates.
    pub templates: RareHook<M>,
}

impl<M: Method> Clone for RareJoin<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Method> Copy for RareJoin<M> {}

/// The bit that makes a key of [`Join::PriorityKeys`] a priority key; the method clears it
/// in its other keys.
pub const PRIORITY_KEY: u64 = 1 << 63;

/// How a method's candidate pairs are found; the index crate's factory builds the matching
/// generator. A shape that reads something of a sketch besides its keys carries the hook that
/// gives it, so that a method cannot declare the shape and forget the hook: it would not
/// compile.
pub enum Join<M: Method> {
    /// No candidates: only documents of equal [`Sketch::identity`] are duplicates (exact
    /// hashing).
    Identity,
    /// Documents sharing a key of [`Method::keys`] are candidates (LSH bands, super-shingles,
    /// I-Match signatures). The default.
    SymmetricKeys,
    /// As [`Join::SymmetricKeys`], with two classes of keys: a key with [`PRIORITY_KEY`] set
    /// is a *priority key*. When the candidate budget cuts a document's partners, the ones it
    /// meets in priority buckets are kept first, the best-ranked of the others after them.
    /// MinHash keys a templated notice by its filling under priority keys: its copies share
    /// them, while the other fillings of its template crowd its ordinary buckets.
    PriorityKeys,
    /// As [`Join::SymmetricKeys`], and with templates duplicate each templated sketch is
    /// paired with the first sketches sharing one of its template keys (`anchors`; a bounded
    /// number per key, so that a template's fillings meet in linear work): the classic
    /// signatures of two fillings differ, and the check calls two fillings duplicates only
    /// when something pairs them.
    AnchoredKeys {
        /// The template keys of a templated sketch.
        anchors: RareHook<M>,
    },
    /// Documents are stored under [`Method::keys`] and look up [`Method::probe_keys`]; a
    /// candidate is a document whose stored key another one probes (multi-index hashing:
    /// exact block values stored, every value within a radius probed; Pass-Join: segments
    /// stored, substrings probed).
    Probe,
    /// Documents sharing at least `min` distinct keys of [`Method::keys`] (an n-gram index
    /// with a count filter).
    SharedKeys {
        /// Fewest shared keys of a candidate pair, at least 1.
        min: u32,
        /// The template keys of a templated sketch with templates duplicate (see
        /// [`Join::AnchoredKeys`]); `None` otherwise.
        anchors: Option<RareHook<M>>,
        /// A templated sketch's filling keys (its rare elements, its digits in order; the
        /// hook returns whether it gave any): the texts sharing one are candidates too, so
        /// that in a flood of one template a notice meets its copies whatever its buckets
        /// hold. `None`: the keys alone.
        priority: Option<RareHook<M>>,
    },
    /// An exact set-similarity join (PPJoin) over [`Method::join_tokens`]: the generator
    /// sees every document's tokens first to fix a corpus-wide token order, then indexes
    /// prefixes; every pair reaching `threshold` under `measure` on those tokens is a
    /// candidate, and no other. No bucket cap applies: a cap would lose pairs. With `rare`,
    /// templated sketches are joined on their rare elements instead (see [`RareJoin`]).
    Prefix {
        /// The set measure.
        measure: JoinMeasure,
        /// Threshold on the join tokens, in `(0, 1]`.
        threshold: f64,
        /// The join of templated sketches on their rare elements; `None` without a template
        /// check (every sketch is joined on its tokens).
        rare: Option<RareJoin<M>>,
    },
    /// An exact edit-distance join (Pass-Join) over the sequences `sequence` gives: every
    /// pair within `limit` is a candidate, and no other. No bucket cap applies. With `rare`,
    /// templated sketches are joined on their rare elements instead, as in [`Join::Prefix`].
    Edit {
        /// The edit-distance bound.
        limit: EditLimit,
        /// The sequence of a sketch (characters of the normalised text).
        sequence: SequenceHook<M>,
        /// The join of templated sketches on their rare elements; `None` without a template
        /// check.
        rare: Option<RareJoin<M>>,
    },
    /// The all-m-gram index of `ngram`: every `m`-gram of the sequence `sequence` gives is a
    /// key (a sequence shorter than `m` is keyed whole); each bucket is walked in rank order
    /// against its representatives so far with [`Method::verify`], and the pairs found are
    /// the candidates. The bucket cap applies (the documents it leaves out are counted).
    NgramBuckets {
        /// Items (characters) per key, at least 1.
        m: u32,
        /// The sequence of a sketch (characters of the normalised text).
        sequence: SequenceHook<M>,
        /// The join of templated sketches on their rare elements, as in [`Join::Prefix`]:
        /// a templated sketch enters no bucket; `None` without a template check.
        rare: Option<RareJoin<M>>,
    },
    /// Documents whose 64-bit fingerprints (`key`) are within Hamming distance of each
    /// other: at most the smaller of the two documents' radii (SimHash with length-aware
    /// distances). The generator is exact: multi-index hashing over block tables, no false
    /// negatives and no pair beyond the radius.
    Hamming {
        /// The fingerprint and radius of a sketch.
        key: HammingHook<M>,
        /// The largest radius `key` can return: an online index is built for it.
        max_radius: u32,
        /// The priority keys of a sketch (with [`PRIORITY_KEY`] set; the hook returns
        /// whether it gave any), which the online index stores and reads *beside* the
        /// fingerprint, first: a templated text's rare elements and its digits in order. In
        /// a flood every filling shares the block values of a template, the index reads a
        /// bounded number of fingerprints per value, and a copy is met under its filling's
        /// keys instead. `None`: the fingerprint alone. The batch join adds the pairs of a
        /// key table over them to its own (the nearest partners the candidate budget keeps
        /// in a flood of one template are other fillings, not a notice's copies).
        priority: Option<RareHook<M>>,
        /// With templates duplicate, the template keys of a templated sketch (as
        /// [`RareJoin::anchors`]): the batch join also pairs each templated sketch with the
        /// first ones (by rank) sharing one of its keys, whatever their distance, since two
        /// fillings of one template are duplicates and their fingerprints need not be near.
        /// `None` otherwise. The online index ignores it.
        anchors: Option<RareHook<M>>,
    },
}

impl<M: Method> Clone for Join<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Method> Copy for Join<M> {}

/// The shape and its parameters, without the hooks (as a derived `Debug` wrote the joins
/// before they carried hooks: names and messages are unchanged).
impl<M: Method> std::fmt::Debug for Join<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Join::Identity => f.write_str("Identity"),
            Join::SymmetricKeys => f.write_str("SymmetricKeys"),
            Join::PriorityKeys => f.write_str("PriorityKeys"),
            Join::AnchoredKeys { .. } => f.write_str("AnchoredKeys"),
            Join::Probe => f.write_str("Probe"),
            Join::SharedKeys { min, .. } => f.debug_struct("SharedKeys").field("min", min).finish(),
            Join::Prefix {
                measure, threshold, ..
            } => (f.debug_struct("Prefix"))
                .field("measure", measure)
                .field("threshold", threshold)
                .finish(),
            Join::Edit { limit, .. } => f.debug_struct("Edit").field("limit", limit).finish(),
            Join::NgramBuckets { m, .. } => f.debug_struct("NgramBuckets").field("m", m).finish(),
            Join::Hamming { .. } => f.write_str("Hamming"),
        }
    }
}

/// The shape of a [`Join`] without its parameters and hooks: for comparisons and names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinShape {
    /// [`Join::Identity`].
    Identity,
    /// [`Join::SymmetricKeys`], [`Join::PriorityKeys`] and [`Join::AnchoredKeys`].
    SymmetricKeys,
    /// [`Join::Probe`].
    Probe,
    /// [`Join::SharedKeys`].
    SharedKeys,
    /// [`Join::Prefix`].
    Prefix,
    /// [`Join::Edit`].
    Edit,
    /// [`Join::NgramBuckets`].
    NgramBuckets,
    /// [`Join::Hamming`].
    Hamming,
}

impl<M: Method> Join<M> {
    /// The largest radius of a [`Join::Hamming`] (an online index is built for it); 0 for
    /// any other join.
    pub fn max_radius(&self) -> u32 {
        match self {
            Join::Hamming { max_radius, .. } => *max_radius,
            _ => 0,
        }
    }

    /// The join's shape.
    pub fn shape(&self) -> JoinShape {
        match self {
            Join::Identity => JoinShape::Identity,
            Join::SymmetricKeys | Join::PriorityKeys | Join::AnchoredKeys { .. } => {
                JoinShape::SymmetricKeys
            }
            Join::Probe => JoinShape::Probe,
            Join::SharedKeys { .. } => JoinShape::SharedKeys,
            Join::Prefix { .. } => JoinShape::Prefix,
            Join::Edit { .. } => JoinShape::Edit,
            Join::NgramBuckets { .. } => JoinShape::NgramBuckets,
            Join::Hamming { .. } => JoinShape::Hamming,
        }
    }
}

/// The set measure of [`Join::Prefix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinMeasure {
    /// `|x ∩ y| / |x ∪ y|`.
    Jaccard,
    /// `|x ∩ y| / sqrt(|x| |y|)`.
    Cosine,
    /// `|x ∩ y| / min(|x|, |y|)`: the smaller set contained in the larger (the overlap
    /// coefficient).
    Containment,
}

/// The bound of [`Join::Edit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EditLimit {
    /// At most this many edits (insertions, deletions, substitutions).
    Absolute(u32),
    /// Edit similarity `1 - distance / longer length` at least this, in `(0, 1]`.
    Normalized(f64),
}

/// A method's pair pre-check ([`Method::pair_precheck`]): a few bytes a document. A run whose
/// sketches are spilled keeps these bytes apart, in a small file the page cache holds, and
/// refuses a candidate pair whose pre-checks cannot pass before it reads and decodes the two
/// sketches. The three parts come together, so that a method cannot give one and forget
/// another.
pub struct PairPrecheck<M: Method> {
    /// Bytes of a document's pre-check, at least 1.
    pub width: usize,
    /// Writes the pre-check of a sketch to `out` (`width` bytes).
    pub write: fn(&M, &M::Sketch, &mut [u8]),
    /// Whether a pair with the pre-checks `a` and `b` may pass [`Method::verify`]. Never
    /// `false` for a pair that `verify` confirms: a pre-check refuses only what `verify`
    /// would refuse.
    pub may_agree: fn(&M, &[u8], &[u8]) -> bool,
}

impl<M: Method> Clone for PairPrecheck<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Method> Copy for PairPrecheck<M> {}

/// Marks the features of a sketch that the predicate says are common; returns how many.
pub type MarkHook<M> = fn(&M, &mut <M as Method>::Sketch, &dyn Fn(u32) -> bool) -> u64;

/// How a method marks common features ([`Method::common_marks`]): after sketching, engines
/// count in how many distinct documents each of a sketch's `features` occurs (exactly, in
/// memory-bounded partitions) and `mark` the common ones in every sketch that enters
/// verification. The parts come together, so that a method gives all or none.
pub struct CommonMarks<M: Method> {
    /// The document-frequency limit above which a feature is *common*, for a corpus of
    /// `documents` distinct documents; `None` when the method, with its parameters, marks
    /// none.
    pub limit: fn(&M, u64) -> Option<u64>,
    /// The sorted, distinct features of a sketch whose document frequency is counted.
    pub features: for<'s> fn(&M, &'s M::Sketch) -> &'s [u32],
    /// Marks the features of a sketch that `is_common` says are common; returns how many.
    pub mark: MarkHook<M>,
    /// Whether the marks changed the [`Method::keys`] of this marked sketch. When no marked
    /// sketch's keys changed, an engine may find the candidates from the keys it gathered
    /// before marking (a spilling run sorts them once).
    pub changes_keys: fn(&M, &M::Sketch) -> bool,
    /// Whether an engine marks the documents in a crowd of its [`Method::keys`] only (a
    /// bucket of [`Join::SymmetricKeys`] shared by many documents: for band keys, which a
    /// template's fillings share and ordinary texts do not), or every document (`false`:
    /// keys that do not gather a template's fillings, such as a lexicon signature of the
    /// words a filling changes). Methods whose candidates are not shared keys of one kind
    /// have every document marked whatever this says.
    pub crowds_only: bool,
}

impl<M: Method> Clone for CommonMarks<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Method> Copy for CommonMarks<M> {}

/// The common marks of any method, read through its hook ([`Method::common_marks`]), with
/// what a method without marks answers: what engines call.
pub trait CommonMarking: Method {
    /// [`CommonMarks::limit`]; `None` without marks.
    fn common_limit(&self, documents: u64) -> Option<u64>;
    /// [`CommonMarks::features`]; none without marks.
    fn frequency_features<'s>(&self, sketch: &'s Self::Sketch) -> &'s [u32];
    /// [`CommonMarks::mark`]; 0 without marks.
    fn mark_common(&self, sketch: &mut Self::Sketch, is_common: &dyn Fn(u32) -> bool) -> u64;
    /// [`CommonMarks::changes_keys`]; true without marks.
    fn marks_changed_keys(&self, sketch: &Self::Sketch) -> bool;
    /// [`CommonMarks::crowds_only`]; true without marks.
    fn marks_crowds_only(&self) -> bool;
}

impl<M: Method> CommonMarking for M {
    fn common_limit(&self, documents: u64) -> Option<u64> {
        (self.common_marks()).and_then(|marks| (marks.limit)(self, documents))
    }

    fn frequency_features<'s>(&self, sketch: &'s Self::Sketch) -> &'s [u32] {
        match self.common_marks() {
            Some(marks) => (marks.features)(self, sketch),
            None => &[],
        }
    }

    fn mark_common(&self, sketch: &mut Self::Sketch, is_common: &dyn Fn(u32) -> bool) -> u64 {
        (self.common_marks()).map_or(0, |marks| (marks.mark)(self, sketch, is_common))
    }

    fn marks_changed_keys(&self, sketch: &Self::Sketch) -> bool {
        (self.common_marks()).is_none_or(|marks| (marks.changes_keys)(self, sketch))
    }

    fn marks_crowds_only(&self) -> bool {
        (self.common_marks()).is_none_or(|marks| marks.crowds_only)
    }
}

/// A near-duplicate method: sketch, candidates, verification.
pub trait Method: Send + Sync + Clone {
    /// The per-document data kept in memory.
    type Sketch: Sketch;

    /// The method's name, as given on the command line.
    fn name(&self) -> &'static str;

    /// Sketches raw (not yet normalised) document text.
    fn sketch(&self, text: &str) -> Self::Sketch;

    /// Sketches raw `text` and notes what boilerplate handling removed from it (see
    /// [`crate::boilerplate`]): engines sum the notes into their stats. The same sketch as
    /// [`Method::sketch`]; by default that, noting nothing.
    fn sketch_noted<'t>(&self, text: &'t str, _notes: &mut SketchNotes<'t>) -> Self::Sketch {
        self.sketch(text)
    }

    /// How candidates are found; [`Join::SymmetricKeys`] by default.
    fn join(&self) -> Join<Self> {
        Join::SymmetricKeys
    }

    /// Appends the bucket keys of a sketch: what it is stored under.
    fn keys(&self, sketch: &Self::Sketch, keys: &mut Vec<u64>);

    /// Appends the keys a sketch looks up under [`Join::Probe`]; by default its own keys.
    fn probe_keys(&self, sketch: &Self::Sketch, keys: &mut Vec<u64>) {
        self.keys(sketch, keys);
    }

    /// Appends the tokens of a sketch for [`Join::Prefix`], in any order and without
    /// repeats; by default its keys.
    fn join_tokens(&self, sketch: &Self::Sketch, tokens: &mut Vec<u64>) {
        self.keys(sketch, tokens);
    }

    /// The Hamming distance of two sketches' fingerprints, for methods that have one
    /// (written to the pairs file as `distance`); `None` by default.
    fn distance(&self, _a: &Self::Sketch, _b: &Self::Sketch) -> Option<u32> {
        None
    }

    /// Whether the method learns corpus statistics before sketching (TF-IDF weights from
    /// the input's document frequencies). When true, engines call
    /// [`Method::corpus_features`] on every text, count in how many documents each feature
    /// occurs, and give the counts to [`Method::learn`] before the first
    /// [`Method::sketch`]. False by default.
    fn learns_from_corpus(&self) -> bool {
        false
    }

    /// Appends the distinct features of raw `text` whose document frequency the method
    /// learns (see [`Method::learns_from_corpus`]).
    fn corpus_features(&self, _text: &str, _features: &mut Vec<u64>) {}

    /// The limits learned from the corpus, in documents, by name (`max_df`,
    /// `boilerplate_df`: a fraction resolved against the documents counted), for the stats
    /// file. Empty by default.
    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// How the method marks common features, if it does ([`CommonMarks`]); `None` by
    /// default. Engines read it through [`CommonMarking`].
    fn common_marks(&self) -> Option<CommonMarks<Self>> {
        None
    }

    /// The lexicon the method learned or read, as the text of a file its `lexicon_file`
    /// parameter reads back (`dedup --save-lexicon`); `None` (the default) for methods
    /// without a lexicon.
    ///
    /// # Errors
    /// When the lexicon cannot be listed (learned from approximate counts).
    fn lexicon(&self) -> Option<Result<String>> {
        None
    }

    /// Sets the least counts of fractional document-frequency limits, for the next
    /// [`Method::learn`] and [`Method::common_limit`]: an online index's window starts empty
    /// and uses [`DfFloors::stream`](crate::boilerplate::DfFloors::stream). Nothing by
    /// default (a method without such limits).
    fn set_frequency_floors(&mut self, _floors: crate::boilerplate::DfFloors) {}

    /// Takes the corpus statistics (see [`Method::learns_from_corpus`]).
    fn learn(&mut self, _corpus: &std::sync::Arc<CorpusStats>) {}

    /// The method's pair pre-check, if it has one ([`PairPrecheck`]); `None` by default.
    fn pair_precheck(&self) -> Option<PairPrecheck<Self>> {
        None
    }

    /// The true similarity of two sketches, in `[0, 1]`.
    fn similarity(&self, a: &Self::Sketch, b: &Self::Sketch) -> f64;

    /// The similarity at or above which two documents are duplicates; for a threshold by
    /// length ([`crate::length_rule`]), its smallest value (each pair's own is
    /// [`Method::pair_threshold`]).
    fn threshold(&self) -> f64;

    /// The threshold of the pair `a`, `b`: [`Method::threshold`], unless the method's
    /// threshold depends on length, where the pair takes the value of its shorter document.
    fn pair_threshold(&self, _a: &Self::Sketch, _b: &Self::Sketch) -> f64 {
        self.threshold()
    }

    /// Whether `similarity` makes a duplicate. A tolerance of 1e-9 keeps ratios such as
    /// 7/10 equal to a threshold of 0.7 whatever the rounding.
    fn is_duplicate(&self, similarity: f64) -> bool {
        similarity >= self.threshold() - 1e-9
    }

    /// Whether `similarity` makes the pair `a`, `b` a duplicate, at its
    /// [`Method::pair_threshold`] (with [`Method::is_duplicate`]'s tolerance).
    fn is_duplicate_pair(&self, a: &Self::Sketch, b: &Self::Sketch, similarity: f64) -> bool {
        similarity >= self.pair_threshold(a, b) - 1e-9
    }

    /// The similarity of a candidate pair if it makes a duplicate, else `None`. A method may
    /// stop early once the threshold is out of reach (a banded edit distance, a set
    /// intersection that cannot reach the overlap any more); the default computes
    /// [`Method::similarity`] and applies [`Method::is_duplicate`].
    fn verify(&self, a: &Self::Sketch, b: &Self::Sketch) -> Option<f64> {
        let similarity = self.similarity(a, b);
        self.is_duplicate_pair(a, b, similarity)
            .then_some(similarity)
    }

    /// [`Method::verify`] with the reason of a refusal: a method with a template check
    /// tells the pairs its measure accepted and the check refused ([`Verdict::Fillings`]),
    /// which the batch engine counts and groups into the templates it reports. The default
    /// knows no such reason.
    fn verdict(&self, a: &Self::Sketch, b: &Self::Sketch) -> Verdict {
        Verdict::of(self.verify(a, b))
    }
}

/// What [`Method::verdict`] found of a candidate pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// A duplicate, at this similarity.
    Duplicate(f64),
    /// Not a duplicate.
    Different,
    /// Not a duplicate, though the measure reached the threshold: the template check refused
    /// it, as two fillings of one template (their rare elements or their numbers differ).
    Fillings,
}

impl Verdict {
    /// [`Verdict::Duplicate`] of a similarity, [`Verdict::Different`] of none.
    pub fn of(similarity: Option<f64>) -> Verdict {
        similarity.map_or(Verdict::Different, Verdict::Duplicate)
    }

    /// The similarity of a duplicate.
    #[inline]
    pub fn similarity(self) -> Option<f64> {
        match self {
            Verdict::Duplicate(similarity) => Some(similarity),
            Verdict::Different | Verdict::Fillings => None,
        }
    }
}

pub use crate::corpus::CorpusStats;

/// What sketching one document removed as boilerplate ([`Method::sketch_noted`]).
#[derive(Debug, Default)]
pub struct SketchNotes<'t> {
    /// Boilerplate lines removed, in document order.
    pub removed_lines: Vec<crate::boilerplate::RemovedLine<'t>>,
    /// Features dropped as common (in more than `max_df` documents).
    pub discounted_features: u64,
}

/// The magic bytes that open every encoded sketch.
pub const SKETCH_MAGIC: [u8; 2] = *b"ND";

/// The current version of the sketch encoding. A reader refuses other versions; a new version
/// adds a reader, it never reinterprets old bytes.
pub const SKETCH_VERSION: u8 = 1;

/// Writes the common layout of encoded sketches: `"ND"`, the version, a one-byte kind (each
/// method has its own), then little-endian fields.
#[derive(Debug)]
pub struct SketchEncoder<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> SketchEncoder<'a> {
    /// Starts a sketch of `kind` in `out`.
    pub fn new(out: &'a mut Vec<u8>, kind: u8) -> SketchEncoder<'a> {
        out.extend_from_slice(&SKETCH_MAGIC);
        out.push(SKETCH_VERSION);
        out.push(kind);
        SketchEncoder { out }
    }
    /// One byte.
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.out.push(value);
        self
    }
    /// A `u32`, little-endian.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.out.extend_from_slice(&value.to_le_bytes());
        self
    }
    /// A `u64`, little-endian.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.out.extend_from_slice(&value.to_le_bytes());
        self
    }
    /// A `u128`, little-endian.
    pub fn u128(&mut self, value: u128) -> &mut Self {
        self.out.extend_from_slice(&value.to_le_bytes());
        self
    }
    /// A length-prefixed (`u32`) slice of `u32`, little-endian.
    pub fn u32s(&mut self, values: &[u32]) -> &mut Self {
        self.out
            .extend_from_slice(&(values.len() as u32).to_le_bytes());
        for value in values {
            self.out.extend_from_slice(&value.to_le_bytes());
        }
        self
    }
}

/// Reads what [`SketchEncoder`] wrote, refusing anything else with an error (parameter
/// `sketch`), never a panic.
#[derive(Debug)]
pub struct SketchDecoder<'a> {
    bytes: &'a [u8],
}

impl<'a> SketchDecoder<'a> {
    /// Checks the magic, the version and the kind.
    ///
    /// # Errors
    /// When `bytes` do not start a sketch of `kind` in the current version.
    pub fn new(bytes: &'a [u8], kind: u8, what: &str) -> Result<SketchDecoder<'a>> {
        match bytes {
            [m0, m1, version, found, rest @ ..] if [*m0, *m1] == SKETCH_MAGIC => {
                if *version != SKETCH_VERSION {
                    return Err(malformed(format!(
                        "version {version} (this build reads version {SKETCH_VERSION})"
                    )));
                }
                if *found != kind {
                    return Err(malformed(format!(
                        "kind {found} is not a {what} sketch (kind {kind})"
                    )));
                }
                Ok(SketchDecoder { bytes: rest })
            }
            _ => Err(malformed("not an encoded sketch (no \"ND\" header)".into())),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(malformed(format!(
                "cut short: {n} more bytes expected, {} left",
                self.bytes.len()
            )));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    /// One byte.
    ///
    /// # Errors
    /// When the bytes are cut short.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    /// A `u32`.
    ///
    /// # Errors
    /// When the bytes are cut short.
    pub fn u32(&mut self) -> Result<u32> {
        let mut buffer = [0u8; 4];
        buffer.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(buffer))
    }
    /// A `u64`.
    ///
    /// # Errors
    /// When the bytes are cut short.
    pub fn u64(&mut self) -> Result<u64> {
        let mut buffer = [0u8; 8];
        buffer.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(buffer))
    }
    /// A `u128`.
    ///
    /// # Errors
    /// When the bytes are cut short.
    pub fn u128(&mut self) -> Result<u128> {
        let mut buffer = [0u8; 16];
        buffer.copy_from_slice(self.take(16)?);
        Ok(u128::from_le_bytes(buffer))
    }
    /// A length-prefixed slice of `u32`.
    ///
    /// # Errors
    /// When the bytes are cut short.
    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let mut length = [0u8; 4];
        length.copy_from_slice(self.take(4)?);
        let length = u32::from_le_bytes(length) as usize;
        let bytes = self.take(
            length
                .checked_mul(4)
                .ok_or_else(|| malformed(format!("length {length} overflows")))?,
        )?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    /// The bytes left, ending the decoder (a sketch that wraps another one).
    pub fn rest(self) -> &'a [u8] {
        self.bytes
    }
    /// Ends the sketch.
    ///
    /// # Errors
    /// When bytes are left over.
    pub fn finish(self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(malformed(format!(
                "{} bytes left over after the sketch",
                self.bytes.len()
            )))
        }
    }
}

fn malformed(message: String) -> Error {
    Error::invalid("sketch", message)
}
