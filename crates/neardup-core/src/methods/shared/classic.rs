//! What the classic fingerprint methods share (`imatch`, `topn`, `segments`, `sentences`;
//! `supershingle` is MinHash underneath and uses MinHash's sketch): their sketch, its
//! verification, their signatures and their word features.
//!
//! Each of them turns a document into a few *signatures* (64-bit keys): documents sharing a
//! signature (or enough of them) are candidates, as in the published methods. What their
//! descriptions leave out is a check of the candidates: a signature hides how much two texts share, so a short text or
//! an unlucky collision of features makes a false duplicate. Here every candidate is
//! verified by default ([`Verifier`]): the Jaccard of its 3-character (CJK) and 5-character
//! shingles, the measure `minhash` verifies with, must reach `threshold`. `verify = none`
//! gives the classic behaviour (a shared signature is a duplicate; the similarity reported is
//! the Jaccard of the two documents' signature sets), `verify = edit` the normalised edit
//! similarity of the characters.
//!
//! The identity of a sketch is the hash of the normalised text, so exact copies (after
//! normalisation) are grouped before any signature is compared.
//!
//! # Templates
//!
//! The classic methods share the template model of `minhash` and `simhash`: boilerplate
//! lines and edge pieces (a dated header, a "转发：" prefix, a "回T退订" suffix) are learned in
//! the corpus pass and leave the text before its signatures are taken ([`Verifier::body`]),
//! and a candidate that the measure accepts must also pass the template check
//! ([`TemplateCheck`]): two fillings of one template (a bank notice with another amount, an
//! exam notice with another name and seat) share their signatures and most of their text,
//! and are told apart by their rare elements and their numbers in place.

use std::borrow::Cow;
use std::sync::Arc;

use crate::boilerplate::{Boilerplate, DfFloors, DfLimit, RemovedLine};
use crate::corpus::CorpusStats;
use crate::hash::{hash128, hash128_u64s, mix64};
use crate::measure::{edit_similarity, jaccard};
use crate::method::{RareHook, SketchDecoder, SketchEncoder};
use crate::methods::shared::params::{
    boilerplate_params, boilerplate_settings, BOILERPLATE_PARAMS, TEMPLATE_PARAMS, THRESHOLD_PARAM,
};
use crate::methods::shared::template::{TemplateCheck, TemplatePart, Templates};
use crate::methods::shared::verify::{Verification, DEFAULT_EDIT_THRESHOLD, DEFAULT_THRESHOLD};
use crate::normalize::Normalizer;
use crate::params::{ParamKind, ParamSpec, Params, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Join, Method, Result, Sketch, Verdict};

/// The kind of an encoded [`ClassicSketch`] with a template part: the part, then the
/// sketch under the method's own kind.
const TEMPLATED_KIND: SketchKind = SketchKind::TemplatedClassic;

/// The sketch of a classic method (kind byte `KIND`, a [`SketchKind::byte`]): signatures, and
/// what verification needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicSketch<const KIND: u8> {
    identity: u128,
    /// The signatures, sorted, without repeats.
    keys: Box<[u64]>,
    /// `verify = jaccard`: the top 32 bits of the shingle hashes, sorted, without repeats.
    set: Box<[u32]>,
    /// `verify = edit`: the normalised characters, spaces left out.
    text: Box<[u32]>,
    empty: bool,
    exact_only: bool,
    /// The template check's part ([`TemplatePart`]); empty with the check off.
    part: TemplatePart,
}

impl<const KIND: u8> ClassicSketch<KIND> {
    /// The signatures, sorted, without repeats.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Appends the filling keys of a templated sketch (its rare elements, its digits in
    /// order; [`TemplatePart::priority_keys`]) and returns whether it is templated.
    pub fn filling_keys(&self, out: &mut Vec<u64>) -> bool {
        self.part.priority_keys(out)
    }

    /// Appends the template keys of a templated sketch ([`TemplatePart::template_keys`]) and
    /// returns whether it gave any: the anchors of templates duplicate.
    pub fn template_keys(&self, out: &mut Vec<u64>) -> bool {
        self.part.template_keys(out)
    }

    /// The elements the engine counts for the template check
    /// ([`crate::Method::frequency_features`]).
    pub fn frequency_features(&self) -> &[u32] {
        &self.part.set
    }

    /// Marks the common elements of the template part ([`crate::Method::mark_common`]).
    pub fn mark_common(&mut self, is_common: &dyn Fn(u32) -> bool) -> u64 {
        self.part.mark(is_common)
    }
}

impl<const KIND: u8> Sketch for ClassicSketch<KIND> {
    fn is_empty(&self) -> bool {
        self.empty
    }
    fn exact_only(&self) -> bool {
        self.exact_only
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.part.encode(TEMPLATED_KIND, out);
        let flags = u8::from(self.empty) | u8::from(self.exact_only) << 1;
        let mut encoder = SketchEncoder::new(out, KIND);
        encoder.u128(self.identity).u8(flags);
        encoder.u32(self.keys.len() as u32);
        for &key in self.keys.iter() {
            encoder.u64(key);
        }
        encoder.u32s(&self.set).u32s(&self.text);
    }
    fn decode(bytes: &[u8]) -> Result<Self> {
        if bytes.get(3) == Some(&TEMPLATED_KIND.byte()) {
            let inner = SketchKind::from_byte(KIND)
                .ok_or_else(|| Error::invalid("sketch", format!("kind {KIND}")))?;
            let (part, rest) = TemplatePart::decode(bytes, TEMPLATED_KIND, inner)?;
            let mut sketch = Self::decode(rest)?;
            sketch.part = part;
            return Ok(sketch);
        }
        let mut decoder = SketchDecoder::new(bytes, KIND, kind_name(KIND))?;
        let identity = decoder.u128()?;
        let flags = decoder.u8()?;
        if flags > 3 {
            return Err(Error::invalid(
                "sketch",
                format!("flags {flags} (expected 0 to 3)"),
            ));
        }
        let count = decoder.u32()? as usize;
        if count > bytes.len() / 8 {
            return Err(Error::invalid(
                "sketch",
                format!("{count} signatures in {} bytes", bytes.len()),
            ));
        }
        let keys = (0..count)
            .map(|_| decoder.u64())
            .collect::<Result<Vec<u64>>>()?;
        let set = decoder.u32s()?;
        let text = decoder.u32s()?;
        decoder.finish()?;
        if !keys.windows(2).all(|w| w[0] < w[1]) || !set.windows(2).all(|w| w[0] < w[1]) {
            return Err(Error::invalid(
                "sketch",
                "signatures or verification set not strictly increasing",
            ));
        }
        Ok(ClassicSketch {
            identity,
            keys: keys.into_boxed_slice(),
            set: set.into_boxed_slice(),
            text: text.into_boxed_slice(),
            empty: flags & 1 != 0,
            exact_only: flags & 2 != 0,
            part: TemplatePart::default(),
        })
    }
}

fn kind_name(kind: u8) -> &'static str {
    SketchKind::from_byte(kind).map_or("classic", SketchKind::name)
}

/// A document's text as a classic method reads it ([`Verifier::body`]).
#[derive(Debug, Clone)]
pub struct Body<'t> {
    /// The text without markup (with `strip_html`) and without its boilerplate: for the
    /// methods that read punctuation or lines (`sentences`), normalised with
    /// [`Normalizer::normalize_plain`].
    pub plain: Cow<'t, str>,
    /// `plain` normalised.
    pub normalized: String,
    /// Whether boilerplate left the text.
    pub stripped: bool,
}

/// The template keys of a classic sketch (the hook of [`Verifier::anchors`]).
fn classic_template_keys<M, const KIND: u8>(
    _method: &M,
    sketch: &ClassicSketch<KIND>,
    out: &mut Vec<u64>,
) -> bool {
    sketch.template_keys(out)
}

/// Builds sketches and verifies candidates the same way for every classic method: the
/// measure, the boilerplate learned in the corpus pass, and the template check.
#[derive(Debug, Clone)]
pub struct Verifier {
    mode: Verification,
    threshold: f64,
    shingler: Shingler,
    /// The template check (off with `max_df = off`).
    template: TemplateCheck,
    /// Boilerplate lines and edge pieces (`boilerplate_df`, `boilerplate_file`).
    boilerplate: Boilerplate,
}

impl Verifier {
    /// `verify` and `threshold`, the boilerplate and the template check from `params`
    /// ([`verify_params`]); `normalizer` keys the listed boilerplate lines.
    ///
    /// # Errors
    /// A value that does not parse, or a threshold outside `(0, 1]`.
    pub fn from_params(params: &Params, normalizer: &Normalizer) -> Result<Verifier> {
        let mode = params.get("verify")?.unwrap_or(Verification::Jaccard);
        let threshold = params.get("threshold")?.unwrap_or(match mode {
            Verification::Edit => DEFAULT_EDIT_THRESHOLD,
            _ => DEFAULT_THRESHOLD,
        });
        let mut verifier = Verifier::new(mode, threshold)?;
        let (max_df, line_df, listed) = boilerplate_params(params)?;
        verifier.boilerplate = Boilerplate::new(max_df, line_df, &listed, normalizer);
        verifier.template = TemplateCheck::from_params(params)?;
        Ok(verifier)
    }

    /// A verifier without boilerplate or template check.
    ///
    /// # Errors
    /// A threshold outside `(0, 1]`.
    pub fn new(mode: Verification, threshold: f64) -> Result<Verifier> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!("{threshold} (expected {})", crate::error::THRESHOLD_RANGE),
            ));
        }
        let shingler = ShinglerBuilder::new().tokenizer(Tokenizer::Auto).build()?;
        let mut off = Params::new();
        off.insert("max_df", "off");
        Ok(Verifier {
            mode,
            threshold,
            shingler,
            template: TemplateCheck::from_params(&off)?,
            boilerplate: Boilerplate::new(DfLimit::Off, DfLimit::Off, "", &Normalizer::default()),
        })
    }

    /// The verification.
    pub fn mode(&self) -> Verification {
        self.mode
    }

    /// Raw `text` as the method reads it: without markup and boilerplate (its lines are
    /// appended to `removed`), and normalised by `normalizer`. A text that is nothing but
    /// boilerplate is read whole.
    pub fn body<'t>(
        &self,
        normalizer: &Normalizer,
        text: &'t str,
        removed: &mut Vec<RemovedLine<'t>>,
    ) -> Body<'t> {
        let before = removed.len();
        let (plain, stripped) = self.boilerplate.strip_raw(normalizer, text, removed);
        let normalized = normalizer.normalize_plain(&plain);
        if stripped && normalized.trim().is_empty() {
            removed.truncate(before);
            let plain = normalizer.strip_html_if_enabled(text);
            let normalized = normalizer.normalize_plain(&plain);
            return Body {
                plain,
                normalized,
                stripped: false,
            };
        }
        Body {
            plain,
            normalized,
            stripped,
        }
    }

    /// The sketch of `raw` text read as `body` ([`Verifier::body`]), with signatures `keys`
    /// (any order, repeats allowed). A document without signatures but with text is
    /// exact-only (`exact_only` forces it), unless, with templates duplicate, it has a
    /// template set: it is then joined through its template keys alone.
    pub fn sketch<const KIND: u8>(
        &self,
        normalizer: &Normalizer,
        (raw, body): (&str, &Body<'_>),
        mut keys: Vec<u64>,
        exact_only: bool,
    ) -> ClassicSketch<KIND> {
        let normalized = body.normalized.as_str();
        keys.sort_unstable();
        keys.dedup();
        let empty = normalized.is_empty();
        let set = match self.mode {
            Verification::Jaccard => {
                let shingles = self.shingler.shingles(normalized);
                let mut set: Vec<u32> = (shingles.hashes().iter())
                    .map(|&h| (h >> 32) as u32)
                    .collect();
                set.dedup();
                set.into_boxed_slice()
            }
            _ => Box::default(),
        };
        let text: Box<[u32]> = match self.mode {
            Verification::Edit => (normalized.chars())
                .filter(|&c| c != ' ')
                .map(u32::from)
                .collect(),
            _ => Box::default(),
        };
        let length = match self.mode {
            Verification::Edit => text.len(),
            _ => normalized.chars().filter(|&c| c != ' ').count(),
        };
        let part =
            (self.template).part(normalizer, (raw, normalized, body.stripped), length, !empty);
        // With templates duplicate, a text with a template set but no signature, or too few
        // (a notice whose other sentences left as boilerplate), still meets its template's
        // fillings through its template keys.
        let anchored = self.template.templates == Templates::Duplicate && !part.is_empty();
        ClassicSketch {
            identity: hash128(normalized.as_bytes()),
            exact_only: !empty && (exact_only || keys.is_empty()) && !anchored,
            keys: if empty || exact_only {
                Box::default()
            } else {
                keys.into_boxed_slice()
            },
            set,
            text,
            empty,
            part,
        }
    }

    /// The similarity of two sketches under the verification (with `none`, the Jaccard of
    /// their signature sets).
    pub fn similarity<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> f64 {
        if a.empty || b.empty {
            return 0.0;
        }
        if a.identity == b.identity {
            return 1.0;
        }
        match self.mode {
            Verification::None => jaccard(&a.keys, &b.keys),
            Verification::Jaccard => jaccard(&a.set, &b.set),
            Verification::Edit => edit_similarity(&a.text, &b.text, 0.0).unwrap_or(0.0),
        }
    }

    /// The similarity of a candidate pair if it is a duplicate.
    pub fn verify<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> Option<f64> {
        self.verdict(a, b).similarity()
    }

    /// What a candidate pair is: with templates duplicate, two templated sides sharing their
    /// template are duplicates; otherwise the measure decides, and a pair it accepts with a
    /// templated side must pass the template check ([`TemplateCheck::agree`]), or it is two
    /// fillings of one template.
    pub fn verdict<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> Verdict {
        let (marked_a, marked_b) = (a.part.marked(), b.part.marked());
        if let Some(similarity) = self
            .template
            .same_template(marked_a, marked_b, self.threshold)
        {
            return Verdict::Duplicate(similarity);
        }
        let Some(similarity) = self.measure(a, b) else {
            return Verdict::Different;
        };
        let agree = (self.template).agree(
            (marked_a, a.part.text_slots()),
            (marked_b, b.part.text_slots()),
        );
        match agree || a.identity == b.identity {
            true => Verdict::Duplicate(similarity),
            false => Verdict::Fillings,
        }
    }

    /// The measure's answer for a candidate pair: its similarity if it reaches the
    /// threshold (every pair with `verify = none`).
    fn measure<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> Option<f64> {
        match self.mode {
            Verification::None => Some(self.similarity(a, b)),
            Verification::Jaccard => {
                let (small, large) = (a.set.len().min(b.set.len()), a.set.len().max(b.set.len()));
                if large > 0 && (small as f64) / (large as f64) < self.threshold - 1e-9 {
                    return None;
                }
                let similarity = self.similarity(a, b);
                (similarity >= self.threshold - 1e-9).then_some(similarity)
            }
            Verification::Edit => {
                if a.identity == b.identity {
                    return Some(1.0);
                }
                edit_similarity(&a.text, &b.text, self.threshold)
            }
        }
    }

    /// The threshold (0 with `verify = none`: a shared signature is enough).
    pub fn threshold(&self) -> f64 {
        match self.mode {
            Verification::None => 0.0,
            _ => self.threshold,
        }
    }

    /// The template-key hook of templates duplicate ([`ClassicSketch::template_keys`]), with
    /// the template check on; `None` otherwise: two fillings of one template are duplicates
    /// only when something pairs them, and their classic signatures differ.
    pub fn anchors<M, const KIND: u8>(&self) -> Option<RareHook<M>>
    where
        M: Method<Sketch = ClassicSketch<KIND>>,
    {
        let duplicate = self.template.templates == Templates::Duplicate;
        (self.template.is_on() && duplicate).then_some(classic_template_keys::<M, KIND>)
    }

    /// The join of a method whose documents sharing a key are candidates:
    /// [`Join::AnchoredKeys`] with templates duplicate ([`Verifier::anchors`]),
    /// [`Join::SymmetricKeys`] otherwise.
    pub fn keys_join<M, const KIND: u8>(&self) -> Join<M>
    where
        M: Method<Sketch = ClassicSketch<KIND>>,
    {
        match self.anchors() {
            Some(anchors) => Join::AnchoredKeys { anchors },
            None => Join::SymmetricKeys,
        }
    }

    /// Whether the corpus pass counts the documents' lines (boilerplate).
    pub fn learns_from_corpus(&self) -> bool {
        self.boilerplate.line_df() != DfLimit::Off
    }

    /// Appends the keys of raw `text`'s lines and edge pieces to the corpus features.
    pub fn corpus_features(&self, normalizer: &Normalizer, text: &str, features: &mut Vec<u64>) {
        self.boilerplate.corpus_lines(normalizer, text, features);
    }

    /// The floors of fractional limits.
    pub fn set_frequency_floors(&mut self, floors: DfFloors) {
        self.boilerplate.set_floors(floors);
        self.template.floors = floors;
    }

    /// Takes the boilerplate lines from the corpus pass.
    pub fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        if self.learns_from_corpus() {
            self.boilerplate.learn(corpus, false);
        }
    }

    /// The boilerplate limits learned (`max_df` is resolved by the engine).
    pub fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = self.boilerplate.learned_limits();
        limits.retain(|(name, _)| *name != "max_df");
        limits
    }

    /// With the template check on, the elements of the template sets in more than
    /// `max_df` documents are common.
    pub fn common_limit(&self, documents: u64) -> Option<u64> {
        (self.template)
            .is_on()
            .then(|| self.template.common_limit(documents))
            .flatten()
    }

    /// `verify`, `threshold`, the boilerplate and the template check, for the stats file.
    pub fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = vec![
            ("verify", Setting::Text(self.mode.name().to_owned())),
            ("threshold", Setting::Number(self.threshold)),
        ];
        settings.extend(boilerplate_settings(&self.boilerplate));
        settings.extend(self.template.settings());
        settings
    }
}

/// The [`crate::Method`] functions every classic method hands to its [`Verifier`] (the
/// field named): sketching through `sketch_noted`, the template check's marks, and the
/// verification.
macro_rules! verified_by {
    ($verifier:ident) => {
        fn sketch(&self, text: &str) -> Self::Sketch {
            self.sketch_noted(text, &mut $crate::SketchNotes::default())
        }

        fn set_frequency_floors(&mut self, floors: $crate::boilerplate::DfFloors) {
            self.$verifier.set_frequency_floors(floors);
        }

        /// The verifier's; the signatures do not depend on the marks, and every document is
        /// marked: a lexicon or top-N signature changes with a template's filling, so a
        /// template's fillings need not meet in one crowded bucket.
        fn common_marks(&self) -> Option<$crate::CommonMarks<Self>> {
            Some($crate::CommonMarks {
                limit: |method, documents| method.$verifier.common_limit(documents),
                features: |_, sketch| sketch.frequency_features(),
                mark: |_, sketch, is_common| sketch.mark_common(is_common),
                changes_keys: |_, _| false,
                crowds_only: false,
            })
        }

        fn similarity(&self, a: &Self::Sketch, b: &Self::Sketch) -> f64 {
            self.$verifier.similarity(a, b)
        }

        fn verify(&self, a: &Self::Sketch, b: &Self::Sketch) -> Option<f64> {
            self.$verifier.verify(a, b)
        }

        fn verdict(&self, a: &Self::Sketch, b: &Self::Sketch) -> $crate::Verdict {
            self.$verifier.verdict(a, b)
        }

        fn threshold(&self) -> f64 {
            self.$verifier.threshold()
        }
    };
}
pub(crate) use verified_by;

/// The corpus functions of a classic method that learns nothing but boilerplate from the
/// corpus (`segments`, `sentences`), handed to its [`Verifier`] with its normaliser.
macro_rules! learns_boilerplate_by {
    ($verifier:ident, $normalizer:ident) => {
        /// Boilerplate lines.
        fn learns_from_corpus(&self) -> bool {
            self.$verifier.learns_from_corpus()
        }

        fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
            (self.$verifier).corpus_features(&self.$normalizer, text, features);
        }

        fn learn(&mut self, corpus: &std::sync::Arc<$crate::corpus::CorpusStats>) {
            self.$verifier.learn(corpus);
        }

        fn learned_limits(&self) -> Vec<(&'static str, u64)> {
            self.$verifier.learned_limits()
        }
    };
}
pub(crate) use learns_boilerplate_by;

/// The classic methods' `verify` parameter (`supershingle` has it too).
pub const VERIFY_PARAM: ParamSpec = ParamSpec {
    name: "verify",
    kind: ParamKind::Choice(&["none", "jaccard", "edit"]),
    default: Some("jaccard"),
    help: "Confirm candidates with `jaccard` (shingle sets, at --threshold) or `edit` \
           (normalised edit similarity); `none`: a shared signature is a duplicate.",
    group: None,
};

/// `threshold` and `verify` (the same specs as minhash's `threshold` and the same kind and
/// default as simhash's `verify`: the CLI has one flag per name), then the boilerplate and
/// the template check's parameters.
pub fn verify_params() -> Vec<ParamSpec> {
    let shared = BOILERPLATE_PARAMS.iter().chain(TEMPLATE_PARAMS).copied();
    [THRESHOLD_PARAM, VERIFY_PARAM]
        .into_iter()
        .chain(shared)
        .collect()
}

/// The word features of `imatch` and `topn`: jieba words on Chinese, Unicode words
/// elsewhere.
///
/// # Errors
/// A `stopwords` value that does not parse.
pub fn word_shingler(params: &Params) -> Result<Shingler> {
    ShinglerBuilder::new()
        .tokenizer(Tokenizer::Word)
        .ngram(1)
        .remove_stopwords(params.flag("stopwords")?)
        .build()
}

/// A signature of `values` (sorted or not, as the caller decides) tagged with `tag`, so that
/// the signatures of different lexicons, segments or kinds never meet.
pub fn signature(tag: u64, values: &[u64]) -> u64 {
    let mut tagged = Vec::with_capacity(values.len() + 1);
    tagged.push(mix64(tag ^ 0x636c_6173_7369_6321));
    tagged.extend_from_slice(values);
    let hash = hash128_u64s(&tagged);
    (hash as u64) ^ ((hash >> 64) as u64)
}

/// Whether `c` is punctuation or a symbol for the sentence methods: not a letter, digit,
/// mark of a letter, or white space.
pub fn is_mark(c: char) -> bool {
    !(c.is_alphanumeric() || c.is_whitespace() || matches!(c, '\u{300}'..='\u{36F}'))
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestSketch = ClassicSketch<{ SketchKind::TopN.byte() }>;

    /// The sketch of `text` under `verifier` with signatures `keys`.
    fn sketch(verifier: &Verifier, text: &str, keys: Vec<u64>) -> TestSketch {
        let normalizer = Normalizer::default();
        let body = verifier.body(&normalizer, text, &mut Vec::new());
        verifier.sketch(&normalizer, (text, &body), keys, false)
    }

    #[test]
    fn sketches_round_trip_under_their_kind() {
        let verifier = Verifier::new(Verification::Jaccard, 0.4).unwrap();
        let sketch = sketch(&verifier, "今天天气很好 我们去公园散步", vec![3, 1, 3]);
        assert_eq!(sketch.keys(), &[1, 3]);
        let mut bytes = Vec::new();
        sketch.encode(&mut bytes);
        assert_eq!(bytes[3], SketchKind::TopN.byte());
        assert_eq!(TestSketch::decode(&bytes).unwrap(), sketch);
        let error = ClassicSketch::<{ SketchKind::IMatch.byte() }>::decode(&bytes).unwrap_err();
        assert!(error.to_string().contains("imatch"), "{error}");
    }

    #[test]
    fn verification_modes_decide() {
        let text = "the quick brown fox jumps over the lazy dog";
        let edited = "the quick brown fox jumped over the lazy dog";
        for mode in [
            Verification::None,
            Verification::Jaccard,
            Verification::Edit,
        ] {
            let verifier = Verifier::new(mode, 0.5).unwrap();
            let a = sketch(&verifier, text, vec![1, 2]);
            let b = sketch(&verifier, edited, vec![2, 3]);
            let similarity = verifier.verify(&a, &b).unwrap();
            assert!(
                (verifier.similarity(&a, &b) - similarity).abs() < 1e-12,
                "{mode:?}"
            );
            assert!(similarity < 1.0, "{mode:?}");
        }
        assert!(Verifier::new(Verification::Jaccard, 0.0).is_err());
        assert_ne!(signature(1, &[1, 2]), signature(2, &[1, 2]));
        assert!(is_mark('，') && !is_mark('中'));
    }
}
