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
//! # Stability
//!
//! Fingerprints are stable across releases for the same options (features and the bit votes
//! of [`crate::simhash`] are pinned by tests), so they may be stored.

use std::str::FromStr;
use std::sync::Arc;

use crate::hash::hash128_u64s;
pub use crate::length_rule::DistanceRule;
use crate::measure::{edit_similarity, jaccard};
use crate::method::{CorpusStats, SketchDecoder, SketchEncoder};
use crate::methods::shared::params::{
    normalize_options, normalize_settings, NORMALIZE_PARAMS, SHINGLE_PARAMS,
};
use crate::methods::shared::verify::Verification;
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::params::{param_value_by_choice, ParamKind, ParamSpec, Params, Registered, Setting};
use crate::simhash::simhash64;
use crate::sketch_kind::SketchKind;
use crate::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Join, Method, Result, Sketch};

/// The kind of an encoded [`SimHashSketch`].
const SKETCH_KIND: SketchKind = SketchKind::SimHash;

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
        })
    }
}

/// The default `max_distance` (see docs/evaluation.md for how it was chosen).
pub const DEFAULT_MAX_DISTANCE: &str = "<100:15,11";
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
        let body = self.normalizer.normalize(body);
        hashes.extend((self.shingler.shingle_hashes(&body).into_iter()).map(|h| (h, 1.0)));
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
        let (mut features, normalized) = self.term_frequencies(text);
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
        }
    }

    fn join(&self) -> Join<Self> {
        Join::Hamming {
            key: SimHash::hamming_key,
        }
    }

    fn keys(&self, _sketch: &SimHashSketch, _keys: &mut Vec<u64>) {}

    fn max_radius(&self) -> u32 {
        self.rule.max()
    }

    fn distance(&self, a: &SimHashSketch, b: &SimHashSketch) -> Option<u32> {
        Some((a.fingerprint ^ b.fingerprint).count_ones())
    }

    fn learns_from_corpus(&self) -> bool {
        self.weights == Weights::TfIdf && matches!(self.idf, Idf::Corpus(_))
    }

    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        let (weighted, _) = self.term_frequencies(text);
        features.extend(weighted.iter().map(|&(hash, _)| hash));
    }

    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        if let Idf::Corpus(stats) = &mut self.idf {
            *stats = Some(Arc::clone(corpus));
        }
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
        let distance = (a.fingerprint ^ b.fingerprint).count_ones();
        if distance > self.limit(a, b) {
            return None;
        }
        match self.verification {
            Verification::None => Some(1.0 - f64::from(distance) / 64.0),
            Verification::Jaccard => {
                let similarity = jaccard(&a.set, &b.set);
                self.is_duplicate(similarity).then_some(similarity)
            }
            Verification::Edit => edit_similarity(&a.text, &b.text, self.verify_threshold),
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

/// Parses an IDF table: `word idf` per line (whitespace between, jieba's `idf.txt` format),
/// blank lines and lines starting with `#` skipped. Words are normalised like text.
fn parse_idf_table(
    text: &str,
    normalizer: &Normalizer,
) -> Result<(foldhash::HashMap<u64, f64>, f64)> {
    let mut table = foldhash::HashMap::default();
    let mut values = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| {
            Error::invalid_owned(
                "idf_file".into(),
                format!(
                    "line {}: {what} in {line:?} (expected `word idf`)",
                    number + 1
                ),
            )
        };
        let (word, value) = line
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| bad("no IDF value"))?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| bad("not a non-negative number"))?;
        let word = normalizer.normalize(word.trim());
        table.insert(Shingler::single_token_shingle(word.trim()), value);
        values.push(value);
    }
    if values.is_empty() {
        return Err(Error::invalid("idf_file", "no `word idf` line"));
    }
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    Ok((table, median))
}

impl Registered for SimHash {
    const NAME: &'static str = "simhash";
    const ABOUT: &'static str =
        "SimHash fingerprints, exact Hamming search with length-aware distances";

    fn params() -> Vec<ParamSpec> {
        let own = [
            ParamSpec {
                name: "max_distance",
                kind: ParamKind::Text,
                default: Some("<100:15,11"),
                help: "Largest Hamming distance of a duplicate: a number, or a rule by length \
                       in characters such as \"<100:10,<500:6,3\" (a pair takes the smaller \
                       of its two limits).",
                group: None,
            },
            ParamSpec {
                name: "verify",
                kind: ParamKind::Choice(&["none", "jaccard", "edit"]),
                default: Some("jaccard"),
                help: "Confirm candidates with `jaccard` (shingle sets) or `edit` (normalised \
                       edit similarity, for short texts); `none` lets the distance decide.",
                group: None,
            },
            ParamSpec {
                name: "verify_threshold",
                kind: ParamKind::Number,
                default: Some("0.4"),
                help: "Similarity a verified candidate must reach.",
                group: None,
            },
            ParamSpec {
                name: "weights",
                kind: ParamKind::Choice(&["tf", "tfidf"]),
                default: Some("tf"),
                help: "Feature weights: `tf` (counts) or `tfidf` (counts x IDF learned from \
                       the input, or from --idf-file).",
                group: None,
            },
            ParamSpec {
                name: "idf_file",
                kind: ParamKind::File,
                default: None,
                help: "IDF table, `word idf` per line (jieba's idf.txt format), for `tfidf` \
                       with one-token features (--tokenizer word --ngram 1).",
                group: None,
            },
            ParamSpec {
                name: "title_weight",
                kind: ParamKind::Number,
                default: Some("1"),
                help: "Weight factor of the first line's features (a title).",
                group: None,
            },
            ParamSpec {
                name: "min_features",
                kind: ParamKind::Count,
                default: Some("3"),
                help: "Documents with fewer distinct features are matched as exact copies \
                       only.",
                group: None,
            },
            ParamSpec {
                name: "pos",
                kind: ParamKind::Text,
                default: None,
                help: "Keep only Chinese words with these jieba part-of-speech tags, e.g. \
                       \"n,v,vn\" (prefixes: `n` keeps nr, ns, ...); needs --tokenizer word.",
                group: Some("Shingles"),
            },
            ParamSpec {
                name: "stopwords_file",
                kind: ParamKind::File,
                default: None,
                help: "More stopwords, one per line (implies --stopwords).",
                group: Some("Shingles"),
            },
        ];
        let shared = SHINGLE_PARAMS.iter().chain(NORMALIZE_PARAMS);
        own.iter().chain(shared).copied().collect()
    }

    fn from_params(params: &Params) -> Result<SimHash> {
        let normalize = normalize_options(params)?;
        let normalizer = Normalizer::new(normalize.clone());
        let rule: DistanceRule = match params.raw("max_distance") {
            Some(text) => text.parse()?,
            None => DEFAULT_MAX_DISTANCE.parse()?,
        };
        let verification: Verification = params.get("verify")?.unwrap_or_default();
        let verify_threshold = params
            .get("verify_threshold")?
            .unwrap_or(DEFAULT_VERIFY_THRESHOLD);
        if !(verify_threshold > 0.0 && verify_threshold <= 1.0) {
            return Err(Error::invalid(
                "verify_threshold",
                format!("{verify_threshold} (expected 0 < t <= 1)"),
            ));
        }
        let title_weight: f64 = params.get("title_weight")?.unwrap_or(1.0);
        if !(title_weight.is_finite() && title_weight > 0.0) {
            return Err(Error::invalid(
                "title_weight",
                format!("{title_weight} (expected a number above 0)"),
            ));
        }
        let pos: Vec<String> = (params.raw("pos").unwrap_or(""))
            .split(',')
            .map(|tag| tag.trim().to_owned())
            .filter(|tag| !tag.is_empty())
            .collect();
        let extra: Vec<String> = (params.raw("stopwords_file").unwrap_or(""))
            .lines()
            .map(|word| normalizer.normalize(word.trim()).trim().to_owned())
            .filter(|word| !word.is_empty())
            .collect();
        let extra_stopwords = extra.len();
        let mut shingler = ShinglerBuilder::new()
            .remove_stopwords(params.flag("stopwords")? || params.raw("stopwords_file").is_some())
            .extra_stopwords(extra)
            .pos_filter(pos.clone());
        let tokenizer: Tokenizer = params.get("tokenizer")?.unwrap_or_default();
        shingler = shingler
            .tokenizer(tokenizer)
            .ngram(params.get("ngram")?.unwrap_or(default_ngram(tokenizer)));
        if let Some(ngram) = params.get("latin_ngram")? {
            shingler = shingler.latin_ngram(ngram);
        }
        let shingler = shingler.build()?;
        let weights: Weights = params.get("weights")?.unwrap_or_default();
        let idf = match params.raw("idf_file") {
            None => Idf::Corpus(None),
            Some(text) => {
                if weights != Weights::TfIdf {
                    return Err(Error::invalid(
                        "idf_file",
                        "given without --weights tfidf (an IDF table weighs nothing with tf)",
                    ));
                }
                if shingler.tokenizer() == Tokenizer::Auto || shingler.ngram() != 1 {
                    return Err(Error::invalid(
                        "idf_file",
                        "an IDF table names words: it needs one-token features (--tokenizer \
                         word, token or char with --ngram 1)",
                    ));
                }
                let (table, median) = parse_idf_table(text, &normalizer)?;
                Idf::Table {
                    entries: table.len(),
                    idf: Arc::new(table),
                    median,
                }
            }
        };
        Ok(SimHash {
            normalizer,
            normalize,
            shingler,
            weights,
            idf,
            title_weight,
            min_features: params.get("min_features")?.unwrap_or(DEFAULT_MIN_FEATURES),
            rule,
            verification,
            verify_threshold,
            pos,
            extra_stopwords,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let shingler = &self.shingler;
        let mut settings = vec![
            ("max_distance", Setting::Text(self.rule.to_string())),
            ("verify", Setting::Text(self.verification.name().to_owned())),
            ("verify_threshold", Setting::Number(self.verify_threshold)),
            (
                "weights",
                Setting::Text(
                    match self.weights {
                        Weights::Tf => "tf",
                        Weights::TfIdf => "tfidf",
                    }
                    .to_owned(),
                ),
            ),
        ];
        if let Idf::Table { entries, .. } = &self.idf {
            settings.push(("idf_file", Setting::Text(format!("{entries} entries"))));
        }
        settings.extend([
            ("title_weight", Setting::Number(self.title_weight)),
            ("min_features", Setting::Count(self.min_features as u64)),
            (
                "tokenizer",
                Setting::Text(shingler.tokenizer().name().to_owned()),
            ),
            ("ngram", Setting::Count(shingler.ngram() as u64)),
        ]);
        if shingler.tokenizer() == Tokenizer::Auto {
            settings.push(("latin_ngram", Setting::Count(shingler.latin_ngram() as u64)));
        }
        settings.push(("stopwords", Setting::Flag(shingler.removes_stopwords())));
        if self.extra_stopwords > 0 {
            settings.push((
                "stopwords_file",
                Setting::Text(format!("{} words", self.extra_stopwords)),
            ));
        }
        if !self.pos.is_empty() {
            settings.push(("pos", Setting::Text(self.pos.join(","))));
        }
        settings.extend(normalize_settings(&self.normalize));
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!table.learns_from_corpus());
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
