//! [`MinHashBuilder`]: every parameter of [`MinHash`] set by name, and checked once in
//! [`MinHashBuilder::build`].

use crate::boilerplate::{Boilerplate, DfLimit, DEFAULT_BOILERPLATE_DF, DEFAULT_MAX_DF};
use crate::length_rule::{NgramRule, ThresholdRule};
use crate::lsh::{LshParams, DEFAULT_FN_WEIGHT, DEFAULT_FP_WEIGHT};
use crate::measure::SetMeasure;
use crate::minhash::{MinHasher, SketchScheme};
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::tokenize::{ShinglerBuilder, Tokenizer};
use crate::{Error, Result};

use super::scale::ScaleRule;
use super::{
    Common, MinHash, Slots, Templates, Weighting, DEFAULT_RARE_THRESHOLD, DEFAULT_THRESHOLD,
};
use crate::slots::DEFAULT_SLOT_AGREEMENT;

/// Builder of [`MinHash`]; every parameter is checked in [`MinHashBuilder::build`].
#[derive(Debug, Clone)]
pub struct MinHashBuilder {
    normalize: NormalizeOptions,
    shingles: ShinglerBuilder,
    permutations: usize,
    scheme: SketchScheme,
    seed: u64,
    threshold: ThresholdRule,
    measure: SetMeasure,
    bands_rows: Option<(usize, usize)>,
    lsh_threshold: Option<f64>,
    max_df: DfLimit,
    boilerplate_df: DfLimit,
    boilerplate_lines: String,
    weighting: Weighting,
    common: Common,
    rare_threshold: f64,
    slots: Slots,
    slot_agreement: f64,
    templates: Templates,
    /// Shingle sizes by length: `(below, short ngram)`, the long one being `shingles`'.
    short_ngram: Option<(usize, usize)>,
}

impl Default for MinHashBuilder {
    fn default() -> Self {
        MinHashBuilder {
            normalize: NormalizeOptions::default(),
            shingles: ShinglerBuilder::new(),
            permutations: 128,
            scheme: SketchScheme::Classic,
            seed: 1,
            threshold: ThresholdRule::fixed(DEFAULT_THRESHOLD),
            measure: SetMeasure::Jaccard,
            bands_rows: None,
            lsh_threshold: None,
            max_df: DfLimit::parse(DEFAULT_MAX_DF, "max_df").unwrap_or_default(),
            boilerplate_df: DfLimit::parse(DEFAULT_BOILERPLATE_DF, "boilerplate_df")
                .unwrap_or_default(),
            boilerplate_lines: String::new(),
            weighting: Weighting::None,
            common: Common::Check,
            rare_threshold: DEFAULT_RARE_THRESHOLD,
            slots: Slots::Off,
            slot_agreement: DEFAULT_SLOT_AGREEMENT,
            templates: Templates::Distinct,
            short_ngram: None,
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
        self.shingles = self.shingles.tokenizer(tokenizer);
        self
    }
    /// Tokens per shingle (for `auto`: characters per shingle on CJK runs); default
    /// [`Tokenizer::default_ngram`].
    pub fn ngram(mut self, ngram: usize) -> Self {
        self.shingles = self.shingles.ngram(ngram);
        self
    }
    /// Tokens per shingle by length in characters, `"<30:2,3"`: documents under the bound
    /// take the first size, and the others the default (one bound at most; see
    /// `scale.rs`). A fixed rule is [`MinHashBuilder::ngram`].
    pub fn ngram_rule(mut self, rule: &NgramRule) -> Result<Self> {
        match rule.bands() {
            [] => {}
            &[(below, short)] if short != rule.default_value() => {
                self.short_ngram = Some((below, short));
            }
            [_] => {}
            _ => {
                return Err(Error::invalid(
                    "ngram",
                    format!("{rule}: one length bound at most (\"<30:2,3\")"),
                ))
            }
        }
        self.shingles = self.shingles.ngram(rule.default_value());
        Ok(self)
    }
    /// For `auto`: characters per shingle on non-CJK runs; default `ngram + 2`.
    pub fn latin_ngram(mut self, ngram: usize) -> Self {
        self.shingles = self.shingles.latin_ngram(ngram);
        self
    }
    /// Remove stopwords before shingling.
    pub fn remove_stopwords(mut self, yes: bool) -> Self {
        self.shingles = self.shingles.remove_stopwords(yes);
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
        self.threshold = ThresholdRule::fixed(threshold);
        self
    }
    /// Similarity threshold by length: a pair takes the rule's value at the size of its
    /// smaller shingle set (see [`crate::length_rule`]).
    pub fn threshold_rule(mut self, rule: ThresholdRule) -> Self {
        self.threshold = rule;
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
    /// [`crate::boilerplate`] and [`Common`]); [`DEFAULT_MAX_DF`] by
    /// default.
    pub fn max_df(mut self, limit: DfLimit) -> Self {
        self.max_df = limit;
        self
    }
    /// Lines found in at least this many documents of the corpus are boilerplate (see
    /// [`crate::boilerplate`]); [`DEFAULT_BOILERPLATE_DF`] by default.
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

    /// The slot check ([`Slots`]; off by default) and its least agreement (default
    /// [`DEFAULT_SLOT_AGREEMENT`]).
    pub fn slots(mut self, slots: Slots, agreement: f64) -> Self {
        self.slots = slots;
        self.slot_agreement = agreement;
        self
    }

    /// What a template means ([`Templates`]); `distinct` by default.
    pub fn templates(mut self, templates: Templates) -> Self {
        self.templates = templates;
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
        if !(self.threshold.min() > 0.0 && self.threshold.max() <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!(
                    "{} (expected {})",
                    self.threshold,
                    crate::error::THRESHOLD_RANGE
                ),
            ));
        }
        let shingler = self.shingles.clone().build()?;
        let hasher = MinHasher::new(self.permutations, self.scheme, self.seed)?;
        let lsh_threshold = self.lsh_threshold.unwrap_or(match self.measure {
            SetMeasure::Jaccard => self.threshold.min(),
            SetMeasure::Containment => 0.4 * self.threshold.min(),
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
        if !(self.slot_agreement >= 0.0 && self.slot_agreement <= 1.0) {
            return Err(Error::invalid(
                "slot_agreement",
                format!("{} (expected 0 <= t <= 1)", self.slot_agreement),
            ));
        }
        let signature_check = matches!(
            (self.measure, self.weighting, self.scheme),
            (SetMeasure::Jaccard, Weighting::None, SketchScheme::Classic)
        );
        let agreement_floor = self.threshold.map(|t| match signature_check {
            true => {
                crate::minhash::agreement_floor(self.permutations, t, crate::minhash::MISS_RISK)
            }
            false => 0,
        });
        let scale = match self.short_ngram {
            None => None,
            Some(_) if self.weighting == Weighting::Idf || self.measure != SetMeasure::Jaccard => {
                return Err(Error::invalid(
                    "ngram",
                    "shingle sizes by length need measure jaccard and weighting none (a short \
                     and a long document are kept apart by their sizes)",
                ))
            }
            Some((below, ngram)) => {
                // A short-only document has at most `below - 1` shingles, and its pairs'
                // thresholds are the rule's values under `below`: a partner with more than
                // `(below - 1) / t` shingles cannot reach `t`. Two characters more for the
                // shingles a text has fewer than its characters.
                let threshold = self.threshold.min_under(below);
                let overlap_end = ((below - 1) as f64 / threshold).ceil() as usize + 2;
                Some(ScaleRule {
                    shingler: (self.shingles.clone())
                        .ngram(ngram)
                        .latin_ngram(shingler.latin_ngram())
                        .build()?,
                    below,
                    overlap_end,
                })
            }
        };
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
            slots: self.slots,
            slot_agreement: self.slot_agreement,
            templates: self.templates,
            weighting: self.weighting,
            idf: None,
            boilerplate,
            normalizer,
            shingler,
            scale,
            hasher,
            lsh,
            threshold: self.threshold,
            measure: self.measure,
            agreement_floor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Registered, Setting};

    #[test]
    fn shingle_settings_reach_the_method() {
        let method = MinHashBuilder::new()
            .tokenizer(Tokenizer::Auto)
            .ngram(2)
            .latin_ngram(4)
            .remove_stopwords(true)
            .build()
            .unwrap();
        let settings = method.settings();
        let get = |name: &str| {
            settings
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.clone())
        };
        assert_eq!(get("tokenizer"), Some(Setting::Text("auto".into())));
        assert_eq!(get("ngram"), Some(Setting::Count(2)));
        assert_eq!(get("latin_ngram"), Some(Setting::Count(4)));
        assert_eq!(get("stopwords"), Some(Setting::Flag(true)));
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let error = MinHashBuilder::new().threshold(0.0).build().unwrap_err();
        assert_eq!(error.parameter(), "threshold");
        let error = MinHashBuilder::new()
            .common_shingles(Common::Check, 2.0)
            .build()
            .unwrap_err();
        assert_eq!(error.parameter(), "rare_threshold");
    }
}
