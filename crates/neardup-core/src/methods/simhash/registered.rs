//! How the registry builds `simhash`: its parameters, their parsing and its settings, and
//! the IDF table it reads.

use std::sync::Arc;

use super::*;
use crate::tokenize::ShingleSize;

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
        let shared = (BOILERPLATE_PARAMS.iter().chain(TEMPLATE_PARAMS))
            .chain(SHINGLE_PARAMS)
            .chain(NORMALIZE_PARAMS);
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
                format!(
                    "{verify_threshold} (expected {})",
                    crate::error::THRESHOLD_RANGE
                ),
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
            .ngram((params.get::<ShingleSize>("ngram")?).map_or(default_ngram(tokenizer), |n| n.0));
        if let Some(ShingleSize(ngram)) = params.get("latin_ngram")? {
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
        let (max_df, line_df, listed) = boilerplate_params(params)?;
        let boilerplate = Boilerplate::new(max_df, line_df, &listed, &normalizer);
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
            template: TemplateCheck::from_params(params)?,
            boilerplate,
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
        settings.extend(boilerplate_settings(&self.boilerplate));
        settings.extend(self.template.settings());
        settings.extend(normalize_settings(&self.normalize));
        settings
    }
}
