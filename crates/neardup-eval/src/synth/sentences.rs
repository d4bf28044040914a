//! Sentences: splitting a text into them, the swap edit, and a text's opening.

use super::edits::changed;
use super::rng::Rng;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::{rng, EN, ZH};

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
}
