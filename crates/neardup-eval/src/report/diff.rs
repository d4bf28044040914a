//! Escaping and the side-by-side difference of a duplicate and its representative.
//!
//! Texts are cut to a number of characters before they are compared, so that neither the diff
//! nor the page grows with the documents. Text that contains CJK characters is compared
//! character by character (it has no spaces between words); other text word by word. The diff
//! runs under a timeout: past it, `similar` returns a coarser but still correct diff.

use std::time::Duration;

use neardup_core::tokenize::is_cjk;
use similar::{ChangeTag, TextDiff};

/// Appends `text` to `out` with `&`, `<`, `>`, `"` and `'` escaped, so that it is safe both as
/// element content and inside a quoted attribute.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

/// `text` escaped for HTML (see [`push_escaped`]).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// A text cut to at most a number of characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated<'a> {
    /// The first characters of the text.
    pub shown: &'a str,
    /// How many characters `shown` has.
    pub shown_chars: usize,
    /// The length of the whole text, in characters.
    pub total_chars: usize,
}

impl<'a> Truncated<'a> {
    /// The first `max_chars` characters of `text`.
    pub fn new(text: &'a str, max_chars: usize) -> Truncated<'a> {
        let mut end = text.len();
        let mut total_chars = 0;
        for (offset, _) in text.char_indices() {
            if total_chars == max_chars {
                end = offset;
            }
            total_chars += 1;
        }
        Truncated {
            shown: &text[..end],
            shown_chars: total_chars.min(max_chars),
            total_chars,
        }
    }

    /// Whether characters were cut off.
    pub fn is_cut(&self) -> bool {
        self.shown_chars < self.total_chars
    }
}

/// The two sides of a difference as HTML: the old text with what only it has in `<del>`, the
/// new text with what only it has in `<ins>`; everything escaped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SideBySide {
    /// The old (representative) text.
    pub old: String,
    /// The new (duplicate) text.
    pub new: String,
    /// Whether anything differs.
    pub differs: bool,
}

/// Compares `old` and `new` by characters if either contains CJK text, else by words, giving
/// up on the exact diff after `timeout`.
pub fn side_by_side(old: &str, new: &str, timeout: Duration) -> SideBySide {
    let mut config = TextDiff::configure();
    config.timeout(timeout);
    let diff = if old.chars().chain(new.chars()).any(is_cjk) {
        config.diff_chars(old, new)
    } else {
        config.diff_words(old, new)
    };
    let mut old_side = Marked::new("del");
    let mut new_side = Marked::new("ins");
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                old_side.push(text, false);
                new_side.push(text, false);
            }
            ChangeTag::Delete => old_side.push(text, true),
            ChangeTag::Insert => new_side.push(text, true),
        }
    }
    SideBySide {
        differs: old_side.marks + new_side.marks > 0,
        old: old_side.finish(),
        new: new_side.finish(),
    }
}

/// One side of a diff being written: escaped text, with runs of changed tokens wrapped in one
/// element each.
struct Marked {
    html: String,
    element: &'static str,
    open: bool,
    marks: usize,
}

impl Marked {
    fn new(element: &'static str) -> Marked {
        Marked {
            html: String::new(),
            element,
            open: false,
            marks: 0,
        }
    }

    fn push(&mut self, text: &str, changed: bool) {
        if changed && !self.open {
            self.html.push('<');
            self.html.push_str(self.element);
            self.html.push('>');
            self.marks += 1;
        } else if !changed && self.open {
            self.close();
        }
        self.open = changed;
        push_escaped(&mut self.html, text);
    }

    fn close(&mut self) {
        self.html.push_str("</");
        self.html.push_str(self.element);
        self.html.push('>');
    }

    fn finish(mut self) -> String {
        if self.open {
            self.close();
        }
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(1);

    #[test]
    fn escaping_neutralises_markup() {
        let text = "<script>alert(1)</script> & \"quotes\" 'too'";
        assert_eq!(
            escape_html(text),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;too&#39;"
        );
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let cut = Truncated::new("今天天气很好", 2);
        assert_eq!(cut.shown, "今天");
        assert_eq!((cut.shown_chars, cut.total_chars), (2, 6));
        assert!(cut.is_cut());
        let whole = Truncated::new("short", 10);
        assert_eq!((whole.shown, whole.shown_chars), ("short", 5));
        assert!(!Truncated::new("exact", 5).is_cut());
        assert!(!whole.is_cut());
    }

    #[test]
    fn latin_text_is_compared_by_words() {
        let diff = side_by_side("the quick brown fox", "the quick red fox", TIMEOUT);
        assert_eq!(diff.old, "the quick <del>brown</del> fox");
        assert_eq!(diff.new, "the quick <ins>red</ins> fox");
        assert!(diff.differs);
    }

    #[test]
    fn cjk_text_is_compared_by_characters() {
        let diff = side_by_side("今天北京天气晴朗", "今天上海天气晴朗", TIMEOUT);
        assert_eq!(diff.old, "今天<del>北京</del>天气晴朗");
        assert_eq!(diff.new, "今天<ins>上海</ins>天气晴朗");
    }

    #[test]
    fn changed_markup_is_escaped_inside_the_marks() {
        let diff = side_by_side("a b", "a <script>alert(1)</script>&", TIMEOUT);
        assert_eq!(
            diff.new,
            "a <ins>&lt;script&gt;alert(1)&lt;/script&gt;&amp;</ins>"
        );
        assert!(!diff.new.contains("<script>"));
    }

    #[test]
    fn identical_texts_have_no_marks() {
        let diff = side_by_side("same text", "same text", TIMEOUT);
        assert!(!diff.differs);
        assert_eq!(diff.old, "same text");
    }
}
