//! Literals that hold braces, so that the test module ends where it ends.

pub fn after_strings<'a>(s: &'a str) -> &'a str {
    let _open = ('{', b'{', '\'', '\u{7B}');
    let _text = "\"{ fn
fn not_a_function() {
";
    s
}
#[cfg(test)]
mod tests {
    // A comment with { and a quote "
    /* a block comment { /* nested } */ still a comment { */
    const RAW: &str = r#"{"id": 1, "text": "}"}"#;
    const RAW2: &str = r##"a "# { "##;
    const RAW3: &str = r#"{"open": "{"#;
    const RAW0: &str = r"{";
    const BYTES: &[u8] = b"{\"";
    const RAW_BYTES: &[u8] = br#"}}"#;
    const C_STRING: &core::ffi::CStr = c"{";
    const CHAR: char = '{';
    const BYTE: u8 = b'{';
    const QUOTE: char = '\'';
    const BACKSLASH: char = '\\';
    const UNICODE: char = '\u{7D}';
    const DOUBLE: char = '"';

    fn lifetime<'a, 'b: 'a>(x: &'a str, _y: &'b str) -> &'a str {
        'outer: loop {
            break 'outer;
        }
        x
    }

    #[test]
    fn braces() {
        let multi = "line one {
line two }} \" still the string {";
        let escaped = "a \\";
        assert!(RAW.contains('{') && multi.len() > escaped.len());
        assert_eq!(lifetime("x", "y"), "x");
        let _all = (RAW2, RAW0, BYTES, RAW_BYTES, C_STRING, CHAR, BYTE, QUOTE);
        let _more = (RAW3, BACKSLASH, UNICODE, DOUBLE);
    }
}

pub fn last() -> usize {
    1
}
