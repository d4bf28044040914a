//! Tokenisers and shingling.
//!
//! A [`Shingler`] turns *normalised* text (see [`crate::normalize`]) into a sorted,
//! deduplicated set of 64-bit shingle hashes: every run of `n` consecutive tokens is one
//! shingle. Token kinds:
//!
//! - [`Tokenizer::Char`]: every non-space character is a token (character n-grams).
//! - [`Tokenizer::Word`]: Chinese runs are segmented with jieba, other runs split at Unicode
//!   word boundaries.
//! - [`Tokenizer::Auto`] (default): one token per CJK character (Han, kana, Hangul, Thai),
//!   one per word elsewhere, so a mixed Chinese/English document gets character n-grams on
//!   its Chinese and word n-grams on its English, in one shingle stream.
//!
//! A document with at least one token but fewer than `n` has one shingle made of all its
//! tokens, so short texts still match their exact copies (and only them). A document with no
//! token has no shingle: [`ShingleSet::is_empty`] tells, and methods never match it.

use std::sync::OnceLock;

use unicode_segmentation::UnicodeSegmentation;

use crate::hash::{hash64, mix64};
use crate::{Error, Result};

/// How text is split into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tokenizer {
    /// One token per CJK character, one per word elsewhere.
    #[default]
    Auto,
    /// One token per non-space character.
    Char,
    /// Words: jieba for Chinese, Unicode word boundaries elsewhere.
    Word,
}

impl std::str::FromStr for Tokenizer {
    type Err = Error;
    fn from_str(s: &str) -> Result<Tokenizer> {
        match s {
            "auto" => Ok(Tokenizer::Auto),
            "char" => Ok(Tokenizer::Char),
            "word" => Ok(Tokenizer::Word),
            _ => Err(Error::invalid(
                "tokenizer",
                format!("{s:?} (expected auto, char or word)"),
            )),
        }
    }
}

/// True for characters written without spaces between words: Han ideographs, kana, Hangul,
/// Thai, Lao, Khmer, Myanmar.
#[inline]
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF | 0x3005..=0x3007 | 0x3021..=0x3029 | 0x3040..=0x30FF | 0x3100..=0x312F
        | 0x3130..=0x318F | 0x31A0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF
        | 0xF900..=0xFAFF | 0x1100..=0x11FF | 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF
        | 0x20000..=0x3FFFF)
}

/// The hashes of a document's shingles: sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShingleSet {
    hashes: Box<[u64]>,
}

impl ShingleSet {
    /// Builds a set from arbitrary hashes (sorted and deduplicated here).
    pub fn from_hashes(mut hashes: Vec<u64>) -> ShingleSet {
        hashes.sort_unstable();
        hashes.dedup();
        ShingleSet {
            hashes: hashes.into_boxed_slice(),
        }
    }

    /// The sorted hashes.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Number of distinct shingles.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when the document had no token at all.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

/// Builder of [`Shingler`].
#[derive(Debug, Clone)]
pub struct ShinglerBuilder {
    tokenizer: Tokenizer,
    ngram: usize,
    stopwords: bool,
}

impl Default for ShinglerBuilder {
    fn default() -> Self {
        ShinglerBuilder {
            tokenizer: Tokenizer::Auto,
            ngram: 5,
            stopwords: false,
        }
    }
}

impl ShinglerBuilder {
    /// Defaults: `auto` tokens, 5-grams, stopwords kept.
    pub fn new() -> ShinglerBuilder {
        ShinglerBuilder::default()
    }
    /// The tokeniser.
    pub fn tokenizer(mut self, tokenizer: Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }
    /// Tokens per shingle (1 to 64).
    pub fn ngram(mut self, ngram: usize) -> Self {
        self.ngram = ngram;
        self
    }
    /// Drop English and Chinese stopwords (ISO lists of the `stop-words` crate) before
    /// shingling.
    pub fn remove_stopwords(mut self, yes: bool) -> Self {
        self.stopwords = yes;
        self
    }
    /// Checks the parameters.
    ///
    /// # Errors
    /// When `ngram` is 0 or above 64.
    pub fn build(self) -> Result<Shingler> {
        if !(1..=64).contains(&self.ngram) {
            return Err(Error::invalid(
                "ngram",
                format!("{} (expected 1 to 64)", self.ngram),
            ));
        }
        Ok(Shingler {
            tokenizer: self.tokenizer,
            ngram: self.ngram,
            stopwords: self.stopwords,
        })
    }
}

/// Turns normalised text into a [`ShingleSet`].
#[derive(Debug, Clone)]
pub struct Shingler {
    tokenizer: Tokenizer,
    ngram: usize,
    stopwords: bool,
}

impl Shingler {
    /// Tokens per shingle.
    pub fn ngram(&self) -> usize {
        self.ngram
    }

    /// The tokeniser.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// The hashes of the tokens of `text`, in order.
    pub fn token_hashes(&self, text: &str) -> Vec<u64> {
        let mut tokens = Vec::with_capacity(text.len() / 2);
        let mut push = |token: &str| {
            if !(self.stopwords && is_stopword(token)) {
                tokens.push(token_hash(token));
            }
        };
        match self.tokenizer {
            Tokenizer::Char => text.split(' ').flat_map(split_chars).for_each(&mut push),
            Tokenizer::Auto => text.split(' ').for_each(|word| split_auto(word, &mut push)),
            Tokenizer::Word => split_words(text, &mut push),
        }
        tokens
    }

    /// The shingle set of normalised `text`.
    pub fn shingles(&self, text: &str) -> ShingleSet {
        let tokens = self.token_hashes(text);
        ShingleSet::from_hashes(shingle_hashes(&tokens, self.ngram))
    }
}

/// Hashes every window of `n` token hashes; fewer than `n` tokens give one shingle.
fn shingle_hashes(tokens: &[u64], n: usize) -> Vec<u64> {
    if tokens.is_empty() {
        return Vec::new();
    }
    if tokens.len() <= n {
        return vec![window_hash(tokens)];
    }
    tokens.windows(n).map(window_hash).collect()
}

#[inline]
fn window_hash(window: &[u64]) -> u64 {
    // Order-sensitive combination of the token hashes, finished with one more mixing round.
    let mut acc = window.len() as u64;
    for &token in window {
        acc = mix64(acc ^ token).wrapping_add(0x9e37_79b9_7f4a_7c15);
    }
    mix64(acc ^ 0x5eed)
}

#[inline]
fn token_hash(token: &str) -> u64 {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        // Single characters (the common case for CJK) skip the byte hash.
        (Some(c), None) => mix64(c as u64 | 1 << 40),
        _ => hash64(token.as_bytes()),
    }
}

fn split_chars(word: &str) -> impl Iterator<Item = &str> {
    word.char_indices()
        .map(move |(i, c)| &word[i..i + c.len_utf8()])
}

/// Splits a space-free word into CJK characters and non-CJK runs.
fn split_auto<'a>(word: &'a str, push: &mut impl FnMut(&'a str)) {
    let mut run_start = None;
    for (i, c) in word.char_indices() {
        if is_cjk(c) {
            if let Some(start) = run_start.take() {
                push(&word[start..i]);
            }
            push(&word[i..i + c.len_utf8()]);
        } else if run_start.is_none() {
            run_start = Some(i);
        }
    }
    if let Some(start) = run_start {
        push(&word[start..]);
    }
}

/// Jieba for CJK runs, Unicode words for the rest.
fn split_words<'a>(text: &'a str, push: &mut impl FnMut(&'a str)) {
    let mut rest = text;
    while !rest.is_empty() {
        let cjk = rest.starts_with(is_cjk);
        let end = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        if cjk {
            for token in jieba().cut(run, true) {
                push(token.word);
            }
        } else {
            run.unicode_words().for_each(&mut *push);
        }
        rest = tail;
    }
}

fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

fn is_stopword(token: &str) -> bool {
    static STOPWORDS: OnceLock<foldhash::HashSet<&'static str>> = OnceLock::new();
    STOPWORDS
        .get_or_init(|| {
            let mut set = foldhash::HashSet::default();
            set.extend(stop_words::get("en").iter().copied());
            set.extend(stop_words::get("zh").iter().copied());
            set
        })
        .contains(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shingler(tokenizer: Tokenizer, n: usize) -> Shingler {
        ShinglerBuilder::new()
            .tokenizer(tokenizer)
            .ngram(n)
            .build()
            .unwrap()
    }

    fn token_count(tokenizer: Tokenizer, text: &str) -> usize {
        shingler(tokenizer, 1).token_hashes(text).len()
    }

    #[test]
    fn auto_mixes_characters_and_words() {
        // 4 Han characters + "iphone" + "15" + 2 Han characters.
        assert_eq!(token_count(Tokenizer::Auto, "苹果发布iphone 15新品"), 8);
        assert_eq!(token_count(Tokenizer::Char, "苹果发布iphone 15新品"), 14);
    }

    #[test]
    fn word_uses_jieba_for_chinese() {
        let words = token_count(Tokenizer::Word, "我们中出了一个叛徒 hello world");
        assert!((5..=9).contains(&words), "{words}");
    }

    #[test]
    fn short_text_has_one_shingle_and_empty_has_none() {
        let s = shingler(Tokenizer::Auto, 5);
        assert_eq!(s.shingles("你好").len(), 1);
        assert_ne!(s.shingles("你好"), s.shingles("好你"));
        assert!(s.shingles("").is_empty());
        assert_eq!(s.shingles("一二三四五六").len(), 2);
    }

    #[test]
    fn shingle_hashes_are_stable_across_releases() {
        // Pinned: persisted signatures depend on these; a change must bump a format version.
        let hashes = shingler(Tokenizer::Auto, 2)
            .shingles("新闻 news")
            .hashes()
            .to_vec();
        assert_eq!(hashes, [4087276160000608096, 5781307451207101370]);
    }

    #[test]
    fn shingles_are_order_sensitive_and_deduplicated() {
        let s = shingler(Tokenizer::Char, 2);
        assert_eq!(s.shingles("abab").len(), 2); // ab, ba
        assert_ne!(s.shingles("ab"), s.shingles("ba"));
    }

    #[test]
    fn stopwords_are_removed_when_asked() {
        let plain = shingler(Tokenizer::Auto, 1);
        let filtered = ShinglerBuilder::new()
            .ngram(1)
            .remove_stopwords(true)
            .build()
            .unwrap();
        assert_eq!(plain.token_hashes("the cat is here").len(), 4);
        assert_eq!(filtered.token_hashes("the cat is here").len(), 1);
    }

    #[test]
    fn bad_ngram_is_refused() {
        let err = ShinglerBuilder::new().ngram(0).build().unwrap_err();
        assert_eq!(err.parameter(), "ngram");
    }
}
