//! How the registry builds `minhash`: its parameters, their parsing and its settings.

use crate::length_rule::NgramRule;
use crate::methods::shared::params::{
    boilerplate_params, boilerplate_settings, normalize_options, normalize_settings,
    BOILERPLATE_PARAMS, MEASURE_PARAM, NORMALIZE_PARAMS, SHINGLE_PARAMS, TEMPLATE_PARAMS,
    THRESHOLD_PARAM,
};
use crate::params::{ParamKind, ParamSpec, Params, Registered, Setting};
use crate::tokenize::Tokenizer;
use crate::{Error, Result};

use super::options::{DEFAULT_NGRAM_RULE, DEFAULT_THRESHOLD_RULE};
use super::{MinHash, MinHashBuilder, Slots, Weighting, DEFAULT_RARE_THRESHOLD};
use crate::measure::SetMeasure;
use crate::slots::DEFAULT_SLOT_AGREEMENT;

/// What minhash does with common shingles (the boilerplate group, before the template check's
/// parameters).
const COMMON_PARAM: ParamSpec = ParamSpec {
    name: "common_shingles",
    kind: ParamKind::Choice(&["check", "drop"]),
    default: Some("check"),
    help: "Shingles in more than --max-df documents: `check` (a pair must also agree \
               on its rare shingles, at --rare-threshold) or `drop` (they leave the set).",
    group: Some("Boilerplate"),
};

impl Registered for MinHash {
    const NAME: &'static str = "minhash";
    const ABOUT: &'static str = "MinHash-LSH on shingles, every candidate verified";

    fn params() -> Vec<ParamSpec> {
        let own = [
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
        [THRESHOLD_PARAM, MEASURE_PARAM]
            .iter()
            .chain(&[COMMON_PARAM])
            .chain(TEMPLATE_PARAMS)
            .chain(&own)
            .chain(shared)
            .copied()
            .collect()
    }

    fn from_params(params: &Params) -> Result<MinHash> {
        let mut builder = MinHashBuilder::new().normalize(normalize_options(params)?);
        // Shingle sizes and thresholds by length are the defaults where they were measured:
        // the `auto` tokeniser, unweighted Jaccard, and neither parameter given.
        let by_length = params.get::<Tokenizer>("tokenizer")?.unwrap_or_default()
            == Tokenizer::Auto
            && params.get::<SetMeasure>("measure")?.unwrap_or_default() == SetMeasure::Jaccard
            && params.get::<Weighting>("weighting")?.unwrap_or_default() == Weighting::None
            && params.raw("ngram").is_none();
        match params.get("threshold")? {
            Some(rule) => builder = builder.threshold_rule(rule),
            None if by_length => builder = builder.threshold_rule(DEFAULT_THRESHOLD_RULE.parse()?),
            None => {}
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
        let slots = params.get("slots")?.unwrap_or(Slots::Numbers);
        let agreement = params
            .get("slot_agreement")?
            .unwrap_or(DEFAULT_SLOT_AGREEMENT);
        builder = builder.slots(slots, agreement);
        if let Some(templates) = params.get("templates")? {
            builder = builder.templates(templates);
        }
        if let Some(tokenizer) = params.get("tokenizer")? {
            builder = builder.tokenizer(tokenizer);
        }
        match params.get::<NgramRule>("ngram")? {
            Some(rule) => builder = builder.ngram_rule(&rule)?,
            None if by_length => builder = builder.ngram_rule(&DEFAULT_NGRAM_RULE.parse()?)?,
            None => {}
        }
        if let Some(crate::tokenize::ShingleSize(ngram)) = params.get("latin_ngram")? {
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
            ("slots", Setting::Text(self.slots.name().to_owned())),
            ("slot_agreement", Setting::Number(self.slot_agreement)),
            ("templates", Setting::Text(self.templates.name().to_owned())),
        ]);
        settings.extend(boilerplate_settings(&self.boilerplate));
        settings.extend(normalize_settings(self.normalizer.options()));
        // By length: added beside `ngram` (the long size) and the run's `threshold` (the
        // least), whose types stay what tooling reads.
        if let Some(rule) = &self.scale {
            let (short, long) = (rule.shingler.ngram(), shingler.ngram());
            let text = format!("<{}:{short},{long}", rule.below);
            settings.push(("ngram_by_length", Setting::Text(text)));
        }
        if !self.threshold.is_fixed() {
            let text = self.threshold.to_string();
            settings.push(("threshold_by_length", Setting::Text(text)));
        }
        settings
    }
}
