//! Scoped bearer tokens: which token may do what to which collection.
//!
//! # Scopes
//!
//! Each token holds one or more grants: a scope on one collection or on all (`*`). The scopes
//! nest, each allowing everything of the ones before it:
//!
//! | scope | allows |
//! |---|---|
//! | `read` | check texts, get documents, show a collection; on `*` also list the collections and read `/metrics` |
//! | `write` | `read`, and insert and delete documents (an insert answers with the duplicate it found, so a writer reads anyway) |
//! | `admin` | `write`, and create and drop the collection; on `*` any collection |
//!
//! `/healthz` needs no token; `/v1/openapi.json` needs any valid token. A request without a
//! token, or with one the service does not know, is answered 401; a known token outside its
//! grants 403.
//!
//! # The tokens file
//!
//! One grant a line, `SCOPE COLLECTION TOKEN`, separated by spaces or tabs; blank lines and
//! lines starting with `#` are skipped; a UTF-8 byte order mark at the start of the file is
//! skipped too. A token given on several lines holds each grant.
//!
//! ```text
//! # scope  collection  token
//! admin    *           3f9c0a7e5b2d4c18a6e1f0b9d7c3a524
//! write    news        9a1b7c3d5e2f4a6b8c0d1e3f5a7b9c2d
//! read     news        0f2e4d6c8b1a3f5e7d9c2b4a6f8e1d3c
//! read     archive     0f2e4d6c8b1a3f5e7d9c2b4a6f8e1d3c
//! ```
//!
//! A token has 16 to 512 visible ASCII characters. A bad line is refused with the file and
//! line number (the token itself is never shown).

use std::path::Path;

use crate::error::ServiceError;

/// The fewest characters of a token in a tokens file.
pub const MIN_TOKEN_CHARS: usize = 16;
/// The most characters of a token.
pub const MAX_TOKEN_CHARS: usize = 512;

/// What a grant allows; each scope allows everything of the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Check texts, get documents, show (on `*`: list) collections, `/metrics` on `*`.
    Read,
    /// `Read`, and insert and delete documents.
    Write,
    /// `Write`, and create and drop collections.
    Admin,
}

impl Scope {
    /// The name used in the tokens file and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    fn parse(word: &str) -> Option<Scope> {
        match word {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            "admin" => Some(Scope::Admin),
            _ => None,
        }
    }
}

/// A scope on one collection (`Some(name)`) or on all (`None`, written `*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The scope.
    pub scope: Scope,
    /// The collection, or `None` for every collection.
    pub collection: Option<String>,
}

impl Grant {
    fn allows(&self, scope: Scope, collection: Option<&str>) -> bool {
        self.scope >= scope
            && match (&self.collection, collection) {
                (None, _) => true,
                (Some(mine), Some(wanted)) => mine == wanted,
                (Some(_), None) => false,
            }
    }
}

/// Every token the service accepts, with its grants.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    entries: Vec<(Vec<u8>, Vec<Grant>)>,
}

impl Tokens {
    /// No tokens.
    pub fn new() -> Tokens {
        Tokens::default()
    }

    /// True when no token is known (then the service does not authenticate).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a grant to `token`.
    pub fn grant(&mut self, token: &str, grant: Grant) {
        match self.entries.iter_mut().find(|(t, _)| t == token.as_bytes()) {
            Some((_, grants)) => grants.push(grant),
            None => self.entries.push((token.as_bytes().to_vec(), vec![grant])),
        }
    }

    /// Adds `token` as an admin of every collection (the single `--token-file` token).
    pub fn grant_admin(&mut self, token: &str) {
        self.grant(
            token,
            Grant {
                scope: Scope::Admin,
                collection: None,
            },
        );
    }

    /// The single admin token of `--token-file` or `NEARDUP_TOKEN` (`source` names it in
    /// errors): `text` without the white space around it, with the same rules as a token of a
    /// tokens file (16 to 512 visible ASCII characters), so that the all-powerful token is
    /// never the weakest.
    ///
    /// # Errors
    /// An empty, short, long or non-ASCII token, named by `source` (field `token_file`; the
    /// token itself is never shown).
    pub fn single(text: &str, source: &str) -> Result<String, ServiceError> {
        let token = without_bom(text).trim();
        check_token(token)
            .map_err(|what| ServiceError::invalid("token_file", format!("{source}: {what}")))?;
        Ok(token.to_owned())
    }

    /// Reads a tokens file (format in the [module documentation](self)).
    ///
    /// # Errors
    /// A file that cannot be read, or a bad line, named as `FILE:LINE: what` (field
    /// `tokens_file`).
    pub fn read(path: &Path) -> Result<Tokens, ServiceError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServiceError::invalid(
                "tokens_file",
                format!("{}: cannot read: {e}", path.display()),
            )
        })?;
        Tokens::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a tokens file; `source` names it in errors.
    ///
    /// # Errors
    /// A bad line, named as `SOURCE:LINE: what` (field `tokens_file`), or no token at all.
    pub fn parse(text: &str, source: &str) -> Result<Tokens, ServiceError> {
        let mut tokens = Tokens::new();
        // (token, collection) -> the line that granted it, to refuse a repeated pair.
        let mut seen: Vec<(&str, Option<&str>, usize)> = Vec::new();
        for (index, line) in without_bom(text).lines().enumerate() {
            let number = index + 1;
            let bad = |what: String| {
                ServiceError::invalid("tokens_file", format!("{source}:{number}: {what}"))
            };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            let [scope, collection, token] = fields[..] else {
                return Err(bad(format!(
                    "expected SCOPE COLLECTION TOKEN (3 fields separated by spaces), found {} \
                     field{}",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                )));
            };
            let scope = Scope::parse(scope).ok_or_else(|| {
                bad(format!(
                    "unknown scope {scope:?} (expected read, write or admin)"
                ))
            })?;
            let collection = match collection {
                "*" => None,
                name => {
                    crate::check_name(name).map_err(|e| bad(e.message))?;
                    Some(name)
                }
            };
            check_token(token).map_err(bad)?;
            if let Some((_, _, first)) = seen
                .iter()
                .find(|(t, c, _)| *t == token && *c == collection)
            {
                return Err(bad(format!(
                    "this token is given for collection {} again (first on line {first}); \
                     give one scope a token and collection",
                    collection.unwrap_or("*")
                )));
            }
            seen.push((token, collection, number));
            tokens.grant(
                token,
                Grant {
                    scope,
                    collection: collection.map(str::to_owned),
                },
            );
        }
        if tokens.is_empty() {
            return Err(ServiceError::invalid(
                "tokens_file",
                format!("{source}: no tokens (expected lines of SCOPE COLLECTION TOKEN)"),
            ));
        }
        Ok(tokens)
    }

    /// The grants of `given`, comparing it with every known token in constant time (the time
    /// depends on the number and length of the known tokens, never on how much of one matches).
    pub fn find(&self, given: &[u8]) -> Option<&[Grant]> {
        let mut found = None;
        for (token, grants) in &self.entries {
            if constant_time_eq(given, token) {
                found = Some(grants.as_slice());
            }
        }
        found
    }
}

/// True when `grants` allow `scope` on `collection` (`None`: every collection).
pub fn allows(grants: &[Grant], scope: Scope, collection: Option<&str>) -> bool {
    grants.iter().any(|grant| grant.allows(scope, collection))
}

/// `text` without the UTF-8 byte order mark some editors write at the start of a file.
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

fn check_token(token: &str) -> Result<(), String> {
    let chars = token.chars().count();
    if !(MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&chars) {
        return Err(format!(
            "a token has {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} characters; this one has {chars}"
        ));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a token has visible ASCII characters only".to_owned());
    }
    Ok(())
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let mut difference = u8::from(a.len() != b.len());
    for i in 0..longest {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        difference |= x ^ y;
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef";

    #[test]
    fn a_tokens_file_grants_scopes_on_collections() {
        let text = format!(
            "# comment\n\nadmin * A{TOKEN}\nwrite news W{TOKEN}\nread news R{TOKEN}\n\
             read archive R{TOKEN}\n"
        );
        let tokens = Tokens::parse(&text, "t").unwrap();
        let reader = tokens.find(format!("R{TOKEN}").as_bytes()).unwrap();
        assert!(allows(reader, Scope::Read, Some("news")));
        assert!(allows(reader, Scope::Read, Some("archive")));
        assert!(!allows(reader, Scope::Read, Some("other")));
        assert!(!allows(reader, Scope::Read, None));
        assert!(!allows(reader, Scope::Write, Some("news")));
        let writer = tokens.find(format!("W{TOKEN}").as_bytes()).unwrap();
        assert!(allows(writer, Scope::Read, Some("news")));
        assert!(allows(writer, Scope::Write, Some("news")));
        assert!(!allows(writer, Scope::Admin, Some("news")));
        let admin = tokens.find(format!("A{TOKEN}").as_bytes()).unwrap();
        assert!(allows(admin, Scope::Admin, Some("anything")));
        assert!(allows(admin, Scope::Read, None));
        assert!(tokens.find(TOKEN.as_bytes()).is_none());
        assert!(tokens.find(b"").is_none());
    }

    #[test]
    fn a_bad_tokens_file_is_refused_with_file_and_line() {
        for (text, expected) in [
            (
                "admin *\n".to_owned(),
                "f:1: expected SCOPE COLLECTION TOKEN",
            ),
            (
                format!("\n\nowner * {TOKEN}\n"),
                "f:3: unknown scope \"owner\"",
            ),
            (
                format!("read .hidden {TOKEN}\n"),
                "f:1: \".hidden\": a collection name",
            ),
            (
                "read * short\n".to_owned(),
                "f:1: a token has 16 to 512 characters; this one has 5",
            ),
            (
                format!("read * {TOKEN}é\n"),
                "f:1: a token has visible ASCII",
            ),
            (
                format!("read * {TOKEN}\nadmin * {TOKEN}\n"),
                "f:2: this token is given for collection * again (first on line 1)",
            ),
            ("# nothing\n".to_owned(), "f: no tokens"),
        ] {
            let error = Tokens::parse(&text, "f").unwrap_err();
            assert!(
                error.message.starts_with(expected),
                "{text:?}: {}",
                error.message
            );
            assert_eq!(error.field.as_deref(), Some("tokens_file"));
            assert!(!error.message.contains(TOKEN), "a message shows the token");
        }
    }

    #[test]
    fn a_byte_order_mark_at_the_start_of_a_tokens_file_is_skipped() {
        // Issue 44, item 13: a file saved with a BOM gave `unknown scope "\u{feff}read"`.
        let text = format!("\u{feff}read news R{TOKEN}\r\nadmin * A{TOKEN}\r\n");
        let tokens = Tokens::parse(&text, "f").unwrap();
        let reader = tokens.find(format!("R{TOKEN}").as_bytes()).unwrap();
        assert!(allows(reader, Scope::Read, Some("news")));
        assert_eq!(
            Tokens::single(&format!("\u{feff}{TOKEN}\n"), "f").unwrap(),
            TOKEN
        );
        // Only at the start: elsewhere it is a character like any other.
        let error = Tokens::parse(&format!("read * {TOKEN}\n\u{feff}read * x{TOKEN}\n"), "f");
        assert!(error.unwrap_err().message.starts_with("f:2: unknown scope"));
    }

    #[test]
    fn a_single_token_has_the_length_a_tokens_file_asks_for() {
        // Issue 44, item 8: `--token-file` took a 3-character token.
        for (text, expected) in [
            (
                "abc\n",
                "f: a token has 16 to 512 characters; this one has 3",
            ),
            ("", "f: a token has 16 to 512 characters; this one has 0"),
            (" \n", "f: a token has 16 to 512 characters; this one has 0"),
            (
                "0123456789 abcdef",
                "f: a token has visible ASCII characters only",
            ),
        ] {
            let error = Tokens::single(text, "f").unwrap_err();
            assert_eq!(error.message, expected, "{text:?}");
            assert_eq!(error.field.as_deref(), Some("token_file"));
        }
        assert_eq!(Tokens::single(&format!(" {TOKEN}\n"), "f").unwrap(), TOKEN);
    }

    #[test]
    fn constant_time_eq_compares_whole_strings() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }
}
