//! Boilerplate-aware similarity: text that many documents share (headers, footers, copyright
//! lines, templates) leaves the similarity computation, so that two different texts in one
//! wrapper are not near-duplicates, and one text in two wrappers still is.
//!
//! Two mechanisms, both driven by document frequencies counted in a first pass over the
//! corpus ([`CorpusStats`]; exact, or a count-min sketch past the memory given):
//!
//! - **Boilerplate lines.** A document is cut into *lines* ([`lines`]: at line breaks and
//!   after sentence-ending punctuation), each normalised. A line of at least
//!   [`MIN_LINE_CHARS`] characters found in at least `line_df` documents (or listed in a
//!   user's or a saved boilerplate list) is boilerplate: it is removed before shingling.
//! - **Common shingles.** A shingle found in more than `max_df` documents is dropped from the
//!   set that is sketched and verified (a template's fixed wording; the shingles that
//!   differ, its numbers and names, remain).
//!
//! Documents are counted once per distinct content: the engine counts the features of exact
//! copies (after normalisation) once, so a text reposted verbatim a thousand times does not
//! become its own boilerplate.
//!
//! A document that is nothing but boilerplate is not dropped and not merged with everything:
//! its sketch is [`exact_only`](crate::Sketch::exact_only), matched with its exact copies
//! only.
//!
//! The limits are relative to what a corpus holds: a body shared by more than `max_df`
//! documents (a text reposted with edits hundreds of times) is indistinguishable from a
//! template by frequency alone, and its copies are then compared on their differences. The
//! defaults are set well above the size of ordinary near-duplicate clusters; see
//! `docs/evaluation.md` for the measurements behind them.

use std::borrow::Cow;
use std::sync::Arc;

use crate::corpus::CorpusStats;
use crate::normalize::Normalizer;

pub use crate::df_limit::{
    DfFloors, DfLimit, BOILERPLATE_DF_FLOOR, DEFAULT_BOILERPLATE_DF, DEFAULT_MAX_DF, MAX_DF_FLOOR,
};

/// Lines shorter than this many characters (after normalisation, spaces not counted) are
/// never boilerplate: "1.", "OK" or a lone name are not a wrapper.
pub const MIN_LINE_CHARS: usize = 5;

/// The top bit marks line keys, so that lines and shingles share one frequency table.
const LINE_BIT: u64 = 1 << 63;
/// The seed of line hashes.
const LINE_SEED: u64 = 0x6c69_6e65_6b65_7973;
/// Mixed into the seed of masked line keys ([`KeyFolder::masked`]).
const MASKED_SEED: u64 = 0x6d61_736b_6564_0001;

/// The lines of `text`: split at line breaks and after sentence-ending punctuation
/// (`。！？；!?;`, and `.` before white space), trimmed, empty ones skipped.
///
/// ```
/// use neardup_core::boilerplate::lines;
/// let found: Vec<&str> = lines("标题\n正文第一句。第二句！ End. Next line").collect();
/// assert_eq!(found, ["标题", "正文第一句。", "第二句！", "End.", "Next line"]);
/// ```
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    keyed_lines(text).map(|(line, _)| line)
}

/// The [`lines`] of `text`, each with its [`line_key_folded`], in one pass over the text.
pub fn keyed_lines(text: &str) -> impl Iterator<Item = (&str, Option<u64>)> {
    masked_keyed_lines(text).map(|(line, key, _)| (line, key))
}

/// The [`keyed_lines`] of `text`, each also with its key with digit runs masked (`None`
/// without digits): a dated header line is frequent under its masked key.
pub fn masked_keyed_lines(text: &str) -> impl Iterator<Item = (&str, Option<u64>, Option<u64>)> {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        if rest.is_empty() {
            return None;
        }
        let (end, next, key) = scan_line(rest);
        let line = rest[..end].trim();
        rest = &rest[next..];
        if !line.is_empty() {
            return Some((line, key.finish(), key.masked()));
        }
    })
}

/// The first line of `rest`: where it ends, where the next one starts, and its key so far.
///
/// Every line of every document goes through here twice (the corpus pass, then the
/// sketch), so ASCII bytes take a path of their own and other characters are decoded only
/// where they start.
#[inline]
fn scan_line(rest: &str) -> (usize, usize, KeyFolder) {
    let bytes = rest.as_bytes();
    let mut key = KeyFolder::new();
    // The two characters before the current one, for initials ("U.S. Army").
    let mut before = [' ', ' '];
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii() {
            let previous = before;
            before = [previous[1], char::from(byte)];
            match byte {
                b'\n' | b'\r' => return (at, at + 1, key),
                b'!' | b'?' | b';' => return (at + 1, at + 1, key),
                b'.' => {
                    let ends = rest[at + 1..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace);
                    if ends && !is_initial(previous) {
                        return (at + 1, at + 1, key);
                    }
                }
                _ => key.push_ascii(byte),
            }
            at += 1;
            continue;
        }
        let Some(c) = rest[at..].chars().next() else {
            break;
        };
        let width = c.len_utf8();
        before = [before[1], c];
        match c {
            '\u{2028}' | '\u{2029}' => return (at, at + width, key),
            '。' | '！' | '？' | '；' | '．' => return (at + width, at + width, key),
            _ => key.push(c),
        }
        at += width;
    }
    (bytes.len(), bytes.len(), key)
}

/// The running fold of [`line_key_folded`], and of the same key with each run of digits
/// folded as one mark ([`KeyFolder::masked`]).
struct KeyFolder {
    hash: u64,
    counted: usize,
    masked: u64,
    /// Runs of digits folded into `masked` so far; whether the last character was a digit.
    digit_runs: usize,
    in_digits: bool,
    /// Traditional ideographs to simplified, looked up once per key.
    t2s: &'static crate::normalize::Simplifier,
}

/// The character a run of digits folds as in a masked key.
const DIGIT_MARK: u64 = 0x23;

impl KeyFolder {
    #[inline]
    fn new() -> KeyFolder {
        KeyFolder {
            hash: LINE_SEED,
            counted: 0,
            masked: LINE_SEED ^ MASKED_SEED,
            digit_runs: 0,
            in_digits: false,
            t2s: crate::normalize::simplifier(),
        }
    }
    /// [`KeyFolder::push`] of an ASCII character.
    #[inline]
    fn push_ascii(&mut self, byte: u8) {
        if byte.is_ascii_alphanumeric() {
            self.fold(u64::from(byte.to_ascii_lowercase()));
        }
    }
    #[inline]
    fn step(hash: u64, c: u64) -> u64 {
        (hash ^ c)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(23)
    }
    #[inline]
    fn fold(&mut self, c: u64) {
        self.hash = KeyFolder::step(self.hash, c);
        self.counted += 1;
        let digit = (0x30..=0x39).contains(&c);
        if !digit {
            self.masked = KeyFolder::step(self.masked, c);
        } else if !self.in_digits {
            self.masked = KeyFolder::step(self.masked, DIGIT_MARK);
            self.digit_runs += 1;
        }
        self.in_digits = digit;
    }
    /// The key with every run of digits as one mark, for a line of [`MIN_LINE_CHARS`]
    /// counted characters or more that has digits: the lines of a dated header ("1月16日
    /// 早安！") share it whatever their date.
    #[inline]
    fn masked(&self) -> Option<u64> {
        (self.counted >= MIN_LINE_CHARS && self.digit_runs > 0)
            .then(|| crate::hash::mix64(self.masked ^ self.digit_runs as u64) | LINE_BIT)
    }
    #[inline]
    fn push(&mut self, c: char) {
        if ('\u{3040}'..'\u{FE30}').contains(&c) {
            // Kana, CJK and Hangul: no white space or excluded block in this range. An
            // ideograph folds to its simplified form: a traditional-script repost carries its
            // source line and wrappers re-typed ("來源：" for "来源：").
            self.fold(u64::from(self.t2s.simplified(c)));
            return;
        }
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        };
        if !counts_in_key(c) {
            return;
        }
        self.fold(u64::from(c.to_ascii_lowercase()));
    }
    #[inline]
    fn finish(&self) -> Option<u64> {
        self.finish_at(MIN_LINE_CHARS)
    }
    /// The key once `least` characters or more were counted.
    #[inline]
    fn finish_at(&self, least: usize) -> Option<u64> {
        (self.counted >= least)
            .then(|| crate::hash::mix64(self.hash ^ self.counted as u64) | LINE_BIT)
    }
}

/// How many lines at each end of a document may be dated boilerplate (see
/// [`Boilerplate::strip`]): a header's date sits in its first or second line ("Good morning!
/// Jan 4, your daily read:"), a footer's in its last two.
pub const EDGE_LINES: usize = 2;

/// The indexes of the [`EDGE_LINES`] first and last of `lines` lines, each once.
fn edge_lines(lines: usize) -> impl Iterator<Item = usize> {
    let first = 0..EDGE_LINES.min(lines);
    let last = lines.saturating_sub(EDGE_LINES).max(EDGE_LINES.min(lines))..lines;
    first.chain(last)
}

/// Whether every run of digits of `line` is part of a date ("1月16日", "11/3", "Jan 4",
/// "2026-11-28"): a header's or a footer's date. A template's line whose numbers are
/// amounts, codes or counts ("Qtly div 36 cts vs 36 cts prior") is its filling, not a date.
fn numbers_are_dates(line: &str) -> bool {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let chars: Vec<char> = line.chars().collect();
    let mut at = 0;
    let mut runs = 0;
    while at < chars.len() {
        if !chars[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < chars.len() && chars[at].is_ascii_digit() {
            at += 1;
        }
        runs += 1;
        let after = chars[at..].iter().find(|c| **c != ' ').copied();
        let before = chars[..start].iter().rev().find(|c| **c != ' ').copied();
        // A date's numbers have at most 4 digits (a year): a code ("Your code is 835426.")
        // is never one, whatever follows it.
        if at - start > 4 {
            return false;
        }
        let unit = matches!(after, Some('月' | '日' | '号' | '年' | '/' | '-' | '.'));
        let joined = matches!(before, Some('/' | '-' | '月' | '年'));
        let word: String = (chars[..start].iter().rev())
            .skip_while(|c| **c == ' ')
            .take_while(|c| c.is_ascii_alphabetic())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let month = word.len() >= 3 && MONTHS.contains(&word[..3].to_ascii_lowercase().as_str());
        if !(unit || joined || month) {
            return false;
        }
    }
    runs > 0
}

/// A line with neighbours of its own in each document is boilerplate when it is in this many
/// times the `boilerplate_df` documents (see [`Boilerplate::is_boilerplate_line`]).
pub const ALONE_FACTOR: u64 = 5;

/// A frequent line is a template's sentence with a slot when its main piece is in this many
/// times its documents (see [`Boilerplate::has_slot`]).
pub const SLOT_FACTOR: u64 = 4;

/// The characters of `text` that count in a line key ([`line_key_folded`]).
fn counted_chars(text: &str) -> usize {
    let mut key = KeyFolder::new();
    for c in text.chars() {
        key.push(c);
    }
    key.counted
}

/// The neighbour of a document's first line.
const START: u64 = 0x7374_6172_7400_0001;
/// The neighbour of a document's last line.
const END: u64 = 0x656e_6400_0000_0001;

/// The key of two adjacent lines (or a line and the start or end of its document).
fn pair_key(first: u64, second: u64) -> u64 {
    crate::hash::mix64(first.rotate_left(17) ^ second ^ 0x7061_6972) | LINE_BIT
}

/// Whether a `.` after these two characters ends an initial or an abbreviation such as
/// "U.S." or "J." rather than a sentence: an uppercase letter after a space, a `.` or the
/// start.
fn is_initial([first, second]: [char; 2]) -> bool {
    second.is_uppercase() && (first == ' ' || first == '.')
}

/// The key of a raw line after a light fold, cheap enough to run on every line of a corpus:
/// only letters and digits count (white space, punctuation and symbols are skipped),
/// full-width ASCII becomes ASCII, ASCII letters lowercase and traditional Chinese characters
/// simplified (a traditional-script repost carries its wrappers re-typed). `None` for a line
/// of fewer than [`MIN_LINE_CHARS`] counted characters. Reposted wrappers are byte-identical
/// or differ in spacing and punctuation, which this fold absorbs; there is no NFKC step here.
pub fn line_key_folded(line: &str) -> Option<u64> {
    let mut key = KeyFolder::new();
    for c in line.chars() {
        key.push(c);
    }
    key.finish()
}

/// The frequency-table key of a shingle hash (its top bit cleared: line keys have it set).
#[inline]
pub fn shingle_key(hash: u64) -> u64 {
    hash & !LINE_BIT
}

/// Whether a character counts in a line key: ASCII letters and digits, and every other
/// character but white space and the punctuation and symbol blocks (a cheap stand-in for
/// `char::is_alphanumeric` on CJK text, where it is a table lookup per character).
#[inline]
fn counts_in_key(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !matches!(c,
        '\u{0080}'..='\u{00BF}'
        | '\u{00D7}'
        | '\u{00F7}'
        | '\u{2000}'..='\u{2BFF}'
        | '\u{3000}'..='\u{303F}'
        | '\u{FE30}'..='\u{FE4F}'
        | '\u{FF00}'..='\u{FF0F}'
        | '\u{FF1A}'..='\u{FF20}'
        | '\u{FF3B}'..='\u{FF40}'
        | '\u{FF5B}'..='\u{FF65}'
        | '\u{FFF0}'..='\u{FFFF}')
        && !c.is_whitespace()
}

/// A boilerplate line removed from a document (see [`Boilerplate::strip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemovedLine<'a> {
    /// Its key ([`line_key_folded`] of the normalised line).
    pub key: u64,
    /// The line as the document has it, trimmed.
    pub text: &'a str,
}

/// The boilerplate settings of a method and, once learned, the corpus frequencies.
#[derive(Debug, Clone, Default)]
pub struct Boilerplate {
    max_df: DfLimit,
    line_df: DfLimit,
    listed: Arc<foldhash::HashSet<u64>>,
    stats: Option<Arc<CorpusStats>>,
    /// The frequent lines, pieces and pairs of lines with their document frequencies, when
    /// the counts were not kept.
    found: Option<Arc<foldhash::HashMap<u64, u32>>>,
    saturated: bool,
    max_df_count: Option<u64>,
    line_df_count: Option<u64>,
    floors: DfFloors,
}

impl Boilerplate {
    /// Settings: shingles in more than `max_df` documents are dropped, lines in at least
    /// `line_df` documents are boilerplate, and so is every line of `listed` (a saved or a
    /// user's list: one line per line, normalised like documents; blank lines ignored).
    pub fn new(
        max_df: DfLimit,
        line_df: DfLimit,
        listed: &str,
        normalizer: &Normalizer,
    ) -> Boilerplate {
        // A listed line is cut and keyed as a document's lines are.
        let _ = normalizer;
        let listed: foldhash::HashSet<u64> = lines(listed).filter_map(line_key_folded).collect();
        Boilerplate {
            max_df,
            line_df,
            listed: Arc::new(listed),
            ..Boilerplate::default()
        }
    }

    /// The common-shingle limit as given.
    pub fn max_df(&self) -> DfLimit {
        self.max_df
    }
    /// The boilerplate-line limit as given.
    pub fn line_df(&self) -> DfLimit {
        self.line_df
    }
    /// Lines of the given list.
    pub fn listed_lines(&self) -> usize {
        self.listed.len()
    }
    /// The common-shingle limit in documents, once learned.
    pub fn max_df_count(&self) -> Option<u64> {
        self.max_df_count
    }
    /// The boilerplate-line limit in documents, once learned.
    pub fn line_df_count(&self) -> Option<u64> {
        self.line_df_count
    }

    /// Whether a corpus pass is needed (a limit is set).
    pub fn learns(&self) -> bool {
        self.max_df != DfLimit::Off || self.line_df != DfLimit::Off
    }

    /// The learned limits by parameter name, for the stats file.
    pub fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        let mut limits = Vec::new();
        if let Some(count) = self.max_df_count {
            limits.push(("max_df", count));
        }
        if let Some(count) = self.line_df_count {
            limits.push(("boilerplate_df", count));
        }
        if self.saturated {
            limits.push(("table_saturated", 1));
        }
        limits
    }

    /// Whether anything is removed from documents at all.
    pub fn is_active(&self) -> bool {
        self.learns() || !self.listed.is_empty()
    }

    fn strips_lines(&self) -> bool {
        self.line_df != DfLimit::Off || !self.listed.is_empty()
    }

    /// Appends the keys of the lines of raw `text` whose frequency is counted.
    pub fn corpus_lines(&self, normalizer: &Normalizer, text: &str, keys: &mut Vec<u64>) {
        if self.line_df == DfLimit::Off {
            return;
        }
        let text = normalizer.strip_html_if_enabled(text);
        let mut previous = START;
        let mut keyed = Vec::new();
        for (line, key, masked) in masked_keyed_lines(&text) {
            let Some(key) = key else { continue };
            keyed.push((line, masked));
            keys.push(key);
            keys.push(pair_key(previous, key));
            previous = key;
        }
        if previous != START {
            keys.push(pair_key(previous, END));
        }
        if keyed.len() > 1 {
            keys.extend(edge_lines(keyed.len()).filter_map(|index| keyed[index].1));
        }
        // The pieces at the ends of the first and last lines (inline wrappers).
        let ends = match keyed.as_slice() {
            [] => &[][..],
            [only] => std::slice::from_ref(only),
            [first, .., last] => &[*first, *last][..],
        };
        for &(line, _) in ends {
            let pieces = line_pieces(line);
            if pieces.len() < 2 {
                continue;
            }
            let ends = pieces.len().min(2 * EDGE_PIECES);
            let outer = (0..ends.div_ceil(2)).chain(pieces.len() - ends / 2..pieces.len());
            keys.extend(outer.filter_map(|index| pieces[index].1));
        }
    }

    /// Sets the floors of fractional limits ([`DfFloors::BATCH`] unless set).
    pub fn set_floors(&mut self, floors: DfFloors) {
        self.floors = floors;
    }

    /// The `max_df` limit among `documents`: shingles in more documents are common.
    pub fn common_limit(&self, documents: u64) -> Option<u64> {
        self.max_df.resolve(documents, 1, self.floors.common)
    }

    /// Takes the corpus frequencies: resolves fractions against the documents counted (at
    /// least 2 documents for a boilerplate line, 1 for a common shingle).
    ///
    /// Unless `keep_counts` (shingle frequencies are looked up later: `common_shingles =
    /// drop`, IDF weights), an exact table is not kept: only the keys of its boilerplate
    /// lines, so that the table's memory is freed before sketching.
    pub fn learn(&mut self, stats: &Arc<CorpusStats>, keep_counts: bool) {
        self.max_df_count = self.common_limit(stats.documents());
        self.line_df_count = (self.line_df).resolve(stats.documents(), 2, self.floors.line);
        // A count-min table too small for its corpus over-counts everything: every line
        // would look frequent. Past a mean cell of a quarter of the limit, frequencies are
        // not told apart and no line is removed by frequency (raise `--corpus-memory`).
        self.saturated = match (stats.mean_cell(), self.line_df_count) {
            (Some(mean), Some(limit)) => mean > limit as f64 / 4.0,
            _ => false,
        };
        if self.saturated {
            self.line_df_count = None;
        }
        let found = match (keep_counts, self.line_df_count) {
            (false, Some(limit)) => stats.frequent_feature_counts(
                |key| key & LINE_BIT != 0,
                u32::try_from(limit).unwrap_or(u32::MAX),
            ),
            (false, None) => Some(Vec::new()),
            (true, _) => None,
        };
        match found {
            Some(found) => {
                self.found = Some(Arc::new(found.into_iter().collect()));
                self.stats = None;
            }
            None => self.stats = Some(Arc::clone(stats)),
        }
    }

    /// The document frequency of a line, a piece or a pair of adjacent lines (by its key):
    /// exact when the counts were kept or the key is frequent, 0 for a key under the limit
    /// when they were not.
    fn frequency(&self, key: u64) -> u64 {
        match (&self.found, &self.stats) {
            (Some(found), _) => found.get(&key).copied().map_or(0, u64::from),
            (None, Some(stats)) => u64::from(stats.document_frequency(key)),
            (None, None) => 0,
        }
    }

    /// Whether a line, a piece or a pair of adjacent lines (by its key) is in `factor` times
    /// the documents of the limit.
    fn is_frequent(&self, key: u64, factor: u64) -> bool {
        self.line_df_count
            .is_some_and(|limit| self.frequency(key) >= limit * factor)
    }

    /// Whether a frequent first or last `line` is a template's sentence with a slot in it
    /// rather than a wrapper: one of its pieces (between commas and brackets, see
    /// [`line_pieces`]), holding at least two thirds of its characters, is in
    /// [`SLOT_FACTOR`] times as many documents as the line. "Hi Mary, this is a reminder of
    /// your appointment with Dr." is frequent because a few names fill a template's place;
    /// its wording is in every filling. Removed, it would leave one copy and stay in another
    /// that wrote "ur" for "your", and the two would be compared on different text.
    fn has_slot(&self, line: &str, key: u64) -> bool {
        let pieces = line_pieces(line);
        if pieces.len() < 2 {
            return false;
        }
        let whole = counted_chars(line);
        let line_count = self.frequency(key);
        pieces.iter().any(|&(piece, piece_key, _)| {
            piece_key.is_some_and(|piece_key| {
                3 * counted_chars(piece) >= 2 * whole
                    && self.frequency(piece_key) >= SLOT_FACTOR * line_count
            })
        })
    }

    /// Whether the line `key`, between the lines `previous` and `next` (the keys of its
    /// neighbours, or the start or end of the document), is boilerplate: listed; frequent
    /// together with a neighbour; or, wherever it stands, [`ALONE_FACTOR`] times as frequent.
    /// A wrapper's lines recur side by side, a header's first line after the start of the
    /// document and a footer's last line before its end; a sentence that merely recurs in
    /// some documents (a stock phrase, a quotation, a sentence of a corpus built from a pool
    /// of sentences) has other neighbours each time and stays, unless it is in very many.
    pub fn is_boilerplate_line(&self, previous: u64, key: u64, next: u64) -> bool {
        let frequent = |key| self.is_frequent(key, 1);
        self.listed.contains(&key)
            || (frequent(key)
                && (frequent(pair_key(previous, key))
                    || frequent(pair_key(key, next))
                    || self.is_frequent(key, ALONE_FACTOR)))
    }

    /// Whether a shingle (by its hash) is common: in more than `max_df` documents.
    #[inline]
    pub fn is_common(&self, shingle: u64) -> bool {
        match (&self.stats, self.max_df_count) {
            (Some(stats), Some(limit)) => {
                u64::from(stats.document_frequency(shingle_key(shingle))) > limit
            }
            _ => false,
        }
    }

    /// Whether common shingles can be told (a limit is set and shingles were counted).
    pub fn drops_common(&self) -> bool {
        self.stats.is_some() && self.max_df_count.is_some()
    }

    /// The normalised text of raw `text` without its boilerplate lines (which are appended to
    /// `removed`). A text without boilerplate lines is normalised as a whole, exactly as
    /// without boilerplate handling; otherwise its kept lines, joined by line breaks.
    pub fn strip<'t>(
        &self,
        normalizer: &Normalizer,
        text: &'t str,
        removed: &mut Vec<RemovedLine<'t>>,
    ) -> String {
        let learned = self.stats.is_some() || self.found.is_some();
        if !self.strips_lines() || (!learned && self.listed.is_empty()) {
            return normalizer.normalize(text);
        }
        if normalizer.options().strip_html {
            // Lines are cut after the markup is gone; the removed lines then name text
            // that is not in the document as given, so they are not reported.
            let plain = normalizer.strip_html_if_enabled(text).into_owned();
            let mut ignored = Vec::new();
            return match self.kept_lines(&plain, &mut ignored) {
                Some(kept) => normalizer.normalize_plain(&kept),
                None => normalizer.normalize_plain(&plain),
            };
        }
        match self.kept_lines(text, removed) {
            Some(kept) => normalizer.normalize(&kept),
            None => normalizer.normalize(text),
        }
    }

    /// Raw `text` without its markup (with `strip_html`) and without its boilerplate lines
    /// and edge pieces (appended to `removed`), for a method that normalises the text
    /// itself (the classic methods, whose signatures read punctuation, lines or words);
    /// `true` with it when something was left out. The same lines leave as in
    /// [`Boilerplate::strip`]: normalising the text returned gives what `strip` returns.
    /// With `strip_html`, removed lines are not reported (they name text the document as
    /// given does not hold).
    pub fn strip_raw<'t>(
        &self,
        normalizer: &Normalizer,
        text: &'t str,
        removed: &mut Vec<RemovedLine<'t>>,
    ) -> (Cow<'t, str>, bool) {
        let plain = normalizer.strip_html_if_enabled(text);
        let learned = self.stats.is_some() || self.found.is_some();
        if !self.strips_lines() || (!learned && self.listed.is_empty()) {
            return (plain, false);
        }
        match plain {
            Cow::Borrowed(text) => match self.kept_lines(text, removed) {
                Some(kept) => (Cow::Owned(kept), true),
                None => (Cow::Borrowed(text), false),
            },
            Cow::Owned(plain) => {
                let kept = self.kept_lines(&plain, &mut Vec::new());
                match kept {
                    Some(kept) => (Cow::Owned(kept), true),
                    None => (Cow::Owned(plain), false),
                }
            }
        }
    }

    /// Which of `keyed` lines (with their keys and masked keys) are boilerplate: the lines
    /// of [`Boilerplate::is_boilerplate_line`], and the *dated* lines among the
    /// [`EDGE_LINES`] first and last ones (a header's or a footer's line whose masked key is
    /// frequent), as long as a line that is neither stays: a notice whose every line is a
    /// template's keeps them all.
    fn boilerplate_lines(&self, keyed: &[(&str, u64, Option<u64>)]) -> Vec<bool> {
        let mut found: Vec<bool> = (0..keyed.len())
            .map(|index| {
                let previous = index.checked_sub(1).map_or(START, |i| keyed[i].1);
                let next = keyed.get(index + 1).map_or(END, |n| n.1);
                let (line, key, _) = keyed[index];
                self.is_boilerplate_line(previous, key, next)
                    && (self.listed.contains(&key) || !self.has_slot(line, key))
            })
            .collect();
        if keyed.len() > 1 && self.line_df_count.is_some() {
            let dated: Vec<usize> = edge_lines(keyed.len())
                .filter(|&index| !found[index])
                .filter(|&index| {
                    (keyed[index].2).is_some_and(|masked| self.is_frequent(masked, 1))
                        && numbers_are_dates(keyed[index].0)
                })
                .collect();
            let body = (0..keyed.len()).any(|index| !found[index] && !dated.contains(&index));
            if body {
                for index in dated {
                    found[index] = true;
                }
            }
        }
        found
    }

    /// The kept lines of `text` joined by line breaks, or `None` when no line is boilerplate
    /// and no edge piece is ([`Boilerplate::edge_cuts`]).
    fn kept_lines<'t>(&self, text: &'t str, removed: &mut Vec<RemovedLine<'t>>) -> Option<String> {
        let keyed: Vec<(&'t str, u64, Option<u64>)> = (masked_keyed_lines(text))
            .filter_map(|(line, key, masked)| Some((line, key?, masked)))
            .collect();
        let boilerplate = self.boilerplate_lines(&keyed);
        // Byte ranges of `text` to leave out, in order, and what stands in their place.
        let mut cuts: Vec<(usize, usize, &str)> = Vec::new();
        let offset = |slice: &str| slice.as_ptr() as usize - text.as_ptr() as usize;
        for (&(line, key, _), _) in keyed.iter().zip(&boilerplate).filter(|(_, &is)| is) {
            removed.push(RemovedLine { key, text: line });
            let at = offset(line);
            cuts.push((at, at + line.len(), "\n"));
        }
        let kept_lines: Vec<&'t str> = (keyed.iter().zip(&boilerplate))
            .filter(|(_, &is)| !is)
            .map(|(&(line, _, _), _)| line)
            .collect();
        if self.line_df_count.is_some() {
            let edges = match kept_lines.as_slice() {
                [] => &[][..],
                [only] => std::slice::from_ref(only),
                [first, .., last] => &[*first, *last][..],
            };
            for &line in edges {
                for (piece, key) in self.edge_cuts(line) {
                    removed.push(RemovedLine { key, text: piece });
                    let at = offset(piece);
                    cuts.push((at, at + piece.len(), ""));
                }
            }
        }
        if cuts.is_empty() {
            return None;
        }
        cuts.sort_unstable_by_key(|cut| cut.0);
        let mut out = String::with_capacity(text.len());
        let mut start = 0usize;
        for (from, to, instead) in cuts {
            out.push_str(&text[start..from.max(start)]);
            out.push_str(instead);
            start = start.max(to);
        }
        out.push_str(&text[start..]);
        Some(out)
    }

    /// The frequent pieces at the ends of a kept edge line, to cut: from each end, while
    /// the outermost remaining piece's key ([`line_pieces`]) is in `boilerplate_df`
    /// documents at a document's edge and another piece stays, at most [`EDGE_PIECES`]. An
    /// inline wrapper ("【来源：新华网】", "（本文转载自网络，如有侵权请联系删除）", "转发：")
    /// stands on the body's own line, where no line is frequent.
    fn edge_cuts<'t>(&self, line: &'t str) -> Vec<(&'t str, u64)> {
        let pieces = line_pieces(line);
        if pieces.len() < 2 {
            return Vec::new();
        }
        let frequent = |&(_, key, _): &(&str, Option<u64>, bool)| {
            key.is_some_and(|key| self.is_frequent(key, 1))
        };
        let cut = |piece: &(&str, Option<u64>, bool)| piece.2 && frequent(piece);
        let leading = (pieces.iter().take(EDGE_PIECES.min(pieces.len() - 1)))
            .take_while(|p| cut(p))
            .count();
        let trailing = (pieces.iter().rev())
            .take(EDGE_PIECES.min(pieces.len().saturating_sub(leading + 1)))
            .take_while(|p| cut(p))
            .count();
        // What stays must be a body: no piece of it frequent (a template's wording or its
        // numbers' places), or the line is a template's and its pieces are its slots.
        let rest = &pieces[leading..pieces.len() - trailing];
        if leading + trailing == 0 || rest.is_empty() || rest.iter().any(frequent) {
            return Vec::new();
        }
        // Pieces are sub-slices of `line`: where each starts and ends in it.
        let start = |index: usize| pieces[index].0.as_ptr() as usize - line.as_ptr() as usize;
        let end = |index: usize| start(index) + pieces[index].0.len();
        let mut cuts = Vec::new();
        if leading > 0 {
            // Up to the next piece: the delimiter after the last cut piece goes too.
            cuts.push((&line[start(0)..start(leading)], pieces[0].1.unwrap_or(0)));
        }
        if trailing > 0 {
            // From the end of the last kept piece: the delimiter before the cut goes too.
            let first = pieces.len() - trailing;
            let cut = &line[end(first - 1)..end(pieces.len() - 1)];
            cuts.push((cut, pieces[first].1.unwrap_or(0)));
        }
        cuts
    }
}

/// Most pieces cut from each end of an edge line (see [`Boilerplate::strip`]).
pub const EDGE_PIECES: usize = 3;

/// Whether a character separates the pieces of a line: the commas, colons, brackets and
/// bars around an inline wrapper, ASCII or full-width.
fn is_piece_delimiter(c: char) -> bool {
    matches!(
        c,
        ',' | ':'
            | '('
            | ')'
            | '['
            | ']'
            | '|'
            | '，'
            | '：'
            | '（'
            | '）'
            | '【'
            | '】'
            | '｜'
            | '、'
    )
}

/// The pieces of a line between [`is_piece_delimiter`] characters (empty ones skipped),
/// each with its key (its characters folded as a line key's are, under a seed of their own,
/// digit runs masked, `None` under two counted characters) and whether it has no digit (only
/// such a piece is ever cut).
pub fn line_pieces(line: &str) -> Vec<(&str, Option<u64>, bool)> {
    line.split(is_piece_delimiter)
        .map(str::trim)
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            let mut key = KeyFolder::new();
            key.hash ^= PIECE_SEED;
            for c in piece.chars() {
                key.push(c);
            }
            // A piece with a number is a template's slot or the text's own: never cut; its
            // masked key says whether it is a template's.
            let folded = match (key.counted >= 2, key.digit_runs) {
                (false, _) => None,
                (true, 0) => key.finish_at(2),
                (true, _) => key.masked(),
            };
            (piece, folded, key.digit_runs == 0)
        })
        .collect()
}

/// Mixed into the seed of piece keys ([`line_pieces`]).
const PIECE_SEED: u64 = 0x7069_6563_6500_0001;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_resolve() {
        let parse = |text| DfLimit::parse(text, "max_df");
        assert_eq!(parse("off").unwrap(), DfLimit::Off);
        assert_eq!(parse("50").unwrap(), DfLimit::Count(50));
        assert_eq!(parse("0.01").unwrap(), DfLimit::Fraction(0.01));
        assert_eq!(parse("1%").unwrap(), DfLimit::Fraction(0.01));
        for bad in ["0", "1.0", "-3", "abc", "", "150%", "0%"] {
            let error = parse(bad).unwrap_err();
            assert_eq!(error.parameter(), "max_df", "{bad}");
        }
        assert_eq!(DfLimit::Fraction(0.01).resolve(1000, 1, 1), Some(10));
        assert_eq!(DfLimit::Fraction(0.01).resolve(1001, 1, 1), Some(11));
        assert_eq!(DfLimit::Fraction(0.01).resolve(1001, 1, 50), Some(50));
        assert_eq!(DfLimit::Fraction(0.001).resolve(10, 2, 0), Some(2));
        assert_eq!(DfLimit::Count(1).resolve(10, 2, 50), Some(2));
        assert_eq!(DfLimit::Count(7).resolve(10, 2, 50), Some(7));
        assert_eq!(DfLimit::Off.resolve(10, 2, 50), None);
        for limit in [DfLimit::Off, DfLimit::Count(7), DfLimit::Fraction(0.25)] {
            let text = limit.to_string();
            assert_eq!(DfLimit::parse(&text, "max_df").unwrap(), limit);
        }
    }

    /// `keyed_lines` as it was before its byte-level scan: the reference it must agree with.
    fn reference_keyed_lines(text: &str) -> Vec<(&str, Option<u64>)> {
        let mut found = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let (mut end, mut next) = (rest.len(), rest.len());
            let mut key = KeyFolder::new();
            let mut chars = rest.char_indices().peekable();
            let mut before = [' ', ' '];
            while let Some((at, c)) = chars.next() {
                let previous = before;
                before = [previous[1], c];
                match c {
                    '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                        end = at;
                        next = at + c.len_utf8();
                        break;
                    }
                    '。' | '！' | '？' | '；' | '!' | '?' | ';' | '．' => {
                        end = at + c.len_utf8();
                        next = end;
                        break;
                    }
                    '.' if chars.peek().is_none_or(|(_, n)| n.is_whitespace())
                        && !is_initial(previous) =>
                    {
                        end = at + 1;
                        next = end;
                        break;
                    }
                    _ => {
                        // The fold as it was: full-width ASCII mapped, then the filter.
                        let c = match c {
                            '\u{FF01}'..='\u{FF5E}' => {
                                char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)
                            }
                            _ => c,
                        };
                        if counts_in_key(c) {
                            let c = crate::normalize::simplified(c.to_ascii_lowercase());
                            key.hash = (key.hash ^ u64::from(c))
                                .wrapping_mul(0x0000_0100_0000_01b3)
                                .rotate_left(23);
                            key.counted += 1;
                        }
                    }
                }
            }
            let line = rest[..end].trim();
            rest = &rest[next..];
            if !line.is_empty() {
                found.push((line, key.finish()));
            }
        }
        found
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn the_byte_scan_agrees_with_the_char_scan(
            text in proptest::collection::vec(proptest::sample::select(vec![
                'a', 'B', 'z', '0', '9', ' ', '.', '!', '?', ';', ',', '\n', '\r', '\t',
                '\u{A0}', '\u{3000}', '\u{2028}', '\u{2029}', '。', '！', '？', '；', '．',
                '，', '新', '闻', 'ア', '한', 'É', 'é', 'Ｈ', 'ｅ', '１', '\u{FF5E}', '\u{FE30}',
                '\u{303F}', '\u{3040}', '\u{2000}', '×', '😀',
            ]), 0..60).prop_map(|chars: Vec<char>| chars.into_iter().collect::<String>())
        ) {
            let fast: Vec<(&str, Option<u64>)> = keyed_lines(&text).collect();
            proptest::prop_assert_eq!(fast, reference_keyed_lines(&text));
        }
    }

    #[test]
    fn keys_in_one_pass_equal_keys_of_the_lines() {
        let text = "Ｈｅｌｌｏ，  World!!\nSecond line。第三句话很长！ U.S. Army. 4 5.";
        for (line, key) in keyed_lines(text) {
            assert_eq!(key, line_key_folded(line), "{line}");
        }
        assert_eq!(
            line_key_folded("Hello, World"),
            line_key_folded("hello world!")
        );
        assert_eq!(
            line_key_folded("Ｈｅｌｌｏ　ｗｏｒｌｄ"),
            line_key_folded("hello world")
        );
        assert_ne!(
            line_key_folded("hello world"),
            line_key_folded("hello there")
        );
        assert_eq!(line_key_folded("a b c d"), None);
        // A traditional-script repost's source line is the simplified one's.
        assert_eq!(
            line_key_folded("本文來源於新華網，轉載請註明出處"),
            line_key_folded("本文来源于新华网，转载请注明出处")
        );
    }

    #[test]
    fn lines_split_at_breaks_and_sentence_ends() {
        let found: Vec<&str> = lines("a\r\n\n b。c？d!e. f.g\u{2028}h").collect();
        assert_eq!(found, ["a", "b。", "c？", "d!", "e.", "f.g", "h"]);
        assert_eq!(lines("").count(), 0);
        assert_eq!(lines(" \n \n").count(), 0);
        assert_eq!(lines("3.14 is pi.").collect::<Vec<_>>(), ["3.14 is pi."]);
        let found: Vec<&str> = lines("The U.S. Army said. J. Smith agreed. OK").collect();
        assert_eq!(found, ["The U.S. Army said.", "J. Smith agreed.", "OK"]);
    }

    fn learned(documents: &[&str], line_df: DfLimit, max_df: DfLimit) -> Boilerplate {
        let normalizer = Normalizer::default();
        let mut boilerplate = Boilerplate::new(max_df, line_df, "", &normalizer);
        let mut stats = CorpusStats::exact();
        for text in documents {
            let mut keys = Vec::new();
            boilerplate.corpus_lines(&normalizer, text, &mut keys);
            keys.sort_unstable();
            keys.dedup();
            stats.add_document(&keys);
        }
        boilerplate.learn(&Arc::new(stats), false);
        boilerplate
    }

    #[test]
    fn frequent_lines_are_removed_and_reported() {
        let footer = "本文来源于网络，版权归原作者所有，如有侵权请联系删除。";
        let documents: Vec<String> = (0..5)
            .map(|i| format!("第{i}首诗：床前明月光{i}。\n{footer}"))
            .collect();
        let texts: Vec<&str> = documents.iter().map(String::as_str).collect();
        let boilerplate = learned(&texts, DfLimit::Count(3), DfLimit::Off);
        assert_eq!(boilerplate.line_df_count(), Some(3));
        let normalizer = Normalizer::default();
        let mut removed = Vec::new();
        let kept = boilerplate.strip(&normalizer, texts[0], &mut removed);
        assert_eq!(kept, "第0首诗 床前明月光0");
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert_eq!(
            removed[0].text,
            "本文来源于网络，版权归原作者所有，如有侵权请联系删除。"
        );
    }

    #[test]
    fn a_listed_line_is_boilerplate_without_a_corpus() {
        let normalizer = Normalizer::default();
        let boilerplate = Boilerplate::new(
            DfLimit::Off,
            DfLimit::Off,
            "\nCopyright 2024 Example News. All rights reserved\n",
            &normalizer,
        );
        assert!(boilerplate.is_active() && !boilerplate.learns());
        assert_eq!(boilerplate.listed_lines(), 2);
        let mut removed = Vec::new();
        let text = "Markets rose today.\nCOPYRIGHT 2024 EXAMPLE NEWS.  ALL RIGHTS RESERVED!";
        let kept = boilerplate.strip(&normalizer, text, &mut removed);
        assert_eq!(kept, "markets rose today");
        assert_eq!(removed.len(), 2);
        assert_eq!(removed[1].text, "ALL RIGHTS RESERVED!");
        // Another wording is not the listed line.
        let mut removed = Vec::new();
        let other = "Markets rose today.\nCopyright 2025 Example News.";
        let kept = boilerplate.strip(&normalizer, other, &mut removed);
        assert_eq!(kept, "markets rose today copyright 2025 example news");
        assert!(removed.is_empty());
    }

    #[test]
    fn a_frequent_sentence_among_other_sentences_is_not_boilerplate() {
        // "The sky is blue." is in every document, each time between other sentences; the
        // footer is in every document, always at the end.
        // (Openings and closings differ in words: lines that differ only in their numbers
        // are dated lines, see `a_dated_header_is_boilerplate_and_a_template_is_not`.)
        let texts: Vec<String> = (0..30)
            .map(|i| {
                let word = "x".repeat(i + 1);
                format!(
                    "Opening {word} of the story here. The sky is blue. Closing {word} words of \
                     it.\nSubscribe to our newsletter today."
                )
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let boilerplate = learned(&texts, DfLimit::Count(20), DfLimit::Off);
        let mut removed = Vec::new();
        let kept = boilerplate.strip(&Normalizer::default(), texts[3], &mut removed);
        assert_eq!(
            kept,
            "opening xxxx of the story here the sky is blue closing xxxx words of it"
        );
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].text, "Subscribe to our newsletter today.");
    }

    #[test]
    fn a_dated_header_is_boilerplate_and_a_template_is_not() {
        // Posts under a header whose date changes every day, and one-line notices of a
        // template whose numbers change: the header goes, the notice stays whole.
        let bodies = [
            "床前明月光疑是地上霜",
            "春眠不觉晓处处闻啼鸟",
            "白日依山尽黄河入海流",
        ];
        let mut texts: Vec<String> = (0..60)
            .map(|i| {
                let body: String = bodies[i % 3].chars().cycle().skip(i).take(10).collect();
                format!(
                    "{}月{}日 早安，每天一首好诗\n{body}第{i}首",
                    i % 12 + 1,
                    i % 28 + 1
                )
            })
            .collect();
        texts.extend((0..60).map(|i| {
            format!(
                "【工商银行】您尾号{:04}的储蓄卡支出{i}元。如有疑问请致电95{i:03}。",
                i * 7
            )
        }));
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let boilerplate = learned(&texts, DfLimit::Count(20), DfLimit::Off);
        let normalizer = Normalizer::default();
        let mut removed = Vec::new();
        let kept = boilerplate.strip(&normalizer, texts[5], &mut removed);
        assert_eq!(kept, normalizer.normalize("黄河入海流白日依山尽第5首"));
        assert!(
            removed.iter().any(|line| line.text.starts_with("6月6日")),
            "{removed:?}"
        );
        let notice = texts[70];
        assert_eq!(
            boilerplate.strip(&normalizer, notice, &mut Vec::new()),
            normalizer.normalize(notice)
        );
    }

    #[test]
    fn dates_are_told_from_other_numbers() {
        for dated in [
            "1月16日 早安",
            "【9月1日 星期二】今日分享",
            "11/3 每日一读",
            "Good morning! Jan 4, your daily read:",
            "2026-11-28 morning news",
            "Record March 13",
            "2026-11-28.",
        ] {
            assert!(numbers_are_dates(dated), "{dated}");
        }
        for other in [
            "Qtly div 36 cts vs 36 cts prior",
            "尾号4821的储蓄卡",
            "room 12 at 9 AM",
            "no numbers",
            "Your PayPal verification code is 835426.",
            "验证码 482105. 请勿泄露",
            "订单号 20261128 已发货",
        ] {
            assert!(!numbers_are_dates(other), "{other}");
        }
    }

    #[test]
    fn an_inline_wrapper_is_cut_from_the_edge_and_a_template_is_not() {
        let bodies: Vec<String> = (0..40)
            .map(|i| {
                "春眠不觉晓处处闻啼鸟夜来风雨声花落知多少"
                    .chars()
                    .cycle()
                    .skip(i)
                    .take(12)
                    .collect()
            })
            .collect();
        let mut texts: Vec<String> = (0..40)
            .map(|i| match i % 2 {
                0 => format!("{}（本文转载自网络，如有侵权请联系删除）", bodies[i]),
                _ => format!("转发：{}", bodies[i]),
            })
            .collect();
        let names = ["王伟", "李娜", "张敏"];
        texts.extend((0..60).map(|i| {
            format!(
                "Hi {}, your appointment is at {} PM, room {i}",
                names[i % 3],
                i % 12
            )
        }));
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let boilerplate = learned(&texts, DfLimit::Count(10), DfLimit::Off);
        let normalizer = Normalizer::default();
        for (i, text) in texts.iter().enumerate().take(40) {
            let kept = boilerplate.strip(&normalizer, text, &mut Vec::new());
            assert_eq!(kept, normalizer.normalize(&bodies[i]), "{text}");
        }
        // A name at the start of a template's line is a slot: nothing is cut.
        let notice = texts[45];
        assert_eq!(
            boilerplate.strip(&normalizer, notice, &mut Vec::new()),
            normalizer.normalize(notice)
        );
    }

    #[test]
    fn a_template_sentence_with_a_name_is_not_boilerplate_and_a_footer_is() {
        // 10 names fill the first sentence of a reminder: each filled sentence is in 20
        // documents, over the limit, but its wording is in all 200.
        let names = [
            "Mary", "John", "Linda", "James", "Susan", "Robert", "Karen", "David", "Nancy", "Paul",
        ];
        let footer = "Sent by the clinic, do not reply to this message.";
        let texts: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "Hi {}, this is a reminder of your appointment with Dr.\nLee on May {} at {} pm in room {}.\n{footer}",
                    names[i % 10],
                    i % 28 + 1,
                    i % 12 + 1,
                    i
                )
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let boilerplate = learned(&texts, DfLimit::Count(10), DfLimit::Off);
        let normalizer = Normalizer::default();
        let mut removed = Vec::new();
        let kept = boilerplate.strip(&normalizer, texts[3], &mut removed);
        let removed: Vec<&str> = removed.iter().map(|line| line.text).collect();
        assert_eq!(removed, [footer], "{kept}");
        assert!(kept.starts_with("hi james this is a reminder"), "{kept}");
        // The sentence is frequent enough to be boilerplate; its slot keeps it.
        let line = "Hi James, this is a reminder of your appointment with Dr.";
        let key = line_key_folded(line).unwrap();
        assert!(boilerplate.is_boilerplate_line(START, key, END));
        assert!(boilerplate.has_slot(line, key));
    }

    #[test]
    fn short_lines_are_never_boilerplate() {
        let texts = [
            "OK.\nfirst body text here",
            "OK.\nsecond body text here",
            "OK.\nthird one",
        ];
        let boilerplate = learned(&texts, DfLimit::Count(2), DfLimit::Off);
        let mut removed = Vec::new();
        let kept = boilerplate.strip(&Normalizer::default(), texts[0], &mut removed);
        assert_eq!(kept, "ok first body text here");
        assert!(removed.is_empty());
    }

    #[test]
    fn stripping_without_boilerplate_equals_normalising() {
        let texts = [
            "Ｈｅｌｌｏ，  World!!\nSecond line。第三句！",
            "妈妈喊你來吃飯。\r\n快回家吧",
            "a. b. c",
        ];
        let boilerplate = learned(&texts, DfLimit::Count(2), DfLimit::Off);
        let normalizer = Normalizer::default();
        for text in texts {
            let mut removed = Vec::new();
            assert_eq!(
                boilerplate.strip(&normalizer, text, &mut removed),
                normalizer.normalize(text)
            );
        }
    }
}
