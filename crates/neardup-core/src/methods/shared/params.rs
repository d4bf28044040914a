//! The parameter groups several methods share, with their parsing and their settings:
//! normalisation, shingles, boilerplate, and the `threshold`, `measure` and `min_terms`
//! parameters whose spec must be the same in every method that has them (the CLI has one
//! flag per name).

use crate::boilerplate::{Boilerplate, DfLimit, DEFAULT_BOILERPLATE_DF, DEFAULT_MAX_DF};
use crate::method::JoinMeasure;
use crate::normalize::NormalizeOptions;
use crate::params::{param_value_by_choice, ParamKind, ParamSpec, Params, Setting};
use crate::Result;

/// The normalisation parameters every text method shares.
pub const NORMALIZE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "chinese_variant",
        kind: ParamKind::Choice(&["simplified", "keep"]),
        default: Some("simplified"),
        help: "Chinese script: `simplified` (convert traditional) or `keep`.",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "strip_html",
        kind: ParamKind::Flag,
        default: None,
        help: "Strip HTML tags and decode entities (web pages).",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "keep_punctuation",
        kind: ParamKind::Flag,
        default: None,
        help: "Keep punctuation and symbols (by default they become spaces).",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "keep_case",
        kind: ParamKind::Flag,
        default: None,
        help: "Keep letter case (by default text is lowercased).",
        group: Some("Normalisation"),
    },
];

/// The normalisation options of [`NORMALIZE_PARAMS`] in `params`.
///
/// # Errors
/// A value that does not parse, naming the parameter.
pub fn normalize_options(params: &Params) -> Result<NormalizeOptions> {
    Ok(NormalizeOptions {
        lowercase: !params.flag("keep_case")?,
        chinese_variant: params.get("chinese_variant")?.unwrap_or_default(),
        strip_punctuation: !params.flag("keep_punctuation")?,
        strip_html: params.flag("strip_html")?,
    })
}

/// The settings of normalisation options, for [`Registered::settings`](crate::params::Registered::settings).
pub fn normalize_settings(options: &NormalizeOptions) -> Vec<(&'static str, Setting)> {
    vec![
        (
            "chinese_variant",
            Setting::Text(options.chinese_variant.name().to_owned()),
        ),
        ("strip_html", Setting::Flag(options.strip_html)),
        (
            "keep_punctuation",
            Setting::Flag(!options.strip_punctuation),
        ),
        ("keep_case", Setting::Flag(!options.lowercase)),
    ]
}

/// The shingling parameters of the set methods (besides `ngram`, which each method
/// documents with its own default).
pub const SHINGLE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "tokenizer",
        kind: ParamKind::Choice(&["auto", "token", "char", "word"]),
        default: Some("auto"),
        help: "Shingles: `auto` (character n-grams sized by script), `token` (one token per \
               CJK character and per word), `char` (character n-grams), `word` (jieba for \
               Chinese).",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "ngram",
        kind: ParamKind::Count,
        default: None,
        help: "Tokens per shingle; for `auto`, characters per shingle on CJK text [default: \
               minhash \"<24:2,3\" for `auto` (2 under 24 characters, 3 otherwise; a rule \
               by length, minhash only), 5 otherwise; supershingle 3 for `auto`, 5 otherwise; \
               simhash, join and ngram 2 for `auto` and `char`, 1 otherwise].",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "latin_ngram",
        kind: ParamKind::Count,
        default: None,
        help: "For `auto`: characters per shingle on non-CJK text [default: ngram + 2].",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "stopwords",
        kind: ParamKind::Flag,
        default: None,
        help: "Remove English and Chinese stopwords before shingling.",
        group: Some("Shingles"),
    },
];

/// The template check's parameters (see [`crate::methods::shared::template`]): `minhash`,
/// `simhash`, `join`, `ngram` and the classic methods.
pub const TEMPLATE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "rare_threshold",
        kind: ParamKind::Number,
        default: Some("0.4"),
        help: "Least Jaccard of the rare shingles (in at most --max-df documents) of a pair \
               of crowded documents (minhash with --common-shingles check; the other methods \
               when a side is mostly common shingles).",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "slots",
        kind: ParamKind::Choice(&["numbers", "off"]),
        default: Some("numbers"),
        help: "Parts of a pair that must agree besides its shingles: `numbers` (two \
               fillings of one template, where each side has at least two numbers the \
               other lacks, must reach --slot-agreement on the Jaccard of their \
               numbers; methods other than minhash check pairs of two crowded documents \
               only) or `off`.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "slot_agreement",
        kind: ParamKind::Number,
        default: Some("0.2"),
        help: "With --slots numbers: least Jaccard of the numbers of a pair whose sides \
               each carry at least two numbers the other lacks.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "templates",
        kind: ParamKind::Choice(&["distinct", "duplicate"]),
        default: Some("distinct"),
        help: "What a template means, for documents whose shingles are mostly common \
               (shared by a crowd): `distinct` (two fillings of one template, such as \
               two bank notices, are different documents; their copies are duplicates) \
               or `duplicate` (every filling of one template is a duplicate: mass-sent \
               spam and ad copy).",
        group: Some("Boilerplate"),
    },
];

/// The boilerplate parameters of the set methods (see [`crate::boilerplate`]).
pub const BOILERPLATE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "max_df",
        kind: ParamKind::Text,
        default: Some(DEFAULT_MAX_DF),
        help: "Shingles found in more documents than this are common (a template's fixed \
               wording; see --common-shingles): a count such as 50, a fraction such as 0.01 \
               or 1% (at least 50 documents), or off.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "boilerplate_df",
        kind: ParamKind::Text,
        default: Some(DEFAULT_BOILERPLATE_DF),
        help: "Lines (or sentences) found in at least this many documents are boilerplate and \
               leave the similarity: a count, a fraction (at least 20 documents), or off.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "boilerplate_file",
        kind: ParamKind::File,
        default: None,
        help: "Boilerplate lines, one per line (a list written by --boilerplate-out, or your \
               own), removed whatever the corpus.",
        group: Some("Boilerplate"),
    },
];

/// The boilerplate settings of [`BOILERPLATE_PARAMS`] in `params`, as
/// `(max_df, boilerplate_df, listed lines)`.
///
/// # Errors
/// A limit that does not parse, naming its parameter.
pub fn boilerplate_params(params: &Params) -> Result<(DfLimit, DfLimit, String)> {
    let max_df = DfLimit::parse(params.raw("max_df").unwrap_or(DEFAULT_MAX_DF), "max_df")?;
    let line_df = DfLimit::parse(
        params
            .raw("boilerplate_df")
            .unwrap_or(DEFAULT_BOILERPLATE_DF),
        "boilerplate_df",
    )?;
    let listed = params.raw("boilerplate_file").unwrap_or("").to_owned();
    Ok((max_df, line_df, listed))
}

/// The settings of a [`Boilerplate`], for the stats file.
pub fn boilerplate_settings(boilerplate: &Boilerplate) -> Vec<(&'static str, Setting)> {
    let mut settings = vec![
        ("max_df", Setting::Text(boilerplate.max_df().to_string())),
        (
            "boilerplate_df",
            Setting::Text(boilerplate.line_df().to_string()),
        ),
    ];
    if boilerplate.listed_lines() > 0 {
        settings.push((
            "boilerplate_file",
            Setting::Text(format!("{} lines", boilerplate.listed_lines())),
        ));
    }
    settings
}

/// The stopword flag as [`SHINGLE_PARAMS`] declares it.
pub fn stopwords_param() -> ParamSpec {
    *SHINGLE_PARAMS
        .iter()
        .find(|p| p.name == "stopwords")
        .expect("SHINGLE_PARAMS has stopwords")
}

/// The `threshold` parameter's help, shared by every method that has it.
pub const THRESHOLD_HELP: &str = "Similarity threshold of the verification measure [default: \
                                  minhash \"<25:0.43,0.4\" with its default shingles, else \
                                  0.4; supershingle, imatch, topn, segments and sentences \
                                  0.4, or 0.7 with --verify edit; join and ngram 0.5, or 0.7 \
                                  with --measure edit]. minhash, join and ngram also take a \
                                  rule by length, \"<20:0.3,<60:0.35,0.4\": a pair takes the \
                                  value at its shorter document's length in features (shingles; \
                                  characters with --measure edit); see docs/methods.md.";

/// The `threshold` parameter: its default depends on the method and the measure (the help
/// lists them).
pub const THRESHOLD_PARAM: ParamSpec = ParamSpec {
    name: "threshold",
    kind: ParamKind::Text,
    default: None,
    help: THRESHOLD_HELP,
    group: None,
};

/// The names `measure` accepts, shared by every method that has it (each method refuses the
/// ones it cannot compute, by name).
pub const MEASURES: &[&str] = &["jaccard", "containment", "cosine", "edit"];

/// The `measure` parameter's help, shared by every method that has it.
pub const MEASURE_HELP: &str = "Verification measure: `jaccard` or `containment` (minhash; \
                                containment of the smaller set in the larger), or also \
                                `cosine` of the shingle sets and `edit` (normalised edit \
                                similarity of the characters) for join and ngram.";

/// The `measure` parameter.
pub const MEASURE_PARAM: ParamSpec = ParamSpec {
    name: "measure",
    kind: ParamKind::Choice(MEASURES),
    default: Some("jaccard"),
    help: MEASURE_HELP,
    group: None,
};

/// The `min_terms` parameter of the word-signature methods (`imatch`, `topn`).
pub const MIN_TERMS_PARAM: ParamSpec = ParamSpec {
    name: "min_terms",
    kind: ParamKind::Count,
    default: Some("3"),
    help: "Fewest lexicon words of a signature; documents with fewer are compared as exact \
           copies only.",
    group: Some("Lexicon"),
};

/// The value of [`MIN_TERMS_PARAM`] in `params`.
///
/// # Errors
/// A value that does not parse, or 0.
pub fn min_terms(params: &Params) -> Result<usize> {
    let min_terms: usize = params.get("min_terms")?.unwrap_or(3);
    if min_terms == 0 {
        return Err(crate::Error::invalid(
            "min_terms",
            "0 (expected at least 1)",
        ));
    }
    Ok(min_terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_round_trips_through_its_settings() {
        let params = Params::new()
            .set("keep_case", "true")
            .set("chinese_variant", "keep");
        let options = normalize_options(&params).unwrap();
        assert!(!options.lowercase && options.strip_punctuation && !options.strip_html);
        let mut again = Params::new();
        for (name, setting) in normalize_settings(&options) {
            again.insert(name, setting.to_string());
        }
        assert_eq!(normalize_options(&again).unwrap(), options);
    }

    #[test]
    fn boilerplate_limits_parse_and_name_their_parameter() {
        let (max_df, line_df, listed) = boilerplate_params(&Params::new()).unwrap();
        assert_eq!(max_df, DfLimit::parse(DEFAULT_MAX_DF, "max_df").unwrap());
        assert_eq!(
            line_df,
            DfLimit::parse(DEFAULT_BOILERPLATE_DF, "x").unwrap()
        );
        assert!(listed.is_empty());
        let error = boilerplate_params(&Params::new().set("max_df", "x")).unwrap_err();
        assert_eq!(error.parameter(), "max_df");
    }

    #[test]
    fn min_terms_refuses_zero() {
        assert_eq!(min_terms(&Params::new()).unwrap(), 3);
        assert_eq!(
            min_terms(&Params::new().set("min_terms", "0"))
                .unwrap_err()
                .parameter(),
            "min_terms"
        );
        assert_eq!(stopwords_param().name, "stopwords");
    }
}

/// The measure of a short-text method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShortMeasure {
    /// Jaccard of the shingle sets.
    #[default]
    Jaccard,
    /// Containment of the smaller shingle set in the larger (the overlap coefficient).
    Containment,
    /// Cosine of the shingle sets.
    Cosine,
    /// Edit similarity of the normalised characters.
    Edit,
}

impl ShortMeasure {
    pub(crate) fn set_measure(self) -> Option<JoinMeasure> {
        match self {
            ShortMeasure::Jaccard => Some(JoinMeasure::Jaccard),
            ShortMeasure::Containment => Some(JoinMeasure::Containment),
            ShortMeasure::Cosine => Some(JoinMeasure::Cosine),
            ShortMeasure::Edit => None,
        }
    }
}

crate::named_choices!(ShortMeasure as "measure" {
    Jaccard => "jaccard",
    Containment => "containment" | "overlap",
    Cosine => "cosine",
    Edit => "edit",
});

param_value_by_choice!(ShortMeasure);
