//! Synthetic near-duplicate benchmarks: edited copies and hard negatives of a corpus, with the
//! truth of which document is a copy of which.
//!
//! # Overview
//!
//! [`Synthesizer::generate`] takes the texts of a source corpus and returns a [`Benchmark`]:
//! every source document (`s<N>`, numbered from 1 in input order), for a `duplicate_rate`
//! fraction of them 1 to `max_variants` edited copies (`s<N>-v<K>`), and for a
//! `hard_negatives` fraction of them one *hard negative* (`s<N>-hn1`): the source's opening
//! (title or first sentence) followed by text taken from other documents, which looks like a
//! copy but is not one.
//!
//! A variant gets one or two edits drawn from the enabled [`Edit`]s, each applied with the
//! same `strength` in (0, 1] (roughly the fraction of characters touched; see each edit's
//! function). An edit that cannot change a text (no Han characters to convert, one sentence
//! to swap) is replaced by another enabled edit, so a variant's [`Category`] names the edits
//! actually applied, in the canonical order of [`Edit::ALL`]. If no enabled edit changes a
//! text, that variant is not produced and is counted in [`Summary::skipped_variants`].
//!
//! The truth clusters are: a source with its variants; identical source texts (exact byte
//! equality) share one cluster, named after the first of them; near-identical sources are
//! assumed distinct, so a source corpus with unflagged near-duplicates yields some truth
//! "non-duplicates" that a good method rightly merges. Every hard negative is a cluster of its
//! own. A hard negative's opening is at most half of its source, and it takes at most half of
//! each donor document (preferring donors of the same script that no other hard negative
//! used), so it is no closer than a Jaccard of about 0.5 to any one document.
//!
//! # Determinism
//!
//! Everything is drawn from [`Rng`] (SplitMix64 over [`mix64`]) seeded by the seed: each
//! source document has two streams of its own (derived from the seed and its position), one
//! for its variants and one for its hard negative; the word pool and the final order have
//! theirs. Generation is sequential, so the same texts, seed and options give the same
//! benchmark on any machine and with any thread count. The documents are returned
//! *shuffled* (seeded), so a duplicate is rarely next to its original and a "keep the first"
//! policy keeps originals and copies alike.
//!
//! # Example
//!
//! ```
//! use neardup_pipeline::synth::{SynthOptions, Synthesizer};
//!
//! let options = SynthOptions { duplicate_rate: 1.0, ..SynthOptions::default() };
//! let synthesizer = Synthesizer::new(options)?;
//! let texts = ["今天北京天气晴朗，适合出门散步。傍晚有小雨。", "The quick brown fox. It jumps."];
//! let benchmark = synthesizer.generate(&texts);
//! assert!(benchmark.documents.len() >= 4);
//! # Ok::<(), neardup_pipeline::Error>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

use neardup_core::hash::mix64;
use neardup_core::tokenize::is_cjk;

use crate::error::Result;

/// The SplitMix64 increment (the golden ratio in 64 bits).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
/// The stream of the word pool (source documents use streams `0..`).
const POOL_STREAM: u64 = u64::MAX;
/// The stream of the final shuffle.
const SHUFFLE_STREAM: u64 = u64::MAX - 1;
/// Words (and two-character Chinese chunks) kept in each half of the [`WordPool`].
const POOL_CAPACITY: usize = 4096;
/// How many donor documents a hard negative takes text from, at most.
const MAX_DONORS: usize = 3;
/// How many random draws look for a donor of a different cluster.
const DONOR_DRAWS: usize = 16;
/// Common Chinese characters, for substitutions in a text with too few of its own.
const COMMON_HAN: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府研";
/// Chinese boilerplate lines ([`boilerplate`]).
pub const BOILERPLATE_ZH: [&str; 3] = [
    "转发自新浪微博",
    "本文来源：新华网，转载请注明出处",
    "点击关注，获取更多资讯",
];
/// English boilerplate lines ([`boilerplate`]).
pub const BOILERPLATE_EN: [&str; 3] = [
    "Forwarded from @newsdesk",
    "Click here to subscribe to our newsletter",
    "This article originally appeared on Reuters.",
];
/// Chinese (full-width) punctuation that [`punct`] changes, adds and removes.
const MARKS_ZH: [char; 5] = ['，', '。', '！', '？', '、'];
/// ASCII punctuation that [`punct`] changes, adds and removes.
const MARKS_EN: [char; 4] = [',', '.', '!', '?'];
/// Offset from an ASCII character to its full-width form (U+FF01..U+FF5E).
const FULL_WIDTH_OFFSET: u32 = 0xfee0;

/// A small seeded random generator: SplitMix64, whose output function is [`mix64`].
///
/// Not for cryptography; chosen because it is tiny, fast, and its sequence is fixed forever,
/// which is what a reproducible benchmark needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// An independent generator for `stream` (for example a document's position) under `seed`.
    pub fn stream(seed: u64, stream: u64) -> Rng {
        Rng::new(mix64(seed ^ mix64(stream.wrapping_add(GOLDEN))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// A number in `0..bound` (0 when `bound` is 0), by multiply-and-shift.
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `probability`.
    pub fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// A random element of `items`, `None` if it is empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for end in (1..items.len()).rev() {
            items.swap(end, self.below(end + 1));
        }
    }

    /// `count` distinct numbers from `0..bound` (all of them if `count >= bound`), ascending.
    pub fn sample(&mut self, bound: usize, count: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..bound).collect();
        let count = count.min(bound);
        for index in 0..count {
            let other = index + self.below(bound - index);
            all.swap(index, other);
        }
        all.truncate(count);
        all.sort_unstable();
        all
    }
}

/// One kind of edit that turns a document into a near-duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Edit {
    /// Substitute characters ([`char_sub`]).
    CharSub,
    /// Substitute words with words of other documents ([`word_sub`]).
    WordSub,
    /// Convert simplified Chinese to traditional ([`script`]).
    Script,
    /// Insert characters ([`insert`]).
    Insert,
    /// Delete characters ([`delete`]).
    Delete,
    /// Change, add or remove punctuation ([`punct`]).
    Punct,
    /// Full-width / half-width changes ([`width`]).
    Width,
    /// Append or prepend a boilerplate line ([`boilerplate`]).
    Boilerplate,
    /// Cut the end ([`truncate`]).
    Truncate,
    /// Swap two adjacent sentences ([`swap`]).
    Swap,
}

impl Edit {
    /// Every edit, in canonical order.
    pub const ALL: [Edit; 10] = [
        Edit::CharSub,
        Edit::WordSub,
        Edit::Script,
        Edit::Insert,
        Edit::Delete,
        Edit::Punct,
        Edit::Width,
        Edit::Boilerplate,
        Edit::Truncate,
        Edit::Swap,
    ];

    /// The name used on the command line and in the truth file (`char-sub`, `punct`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Edit::CharSub => "char-sub",
            Edit::WordSub => "word-sub",
            Edit::Script => "script",
            Edit::Insert => "insert",
            Edit::Delete => "delete",
            Edit::Punct => "punct",
            Edit::Width => "width",
            Edit::Boilerplate => "boilerplate",
            Edit::Truncate => "truncate",
            Edit::Swap => "swap",
        }
    }
}

impl fmt::Display for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Edit {
    type Err = neardup_core::Error;

    /// Accepts the names of [`Edit::name`].
    fn from_str(name: &str) -> std::result::Result<Edit, neardup_core::Error> {
        let found = Edit::ALL.into_iter().find(|edit| edit.name() == name);
        found.ok_or_else(|| {
            let names: Vec<&str> = Edit::ALL.iter().map(|edit| edit.name()).collect();
            let message = format!(
                "unknown edit {name:?}; expected one of: {}",
                names.join(", ")
            );
            neardup_core::Error::invalid("edits", message)
        })
    }
}

/// What a benchmark document is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Category {
    /// A source document, unchanged.
    Original,
    /// An edited copy of a source document, with the edits applied (canonical order).
    Variant(Vec<Edit>),
    /// A source's opening followed by other documents' text: not a duplicate.
    HardNegative,
}

impl Category {
    /// `original`, `hard_negative`, or the edit names joined by `+` (`punct+width`).
    pub fn name(&self) -> String {
        match self {
            Category::Original => "original".to_owned(),
            Category::HardNegative => "hard_negative".to_owned(),
            Category::Variant(edits) => {
                let names: Vec<&str> = edits.iter().map(|edit| edit.name()).collect();
                names.join("+")
            }
        }
    }
}

/// The parameters of a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// The seed of every random choice.
    pub seed: u64,
    /// The fraction of source documents that get variants, in `[0, 1]`.
    pub duplicate_rate: f64,
    /// A source that gets variants gets 1 to this many (at least 1).
    pub max_variants: usize,
    /// The edits to draw from (at least one; repeats are ignored).
    pub edits: Vec<Edit>,
    /// How strong each edit is, in `(0, 1]`: roughly the fraction of characters it touches.
    pub strength: f64,
    /// The fraction of source documents that get a hard negative, in `[0, 1]`.
    pub hard_negatives: f64,
}

impl Default for SynthOptions {
    /// Seed 1, 30% of documents with up to 3 variants, every edit at strength 0.05, 5% hard
    /// negatives.
    fn default() -> SynthOptions {
        SynthOptions {
            seed: 1,
            duplicate_rate: 0.3,
            max_variants: 3,
            edits: Edit::ALL.to_vec(),
            strength: 0.05,
            hard_negatives: 0.05,
        }
    }
}

/// One document of a benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthDocument {
    /// `s<N>`, `s<N>-v<K>` or `s<N>-hn<K>`.
    pub id: String,
    /// The text.
    pub text: String,
    /// The index of the source document it was made from.
    pub source: usize,
    /// The id of its truth cluster: the first original with the same source text, or its own
    /// id for a hard negative.
    pub cluster: String,
    /// What it is.
    pub category: Category,
}

/// Counts of what a benchmark holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Source documents.
    pub sources: usize,
    /// Source documents whose text repeats an earlier one (they share its cluster).
    pub repeated_sources: usize,
    /// Variants produced.
    pub variants: usize,
    /// Variants per category name (`punct`, `punct+width`, ...).
    pub variants_by_category: BTreeMap<String, usize>,
    /// Variants per edit (a two-edit variant counts for both).
    pub variants_by_edit: BTreeMap<Edit, usize>,
    /// Variants not produced because no enabled edit changed the text.
    pub skipped_variants: usize,
    /// Hard negatives produced.
    pub hard_negatives: usize,
    /// Hard negatives not produced (empty source, or no other distinct document).
    pub skipped_hard_negatives: usize,
}

/// A generated benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Benchmark {
    /// The documents, in seeded random order.
    pub documents: Vec<SynthDocument>,
    /// What they are.
    pub summary: Summary,
}

/// Words of the corpus that [`word_sub`] substitutes in: a seeded sample of Latin words and of
/// two-character Chinese chunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordPool {
    /// Two-character chunks of CJK runs.
    pub han: Vec<String>,
    /// Runs of letters and digits outside CJK.
    pub latin: Vec<String>,
}

impl WordPool {
    /// Samples up to 4096 chunks and 4096 words of `texts` (reservoir sampling with `rng`).
    pub fn sample(texts: &[&str], rng: &mut Rng) -> WordPool {
        let mut pool = WordPool::default();
        let (mut han_seen, mut latin_seen) = (0, 0);
        for text in texts {
            for unit in units(text) {
                let (kept, seen) = match unit.han {
                    true => (&mut pool.han, &mut han_seen),
                    false => (&mut pool.latin, &mut latin_seen),
                };
                reservoir_add(kept, seen, &text[unit.start..unit.end], rng);
            }
        }
        pool
    }
}

/// Adds `item` to the reservoir `kept` of the `seen` items so far.
fn reservoir_add(kept: &mut Vec<String>, seen: &mut usize, item: &str, rng: &mut Rng) {
    *seen += 1;
    if kept.len() < POOL_CAPACITY {
        kept.push(item.to_owned());
    } else if let Some(slot) = kept.get_mut(rng.below(*seen)) {
        *slot = item.to_owned();
    }
}

/// A word of a text: byte range, and whether it is a CJK chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    start: usize,
    end: usize,
    han: bool,
}

/// The words of `text`: CJK runs cut into two-character chunks, and runs of other letters and
/// digits.
fn units(text: &str) -> Vec<Unit> {
    let mut found: Vec<Unit> = Vec::new();
    let mut han_length = 0;
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        let han = is_cjk(c);
        if !han && !c.is_alphanumeric() {
            han_length = 0;
            continue;
        }
        match found.last_mut() {
            Some(last) if last.end == start && last.han == han && (!han || han_length % 2 == 1) => {
                last.end = end;
            }
            _ => found.push(Unit { start, end, han }),
        }
        han_length = if han { han_length + 1 } else { 0 };
    }
    found
}

/// How many of `total` items an edit of `strength` touches: at least 1 when there is any.
fn amount(strength: f64, total: usize) -> usize {
    ((strength * total as f64).round() as usize).clamp(total.min(1), total)
}

/// Substitutes a `strength` fraction of the letters: a CJK character by another CJK character
/// of the same text (or a common one when it has too few), a Latin letter by another ASCII
/// letter of the same case. `None` if the text has no letters.
pub fn char_sub(text: &str, rng: &mut Rng, strength: f64) -> Option<String> {
    let mut chars: Vec<char> = text.chars().collect();
    let letters: Vec<usize> = (0..chars.len())
        .filter(|&i| chars[i].is_alphabetic())
        .collect();
    let mut own_han: Vec<char> = chars.iter().copied().filter(|&c| is_cjk(c)).collect();
    own_han.sort_unstable();
    own_han.dedup();
    let common: Vec<char> = COMMON_HAN.chars().collect();
    let han_choices = if own_han.len() >= 2 { own_han } else { common };
    for index in rng.sample(letters.len(), amount(strength, letters.len())) {
        let old = chars[letters[index]];
        chars[letters[index]] = if is_cjk(old) {
            other_char(&han_choices, old, rng)
        } else {
            other_letter(old, rng)
        };
    }
    changed(text, chars.into_iter().collect())
}

/// A random element of `choices` other than `old` (`old` itself if there is none).
fn other_char(choices: &[char], old: char, rng: &mut Rng) -> char {
    let others: Vec<char> = choices.iter().copied().filter(|&c| c != old).collect();
    rng.pick(&others).copied().unwrap_or(old)
}

/// A random ASCII letter other than `old`, uppercase if `old` is.
fn other_letter(old: char, rng: &mut Rng) -> char {
    let old_lower = old.to_ascii_lowercase() as u8;
    // 25 letters besides `old`: skip over it.
    let mut letter = b'a' + rng.below(25) as u8;
    if letter >= old_lower && old_lower.is_ascii_lowercase() {
        letter += 1;
    }
    let letter = char::from(letter);
    match old.is_uppercase() {
        true => letter.to_ascii_uppercase(),
        false => letter,
    }
}

/// `Some(new)` if it differs from `text`.
fn changed(text: &str, new: String) -> Option<String> {
    (new != text).then_some(new)
}

/// Replaces a `strength` fraction of the words (Latin words; two-character chunks of Chinese)
/// with words of the same kind from `pool`. `None` if nothing could be replaced.
pub fn word_sub(text: &str, rng: &mut Rng, strength: f64, pool: &WordPool) -> Option<String> {
    let words = units(text);
    let mut result = String::with_capacity(text.len());
    let mut copied = 0;
    for index in rng.sample(words.len(), amount(strength, words.len())) {
        let word = words[index];
        let choices = if word.han { &pool.han } else { &pool.latin };
        let old = &text[word.start..word.end];
        let Some(new) = other_word(choices, old, rng) else {
            continue;
        };
        result.push_str(&text[copied..word.start]);
        result.push_str(new);
        copied = word.end;
    }
    result.push_str(&text[copied..]);
    changed(text, result)
}

/// A random word of `choices` other than `old`, in a few tries.
fn other_word<'a>(choices: &'a [String], old: &str, rng: &mut Rng) -> Option<&'a str> {
    (0..4)
        .filter_map(|_| rng.pick(choices))
        .find(|word| *word != old)
        .map(String::as_str)
}

/// Converts the text to traditional Chinese (zhconv, zh-Hant), all of it, as a reposting site
/// would; the strength is not used. `None` if nothing changes (no simplified Han characters).
pub fn script(text: &str) -> Option<String> {
    if !text.chars().any(is_cjk) {
        return None;
    }
    changed(text, zhconv::zhconv(text, zhconv::Variant::ZhHant))
}

/// Inserts a `strength` fraction of characters at random places, each a copy of a random
/// non-space character of the text. `None` for a text without one.
pub fn insert(text: &str, rng: &mut Rng, strength: f64) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let visible: Vec<char> = chars
        .iter()
        .copied()
        .filter(|c| !c.is_whitespace())
        .collect();
    if visible.is_empty() {
        return None;
    }
    let mut places: Vec<usize> = (0..amount(strength, chars.len()))
        .map(|_| rng.below(chars.len() + 1))
        .collect();
    places.sort_unstable();
    let mut result = String::with_capacity(text.len() + places.len() * 4);
    let mut next = places.iter().peekable();
    for position in 0..=chars.len() {
        while next.next_if(|&&place| place == position).is_some() {
            result.extend(rng.pick(&visible));
        }
        result.extend(chars.get(position));
    }
    changed(text, result)
}

/// Deletes a `strength` fraction of the characters, at least one but never all. `None` for a
/// text of fewer than two characters.
pub fn delete(text: &str, rng: &mut Rng, strength: f64) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 2 {
        return None;
    }
    let count = amount(strength, chars.len()).min(chars.len() - 1);
    let gone = rng.sample(chars.len(), count);
    let mut gone = gone.iter().peekable();
    let kept = chars
        .iter()
        .enumerate()
        .filter(|(index, _)| gone.next_if_eq(&index).is_none());
    changed(text, kept.map(|(_, c)| c).collect())
}

/// Changes, adds or removes punctuation, `strength` x the characters times (at least once).
/// Only marks of `，。！？、` and `,.!?` between words are touched (not `3.5`, `1,000` or
/// `U.S.`): one is removed, or changed into its counterpart of the other set next to CJK text
/// (`，` and `,`) or into another ASCII mark in Latin text; a Chinese mark is added between
/// two CJK characters, an ASCII one after a Latin word.
pub fn punct(text: &str, rng: &mut Rng, strength: f64) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let marks: Vec<usize> = (0..chars.len())
        .filter(|&i| is_loose_mark(&chars, i))
        .collect();
    let mut kept: Vec<Option<char>> = chars.iter().copied().map(Some).collect();
    let mut added: Vec<(usize, char)> = Vec::new();
    let operations = amount(strength, chars.len());
    let mut touched = rng.sample(marks.len(), operations).into_iter();
    for _ in 0..operations {
        let mark = if rng.below(3) < 2 {
            touched.next()
        } else {
            None
        };
        let Some(mark) = mark else {
            added.extend(added_mark(&chars, rng));
            continue;
        };
        let new = changed_mark(&chars, marks[mark], rng);
        kept[marks[mark]] = (rng.below(2) == 0).then_some(new);
    }
    added.sort_unstable_by_key(|(position, _)| *position);
    changed(text, merge(&kept, &added))
}

/// True if `chars[index]` is a mark [`punct`] works on and is not inside a Latin word or
/// number.
fn is_loose_mark(chars: &[char], index: usize) -> bool {
    let latin = |c: Option<&char>| c.is_some_and(|&c| c.is_alphanumeric() && !is_cjk(c));
    let inside =
        latin(index.checked_sub(1).and_then(|i| chars.get(i))) && latin(chars.get(index + 1));
    is_mark(chars[index]) && !inside
}

/// True for the punctuation [`punct`] works on.
fn is_mark(c: char) -> bool {
    MARKS_ZH.contains(&c) || MARKS_EN.contains(&c)
}

/// What the mark `chars[index]` becomes: its counterpart next to CJK text or if it is a
/// Chinese mark, another ASCII mark otherwise.
fn changed_mark(chars: &[char], index: usize, rng: &mut Rng) -> char {
    let mark = chars[index];
    let before = index.checked_sub(1).and_then(|i| chars.get(i));
    let near_cjk = [before, chars.get(index + 1)]
        .into_iter()
        .flatten()
        .any(|&c| is_cjk(c));
    if near_cjk || MARKS_ZH.contains(&mark) {
        return counterpart(mark);
    }
    let others: Vec<char> = MARKS_EN.iter().copied().filter(|&c| c != mark).collect();
    rng.pick(&others).copied().unwrap_or(mark)
}

/// The mark of the other set: `，` and `,`, `。` and `.`, ... (`、` becomes `,`).
fn counterpart(mark: char) -> char {
    match mark {
        '，' | '、' => ',',
        '。' => '.',
        '！' => '!',
        '？' => '?',
        ',' => '，',
        '.' => '。',
        '!' => '！',
        '?' => '？',
        other => other,
    }
}

/// A new mark and the position before which it goes: between two CJK characters or at the end
/// of a Latin word; at the end of the text if there is no such place.
fn added_mark(chars: &[char], rng: &mut Rng) -> Option<(usize, char)> {
    let places: Vec<usize> = (1..chars.len())
        .filter(|&i| is_cjk(chars[i - 1]) && is_cjk(chars[i]) || ends_word(chars, i))
        .collect();
    let position = rng.pick(&places).copied().unwrap_or(chars.len());
    let han = position > 0 && is_cjk(chars[position - 1]);
    let marks: &[char] = if han { &MARKS_ZH } else { &MARKS_EN };
    rng.pick(marks).map(|&mark| (position, mark))
}

/// True if a Latin word ends right before position `index` of `chars`.
fn ends_word(chars: &[char], index: usize) -> bool {
    let before = chars[index - 1];
    before.is_alphanumeric() && !is_cjk(before) && chars[index].is_whitespace()
}

/// The kept characters with the `added` ones (sorted by position) inserted before theirs.
fn merge(kept: &[Option<char>], added: &[(usize, char)]) -> String {
    let mut result = String::with_capacity(kept.len() * 3 + added.len() * 3);
    let mut next = added.iter().peekable();
    for position in 0..=kept.len() {
        while let Some((_, mark)) = next.next_if(|(place, _)| *place == position) {
            result.push(*mark);
        }
        result.extend(kept.get(position).copied().flatten());
    }
    result
}

/// Converts a run of printable ASCII characters to full-width forms (U+FF01..U+FF5E), or a
/// run of full-width forms to ASCII: a `strength` fraction of those characters, consecutive
/// among them. The direction is random when the text has both. `None` if it has neither.
pub fn width(text: &str, rng: &mut Rng, strength: f64) -> Option<String> {
    let mut chars: Vec<char> = text.chars().collect();
    let ascii: Vec<usize> = (0..chars.len())
        .filter(|&i| to_full(chars[i]).is_some())
        .collect();
    let full: Vec<usize> = (0..chars.len())
        .filter(|&i| to_half(chars[i]).is_some())
        .collect();
    let widen = match (ascii.is_empty(), full.is_empty()) {
        (true, true) => return None,
        (false, false) => rng.below(2) == 0,
        (ascii_empty, _) => !ascii_empty,
    };
    let (eligible, convert): (&[usize], WidthConversion) = match widen {
        true => (&ascii, to_full),
        false => (&full, to_half),
    };
    let count = amount(strength, eligible.len());
    let start = rng.below(eligible.len() - count + 1);
    for &index in &eligible[start..start + count] {
        chars[index] = convert(chars[index]).unwrap_or(chars[index]);
    }
    changed(text, chars.into_iter().collect())
}

/// [`to_full`] or [`to_half`].
type WidthConversion = fn(char) -> Option<char>;

/// The full-width form of a printable ASCII character other than space.
fn to_full(c: char) -> Option<char> {
    ('!'..='~')
        .contains(&c)
        .then(|| char::from_u32(c as u32 + FULL_WIDTH_OFFSET))
        .flatten()
}

/// The ASCII form of a full-width character.
fn to_half(c: char) -> Option<char> {
    ('！'..='～')
        .contains(&c)
        .then(|| char::from_u32(c as u32 - FULL_WIDTH_OFFSET))
        .flatten()
}

/// Appends (three times in four) or prepends a boilerplate line on its own line: one of
/// [`BOILERPLATE_ZH`] for a text with CJK characters, of [`BOILERPLATE_EN`] otherwise. The
/// strength is not used.
pub fn boilerplate(text: &str, rng: &mut Rng) -> Option<String> {
    let lines: &[&str] = match text.chars().any(is_cjk) {
        true => &BOILERPLATE_ZH,
        false => &BOILERPLATE_EN,
    };
    let line = rng.pick(lines)?;
    Some(match rng.below(4) {
        0 => format!("{line}\n{text}"),
        _ => format!("{text}\n{line}"),
    })
}

/// Cuts the last `2 x strength` of the characters (at most 30%, at least one). `None` for a
/// text of fewer than two characters.
pub fn truncate(text: &str, strength: f64) -> Option<String> {
    let total = text.chars().count();
    if total < 2 {
        return None;
    }
    let cut = amount((2.0 * strength).min(0.3), total).min(total - 1);
    changed(text, text.chars().take(total - cut).collect())
}

/// A sentence of a text and the whitespace after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence<'a> {
    /// The sentence, with its final punctuation.
    pub body: &'a str,
    /// The whitespace (spaces, newlines) that follows it.
    pub gap: &'a str,
}

impl Sentence<'_> {
    /// True if the sentence ends with a terminator or a line break (so it can move).
    fn closed(&self) -> bool {
        self.gap.contains('\n') || self.body.ends_with(is_terminator)
    }
}

/// Splits `text` into sentences: after `。！？` (and runs of them), after `.!?` followed by
/// whitespace, and at line breaks. The bodies and gaps, concatenated, are the text.
pub fn sentences(text: &str) -> Vec<Sentence<'_>> {
    let mut found = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let next = chars.peek().map(|&(_, next)| next);
        let ends = match c {
            '。' | '！' | '？' => next.is_none_or(|next| !is_terminator(next)),
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            '\n' => true,
            _ => false,
        };
        if !ends {
            continue;
        }
        let body_end = if c == '\n' {
            index
        } else {
            index + c.len_utf8()
        };
        while chars.next_if(|(_, next)| next.is_whitespace()).is_some() {}
        let gap_end = chars.peek().map_or(text.len(), |&(next, _)| next);
        found.push(Sentence {
            body: &text[start..body_end],
            gap: &text[body_end..gap_end],
        });
        start = gap_end;
    }
    if start < text.len() {
        found.push(Sentence {
            body: &text[start..],
            gap: "",
        });
    }
    found
}

/// True for a sentence-ending mark.
fn is_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '.' | '!' | '?')
}

/// Swaps two adjacent, different sentences (the whitespace between sentences stays in place).
/// `None` if there are no two such sentences.
pub fn swap(text: &str, rng: &mut Rng) -> Option<String> {
    let mut parts = sentences(text);
    let pairs: Vec<usize> = (1..parts.len())
        .filter(|&i| parts[i].closed() && parts[i - 1].body != parts[i].body)
        .collect();
    let second = *rng.pick(&pairs)?;
    let first_body = parts[second - 1].body;
    parts[second - 1].body = parts[second].body;
    parts[second].body = first_body;
    changed(
        text,
        parts
            .iter()
            .flat_map(|part| [part.body, part.gap])
            .collect(),
    )
}

/// The number of characters of a text's opening: its first sentence if that is at most half
/// of it, else the first 30% of its characters (at least one).
pub fn opening_length(text: &str) -> usize {
    let total = text.chars().count();
    let first = sentences(text)
        .first()
        .map_or(0, |s| s.body.chars().count());
    if first > 0 && first * 2 <= total {
        first
    } else {
        (total * 3 / 10).max(1).min(total)
    }
}

/// A checked set of options that generates benchmarks.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesizer {
    options: SynthOptions,
}

impl Synthesizer {
    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`Error::Parameter`](crate::Error::Parameter) naming the option and the value if a rate
    /// is outside `[0, 1]`, the strength outside `(0, 1]`, `max_variants` is 0 or no edit is
    /// enabled.
    pub fn new(mut options: SynthOptions) -> Result<Synthesizer> {
        check_rate("duplicate-rate", options.duplicate_rate)?;
        check_rate("hard-negatives", options.hard_negatives)?;
        if !(options.strength > 0.0 && options.strength <= 1.0) {
            let message = format!("{} (expected a number in (0, 1])", options.strength);
            return Err(neardup_core::Error::invalid("strength", message).into());
        }
        if options.max_variants == 0 {
            return Err(
                neardup_core::Error::invalid("max-variants", "0 (expected 1 or more)").into(),
            );
        }
        let mut unique = Vec::with_capacity(options.edits.len());
        for edit in options.edits {
            if !unique.contains(&edit) {
                unique.push(edit);
            }
        }
        options.edits = unique;
        if options.edits.is_empty() {
            return Err(
                neardup_core::Error::invalid("edits", "empty (expected at least one)").into(),
            );
        }
        Ok(Synthesizer { options })
    }

    /// The checked options (repeated edits removed).
    pub fn options(&self) -> &SynthOptions {
        &self.options
    }

    /// Generates the benchmark of `texts` (see the [module documentation](self)).
    pub fn generate(&self, texts: &[&str]) -> Benchmark {
        let clusters = first_copies(texts);
        let pool = WordPool::sample(texts, &mut Rng::stream(self.options.seed, POOL_STREAM));
        let mut context = Context {
            texts,
            clusters: &clusters,
            pool: &pool,
            used_donors: vec![false; texts.len()],
        };
        let mut benchmark = Benchmark {
            documents: Vec::new(),
            summary: Summary::default(),
        };
        for index in 0..texts.len() {
            self.generate_source(&mut context, index, &mut benchmark);
        }
        let mut shuffler = Rng::stream(self.options.seed, SHUFFLE_STREAM);
        shuffler.shuffle(&mut benchmark.documents);
        benchmark
    }

    /// Adds source `index`, its variants and its hard negative to `benchmark`. Variants and
    /// hard negatives draw from separate streams, so either rate can change without changing
    /// the other's documents.
    fn generate_source(&self, context: &mut Context<'_>, index: usize, benchmark: &mut Benchmark) {
        let origin = Origin {
            index,
            id: format!("s{}", index + 1),
            cluster: format!("s{}", context.clusters[index] + 1),
        };
        let text = context.texts[index];
        benchmark.summary.sources += 1;
        benchmark.summary.repeated_sources += usize::from(context.clusters[index] != index);
        let (id, cluster) = (origin.id.clone(), origin.cluster.clone());
        benchmark.push(&origin, id, text.to_owned(), cluster, Category::Original);
        let mut rng = Rng::stream(self.options.seed, 2 * index as u64);
        if rng.chance(self.options.duplicate_rate) {
            self.add_variants(context, &origin, &mut rng, benchmark);
        }
        let mut rng = Rng::stream(self.options.seed, 2 * index as u64 + 1);
        if rng.chance(self.options.hard_negatives) {
            add_hard_negative(context, &origin, &mut rng, benchmark);
        }
    }

    /// Adds 1 to `max_variants` variants of `origin` (fewer if no edit applies).
    fn add_variants(
        &self,
        context: &Context<'_>,
        origin: &Origin,
        rng: &mut Rng,
        benchmark: &mut Benchmark,
    ) {
        let text = context.texts[origin.index];
        let mut made = 0;
        for _ in 0..1 + rng.below(self.options.max_variants) {
            let Some((variant, edits)) = self.variant(text, context.pool, rng) else {
                benchmark.summary.skipped_variants += 1;
                continue;
            };
            made += 1;
            count_variant(&mut benchmark.summary, &edits);
            let id = format!("{}-v{made}", origin.id);
            let category = Category::Variant(edits);
            benchmark.push(origin, id, variant, origin.cluster.clone(), category);
        }
    }

    /// An edited copy of `text` and the edits applied (canonical order), or `None` if no
    /// enabled edit changes it.
    fn variant(&self, text: &str, pool: &WordPool, rng: &mut Rng) -> Option<(String, Vec<Edit>)> {
        let wanted = (1 + rng.below(2)).min(self.options.edits.len());
        let mut order = self.options.edits.clone();
        rng.shuffle(&mut order);
        let mut current = text.to_owned();
        let mut applied = Vec::new();
        for edit in order {
            if applied.len() == wanted {
                break;
            }
            if let Some(next) = self.apply(edit, &current, pool, rng) {
                current = next;
                applied.push(edit);
            }
        }
        applied.sort_unstable();
        (!applied.is_empty() && current != text).then_some((current, applied))
    }

    /// Applies one edit at the configured strength.
    fn apply(&self, edit: Edit, text: &str, pool: &WordPool, rng: &mut Rng) -> Option<String> {
        let strength = self.options.strength;
        match edit {
            Edit::CharSub => char_sub(text, rng, strength),
            Edit::WordSub => word_sub(text, rng, strength, pool),
            Edit::Script => script(text),
            Edit::Insert => insert(text, rng, strength),
            Edit::Delete => delete(text, rng, strength),
            Edit::Punct => punct(text, rng, strength),
            Edit::Width => width(text, rng, strength),
            Edit::Boilerplate => boilerplate(text, rng),
            Edit::Truncate => truncate(text, strength),
            Edit::Swap => swap(text, rng),
        }
    }
}

/// The source a document is made from.
struct Origin {
    /// Its position among the source texts.
    index: usize,
    /// Its id, `s<N>`.
    id: String,
    /// Its truth cluster.
    cluster: String,
}

impl Benchmark {
    /// Adds a document made from `origin`.
    fn push(
        &mut self,
        origin: &Origin,
        id: String,
        text: String,
        cluster: String,
        category: Category,
    ) {
        let source = origin.index;
        self.documents.push(SynthDocument {
            id,
            text,
            source,
            cluster,
            category,
        });
    }
}

/// Adds a hard negative of `origin`, a cluster of its own, or counts it as skipped.
fn add_hard_negative(
    context: &mut Context<'_>,
    origin: &Origin,
    rng: &mut Rng,
    benchmark: &mut Benchmark,
) {
    let Some(negative) = hard_negative(context, origin.index, rng) else {
        benchmark.summary.skipped_hard_negatives += 1;
        return;
    };
    benchmark.summary.hard_negatives += 1;
    let id = format!("{}-hn1", origin.id);
    benchmark.push(origin, id.clone(), negative, id, Category::HardNegative);
}

/// Refuses a rate outside `[0, 1]`.
fn check_rate(name: &'static str, rate: f64) -> Result<()> {
    if (0.0..=1.0).contains(&rate) {
        return Ok(());
    }
    let message = format!("{rate} (expected a number in [0, 1])");
    Err(neardup_core::Error::invalid(name, message).into())
}

/// Counts a produced variant in the summary.
fn count_variant(summary: &mut Summary, edits: &[Edit]) {
    summary.variants += 1;
    let category = Category::Variant(edits.to_vec()).name();
    *summary.variants_by_category.entry(category).or_default() += 1;
    for edit in edits {
        *summary.variants_by_edit.entry(*edit).or_default() += 1;
    }
}

/// What every source's generation reads.
struct Context<'a> {
    /// The source texts.
    texts: &'a [&'a str],
    /// For each text, the index of the first text equal to it.
    clusters: &'a [usize],
    /// The words [`word_sub`] takes from.
    pool: &'a WordPool,
    /// For each text, whether a hard negative already took text from it: two hard negatives
    /// with the same donor would be near-duplicates of each other.
    used_donors: Vec<bool>,
}

/// For each text, the index of its first exact copy (itself if it is the first).
fn first_copies(texts: &[&str]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(texts.len());
    let found = texts
        .iter()
        .enumerate()
        .map(|(index, text)| *first.entry(*text).or_insert(index));
    found.collect()
}

/// The opening of source `index` followed by text of up to three donors of other clusters
/// (each giving at most half of its characters, taken after its own opening, and not a piece
/// the source contains) until it is as long as the source. `None` for an empty source or
/// when no donor is found.
fn hard_negative(context: &mut Context<'_>, index: usize, rng: &mut Rng) -> Option<String> {
    let text = context.texts[index];
    let total = text.chars().count();
    if total == 0 {
        return None;
    }
    let mut result: String = text.chars().take(opening_length(text)).collect();
    let mut needed = total - opening_length(text);
    for _ in 0..MAX_DONORS {
        let Some(donor) = pick_donor(context, index, rng) else {
            break;
        };
        let piece = donor_piece(context.texts[donor], needed.max(1));
        if text.contains(piece.as_str()) {
            continue;
        }
        context.used_donors[donor] = true;
        needed = needed.saturating_sub(piece.chars().count());
        join_words(&mut result, &piece);
        if needed == 0 {
            break;
        }
    }
    (result.chars().count() > opening_length(text) && result != text).then_some(result)
}

/// A random non-empty text whose cluster differs from that of text `index`, preferably one
/// no hard negative took text from yet and then one that, like it, has (or has not) CJK
/// characters.
fn pick_donor(context: &Context<'_>, index: usize, rng: &mut Rng) -> Option<usize> {
    let cluster = context.clusters[index];
    let cjk = context.texts[index].chars().any(is_cjk);
    let mut best: Option<(usize, usize)> = None;
    for _ in 0..DONOR_DRAWS {
        let donor = rng.below(context.texts.len());
        let text = context.texts[donor];
        if context.clusters[donor] == cluster || text.is_empty() {
            continue;
        }
        let rank = 2 * usize::from(context.used_donors[donor])
            + usize::from(text.chars().any(is_cjk) != cjk);
        if best.is_none_or(|(best_rank, _)| rank < best_rank) {
            best = Some((rank, donor));
        }
        if rank == 0 {
            break;
        }
    }
    best.map(|(_, donor)| donor)
}

/// Up to `wanted` characters of `donor` after its opening (its start if the opening is all of
/// it), and never more than half of it (rounded up).
fn donor_piece(donor: &str, wanted: usize) -> String {
    let total = donor.chars().count();
    let skip = match opening_length(donor) {
        opening if opening < total => opening,
        _ => 0,
    };
    let take = wanted.min(total.div_ceil(2));
    donor.chars().skip(skip).take(take).collect()
}

/// Appends `piece` to `text`, with a space between two Latin words.
fn join_words(text: &mut String, piece: &str) {
    let last = text.chars().next_back();
    let first = piece.chars().next();
    if let (Some(last), Some(first)) = (last, first) {
        let latin = |c: char| !c.is_whitespace() && !is_cjk(c);
        if latin(last) && latin(first) {
            text.push(' ');
        }
    }
    text.push_str(piece);
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: &str = "今天北京天气晴朗，适合出门散步。傍晚可能有小雨，记得带伞！明天气温回升。";
    const EN: &str =
        "The quick brown fox jumps over the lazy dog. It was 42 degrees! Nobody minded.";

    fn rng() -> Rng {
        Rng::new(7)
    }

    #[test]
    fn rng_is_fixed_and_bounded() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        let first: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert!((0..1000).all(|_| a.below(7) < 7));
        assert_eq!(a.below(0), 0);
        let sample = a.sample(10, 4);
        assert_eq!(sample.len(), 4);
        assert!(sample.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a.sample(3, 10), vec![0, 1, 2]);
    }

    #[test]
    fn char_sub_changes_the_fraction_asked_and_keeps_the_length() {
        let text: String = ZH.chars().cycle().take(100).collect();
        let out = char_sub(&text, &mut rng(), 0.1).unwrap();
        assert_eq!(out.chars().count(), 100);
        let differences = text
            .chars()
            .zip(out.chars())
            .filter(|(a, b)| a != b)
            .count();
        assert!((1..=10).contains(&differences), "{differences}");
        assert!(out
            .chars()
            .zip(text.chars())
            .all(|(a, b)| a == b || is_cjk(a) == is_cjk(b)));
        let out = char_sub("abc def", &mut rng(), 0.5).unwrap();
        assert!(out.chars().all(|c| c == ' ' || c.is_ascii_lowercase()));
        assert_eq!(char_sub("，。 123", &mut rng(), 0.5), None);
    }

    #[test]
    fn word_sub_takes_words_from_the_pool() {
        let pool = WordPool::sample(&["alpha beta gamma", "天气预报"], &mut rng());
        assert_eq!(pool.latin, ["alpha", "beta", "gamma"]);
        assert_eq!(pool.han, ["天气", "预报"]);
        let out = word_sub("one two three four", &mut rng(), 0.5, &pool).unwrap();
        let words: Vec<&str> = out.split(' ').collect();
        assert_eq!(words.len(), 4);
        let replaced = words
            .iter()
            .filter(|w| pool.latin.contains(&w.to_string()))
            .count();
        assert_eq!(replaced, 2, "{out}");
        let out = word_sub("今天下雨", &mut rng(), 1.0, &pool).unwrap();
        assert!(out.chars().all(|c| "天气预报".contains(c)), "{out}");
    }

    #[test]
    fn units_cut_chinese_in_pairs_and_latin_at_non_letters() {
        let text = "中国人民 hello,world 好";
        let found: Vec<&str> = units(text).iter().map(|u| &text[u.start..u.end]).collect();
        assert_eq!(found, ["中国", "人民", "hello", "world", "好"]);
    }

    #[test]
    fn script_converts_to_traditional() {
        assert_eq!(script("中国发展").as_deref(), Some("中國發展"));
        assert_eq!(script("only latin"), None);
        assert_eq!(script("國"), None, "already traditional");
    }

    #[test]
    fn insert_and_delete_change_the_length_by_the_strength() {
        let text: String = ZH.chars().cycle().take(100).collect();
        let longer = insert(&text, &mut rng(), 0.05).unwrap();
        assert_eq!(longer.chars().count(), 105);
        assert!(longer.chars().all(|c| text.contains(c)));
        let shorter = delete(&text, &mut rng(), 0.05).unwrap();
        assert_eq!(shorter.chars().count(), 95);
        assert_eq!(delete("a", &mut rng(), 1.0), None);
        assert_eq!(delete("ab", &mut rng(), 1.0).map(|s| s.len()), Some(1));
        assert_eq!(insert("   ", &mut rng(), 1.0), None);
    }

    #[test]
    fn punct_only_touches_punctuation() {
        for seed in 0..20 {
            let out = punct(ZH, &mut Rng::new(seed), 0.1).unwrap();
            let letters = |s: &str| s.chars().filter(|c| !is_mark(*c)).collect::<String>();
            assert_eq!(letters(&out), letters(ZH), "{out}");
        }
        for seed in 0..20 {
            let out = punct(
                "It cost 3.5 or 1,000 U.S. dollars",
                &mut Rng::new(seed),
                0.2,
            );
            let out = out.unwrap();
            assert!(
                out.contains("3.5") && out.contains("1,000") && out.contains("U.S"),
                "{out}"
            );
            assert!(!out.contains(|c| MARKS_ZH.contains(&c)), "{out}");
        }
        let out = punct("hello world again", &mut rng(), 0.1).unwrap();
        assert!(out.contains(|c| MARKS_EN.contains(&c)), "{out}");
        assert!(
            !out.contains("hel,") && out.split_whitespace().count() == 3,
            "{out}"
        );
    }

    #[test]
    fn width_produces_full_width_characters() {
        let out = width("ABC abc 123!", &mut rng(), 1.0).unwrap();
        assert_eq!(out, "ＡＢＣ ａｂｃ １２３！");
        let out = width(EN, &mut rng(), 0.1).unwrap();
        assert!(out.chars().any(|c| ('！'..='～').contains(&c)));
        assert_eq!(width("ＡＢＣ", &mut rng(), 1.0).as_deref(), Some("ABC"));
        assert_eq!(width("天气。", &mut rng(), 1.0), None);
    }

    #[test]
    fn boilerplate_adds_a_line_of_the_list() {
        for seed in 0..8 {
            let out = boilerplate(ZH, &mut Rng::new(seed)).unwrap();
            let line = out.replacen(ZH, "", 1);
            assert!(BOILERPLATE_ZH.contains(&line.trim()), "{out}");
            let out = boilerplate(EN, &mut Rng::new(seed)).unwrap();
            let appended = BOILERPLATE_EN
                .iter()
                .any(|line| out == format!("{EN}\n{line}"));
            let prepended = BOILERPLATE_EN
                .iter()
                .any(|line| out == format!("{line}\n{EN}"));
            assert!(appended || prepended, "{out}");
        }
    }

    #[test]
    fn truncate_cuts_twice_the_strength_at_most_thirty_percent() {
        let text: String = "abcdefghij".repeat(10);
        assert_eq!(truncate(&text, 0.05).unwrap(), text[..90]);
        assert_eq!(truncate(&text, 0.9).unwrap(), text[..70]);
        assert_eq!(truncate("ab", 0.01).as_deref(), Some("a"));
        assert_eq!(truncate("a", 0.5), None);
    }

    #[test]
    fn sentences_cover_the_text() {
        let text = "第一句。第二句！！第三句\nOne. Two?Three";
        let parts = sentences(text);
        let bodies: Vec<&str> = parts.iter().map(|s| s.body).collect();
        assert_eq!(
            bodies,
            ["第一句。", "第二句！！", "第三句", "One.", "Two?Three"]
        );
        let joined: String = parts.iter().flat_map(|s| [s.body, s.gap]).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn swap_keeps_the_multiset_of_sentences() {
        for text in [ZH, EN] {
            let out = swap(text, &mut rng()).unwrap();
            let sorted = |s: &str| {
                let mut bodies: Vec<String> =
                    sentences(s).iter().map(|p| p.body.to_owned()).collect();
                bodies.sort();
                bodies
            };
            assert_ne!(out, text);
            assert_eq!(sorted(&out), sorted(text));
        }
        assert_eq!(swap("只有一句话。", &mut rng()), None);
        assert_eq!(swap("同样。同样。", &mut rng()), None);
    }

    /// Random sentences of common characters (Chinese) or of words (English).
    fn random_sentence(rng: &mut Rng, chinese: bool) -> String {
        let han: Vec<char> = COMMON_HAN.chars().collect();
        let words = [
            "river", "market", "council", "storm", "season", "league", "vaccine", "bank",
        ];
        let length = 8 + rng.below(12);
        match chinese {
            true => (0..length)
                .map(|_| han[rng.below(han.len())])
                .chain(['。'])
                .collect(),
            false => {
                let chosen: Vec<&str> =
                    (0..length).map(|_| words[rng.below(words.len())]).collect();
                format!("{}. ", chosen.join(" "))
            }
        }
    }

    /// 40 Chinese and 40 English documents: a title, then one to four random sentences.
    fn texts() -> Vec<String> {
        let mut rng = Rng::new(99);
        let document = |i: usize, rng: &mut Rng| {
            let chinese = i < 40;
            let title = if chinese {
                format!("标题{i}号：新闻。")
            } else {
                format!("Headline {i}. ")
            };
            let body: String = (0..1 + i % 4)
                .map(|_| random_sentence(rng, chinese))
                .collect();
            title + body.trim_end()
        };
        (0..80).map(|i| document(i, &mut rng)).collect()
    }

    fn generate(options: SynthOptions) -> Benchmark {
        let texts = texts();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        Synthesizer::new(options).unwrap().generate(&texts)
    }

    #[test]
    fn generation_is_deterministic_by_seed() {
        let options = SynthOptions {
            duplicate_rate: 0.5,
            hard_negatives: 0.2,
            ..Default::default()
        };
        let first = generate(options.clone());
        assert_eq!(first, generate(options.clone()));
        let other = generate(SynthOptions { seed: 2, ..options });
        assert_ne!(first.documents, other.documents);
    }

    #[test]
    fn truth_has_originals_variants_and_hard_negatives() {
        let options = SynthOptions {
            duplicate_rate: 1.0,
            hard_negatives: 1.0,
            ..Default::default()
        };
        let benchmark = generate(options);
        let summary = &benchmark.summary;
        assert_eq!(summary.sources, 80);
        assert_eq!(summary.hard_negatives, 80);
        assert!(summary.variants >= 80, "{summary:?}");
        assert_eq!(benchmark.documents.len(), 80 + summary.variants + 80);
        for document in &benchmark.documents {
            let source = format!("s{}", document.source + 1);
            match &document.category {
                Category::Original => {
                    assert_eq!((&document.id, &document.cluster), (&source, &source))
                }
                Category::Variant(edits) => {
                    assert!((1..=2).contains(&edits.len()));
                    assert!(document.id.starts_with(&format!("{source}-v")));
                    assert_eq!(document.cluster, source);
                }
                Category::HardNegative => assert_eq!(document.cluster, document.id),
            }
        }
        let positions: Vec<usize> = benchmark.documents.iter().map(|d| d.source).collect();
        assert!(
            !positions.windows(2).all(|w| w[0] <= w[1]),
            "documents are shuffled"
        );
    }

    #[test]
    fn hard_negatives_share_the_opening_and_not_the_rest() {
        let texts = texts();
        let options = SynthOptions {
            duplicate_rate: 0.0,
            hard_negatives: 1.0,
            ..Default::default()
        };
        let benchmark = generate(options);
        for negative in benchmark
            .documents
            .iter()
            .filter(|d| d.category == Category::HardNegative)
        {
            let source = &texts[negative.source];
            let opening: String = source.chars().take(opening_length(source)).collect();
            assert!(negative.text.starts_with(&opening), "{negative:?}");
            let rest: String = source.chars().skip(opening.chars().count()).collect();
            assert!(!negative.text.ends_with(&rest), "{negative:?}");
            assert_ne!(&negative.text, source);
        }
    }

    #[test]
    fn identical_sources_share_a_cluster() {
        let texts = ["同一篇文章。", "另一篇。", "同一篇文章。"];
        let options = SynthOptions {
            duplicate_rate: 0.0,
            hard_negatives: 0.0,
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options).unwrap().generate(&texts);
        let third = benchmark.documents.iter().find(|d| d.id == "s3").unwrap();
        assert_eq!(third.cluster, "s1");
        assert_eq!(benchmark.summary.repeated_sources, 1);
    }

    #[test]
    fn a_variant_records_the_edit_actually_applied() {
        let options = SynthOptions {
            duplicate_rate: 1.0,
            edits: vec![Edit::Script, Edit::Width],
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options)
            .unwrap()
            .generate(&["plain english text"]);
        for document in &benchmark.documents {
            if let Category::Variant(edits) = &document.category {
                assert_eq!(edits, &[Edit::Width], "script cannot apply to English");
            }
        }
        let options = SynthOptions {
            duplicate_rate: 1.0,
            edits: vec![Edit::Script],
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options)
            .unwrap()
            .generate(&["plain english text"]);
        assert_eq!(benchmark.documents.len(), 1);
        assert!(benchmark.summary.skipped_variants >= 1);
    }

    #[test]
    fn bad_options_are_refused_with_their_name() {
        let refused = |options: SynthOptions| Synthesizer::new(options).unwrap_err().to_string();
        let base = SynthOptions::default();
        assert!(refused(SynthOptions {
            strength: 0.0,
            ..base.clone()
        })
        .contains("strength"));
        assert!(refused(SynthOptions {
            duplicate_rate: 1.5,
            ..base.clone()
        })
        .contains("duplicate-rate"));
        assert!(refused(SynthOptions {
            hard_negatives: -0.1,
            ..base.clone()
        })
        .contains("hard-negatives"));
        assert!(refused(SynthOptions {
            max_variants: 0,
            ..base.clone()
        })
        .contains("max-variants"));
        assert!(refused(SynthOptions {
            edits: vec![],
            ..base
        })
        .contains("edits"));
        assert!("bogus"
            .parse::<Edit>()
            .unwrap_err()
            .to_string()
            .contains("\"bogus\""));
        assert_eq!("word-sub".parse::<Edit>(), Ok(Edit::WordSub));
    }

    #[test]
    fn categories_join_edit_names() {
        assert_eq!(
            Category::Variant(vec![Edit::Punct, Edit::Width]).name(),
            "punct+width"
        );
        assert_eq!(Category::HardNegative.name(), "hard_negative");
        assert_eq!(Category::Original.name(), "original");
    }
}
