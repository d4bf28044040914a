//! Minimal, allocation-light HTML stripping for web pages: tags and comments removed,
//! `<script>`/`<style>` contents dropped, common entities decoded. It is not a parser: it
//! is meant for near-duplicate detection, where block boundaries only need to become spaces.

/// Strips tags and decodes entities; block boundaries become spaces.
pub(crate) fn strip_html(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find(['<', '&']) {
        decode_into(&rest[..start], &mut out);
        rest = &rest[start..];
        if rest.starts_with('&') {
            rest = decode_entity(rest, &mut out);
        } else {
            rest = skip_markup(rest);
            out.push(' ');
        }
    }
    decode_into(rest, &mut out);
    out
}

fn decode_into(text: &str, out: &mut String) {
    out.push_str(text);
}

/// Skips one tag, comment or raw-text element starting at `<`; returns the remainder.
fn skip_markup(rest: &str) -> &str {
    if let Some(after) = rest.strip_prefix("<!--") {
        return after.find("-->").map_or("", |end| &after[end + 3..]);
    }
    let lower_prefix: String = rest
        .chars()
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    for raw in ["script", "style"] {
        if lower_prefix[1..].starts_with(raw) {
            let closing = format!("</{raw}");
            let lower = rest.to_ascii_lowercase();
            return match lower.find(&closing) {
                Some(end) => rest[end..].find('>').map_or("", |gt| &rest[end + gt + 1..]),
                None => "",
            };
        }
    }
    match rest.find('>') {
        Some(gt) => &rest[gt + 1..],
        // A lone '<' that never closes is text, not a tag.
        None => &rest[1..],
    }
}

/// Decodes one entity starting at `&`; an unknown one is kept literally.
fn decode_entity<'a>(rest: &'a str, out: &mut String) -> &'a str {
    let end = rest
        .char_indices()
        .take(12)
        .find(|&(_, c)| c == ';')
        .map(|(i, _)| i);
    let Some(end) = end else {
        out.push('&');
        return &rest[1..];
    };
    let name = &rest[1..end];
    let decoded = match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" | "#39" => Some('\''),
        "nbsp" => Some(' '),
        _ => numeric_entity(name),
    };
    match decoded {
        Some(c) => {
            out.push(c);
            &rest[end + 1..]
        }
        None => {
            out.push('&');
            &rest[1..]
        }
    }
}

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
    use super::strip_html;

    #[test]
    fn strips_tags_comments_and_scripts() {
        let html =
            "<html><!-- c --><SCRIPT>var a = '<b>';</SCRIPT><p>中文&nbsp;&#x4e2d;&#20013;</p>";
        assert_eq!(
            strip_html(html).split_whitespace().collect::<Vec<_>>(),
            ["中文", "中中"]
        );
    }

    #[test]
    fn unclosed_markup_and_unknown_entities_are_text() {
        assert_eq!(strip_html("a < b &foo; c"), "a   b &foo; c");
        assert_eq!(strip_html("x <!-- never closed"), "x  ");
    }
}
