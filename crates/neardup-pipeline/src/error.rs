//! The error type of the pipeline crate.
//!
//! Every variant names the file it is about; record-level problems also carry the line (or row)
//! number, and their message names the field and the offending value, so that a user can go
//! straight to the bad record.

/// One error type for the pipeline crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed at the operating-system level.
    ///
    /// The message includes the operating system's, so the I/O error is deliberately not
    /// also exposed as [`std::error::Error::source`]: a printer of the whole chain (anyhow's
    /// `{:#}`) would print it twice.
    #[error("{path}: {error}")]
    Io {
        /// The file (or `<stdin>` / `<stdout>`) being read or written.
        path: String,
        /// The underlying error.
        error: std::io::Error,
    },
    /// One input record is malformed, for example `field "text" is missing`, `invalid JSON: ...`,
    /// `invalid UTF-8 at byte offset 12` or `expected 3 fields, found 2`.
    #[error("{path}:{line}: {message}")]
    Input {
        /// The input file.
        path: String,
        /// The 1-based line of the record (for Parquet, the 1-based row number).
        line: u64,
        /// What is wrong, naming the field and the value.
        message: String,
    },
    /// A whole file cannot be handled: unknown extension, a missing column, inputs of different
    /// formats for one output, ...
    #[error("{path}: {message}")]
    Format {
        /// The file concerned.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A method or engine parameter was refused (names the parameter and the value).
    #[error("{0}")]
    Parameter(neardup_core::Error),
    /// A run stopped at a limit it was given (the exact join's candidate budget): the value
    /// was valid, the corpus needed more. The message says what was reached and which values
    /// the option accepts.
    #[error("{message}")]
    Stopped {
        /// The option whose limit was reached, as the library names it (`candidate_budget`).
        parameter: String,
        /// What was reached, and what to do.
        message: String,
    },
    /// An output file cannot be created or written.
    #[error("{path}: cannot write output: {message}")]
    Output {
        /// The output file (or `<stdout>`).
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl From<neardup_core::Error> for Error {
    fn from(error: neardup_core::Error) -> Error {
        Error::Parameter(error)
    }
}

/// The result type of the pipeline crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: &str, error: std::io::Error) -> Error {
        Error::Io {
            path: path.to_owned(),
            error,
        }
    }

    /// An [`Error::Input`] for record `line` of `path`.
    pub fn input(path: &str, line: u64, message: impl Into<String>) -> Error {
        Error::Input {
            path: path.to_owned(),
            line,
            message: message.into(),
        }
    }

    /// An [`Error::Format`] for `path`.
    pub fn format(path: &str, message: impl Into<String>) -> Error {
        Error::Format {
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// An [`Error::Output`] for `path`.
    pub fn output(path: &str, message: impl std::fmt::Display) -> Error {
        Error::Output {
            path: path.to_owned(),
            message: message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_and_line() {
        let error = Error::input("a.jsonl", 3, "field \"text\" is missing");
        assert_eq!(error.to_string(), "a.jsonl:3: field \"text\" is missing");
        let error = Error::output("out.jsonl", "disk full");
        assert_eq!(
            error.to_string(),
            "out.jsonl: cannot write output: disk full"
        );
    }

    #[test]
    fn os_error_text_is_printed_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let error = Error::io("missing.jsonl", io);
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert_eq!(chain, "missing.jsonl: entity not found");
    }
}
