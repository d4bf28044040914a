use std::borrow::Cow;
use std::fmt;

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
