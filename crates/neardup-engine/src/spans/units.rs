//! The line and sentence levels: whole units counted by exact text, later copies removed.

use hashbrown::HashMap;

use super::{Removal, SpanCount, SpanLevel, SpanOptions, SpanRemoval};

/// One line or sentence: the text it is matched by (`key`) and the bytes its removal takes
/// (`remove`: the key and its line break, or the key and the spaces after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// The bytes of the text it is matched by.
    pub key: (usize, usize),
    /// The bytes its removal takes.
    pub remove: (usize, usize),
}

/// The units of `text` at `level` (line or sentence) that may be spans: not blank, and at
/// least `min_length` characters long. The distributed form counts their keys by a shuffle.
pub fn candidate_units(text: &str, level: SpanLevel, min_length: usize) -> Vec<Unit> {
    units(text, level)
        .filter(|unit| long_enough(&text[unit.key.0..unit.key.1], min_length))
        .collect()
}

/// Whether a unit's key may be a span.
fn long_enough(key: &str, min_length: usize) -> bool {
    !key.trim().is_empty() && key.chars().nth(min_length.saturating_sub(1)).is_some()
}

/// Ends a sentence wherever it stands.
fn ends_sentence(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '!' | '?' | '．' | '｡')
}

/// Closes a sentence after its end: quotes and brackets.
fn closes_sentence(c: char) -> bool {
    matches!(
        c,
        '”' | '’' | '"' | '\'' | '）' | ')' | '】' | '」' | '』' | '》' | ']' | '〕'
    )
}

/// Space kept out of a sentence's key (a line break ends the sentence instead).
fn is_inline_space(c: char) -> bool {
    c.is_whitespace() && c != '\n'
}

/// The lines of `text`: the key leaves out `\n` and a `\r` before it; the removal takes the
/// line break.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = Unit> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let start = at;
        let (end, next) = match text[start..].find('\n') {
            Some(offset) => (start + offset, start + offset + 1),
            None => (text.len(), text.len()),
        };
        at = next;
        let key_end = if text[start..end].ends_with('\r') {
            end - 1
        } else {
            end
        };
        Some(Unit {
            key: (start, key_end),
            remove: (start, next),
        })
    })
}

/// The sentences of `text`: a sentence ends after `。！？!?．｡` (and the ends and closing
/// quotes or brackets right after), after a `.` followed by a space or the end, or at a line
/// break. The key leaves out the spaces around it; the removal takes the spaces after it,
/// not the line break.
pub(crate) fn sentences(text: &str) -> impl Iterator<Item = Unit> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let rest = &text[at..];
        let leading = rest.len() - rest.trim_start_matches(char::is_whitespace).len();
        let start = at + leading;
        if start >= text.len() {
            at = text.len();
            return None;
        }
        let end = sentence_end(text, start);
        let after = &text[end..];
        let spaces = after.len() - after.trim_start_matches(is_inline_space).len();
        at = end + spaces;
        let key_end = start + text[start..end].trim_end().len();
        Some(Unit {
            key: (start, key_end),
            remove: (start, end + spaces),
        })
    })
}

/// The byte after the sentence that starts at `start` (its ends and closers included).
fn sentence_end(text: &str, start: usize) -> usize {
    let mut chars = text[start..].char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let after = start + offset + c.len_utf8();
        if c == '\n' {
            return start + offset;
        }
        let period = c == '.' && chars.peek().is_none_or(|&(_, next)| next.is_whitespace());
        if ends_sentence(c) || period {
            let mut end = after;
            while let Some(&(offset, next)) = chars.peek() {
                if ends_sentence(next) || closes_sentence(next) || next == '.' {
                    end = start + offset + next.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            return end;
        }
    }
    text.len()
}

/// The units of a level.
pub(crate) fn units(text: &str, level: SpanLevel) -> Box<dyn Iterator<Item = Unit> + '_> {
    match level {
        SpanLevel::Sentence => Box::new(sentences(text)),
        _ => Box::new(lines(text)),
    }
}

/// How often a unit's text was seen, and where first.
struct Seen {
    count: u32,
    last_doc: u32,
    first: (u32, u32),
}

/// The removals of the line or sentence level.
pub(crate) fn removals<S: AsRef<str> + Sync>(texts: &[S], options: &SpanOptions) -> Vec<Removal> {
    let mut seen: HashMap<&str, Seen> = HashMap::new();
    for (doc, text) in texts.iter().enumerate() {
        let text = text.as_ref();
        let doc = doc as u32;
        for unit in units(text, options.level) {
            let key = &text[unit.key.0..unit.key.1];
            if !long_enough(key, options.min_length) {
                continue;
            }
            let entry = seen.entry(key).or_insert(Seen {
                count: 0,
                last_doc: u32::MAX,
                first: (doc, unit.key.0 as u32),
            });
            if options.count == SpanCount::Occurrences || entry.last_doc != doc {
                entry.count = entry.count.saturating_add(1);
            }
            entry.last_doc = doc;
        }
    }
    let mut removals = Vec::new();
    for (doc, text) in texts.iter().enumerate() {
        let text = text.as_ref();
        let doc = doc as u32;
        for unit in units(text, options.level) {
            let Some(entry) = seen.get(&text[unit.key.0..unit.key.1]) else {
                continue;
            };
            let first = entry.first == (doc, unit.key.0 as u32);
            if (entry.count as usize) < options.min_count
                || first && options.remove == SpanRemoval::Later
            {
                continue;
            }
            removals.push(Removal {
                doc,
                start: unit.remove.0 as u32,
                end: unit.remove.1 as u32,
            });
        }
    }
    removals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str, level: SpanLevel) -> Vec<&str> {
        units(text, level)
            .map(|unit| &text[unit.key.0..unit.key.1])
            .collect()
    }

    #[test]
    fn sentences_end_at_chinese_and_english_ends() {
        let text = "今天下雨了！“你带伞了吗？”他问。 Mr. Smith said no.  3.14 is pi\n第二行";
        assert_eq!(
            keys(text, SpanLevel::Sentence),
            [
                "今天下雨了！",
                "“你带伞了吗？”",
                "他问。",
                "Mr.",
                "Smith said no.",
                "3.14 is pi",
                "第二行"
            ]
        );
    }

    #[test]
    fn a_sentence_removal_takes_its_spaces_not_the_line_break() {
        let text = "A b.  C d.\nE";
        let removes: Vec<&str> = sentences(text)
            .map(|unit| &text[unit.remove.0..unit.remove.1])
            .collect();
        assert_eq!(removes, ["A b.  ", "C d.", "E"]);
    }

    #[test]
    fn lines_leave_out_the_line_break_and_carriage_return() {
        let text = "one\r\ntwo\n\nthree";
        assert_eq!(keys(text, SpanLevel::Line), ["one", "two", "", "three"]);
        let removes: Vec<&str> = lines(text)
            .map(|unit| &text[unit.remove.0..unit.remove.1])
            .collect();
        assert_eq!(removes, ["one\r\n", "two\n", "\n", "three"]);
    }
}
