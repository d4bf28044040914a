//! Text normalisation applied before tokenising.
//!
//! The steps, in order: optional HTML stripping, Unicode NFKC (full-width letters, digits and
//! punctuation become their ASCII forms; compatibility ideographs become unified ones), case
//! folding (`char::to_lowercase`), optional traditional-to-simplified Chinese, and punctuation
//! folding: every character that is neither a letter nor a digit (punctuation, symbols, emoji)
//! becomes a space, and runs of whitespace become one space. The result has no leading or
//! trailing space.
//!
//! Traditional-to-simplified conversion is character by character, with the single-character
//! rules of zhconv (MediaWiki's conversion tables), checked in as a table
//! (`src/t2s_table.rs`) so that the core does not build zhconv. Phrase rules are
//! deliberately not applied: deduplication needs the same character to become the same
//! character in every document, so that a traditional repost and its simplified original
//! normalise alike; a context-dependent conversion could turn one character two ways.

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;

/// Which Chinese script variant the text is converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChineseVariant {
    /// Convert traditional characters to simplified (the default), so that a traditional
    /// repost matches its simplified original.
    #[default]
    Simplified,
    /// Leave Chinese characters as they are.
    Keep,
}

crate::named_choices!(ChineseVariant as "chinese_variant" {
    Simplified => "simplified",
    Keep => "keep",
});

/// Options of [`Normalizer`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NormalizeOptions {
    /// Lowercase the text (default true).
    pub lowercase: bool,
    /// Chinese script variant (default simplified).
    pub chinese_variant: ChineseVariant,
    /// Replace punctuation and symbols by spaces (default true).
    pub strip_punctuation: bool,
    /// Remove HTML tags, comments, `<script>`/`<style>` contents and decode entities
    /// (default false).
    pub strip_html: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions {
            lowercase: true,
            chinese_variant: ChineseVariant::Simplified,
            strip_punctuation: true,
            strip_html: false,
        }
    }
}

/// A text normaliser; cheap to clone, safe to share between threads.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    options: NormalizeOptions,
}

impl Normalizer {
    /// A normaliser with the given options.
    pub fn new(options: NormalizeOptions) -> Normalizer {
        Normalizer { options }
    }

    /// The options of this normaliser.
    pub fn options(&self) -> &NormalizeOptions {
        &self.options
    }

    /// Normalises `text`.
    ///
    /// ```
    /// use neardup_core::normalize::Normalizer;
    /// let n = Normalizer::default();
    /// assert_eq!(n.normalize("Ｈｅｌｌｏ，  World!!"), "hello world");
    /// assert_eq!(n.normalize("妈妈喊你來吃飯。"), "妈妈喊你来吃饭");
    /// ```
    pub fn normalize(&self, text: &str) -> String {
        let text: Cow<'_, str> = if self.options.strip_html {
            Cow::Owned(crate::html::strip_html(text))
        } else {
            Cow::Borrowed(text)
        };
        self.fast_fold(&text)
            .unwrap_or_else(|| self.full_fold(&text))
    }

    /// The text without its markup when `strip_html` is on, else the text itself.
    pub fn strip_html_if_enabled<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.options.strip_html {
            Cow::Owned(crate::html::strip_html(text))
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Normalises `text` without the HTML step (for text whose markup is already gone).
    pub fn normalize_plain(&self, text: &str) -> String {
        self.fast_fold(text).unwrap_or_else(|| self.full_fold(text))
    }

    #[inline]
    fn simplify(&self) -> bool {
        self.options.chinese_variant == ChineseVariant::Simplified
    }

    /// NFKC, case folding and punctuation folding in one pass, for text whose characters all
    /// have a simple NFKC form (see [`nfkc_simple`]); `None` for any other text. The test
    /// `fast_path_agrees_with_nfkc` checks it against the full path for every such character.
    fn fast_fold(&self, text: &str) -> Option<String> {
        if !self.options.strip_punctuation {
            return None;
        }
        let simplify = self.simplify();
        let mut out = SpaceFolder::with_capacity(text.len());
        for c in text.chars() {
            let mut c = nfkc_simple(c)?;
            if self.options.lowercase {
                c = c.to_ascii_lowercase();
            }
            if simplify {
                // The table is built on the first CJK character, never for other text.
                c = simplified(c);
            }
            // No white space is alphanumeric: one test tells both.
            out.push(c, !is_alphanumeric(c));
        }
        Some(out.finish())
    }

    /// The general path: the full NFKC normaliser, Unicode lowercasing, then folding.
    fn full_fold(&self, text: &str) -> String {
        let text = ComposingNormalizerBorrowed::new_nfkc().normalize(text);
        let text: Cow<'_, str> = if self.options.lowercase && has_uppercase(&text) {
            Cow::Owned(text.to_lowercase())
        } else {
            text
        };
        fold_spaces(&text, self.options.strip_punctuation, self.simplify())
    }
}

/// First code point of [`t2s_table`]: CJK Extension A, then the unified ideographs.
const T2S_FIRST: u32 = 0x3400;
/// Last code point of [`t2s_table`].
const T2S_LAST: u32 = 0x9FFF;

/// The simplified form of every character from U+3400 to U+9FFF (itself when it has no
/// single-character simplified form), unpacked on first use from the checked-in pairs of
/// [`crate::t2s_table::PAIRS`] (generated from zhconv's zh-Hans rules; a test checks them
/// against zhconv, another regenerates them).
fn t2s_table() -> &'static [char] {
    static TABLE: std::sync::OnceLock<Box<[char]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<char> = (T2S_FIRST..=T2S_LAST)
            .map(|code| char::from_u32(code).unwrap_or(' '))
            .collect();
        for &(traditional, simplified) in crate::t2s_table::PAIRS {
            let slot = (traditional - T2S_FIRST) as usize;
            // The pairs are generated within the range and as valid scalar values.
            if let (Some(entry), Some(simplified)) =
                (table.get_mut(slot), char::from_u32(simplified))
            {
                *entry = simplified;
            }
        }
        table.into_boxed_slice()
    })
}

/// The traditional characters of [`t2s_table`] (those it changes), one bit each from
/// [`T2S_FIRST`]: 3.4 KB, which stays in the first-level cache where the table (108 KB) does
/// not, for the line keys, which fold every ideograph of a corpus and meet few traditional ones.
pub(crate) struct Simplifier {
    table: &'static [char],
    changed: Box<[u64]>,
}

impl Simplifier {
    /// The simplified form of `c` (as [`simplified`]).
    #[inline]
    pub(crate) fn simplified(&self, c: char) -> char {
        let slot = (c as u32).wrapping_sub(T2S_FIRST) as usize;
        match self.changed.get(slot >> 6) {
            Some(bits) if bits >> (slot & 63) & 1 == 1 => self.table[slot],
            _ => c,
        }
    }
}

/// The [`Simplifier`], built on first use.
pub(crate) fn simplifier() -> &'static Simplifier {
    static SIMPLIFIER: std::sync::OnceLock<Simplifier> = std::sync::OnceLock::new();
    SIMPLIFIER.get_or_init(|| {
        let table = t2s_table();
        let mut changed = vec![0u64; table.len().div_ceil(64)];
        for (slot, &simplified) in table.iter().enumerate() {
            if simplified as u32 != T2S_FIRST + slot as u32 {
                changed[slot >> 6] |= 1 << (slot & 63);
            }
        }
        Simplifier {
            table,
            changed: changed.into_boxed_slice(),
        }
    })
}

/// The simplified form of `c` (see [`t2s_table`]).
#[inline]
pub(crate) fn simplified(c: char) -> char {
    let code = c as u32;
    if (T2S_FIRST..=T2S_LAST).contains(&code) {
        t2s_table()[(code - T2S_FIRST) as usize]
    } else {
        c
    }
}

/// The NFKC form of `c` when it is a single character this fast path knows, or a character
/// that punctuation folding turns into a space either way: ASCII, full-width ASCII, the
/// ideographic space, CJK ideographs, CJK, Latin-1 and general punctuation.
#[inline]
fn nfkc_simple(c: char) -> Option<char> {
    match c as u32 {
        0x00..=0x7F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF => Some(c),
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0),
        0x3000 => Some(' '),
        0x3001..=0x3004 | 0x3008..=0x3020 | 0x2010..=0x2027 | 0x2030..=0x205E => Some(c),
        0xFF5F..=0xFF65 | 0x00B7 | 0x00AB | 0x00BB | 0xFFFD | 0x2190..=0x21FF => Some(c),
        0x25A0..=0x25FF => Some(c),
        _ => None,
    }
}

fn has_uppercase(text: &str) -> bool {
    text.chars().any(char::is_uppercase)
}

/// `char::is_alphanumeric` with the two common cases (ASCII, CJK ideographs) first.
#[inline]
fn is_alphanumeric(c: char) -> bool {
    match c as u32 {
        0x00..=0x7F => c.is_ascii_alphanumeric(),
        0x4E00..=0x9FFF => true,
        _ => c.is_alphanumeric(),
    }
}

/// Replaces punctuation (when asked) and whitespace runs by single spaces, trimming both ends,
/// and simplifies Chinese characters when asked.
fn fold_spaces(text: &str, strip_punctuation: bool, simplify: bool) -> String {
    let mut out = SpaceFolder::with_capacity(text.len());
    for c in text.chars() {
        let c = if simplify { simplified(c) } else { c };
        out.push(
            c,
            c.is_whitespace() || (strip_punctuation && !is_alphanumeric(c)),
        );
    }
    out.finish()
}

/// Output of the folding passes: separators collapse into one space between kept characters,
/// none at either end.
struct SpaceFolder {
    out: String,
    pending_space: bool,
}

impl SpaceFolder {
    fn with_capacity(capacity: usize) -> SpaceFolder {
        SpaceFolder {
            out: String::with_capacity(capacity),
            pending_space: false,
        }
    }

    #[inline]
    fn push(&mut self, c: char, separator: bool) {
        if separator {
            self.pending_space = !self.out.is_empty();
        } else {
            if self.pending_space {
                self.out.push(' ');
                self.pending_space = false;
            }
            self.out.push(c);
        }
    }

    fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_and_punctuation_disappear() {
        let n = Normalizer::default();
        assert_eq!(
            n.normalize("延迟退休真的来了！你准备好“慢慢变老”了吗?"),
            n.normalize("延迟退休真的来了!你准备好\"慢慢变老\"了吗？")
        );
    }

    #[test]
    fn traditional_becomes_simplified_unless_kept() {
        let n = Normalizer::default();
        assert_eq!(n.normalize("臺灣的經濟發展"), "台湾的经济发展");
        let keep = Normalizer::new(NormalizeOptions {
            chinese_variant: ChineseVariant::Keep,
            ..NormalizeOptions::default()
        });
        assert_eq!(keep.normalize("經濟"), "經濟");
    }

    #[test]
    fn traditional_and_simplified_texts_normalise_alike() {
        let n = Normalizer::default();
        for (traditional, simplified) in [
            ("頭髮乾燥怎麼辦", "头发干燥怎么办"),
            ("後來他發現了這個問題", "后来他发现了这个问题"),
            ("乾隆皇帝", "乾隆皇帝"),
            ("電腦軟體與網路", "电脑软体与网路"),
        ] {
            assert_eq!(
                n.normalize(traditional),
                n.normalize(simplified),
                "{traditional}"
            );
        }
    }

    /// The single-character zh-Hans conversions of zhconv in the table's range, as the
    /// checked-in pairs list them.
    fn zhconv_pairs() -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for code in T2S_FIRST..=T2S_LAST {
            let c = char::from_u32(code).unwrap();
            let alone = zhconv::zhconv(&c.to_string(), zhconv::Variant::ZhHans);
            let mut chars = alone.chars();
            if let (Some(simple), None) = (chars.next(), chars.next()) {
                if simple != c {
                    pairs.push((code, simple as u32));
                }
            }
        }
        pairs
    }

    /// The text of `src/t2s_table.rs` for `pairs`.
    fn t2s_source(pairs: &[(u32, u32)]) -> String {
        let mut source = String::from(
            "//! Traditional to simplified Chinese, one character each: `(traditional, simplified)`\n\
             //! code points from U+3400 to U+9FFF, sorted, from zhconv's zh-Hans rules (a character\n\
             //! whose conversion is not one character is left out). Generated; do not edit. To\n\
             //! regenerate after a zhconv update:\n\
             //! `cargo test -p neardup-core --lib regenerate_t2s_table -- --ignored`.\n\n\
             /// The pairs.\n\
             #[rustfmt::skip]\n\
             pub(crate) static PAIRS: &[(u32, u32)] = &[\n",
        );
        for chunk in pairs.chunks(6) {
            source.push_str("   ");
            for (traditional, simplified) in chunk {
                source.push_str(&format!(" (0x{traditional:04X}, 0x{simplified:04X}),"));
            }
            source.push('\n');
        }
        source.push_str("];\n");
        source
    }

    #[test]
    fn t2s_table_is_what_zhconv_gives_for_each_character_alone() {
        let pairs = zhconv_pairs();
        assert_eq!(crate::t2s_table::PAIRS, &pairs[..]);
        let table = t2s_table();
        for code in T2S_FIRST..=T2S_LAST {
            let c = char::from_u32(code).unwrap();
            let expected = (pairs.binary_search_by_key(&code, |p| p.0))
                .map_or(c, |i| char::from_u32(pairs[i].1).unwrap());
            assert_eq!(table[(code - T2S_FIRST) as usize], expected, "U+{code:04X}");
        }
    }

    #[test]
    #[ignore = "writes src/t2s_table.rs; run after updating zhconv"]
    fn regenerate_t2s_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/t2s_table.rs");
        std::fs::write(path, t2s_source(&zhconv_pairs())).unwrap();
    }

    #[test]
    fn fast_path_agrees_with_nfkc() {
        let fast = Normalizer::default();
        let slow = |text: &str| {
            let nfkc = ComposingNormalizerBorrowed::new_nfkc().normalize(text);
            let lower = nfkc.to_lowercase();
            let simplified: String = lower
                .chars()
                .map(
                    |c| match zhconv::zhconv(&c.to_string(), zhconv::Variant::ZhHans) {
                        s if s.chars().count() == 1 => s.chars().next().unwrap(),
                        _ => c,
                    },
                )
                .collect();
            fold_spaces(&simplified, true, false)
        };
        let simple = |c: &char| nfkc_simple(*c).is_some();
        for code in (0..0x1_0000u32).filter(|&c| char::from_u32(c).is_some_and(|c| simple(&c))) {
            let c = char::from_u32(code).unwrap();
            let text = format!("a{c}b");
            assert_eq!(fast.normalize(&text), slow(&text), "U+{code:04X}");
        }
    }

    #[test]
    fn alphanumeric_shortcut_agrees_with_std() {
        for code in (0..0x80u32).chain(0x4E00..=0x9FFF) {
            let c = char::from_u32(code).unwrap();
            assert_eq!(is_alphanumeric(c), c.is_alphanumeric(), "U+{code:04X}");
        }
    }

    #[test]
    fn whitespace_is_folded_and_trimmed() {
        let n = Normalizer::default();
        assert_eq!(n.normalize("  a \t\n b  "), "a b");
        assert_eq!(n.normalize(""), "");
        assert_eq!(n.normalize("!!! ..."), "");
    }

    #[test]
    fn punctuation_can_be_kept() {
        let n = Normalizer::new(NormalizeOptions {
            strip_punctuation: false,
            ..NormalizeOptions::default()
        });
        assert_eq!(n.normalize("A, b!"), "a, b!");
    }

    #[test]
    fn html_is_stripped_when_asked() {
        let n = Normalizer::new(NormalizeOptions {
            strip_html: true,
            ..NormalizeOptions::default()
        });
        assert_eq!(
            n.normalize("<p>Tom &amp; Jerry</p><script>x=1</script>"),
            "tom jerry"
        );
    }

    #[test]
    fn the_simplifier_agrees_with_the_table_on_every_character() {
        let simplifier = simplifier();
        for code in (T2S_FIRST - 300)..(T2S_LAST + 300) {
            if let Some(c) = char::from_u32(code) {
                assert_eq!(simplifier.simplified(c), simplified(c), "U+{code:04X}");
            }
        }
        for c in ['a', '1', ' ', '。', '\u{10000}', '\u{20000}'] {
            assert_eq!(simplifier.simplified(c), c);
        }
        assert_eq!(simplifier.simplified('來'), '来');
    }
}
