//! `topn`: the top-N feature fingerprint ("信息指纹", information fingerprint): the `top_n`
//! words of highest TF-IDF weight (term frequency in the document times the smoothed IDF of
//! a first pass over the corpus, [`CorpusStats::idf`]) hashed, as a set, into one 64-bit
//! fingerprint. Documents with equal fingerprints are candidates (then verified, see
//! [`crate::methods::shared::classic`]).
//!
//! Strengths and weaknesses (pinned by the tests): edits that leave a text's most
//! characteristic words alone (punctuation, a changed sentence in a long article, appended
//! boilerplate of common words) keep the fingerprint, and a lookup costs one hash; an edit
//! that adds or removes one of those words, or moves a word across the N-th place, changes
//! it. Ties in weight are broken by the word's hash, the same in every document. Documents
//! with fewer than `min_terms` distinct words are compared as exact copies only.

use std::sync::Arc;

use crate::corpus::CorpusStats;
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

/// The sketch of [`TopN`].
pub type TopNSketch = ClassicSketch<{ SketchKind::TopN.byte() }>;

/// The default `top_n`.
pub const DEFAULT_TOP_N: usize = 10;

/// The top-N TF-IDF fingerprint.
#[derive(Debug, Clone)]
pub struct TopN {
    normalizer: Normalizer,
    words: Shingler,
    verifier: Verifier,
    top_n: usize,
    min_terms: usize,
    idf: Option<Arc<CorpusStats>>,
}

impl TopN {
    /// The words of raw `text` with their counts, sorted by word.
    fn counts(&self, text: &str) -> Vec<(u64, u32)> {
        self.counts_normalized(&self.normalizer.normalize(text))
    }

    /// The words of `normalized` text with their counts, sorted by word.
    fn counts_normalized(&self, normalized: &str) -> Vec<(u64, u32)> {
        let mut words = self.words.shingle_hashes(normalized);
        words.sort_unstable();
        (words.chunk_by(|a, b| a == b))
            .map(|run| (run[0], run.len() as u32))
            .collect()
    }

    /// The `top_n` words of raw `text` by TF-IDF weight, best first (ties: smaller hash
    /// first).
    pub fn top_words(&self, text: &str) -> Vec<u64> {
        self.top(&self.counts(text))
    }

    fn top(&self, counts: &[(u64, u32)]) -> Vec<u64> {
        let mut weighted: Vec<(f64, u64)> = (counts.iter())
            .map(|&(word, count)| {
                let idf = self.idf.as_ref().map_or(1.0, |stats| stats.idf(word));
                (f64::from(count) * idf, word)
            })
            .collect();
        weighted.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        weighted.truncate(self.top_n);
        weighted.into_iter().map(|(_, word)| word).collect()
    }
}

impl Method for TopN {
    type Sketch = TopNSketch;

    fn name(&self) -> &'static str {
        "topn"
    }

    classic::verified_by!(verifier);

    /// Boilerplate lines and edge pieces leave the text before its words are weighed.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> TopNSketch {
        let body = (self.verifier).body(&self.normalizer, text, &mut notes.removed_lines);
        let counts = self.counts_normalized(&body.normalized);
        let few = counts.len() < self.min_terms;
        let keys = if few {
            Vec::new()
        } else {
            let mut top = self.top(&counts);
            top.sort_unstable();
            vec![classic::signature(0, &top)]
        };
        (self.verifier).sketch(&self.normalizer, (text, &body), keys, few)
    }

    /// Documents sharing a signature are candidates; with templates duplicate, a template's
    /// fillings meet through their template keys too.
    fn join(&self) -> Join<Self> {
        self.verifier.keys_join()
    }

    fn keys(&self, sketch: &TopNSketch, keys: &mut Vec<u64>) {
        keys.extend_from_slice(sketch.keys());
    }

    fn learns_from_corpus(&self) -> bool {
        true
    }

    /// The document's words (for their IDF) and its lines (boilerplate).
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        (self.verifier).corpus_features(&self.normalizer, text, features);
        features.extend(self.counts(text).into_iter().map(|(word, _)| word));
    }

    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        self.verifier.learn(corpus);
        self.idf = Some(Arc::clone(corpus));
    }

    /// The boilerplate limits, and `idf_min_df` 1: the IDF weights read the count of every
    /// word, so a distributed corpus pass (Spark), which keeps the counts that reach the least
    /// limit, keeps them all.
    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = self.verifier.learned_limits();
        limits.push(("idf_min_df", 1));
        limits
    }
}

impl Registered for TopN {
    const NAME: &'static str = "topn";
    const ABOUT: &'static str = "top-N TF-IDF words hashed into one fingerprint";

    fn params() -> Vec<ParamSpec> {
        let mut params = classic::verify_params();
        params.extend([
            ParamSpec {
                name: "top_n",
                kind: ParamKind::Count,
                default: Some("10"),
                help: "Words of highest TF-IDF weight in the fingerprint.",
                group: None,
            },
            MIN_TERMS_PARAM,
            stopwords_param(),
        ]);
        params.extend(NORMALIZE_PARAMS.iter().copied());
        params
    }

    fn from_params(params: &Params) -> Result<TopN> {
        let top_n: usize = params.get("top_n")?.unwrap_or(DEFAULT_TOP_N);
        if !(1..=1000).contains(&top_n) {
            return Err(Error::invalid(
                "top_n",
                format!("{top_n} (expected 1 to 1000)"),
            ));
        }
        let min_terms = min_terms(params)?;
        let normalizer = Normalizer::new(normalize_options(params)?);
        Ok(TopN {
            words: word_shingler(params)?,
            verifier: Verifier::from_params(params, &normalizer)?,
            normalizer,
            top_n,
            min_terms,
            idf: None,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = self.verifier.settings();
        settings.extend([
            ("top_n", Setting::Count(self.top_n as u64)),
            ("min_terms", Setting::Count(self.min_terms as u64)),
            ("stopwords", Setting::Flag(self.words.removes_stopwords())),
        ]);
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}
