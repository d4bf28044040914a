//! A small method for the stage tests: a document's sketch is the set of its words, its keys
//! are its words, and two documents are duplicates when the Jaccard similarity of their
//! word sets reaches the threshold.

use neardup_core::hash::{hash128_u64s, hash64};
use neardup_core::method::{SketchDecoder, SketchEncoder};
use neardup_core::{CorpusStats, Join, Method, Result, Sketch};

/// The method; every hook the stages call is a field.
#[derive(Clone, Debug)]
pub(crate) struct Words {
    pub(crate) threshold: f64,
    pub(crate) join: Join<Words>,
    /// Whether it learns from the corpus (it then records the documents counted).
    pub(crate) learns: bool,
    /// Its [`Method::common_limit`].
    pub(crate) common: Option<u64>,
    /// The documents its corpus pass counted.
    pub(crate) learned: Option<u64>,
}

impl Default for Words {
    fn default() -> Words {
        Words {
            threshold: 0.5,
            join: Join::SymmetricKeys,
            learns: false,
            common: None,
            learned: None,
        }
    }
}

/// The sorted, distinct hashes of a text's words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WordSet {
    pub(crate) words: Vec<u32>,
}

/// The hash of one word.
pub(crate) fn word(text: &str) -> u32 {
    hash64(text.as_bytes()) as u32
}

impl Sketch for WordSet {
    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
    fn identity(&self) -> u128 {
        let words: Vec<u64> = self.words.iter().map(|&w| u64::from(w)).collect();
        hash128_u64s(&words)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        SketchEncoder::new(out, 255).u32s(&self.words);
    }
    fn decode(bytes: &[u8]) -> Result<WordSet> {
        let mut from = SketchDecoder::new(bytes, 255, "words")?;
        let words = from.u32s()?;
        from.finish()?;
        Ok(WordSet { words })
    }
}

impl Method for Words {
    type Sketch = WordSet;
    fn name(&self) -> &'static str {
        "words"
    }
    fn sketch(&self, text: &str) -> WordSet {
        let mut words: Vec<u32> = text.split_whitespace().map(word).collect();
        words.sort_unstable();
        words.dedup();
        WordSet { words }
    }
    fn join(&self) -> Join<Words> {
        self.join
    }
    fn keys(&self, sketch: &WordSet, keys: &mut Vec<u64>) {
        keys.extend(sketch.words.iter().map(|&w| u64::from(w)));
    }
    fn learns_from_corpus(&self) -> bool {
        self.learns
    }
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        features.extend(self.sketch(text).words.iter().map(|&w| u64::from(w)));
    }
    fn learn(&mut self, corpus: &std::sync::Arc<CorpusStats>) {
        self.learned = Some(corpus.documents());
    }
    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        self.learned
            .map(|d| vec![("documents", d)])
            .unwrap_or_default()
    }
    fn common_marks(&self) -> Option<neardup_core::CommonMarks<Words>> {
        Some(neardup_core::CommonMarks {
            limit: |method, _| method.common,
            features: |_, sketch| &sketch.words,
            mark: |_, sketch, is_common| {
                let before = sketch.words.len();
                sketch.words.retain(|&w| !is_common(w));
                (before - sketch.words.len()) as u64
            },
            changes_keys: |_, _| true,
            crowds_only: true,
        })
    }
    fn similarity(&self, a: &WordSet, b: &WordSet) -> f64 {
        let shared = a
            .words
            .iter()
            .filter(|w| b.words.binary_search(w).is_ok())
            .count();
        let union = a.words.len() + b.words.len() - shared;
        if union == 0 {
            return 1.0;
        }
        shared as f64 / union as f64
    }
    fn threshold(&self) -> f64 {
        self.threshold
    }
}
