//! The edits that turn a document into a near-duplicate (except `punct` and `swap`, which have
//! modules of their own), and the word pool [`word_sub`] draws from.

use neardup_core::tokenize::is_cjk;

use super::rng::Rng;

/// Words (and two-character Chinese chunks) kept in each half of the [`WordPool`].
const POOL_CAPACITY: usize = 4096;
/// Common Chinese characters, for substitutions in a text with too few of its own.
pub(super) const COMMON_HAN: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府研";
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
/// Offset from an ASCII character to its full-width form (U+FF01..U+FF5E).
const FULL_WIDTH_OFFSET: u32 = 0xfee0;

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
pub(super) fn amount(strength: f64, total: usize) -> usize {
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
pub(super) fn changed(text: &str, new: String) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::{rng, EN, ZH};

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
}
