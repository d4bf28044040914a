//! The punctuation edit: marks changed, added and removed between words.

use neardup_core::tokenize::is_cjk;

use super::edits::{amount, changed};
use super::rng::Rng;

/// Chinese (full-width) punctuation that [`punct`] changes, adds and removes.
const MARKS_ZH: [char; 5] = ['，', '。', '！', '？', '、'];
/// ASCII punctuation that [`punct`] changes, adds and removes.
const MARKS_EN: [char; 4] = [',', '.', '!', '?'];

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::{rng, ZH};

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
}
