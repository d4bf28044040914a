//! `imatch`: I-Match (Chowdhury, Frieder, Grossman and McCabe 2002) and its multi-lexicon
//! variant (Kolcz, Chowdhury and Alspector 2004).
//!
//! A *lexicon* keeps the words whose inverse document frequency lies in a middle band: words
//! in almost every document say nothing about a text, words in one or two documents are
//! mostly typos, numbers and names that an edit adds or drops. The band is given in
//! normalised IDF, `nidf = ln(N / df) / ln(N)` (0 for a word in every document, 1 for a word
//! in one): `lexicon_low <= nidf <= lexicon_high`. The lexicon is learned from the corpus in
//! a first pass, or read from `lexicon_file` (a file `dedup --save-lexicon` wrote, or a
//! word list).
//!
//! A document's signature is a strong hash (xxh3-128) of the sorted set of its lexicon
//! words: two documents with the same lexicon words have the same signature, and one word
//! more or less changes it. The multi-lexicon variant adds `extra_lexicons` signatures, each
//! over the words of a lexicon that drops a random fraction `lexicon_drop` of the main one
//! (the same words for every document, chosen by a hash of the word and the lexicon's
//! number); documents sharing any signature are candidates. A word changed in one document is
//! then missed only by the lexicons that keep it.
//!
//! Strengths and weaknesses (pinned by the tests): copies that differ only in words outside
//! the lexicon (very common or very rare ones) match in one hash lookup; one lexicon word
//! added, removed or replaced breaks the single-lexicon signature; documents with fewer than
//! `min_terms` lexicon words are compared as exact copies only (a short text's few lexicon
//! words make false matches).

use std::sync::Arc;

use crate::boilerplate;
use crate::corpus::CorpusStats;
use crate::hash::mix64;
use crate::methods::shared::classic::word_shingler;
use crate::methods::shared::classic::{self, ClassicSketch, Verifier};
use crate::methods::shared::params::{
    min_terms, normalize_options, normalize_settings, stopwords_param, MIN_TERMS_PARAM,
    NORMALIZE_PARAMS,
};
use crate::normalize::Normalizer;
use crate::params::{ParamKind, ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::Shingler;
use crate::{Error, Join, Method, Result, SketchNotes};

/// The sketch of [`IMatch`].
pub type IMatchSketch = ClassicSketch<{ SketchKind::IMatch.byte() }>;

/// The first line of a lexicon file that `--save-lexicon` writes.
pub const LEXICON_HEADER: &str = "# neardup imatch lexicon v1";

/// The lexicon in use.
#[derive(Debug, Clone)]
enum Lexicon {
    /// Before the corpus pass: every word (a method built for the corpus pass only).
    Unlearned,
    /// Listed words (by feature hash, sorted) with their document frequencies (0 when read
    /// from a word list).
    Listed {
        words: Arc<foldhash::HashSet<u64>>,
        saved: Arc<Vec<(u64, u32)>>,
        from_file: bool,
    },
    /// A document-frequency band over a count-min table, which cannot list its words.
    Band {
        stats: Arc<CorpusStats>,
        min_df: u32,
        max_df: u32,
    },
}

/// I-Match with optional extra lexicons.
#[derive(Debug, Clone)]
pub struct IMatch {
    normalizer: Normalizer,
    words: Shingler,
    verifier: Verifier,
    low: f64,
    high: f64,
    extra: usize,
    drop: f64,
    min_terms: usize,
    seed: u64,
    lexicon: Lexicon,
}

impl IMatch {
    /// The distinct word features of raw `text`, sorted.
    fn words(&self, text: &str) -> Vec<u64> {
        self.words_normalized(&self.normalizer.normalize(text))
    }

    /// The distinct word features of `normalized` text, sorted.
    fn words_normalized(&self, normalized: &str) -> Vec<u64> {
        let mut words = self.words.shingle_hashes(normalized);
        words.sort_unstable();
        words.dedup();
        words
    }

    fn in_lexicon(&self, word: u64) -> bool {
        let key = word_key(word);
        match &self.lexicon {
            Lexicon::Unlearned => true,
            Lexicon::Listed { words, .. } => words.contains(&key),
            Lexicon::Band {
                stats,
                min_df,
                max_df,
            } => (*min_df..=*max_df).contains(&stats.document_frequency(key)),
        }
    }

    /// Whether the lexicon is still to be learned from the corpus (none was given).
    fn learns_lexicon(&self) -> bool {
        matches!(self.lexicon, Lexicon::Unlearned)
    }

    /// Whether extra lexicon `k` (1-based) drops `word`.
    fn drops(&self, k: usize, word: u64) -> bool {
        let draw = mix64(word ^ mix64(self.seed.wrapping_mul(0x9e37_79b9) ^ k as u64));
        (draw as f64) < self.drop * 2f64.powi(64)
    }

    /// The document-frequency band `[min_df, max_df]` of `documents` documents.
    fn band(&self, documents: u64) -> (u32, u32) {
        let n = documents.max(1) as f64;
        // nidf <= high  <=>  df >= N^(1 - high);  nidf >= low  <=>  df <= N^(1 - low).
        let min_df = n.powf(1.0 - self.high).ceil().max(1.0);
        let max_df = n.powf(1.0 - self.low).floor().max(min_df);
        (min_df as u32, max_df.min(f64::from(u32::MAX)) as u32)
    }

    /// The signatures of a document's lexicon words (sorted): the main lexicon's, then one
    /// per extra lexicon that keeps at least `min_terms` of them.
    fn signatures(&self, terms: &[u64]) -> Vec<u64> {
        let mut keys = vec![classic::signature(0, terms)];
        let mut kept = Vec::with_capacity(terms.len());
        for k in 1..=self.extra {
            kept.clear();
            kept.extend(terms.iter().copied().filter(|&t| !self.drops(k, t)));
            // Emitted even when the lexicon kept every word: another document may have one
            // word more, which this lexicon drops.
            if kept.len() >= self.min_terms {
                keys.push(classic::signature(k as u64, &kept));
            }
        }
        keys
    }

    /// The lexicon words of raw `text`, sorted (for tests and inspection).
    pub fn lexicon_words(&self, text: &str) -> Vec<u64> {
        (self.words(text).into_iter())
            .filter(|&w| self.in_lexicon(w))
            .collect()
    }
}

/// The key of a word in the corpus table and the lexicon: its hash with the top bit clear,
/// the bit that keys of boilerplate lines, counted in the same table, have set
/// ([`boilerplate::shingle_key`]). A saved lexicon's hashes are read the same way, so a
/// lexicon saved with the bit set still matches.
fn word_key(word: u64) -> u64 {
    boilerplate::shingle_key(word)
}

/// Parses a lexicon file: `0x<hex> <df>` lines as `--save-lexicon` writes them, or one word
/// per line (normalised like text); blank lines and `#` comments skipped.
fn parse_lexicon(text: &str, normalizer: &Normalizer, words: &Shingler) -> Result<Lexicon> {
    let mut saved: Vec<(u64, u32)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some(hex) = first.strip_prefix("0x") {
            let bad = |what: &str| {
                Error::invalid_owned(
                    "lexicon_file".into(),
                    format!("line {}: {what} in {line:?}", number + 1),
                )
            };
            let hash = u64::from_str_radix(hex, 16).map_err(|_| bad("not a 64-bit hex hash"))?;
            let df = match fields.next() {
                Some(df) => df.parse().map_err(|_| bad("not a document frequency"))?,
                None => 0,
            };
            saved.push((word_key(hash), df));
        } else {
            let normalized = normalizer.normalize(line);
            for word in words.shingle_hashes(&normalized) {
                saved.push((word_key(word), 0));
            }
        }
    }
    if saved.is_empty() {
        return Err(Error::invalid("lexicon_file", "no word in the lexicon"));
    }
    saved.sort_unstable();
    saved.dedup_by_key(|entry| entry.0);
    Ok(Lexicon::Listed {
        words: Arc::new(saved.iter().map(|entry| entry.0).collect()),
        saved: Arc::new(saved),
        from_file: true,
    })
}

impl Method for IMatch {
    type Sketch = IMatchSketch;

    fn name(&self) -> &'static str {
        "imatch"
    }

    classic::verified_by!(verifier);

    /// Boilerplate lines and edge pieces leave the text before its words are looked up.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> IMatchSketch {
        let body = (self.verifier).body(&self.normalizer, text, &mut notes.removed_lines);
        let terms: Vec<u64> = (self.words_normalized(&body.normalized).into_iter())
            .filter(|&w| self.in_lexicon(w))
            .collect();
        let few = terms.len() < self.min_terms;
        let keys = if few {
            Vec::new()
        } else {
            self.signatures(&terms)
        };
        (self.verifier).sketch(&self.normalizer, (text, &body), keys, few)
    }

    /// Documents sharing a signature are candidates; with templates duplicate, a template's
    /// fillings meet through their template keys too.
    fn join(&self) -> Join<Self> {
        self.verifier.keys_join()
    }

    fn keys(&self, sketch: &IMatchSketch, keys: &mut Vec<u64>) {
        keys.extend_from_slice(sketch.keys());
    }

    /// The lexicon (unless given) and boilerplate lines.
    fn learns_from_corpus(&self) -> bool {
        self.learns_lexicon() || self.verifier.learns_from_corpus()
    }

    /// The document's words (their keys, [`word_key`]) and its lines (boilerplate).
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        (self.verifier).corpus_features(&self.normalizer, text, features);
        if self.learns_lexicon() {
            features.extend(self.words(text).into_iter().map(word_key));
        }
    }

    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        self.verifier.learn(corpus);
        if !self.learns_lexicon() {
            return;
        }
        let (min_df, max_df) = self.band(corpus.documents());
        let is_word = |key: u64| key == word_key(key);
        self.lexicon = match corpus.frequent_features(is_word, min_df) {
            Some(found) => {
                let saved: Vec<(u64, u32)> = (found.into_iter())
                    .map(|word| (word, corpus.document_frequency(word)))
                    .filter(|&(_, df)| df <= max_df)
                    .collect();
                Lexicon::Listed {
                    words: Arc::new(saved.iter().map(|entry| entry.0).collect()),
                    saved: Arc::new(saved),
                    from_file: false,
                }
            }
            None => Lexicon::Band {
                stats: Arc::clone(corpus),
                min_df,
                max_df,
            },
        };
    }

    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = self.verifier.learned_limits();
        limits.extend(match &self.lexicon {
            Lexicon::Listed {
                saved, from_file, ..
            } => {
                let mut limits = vec![("lexicon_words", saved.len() as u64)];
                if !from_file {
                    let min = saved.iter().map(|e| e.1).min().unwrap_or(0);
                    let max = saved.iter().map(|e| e.1).max().unwrap_or(0);
                    limits.extend([
                        ("lexicon_min_df", u64::from(min)),
                        ("lexicon_max_df", u64::from(max)),
                    ]);
                }
                limits
            }
            Lexicon::Band { min_df, max_df, .. } => vec![
                ("lexicon_min_df", u64::from(*min_df)),
                ("lexicon_max_df", u64::from(*max_df)),
            ],
            Lexicon::Unlearned => Vec::new(),
        });
        limits
    }

    fn lexicon(&self) -> Option<Result<String>> {
        Some(match &self.lexicon {
            Lexicon::Listed { saved, .. } => {
                let mut out = format!(
                    "{LEXICON_HEADER}: {} words (feature hash, document frequency); nidf band \
                     [{}, {}]\n",
                    saved.len(),
                    self.low,
                    self.high
                );
                for (word, df) in saved.iter() {
                    out.push_str(&format!("0x{word:016x} {df}\n"));
                }
                Ok(out)
            }
            Lexicon::Band { .. } => Err(Error::invalid(
                "save_lexicon",
                "the corpus pass counted approximately (count-min) and cannot list the \
                 lexicon: raise --corpus-memory",
            )),
            Lexicon::Unlearned => Err(Error::invalid("save_lexicon", "no lexicon was learned")),
        })
    }
}

fn fraction(params: &Params, name: &'static str, default: f64) -> Result<f64> {
    let value = params.get(name)?.unwrap_or(default);
    if !(0.0..=1.0).contains(&value) {
        return Err(Error::invalid(
            name,
            format!("{value} (expected 0 <= x <= 1)"),
        ));
    }
    Ok(value)
}

impl Registered for IMatch {
    const NAME: &'static str = "imatch";
    const ABOUT: &'static str =
        "I-Match: a hash of the document's mid-IDF words, with extra lexicons (multi-lexicon)";

    fn params() -> Vec<ParamSpec> {
        let mut params = classic::verify_params();
        params.extend([
            ParamSpec {
                name: "lexicon_low",
                kind: ParamKind::Number,
                default: Some("0.2"),
                help: "Lowest normalised IDF of a lexicon word (0: in every document, 1: in one).",
                group: Some("Lexicon"),
            },
            ParamSpec {
                name: "lexicon_high",
                kind: ParamKind::Number,
                default: Some("0.9"),
                help: "Highest normalised IDF of a lexicon word.",
                group: Some("Lexicon"),
            },
            ParamSpec {
                name: "extra_lexicons",
                kind: ParamKind::Count,
                default: Some("10"),
                help: "Extra lexicons of the multi-lexicon variant (0: the original I-Match).",
                group: Some("Lexicon"),
            },
            ParamSpec {
                name: "lexicon_drop",
                kind: ParamKind::Number,
                default: Some("0.3"),
                help: "Fraction of the lexicon's words each extra lexicon drops.",
                group: Some("Lexicon"),
            },
            MIN_TERMS_PARAM,
            ParamSpec {
                name: "lexicon_file",
                kind: ParamKind::File,
                default: None,
                help: "A lexicon instead of the corpus pass: a file written by --save-lexicon, \
                       or one word per line.",
                group: Some("Lexicon"),
            },
            ParamSpec {
                name: "seed",
                kind: ParamKind::Count,
                default: Some("1"),
                help: "Seed of the random choice of the words each extra lexicon drops.",
                group: None,
            },
            stopwords_param(),
        ]);
        params.extend(NORMALIZE_PARAMS.iter().copied());
        params
    }

    fn from_params(params: &Params) -> Result<IMatch> {
        let normalizer = Normalizer::new(normalize_options(params)?);
        let words = word_shingler(params)?;
        let low = fraction(params, "lexicon_low", 0.2)?;
        let high = fraction(params, "lexicon_high", 0.9)?;
        if low > high {
            return Err(Error::invalid(
                "lexicon_low",
                format!("{low} is above lexicon_high {high}"),
            ));
        }
        let extra: usize = params.get("extra_lexicons")?.unwrap_or(10);
        if extra > 64 {
            return Err(Error::invalid(
                "extra_lexicons",
                format!("{extra} (expected at most 64)"),
            ));
        }
        let min_terms = min_terms(params)?;
        let lexicon = match params.raw("lexicon_file") {
            Some(text) => parse_lexicon(text, &normalizer, &words)?,
            None => Lexicon::Unlearned,
        };
        Ok(IMatch {
            verifier: Verifier::from_params(params, &normalizer)?,
            low,
            high,
            extra,
            drop: fraction(params, "lexicon_drop", 0.3)?,
            min_terms,
            seed: params.get("seed")?.unwrap_or(1),
            lexicon,
            normalizer,
            words,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = self.verifier.settings();
        settings.extend([
            ("lexicon_low", Setting::Number(self.low)),
            ("lexicon_high", Setting::Number(self.high)),
            ("extra_lexicons", Setting::Count(self.extra as u64)),
            ("lexicon_drop", Setting::Number(self.drop)),
            ("min_terms", Setting::Count(self.min_terms as u64)),
            ("seed", Setting::Count(self.seed)),
            ("stopwords", Setting::Flag(self.words.removes_stopwords())),
        ]);
        if let Lexicon::Listed {
            saved,
            from_file: true,
            ..
        } = &self.lexicon
        {
            settings.push((
                "lexicon_file",
                Setting::Text(format!("{} words", saved.len())),
            ));
        }
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}
