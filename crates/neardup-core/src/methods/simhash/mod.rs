//! `simhash`: one 64-bit SimHash fingerprint per document from weighted features, candidates
//! within a length-aware Hamming distance found exactly by multi-index hashing
//! ([`Join::Hamming`]), and an optional verification of every candidate with a true measure.
//!
//! # Features and weights
//!
//! The features are the shingles of [`crate::tokenize`] after our normalisation, with their
//! repeats: by default `auto` (3-character shingles on Chinese, 5 on other scripts); the
//! classic word features are `tokenizer = word, ngram = 1` (jieba for Chinese). Each distinct
//! feature weighs its count (`weights = tf`) or its count times its inverse document frequency
//! (`weights = tfidf`): learned from the input corpus in a first pass (the smoothed
//! `ln((N + 1) / (df + 1)) + 1` of [`CorpusStats::idf`]), or read from `idf_file` (lines
//! `word idf`, jieba's format; single-token features only; unknown words get the median).
//! Features of the first line (a title) can weigh `title_weight` times more. Stopwords
//! (built-in English and Chinese lists, plus `stopwords_file`) and a jieba part-of-speech
//! filter (`pos`) leave features out.
//!
//! # Too few features
//!
//! A document with fewer than `min_features` distinct features (a greeting, a code, a
//! two-word title) has a fingerprint dominated by chance: it is compared by exact identity of
//! its features only ([`Sketch::exact_only`]), never by distance, and counted in the stats as
//! `exact_only_documents`.
//!
//! # Distance and verification
//!
//! `max_distance` is a number (`3`) or a rule by document length in characters after
//! normalisation (spaces not counted): `"<100:10,<500:6,3"` means distance 10 below 100
//! characters, 6 below 500, 3 otherwise; rules are read left to right, the first whose bound
//! exceeds the length applies, and the last item, a bare number, is the default. Two
//! documents are candidates when their distance is at most the smaller of their two limits.
//! With `verify = jaccard` (Jaccard of the shingle sets) or `verify = edit` (normalised edit
//! similarity of the normalised texts, for short texts), a candidate is a duplicate only when
//! the measure reaches `verify_threshold`: SimHash narrows the search, the measure decides.
//! Without verification the reported similarity is `1 - distance / 64`.
//!
//! # Templates
//!
//! A flood of notices made from one template (bank alerts, parcel notices, verification
//! codes) has fingerprints close together and verification sets that share most features:
//! every filling would pass. With `max_df` on (the default, as minhash's), the engine counts
//! in how many documents each element of the verification sets occurs and marks the common
//! ones ([`Method::mark_common`]); a set mostly common is *templated*. A pair with a
//! templated side must also agree on its rare elements (`rare_threshold`), and a pair of two
//! templated sides on its numbers in their places (`slots`); with `templates = duplicate`
//! two templated sides that share their template are duplicates whatever their filling
//! (the shared check: [`crate::methods::shared::template`]).
//!
//! # Stability
//!
//! Fingerprints are stable across releases for the same options (features and the bit votes
//! of [`crate::simhash`] are pinned by tests), so they may be stored.

mod registered;

use std::str::FromStr;
use std::sync::Arc;

use crate::boilerplate::{Boilerplate, DfFloors, DfLimit, RemovedLine};
use crate::hash::hash128_u64s;
pub use crate::length_rule::DistanceRule;
use crate::measure::{edit_similarity, jaccard};
use crate::method::{CorpusStats, SketchDecoder, SketchEncoder, SketchNotes};
use crate::methods::shared::params::{
    boilerplate_params, boilerplate_settings, normalize_options, normalize_settings,
    BOILERPLATE_PARAMS, NORMALIZE_PARAMS, SHINGLE_PARAMS, TEMPLATE_PARAMS,
};
use crate::methods::shared::template::{Marked, TemplateCheck, TemplatePart, Templates};
use crate::methods::shared::verify::Verification;
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::params::{param_value_by_choice, ParamKind, ParamSpec, Params, Registered, Setting};
use crate::simhash::simhash64;
use crate::sketch_kind::SketchKind;
use crate::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Join, Method, Result, Sketch, Verdict};

/// The kind of an encoded [`SimHashSketch`].
const SKETCH_KIND: SketchKind = SketchKind::SimHash;
/// The kind of an encoded [`SimHashSketch`] with the template check: the template set, its
/// common marks, the numbers of its text, their digit order, then the encoding of kind
/// [`SKETCH_KIND`].
const TEMPLATED_SKETCH_KIND: SketchKind = SketchKind::TemplatedSimHash;

/// The largest Hamming distance a rule may give (the exact index stays fast up to about
/// there; beyond it, unrelated 64-bit fingerprints start to match by chance).
pub const MAX_DISTANCE: u32 = 24;

impl FromStr for DistanceRule {
    type Err = Error;
    fn from_str(text: &str) -> Result<DistanceRule> {
        crate::length_rule::LengthRule::parse(text, "max_distance", "<100:10,<500:6,3", |item| {
            let value: u32 = item
                .parse()
                .map_err(|_| format!("{item:?} is not a distance (expected a whole number)"))?;
            if value > MAX_DISTANCE {
                return Err(format!(
                    "distance {value} is above the largest, {MAX_DISTANCE}"
                ));
            }
            Ok(value)
        })
    }
}

param_value_by_choice!(DistanceRule);

/// How features are weighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weights {
    /// Term frequency.
    #[default]
    Tf,
    /// Term frequency times inverse document frequency.
    TfIdf,
}

impl FromStr for Weights {
    type Err = Error;
    fn from_str(text: &str) -> Result<Weights> {
        match text.trim() {
            "tf" => Ok(Weights::Tf),
            "tfidf" => Ok(Weights::TfIdf),
            other => Err(Error::invalid(
                "weights",
                format!("{other:?} (expected tf or tfidf)"),
            )),
        }
    }
}

param_value_by_choice!(Weights);

/// Where IDF values come from.
#[derive(Debug, Clone)]
enum Idf {
    /// Learned from the corpus ([`Method::learn`]); 1 for every feature until then.
    Corpus(Option<Arc<CorpusStats>>),
    /// Read from a table; unknown features get `median`.
    Table {
        idf: Arc<foldhash::HashMap<u64, f64>>,
        median: f64,
        entries: usize,
    },
}

/// The sketch of [`SimHash`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHashSketch {
    fingerprint: u64,
    /// Characters of the normalised text, spaces not counted.
    length: u32,
    /// Distinct features.
    features: u32,
    exact_only: bool,
    identity: u128,
    /// For `verify = jaccard`: top 32 bits of the distinct shingle hashes, sorted.
    set: Box<[u32]>,
    /// For `verify = edit`: the normalised text's characters, spaces left out.
    text: Box<[u32]>,
    /// The template check's part ([`TemplatePart`]); empty with the check off.
    part: TemplatePart,
}

impl SimHashSketch {
    /// The 64-bit fingerprint.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
    /// Characters of the normalised text, spaces not counted (what `max_distance` rules
    /// read).
    pub fn length(&self) -> usize {
        self.length as usize
    }
    /// Distinct features.
    pub fn features(&self) -> usize {
        self.features as usize
    }
    fn marked(&self) -> Marked<'_> {
        self.part.marked()
    }
}

impl Sketch for SimHashSketch {
    fn is_empty(&self) -> bool {
        self.features == 0
    }
    fn exact_only(&self) -> bool {
        self.exact_only
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.part.encode(TEMPLATED_SKETCH_KIND, out);
        SketchEncoder::new(out, SKETCH_KIND.byte())
            .u64(self.fingerprint)
            .u32(self.length)
            .u32(self.features)
            .u8(u8::from(self.exact_only))
            .u128(self.identity)
            .u32s(&self.set)
            .u32s(&self.text);
    }
    fn decode(bytes: &[u8]) -> Result<SimHashSketch> {
        if bytes.get(3) == Some(&TEMPLATED_SKETCH_KIND.byte()) {
            return decode_templated(bytes);
        }
        let mut decoder = SketchDecoder::new(bytes, SKETCH_KIND.byte(), SKETCH_KIND.name())?;
        let fingerprint = decoder.u64()?;
        let length = decoder.u32()?;
        let features = decoder.u32()?;
        let exact_only = match decoder.u8()? {
            0 => false,
            1 => true,
            other => {
                return Err(Error::invalid(
                    "sketch",
                    format!("exact-only flag {other} (expected 0 or 1)"),
                ))
            }
        };
        let identity = decoder.u128()?;
        let set = decoder.u32s()?.into_boxed_slice();
        let text = decoder.u32s()?.into_boxed_slice();
        decoder.finish()?;
        if !set.windows(2).all(|w| w[0] < w[1]) {
            return Err(Error::invalid(
                "sketch",
                "verification set not strictly increasing",
            ));
        }
        Ok(SimHashSketch {
            fingerprint,
            length,
            features,
            exact_only,
            identity,
            set,
            text,
            part: TemplatePart::default(),
        })
    }
}

/// Decodes a sketch of kind [`TEMPLATED_SKETCH_KIND`]: its template part, then a sketch of
/// kind [`SKETCH_KIND`].
fn decode_templated(bytes: &[u8]) -> Result<SimHashSketch> {
    let (part, inner) = TemplatePart::decode(bytes, TEMPLATED_SKETCH_KIND, SKETCH_KIND)?;
    let mut sketch = SimHashSketch::decode(inner)?;
    sketch.part = part;
    Ok(sketch)
}

/// The default `max_distance` (see docs/evaluation.md for how it was chosen).
pub const DEFAULT_MAX_DISTANCE: &str = "<100:15,11";
pub use crate::methods::shared::template::TEMPLATE_MAX_CHARS;

/// The default `min_features`.
pub const DEFAULT_MIN_FEATURES: usize = 3;
/// The default `verify_threshold`.
pub const DEFAULT_VERIFY_THRESHOLD: f64 = 0.4;

/// The default shingle size of SimHash features: 2 characters on CJK text for `auto` (4
/// elsewhere) and `char`, single words or tokens for `word` and `token`. SimHash weighs many
/// small features better than few long ones: one edit changes fewer of them (see
/// docs/evaluation.md).
pub fn default_ngram(tokenizer: Tokenizer) -> usize {
    match tokenizer {
        Tokenizer::Auto | Tokenizer::Char => 2,
        Tokenizer::Word | Tokenizer::Token => 1,
    }
}

/// SimHash with exact Hamming candidates and optional verification.
#[derive(Debug, Clone)]
pub struct SimHash {
    normalizer: Normalizer,
    normalize: NormalizeOptions,
    shingler: Shingler,
    weights: Weights,
    idf: Idf,
    title_weight: f64,
    min_features: usize,
    rule: DistanceRule,
    verification: Verification,
    verify_threshold: f64,
    pos: Vec<String>,
    extra_stopwords: usize,
    /// The template check (off with `max_df = off`).
    template: TemplateCheck,
    /// Boilerplate lines and edge pieces, learned in the corpus pass (`boilerplate_df`).
    boilerplate: Boilerplate,
}

impl SimHash {
    /// The distance rule.
    pub fn rule(&self) -> &DistanceRule {
        &self.rule
    }

    /// The fingerprint of a sketch and its search radius under the distance rule (the hook
    /// of [`Join::Hamming`]); `None` for an empty or exact-only document.
    pub fn hamming_key(&self, sketch: &SimHashSketch) -> Option<(u64, u32)> {
        (!sketch.is_empty() && !sketch.exact_only)
            .then(|| (sketch.fingerprint, self.rule.at(sketch.length as usize)))
    }

    /// The verification.
    pub fn verification(&self) -> Verification {
        self.verification
    }

    /// Fewest distinct features of a document compared by distance.
    pub fn min_features(&self) -> usize {
        self.min_features
    }

    /// The weighted features of raw `text`: `(feature hash, weight)`, sorted by hash, and
    /// the normalised body (title and rest joined by a space) for length and verification.
    pub fn weighted_features(&self, text: &str) -> (Vec<(u64, f64)>, String) {
        let (mut features, normalized) = self.term_frequencies(text);
        self.apply_idf(&mut features);
        (features, normalized)
    }

    /// The features of raw `text` weighted by their counts (and the title weight), before
    /// IDF: sorted by hash; and the normalised body.
    fn term_frequencies(&self, text: &str) -> (Vec<(u64, f64)>, String) {
        self.term_frequencies_noted(text, &mut Vec::new())
    }

    /// [`SimHash::term_frequencies`] of the body without its boilerplate lines and edge
    /// pieces (appended to `removed`), or of the whole body when nothing else is left.
    fn term_frequencies_noted<'t>(
        &self,
        text: &'t str,
        removed: &mut Vec<RemovedLine<'t>>,
    ) -> (Vec<(u64, f64)>, String) {
        let (title, body) = match (self.title_weight != 1.0, text.split_once('\n')) {
            (true, Some((title, body))) => (Some(title), body),
            _ => (None, text),
        };
        let mut hashes: Vec<(u64, f64)> = Vec::new();
        let mut normalized = String::new();
        if let Some(title) = title {
            let title = self.normalizer.normalize(title);
            let weight = self.title_weight;
            hashes.extend((self.shingler.shingle_hashes(&title).into_iter()).map(|h| (h, weight)));
            normalized.push_str(&title);
            normalized.push(' ');
        }
        let before = removed.len();
        let mut body_text = self.boilerplate.strip(&self.normalizer, body, removed);
        let mut body_hashes = self.shingler.shingle_hashes(&body_text);
        if body_hashes.is_empty() && removed.len() > before {
            // Nothing but boilerplate: the document is compared on all of it.
            removed.truncate(before);
            body_text = self.normalizer.normalize(body);
            body_hashes = self.shingler.shingle_hashes(&body_text);
        }
        let body = body_text;
        hashes.extend(body_hashes.into_iter().map(|h| (h, 1.0)));
        normalized.push_str(&body);
        hashes.sort_unstable_by_key(|&(h, _)| h);
        let mut features: Vec<(u64, f64)> = Vec::with_capacity(hashes.len());
        for (hash, weight) in hashes {
            match features.last_mut() {
                Some(last) if last.0 == hash => last.1 += weight,
                _ => features.push((hash, weight)),
            }
        }
        (features, normalized)
    }

    /// Multiplies each weight by its feature's IDF under `weights = tfidf`.
    fn apply_idf(&self, features: &mut [(u64, f64)]) {
        if self.weights == Weights::TfIdf {
            for (hash, weight) in features {
                *weight *= self.idf_of(*hash);
            }
        }
    }

    fn idf_of(&self, feature: u64) -> f64 {
        match &self.idf {
            Idf::Corpus(Some(stats)) => stats.idf(feature),
            Idf::Corpus(None) => 1.0,
            Idf::Table { idf, median, .. } => idf.get(&feature).copied().unwrap_or(*median),
        }
    }

    /// The 64-bit fingerprint of raw `text`.
    pub fn fingerprint64(&self, text: &str) -> u64 {
        simhash64(&self.weighted_features(text).0)
    }

    /// The 128-bit fingerprint of raw `text` (the low half is [`SimHash::fingerprint64`]).
    pub fn fingerprint128(&self, text: &str) -> u128 {
        crate::simhash::simhash128(&self.weighted_features(text).0)
    }

    fn learns_idf(&self) -> bool {
        self.weights == Weights::TfIdf && matches!(self.idf, Idf::Corpus(_))
    }

    fn limit(&self, a: &SimHashSketch, b: &SimHashSketch) -> u32 {
        self.rule
            .at(a.length as usize)
            .min(self.rule.at(b.length as usize))
    }
}

impl Method for SimHash {
    type Sketch = SimHashSketch;

    fn name(&self) -> &'static str {
        "simhash"
    }

    fn sketch(&self, text: &str) -> SimHashSketch {
        self.sketch_noted(text, &mut SketchNotes::default())
    }

    /// Boilerplate lines and edge pieces leave the text before its features are counted.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> SimHashSketch {
        let before = notes.removed_lines.len();
        let (mut features, normalized) =
            self.term_frequencies_noted(text, &mut notes.removed_lines);
        let stripped = notes.removed_lines.len() > before;
        // The identity covers every feature and its weight before IDF (equal for two
        // documents with the same features whatever the corpus), so equal identities mean
        // equal fingerprints.
        let raw: Vec<u64> = (features.iter())
            .flat_map(|&(hash, weight)| [hash, weight.to_bits()])
            .collect();
        self.apply_idf(&mut features);
        let fingerprint = simhash64(&features);
        let set = match self.verification {
            Verification::Jaccard => {
                let mut set: Vec<u32> = features.iter().map(|&(h, _)| (h >> 32) as u32).collect();
                set.dedup();
                set.into_boxed_slice()
            }
            _ => Box::default(),
        };
        let chars: Vec<u32> = (normalized.chars())
            .filter(|&c| c != ' ')
            .map(u32::from)
            .collect();
        let length = chars.len() as u32;
        let part = (self.template).part(
            &self.normalizer,
            (text, &normalized, stripped),
            chars.len(),
            !features.is_empty(),
        );
        let text = match self.verification {
            Verification::Edit => chars.into_boxed_slice(),
            _ => Box::default(),
        };
        SimHashSketch {
            fingerprint,
            length,
            features: features.len() as u32,
            exact_only: !features.is_empty() && features.len() < self.min_features,
            identity: hash128_u64s(&raw),
            set,
            text,
            part,
        }
    }

    fn join(&self) -> Join<Self> {
        let distinct = self.template.is_on() && self.template.templates == Templates::Distinct;
        let duplicate = self.template.is_on() && self.template.templates == Templates::Duplicate;
        Join::Hamming {
            key: SimHash::hamming_key,
            max_radius: self.rule.max(),
            priority: distinct.then_some(priority_keys),
            anchors: duplicate.then_some(template_keys),
        }
    }

    fn keys(&self, _sketch: &SimHashSketch, _keys: &mut Vec<u64>) {}

    fn distance(&self, a: &SimHashSketch, b: &SimHashSketch) -> Option<u32> {
        Some((a.fingerprint ^ b.fingerprint).count_ones())
    }

    /// IDF weights from the input, and boilerplate lines.
    fn learns_from_corpus(&self) -> bool {
        self.learns_idf() || self.boilerplate.line_df() != DfLimit::Off
    }

    /// The keys of the document's lines (for boilerplate lines) and, for IDF, its features.
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        self.boilerplate
            .corpus_lines(&self.normalizer, text, features);
        if self.learns_idf() {
            let (weighted, _) = self.term_frequencies(text);
            features.extend(weighted.iter().map(|&(hash, _)| hash));
        }
    }

    fn set_frequency_floors(&mut self, floors: DfFloors) {
        self.boilerplate.set_floors(floors);
        self.template.floors = floors;
    }

    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        if self.boilerplate.line_df() != DfLimit::Off {
            self.boilerplate.learn(corpus, false);
        }
        if let Idf::Corpus(stats) = &mut self.idf {
            *stats = Some(Arc::clone(corpus));
        }
    }

    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = self.boilerplate.learned_limits();
        // Resolved by the engine against the distinct documents it sketched.
        limits.retain(|(name, _)| *name != "max_df");
        limits
    }

    /// With the template check on, the elements of the verification sets in more than
    /// `max_df` documents are common.
    fn common_marks(&self) -> Option<crate::CommonMarks<SimHash>> {
        Some(crate::CommonMarks {
            limit: |method, documents| {
                (method.template)
                    .is_on()
                    .then(|| method.template.common_limit(documents))
                    .flatten()
            },
            features: |_, sketch| &sketch.part.set,
            mark: |_, sketch, is_common| sketch.part.mark(is_common),
            changes_keys: |_, _| true,
            crowds_only: true,
        })
    }

    fn similarity(&self, a: &SimHashSketch, b: &SimHashSketch) -> f64 {
        match self.verification {
            Verification::None => {
                1.0 - f64::from((a.fingerprint ^ b.fingerprint).count_ones()) / 64.0
            }
            Verification::Jaccard => jaccard(&a.set, &b.set),
            Verification::Edit => edit_similarity(&a.text, &b.text, 0.0).unwrap_or(0.0),
        }
    }

    /// Within the pair's distance limit, then (when verifying) the measure at the threshold;
    /// the edit similarity stops as soon as the threshold is out of reach.
    fn verify(&self, a: &SimHashSketch, b: &SimHashSketch) -> Option<f64> {
        self.verdict(a, b).similarity()
    }

    /// With templates duplicate, two templated sides sharing their template are duplicates
    /// whatever their distance (the join's anchors pair them); otherwise the distance, the
    /// measure and the template check decide.
    fn verdict(&self, a: &SimHashSketch, b: &SimHashSketch) -> Verdict {
        if let Some(similarity) =
            (self.template).same_template(a.marked(), b.marked(), self.threshold())
        {
            return Verdict::Duplicate(similarity);
        }
        let distance = (a.fingerprint ^ b.fingerprint).count_ones();
        if distance > self.limit(a, b) {
            return Verdict::Different;
        }
        let similarity = match self.verification {
            Verification::None => Some(1.0 - f64::from(distance) / 64.0),
            Verification::Jaccard => {
                let similarity = jaccard(&a.set, &b.set);
                self.is_duplicate(similarity).then_some(similarity)
            }
            Verification::Edit => edit_similarity(&a.text, &b.text, self.verify_threshold),
        };
        let Some(similarity) = similarity else {
            return Verdict::Different;
        };
        let agree = (self.template).agree(
            (a.marked(), a.part.text_slots()),
            (b.marked(), b.part.text_slots()),
        );
        match agree {
            true => Verdict::Duplicate(similarity),
            false => Verdict::Fillings,
        }
    }

    /// The verification threshold, or without verification the similarity `1 - d / 64` of
    /// the largest distance the rule allows.
    fn threshold(&self) -> f64 {
        match self.verification {
            Verification::None => 1.0 - f64::from(self.rule.max()) / 64.0,
            _ => self.verify_threshold,
        }
    }
}

/// The template keys of a templated sketch (the anchors of [`Join::Hamming`]).
fn template_keys(_method: &SimHash, sketch: &SimHashSketch, out: &mut Vec<u64>) -> bool {
    sketch.part.template_keys(out)
}

/// The online priority keys of a templated sketch (the hook of [`Join::Hamming`]).
fn priority_keys(_method: &SimHash, sketch: &SimHashSketch, out: &mut Vec<u64>) -> bool {
    sketch.part.priority_keys(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommonMarking;

    fn method(params: &[(&str, &str)]) -> SimHash {
        let mut given = Params::new();
        for (name, value) in params {
            given.insert(*name, *value);
        }
        SimHash::from_params(&given).unwrap()
    }

    #[test]
    fn distance_rules_parse_and_apply() {
        let rule: DistanceRule = "<100:10,<500:6,3".parse().unwrap();
        assert_eq!(rule.at(0), 10);
        assert_eq!(rule.at(99), 10);
        assert_eq!(rule.at(100), 6);
        assert_eq!(rule.at(499), 6);
        assert_eq!(rule.at(500), 3);
        assert_eq!(rule.max(), 10);
        assert_eq!(rule.to_string(), "<100:10,<500:6,3");
        assert_eq!("7".parse::<DistanceRule>().unwrap(), DistanceRule::fixed(7));
        for bad in [
            "",
            "x",
            "<100:10",
            "<100:10,<50:6,3",
            "<a:1,3",
            "25",
            "<10:99,3",
            "-1",
        ] {
            let error = bad.parse::<DistanceRule>().unwrap_err();
            assert_eq!(error.parameter(), "max_distance", "{bad}");
            assert!(error.to_string().contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn near_copies_are_found_and_others_not() {
        let simhash = method(&[("max_distance", "8")]);
        let a = simhash.sketch(
            "国务院总理今天在北京主持召开常务会议，部署进一步扩大内需的措施，确定促进消费的政策。",
        );
        let b = simhash.sketch(
            "国务院总理今天在北京主持召开常务会议,部署进一步扩大内需的措施,确定促进消费的政策!",
        );
        let c = simhash
            .sketch("台风今天下午在沿海地区登陆，当地政府紧急转移了数万名群众，交通一度中断。");
        assert_eq!(a.identity(), b.identity(), "punctuation is normalised away");
        assert!(simhash.verify(&a, &b).is_some());
        assert!(simhash.verify(&a, &c).is_none());
        assert_eq!(simhash.distance(&a, &b), Some(0));
        assert_eq!(simhash.join().shape(), crate::JoinShape::Hamming);
        assert_eq!(simhash.hamming_key(&a), Some((a.fingerprint(), 8)));
    }

    #[test]
    fn the_pair_limit_is_the_smaller_of_the_two() {
        let simhash = method(&[("max_distance", "<10:12,0")]);
        let short = simhash.sketch("abc def ghi");
        let long = simhash.sketch("abc def ghi jkl mno pqr stu");
        assert!(short.length() < 10 && long.length() >= 10);
        assert_eq!(simhash.hamming_key(&short).unwrap().1, 12);
        assert_eq!(simhash.hamming_key(&long).unwrap().1, 0);
        let distance = simhash.distance(&short, &long).unwrap();
        assert!(distance > 0);
        assert!(simhash.verify(&short, &long).is_none());
    }

    #[test]
    fn few_features_mean_exact_only() {
        let simhash = method(&[("tokenizer", "word"), ("ngram", "1"), ("min_features", "3")]);
        let tiny = simhash.sketch("hello world");
        assert!(tiny.exact_only() && !tiny.is_empty());
        assert_eq!(simhash.hamming_key(&tiny), None);
        assert!(simhash.sketch("").is_empty());
        assert!(!simhash.sketch("one two three four").exact_only());
    }

    #[test]
    fn verification_decides() {
        let base = "the quick brown fox jumps over the lazy dog near the river bank today";
        let edited = "the quick brown fox jumped over the lazy dog near the river bank today";
        for verify in ["jaccard", "edit"] {
            let strict = method(&[
                ("max_distance", "24"),
                ("verify", verify),
                ("verify_threshold", "0.99"),
            ]);
            let loose = method(&[
                ("max_distance", "24"),
                ("verify", verify),
                ("verify_threshold", "0.3"),
            ]);
            let (a, b) = (strict.sketch(base), strict.sketch(edited));
            assert!(strict.verify(&a, &b).is_none(), "{verify}");
            let (a, b) = (loose.sketch(base), loose.sketch(edited));
            let similarity = loose.verify(&a, &b).unwrap();
            assert!(
                similarity > 0.3 && similarity < 1.0,
                "{verify}: {similarity}"
            );
            assert!((loose.similarity(&a, &b) - similarity).abs() < 1e-9);
        }
    }

    #[test]
    fn tfidf_learns_from_the_corpus_and_reads_tables() {
        let mut simhash = method(&[("weights", "tfidf")]);
        assert!(simhash.learns_from_corpus());
        let texts = ["alpha beta gamma", "alpha beta delta", "alpha epsilon zeta"];
        let mut stats = CorpusStats::default();
        for text in texts {
            let mut features = Vec::new();
            simhash.corpus_features(text, &mut features);
            stats.add_document(&features);
        }
        let before = simhash.fingerprint64(texts[0]);
        assert_eq!(stats.documents(), 3);
        simhash.learn(&Arc::new(stats));
        let (weighted, _) = simhash.weighted_features(texts[0]);
        assert!(weighted.iter().any(|&(_, w)| w > 1.0));
        let _ = before;

        let table = method(&[
            ("weights", "tfidf"),
            ("tokenizer", "word"),
            ("ngram", "1"),
            ("idf_file", "# comment\nalpha 0.5\nbeta 9\n\ngamma 3\n"),
        ]);
        assert!(!table.learns_idf());
        let (weighted, _) = table.weighted_features("alpha beta unknown");
        let mut weights: Vec<f64> = weighted.iter().map(|w| w.1).collect();
        weights.sort_by(f64::total_cmp);
        assert_eq!(weights, vec![0.5, 3.0, 9.0], "unknown words get the median");

        let error = SimHash::from_params(
            &Params::new()
                .set("weights", "tfidf")
                .set("tokenizer", "word")
                .set("ngram", "1")
                .set("idf_file", "alpha 1\nbeta x\n"),
        )
        .unwrap_err();
        assert_eq!(error.parameter(), "idf_file");
        assert!(error.to_string().contains("line 2"), "{error}");
        let error = SimHash::from_params(&Params::new().set("idf_file", "alpha 1\n")).unwrap_err();
        assert_eq!(error.parameter(), "idf_file");
    }

    #[test]
    fn title_stopwords_and_pos_change_features() {
        let text = "Breaking news today\nthe markets rose and the bonds fell in quiet trading";
        let plain = method(&[("tokenizer", "word"), ("ngram", "1")]);
        let title = method(&[("tokenizer", "word"), ("ngram", "1"), ("title_weight", "3")]);
        let max = |m: &SimHash| {
            (m.weighted_features(text).0.iter())
                .map(|w| w.1)
                .fold(0.0, f64::max)
        };
        assert_eq!(max(&plain), 2.0, "`the` twice");
        assert_eq!(max(&title), 3.0);
        let stop = method(&[
            ("tokenizer", "word"),
            ("ngram", "1"),
            ("stopwords_file", "markets\nBonds\n"),
        ]);
        let count = |m: &SimHash| m.weighted_features(text).0.len();
        assert!(
            count(&stop) < count(&plain) - 3,
            "built-in and user stopwords"
        );
        let nouns = method(&[("tokenizer", "word"), ("ngram", "1"), ("pos", "n")]);
        let chinese = "国务院总理今天在北京主持召开常务会议";
        assert!(
            nouns.weighted_features(chinese).0.len() < plain.weighted_features(chinese).0.len()
        );
        let error = SimHash::from_params(&Params::new().set("pos", "n")).unwrap_err();
        assert_eq!(error.parameter(), "pos");
    }

    #[test]
    fn sketches_round_trip() {
        for verify in ["none", "jaccard", "edit"] {
            let simhash = method(&[("verify", verify)]);
            let sketch = simhash.sketch("今天天气很好，我们去公园散步吧。");
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(SimHashSketch::decode(&bytes).unwrap(), sketch);
            assert!(SimHashSketch::decode(&bytes[..bytes.len() - 1]).is_err());
        }
    }

    #[test]
    fn template_sketches_round_trip_and_bad_bytes_are_refused() {
        let notice = "【京东】您的验证码是612782，6分钟内有效，请勿泄露给他人。";
        for params in [&[][..], &[("max_df", "off")][..], &[("slots", "off")][..]] {
            let sketch = method(params).sketch(notice);
            assert_eq!(sketch.part.set.is_empty(), params == [("max_df", "off")]);
            assert_eq!(sketch.part.slots.is_empty(), !params.is_empty());
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(SimHashSketch::decode(&bytes).unwrap(), sketch);
            for cut in 1..bytes.len() {
                assert!(
                    SimHashSketch::decode(&bytes[..cut]).is_err(),
                    "{params:?} {cut}"
                );
            }
        }
        // Marks travel with the sketch (Spark verifies on another machine than it marked).
        let simhash = method(&[]);
        let mut marked = simhash.sketch(notice);
        simhash.mark_common(&mut marked, &|value| value % 2 == 0);
        let mut bytes = Vec::new();
        marked.encode(&mut bytes);
        assert_eq!(SimHashSketch::decode(&bytes).unwrap(), marked);
        // Slots twice: a templated sketch around a templated sketch.
        let mut bytes = Vec::new();
        let sketch = method(&[]).sketch(notice);
        sketch.encode(&mut bytes);
        let mut twice = Vec::new();
        SketchEncoder::new(&mut twice, TEMPLATED_SKETCH_KIND.byte())
            .u32s(&[1, 2])
            .u32s(&[])
            .u32s(&[])
            .u32s(&[0]);
        twice.extend_from_slice(&bytes);
        assert!(SimHashSketch::decode(&twice).is_err());
    }

    /// The sketches of `texts`, marked as the engine marks them (template elements in more
    /// than `limit` of them are common).
    fn marked(simhash: &SimHash, texts: &[String], limit: usize) -> Vec<SimHashSketch> {
        let mut sketches: Vec<SimHashSketch> = texts.iter().map(|t| simhash.sketch(t)).collect();
        crate::testing::mark_by_count(simhash, &mut sketches, limit);
        sketches
    }

    #[test]
    fn the_template_check_keeps_fillings_apart_and_copies_together() {
        // A crowd of exam notices: a name, a city and five small numbers each.
        let mut texts: Vec<String> = (0..200).map(crate::testing::exam_notice).collect();
        // A copy of notice 0 with a space every 20 characters, and one of notice 1 cut short. (Prefixes and
        // suffixes are the boilerplate's: learned in the corpus pass, which this test has not.)
        let spaced: String = (texts[0].chars().enumerate())
            .flat_map(|(i, c)| [Some(c), (i % 20 == 19).then_some(' ')])
            .flatten()
            .collect();
        texts.push(spaced.replace("，", ", "));
        texts.push(texts[1].replace("提前三十分钟到达。", ""));
        for (simhash, checked) in [(method(&[]), true), (method(&[("max_df", "off")]), false)] {
            let sketches = marked(&simhash, &texts, 20);
            assert!(sketches[0].marked().templated() == checked);
            // The copies are found with the check and without it.
            assert!(simhash.verify(&sketches[0], &sketches[200]).is_some());
            assert!(simhash.verify(&sketches[1], &sketches[201]).is_some());
            // Fillings within the distance and the Jaccard threshold: refused by the check
            // only.
            let fillings = (1..200)
                .filter(|&i| {
                    let distance = simhash.distance(&sketches[0], &sketches[i]).unwrap();
                    distance <= simhash.limit(&sketches[0], &sketches[i])
                        && simhash.similarity(&sketches[0], &sketches[i]) >= 0.4
                })
                .collect::<Vec<_>>();
            assert!(fillings.len() > 10, "{}", fillings.len());
            let passed = (fillings.iter())
                .filter(|&&i| simhash.verify(&sketches[0], &sketches[i]).is_some())
                .count();
            match checked {
                true => assert_eq!(passed, 0),
                false => assert_eq!(passed, fillings.len()),
            }
        }
    }

    #[test]
    fn templates_duplicate_joins_fillings() {
        let simhash = method(&[("templates", "duplicate")]);
        let texts: Vec<String> = (0..100)
            .map(|i| {
                format!(
                    "【京东】您的验证码是{}，{}分钟内有效，请勿泄露给他人。",
                    100_000 + i * 7919,
                    1 + i % 9
                )
            })
            .collect();
        let sketches = marked(&simhash, &texts, 20);
        assert!(sketches[0].marked().templated());
        assert!(simhash.verify(&sketches[0], &sketches[1]).is_some());
        let distinct = marked(&method(&[]), &texts, 20);
        assert!(method(&[]).verify(&distinct[0], &distinct[1]).is_none());
    }

    #[test]
    fn fingerprints_are_pinned() {
        // Stored fingerprints outlive releases: for the same options these values must never
        // change (the options are spelled out, so a change of defaults does not hide here).
        let text = "国务院总理今天在北京主持召开常务会议，部署进一步扩大内需的措施。The State Council met.";
        for (options, pinned_64, pinned_128) in PINNED {
            let mut params = Params::new();
            for (name, value) in *options {
                params.insert(*name, *value);
            }
            let simhash = SimHash::from_params(&params).unwrap();
            assert_eq!(
                format!("{:016x}", simhash.fingerprint64(text)),
                *pinned_64,
                "{options:?}"
            );
            assert_eq!(
                format!("{:032x}", simhash.fingerprint128(text)),
                *pinned_128,
                "{options:?}"
            );
        }
    }

    type Pinned = (
        &'static [(&'static str, &'static str)],
        &'static str,
        &'static str,
    );
    const PINNED: &[Pinned] = &[
        (
            &[("tokenizer", "auto"), ("ngram", "2"), ("weights", "tf")],
            "268f3c8af6f36408",
            "4ae858ac888480f8268f3c8af6f36408",
        ),
        (
            &[("tokenizer", "word"), ("ngram", "1"), ("weights", "tf")],
            "f5cec3a15f75e6d9",
            "fb2fc66bcf847c1df5cec3a15f75e6d9",
        ),
        (
            &[("tokenizer", "auto"), ("ngram", "3"), ("title_weight", "2")],
            "932109f06650c807",
            "ce088436494ea5e0932109f06650c807",
        ),
    ];
}
