//! `minhash`: MinHash signatures over shingles, LSH banding for candidates, and verification
//! of every candidate with the true set measure (Jaccard or containment) on the shingle sets.
//!
//! Because candidates are verified, the LSH parameters only trade time for recall: a false
//! candidate costs one set intersection, never a wrong merge.
//!
//! The method is here; its sketch in `sketch.rs`, its builder in `builder.rs`, its own
//! choices in `options.rs`, and how the registry builds it in `registered.rs`.

mod builder;
mod options;
mod registered;
mod scale;
mod sketch;

use std::sync::Arc;

use crate::boilerplate::{Boilerplate, DfFloors, DfLimit};
use crate::corpus::CorpusStats;
use crate::hash::hash128_u64s;
use crate::length_rule::{LengthRule, ThresholdRule};
use crate::lsh::LshParams;
use crate::measure::SetMeasure;
use crate::method::{CommonMarks, PairPrecheck, SketchNotes};
use crate::methods::shared::template;
use crate::minhash::MinHasher;
use crate::normalize::Normalizer;
use crate::tokenize::{ShingleSet, Shingler};
use crate::{Method, Sketch, Verdict};

pub use crate::methods::shared::verify::DEFAULT_THRESHOLD;
pub use builder::MinHashBuilder;
pub use options::{
    Common, Slots, Templates, Weighting, DEFAULT_NGRAM_RULE, DEFAULT_RARE_THRESHOLD,
    DEFAULT_THRESHOLD_RULE,
};
pub use scale::{Scale, ShortPart};
pub use sketch::MinHashSketch;

use scale::{pair_views, Class, ScaleRule, View};

/// MinHash-LSH with verification.
#[derive(Debug, Clone)]
pub struct MinHash {
    common: Common,
    rare_threshold: f64,
    /// The slot check (numbers; [`crate::slots`]) and its least agreement.
    slots: Slots,
    slot_agreement: f64,
    /// Whether two fillings of one template are duplicates.
    templates: Templates,
    weighting: Weighting,
    idf: Option<Arc<CorpusStats>>,
    boilerplate: Boilerplate,
    normalizer: Normalizer,
    shingler: Shingler,
    /// Shingle sizes by length (`ngram = "<30:2,3"`), if given.
    scale: Option<ScaleRule>,
    hasher: MinHasher,
    lsh: LshParams,
    /// The threshold by the size of the pair's smaller shingle set.
    threshold: ThresholdRule,
    measure: SetMeasure,
    /// Fewest agreeing signature places a pair needs before its sets are compared (0: no
    /// such check), by the size of its smaller set as `threshold`; see
    /// [`MinHash::signatures_may_agree`].
    agreement_floor: LengthRule<usize>,
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
    /// The threshold rule (a fixed number unless given by length).
    pub fn threshold_rule(&self) -> &ThresholdRule {
        &self.threshold
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
        let identity = hash128_u64s(full.hashes()) ^ TAG;
        MinHashSketch::long(Box::new([]), Box::new([]), Box::new([]), identity)
    }

    /// The sketch of an already computed shingle set.
    pub fn sketch_shingles(&self, shingles: ShingleSet) -> MinHashSketch {
        self.sketch_hashes(shingles.hashes())
    }

    /// [`MinHash::sketch_shingles`] of the sorted, distinct hashes of a shingle set.
    fn sketch_hashes(&self, hashes: &[u64]) -> MinHashSketch {
        let signature = self.hasher.signature(hashes).into_boxed_slice();
        let identity = hash128_u64s(hashes);
        // The hashes are sorted, so their top halves are too: only neighbours can repeat.
        let mut set: Vec<u32> = hashes.iter().map(|&h| (h >> 32) as u32).collect();
        set.dedup();
        MinHashSketch::long(signature, set.into_boxed_slice(), Box::new([]), identity)
    }

    /// The weighted sketch of a shingle set under `weighting = idf`: each shingle weighs its
    /// IDF (1 before the corpus is learned).
    fn sketch_weighted(&self, hashes: &[u64]) -> MinHashSketch {
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
        let weights = set_weights.into_boxed_slice();
        MinHashSketch::long(signature, set.into_boxed_slice(), weights, identity)
    }

    /// Whether shingles are counted in the corpus pass.
    fn counts_shingles(&self) -> bool {
        (self.boilerplate.max_df() != DfLimit::Off && self.common == Common::Drop)
            || self.weighting == Weighting::Idf
    }

    /// Whether two sketches with common flags agree on their rare elements
    /// ([`template::rare_agree`] at `rare_threshold`).
    fn rare_agree(&self, a: &MinHashSketch, b: &MinHashSketch) -> bool {
        template::rare_agree(a.marked(), b.marked(), self.rare_threshold)
    }

    /// The priority keys ([`crate::Join::PriorityKeys`]) of a *templated* sketch, one whose
    /// common marks cover at least [`template::TEMPLATED_SHARE`] of its set (the fixed text of a
    /// template a crowd of notices shares), when it has rare elements: the bands of a
    /// signature of its rare elements alone, tagged apart from ordinary bands. Its ordinary
    /// bands put it in the buckets of every filling of its template, where the candidate
    /// budget would keep the best-ranked partners and cut its own copies; two copies share
    /// their rare elements (the filling), two fillings do not, so the budget keeps the
    /// partners of these keys first. Its ordinary bands stay: an edit that touches the
    /// filling (a changed letter in a short report) leaves the copies sharing a band.
    /// With two numbers or more, one more priority key: its digits in text order
    /// ([`MinHash::keyed_by_digits`]). With templates duplicates, the bands of its marked
    /// elements (its template) instead: every filling's priority partners are then its
    /// template's best-ranked fillings. Nothing is pushed for any other sketch.
    fn priority_keys(&self, sketch: &MinHashSketch, keys: &mut Vec<u64>) {
        if !self.has_priority_keys(sketch) {
            return;
        }
        // Distinct templates: the filling's keys (rare elements); duplicates: the template's
        // (marked elements), so that every filling meets its template's first ones.
        let duplicates = self.templates == Templates::Duplicate;
        let marks = sketch.marked();
        let part: Vec<u64> = (sketch.set.iter().enumerate())
            .filter(|&(i, _)| marks.is_marked(i) == duplicates)
            .map(|(_, &value)| crate::hash::mix64(u64::from(value)))
            .collect();
        if !part.is_empty() {
            let signature = self.hasher.signature(&part);
            let start = keys.len();
            self.lsh.band_keys(&signature, keys);
            let tag = if duplicates {
                TEMPLATE_KEYS_TAG
            } else {
                RARE_KEYS_TAG
            };
            for key in &mut keys[start..] {
                *key = crate::hash::mix64(*key ^ tag) | crate::PRIORITY_KEY;
            }
        }
        if !duplicates && Self::keyed_by_digits(sketch) {
            let order = u64::from(sketch.digit_order) ^ DIGIT_ORDER_TAG;
            keys.push(crate::hash::mix64(order) | crate::PRIORITY_KEY);
        }
    }

    /// Whether a templated sketch also has a priority key of its digits in text order
    /// ([`crate::slots::digit_order`]): when it has two numbers or more. In a large flood the
    /// names, cities and small numbers of a template's fillings are each common, so a
    /// filling may have no rare shingle at all; what tells it apart is the combination, and
    /// its digits in their places are most of it (an exam notice's month, day, hour, room
    /// and seat). Its copies share them, whatever spaces an edit put among them.
    fn keyed_by_digits(sketch: &MinHashSketch) -> bool {
        sketch.digit_order != 0 && sketch.slots.len() >= 2
    }

    /// Whether [`MinHash::priority_keys`] keys `sketch`: unweighted, templated, and with
    /// templates distinct, with a rare element or a digit-order key
    /// ([`MinHash::keyed_by_digits`]).
    fn has_priority_keys(&self, sketch: &MinHashSketch) -> bool {
        if self.templates == Templates::Duplicate {
            return sketch.weights.is_empty() && self.templated(sketch);
        }
        sketch.weights.is_empty()
            && self.templated(sketch)
            && (Self::keyed_by_digits(sketch) || sketch.marked().count(false) > 0)
    }

    /// `sketch` with the slots of its normalised text (the text left after boilerplate lines),
    /// when the slot check is on and the sketch has shingles.
    fn with_slots(&self, mut sketch: MinHashSketch, normalized: &str) -> MinHashSketch {
        if self.slots == Slots::Numbers && !sketch.set.is_empty() {
            sketch.slots = crate::slots::number_slots(normalized).into_boxed_slice();
            if !sketch.slots.is_empty() {
                sketch.digit_order = crate::slots::digit_order(normalized);
                sketch.places = crate::slots::number_places(normalized);
            }
        }
        sketch
    }

    /// Whether a pair agrees on its slots (always, with the check off): by
    /// [`crate::slots::template_slots_agree`] when both are templated (see
    /// [`MinHash::templated`]), else by [`crate::slots::slots_agree`].
    fn slots_agree(&self, a: &MinHashSketch, b: &MinHashSketch) -> bool {
        match self.slots {
            Slots::Off => true,
            _ if self.templated(a) && self.templated(b) => crate::slots::template_slots_agree(
                (&a.slots, a.digit_order, a.places),
                (&b.slots, b.digit_order, b.places),
                self.slot_agreement,
            ),
            _ => crate::slots::slots_agree(&a.slots, &b.slots, self.slot_agreement),
        }
    }

    /// With templates duplicates, the similarity of two templated sketches on their
    /// template (the containment of their marked shingles: the share of the smaller marked
    /// set in the other, as names and dates that a crowd shares are marked too, in some
    /// fillings and not others), when it reaches the threshold: two
    /// fillings of one template are duplicates whatever their fillings. `None` otherwise,
    /// and the pair is verified as any other.
    fn same_template(&self, a: &MinHashSketch, b: &MinHashSketch) -> Option<f64> {
        if self.templates != Templates::Duplicate || !self.templated(a) || !self.templated(b) {
            return None;
        }
        let (marked_a, marked_b) = (a.marked().count(true), b.marked().count(true));
        let shared = template::shared_elements(a.marked(), b.marked(), true);
        let similarity = shared as f64 / marked_a.min(marked_b).max(1) as f64;
        let threshold = self.threshold.at(marked_a.min(marked_b));
        (similarity >= threshold - 1e-9).then_some(similarity)
    }

    /// Whether a sketch is *templated* ([`template::Marked::templated`]).
    fn templated(&self, sketch: &MinHashSketch) -> bool {
        sketch.marked().templated()
    }

    /// Whether the signatures of `a` and `b` agree in enough places for their Jaccard
    /// similarity to reach the threshold: at least [`crate::minhash::agreement_floor`] at
    /// [`crate::minhash::MISS_RISK`]. Comparing 128 values costs a few nanoseconds, against a
    /// microsecond or more for the merge of two long shingle sets, and most false LSH
    /// candidates (pairs that share a band by chance, their similarity far below the
    /// threshold) stop here. Only for unweighted Jaccard on classic signatures, where each
    /// place agrees with probability equal to the similarity.
    fn signatures_may_agree(&self, a: View<'_>, b: View<'_>) -> bool {
        let places = self.hasher.permutations();
        let floor = (self.agreement_floor).at(a.set.len().min(b.set.len()));
        floor == 0
            || a.signature.len() != places
            || b.signature.len() != places
            || crate::minhash::agreements(a.signature, b.signature) >= floor
    }

    /// The sketch of normalised text whose shingle size depends on its length: the set of
    /// its class's shingles, common shingles dropped by `drop` from the long ones, and the
    /// short part of a document in the overlap. `None` when the set is empty (the caller
    /// decides what an empty document is).
    fn sketch_scaled(
        &self,
        rule: &ScaleRule,
        normalized: &str,
        drop: impl FnOnce(&mut Vec<u64>),
    ) -> (Vec<u64>, usize, Option<MinHashSketch>) {
        let (class, cjk) = rule.class(normalized);
        let shingles = |shingler: &Shingler| distinct_hashes(shingler, normalized);
        let mut hashes = match class {
            Class::Short => shingles(&rule.shingler),
            Class::Long | Class::Both => shingles(&self.shingler),
        };
        let shingled = hashes.len();
        if class != Class::Short {
            drop(&mut hashes);
        }
        if hashes.is_empty() {
            return (hashes, shingled, None);
        }
        let mut sketch = self.sketch_set(&hashes);
        sketch.scale = match class {
            Class::Long => Scale::Long,
            Class::Short => Scale::Short,
            // Without CJK text both shingle sizes give the same set.
            Class::Both if !cjk => Scale::Both(None),
            Class::Both => {
                let short = shingles(&rule.shingler);
                if short == hashes {
                    Scale::Both(None)
                } else if short.is_empty() {
                    Scale::Long
                } else {
                    let part = self.sketch_hashes(&short);
                    Scale::Both(Some(Box::new(ShortPart {
                        signature: part.signature,
                        set: part.set,
                    })))
                }
            }
        };
        (hashes, shingled, Some(sketch))
    }

    /// The sketch of a shingle set (its sorted, distinct hashes) under the method's
    /// weighting.
    fn sketch_set(&self, hashes: &[u64]) -> MinHashSketch {
        match self.weighting {
            Weighting::None => self.sketch_hashes(hashes),
            Weighting::Idf => self.sketch_weighted(hashes),
        }
    }
}

/// The sorted, distinct shingle hashes of normalised text.
fn distinct_hashes(shingler: &Shingler, normalized: &str) -> Vec<u64> {
    let mut hashes = shingler.shingle_hashes(normalized);
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Mixed into the bands of rare elements, so that they never equal an ordinary band.
const RARE_KEYS_TAG: u64 = 0x7261_7265_6b65_7973;

/// Mixed into the bands of a template's marked elements (templates duplicates).
const TEMPLATE_KEYS_TAG: u64 = 0x7465_6d70_6c61_7465;

/// Mixed into the digit-order key of a templated sketch ([`MinHash::keyed_by_digits`]).
const DIGIT_ORDER_TAG: u64 = 0x6469_6769_7473_0001;

impl Method for MinHash {
    type Sketch = MinHashSketch;

    fn name(&self) -> &'static str {
        "minhash"
    }

    /// Band keys, with a templated sketch's priority keys ([`MinHash::priority_keys`]).
    fn join(&self) -> crate::Join<Self> {
        crate::Join::PriorityKeys
    }

    fn sketch(&self, text: &str) -> MinHashSketch {
        if !self.boilerplate.is_active() && self.scale.is_none() {
            let normalized = self.normalizer.normalize(text);
            let sketch = self.sketch_set(self.shingler.shingles(&normalized).hashes());
            return self.with_slots(sketch, &normalized);
        }
        self.sketch_noted(text, &mut SketchNotes::default())
    }

    /// Boilerplate lines leave the text before shingling, common shingles leave the set; a
    /// document left with no shingle by either is exact-only.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> MinHashSketch {
        if !self.boilerplate.is_active() {
            let normalized = self.normalizer.normalize(text);
            let sketch = match &self.scale {
                None => self.sketch_set(self.shingler.shingles(&normalized).hashes()),
                Some(rule) => {
                    let (hashes, _, sketch) = self.sketch_scaled(rule, &normalized, |_| {});
                    sketch.unwrap_or_else(|| self.sketch_set(&hashes))
                }
            };
            return self.with_slots(sketch, &normalized);
        }
        let lines_before = notes.removed_lines.len();
        let stripped = self
            .boilerplate
            .strip(&self.normalizer, text, &mut notes.removed_lines);
        let mut drop = |hashes: &mut Vec<u64>| {
            if self.boilerplate.drops_common() && self.common == Common::Drop {
                let shingled = hashes.len();
                hashes.retain(|&hash| !self.boilerplate.is_common(hash));
                notes.discounted_features += (shingled - hashes.len()) as u64;
            }
        };
        let (hashes, shingled, sketch) = match &self.scale {
            Some(rule) => self.sketch_scaled(rule, &stripped, drop),
            None => {
                let mut hashes = distinct_hashes(&self.shingler, &stripped);
                let shingled = hashes.len();
                drop(&mut hashes);
                (hashes, shingled, None)
            }
        };
        let removed = notes.removed_lines.len() > lines_before;
        if sketch.is_none() && hashes.is_empty() && (shingled > 0 || removed) {
            return self.exact_only_sketch(text);
        }
        let sketch = sketch.unwrap_or_else(|| self.sketch_set(&hashes));
        self.with_slots(sketch, &stripped)
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

    fn set_frequency_floors(&mut self, floors: DfFloors) {
        self.boilerplate.set_floors(floors);
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

    /// With `common_shingles check`, the shingles in more than `max_df` documents. A
    /// templated sketch with rare elements has priority keys from them
    /// ([`MinHash::priority_keys`]), which the marks say.
    fn common_marks(&self) -> Option<CommonMarks<MinHash>> {
        Some(CommonMarks {
            limit: |method, documents| {
                (method.common == Common::Check)
                    .then(|| method.boilerplate.common_limit(documents))
                    .flatten()
            },
            features: |_, sketch| &sketch.set,
            mark: |_, sketch, is_common| {
                let marked;
                (sketch.common, marked) = template::mark(&sketch.set, is_common);
                marked
            },
            changes_keys: |method, sketch| method.has_priority_keys(sketch),
            crowds_only: true,
        })
    }

    /// The bands of the signature, and of the short part's for a document in the overlap
    /// of shingle sizes by length (a chance equality of a long and a short band only makes
    /// a candidate that verification refuses), with [`crate::PRIORITY_KEY`] cleared; before
    /// them, the priority keys of a templated sketch ([`MinHash::priority_keys`]).
    fn keys(&self, sketch: &MinHashSketch, keys: &mut Vec<u64>) {
        if !sketch.is_empty() && !sketch.exact_only() {
            self.priority_keys(sketch, keys);
            let start = keys.len();
            self.lsh.band_keys(&sketch.signature, keys);
            if let Scale::Both(Some(part)) = &sketch.scale {
                self.lsh.band_keys(&part.signature, keys);
            }
            for key in &mut keys[start..] {
                *key &= !crate::PRIORITY_KEY;
            }
        }
    }

    fn pair_precheck(&self) -> Option<PairPrecheck<MinHash>> {
        (self.precheck_width() > 0).then_some(PairPrecheck {
            width: self.precheck_width(),
            write: MinHash::precheck,
            may_agree: MinHash::precheck_may_agree,
        })
    }

    /// On the sets the pair is compared on (the short shingles when one of the two is
    /// short-only, see `scale.rs`); 0 for a short-only and a long-only document.
    fn similarity(&self, a: &MinHashSketch, b: &MinHashSketch) -> f64 {
        let Some((x, y)) = pair_views(a, b) else {
            return 0.0;
        };
        if a.weights.is_empty() || b.weights.is_empty() || !(x.own && y.own) {
            self.measure.compute(x.set, y.set)
        } else {
            (self.measure).compute_weighted(&a.set, &a.weights, &b.set, &b.weights)
        }
    }

    /// Jaccard cannot exceed `min(|A|, |B|) / max(|A|, |B|)`: pairs of very different sizes
    /// are refused without intersecting their sets; and pairs whose signatures agree in too
    /// few places ([`MinHash::signatures_may_agree`]) too.
    fn verify(&self, a: &MinHashSketch, b: &MinHashSketch) -> Option<f64> {
        self.verdict(a, b).similarity()
    }

    fn verdict(&self, a: &MinHashSketch, b: &MinHashSketch) -> Verdict {
        let Some((x, y)) = pair_views(a, b) else {
            return Verdict::Different;
        };
        if let Some(similarity) = self.same_template(a, b) {
            return Verdict::Duplicate(similarity);
        }
        if !self.signatures_may_agree(x, y) {
            return Verdict::Different;
        }
        // The pair's threshold ([`Method::pair_threshold`]) from the sets just chosen.
        let threshold = self.threshold.at(x.set.len().min(y.set.len()));
        if self.measure == SetMeasure::Jaccard {
            let size = |s: &MinHashSketch, v: View<'_>| match s.weights.is_empty() || !v.own {
                true => v.set.len() as f64,
                false => s.weights.iter().map(|&w| f64::from(w)).sum(),
            };
            let (a_size, b_size) = (size(a, x), size(b, y));
            let (small, large) = (a_size.min(b_size), a_size.max(b_size));
            if large > 0.0 && small / large < threshold - 1e-9 {
                return Verdict::Different;
            }
        }
        let similarity = self.similarity(a, b);
        if similarity < threshold - 1e-9 {
            return Verdict::Different;
        }
        // Common marks are on the sketch's own set (the short part of a document in the
        // overlap has none).
        let marked = x.own && y.own && !a.common.is_empty() && !b.common.is_empty();
        if (marked && !self.rare_agree(a, b)) || !self.slots_agree(a, b) {
            return Verdict::Fillings;
        }
        Verdict::Duplicate(similarity)
    }

    /// The rule's smallest value (the value of every pair unless it is a rule by length).
    fn threshold(&self) -> f64 {
        self.threshold.min()
    }

    /// The rule's value at the size of the smaller shingle set.
    fn pair_threshold(&self, a: &MinHashSketch, b: &MinHashSketch) -> f64 {
        match pair_views(a, b) {
            Some((x, y)) => self.threshold.at(x.set.len().min(y.set.len())),
            None => self.threshold.max(),
        }
    }
}

/// The pair pre-check ([`Method::pair_precheck`]).
impl MinHash {
    /// The signature folded to a byte a place ([`crate::minhash::fold_bytes`]) after a
    /// byte that says whether the signature is a full classic one; only where the signature
    /// check applies ([`MinHash::signatures_may_agree`]).
    pub(crate) fn precheck_width(&self) -> usize {
        match self.agreement_floor.min() {
            0 => 0,
            _ => 1 + self.hasher.permutations(),
        }
    }

    pub(crate) fn precheck(&self, sketch: &MinHashSketch, out: &mut [u8]) {
        let Some((flag, places)) = out.split_first_mut() else {
            return;
        };
        let (which, signature) = scale::precheck_flag(sketch, places.len());
        *flag = which;
        places.fill(0);
        if which != 0 {
            crate::minhash::fold_bytes(signature, places);
        }
    }

    /// The signature check on the folded bytes: they agree wherever the signatures do, so a
    /// pair the check on the full signatures passes passes here too. (With shingle sizes by
    /// length, only where the folded signatures are the ones the pair is verified on.)
    pub(crate) fn precheck_may_agree(&self, a: &[u8], b: &[u8]) -> bool {
        let (Some((&flag_a, a)), Some((&flag_b, b))) = (a.split_first(), b.split_first()) else {
            return true;
        };
        match scale::precheck_compares(flag_a, flag_b) {
            None => return true,
            Some(false) => return false,
            Some(true) => {}
        }
        // The sizes are not in the pre-check: the least floor of any size.
        let floor = self.agreement_floor.min();
        floor == 0 || a.len() != b.len() || crate::minhash::byte_agreements(a, b) >= floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommonMarking;

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
    fn sketches_keep_their_number_places_and_older_ones_decode_without() {
        use crate::method::SketchEncoder;
        use crate::sketch_kind::SketchKind;
        use crate::slots::NumberPlaces;
        let method = (MinHashBuilder::new().permutations(16))
            .slots(Slots::Numbers, crate::slots::DEFAULT_SLOT_AGREEMENT)
            .build()
            .unwrap();
        let sketch =
            method.sketch("王伟同学您好，考试将于3月16日9点开始，考场为第12考场，座位号7。");
        assert!(sketch.digit_order != 0 && sketch.places.layout != 0);
        let mut bytes = Vec::new();
        sketch.encode(&mut bytes);
        assert_eq!(MinHashSketch::decode(&bytes).unwrap(), sketch);
        // Written before the places: the slots, the digit order alone, then the sketch.
        let unslotted = MinHashSketch {
            slots: Box::default(),
            digit_order: 0,
            places: NumberPlaces::default(),
            ..sketch.clone()
        };
        let mut old = Vec::new();
        SketchEncoder::new(&mut old, SketchKind::OrderedSlotsMinHash.byte())
            .u32s(&sketch.slots)
            .u32s(&[sketch.digit_order]);
        unslotted.encode(&mut old);
        let decoded = MinHashSketch::decode(&old).unwrap();
        assert_eq!(decoded.places, NumberPlaces::default());
        assert_eq!(decoded.digit_order, sketch.digit_order);
        assert_eq!(decoded.slots, sketch.slots);
        // Two values (neither the old form nor the new) are refused.
        let mut two = Vec::new();
        SketchEncoder::new(&mut two, SketchKind::OrderedSlotsMinHash.byte())
            .u32s(&sketch.slots)
            .u32s(&[sketch.digit_order, 7]);
        unslotted.encode(&mut two);
        assert_eq!(
            MinHashSketch::decode(&two).unwrap_err().parameter(),
            "sketch"
        );
    }

    #[test]
    fn the_precheck_refuses_unrelated_texts_and_keeps_copies() {
        let method = MinHashBuilder::new().threshold(0.4).build().unwrap();
        assert_eq!(method.precheck_width(), 129);
        let check = |text: &str| {
            let mut out = vec![0u8; method.precheck_width()];
            method.precheck(&method.sketch(text), &mut out);
            out
        };
        let a =
            check("国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施。");
        let copy = check("国务院总理李克强今天在北京主持召开国务院常务会议，部署扩大内需的措施！");
        let other =
            check("春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。床前明月光，疑是地上霜。");
        assert!(method.precheck_may_agree(&a, &copy));
        assert!(!method.precheck_may_agree(&a, &other));
        assert_eq!(a[0], 1);
        // A sketch without a full signature (first byte 0) is refused nothing.
        let mut none = other.clone();
        none[0] = 0;
        assert!(method.precheck_may_agree(&a, &none));
        // Weighted sketches have no signature check, hence no pre-check.
        let weighted = MinHashBuilder::new()
            .weighting(Weighting::Idf)
            .build()
            .unwrap();
        assert_eq!(weighted.precheck_width(), 0);
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
    fn the_slot_check_refuses_fillings_of_one_template_and_keeps_copies() {
        let notice = |amount: &str, card: &str, day: &str, phone: &str| {
            format!(
                "Chase alert: a purchase of ${amount} was made on your card ending in {card} at \
                 Northwind Traders in Atlanta on May {day}. If this was not you, call {phone}."
            )
        };
        let a = notice("412.07", "4821", "5", "800-555-0199");
        let refill = notice("87.50", "1937", "17", "888-555-0142");
        let copy = notice("412.07", "4821", "6", "800-555-0199");
        let off = MinHashBuilder::new().threshold(0.4).build().unwrap();
        let on = MinHashBuilder::new()
            .threshold(0.4)
            .slots(Slots::Numbers, 0.2)
            .build()
            .unwrap();
        let (sa, sr, sc) = (on.sketch(&a), on.sketch(&refill), on.sketch(&copy));
        // The shingles alone make the refill a duplicate; its numbers do not.
        assert!(off.verify(&off.sketch(&a), &off.sketch(&refill)).is_some());
        assert_eq!(on.verify(&sa, &sr), None);
        assert!(on.verify(&sa, &sc).is_some());
        // At agreement 0 every pair agrees.
        let lenient = MinHashBuilder::new()
            .threshold(0.4)
            .slots(Slots::Numbers, 0.0)
            .build()
            .unwrap();
        assert!(lenient.verify(&sa, &sr).is_some());
        assert!(MinHashBuilder::new()
            .slots(Slots::Numbers, 1.5)
            .build()
            .is_err());
    }

    /// In a large flood every shingle of an exam notice is common (its name, city and small
    /// numbers too): the notice has no rare shingle, and its one priority key is its digits
    /// in order, shared by a copy with a space typed inside a number, not by another filling.
    #[test]
    fn a_notice_without_rare_shingles_is_keyed_by_its_digits_in_order() {
        let notice = |name: &str, numbers: [&str; 5]| {
            let [month, day, hour, room, seat] = numbers;
            format!(
                "【广州教育考试院】{name}同学您好，您报名的考试将于{month}月{day}日{hour}点开始，\
                 考场为第{room}考场，座位号{seat}，请携带身份证和准考证提前三十分钟到达。"
            )
        };
        let method = MinHashBuilder::new()
            .common_shingles(Common::Check, 0.5)
            .slots(Slots::Numbers, 0.2)
            .build()
            .unwrap();
        let marked = |text: &str| {
            let mut sketch = method.sketch(text);
            let marks = method.mark_common(&mut sketch, &|_| true);
            assert_eq!(marks, sketch.set.len() as u64);
            sketch
        };
        let priority = |sketch: &MinHashSketch| {
            let mut keys = Vec::new();
            method.keys(sketch, &mut keys);
            let ordinary = keys.iter().filter(|&&k| k < crate::PRIORITY_KEY).count();
            assert!(ordinary >= method.lsh().bands, "{ordinary}");
            keys.retain(|&k| k >= crate::PRIORITY_KEY);
            keys
        };
        let a = marked(&notice("赵娜", ["5", "12", "9", "16", "27"]));
        let copy = marked(&notice("赵娜", ["5", "12", "9", "1 6", "27"]).replace("您", "你"));
        let other = marked(&notice("赵娜", ["5", "12", "9", "16", "28"]));
        assert!(method.marks_changed_keys(&a));
        assert_eq!(priority(&a).len(), 1);
        assert_eq!(priority(&a), priority(&copy));
        assert_ne!(priority(&a), priority(&other));
        // Unmarked, or with a single number, a notice has no priority key.
        assert!(priority(&method.sketch(&notice("赵娜", ["5", "12", "9", "16", "27"]))).is_empty());
        let single = marked("【广州教育考试院】赵娜同学您好，您的座位号27，请提前三十分钟到达。");
        assert!(priority(&single).is_empty());
        assert!(!method.marks_changed_keys(&single));
    }

    /// Two fillings of one template whose every shingle is common: different documents
    /// with templates distinct (their digits differ in order), duplicates with templates
    /// duplicate, where they also share a priority key of their template; a text of another
    /// template is neither.
    #[test]
    fn templates_duplicate_joins_the_fillings_of_one_template() {
        let exam = |name: &str, seat: &str| {
            format!(
                "【广州教育考试院】{name}同学您好，您报名的考试将于5月12日9点开始，\
                 考场为第16考场，座位号{seat}，请携带身份证和准考证提前三十分钟到达。"
            )
        };
        let parcel = "【中通快递】您的包裹已到达杭州建设路驿站，取件码9-2-8439，请于2月26日前凭\
                      取件码领取，逾期将退回。";
        let build = |templates: Templates| {
            MinHashBuilder::new()
                .common_shingles(Common::Check, 0.4)
                .slots(Slots::Numbers, 0.2)
                .templates(templates)
                .build()
                .unwrap()
        };
        for (templates, fillings_are_duplicates) in
            [(Templates::Distinct, false), (Templates::Duplicate, true)]
        {
            let method = build(templates);
            let marked = |text: &str| {
                let mut sketch = method.sketch(text);
                method.mark_common(&mut sketch, &|_| true);
                sketch
            };
            let (a, b) = (marked(&exam("赵娜", "27")), marked(&exam("李杰", "3")));
            let other = marked(parcel);
            assert_eq!(method.verify(&a, &b).is_some(), fillings_are_duplicates);
            assert_eq!(method.verify(&a, &other), None, "{templates:?}");
            let priority = |sketch: &MinHashSketch| {
                let mut keys = Vec::new();
                method.keys(sketch, &mut keys);
                keys.retain(|&k| k >= crate::PRIORITY_KEY);
                keys
            };
            let shared = priority(&a).iter().any(|k| priority(&b).contains(k));
            assert_eq!(shared, fillings_are_duplicates, "{templates:?}");
        }
        assert_eq!(
            "duplicate".parse::<Templates>().unwrap(),
            Templates::Duplicate
        );
        let error = "both".parse::<Templates>().unwrap_err();
        assert_eq!(error.parameter(), "templates");
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
