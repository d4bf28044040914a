//! `join` and `ngram`: the short-text methods (chat messages, titles, posts, ads).
//!
//! Both compare documents with a real measure on the normalised text: the edit similarity of
//! its characters (`1 - distance / longer length`, or at most `max_edits` edits), or the
//! Jaccard, cosine or containment of its shingle set (character bigrams on Chinese, 4-grams
//! elsewhere, by default). They differ in how candidates are found:
//!
//! - `join` is an exact similarity self-join: every pair at or above the threshold is found
//!   and none below is reported. Set measures run PPJoin (token order by rarity, size,
//!   prefix and positional filters, a verification that stops once the threshold is out of
//!   reach); edit distance runs Pass-Join (a string within `tau` edits contains one of the
//!   other's `tau + 1` segments; a bit-parallel verification with early exit).
//! - `ngram` is the published all-m-gram inverted index, as written: every `bucket_ngram`-gram
//!   of the characters is a key, each bucket is walked greedily against its representatives,
//!   and the pairs are merged by id. Buckets over the bucket cap keep their first members and
//!   count the rest. It stays as the reference the join is measured against: it misses pairs
//!   whose only shared substrings are in capped buckets, and a document similar to two
//!   representatives of a bucket is paired with the first only.
//!
//! Characters for the edit measure are those of the normalised text, with spaces kept only
//! between two non-CJK characters (one space for a run), so that punctuation turned into
//! spaces costs nothing on Chinese and words stay apart in English.

use crate::length_rule::ThresholdRule;
use std::sync::Arc;

use crate::boilerplate::{Boilerplate, DfFloors, DfLimit, RemovedLine};
use crate::method::{CorpusStats, SketchNotes};
use crate::methods::shared::params::{
    boilerplate_params, boilerplate_settings, BOILERPLATE_PARAMS, TEMPLATE_PARAMS,
};
use crate::methods::shared::template::{TemplateCheck, TemplatePart, Templates};

use crate::hash::{hash128, hash128_u64s};
use crate::measure::{containment, cosine, edit_distance, edit_distance_within, jaccard};
use crate::method::{EditLimit, SketchDecoder, SketchEncoder};
use crate::methods::shared::params::{
    normalize_options, normalize_settings, MEASURE_PARAM, NORMALIZE_PARAMS, SHINGLE_PARAMS,
    THRESHOLD_PARAM,
};
use crate::normalize::Normalizer;
use crate::params::{ParamKind, ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::{is_cjk, Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Join, Method, RareJoin, Result, Sketch, Verdict, PRIORITY_KEY};

/// The kind of an encoded [`ShortSketch`].
const SKETCH_KIND: SketchKind = SketchKind::ShortText;

/// The kind of an encoded [`ShortSketch`] with a template part.
const TEMPLATED_SKETCH_KIND: SketchKind = SketchKind::TemplatedShortText;

/// The default threshold of `join` and `ngram` with a set measure (chosen on `neardup synth`
/// edits of THUCNews headlines: docs/evaluation.md).
pub const DEFAULT_SET_THRESHOLD: f64 = 0.5;

/// The default threshold of `join` and `ngram` with the edit measure (the same data).
pub const DEFAULT_EDIT_THRESHOLD: f64 = 0.7;

/// The least template containment under the edit measure ([`ShortText::template_threshold`]).
pub const MIN_TEMPLATE_CONTAINMENT: f64 = 0.4;

/// The default key length of `ngram`, in characters (the published choice for Chinese).
pub const DEFAULT_BUCKET_NGRAM: u32 = 4;

pub use crate::methods::shared::params::ShortMeasure;

/// The sketch of `join` and `ngram`: what the measure and the candidate search read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortSketch {
    identity: u128,
    /// The characters (edit measure, and `ngram`'s keys).
    chars: Box<[u32]>,
    /// The sorted, distinct shingle hashes (set measures).
    tokens: Box<[u64]>,
    /// The template check's part; empty with the check off or on a long text.
    part: TemplatePart,
}

impl ShortSketch {
    /// The characters the edit measure and the n-gram keys read.
    pub fn chars(&self) -> &[u32] {
        &self.chars
    }
    /// The sorted, distinct shingle hashes the set measures read.
    pub fn tokens(&self) -> &[u64] {
        &self.tokens
    }
}

impl Sketch for ShortSketch {
    fn is_empty(&self) -> bool {
        self.chars.is_empty() && self.tokens.is_empty()
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.part.encode(TEMPLATED_SKETCH_KIND, out);
        let mut encoder = SketchEncoder::new(out, SKETCH_KIND.byte());
        encoder.u128(self.identity).u32s(&self.chars);
        encoder.u32(self.tokens.len() as u32);
        for &token in self.tokens.iter() {
            encoder.u64(token);
        }
    }
    fn decode(bytes: &[u8]) -> Result<ShortSketch> {
        if bytes.get(3) == Some(&TEMPLATED_SKETCH_KIND.byte()) {
            let (part, inner) = TemplatePart::decode(bytes, TEMPLATED_SKETCH_KIND, SKETCH_KIND)?;
            let mut sketch = ShortSketch::decode(inner)?;
            sketch.part = part;
            return Ok(sketch);
        }
        let mut decoder = SketchDecoder::new(bytes, SKETCH_KIND.byte(), SKETCH_KIND.name())?;
        let identity = decoder.u128()?;
        let chars = decoder.u32s()?;
        let count = decoder.u32()? as usize;
        if count > bytes.len() / 8 {
            return Err(Error::invalid(
                "sketch",
                format!("{count} tokens in {} bytes", bytes.len()),
            ));
        }
        let tokens = (0..count)
            .map(|_| decoder.u64())
            .collect::<Result<Vec<u64>>>()?;
        decoder.finish()?;
        if tokens.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::invalid(
                "sketch",
                "tokens are not sorted and distinct",
            ));
        }
        Ok(ShortSketch {
            identity,
            chars: chars.into_boxed_slice(),
            tokens: tokens.into_boxed_slice(),
            part: TemplatePart::default(),
        })
    }
}

/// The characters of normalised text that the edit measure compares: spaces only between two
/// non-CJK characters, one per run.
pub fn edit_chars(normalized: &str) -> Vec<u32> {
    let mut chars = Vec::with_capacity(normalized.len());
    let mut pending_space = false;
    let mut previous: Option<char> = None;
    for c in normalized.chars() {
        if c.is_whitespace() {
            pending_space = previous.is_some();
            continue;
        }
        if pending_space && previous.is_some_and(|p| !is_cjk(p)) && !is_cjk(c) {
            chars.push(u32::from(' '));
        }
        pending_space = false;
        chars.push(u32::from(c));
        previous = Some(c);
    }
    chars
}

/// The `k` even segments of a sequence of `len` items, as `(start, length)`: the first ones
/// shorter by one when `len` is not a multiple of `k` (Pass-Join's even partition).
fn segments(len: usize, k: usize) -> impl Iterator<Item = (usize, usize)> {
    let base = len / k;
    let shorter = k - len % k;
    (0..k).map(move |i| {
        if i < shorter {
            (i * base, base)
        } else {
            (shorter * base + (i - shorter) * (base + 1), base + 1)
        }
    })
}

/// The key of segment `i` (`u32::MAX`: the whole of a text too short to cut) of a text of
/// `len` characters.
fn segment_key(len: usize, i: u32, segment: &[u32]) -> u64 {
    let mut bytes = Vec::with_capacity(8 + 4 * segment.len());
    bytes.extend_from_slice(&(len as u32).to_le_bytes());
    bytes.extend_from_slice(&i.to_le_bytes());
    for c in segment {
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    crate::hash::hash64(&bytes)
}

/// The edit similarity of a pair at `distance` whose longer side has `longer` items.
fn edit_similarity(distance: usize, longer: usize) -> f64 {
    if longer == 0 {
        1.0
    } else {
        1.0 - distance as f64 / longer as f64
    }
}

/// What `join` and `ngram` share: normalisation, shingles, the measure and its threshold.
#[derive(Debug, Clone)]
pub struct ShortText {
    normalizer: Normalizer,
    shingler: Shingler,
    measure: ShortMeasure,
    /// The threshold by length (tokens, or characters with the edit measure) of the pair's
    /// shorter document.
    rule: ThresholdRule,
    /// The rule's smallest value: what the filters (prefixes, lengths, segments) are cut for,
    /// so that the join stays exact at every pair's own threshold.
    threshold: f64,
    max_edits: Option<u32>,
    /// `ngram` reads the characters whatever the measure.
    keep_chars: bool,
    /// The template check (off with `max_df = off`).
    template: TemplateCheck,
    /// Boilerplate lines and edge pieces, learned in the corpus pass (`boilerplate_df`).
    boilerplate: Boilerplate,
}

impl ShortText {
    fn from_params(params: &Params, keep_chars: bool) -> Result<ShortText> {
        let normalizer = Normalizer::new(normalize_options(params)?);
        let max_edits: Option<u32> = params.get::<u64>("max_edits")?.map(|n| n as u32);
        let measure = match (params.get::<ShortMeasure>("measure")?, max_edits) {
            (Some(measure), Some(n)) if measure != ShortMeasure::Edit => {
                return Err(Error::invalid(
                    "max_edits",
                    format!(
                        "{n}: an edit-distance bound needs measure edit (measure is {})",
                        measure.name()
                    ),
                ))
            }
            (Some(measure), _) => measure,
            (None, Some(_)) => ShortMeasure::Edit,
            (None, None) => ShortMeasure::default(),
        };
        if let Some(n) = max_edits {
            if n > 64 {
                return Err(Error::invalid(
                    "max_edits",
                    format!("{n} (expected 0 to 64; short texts are compared within a few edits)"),
                ));
            }
            if params.raw("threshold").is_some() {
                return Err(Error::invalid(
                    "threshold",
                    "given with max_edits: give one bound, --max-edits (absolute) or \
                     --threshold (edit similarity)",
                ));
            }
        }
        let rule = params.get::<ThresholdRule>("threshold")?;
        let rule = rule.unwrap_or(ThresholdRule::fixed(match measure {
            ShortMeasure::Edit => DEFAULT_EDIT_THRESHOLD,
            _ => DEFAULT_SET_THRESHOLD,
        }));
        let threshold = rule.min();
        if !(threshold > 0.0 && rule.max() <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!("{rule} (expected {})", crate::error::THRESHOLD_RANGE),
            ));
        }
        if measure == ShortMeasure::Edit && max_edits.is_none() && threshold < 0.5 {
            return Err(Error::invalid(
                "threshold",
                format!(
                    "{threshold}: an edit similarity below 0.5 lets every pair differ in most \
                     of its characters (not a near-duplicate), and no partition filter prunes \
                     it; give 0.5 or more, or a set measure"
                ),
            ));
        }
        let tokenizer: Tokenizer = params.get("tokenizer")?.unwrap_or_default();
        let mut shingles = ShinglerBuilder::new()
            .tokenizer(tokenizer)
            .remove_stopwords(params.flag("stopwords")?);
        let ngram = params.get::<usize>("ngram")?.unwrap_or(match tokenizer {
            Tokenizer::Auto | Tokenizer::Char => 2,
            _ => 1,
        });
        shingles = shingles.ngram(ngram);
        if let Some(latin) = params.get::<usize>("latin_ngram")? {
            shingles = shingles.latin_ngram(latin);
        }
        let (max_df, line_df, listed) = boilerplate_params(params)?;
        let boilerplate = Boilerplate::new(max_df, line_df, &listed, &normalizer);
        Ok(ShortText {
            normalizer,
            shingler: shingles.build()?,
            measure,
            rule,
            threshold,
            max_edits,
            keep_chars,
            template: TemplateCheck::from_params(params)?,
            boilerplate,
        })
    }

    /// The characters and the shingles the measure reads of normalised text.
    fn features(&self, normalized: &str) -> (Vec<u32>, Vec<u64>) {
        let chars: Vec<u32> = if self.keep_chars || self.measure == ShortMeasure::Edit {
            edit_chars(normalized)
        } else {
            Vec::new()
        };
        let tokens: Vec<u64> = match self.measure {
            ShortMeasure::Edit => Vec::new(),
            _ => self.shingler.shingles(normalized).hashes().to_vec(),
        };
        (chars, tokens)
    }

    /// Whether the measure has nothing to compare.
    fn nothing_to_compare(&self, chars: &[u32], tokens: &[u64]) -> bool {
        match self.measure {
            ShortMeasure::Edit => chars.is_empty(),
            _ => tokens.is_empty(),
        }
    }

    /// The sketch of `text` without its boilerplate lines and edge pieces (appended to
    /// `removed`), or of the whole text when nothing else is left.
    fn sketch<'t>(&self, text: &'t str, removed: &mut Vec<RemovedLine<'t>>) -> ShortSketch {
        let before = removed.len();
        let mut normalized = self.boilerplate.strip(&self.normalizer, text, removed);
        let (mut chars, mut tokens) = self.features(&normalized);
        if removed.len() > before && self.nothing_to_compare(&chars, &tokens) {
            // Nothing but boilerplate: the document is compared on all of it.
            removed.truncate(before);
            normalized = self.normalizer.normalize(text);
            (chars, tokens) = self.features(&normalized);
        }
        let stripped = removed.len() > before;
        let length = normalized.chars().filter(|&c| c != ' ').count();
        let has_features = !self.nothing_to_compare(&chars, &tokens);
        let part = (self.template).part(
            &self.normalizer,
            (text, &normalized, stripped),
            length,
            has_features,
        );
        let identity = match self.measure {
            ShortMeasure::Edit => {
                let bytes: Vec<u8> = chars.iter().flat_map(|c| c.to_le_bytes()).collect();
                hash128(&bytes)
            }
            _ => hash128_u64s(&tokens),
        };
        // A document with no token has nothing the measure can compare: empty, whatever the
        // characters `ngram` keeps.
        let empty = !has_features;
        ShortSketch {
            identity,
            chars: if empty { Box::default() } else { chars.into() },
            tokens: tokens.into(),
            part,
        }
    }

    /// Whether templated sketches are joined on their rare elements: with the template check
    /// on. With templates duplicate they also meet their template's first fillings (its
    /// anchors, [`RareJoin::anchors`]), which the check then calls duplicates.
    fn joins_rare_elements(&self) -> bool {
        self.template.is_on()
    }

    /// The join of templated sketches on their rare elements ([`ShortText::joins_rare_elements`]),
    /// and on their template keys with templates duplicate.
    fn rare_join<M: Method<Sketch = ShortSketch>>(&self) -> Option<RareJoin<M>> {
        let duplicate = self.template.templates == Templates::Duplicate;
        self.joins_rare_elements().then_some(RareJoin {
            threshold: self.template.rare_threshold,
            elements: rare_elements,
            anchors: duplicate.then_some(template_keys),
            templates: template_sample,
        })
    }

    /// The smallest overlap of a set of `size` tokens with any partner that reaches the
    /// threshold (over every partner size).
    fn least_overlap(&self, size: usize) -> usize {
        let t = self.threshold;
        let least = match self.measure {
            ShortMeasure::Jaccard => t * size as f64,
            ShortMeasure::Cosine => t * t * size as f64,
            _ => 1.0,
        };
        ((least - 1e-9).ceil().max(1.0) as usize).min(size.max(1))
    }

    /// The edits a text of `len` characters is cut for: the most any partner allows.
    fn cut_for(&self, len: usize) -> usize {
        match self.max_edits {
            Some(n) => n as usize,
            None => ((1.0 - self.threshold) * len as f64 / self.threshold + 1e-9).floor() as usize,
        }
    }

    /// The most edits of a pair whose longer side has `longer` characters.
    fn pair_edits(&self, longer: usize) -> usize {
        match self.max_edits {
            Some(n) => n as usize,
            None => ((1.0 - self.threshold) * longer as f64 + 1e-9).floor() as usize,
        }
    }

    /// The lengths a partner of a text of `len` characters can have.
    fn partner_lengths(&self, len: usize) -> std::ops::RangeInclusive<usize> {
        match self.max_edits {
            Some(n) => len.saturating_sub(n as usize)..=len + n as usize,
            None => {
                let t = self.threshold;
                let shortest = (t * len as f64 - 1e-9).ceil().max(1.0) as usize;
                let longest = (len as f64 / t + 1e-9).floor() as usize;
                shortest..=longest
            }
        }
    }

    /// The online keys a document is stored under (the service): the prefix of its token
    /// set in hash order (set measures), or its `tau + 1` segments (edit distance).
    ///
    /// With the join of rare elements ([`ShortText::rare_join`]), keys come in two classes
    /// ([`PRIORITY_KEY`]): a templated text is also stored under its rare elements, as
    /// priority keys, which a query reads first; in a flood its ordinary keys are the
    /// template's, shared by every filling, and the index reads a bounded number of them.
    fn stored_keys(&self, sketch: &ShortSketch, keys: &mut Vec<u64>) {
        if self.measure != ShortMeasure::Edit {
            let size = sketch.tokens.len();
            let prefix = size + 1 - self.least_overlap(size).min(size.max(1));
            let prefix = &sketch.tokens[..prefix.min(size)];
            if !self.joins_rare_elements() {
                keys.extend_from_slice(prefix);
                return;
            }
            keys.extend(prefix.iter().map(|&token| token & !PRIORITY_KEY));
            sketch.part.priority_keys(keys);
            return;
        }
        let chars = &sketch.chars;
        let tau = self.cut_for(chars.len());
        if chars.len() <= tau {
            keys.push(segment_key(chars.len(), u32::MAX, &[]));
            return;
        }
        for (i, (start, len)) in segments(chars.len(), tau + 1).enumerate() {
            keys.push(segment_key(
                chars.len(),
                i as u32,
                &chars[start..start + len],
            ));
        }
    }

    /// The online keys a text looks up: the same prefix (set measures), or for every partner
    /// length and each of its segments, the substrings where that segment can be
    /// (Pass-Join's partition filter, with the position window of the pair's edit bound).
    fn lookup_keys(&self, sketch: &ShortSketch, keys: &mut Vec<u64>) {
        if self.measure != ShortMeasure::Edit {
            self.stored_keys(sketch, keys);
            return;
        }
        let chars = &sketch.chars;
        let n = chars.len();
        for length in self.partner_lengths(n) {
            let tau = self.cut_for(length);
            if length <= tau {
                keys.push(segment_key(length, u32::MAX, &[]));
                continue;
            }
            let window = self.pair_edits(n.max(length));
            for (i, (position, len)) in segments(length, tau + 1).enumerate() {
                if len > n {
                    continue;
                }
                let from = position.saturating_sub(window);
                let to = (position + window).min(n - len);
                if from > to {
                    continue;
                }
                for start in from..=to {
                    keys.push(segment_key(length, i as u32, &chars[start..start + len]));
                }
            }
        }
    }

    fn edit_limit(&self) -> EditLimit {
        match self.max_edits {
            Some(n) => EditLimit::Absolute(n),
            None => EditLimit::Normalized(self.threshold),
        }
    }

    fn similarity(&self, a: &ShortSketch, b: &ShortSketch) -> f64 {
        match self.measure {
            ShortMeasure::Jaccard => jaccard(&a.tokens, &b.tokens),
            ShortMeasure::Containment => containment(&a.tokens, &b.tokens),
            ShortMeasure::Cosine => cosine(&a.tokens, &b.tokens),
            ShortMeasure::Edit => {
                let longer = a.chars.len().max(b.chars.len());
                edit_similarity(edit_distance(&a.chars, &b.chars) as usize, longer)
            }
        }
    }

    /// The rule's value at the pair's shorter document (characters for the edit measure,
    /// tokens otherwise).
    fn pair_threshold(&self, a: &ShortSketch, b: &ShortSketch) -> f64 {
        match self.measure {
            ShortMeasure::Edit => self.rule.at(a.chars.len().min(b.chars.len())),
            _ => self.rule.at(a.tokens.len().min(b.tokens.len())),
        }
    }

    /// The measure at the pair's threshold, then the template check: with templates
    /// duplicate, two templated sides whose template agrees are duplicates; otherwise a pair
    /// with a templated side must agree on its filling.
    fn verify(&self, a: &ShortSketch, b: &ShortSketch) -> Option<f64> {
        self.verdict(a, b).similarity()
    }

    /// [`Method::verdict`]: the template check after the measure.
    fn verdict(&self, a: &ShortSketch, b: &ShortSketch) -> Verdict {
        let (marked_a, marked_b) = (a.part.marked(), b.part.marked());
        let same = (self.template).same_template(marked_a, marked_b, self.template_threshold());
        if let Some(similarity) = same {
            return Verdict::Duplicate(similarity);
        }
        let Some(similarity) = self.measure_within(a, b) else {
            return Verdict::Different;
        };
        let agree = (self.template).agree(
            (marked_a, a.part.text_slots()),
            (marked_b, b.part.text_slots()),
        );
        match agree {
            true => Verdict::Duplicate(similarity),
            false => Verdict::Fillings,
        }
    }

    /// The least containment of two templated sides' template for
    /// [`TemplateCheck::same_template`]: a set measure's threshold; under the edit measure the
    /// q-gram count filter of its threshold, `2t - 1` (docs/methods.md), at least
    /// [`MIN_TEMPLATE_CONTAINMENT`].
    fn template_threshold(&self) -> f64 {
        match self.measure {
            ShortMeasure::Edit => (2.0 * self.threshold - 1.0).max(MIN_TEMPLATE_CONTAINMENT),
            _ => self.threshold,
        }
    }

    /// The measure of a pair when it reaches the pair's threshold.
    fn measure_within(&self, a: &ShortSketch, b: &ShortSketch) -> Option<f64> {
        let threshold = self.pair_threshold(a, b);
        match self.measure {
            ShortMeasure::Edit => {
                let longer = a.chars.len().max(b.chars.len());
                let bound = match self.max_edits {
                    Some(n) => n as usize,
                    None => ((1.0 - threshold) * longer as f64 + 1e-9).floor() as usize,
                };
                if a.chars.len().abs_diff(b.chars.len()) > bound {
                    return None;
                }
                let bound = u32::try_from(bound).unwrap_or(u32::MAX);
                let distance = edit_distance_within(&a.chars, &b.chars, bound)?;
                Some(edit_similarity(distance as usize, longer))
            }
            _ => {
                let similarity = self.similarity(a, b);
                (similarity >= threshold - 1e-9).then_some(similarity)
            }
        }
    }

    fn distance(&self, a: &ShortSketch, b: &ShortSketch) -> Option<u32> {
        (self.measure == ShortMeasure::Edit).then(|| edit_distance(&a.chars, &b.chars))
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = vec![("measure", Setting::Text(self.measure.name().to_owned()))];
        match self.max_edits {
            Some(n) => settings.push(("max_edits", Setting::Count(u64::from(n)))),
            None => {
                settings.push(("threshold", Setting::Number(self.threshold)));
                if !self.rule.is_fixed() {
                    let text = self.rule.to_string();
                    settings.push(("threshold_by_length", Setting::Text(text)));
                }
            }
        }
        if self.measure != ShortMeasure::Edit {
            let shingler = &self.shingler;
            settings.push((
                "tokenizer",
                Setting::Text(shingler.tokenizer().name().to_owned()),
            ));
            settings.push(("ngram", Setting::Count(shingler.ngram() as u64)));
            if shingler.tokenizer() == Tokenizer::Auto {
                settings.push(("latin_ngram", Setting::Count(shingler.latin_ngram() as u64)));
            }
            settings.push(("stopwords", Setting::Flag(shingler.removes_stopwords())));
        }
        settings.extend(boilerplate_settings(&self.boilerplate));
        settings.extend(self.template.settings());
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}

/// The rare elements of a templated sketch (the hook of [`RareJoin`]).
fn rare_elements<M>(_method: &M, sketch: &ShortSketch, out: &mut Vec<u64>) -> bool {
    sketch.part.rare_elements(out)
}

/// The template sample of a templated sketch (the templates of [`RareJoin`]).
fn template_sample<M>(_method: &M, sketch: &ShortSketch, out: &mut Vec<u64>) -> bool {
    sketch.part.template_sample(out)
}

/// The template keys of a templated sketch (the anchors of [`RareJoin`]).
fn template_keys<M>(_method: &M, sketch: &ShortSketch, out: &mut Vec<u64>) -> bool {
    sketch.part.template_keys(out)
}

/// The parameters `join` and `ngram` share, besides normalisation and shingles.
fn measure_params() -> Vec<ParamSpec> {
    vec![
        THRESHOLD_PARAM,
        MEASURE_PARAM,
        ParamSpec {
            name: "max_edits",
            kind: ParamKind::Count,
            default: None,
            help: "join, ngram: at most this many edits (absolute edit distance, 0 to 64) \
                   instead of an edit-similarity threshold; implies --measure edit.",
            group: None,
        },
    ]
}

fn short_params(own: Vec<ParamSpec>) -> Vec<ParamSpec> {
    let mut params = measure_params();
    params.extend(own);
    params.extend_from_slice(BOILERPLATE_PARAMS);
    params.extend_from_slice(TEMPLATE_PARAMS);
    params.extend_from_slice(SHINGLE_PARAMS);
    params.extend_from_slice(NORMALIZE_PARAMS);
    params
}

/// The [`Method`] items `join` and `ngram` share: both hold a [`ShortText`] in `short`,
/// which sketches, measures and verifies.
macro_rules! short_text_method {
    () => {
        type Sketch = ShortSketch;

        fn name(&self) -> &'static str {
            Self::NAME
        }
        fn sketch(&self, text: &str) -> ShortSketch {
            self.short.sketch(text, &mut Vec::new())
        }
        /// Boilerplate lines and edge pieces leave the text before it is measured.
        fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> ShortSketch {
            self.short.sketch(text, &mut notes.removed_lines)
        }
        /// Boilerplate lines.
        fn learns_from_corpus(&self) -> bool {
            self.short.boilerplate.line_df() != DfLimit::Off
        }
        /// The keys of the document's lines (for boilerplate lines).
        fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
            let short = &self.short;
            short
                .boilerplate
                .corpus_lines(&short.normalizer, text, features);
        }
        fn set_frequency_floors(&mut self, floors: DfFloors) {
            self.short.boilerplate.set_floors(floors);
            self.short.template.floors = floors;
        }
        fn learn(&mut self, corpus: &Arc<CorpusStats>) {
            if self.short.boilerplate.line_df() != DfLimit::Off {
                self.short.boilerplate.learn(corpus, false);
            }
        }
        fn learned_limits(&self) -> Vec<(&'static str, u64)> {
            let mut limits = self.short.boilerplate.learned_limits();
            // Resolved by the engine against the distinct documents it sketched.
            limits.retain(|(name, _)| *name != "max_df");
            limits
        }
        /// With the template check on, the elements of the template sets in more than
        /// `max_df` documents are common.
        fn common_marks(&self) -> Option<crate::CommonMarks<Self>> {
            Some(crate::CommonMarks {
                limit: |method, documents| {
                    let template = &method.short.template;
                    template
                        .is_on()
                        .then(|| template.common_limit(documents))
                        .flatten()
                },
                features: |_, sketch| &sketch.part.set,
                mark: |_, sketch, is_common| sketch.part.mark(is_common),
                changes_keys: |_, _| true,
                crowds_only: true,
            })
        }
        fn similarity(&self, a: &ShortSketch, b: &ShortSketch) -> f64 {
            self.short.similarity(a, b)
        }
        fn threshold(&self) -> f64 {
            self.short.threshold
        }
        fn pair_threshold(&self, a: &ShortSketch, b: &ShortSketch) -> f64 {
            self.short.pair_threshold(a, b)
        }
        fn verify(&self, a: &ShortSketch, b: &ShortSketch) -> Option<f64> {
            self.short.verify(a, b)
        }
        fn verdict(&self, a: &ShortSketch, b: &ShortSketch) -> Verdict {
            self.short.verdict(a, b)
        }
        fn distance(&self, a: &ShortSketch, b: &ShortSketch) -> Option<u32> {
            self.short.distance(a, b)
        }
    };
}

/// The characters of a short text's sketch: the sequence the edit join and the n-gram index
/// read (the hook of [`Join::Edit`] and [`Join::NgramBuckets`]).
fn characters<'s, M>(_method: &M, sketch: &'s ShortSketch) -> &'s [u32] {
    &sketch.chars
}

/// `join`: the exact similarity self-join (PPJoin for set measures, Pass-Join for edit
/// distance).
#[derive(Debug, Clone)]
pub struct SimilarityJoin {
    short: ShortText,
}

impl SimilarityJoin {
    /// The shared settings.
    pub fn short(&self) -> &ShortText {
        &self.short
    }
}

impl Method for SimilarityJoin {
    short_text_method!();

    fn join(&self) -> Join<Self> {
        match self.short.measure.set_measure() {
            Some(measure) => Join::Prefix {
                measure,
                threshold: self.short.threshold,
                rare: self.short.rare_join(),
            },
            None => Join::Edit {
                limit: self.short.edit_limit(),
                sequence: characters,
                rare: self.short.rare_join(),
            },
        }
    }
    /// The keys an online index stores the document under: the prefix of its token set in
    /// hash order, or its Pass-Join segments.
    fn keys(&self, sketch: &ShortSketch, keys: &mut Vec<u64>) {
        self.short.stored_keys(sketch, keys);
    }
    /// The keys a text looks up in an online index (see [`ShortText`]).
    fn probe_keys(&self, sketch: &ShortSketch, keys: &mut Vec<u64>) {
        self.short.lookup_keys(sketch, keys);
    }
    fn join_tokens(&self, sketch: &ShortSketch, tokens: &mut Vec<u64>) {
        tokens.extend_from_slice(&sketch.tokens);
    }
}

impl Registered for SimilarityJoin {
    const NAME: &'static str = "join";
    const ABOUT: &'static str =
        "Exact similarity join for short texts (PPJoin, Pass-Join): every pair at the threshold";

    fn params() -> Vec<ParamSpec> {
        short_params(Vec::new())
    }
    fn from_params(params: &Params) -> Result<SimilarityJoin> {
        Ok(SimilarityJoin {
            short: ShortText::from_params(params, false)?,
        })
    }
    fn settings(&self) -> Vec<(&'static str, Setting)> {
        self.short.settings()
    }
}

/// `ngram`: the all-m-gram inverted index with its greedy bucket pass.
#[derive(Debug, Clone)]
pub struct NgramIndex {
    short: ShortText,
    m: u32,
}

impl Method for NgramIndex {
    short_text_method!();

    fn join(&self) -> Join<Self> {
        Join::NgramBuckets {
            m: self.m,
            sequence: characters,
            rare: self.short.rare_join(),
        }
    }
    fn keys(&self, sketch: &ShortSketch, keys: &mut Vec<u64>) {
        keys.extend_from_slice(&sketch.tokens);
    }
}

impl Registered for NgramIndex {
    const NAME: &'static str = "ngram";
    const ABOUT: &'static str =
        "All-m-gram index for short texts, greedy per bucket (the join's reference)";

    fn params() -> Vec<ParamSpec> {
        short_params(vec![ParamSpec {
            name: "bucket_ngram",
            kind: ParamKind::Count,
            default: Some("4"),
            help: "ngram: characters per bucket key (every such substring of a text is a key; \
                   a shorter text is keyed whole).",
            group: None,
        }])
    }
    fn from_params(params: &Params) -> Result<NgramIndex> {
        let m = params
            .get::<u64>("bucket_ngram")?
            .unwrap_or(u64::from(DEFAULT_BUCKET_NGRAM));
        if !(1..=64).contains(&m) {
            return Err(Error::invalid(
                "bucket_ngram",
                format!("{m} (expected 1 to 64)"),
            ));
        }
        Ok(NgramIndex {
            short: ShortText::from_params(params, true)?,
            m: m as u32,
        })
    }
    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = vec![("bucket_ngram", Setting::Count(u64::from(self.m)))];
        settings.extend(self.short.settings());
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::JoinMeasure;
    use crate::registry::{with_method, MethodVisitor};
    use crate::CommonMarking;

    fn join(params: &[(&str, &str)]) -> SimilarityJoin {
        let mut p = Params::new();
        for (k, v) in params {
            p.insert(*k, *v);
        }
        SimilarityJoin::from_params(&p).unwrap()
    }

    #[test]
    fn edit_chars_drop_spaces_next_to_chinese_and_keep_one_between_words() {
        let chars = |s: &str| -> String {
            edit_chars(s)
                .into_iter()
                .map(|c| char::from_u32(c).unwrap())
                .collect()
        };
        assert_eq!(chars("  今天 天气  好 "), "今天天气好");
        assert_eq!(chars("the  quick fox "), "the quick fox");
        assert_eq!(chars("iphone 15 发布"), "iphone 15发布");
        assert_eq!(chars(""), "");
    }

    #[test]
    fn the_edit_measure_is_normalised_or_absolute() {
        let normalised = join(&[("measure", "edit"), ("threshold", "0.9")]);
        let a = normalised.sketch("今天北京的天气非常好，适合出门");
        let b = normalised.sketch("今天北京的天气非常好！适合出门。");
        assert_eq!(normalised.verify(&a, &b), Some(1.0), "punctuation is free");
        let c = normalised.sketch("今天北平的天气非常好，适合出门");
        // 1 edit in 14 characters: 0.928...
        let s = normalised.verify(&a, &c).unwrap();
        assert!((s - (1.0 - 1.0 / 14.0)).abs() < 1e-9, "{s}");
        assert_eq!(normalised.distance(&a, &c), Some(1));
        let d = normalised.sketch("明天上海的天气非常差，不宜出门");
        assert_eq!(normalised.verify(&a, &d), None);
        let absolute = join(&[("max_edits", "1")]);
        assert_eq!(absolute.short.measure, ShortMeasure::Edit);
        let (a, c) = (
            absolute.sketch("今天北京的天气"),
            absolute.sketch("今天上海的天气"),
        );
        assert_eq!(absolute.verify(&a, &c), None, "2 edits");
        let e = absolute.sketch("今天北京天气");
        assert!(absolute.verify(&a, &e).is_some(), "1 edit");
        assert!(matches!(
            absolute.join(),
            Join::Edit {
                limit: EditLimit::Absolute(1),
                ..
            }
        ));
    }

    #[test]
    fn set_measures_run_the_prefix_join() {
        for (name, measure) in [
            ("jaccard", JoinMeasure::Jaccard),
            ("cosine", JoinMeasure::Cosine),
            ("containment", JoinMeasure::Containment),
            ("overlap", JoinMeasure::Containment),
        ] {
            let method = join(&[("measure", name), ("threshold", "0.7")]);
            assert!(matches!(
                method.join(),
                Join::Prefix { measure: m, threshold: t, .. } if m == measure && t == 0.7
            ));
        }
        let method = join(&[]);
        let a = method.sketch("Apple unveils the new iPhone");
        let b = method.sketch("apple unveils the new iphone!!");
        assert_eq!(a.identity(), b.identity());
        assert_eq!(method.verify(&a, &b), Some(1.0));
    }

    #[test]
    fn bad_parameters_are_named() {
        let error = |params: &[(&str, &str)]| {
            let mut p = Params::new();
            for (k, v) in params {
                p.insert(*k, *v);
            }
            SimilarityJoin::from_params(&p).unwrap_err()
        };
        assert_eq!(
            error(&[("measure", "cosine"), ("max_edits", "2")]).parameter(),
            "max_edits"
        );
        assert_eq!(
            error(&[("threshold", "0.9"), ("max_edits", "2")]).parameter(),
            "threshold"
        );
        assert_eq!(error(&[("threshold", "0")]).parameter(), "threshold");
        assert_eq!(error(&[("threshold", "1.5")]).parameter(), "threshold");
        assert_eq!(
            error(&[("measure", "edit"), ("threshold", "0.4")]).parameter(),
            "threshold"
        );
        assert_eq!(error(&[("max_edits", "65")]).parameter(), "max_edits");
        assert_eq!(error(&[("measure", "dice")]).parameter(), "measure");
        let error = NgramIndex::from_params(&Params::new().set("bucket_ngram", "0")).unwrap_err();
        assert_eq!(error.parameter(), "bucket_ngram");
    }

    #[test]
    fn sketches_round_trip_and_refuse_garbage() {
        for params in [vec![], vec![("measure", "edit")]] {
            let method = join(&params);
            let sketch = method.sketch("今天天气很好 the weather is fine");
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(ShortSketch::decode(&bytes).unwrap(), sketch);
            assert!(ShortSketch::decode(&bytes[..bytes.len() - 1]).is_err());
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(ShortSketch::decode(&longer).is_err());
        }
    }

    #[test]
    fn template_parts_round_trip_with_their_marks_and_bad_bytes_are_refused() {
        let notice = "【京东】您的验证码是612782，6分钟内有效，请勿泄露给他人。";
        for params in [vec![], vec![("measure", "edit")], vec![("max_df", "off")]] {
            let method = join(&params);
            let mut sketch = method.sketch(notice);
            assert_eq!(sketch.part.is_empty(), params == [("max_df", "off")]);
            method.mark_common(&mut sketch, &|value| value % 2 == 0);
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(ShortSketch::decode(&bytes).unwrap(), sketch);
            for cut in 1..bytes.len() {
                assert!(
                    ShortSketch::decode(&bytes[..cut]).is_err(),
                    "{params:?} {cut}"
                );
            }
        }
    }

    #[test]
    fn fillings_of_a_template_are_refused_and_copies_kept() {
        let method = join(&[]);
        let texts: Vec<String> = (0..60)
            .map(|i| {
                format!(
                    "【京东】您的验证码是{}，{}分钟内有效，请勿泄露给他人。",
                    100_000 + i * 7919,
                    1 + i % 9
                )
            })
            .chain(["【京东】您的验证码是100000, 1分钟内有效, 请勿泄露给他人。".to_owned()])
            .collect();
        let mut sketches: Vec<ShortSketch> = texts.iter().map(|t| method.sketch(t)).collect();
        crate::testing::mark_by_count(&method, &mut sketches, 20);
        assert!(sketches[0].part.marked().templated());
        // Two fillings agree on the measure and are refused by the check.
        assert!(method
            .short
            .measure_within(&sketches[0], &sketches[1])
            .is_some());
        assert_eq!(method.verify(&sketches[0], &sketches[1]), None);
        assert!(method.verify(&sketches[0], &sketches[60]).is_some());
        // With templates duplicate, the fillings are one message.
        let duplicate = join(&[("templates", "duplicate")]);
        let mut sketches: Vec<ShortSketch> = texts.iter().map(|t| duplicate.sketch(t)).collect();
        crate::testing::mark_by_count(&duplicate, &mut sketches, 20);
        assert!(duplicate.verify(&sketches[0], &sketches[1]).is_some());
        // The templated texts leave the join of tokens and meet their template's first ones
        // under their template keys instead (the anchors).
        assert!(matches!(
            duplicate.join(),
            Join::Prefix {
                rare: Some(RareJoin {
                    anchors: Some(_),
                    ..
                }),
                ..
            }
        ));
        let mut keys = Vec::new();
        assert!(sketches[0].part.template_keys(&mut keys));
        let mut other = Vec::new();
        assert!(sketches[1].part.template_keys(&mut other));
        assert!(
            keys.iter().any(|key| other.contains(key)),
            "{keys:?} {other:?}"
        );
    }

    #[test]
    fn empty_and_punctuation_only_texts_are_empty() {
        for params in [vec![], vec![("measure", "edit")]] {
            let method = join(&params);
            assert!(method.sketch("").is_empty());
            assert!(method.sketch("，。！ ...").is_empty());
            assert!(!method.sketch("好").is_empty());
        }
        let ngram = NgramIndex::from_params(&Params::new()).unwrap();
        assert!(ngram.sketch("！！").is_empty());
        assert!(!ngram.sketch("好").chars().is_empty());
    }

    struct Name;
    impl MethodVisitor for Name {
        type Output = &'static str;
        fn visit<M: Registered>(self, method: M) -> &'static str {
            method.name()
        }
    }

    #[test]
    fn both_are_registered() {
        assert_eq!(with_method("join", &Params::new(), Name).unwrap(), "join");
        assert_eq!(with_method("ngram", &Params::new(), Name).unwrap(), "ngram");
        assert!(with_method("join", &Params::new().set("bucket_ngram", "3"), Name).is_err());
    }
}
