//! `minhash`: MinHash signatures over shingles, LSH banding for candidates, and verification
//! of every candidate with the true set measure (Jaccard or containment) on the shingle sets.
//!
//! Because candidates are verified, the LSH parameters only trade time for recall: a false
//! candidate costs one set intersection, never a wrong merge.

use std::sync::Arc;

use crate::boilerplate::{Boilerplate, DfLimit, MAX_DF_FLOOR};
use crate::corpus::CorpusStats;
use crate::hash::hash128_u64s;
use crate::lsh::{LshParams, DEFAULT_FN_WEIGHT, DEFAULT_FP_WEIGHT};
use crate::measure::SetMeasure;
use crate::method::{SketchDecoder, SketchEncoder, SketchNotes};
use crate::methods::shared::params::{
    boilerplate_params, boilerplate_settings, normalize_options, normalize_settings,
    BOILERPLATE_PARAMS, MEASURE_PARAM, NORMALIZE_PARAMS, SHINGLE_PARAMS, THRESHOLD_PARAM,
};
use crate::minhash::{MinHasher, SketchScheme};
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::params::{param_value_by_choice, ParamKind, ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::{ShingleSet, Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Method, Result, Sketch};

/// The kind of an encoded [`MinHashSketch`].
const SKETCH_KIND: SketchKind = SketchKind::MinHash;
/// The kind of an encoded weighted [`MinHashSketch`] (`weighting = idf`): the same fields,
/// then the weights.
const WEIGHTED_SKETCH_KIND: SketchKind = SketchKind::WeightedMinHash;

/// What happens to common shingles (in more than `max_df` documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Common {
    /// They stay in the set, but a pair must also agree on its rare shingles: their Jaccard
    /// must reach `rare_threshold` (two notices of one template share their wording and
    /// differ in their numbers and names; two copies of a text share both).
    #[default]
    Check,
    /// They leave the set that is sketched and verified.
    Drop,
}

impl Common {
    /// `check` or `drop`.
    pub fn name(self) -> &'static str {
        match self {
            Common::Check => "check",
            Common::Drop => "drop",
        }
    }
}

impl std::str::FromStr for Common {
    type Err = Error;
    fn from_str(text: &str) -> Result<Common> {
        match text {
            "check" => Ok(Common::Check),
            "drop" => Ok(Common::Drop),
            _ => Err(Error::invalid(
                "common_shingles",
                format!("{text:?} (expected check or drop)"),
            )),
        }
    }
}

param_value_by_choice!(Common);

/// The default `rare_threshold`.
pub const DEFAULT_RARE_THRESHOLD: f64 = 0.4;

/// How shingles are weighted in the signature and the verification measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weighting {
    /// Every shingle weighs 1: Jaccard (or containment) of the sets, classic MinHash.
    #[default]
    None,
    /// A shingle weighs its smoothed inverse document frequency in the corpus
    /// ([`CorpusStats::idf`]): weighted Jaccard (or containment) for verification and
    /// weighted MinHash ([`crate::minhash::icws_signature`]) for candidates, so that text
    /// many documents share counts for less.
    Idf,
}

impl Weighting {
    /// `none` or `idf`.
    pub fn name(self) -> &'static str {
        match self {
            Weighting::None => "none",
            Weighting::Idf => "idf",
        }
    }
}

impl std::str::FromStr for Weighting {
    type Err = Error;
    fn from_str(text: &str) -> Result<Weighting> {
        match text {
            "none" => Ok(Weighting::None),
            "idf" => Ok(Weighting::Idf),
            _ => Err(Error::invalid(
                "weighting",
                format!("{text:?} (expected none or idf)"),
            )),
        }
    }
}

param_value_by_choice!(Weighting);

pub use crate::methods::shared::verify::DEFAULT_THRESHOLD;

/// The sketch of [`MinHash`]: the signature for LSH, the shingle set for verification.
#[derive(Debug, Clone, PartialEq)]
pub struct MinHashSketch {
    signature: Box<[u32]>,
    set: Box<[u32]>,
    /// Per element of `set`, its weight (`weighting = idf`); empty when unweighted.
    weights: Box<[f32]>,
    /// Bit `i` set when element `i` of `set` is common (`common_shingles = check`); empty
    /// when not checked.
    common: Box<[u32]>,
    identity: u128,
}

impl MinHashSketch {
    /// The MinHash signature.
    pub fn signature(&self) -> &[u32] {
        &self.signature
    }
    /// The verification set: the top 32 bits of every shingle hash, sorted, without repeats.
    ///
    /// Half the memory of the 64-bit hashes. Two different shingles share their top 32 bits
    /// with probability 2^-32, so for two documents of `m` and `n` shingles the expected number
    /// of false matches is `m n / 2^32` (0.0002 for two 1,000-shingle documents): the measured
    /// similarity moves by a fraction of one shingle, far below any threshold's resolution.
    pub fn verification_set(&self) -> &[u32] {
        &self.set
    }
    /// The weight of each element of the verification set (`weighting = idf`); empty when
    /// unweighted.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }
}

impl Sketch for MinHashSketch {
    /// No shingle at all. (An exact-only sketch, of a document that is nothing but
    /// boilerplate, has neither shingles nor a signature.)
    fn is_empty(&self) -> bool {
        self.set.is_empty() && !self.signature.is_empty()
    }
    fn exact_only(&self) -> bool {
        self.set.is_empty() && self.signature.is_empty()
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        let kind = if self.weights.is_empty() && self.common.is_empty() {
            SKETCH_KIND
        } else {
            WEIGHTED_SKETCH_KIND
        };
        let mut encoder = SketchEncoder::new(out, kind.byte());
        encoder
            .u128(self.identity)
            .u32s(&self.signature)
            .u32s(&self.set);
        if kind == WEIGHTED_SKETCH_KIND {
            let bits: Vec<u32> = self.weights.iter().map(|w| w.to_bits()).collect();
            encoder.u32s(&bits).u32s(&self.common);
        }
    }
    fn decode(bytes: &[u8]) -> Result<MinHashSketch> {
        let weighted = bytes.get(3) == Some(&WEIGHTED_SKETCH_KIND.byte());
        let mut decoder = if weighted {
            SketchDecoder::new(
                bytes,
                WEIGHTED_SKETCH_KIND.byte(),
                WEIGHTED_SKETCH_KIND.name(),
            )?
        } else {
            SketchDecoder::new(bytes, SKETCH_KIND.byte(), SKETCH_KIND.name())?
        };
        let identity = decoder.u128()?;
        let signature = decoder.u32s()?.into_boxed_slice();
        let set = decoder.u32s()?.into_boxed_slice();
        let (weights, common): (Box<[f32]>, Box<[u32]>) = if weighted {
            let weights = decoder.u32s()?.into_iter().map(f32::from_bits).collect();
            (weights, decoder.u32s()?.into_boxed_slice())
        } else {
            (Box::default(), Box::default())
        };
        decoder.finish()?;
        if !common.is_empty() && common.len() != set.len().div_ceil(32) {
            return Err(Error::invalid(
                "sketch",
                format!(
                    "{} common-bit words for {} elements",
                    common.len(),
                    set.len()
                ),
            ));
        }
        if !weights.is_empty() && weights.len() != set.len() {
            return Err(Error::invalid(
                "sketch",
                format!("{} weights for {} elements", weights.len(), set.len()),
            ));
        }
        if !set.windows(2).all(|w| w[0] < w[1]) {
            return Err(Error::invalid(
                "sketch",
                "verification set not strictly increasing",
            ));
        }
        Ok(MinHashSketch {
            signature,
            set,
            weights,
            common,
            identity,
        })
    }
}

/// Builder of [`MinHash`]; every parameter is checked in [`MinHashBuilder::build`].
#[derive(Debug, Clone)]
pub struct MinHashBuilder {
    normalize: NormalizeOptions,
    tokenizer: Tokenizer,
    ngram: Option<usize>,
    latin_ngram: Option<usize>,
    stopwords: bool,
    permutations: usize,
    scheme: SketchScheme,
    seed: u64,
    threshold: f64,
    measure: SetMeasure,
    bands_rows: Option<(usize, usize)>,
    lsh_threshold: Option<f64>,
    max_df: DfLimit,
    boilerplate_df: DfLimit,
    boilerplate_lines: String,
    weighting: Weighting,
    common: Common,
    rare_threshold: f64,
}

impl Default for MinHashBuilder {
    fn default() -> Self {
        MinHashBuilder {
            normalize: NormalizeOptions::default(),
            tokenizer: Tokenizer::Auto,
            ngram: None,
            latin_ngram: None,
            stopwords: false,
            permutations: 128,
            scheme: SketchScheme::Classic,
            seed: 1,
            threshold: DEFAULT_THRESHOLD,
            measure: SetMeasure::Jaccard,
            bands_rows: None,
            lsh_threshold: None,
            max_df: DfLimit::parse(crate::boilerplate::DEFAULT_MAX_DF, "max_df")
                .unwrap_or_default(),
            boilerplate_df: DfLimit::parse(
                crate::boilerplate::DEFAULT_BOILERPLATE_DF,
                "boilerplate_df",
            )
            .unwrap_or_default(),
            boilerplate_lines: String::new(),
            weighting: Weighting::None,
            common: Common::Check,
            rare_threshold: DEFAULT_RARE_THRESHOLD,
        }
    }
}

impl MinHashBuilder {
    /// Defaults: `auto` shingles (3 characters on CJK, 5 elsewhere), 128 permutations,
    /// Jaccard at [`DEFAULT_THRESHOLD`], derived bands.
    pub fn new() -> MinHashBuilder {
        MinHashBuilder::default()
    }
    /// Normalisation options.
    pub fn normalize(mut self, options: NormalizeOptions) -> Self {
        self.normalize = options;
        self
    }
    /// Tokeniser.
    pub fn tokenizer(mut self, tokenizer: Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }
    /// Tokens per shingle (for `auto`: characters per shingle on CJK runs); default
    /// [`Tokenizer::default_ngram`].
    pub fn ngram(mut self, ngram: usize) -> Self {
        self.ngram = Some(ngram);
        self
    }
    /// For `auto`: characters per shingle on non-CJK runs; default `ngram + 2`.
    pub fn latin_ngram(mut self, ngram: usize) -> Self {
        self.latin_ngram = Some(ngram);
        self
    }
    /// Remove stopwords before shingling.
    pub fn remove_stopwords(mut self, yes: bool) -> Self {
        self.stopwords = yes;
        self
    }
    /// Signature length.
    pub fn permutations(mut self, permutations: usize) -> Self {
        self.permutations = permutations;
        self
    }
    /// Signature scheme.
    pub fn scheme(mut self, scheme: SketchScheme) -> Self {
        self.scheme = scheme;
        self
    }
    /// Seed of the hash family (signatures are comparable only with the same seed).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Similarity threshold of the verification measure.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }
    /// Verification measure.
    pub fn measure(mut self, measure: SetMeasure) -> Self {
        self.measure = measure;
        self
    }
    /// Explicit bands and rows instead of derived ones.
    pub fn bands_rows(mut self, bands: usize, rows: usize) -> Self {
        self.bands_rows = Some((bands, rows));
        self
    }
    /// The Jaccard similarity the LSH S-curve is tuned for. Defaults to the threshold for
    /// Jaccard, and to `0.4 * threshold` for containment (a text inside one up to about
    /// 2.5 times longer has Jaccard at least 0.4).
    pub fn lsh_threshold(mut self, threshold: f64) -> Self {
        self.lsh_threshold = Some(threshold);
        self
    }

    /// Shingles found in more than this many documents of the corpus are common (see
    /// [`crate::boilerplate`] and [`Common`]); [`crate::boilerplate::DEFAULT_MAX_DF`] by
    /// default.
    pub fn max_df(mut self, limit: DfLimit) -> Self {
        self.max_df = limit;
        self
    }
    /// Lines found in at least this many documents of the corpus are boilerplate (see
    /// [`crate::boilerplate`]); [`crate::boilerplate::DEFAULT_BOILERPLATE_DF`] by default.
    pub fn boilerplate_df(mut self, limit: DfLimit) -> Self {
        self.boilerplate_df = limit;
        self
    }
    /// Lines that are boilerplate whatever the corpus: one per line (a saved list or a
    /// user's own).
    pub fn boilerplate_lines(mut self, lines: impl Into<String>) -> Self {
        self.boilerplate_lines = lines.into();
        self
    }

    /// What happens to common shingles ([`Common`]); `check` by default.
    pub fn common_shingles(mut self, common: Common, rare_threshold: f64) -> Self {
        self.common = common;
        self.rare_threshold = rare_threshold;
        self
    }

    /// Shingle weighting ([`Weighting`]); `none` by default.
    pub fn weighting(mut self, weighting: Weighting) -> Self {
        self.weighting = weighting;
        self
    }

    /// Checks the parameters and builds the method.
    ///
    /// # Errors
    /// When the threshold is outside `(0, 1]`, `ngram` or `permutations` out of range, or
    /// `bands x rows` does not fit the signature.
    pub fn build(self) -> Result<MinHash> {
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!("{} (expected 0 < t <= 1)", self.threshold),
            ));
        }
        let mut shingler = ShinglerBuilder::new()
            .tokenizer(self.tokenizer)
            .remove_stopwords(self.stopwords);
        if let Some(n) = self.ngram {
            shingler = shingler.ngram(n);
        }
        if let Some(n) = self.latin_ngram {
            shingler = shingler.latin_ngram(n);
        }
        let shingler = shingler.build()?;
        let hasher = MinHasher::new(self.permutations, self.scheme, self.seed)?;
        let lsh_threshold = self.lsh_threshold.unwrap_or(match self.measure {
            SetMeasure::Jaccard => self.threshold,
            SetMeasure::Containment => 0.4 * self.threshold,
        });
        let lsh = match self.bands_rows {
            Some((bands, rows)) => LshParams::new(bands, rows, self.permutations)?,
            None => LshParams::optimal(
                lsh_threshold,
                self.permutations,
                DEFAULT_FP_WEIGHT,
                DEFAULT_FN_WEIGHT,
            )?,
        };
        if !(self.rare_threshold >= 0.0 && self.rare_threshold <= 1.0) {
            return Err(Error::invalid(
                "rare_threshold",
                format!("{} (expected 0 <= t <= 1)", self.rare_threshold),
            ));
        }
        let normalizer = Normalizer::new(self.normalize);
        let boilerplate = Boilerplate::new(
            self.max_df,
            self.boilerplate_df,
            &self.boilerplate_lines,
            &normalizer,
        );
        Ok(MinHash {
            common: self.common,
            rare_threshold: self.rare_threshold,
            weighting: self.weighting,
            idf: None,
            boilerplate,
            normalizer,
            shingler,
            hasher,
            lsh,
            threshold: self.threshold,
            measure: self.measure,
        })
    }
}

/// MinHash-LSH with verification.
#[derive(Debug, Clone)]
pub struct MinHash {
    common: Common,
    rare_threshold: f64,
    weighting: Weighting,
    idf: Option<Arc<CorpusStats>>,
    boilerplate: Boilerplate,
    normalizer: Normalizer,
    shingler: Shingler,
    hasher: MinHasher,
    lsh: LshParams,
    threshold: f64,
    measure: SetMeasure,
}

impl MinHash {
    /// The LSH parameters in use.
    pub fn lsh(&self) -> LshParams {
        self.lsh
    }
    /// The shingler (tokeniser and shingle sizes).
    pub fn shingler(&self) -> &Shingler {
        &self.shingler
    }

    /// The verification measure.
    pub fn measure(&self) -> SetMeasure {
        self.measure
    }
    /// The shingle set of raw text (normalised first).
    pub fn shingles(&self, text: &str) -> ShingleSet {
        self.shingler.shingles(&self.normalizer.normalize(text))
    }
    /// The boilerplate settings and what was learned.
    pub fn boilerplate(&self) -> &Boilerplate {
        &self.boilerplate
    }

    /// The sketch of a document that is nothing but boilerplate: no signature, no shingles,
    /// the identity of its full shingle set (tagged so that it never equals the identity of
    /// a sketch with shingles).
    fn exact_only_sketch(&self, text: &str) -> MinHashSketch {
        const TAG: u128 = 0x6578_6163_742d_6f6e_6c79_0000_0000_0001;
        let full = self.shingles(text);
        MinHashSketch {
            signature: Box::new([]),
            set: Box::new([]),
            weights: Box::new([]),
            common: Box::new([]),
            identity: hash128_u64s(full.hashes()) ^ TAG,
        }
    }

    /// The sketch of an already computed shingle set.
    pub fn sketch_shingles(&self, shingles: ShingleSet) -> MinHashSketch {
        let signature = self.hasher.signature(shingles.hashes()).into_boxed_slice();
        let identity = hash128_u64s(shingles.hashes());
        // The hashes are sorted, so their top halves are too: only neighbours can repeat.
        let mut set: Vec<u32> = shingles
            .hashes()
            .iter()
            .map(|&h| (h >> 32) as u32)
            .collect();
        set.dedup();
        MinHashSketch {
            signature,
            set: set.into_boxed_slice(),
            weights: Box::new([]),
            common: Box::new([]),
            identity,
        }
    }

    /// The weighted sketch of a shingle set under `weighting = idf`: each shingle weighs its
    /// IDF (1 before the corpus is learned).
    fn sketch_weighted(&self, shingles: ShingleSet) -> MinHashSketch {
        let hashes = shingles.hashes();
        let weights: Vec<f32> = hashes
            .iter()
            .map(|&hash| match &self.idf {
                Some(stats) => stats.idf(crate::boilerplate::shingle_key(hash)) as f32,
                None => 1.0,
            })
            .collect();
        let signature = crate::minhash::icws_signature(
            hashes,
            &weights,
            self.hasher.permutations(),
            self.hasher.seed(),
        )
        .into_boxed_slice();
        let identity = hash128_u64s(hashes);
        // Top halves of sorted hashes are sorted; a repeated top half keeps its largest
        // weight.
        let mut set: Vec<u32> = Vec::with_capacity(hashes.len());
        let mut set_weights: Vec<f32> = Vec::with_capacity(hashes.len());
        for (&hash, &weight) in hashes.iter().zip(&weights) {
            let top = (hash >> 32) as u32;
            if set.last() == Some(&top) {
                let last = set_weights.len() - 1;
                set_weights[last] = set_weights[last].max(weight);
            } else {
                set.push(top);
                set_weights.push(weight);
            }
        }
        MinHashSketch {
            signature,
            set: set.into_boxed_slice(),
            weights: set_weights.into_boxed_slice(),
            common: Box::new([]),
            identity,
        }
    }

    /// Whether shingles are counted in the corpus pass.
    fn counts_shingles(&self) -> bool {
        (self.boilerplate.max_df() != DfLimit::Off && self.common == Common::Drop)
            || self.weighting == Weighting::Idf
    }

    /// Whether two sketches with common flags agree on their rare elements: their Jaccard
    /// reaches `rare_threshold` (true when neither has a rare element).
    fn rare_agree(&self, a: &MinHashSketch, b: &MinHashSketch) -> bool {
        let is_common = |s: &MinHashSketch, i: usize| s.common[i / 32] & (1 << (i % 32)) != 0;
        let rare = |s: &MinHashSketch| (0..s.set.len()).filter(|&i| !is_common(s, i)).count();
        let (rare_a, rare_b) = (rare(a), rare(b));
        if rare_a + rare_b == 0 {
            return true;
        }
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < a.set.len() && j < b.set.len() {
            match a.set[i].cmp(&b.set[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += usize::from(!is_common(a, i) && !is_common(b, j));
                    i += 1;
                    j += 1;
                }
            }
        }
        let jaccard = shared as f64 / (rare_a + rare_b - shared) as f64;
        jaccard >= self.rare_threshold - 1e-9
    }

    /// The sketch of a shingle set under the method's weighting.
    fn sketch_set(&self, shingles: ShingleSet) -> MinHashSketch {
        match self.weighting {
            Weighting::None => self.sketch_shingles(shingles),
            Weighting::Idf => self.sketch_weighted(shingles),
        }
    }
}

impl Method for MinHash {
    type Sketch = MinHashSketch;

    fn name(&self) -> &'static str {
        "minhash"
    }

    fn sketch(&self, text: &str) -> MinHashSketch {
        if !self.boilerplate.is_active() {
            return self.sketch_set(self.shingles(text));
        }
        self.sketch_noted(text, &mut SketchNotes::default())
    }

    /// Boilerplate lines leave the text before shingling, common shingles leave the set; a
    /// document left with no shingle by either is exact-only.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> MinHashSketch {
        if !self.boilerplate.is_active() {
            return self.sketch_set(self.shingles(text));
        }
        let lines_before = notes.removed_lines.len();
        let stripped = self
            .boilerplate
            .strip(&self.normalizer, text, &mut notes.removed_lines);
        let mut hashes = self.shingler.shingles(&stripped).hashes().to_vec();
        let shingled = hashes.len();
        if self.boilerplate.drops_common() && self.common == Common::Drop {
            hashes.retain(|&hash| !self.boilerplate.is_common(hash));
            notes.discounted_features += (shingled - hashes.len()) as u64;
        }
        if hashes.is_empty() && (shingled > 0 || notes.removed_lines.len() > lines_before) {
            return self.exact_only_sketch(text);
        }
        self.sketch_set(ShingleSet::from_hashes(hashes))
    }

    /// A corpus pass counts lines (`boilerplate_df`) and, for `common_shingles = drop` or
    /// `weighting = idf`, shingles. (`common_shingles = check` counts after sketching:
    /// [`Method::common_limit`].)
    fn learns_from_corpus(&self) -> bool {
        self.boilerplate.line_df() != DfLimit::Off || self.counts_shingles()
    }

    /// The keys of the document's lines (for boilerplate lines) and of its shingles (for
    /// common shingles), in one frequency table.
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        self.boilerplate
            .corpus_lines(&self.normalizer, text, features);
        if self.counts_shingles() {
            features.extend(
                self.shingles(text)
                    .hashes()
                    .iter()
                    .map(|&hash| crate::boilerplate::shingle_key(hash)),
            );
        }
    }

    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        if self.learns_from_corpus() {
            self.boilerplate.learn(corpus, self.counts_shingles());
        }
        if self.weighting == Weighting::Idf {
            self.idf = Some(Arc::clone(corpus));
        }
    }

    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = self.boilerplate.learned_limits();
        if self.common == Common::Check {
            // Resolved by the engine against the distinct documents it sketched.
            limits.retain(|(name, _)| *name != "max_df");
        }
        limits
    }

    fn common_limit(&self, documents: u64) -> Option<u64> {
        (self.common == Common::Check)
            .then(|| {
                self.boilerplate
                    .max_df()
                    .resolve(documents, 1, MAX_DF_FLOOR)
            })
            .flatten()
    }

    fn frequency_features<'s>(&self, sketch: &'s MinHashSketch) -> &'s [u32] {
        &sketch.set
    }

    fn mark_common(&self, sketch: &mut MinHashSketch, is_common: &dyn Fn(u32) -> bool) -> u64 {
        let mut common = vec![0u32; sketch.set.len().div_ceil(32)];
        let mut marked = 0;
        for (element, &value) in sketch.set.iter().enumerate() {
            if is_common(value) {
                common[element / 32] |= 1 << (element % 32);
                marked += 1;
            }
        }
        sketch.common = common.into_boxed_slice();
        marked
    }

    /// The keys are bands of the signature, which marks do not touch.
    fn marks_change_keys(&self) -> bool {
        false
    }

    fn keys(&self, sketch: &MinHashSketch, keys: &mut Vec<u64>) {
        if !sketch.is_empty() && !sketch.exact_only() {
            self.lsh.band_keys(&sketch.signature, keys);
        }
    }

    fn similarity(&self, a: &MinHashSketch, b: &MinHashSketch) -> f64 {
        if a.weights.is_empty() || b.weights.is_empty() {
            self.measure.compute(&a.set, &b.set)
        } else {
            (self.measure).compute_weighted(&a.set, &a.weights, &b.set, &b.weights)
        }
    }

    /// Jaccard cannot exceed `min(|A|, |B|) / max(|A|, |B|)`: pairs of very different sizes
    /// are refused without intersecting their sets.
    fn verify(&self, a: &MinHashSketch, b: &MinHashSketch) -> Option<f64> {
        if self.measure == SetMeasure::Jaccard {
            let size = |s: &MinHashSketch| match s.weights.is_empty() {
                true => s.set.len() as f64,
                false => s.weights.iter().map(|&w| f64::from(w)).sum(),
            };
            let (small, large) = (size(a).min(size(b)), size(a).max(size(b)));
            if large > 0.0 && !self.is_duplicate(small / large) {
                return None;
            }
        }
        let similarity = self.similarity(a, b);
        if !self.is_duplicate(similarity) {
            return None;
        }
        if !a.common.is_empty() && !b.common.is_empty() && !self.rare_agree(a, b) {
            return None;
        }
        Some(similarity)
    }

    fn threshold(&self) -> f64 {
        self.threshold
    }
}

impl Registered for MinHash {
    const NAME: &'static str = "minhash";
    const ABOUT: &'static str = "MinHash-LSH on shingles, every candidate verified";

    fn params() -> Vec<ParamSpec> {
        let own = [
            THRESHOLD_PARAM,
            MEASURE_PARAM,
            ParamSpec {
                name: "common_shingles",
                kind: ParamKind::Choice(&["check", "drop"]),
                default: Some("check"),
                help: "Shingles in more than --max-df documents: `check` (a pair must also agree \
                       on its rare shingles, at --rare-threshold) or `drop` (they leave the set).",
                group: Some("Boilerplate"),
            },
            ParamSpec {
                name: "rare_threshold",
                kind: ParamKind::Number,
                default: Some("0.4"),
                help: "With --common-shingles check: least Jaccard of the rare shingles of a \
                       pair of crowded documents.",
                group: Some("Boilerplate"),
            },
            ParamSpec {
                name: "weighting",
                kind: ParamKind::Choice(&["none", "idf"]),
                default: Some("none"),
                help: "Shingle weights: `none`, or `idf` (weighted by inverse document frequency \
                       in the input: weighted Jaccard and weighted MinHash, common text counts \
                       less).",
                group: Some("Boilerplate"),
            },
            ParamSpec {
                name: "permutations",
                kind: ParamKind::Count,
                default: Some("128"),
                help: "MinHash signature length.",
                group: None,
            },
            ParamSpec {
                name: "bands",
                kind: ParamKind::Count,
                default: None,
                help: "LSH bands (with rows); derived from the threshold when absent.",
                group: None,
            },
            ParamSpec {
                name: "rows",
                kind: ParamKind::Count,
                default: None,
                help: "LSH rows per band (with bands).",
                group: None,
            },
            ParamSpec {
                name: "lsh_threshold",
                kind: ParamKind::Number,
                default: None,
                help: "Jaccard similarity the LSH bands are tuned for (default: the threshold; \
                       0.4 x the threshold with measure containment).",
                group: None,
            },
            ParamSpec {
                name: "sketch",
                kind: ParamKind::Choice(&["classic", "oph"]),
                default: Some("classic"),
                help: "Signature scheme: `classic` (k permutations) or `oph` (one permutation, \
                       densified).",
                group: None,
            },
            ParamSpec {
                name: "seed",
                kind: ParamKind::Count,
                default: Some("1"),
                help: "Seed of the MinHash hash family.",
                group: None,
            },
        ];
        let shared = SHINGLE_PARAMS
            .iter()
            .chain(BOILERPLATE_PARAMS)
            .chain(NORMALIZE_PARAMS);
        own.iter().chain(shared).copied().collect()
    }

    fn from_params(params: &Params) -> Result<MinHash> {
        let mut builder = MinHashBuilder::new().normalize(normalize_options(params)?);
        if let Some(threshold) = params.get("threshold")? {
            builder = builder.threshold(threshold);
        }
        if let Some(measure) = params.get("measure")? {
            builder = builder.measure(measure);
        }
        if let Some(permutations) = params.get("permutations")? {
            builder = builder.permutations(permutations);
        }
        match (params.get::<usize>("bands")?, params.get::<usize>("rows")?) {
            (Some(bands), Some(rows)) => builder = builder.bands_rows(bands, rows),
            (None, None) => {}
            (Some(_), None) => return Err(Error::invalid("bands", "given without rows")),
            (None, Some(_)) => return Err(Error::invalid("rows", "given without bands")),
        }
        if let Some(threshold) = params.get("lsh_threshold")? {
            builder = builder.lsh_threshold(threshold);
        }
        if let Some(scheme) = params.get("sketch")? {
            builder = builder.scheme(scheme);
        }
        if let Some(seed) = params.get("seed")? {
            builder = builder.seed(seed);
        }
        if let Some(weighting) = params.get("weighting")? {
            builder = builder.weighting(weighting);
        }
        let common = params.get("common_shingles")?.unwrap_or_default();
        let rare = params
            .get("rare_threshold")?
            .unwrap_or(DEFAULT_RARE_THRESHOLD);
        builder = builder.common_shingles(common, rare);
        if let Some(tokenizer) = params.get("tokenizer")? {
            builder = builder.tokenizer(tokenizer);
        }
        if let Some(ngram) = params.get("ngram")? {
            builder = builder.ngram(ngram);
        }
        if let Some(ngram) = params.get("latin_ngram")? {
            builder = builder.latin_ngram(ngram);
        }
        let (max_df, boilerplate_df, lines) = boilerplate_params(params)?;
        builder
            .max_df(max_df)
            .boilerplate_df(boilerplate_df)
            .boilerplate_lines(lines)
            .remove_stopwords(params.flag("stopwords")?)
            .build()
    }

    /// In the order the stats file has always had: bands, rows, measure, tokenizer, ngram,
    /// latin_ngram (for `auto`), then the rest.
    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let shingler = &self.shingler;
        let mut settings = vec![
            ("bands", Setting::Count(self.lsh.bands as u64)),
            ("rows", Setting::Count(self.lsh.rows as u64)),
            ("measure", Setting::Text(self.measure.name().to_owned())),
            (
                "tokenizer",
                Setting::Text(shingler.tokenizer().name().to_owned()),
            ),
            ("ngram", Setting::Count(shingler.ngram() as u64)),
        ];
        if shingler.tokenizer() == Tokenizer::Auto {
            settings.push(("latin_ngram", Setting::Count(shingler.latin_ngram() as u64)));
        }
        settings.extend([
            (
                "permutations",
                Setting::Count(self.hasher.permutations() as u64),
            ),
            (
                "sketch",
                Setting::Text(self.hasher.scheme().name().to_owned()),
            ),
            ("seed", Setting::Count(self.hasher.seed())),
            ("stopwords", Setting::Flag(shingler.removes_stopwords())),
            ("weighting", Setting::Text(self.weighting.name().to_owned())),
            (
                "common_shingles",
                Setting::Text(self.common.name().to_owned()),
            ),
            ("rare_threshold", Setting::Number(self.rare_threshold)),
        ]);
        settings.extend(boilerplate_settings(&self.boilerplate));
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_light_edits_are_similar() {
        let method = MinHashBuilder::new().threshold(0.5).build().unwrap();
        let a = method
            .sketch("国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施。");
        let b = method
            .sketch("國務院總理李克強今天在北京主持召開國務院常務會議,部署進一步擴大內需的措施!");
        assert_eq!(method.similarity(&a, &b), 1.0);
        assert_eq!(a.identity(), b.identity());
    }

    #[test]
    fn containment_defaults_to_a_lower_lsh_threshold() {
        let jaccard = MinHashBuilder::new().threshold(0.8).build().unwrap();
        let containment = MinHashBuilder::new()
            .threshold(0.8)
            .measure(SetMeasure::Containment)
            .build()
            .unwrap();
        assert!(containment.lsh().rows < jaccard.lsh().rows);
    }

    #[test]
    fn sketches_round_trip_and_bad_bytes_are_refused() {
        let method = MinHashBuilder::new().permutations(16).build().unwrap();
        for text in ["今天北京天气晴朗，适合出门散步。", "", "a b c d e f g"] {
            let sketch = method.sketch(text);
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(MinHashSketch::decode(&bytes).unwrap(), sketch);
            for cut in 0..bytes.len() {
                assert!(MinHashSketch::decode(&bytes[..cut]).is_err(), "cut {cut}");
            }
            let mut exact = Vec::new();
            crate::methods::exact::Exact::default()
                .sketch(text)
                .encode(&mut exact);
            let error = MinHashSketch::decode(&exact).unwrap_err();
            assert_eq!(error.parameter(), "sketch");
        }
    }

    #[test]
    fn verify_agrees_with_similarity_and_threshold() {
        let method = MinHashBuilder::new().threshold(0.5).build().unwrap();
        let texts = [
            "今天北京天气晴朗，适合出门散步。",
            "今天北京天气晴朗,适合出门散步!!",
            "今天北京天气晴朗",
            "完全不同的一句话。",
        ];
        let sketches: Vec<_> = texts.iter().map(|t| method.sketch(t)).collect();
        for a in &sketches {
            for b in &sketches {
                let similarity = method.similarity(a, b);
                let expected = method.is_duplicate(similarity).then_some(similarity);
                assert_eq!(method.verify(a, b), expected);
            }
        }
    }

    #[test]
    fn invalid_parameters_are_refused_in_build() {
        assert_eq!(
            MinHashBuilder::new()
                .threshold(1.5)
                .build()
                .unwrap_err()
                .parameter(),
            "threshold"
        );
        assert!(MinHashBuilder::new()
            .permutations(64)
            .bands_rows(9, 8)
            .build()
            .is_err());
    }
}
