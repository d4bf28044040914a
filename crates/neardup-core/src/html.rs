//! Minimal, allocation-light HTML stripping for web pages: tags and comments removed,
//! `<script>`/`<style>` contents dropped, common entities decoded. It is not a parser: it
//! is meant for near-duplicate detection, where block boundaries only need to become spaces.
//!
//! A `<` opens markup only when an HTML tokeniser would read it so: followed by an ASCII
//! letter (a start tag), `/` and a letter (an end tag), `!` (a comment or doctype) or `?` (a
//! processing instruction). Any other `<`, as in `x < 5`, is text, and so is a `<` whose tag
//! never closes with `>`. An unclosed comment, `<script>` or `<style>` runs to the end, as in
//! a browser.
//!
//! The work is linear in the input: every search for a closing `>`, `-->` or `</script`
//! remembers where it found one (or that there is none), and later searches start from there,
//! so no byte is examined more than a bounded number of times whatever the markup.

/// Strips tags and decodes entities; block boundaries become spaces.
pub(crate) fn strip_html(html: &str) -> String {
    Stripper::new(html).run().0
}

/// The elements whose content is raw text, dropped with the element.
const RAW_TEXT: [&[u8]; 2] = [b"script", b"style"];
/// The longest entity name looked at, `;` included.
const ENTITY_MAX: usize = 12;

/// The next occurrence of one needle, remembered between searches that only move forward.
#[derive(Default)]
struct NextMatch {
    /// Where the last search started.
    from: usize,
    /// What it found: the position of the needle, or `None` for no occurrence after `from`.
    found: Option<usize>,
    /// Whether a search has run.
    searched: bool,
}

impl NextMatch {
    /// The first occurrence at or after `from` as `find` reports it; `find` runs only when the
    /// remembered answer cannot tell. `from` must not decrease between calls.
    fn next(&mut self, from: usize, find: impl FnOnce(usize) -> Option<usize>) -> Option<usize> {
        let known = self.searched
            && from >= self.from
            && match self.found {
                Some(at) => at >= from,
                None => true,
            };
        if !known {
            self.from = from;
            self.found = find(from);
            self.searched = true;
        }
        self.found
    }
}

/// One pass over a document.
struct Stripper<'a> {
    html: &'a str,
    out: String,
    /// Bytes examined by all searches, so that tests can check the work is linear.
    scanned: usize,
    greater: NextMatch,
    comment_end: NextMatch,
    raw_text_end: [NextMatch; 2],
}

impl<'a> Stripper<'a> {
    fn new(html: &'a str) -> Stripper<'a> {
        Stripper {
            html,
            out: String::with_capacity(html.len()),
            scanned: 0,
            greater: NextMatch::default(),
            comment_end: NextMatch::default(),
            raw_text_end: Default::default(),
        }
    }

    /// The stripped text and the number of bytes examined.
    fn run(mut self) -> (String, usize) {
        let bytes = self.html.as_bytes();
        let (mut at, mut text_from) = (0, 0);
        while let Some(found) = self.find_byte(at, |byte| byte == b'<' || byte == b'&') {
            self.out.push_str(&self.html[text_from..found]);
            at = if bytes[found] == b'&' {
                self.decode_entity(found)
            } else if let Some(end) = self.markup_end(found) {
                self.out.push(' ');
                end
            } else {
                // Not markup: the `<` is text.
                self.out.push('<');
                found + 1
            };
            text_from = at;
        }
        self.out.push_str(&self.html[text_from..]);
        (self.out, self.scanned)
    }

    /// The first byte at or after `from` that `wanted` accepts.
    fn find_byte(&mut self, from: usize, wanted: impl Fn(u8) -> bool) -> Option<usize> {
        let rest = self.html.as_bytes().get(from..)?;
        let found = rest.iter().position(|&byte| wanted(byte));
        self.scanned += found.map_or(rest.len(), |offset| offset + 1);
        found.map(|offset| from + offset)
    }

    /// Where the markup opened by the `<` at `open` ends (just after it), or `None` if that
    /// `<` does not open markup.
    fn markup_end(&mut self, open: usize) -> Option<usize> {
        let bytes = self.html.as_bytes();
        let after = &bytes[open + 1..];
        self.scanned += after.len().min(2);
        match after {
            [b'!', b'-', b'-', ..] => Some(self.comment_end(open + 2)),
            [b'!' | b'?', ..] | [b'/', b'a'..=b'z' | b'A'..=b'Z', ..] => self.tag_end(open + 1),
            [b'a'..=b'z' | b'A'..=b'Z', ..] => {
                let end = self.tag_end(open + 1)?;
                match raw_text_kind(after) {
                    Some(kind) => Some(self.raw_text_end(kind, end)),
                    None => Some(end),
                }
            }
            _ => None,
        }
    }

    /// Just after the next `>` at or after `from`; `None` if there is none.
    fn tag_end(&mut self, from: usize) -> Option<usize> {
        let mut greater = std::mem::take(&mut self.greater);
        let found = greater.next(from, |from| self.find_byte(from, |byte| byte == b'>'));
        self.greater = greater;
        found.map(|at| at + 1)
    }

    /// Just after the `-->` that closes a comment whose `--` starts at `from` (so that `<!-->`
    /// is an empty comment); the end of the text if it never closes.
    fn comment_end(&mut self, from: usize) -> usize {
        let mut comment_end = std::mem::take(&mut self.comment_end);
        let found = comment_end.next(from, |from| self.find_ascii(from, b"-->"));
        self.comment_end = comment_end;
        found.map_or(self.html.len(), |at| at + 3)
    }

    /// Just after the end tag of raw-text element `kind` whose start tag ends at `from`; the
    /// end of the text if there is none.
    fn raw_text_end(&mut self, kind: usize, from: usize) -> usize {
        let mut closing = [b'<', b'/', 0, 0, 0, 0, 0, 0];
        let name = RAW_TEXT[kind];
        closing[2..2 + name.len()].copy_from_slice(name);
        let closing = &closing[..2 + name.len()];
        let mut memo = std::mem::take(&mut self.raw_text_end[kind]);
        let found = memo.next(from, |from| self.find_ascii(from, closing));
        self.raw_text_end[kind] = memo;
        match found {
            Some(at) => self.tag_end(at + closing.len()).unwrap_or(self.html.len()),
            None => self.html.len(),
        }
    }

    /// The first occurrence at or after `from` of `needle`, which starts with `<` or `-` and
    /// is matched ignoring ASCII case.
    fn find_ascii(&mut self, mut from: usize, needle: &[u8]) -> Option<usize> {
        let bytes = self.html.as_bytes();
        loop {
            let at = self.find_byte(from, |byte| byte == needle[0])?;
            let candidate = bytes.get(at..at + needle.len());
            self.scanned += needle.len();
            if candidate.is_some_and(|candidate| candidate.eq_ignore_ascii_case(needle)) {
                return Some(at);
            }
            from = at + 1;
        }
    }

    /// Decodes the entity at `&` position `at` into the output; returns where the text goes
    /// on. An unknown or unterminated entity leaves the `&` as text.
    fn decode_entity(&mut self, at: usize) -> usize {
        let name_bytes = &self.html.as_bytes()[at + 1..];
        let length = name_bytes
            .iter()
            .take(ENTITY_MAX)
            .position(|&byte| !(byte.is_ascii_alphanumeric() || byte == b'#'));
        self.scanned += length.map_or(name_bytes.len().min(ENTITY_MAX), |n| n + 1);
        let decoded = match length {
            Some(length) if name_bytes[length] == b';' => {
                // Only ASCII bytes precede the `;`, so this is a character boundary.
                entity(&self.html[at + 1..at + 1 + length]).map(|c| (c, at + length + 2))
            }
            _ => None,
        };
        match decoded {
            Some((c, next)) => {
                self.out.push(c);
                next
            }
            None => {
                self.out.push('&');
                at + 1
            }
        }
    }
}

/// Which [`RAW_TEXT`] element a start tag (the bytes after its `<`) opens.
fn raw_text_kind(tag: &[u8]) -> Option<usize> {
    RAW_TEXT.iter().position(|name| {
        tag.len() > name.len()
            && tag[..name.len()].eq_ignore_ascii_case(name)
            && matches!(
                tag[name.len()],
                b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | 0x0c
            )
    })
}

/// The character an entity name (between `&` and `;`) stands for.
fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" | "#39" => Some('\''),
        "nbsp" => Some(' '),
        _ => numeric_entity(name),
    }
}

/// The character of a numeric entity name, `#20013` or `#x4e2d`.
fn numeric_entity(name: &str) -> Option<char> {
    let digits = name.strip_prefix('#')?;
    let code = match digits.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    char::from_u32(code)
}

#[cfg(test)]
mod tests {
    use super::{strip_html, Stripper};

    fn words(text: &str) -> Vec<String> {
        strip_html(text)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn strips_tags_comments_and_scripts() {
        let html =
            "<html><!-- c --><SCRIPT>var a = '<b>';</SCRIPT><p>中文&nbsp;&#x4e2d;&#20013;</p>";
        assert_eq!(words(html), ["中文", "中中"]);
        assert_eq!(
            words("a<style type=x>p { }</STYLE >b<scripts>c</scripts>d"),
            ["a", "b", "c", "d"]
        );
        assert_eq!(
            words("a<!---->b<!-->c<!doctype html>d<?xml ?>e</p>f"),
            ["a", "b", "c", "d", "e", "f"]
        );
    }

    #[test]
    fn tag_names_match_in_any_case() {
        assert_eq!(
            words("a<SCRIPT>x</script>b<Style>p { }</sTyLe>c<ScRiPt src=y>z</SCRIPT >d"),
            ["a", "b", "c", "d"]
        );
        assert_eq!(
            words("a<!DOCTYPE html>b<P Class=x>c</P>d<!-- X -->e&#X4E2D;"),
            ["a", "b", "c", "d", "e中"]
        );
        // Only the closing tag of the same raw-text element ends it, whatever its case.
        assert_eq!(words("a<STYLE>x</SCRIPT>y</Style>b"), ["a", "b"]);
    }

    #[test]
    fn unclosed_markup_and_unknown_entities_are_text() {
        assert_eq!(strip_html("a < b &foo; c"), "a < b &foo; c");
        assert_eq!(strip_html("x <!-- never closed"), "x  ");
        assert_eq!(strip_html("x <b never closed"), "x <b never closed");
        assert_eq!(strip_html("x <script>never closed"), "x  ");
        assert_eq!(
            strip_html("AT&T &amp &#xzz; &#1114112;"),
            "AT&T &amp &#xzz; &#1114112;"
        );
    }

    #[test]
    fn less_than_that_opens_no_tag_is_text() {
        assert_eq!(
            strip_html("if x < 5 and y > 3 then"),
            "if x < 5 and y > 3 then"
        );
        assert_eq!(
            strip_html("a<3 <= b <> c </ d <- e"),
            "a<3 <= b <> c </ d <- e"
        );
        assert_eq!(strip_html("x < 5 <b>bold</b> y > 3"), "x < 5  bold  y > 3");
    }

    /// Bytes examined for `html`, checked to be at most `per_byte` times its length.
    fn scanned(html: &str, per_byte: usize) -> usize {
        let (_, scanned) = Stripper::new(html).run();
        assert!(
            scanned <= per_byte * html.len().max(1),
            "{scanned} bytes examined for {} bytes of {:?}...",
            html.len(),
            &html[..html.len().min(40)]
        );
        scanned
    }

    #[test]
    fn many_unmatched_less_than_signs_strip_in_linear_work() {
        let adversarial = [
            "<",
            "<a",
            "</a",
            "<!",
            "<?",
            "<!--",
            "<script>",
            "<style>x</style",
            "</script",
            "&",
            "&#1234567890",
            "<a>&amp;",
            "-",
            "--",
        ];
        for unit in adversarial {
            let size = 1 << 20;
            let small = unit.repeat(size / 2 / unit.len());
            let large = unit.repeat(size / unit.len());
            let (small, large) = (scanned(&small, 4), scanned(&large, 4));
            // Twice the input, about twice the work.
            assert!(large <= 2 * small + 64, "{unit:?}: {small} then {large}");
        }
    }
}
