//! Tokenisers and shingling.
//!
//! A [`Shingler`] turns *normalised* text (see [`crate::normalize`]) into a sorted,
//! deduplicated set of 64-bit shingle hashes. Kinds:
//!
//! - [`Tokenizer::Auto`] (default): character n-grams whose length follows the script.
//!   The text is cut into runs of CJK characters (Han, kana, Hangul, Thai, ...) and runs of
//!   everything else (spaces ignored); a CJK run gives its `ngram`-character windows
//!   (default 3), any other run its `latin_ngram`-character windows (default `ngram + 2`,
//!   so 5). One CJK character carries about as much as a short Latin word, so these sizes
//!   make one edit cost about as much in either script, and a mixed Chinese/English document
//!   is shingled sensibly in both parts. Robust to typos and character edits, which break
//!   word shingles (measured in `docs/evaluation.md`).
//! - [`Tokenizer::Token`]: one token per CJK character and one per word elsewhere; a shingle
//!   is `ngram` consecutive tokens (the "5-word shingles" of most MinHash tools).
//! - [`Tokenizer::Char`]: every non-space character is a token (character n-grams of one
//!   size whatever the script).
//! - [`Tokenizer::Word`]: Chinese runs are segmented with jieba, other runs split at Unicode
//!   word boundaries; a shingle is `ngram` consecutive words.
//!
//! A sequence (a document, or one run for `auto`) with at least one token but fewer than
//! `n` gives one shingle made of all its tokens, so short texts still match their exact
//! copies (and only them). A document with no token has no shingle:
//! [`ShingleSet::is_empty`] tells, and methods never match it.

use std::sync::OnceLock;

use unicode_segmentation::UnicodeSegmentation;

use crate::hash::{hash64, mix64};
use crate::{Error, Result};

/// How text is split into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tokenizer {
    /// Character n-grams sized by script: `ngram` on CJK runs, `latin_ngram` elsewhere.
    #[default]
    Auto,
    /// One token per CJK character, one per word elsewhere.
    Token,
    /// One token per non-space character.
    Char,
    /// Words: jieba for Chinese, Unicode word boundaries elsewhere.
    Word,
}

impl Tokenizer {
    /// The default shingle size: 3 characters on CJK text for `auto`, 5 tokens otherwise.
    pub fn default_ngram(self) -> usize {
        match self {
            Tokenizer::Auto => 3,
            _ => 5,
        }
    }
}

impl std::fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

crate::named_choices!(Tokenizer as "tokenizer" {
    Auto => "auto",
    Token => "token",
    Char => "char",
    Word => "word",
});

/// A shingle size given as a parameter (`ngram`, `latin_ngram`): a whole number, 1 to 64.
/// A length rule (`"<30:2,3"`) is refused with a word that only minhash takes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShingleSize(pub usize);

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
#[derive(Debug, Clone, Default)]
pub struct ShinglerBuilder {
    tokenizer: Tokenizer,
    ngram: Option<usize>,
    latin_ngram: Option<usize>,
    stopwords: bool,
    extra_stopwords: Vec<String>,
    pos: Vec<String>,
}

impl ShinglerBuilder {
    /// Defaults: `auto` (3 characters on CJK runs, 5 elsewhere), stopwords kept.
    pub fn new() -> ShinglerBuilder {
        ShinglerBuilder::default()
    }
    /// The tokeniser.
    pub fn tokenizer(mut self, tokenizer: Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }
    /// Tokens per shingle (1 to 64); for `auto`, characters per shingle on CJK runs.
    /// Default: [`Tokenizer::default_ngram`].
    pub fn ngram(mut self, ngram: usize) -> Self {
        self.ngram = Some(ngram);
        self
    }
    /// For `auto`: characters per shingle on non-CJK runs (1 to 64). Default: `ngram + 2`.
    pub fn latin_ngram(mut self, ngram: usize) -> Self {
        self.latin_ngram = Some(ngram);
        self
    }
    /// Drop English and Chinese stopwords (ISO lists of the `stop-words` crate) before
    /// shingling. For `auto`, whole words of the non-CJK runs and single CJK characters are
    /// checked.
    pub fn remove_stopwords(mut self, yes: bool) -> Self {
        self.stopwords = yes;
        self
    }
    /// More stopwords (a user's list), removed like the built-in ones when stopwords are
    /// removed; words are matched after normalisation, so give them lowercased.
    pub fn extra_stopwords(mut self, words: Vec<String>) -> Self {
        self.extra_stopwords = words;
        self
    }
    /// Keeps only Chinese words whose jieba part-of-speech tag starts with one of `tags`
    /// (`n` keeps `n`, `nr`, `ns`, ...); needs the `word` tokenizer. Non-Chinese words are
    /// kept. Empty: no filter.
    pub fn pos_filter(mut self, tags: Vec<String>) -> Self {
        self.pos = tags;
        self
    }
    /// Checks the parameters.
    ///
    /// # Errors
    /// When `ngram` or `latin_ngram` is 0 or above 64, the `word` tokenizer is asked for
    /// in a build without the `jieba` feature, or a part-of-speech filter without it.
    pub fn build(self) -> Result<Shingler> {
        if !self.pos.is_empty() && self.tokenizer != Tokenizer::Word {
            return Err(Error::invalid(
                "pos",
                format!(
                    "{:?}: a part-of-speech filter needs the `word` tokenizer (got `{}`)",
                    self.pos.join(","),
                    self.tokenizer
                ),
            ));
        }
        let ngram = self.ngram.unwrap_or(self.tokenizer.default_ngram());
        let latin_ngram = self.latin_ngram.unwrap_or((ngram + 2).min(64));
        if self.tokenizer == Tokenizer::Word && !cfg!(feature = "jieba") {
            return Err(Error::invalid(
                "tokenizer",
                "\"word\" needs the `jieba` feature of neardup-core, which this build was \
                 compiled without",
            ));
        }
        for (name, n) in [("ngram", ngram), ("latin_ngram", latin_ngram)] {
            if !(1..=64).contains(&n) {
                return Err(Error::invalid(name, format!("{n} (expected 1 to 64)")));
            }
        }
        let extra_stopwords = (!self.extra_stopwords.is_empty())
            .then(|| std::sync::Arc::new(self.extra_stopwords.into_iter().collect()));
        let pos = (!self.pos.is_empty()).then(|| self.pos.into());
        Ok(Shingler {
            tokenizer: self.tokenizer,
            ngram,
            latin_ngram,
            stopwords: self.stopwords,
            extra_stopwords,
            pos,
        })
    }
}

/// Turns normalised text into a [`ShingleSet`].
#[derive(Debug, Clone)]
pub struct Shingler {
    tokenizer: Tokenizer,
    ngram: usize,
    latin_ngram: usize,
    stopwords: bool,
    extra_stopwords: Option<std::sync::Arc<foldhash::HashSet<String>>>,
    pos: Option<std::sync::Arc<[String]>>,
}

impl Shingler {
    /// Tokens per shingle (for `auto`: characters per shingle on CJK runs).
    pub fn ngram(&self) -> usize {
        self.ngram
    }

    /// For `auto`: characters per shingle on non-CJK runs.
    pub fn latin_ngram(&self) -> usize {
        self.latin_ngram
    }

    /// The tokeniser.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// Whether stopwords are removed before shingling.
    pub fn removes_stopwords(&self) -> bool {
        self.stopwords
    }

    /// Whether `token` is removed as a stopword.
    fn is_stop(&self, token: &str) -> bool {
        self.stopwords
            && (is_stopword(token)
                || (self.extra_stopwords.as_ref()).is_some_and(|extra| extra.contains(token)))
    }

    /// The hashes of the tokens of `text`, in order (for `auto`: its characters, spaces
    /// left out).
    pub fn token_hashes(&self, text: &str) -> Vec<u64> {
        let mut tokens = Vec::with_capacity(text.len() / 2);
        let mut push = |token: &str| {
            if !self.is_stop(token) {
                tokens.push(token_hash(token));
            }
        };
        match self.tokenizer {
            Tokenizer::Char => text.split(' ').flat_map(split_chars).for_each(&mut push),
            Tokenizer::Auto => self.script_runs(text, |_, run| tokens.extend_from_slice(run)),
            Tokenizer::Token => text.split(' ').for_each(|word| split_auto(word, &mut push)),
            Tokenizer::Word => split_words(text, self.pos.as_deref(), &mut push),
        }
        tokens
    }

    /// [`for_each_script_run`] with this shingler's stopwords.
    fn script_runs(&self, text: &str, emit: impl FnMut(bool, &[u64])) {
        if self.extra_stopwords.is_some() {
            for_each_script_run(text, self.stopwords, &|word| self.is_stop(word), emit);
        } else {
            for_each_script_run(text, self.stopwords, &is_stopword, emit);
        }
    }

    /// The hash of every shingle of normalised `text`, in text order, repeats kept (the
    /// term frequencies of SimHash).
    pub fn shingle_hashes(&self, text: &str) -> Vec<u64> {
        let mut hashes = Vec::with_capacity(text.len() / 2);
        if self.tokenizer == Tokenizer::Auto {
            self.script_runs(text, |cjk, run| {
                let n = if cjk { self.ngram } else { self.latin_ngram };
                push_shingle_hashes(run, n, &mut hashes);
            });
        } else {
            push_shingle_hashes(&self.token_hashes(text), self.ngram, &mut hashes);
        }
        hashes
    }

    /// The shingle set of normalised `text`.
    pub fn shingles(&self, text: &str) -> ShingleSet {
        ShingleSet::from_hashes(self.shingle_hashes(text))
    }

    /// The shingle hash of a one-token shingle made of `token` (what [`Shingler::shingles`]
    /// gives a token with `ngram` 1): lets a list of words (an IDF table) name features.
    pub fn single_token_shingle(token: &str) -> u64 {
        window_hash(&[token_hash(token)])
    }
}

/// Calls `emit(is_cjk, character_hashes)` for every maximal run of CJK or of other
/// non-space characters of `text`; spaces neither end a run nor count. With `stopwords`,
/// stopword words (non-CJK) and stopword characters (CJK) are left out without ending the run.
///
/// One pass over the characters: the characters of a non-CJK word go into the run as they
/// come, and come out again if the word is a stopword once it ends (at a space, a CJK
/// character or the end of the text).
fn for_each_script_run(
    text: &str,
    stopwords: bool,
    is_stop: &impl Fn(&str) -> bool,
    emit: impl FnMut(bool, &[u64]),
) {
    // Compiled once per case, so that the common one pays nothing for the stopword checks.
    if stopwords {
        script_runs::<true>(text, is_stop, emit);
    } else {
        script_runs::<false>(text, is_stop, emit);
    }
}

/// [`for_each_script_run`] for a fixed `STOPWORDS`.
fn script_runs<const STOPWORDS: bool>(
    text: &str,
    is_stop: &impl Fn(&str) -> bool,
    mut emit: impl FnMut(bool, &[u64]),
) {
    let mut run: Vec<u64> = Vec::with_capacity(text.len() / 2);
    let mut run_cjk = false;
    // With `STOPWORDS`: the non-CJK word being read, as its start in `text` and in `run`.
    let mut word: Option<(usize, usize)> = None;
    for (at, c) in text.char_indices() {
        let cjk = c != ' ' && is_cjk(c);
        if STOPWORDS && (c == ' ' || cjk) {
            if let Some((start, mark)) = word.take() {
                drop_stopword(&mut run, &text[start..at], mark, is_stop);
            }
        }
        if c == ' ' {
            continue;
        }
        if cjk != run_cjk && !run.is_empty() {
            emit(run_cjk, &run);
            run.clear();
        }
        run_cjk = cjk;
        if STOPWORDS && !cjk && word.is_none() {
            word = Some((at, run.len()));
        }
        if !(STOPWORDS && cjk && is_stop(&text[at..at + c.len_utf8()])) {
            run.push(char_hash(c));
        }
    }
    if let Some((start, mark)) = word {
        drop_stopword(&mut run, &text[start..], mark, is_stop);
    }
    if !run.is_empty() {
        emit(run_cjk, &run);
    }
}

/// Takes the characters of `word`, which start at `mark` in `run`, out again if it is a
/// stopword.
fn drop_stopword(run: &mut Vec<u64>, word: &str, mark: usize, is_stop: &impl Fn(&str) -> bool) {
    if is_stop(word) {
        run.truncate(mark);
    }
}

/// Appends the hash of every window of `n` token hashes; fewer than `n` tokens give one
/// shingle, none give none.
///
/// A window's hash is the polynomial `t0 K^(n-1) + t1 K^(n-2) + ... + t(n-1)` (wrapping) of
/// its token hashes, finished by one mixing round; it is updated in O(1) per step as the
/// window slides. `K` is odd with `K - 1` divisible by 2 only once, so two orders of the same
/// tokens collide only when their hashes agree on 63 bits.
fn push_shingle_hashes(tokens: &[u64], n: usize, out: &mut Vec<u64>) {
    if tokens.len() <= n {
        if !tokens.is_empty() {
            out.push(window_hash(tokens));
        }
        return;
    }
    let leading = (1..n).fold(1u64, |power, _| power.wrapping_mul(WINDOW_K));
    let mut h = polynomial(&tokens[..n]);
    out.reserve(tokens.len() - n + 1);
    out.push(finish_window(h, n));
    for (&old, &new) in tokens.iter().zip(&tokens[n..]) {
        h = h
            .wrapping_sub(old.wrapping_mul(leading))
            .wrapping_mul(WINDOW_K)
            .wrapping_add(new);
        out.push(finish_window(h, n));
    }
}

const WINDOW_K: u64 = 0x9e37_79b9_7f4a_7c17;

#[inline]
fn polynomial(window: &[u64]) -> u64 {
    window
        .iter()
        .fold(0u64, |h, &t| h.wrapping_mul(WINDOW_K).wrapping_add(t))
}

#[inline]
fn finish_window(h: u64, n: usize) -> u64 {
    mix64(h ^ (n as u64).wrapping_mul(0xd6e8_feb8_6659_fd93))
}

#[inline]
fn window_hash(window: &[u64]) -> u64 {
    finish_window(polynomial(window), window.len())
}

#[inline]
fn token_hash(token: &str) -> u64 {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        // Single characters (the common case for CJK) skip the byte hash.
        (Some(c), None) => char_hash(c),
        _ => hash64(token.as_bytes()),
    }
}

#[inline]
fn char_hash(c: char) -> u64 {
    mix64(c as u64 | 1 << 40)
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
fn split_words<'a>(text: &'a str, pos: Option<&[String]>, push: &mut impl FnMut(&'a str)) {
    let mut rest = text;
    while !rest.is_empty() {
        let cjk = rest.starts_with(is_cjk);
        let end = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        if cjk {
            cut_chinese(run, pos, push);
        } else {
            run.unicode_words().for_each(&mut *push);
        }
        rest = tail;
    }
}

/// Chinese words of a CJK run, by jieba.
#[cfg(feature = "jieba")]
fn cut_chinese<'a>(run: &'a str, pos: Option<&[String]>, push: &mut impl FnMut(&'a str)) {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    let jieba = JIEBA.get_or_init(jieba_rs::Jieba::new);
    match pos {
        None => jieba
            .cut(run, true)
            .into_iter()
            .for_each(|token| push(token.word)),
        Some(tags) => {
            for tag in jieba.tag(run, true) {
                if tags.iter().any(|keep| tag.tag.starts_with(keep.as_str())) {
                    push(tag.word);
                }
            }
        }
    }
}

/// Without jieba the `word` tokenizer is refused by [`ShinglerBuilder::build`]; a CJK run
/// would be cut into characters.
#[cfg(not(feature = "jieba"))]
fn cut_chinese<'a>(run: &'a str, _pos: Option<&[String]>, push: &mut impl FnMut(&'a str)) {
    split_chars(run).for_each(push);
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

    #[test]
    fn a_shingle_size_says_its_range_and_that_rules_are_for_minhash() {
        use crate::params::ParamValue;
        assert_eq!(ShingleSize::parse("ngram", " 3 ").unwrap(), ShingleSize(3));
        for (text, says) in [
            ("0", "\"0\" (expected a whole number, 1 to 64)"),
            ("65", "(expected a whole number, 1 to 64)"),
            (
                "<24:2,3",
                "1 to 64; length rules such as \"<30:2,3\" are taken by minhash only",
            ),
        ] {
            let error = ShingleSize::parse("ngram", text).unwrap_err();
            assert_eq!(error.parameter(), "ngram");
            assert!(error.message().contains(says), "{text}: {error}");
        }
    }

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
    fn token_mixes_characters_and_words() {
        // 4 Han characters + "iphone" + "15" + 2 Han characters.
        assert_eq!(token_count(Tokenizer::Token, "苹果发布iphone 15新品"), 8);
        assert_eq!(token_count(Tokenizer::Char, "苹果发布iphone 15新品"), 14);
        assert_eq!(token_count(Tokenizer::Auto, "苹果发布iphone 15新品"), 14);
    }

    fn auto(n: usize, latin: usize) -> Shingler {
        ShinglerBuilder::new()
            .ngram(n)
            .latin_ngram(latin)
            .build()
            .unwrap()
    }

    #[test]
    fn auto_sizes_shingles_by_script() {
        // Runs: 苹果发布 (4 CJK) | iphone15 (8 Latin, the space ignored) | 新品 (2 CJK).
        // CJK 3-grams: 2 + 1 (short run: one shingle); Latin 5-grams: 4.
        assert_eq!(auto(3, 5).shingles("苹果发布iphone 15新品").len(), 7);
        // Defaults: 3 on CJK, 5 elsewhere.
        let default = ShinglerBuilder::new().build().unwrap();
        assert_eq!((default.ngram(), default.latin_ngram()), (3, 5));
        assert_eq!(
            default.shingles("苹果发布iphone 15新品"),
            auto(3, 5).shingles("苹果发布iphone 15新品")
        );
        // --ngram alone moves the Latin size along.
        let two = ShinglerBuilder::new().ngram(2).build().unwrap();
        assert_eq!(two.latin_ngram(), 4);
        // Spaces do not matter; a script change ends a run.
        assert_eq!(
            auto(3, 5).shingles("hello world"),
            auto(3, 5).shingles("helloworld")
        );
        assert_eq!(auto(3, 5).shingles("abcde").len(), 1);
        assert_eq!(auto(3, 5).shingles("abcdef").len(), 2);
        assert_eq!(auto(3, 5).shingles("一二三四").len(), 2);
    }

    #[test]
    fn auto_one_edit_costs_alike_in_both_scripts() {
        // One substituted character removes at most `n` shingles of its run.
        let s = auto(3, 5);
        let a = s.shingles("今天北京天气晴朗适合出门散步");
        let b = s.shingles("今天北京天气晴郎适合出门散步");
        let common = a.hashes().iter().filter(|h| b.hashes().contains(h)).count();
        assert_eq!(a.len() - common, 3);
        let a = s.shingles("the weather in beijing is fine today");
        let b = s.shingles("the weather in beijing is fine todax");
        let common = a.hashes().iter().filter(|h| b.hashes().contains(h)).count();
        assert_eq!(a.len() - common, 1); // the edit is on the last character
    }

    #[test]
    fn auto_drops_stopwords_without_ending_runs() {
        let plain = auto(3, 5);
        let filtered = ShinglerBuilder::new()
            .remove_stopwords(true)
            .build()
            .unwrap();
        assert_eq!(plain.token_hashes("the cat is here").len(), 12);
        assert_eq!(filtered.token_hashes("the cat is here").len(), 3);
        // 的 is a Chinese stopword character.
        assert_eq!(filtered.token_hashes("我的书").len(), 1);
    }

    #[test]
    #[cfg(not(feature = "jieba"))]
    fn word_needs_the_jieba_feature() {
        let error = ShinglerBuilder::new()
            .tokenizer(Tokenizer::Word)
            .build()
            .unwrap_err();
        assert_eq!(error.parameter(), "tokenizer");
        assert!(error.to_string().contains("`jieba` feature"), "{error}");
    }

    #[test]
    #[cfg(feature = "jieba")]
    fn word_uses_jieba_for_chinese() {
        let words = token_count(Tokenizer::Word, "我们中出了一个叛徒 hello world");
        assert!((5..=9).contains(&words), "{words}");
    }

    /// The runs of [`for_each_script_run`].
    fn collected_runs(text: &str, stopwords: bool) -> Vec<(bool, Vec<u64>)> {
        let mut runs = Vec::new();
        for_each_script_run(text, stopwords, &is_stopword, |cjk, run| {
            runs.push((cjk, run.to_vec()))
        });
        runs
    }

    /// The runs as a plain reference reads them: the words between spaces, the pieces of one
    /// script within each word, stopword pieces and characters left out.
    fn script_runs_by_pieces(text: &str, stopwords: bool) -> Vec<(bool, Vec<u64>)> {
        let mut runs: Vec<(bool, Vec<u64>)> = Vec::new();
        let mut push = |cjk: bool, hashes: Vec<u64>| match runs.last_mut() {
            Some((last_cjk, last)) if *last_cjk == cjk || last.is_empty() => {
                *last_cjk = cjk;
                last.extend(hashes);
            }
            _ => runs.push((cjk, hashes)),
        };
        for word in text.split(' ') {
            let mut rest = word;
            while let Some(first) = rest.chars().next() {
                let cjk = is_cjk(first);
                let end = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
                let (piece, tail) = rest.split_at(end);
                rest = tail;
                let kept: Vec<u64> = if cjk {
                    (split_chars(piece).filter(|c| !(stopwords && is_stopword(c))))
                        .map(token_hash)
                        .collect()
                } else if stopwords && is_stopword(piece) {
                    Vec::new()
                } else {
                    piece.chars().map(char_hash).collect()
                };
                push(cjk, kept);
            }
        }
        runs.retain(|(_, run)| !run.is_empty());
        runs
    }

    const PIECES: [&str; 16] = [
        "the", "is", "cat", "a", "的", "了", "书", "我", "中文", " ", "  ", "x", "1", "é", "ア",
        "한",
    ];

    proptest::proptest! {
        #[test]
        fn one_pass_script_runs_match_the_piece_by_piece_reference(
            pieces in proptest::collection::vec(proptest::sample::select(&PIECES[..]), 0..16),
            stopwords: bool,
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(
                collected_runs(&text, stopwords),
                script_runs_by_pieces(&text, stopwords)
            );
        }
    }

    #[test]
    fn short_text_has_one_shingle_and_empty_has_none() {
        let s = shingler(Tokenizer::Token, 5);
        assert_eq!(s.shingles("你好").len(), 1);
        assert_ne!(s.shingles("你好"), s.shingles("好你"));
        assert!(s.shingles("").is_empty());
        assert_eq!(s.shingles("一二三四五六").len(), 2);
    }

    #[test]
    fn shingle_hashes_are_stable_across_releases() {
        // Pinned: persisted signatures will depend on these (no format persists them yet; once one
        // does, a change here must bump its version).
        let hashes = shingler(Tokenizer::Token, 2)
            .shingles("新闻 news")
            .hashes()
            .to_vec();
        assert_eq!(hashes, [15505557056719911521, 17284790826897480059]);
        let hashes = auto(2, 3).shingles("新闻 news").hashes().to_vec();
        assert_eq!(
            hashes,
            [
                12601613166667714628,
                15533048015138085904,
                17284790826897480059
            ]
        );
    }

    #[test]
    fn shingles_are_order_sensitive_and_deduplicated() {
        let s = shingler(Tokenizer::Char, 2);
        assert_eq!(s.shingles("abab").len(), 2); // ab, ba
        assert_ne!(s.shingles("ab"), s.shingles("ba"));
    }

    #[test]
    fn stopwords_are_removed_when_asked() {
        let plain = shingler(Tokenizer::Token, 1);
        let filtered = ShinglerBuilder::new()
            .tokenizer(Tokenizer::Token)
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
