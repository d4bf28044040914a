use std::borrow::Cow;
use std::fmt;

/// How every threshold error words the values a threshold takes.
pub const THRESHOLD_RANGE: &str = "a number t with 0 < t <= 1";

/// Characters of a value a message echoes in full; a longer one is cut.
pub const ECHOED_CHARS: usize = 64;

/// `text` quoted for a message (`"0.4"`), cut after [`ECHOED_CHARS`] characters with its
/// length told (`"111…" (120000 characters)`): a hostile value does not make the message
/// as long as itself.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(ECHOED_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => {
            let head = &text[..end];
            format!("{head:?}… ({} characters)", text.chars().count())
        }
    }
}

/// The error type of the core: invalid parameters given to a builder.
///
/// The core has no I/O, so the only thing that can be wrong is a parameter; the message
/// names the parameter and the value that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    parameter: Cow<'static, str>,
    message: String,
}

impl Error {
    /// An error about the parameter `parameter`.
    pub fn invalid(parameter: &'static str, message: impl Into<String>) -> Error {
        Error {
            parameter: Cow::Borrowed(parameter),
            message: message.into(),
        }
    }

    /// [`Error::invalid`] for a parameter name known only at run time (a name a user gave).
    pub fn invalid_owned(parameter: String, message: impl Into<String>) -> Error {
        Error {
            parameter: Cow::Owned(parameter),
            message: message.into(),
        }
    }

    /// The name of the parameter that was refused, in `snake_case`, e.g. `"threshold"` or
    /// `"max_doc_bytes"`: front ends map it to their own spelling (`--max-doc-bytes`).
    pub fn parameter(&self) -> &str {
        &self.parameter
    }

    /// What is wrong with the value, without the parameter's name.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid `{}`: {}", self.parameter, self.message)
    }
}

impl std::error::Error for Error {}

/// The result type of the core.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echoed_value_is_cut_with_its_length_told() {
        assert_eq!(quoted("0.4"), "\"0.4\"");
        let long = "1".repeat(120_000);
        let echoed = quoted(&long);
        assert!(echoed.len() < 100, "{echoed}");
        assert!(echoed.ends_with("… (120000 characters)"), "{echoed}");
        // Cut at a character, not a byte.
        let chinese = "中".repeat(100);
        assert!(quoted(&chinese).starts_with(&format!("\"{}\"…", "中".repeat(64))));
    }
}
