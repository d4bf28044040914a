use std::fmt;

/// The error type of the core: invalid parameters given to a builder.
///
/// The core has no I/O, so the only thing that can be wrong is a parameter; the message
/// names the parameter and the value that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    parameter: &'static str,
    message: String,
}

impl Error {
    /// An error about the parameter `parameter`.
    pub fn invalid(parameter: &'static str, message: impl Into<String>) -> Error {
        Error {
            parameter,
            message: message.into(),
        }
    }

    /// The name of the parameter that was refused, e.g. `"threshold"`.
    pub fn parameter(&self) -> &'static str {
        self.parameter
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.parameter, self.message)
    }
}

impl std::error::Error for Error {}

/// The result type of the core.
pub type Result<T> = std::result::Result<T, Error>;
