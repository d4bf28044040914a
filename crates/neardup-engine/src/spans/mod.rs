//! Span-level deduplication: repeated passages removed from inside documents.
//!
//! Whole-document deduplication drops copies; span removal cleans the documents that are
//! kept: cookie banners, licence blocks, navigation, "本文转载自…" footers, a paragraph a
//! thousand pages quote. Three levels:
//!
//! - [`SpanLevel::Substring`]: every span of at least `min_length` characters (Unicode scalar
//!   values) that occurs in at least `min_count` documents, matched exactly on the original
//!   text, as ExactSubstr (Lee et al., 2022) does with a suffix array. A span of length L >= N
//!   is covered by its windows of exactly N characters, each of which occurs wherever the span
//!   does, so the removed text is the union of the repeated N-character windows. Those are
//!   found without a suffix array: each window is charged to its minimizer (the leftmost
//!   smallest hash among its k-grams), the same k-gram at the same offset in every copy of
//!   the window, so copies meet in one group of anchors; inside a group, windows are hashed
//!   and every candidate copy is compared with the group's first copy character by character
//!   ([`windows`]). Memory is the texts plus about 2 / (N - k + 2) anchors of 20 bytes per
//!   character.
//! - [`SpanLevel::Line`]: lines (without their line break) of at least `min_length`
//!   characters in at least `min_count` documents.
//! - [`SpanLevel::Sentence`]: sentences, ended by `。！？!?`, a `.` before a space, a line
//!   break or the end, with their closing quotes and brackets ([`units`]).
//!
//! Documents come in keep order: the first occurrence of a span (by document, then position)
//! is kept whole and the later ones are removed ([`SpanRemoval::Later`]), or every occurrence
//! is removed ([`SpanRemoval::All`], ExactSubstr's rule). At the substring level a later copy
//! that overlaps a first copy (a text repeating itself at a distance shorter than N) gives
//! up only the bytes outside every first copy. Removed ranges are byte ranges of the
//! original UTF-8 text; they never cut a character.
//!
//! # Example
//!
//! ```
//! use neardup_engine::spans::{find_spans, SpanOptions, SpanLevel};
//!
//! let texts = [
//!     "今天天气很好！本文转载自某某网站，版权归原作者所有。",
//!     "明天有雨。本文转载自某某网站，版权归原作者所有。",
//! ];
//! let options = SpanOptions { min_length: 10, ..SpanOptions::default() };
//! let found = find_spans(&texts, &options)?;
//! assert_eq!(found.apply(1, texts[1]), "明天有雨。");
//! assert_eq!(found.apply(0, texts[0]), texts[0]);
//! # Ok::<(), neardup_engine::spans::SpanError>(())
//! ```

pub mod distributed;
mod found;
mod spill;
mod units;
mod windows;

pub mod reference;

pub use found::{FoundSpans, Removal, SpanSummary};
pub use spill::find_spans_spilling;
pub use units::{candidate_units, Unit};

use std::fmt;

use neardup_core::cluster::KeepPolicy;

/// What a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SpanLevel {
    /// Any substring of at least `min_length` characters (default).
    #[default]
    Substring,
    /// A whole line, without its line break.
    Line,
    /// A whole sentence.
    Sentence,
}

neardup_core::named_choices!(SpanLevel as "level" {
    Substring => "substring",
    Line => "line",
    Sentence => "sentence",
});

/// What `min_count` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SpanCount {
    /// Documents holding the span, each counted once (default).
    #[default]
    Documents,
    /// Every occurrence, two in one document counting two (ExactSubstr's rule).
    Occurrences,
}

neardup_core::named_choices!(SpanCount as "count" {
    Documents => "documents",
    Occurrences => "occurrences",
});

/// Which occurrences of a repeated span are removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SpanRemoval {
    /// Every occurrence but the first in keep order (default).
    #[default]
    Later,
    /// Every occurrence, the first too (ExactSubstr's rule).
    All,
}

neardup_core::named_choices!(SpanRemoval as "remove" {
    Later => "later",
    All => "all",
});

/// The longest `min_length` accepted at the substring level, in characters.
pub const MAX_MIN_LENGTH: usize = 60_000;

/// The default `min_length` at the substring level, in characters.
pub const DEFAULT_SUBSTRING_LENGTH: usize = 50;

/// The default `min_length` at the line and sentence levels, in characters.
pub const DEFAULT_UNIT_LENGTH: usize = 10;

/// What to find and what to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanOptions {
    /// Substrings, lines or sentences.
    pub level: SpanLevel,
    /// The shortest span, in characters (Unicode scalar values).
    pub min_length: usize,
    /// The fewest documents (or occurrences) a span must be found in.
    pub min_count: usize,
    /// What `min_count` counts.
    pub count: SpanCount,
    /// Which occurrences are removed.
    pub remove: SpanRemoval,
}

impl Default for SpanOptions {
    fn default() -> Self {
        SpanOptions {
            level: SpanLevel::Substring,
            min_length: DEFAULT_SUBSTRING_LENGTH,
            min_count: 2,
            count: SpanCount::Documents,
            remove: SpanRemoval::Later,
        }
    }
}

impl SpanOptions {
    /// The default `min_length` of a level.
    pub fn default_length(level: SpanLevel) -> usize {
        match level {
            SpanLevel::Substring => DEFAULT_SUBSTRING_LENGTH,
            SpanLevel::Line | SpanLevel::Sentence => DEFAULT_UNIT_LENGTH,
        }
    }

    /// Checks the options.
    ///
    /// # Errors
    ///
    /// A `min_length` of 0 or (at the substring level) above [`MAX_MIN_LENGTH`], or a
    /// `min_count` below 2.
    pub fn check(&self) -> Result<(), SpanError> {
        if self.min_length == 0 {
            return Err(SpanError::option(
                "min_length",
                "0: it must be at least 1 character",
            ));
        }
        if self.level == SpanLevel::Substring && self.min_length > MAX_MIN_LENGTH {
            return Err(SpanError::option(
                "min_length",
                format!(
                    "{} is above the substring level's {MAX_MIN_LENGTH} characters; use the \
                     line or sentence level for longer units",
                    self.min_length
                ),
            ));
        }
        if self.min_count < 2 {
            return Err(SpanError::option(
                "min_count",
                format!(
                    "{}: it must be at least 2 (a span found once is not repeated)",
                    self.min_count
                ),
            ));
        }
        Ok(())
    }
}

/// Why spans could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanError {
    /// An option out of range: its name and what is wrong, with what is accepted.
    Option {
        /// The option (`min_length`, `min_count`).
        parameter: &'static str,
        /// The value and what is accepted.
        message: String,
    },
    /// A document too long for 32-bit offsets (4 GiB), by its index in keep order.
    DocumentTooLong {
        /// The document's index in keep order.
        index: usize,
        /// Its length in bytes.
        bytes: usize,
    },
    /// More documents than 32-bit indexes hold.
    TooManyDocuments(usize),
    /// The spill of anchors could not be written or read (a full disk): its message.
    Spill(String),
}

impl fmt::Display for SpanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpanError::Option { parameter, message } => {
                write!(f, "invalid `{parameter}`: {message}")
            }
            SpanError::DocumentTooLong { index, bytes } => write!(
                f,
                "document {index} has {bytes} bytes; span removal takes documents of at most \
                 4 GiB (split it, or cap documents with --max-doc-bytes)"
            ),
            SpanError::Spill(message) => write!(f, "spilling span anchors: {message}"),
            SpanError::TooManyDocuments(count) => write!(
                f,
                "{count} documents: span removal takes at most 4,294,967,295 per run (split \
                 the corpus)"
            ),
        }
    }
}

impl std::error::Error for SpanError {}

impl SpanError {
    fn option(parameter: &'static str, message: impl Into<String>) -> SpanError {
        SpanError::Option {
            parameter,
            message: message.into(),
        }
    }
}

/// The order spans are kept in: document indexes, the first kept first. `First` is the input
/// order; `Longest` and `Shortest` sort by length in characters, ties in input order.
pub fn keep_order<S: AsRef<str>>(texts: &[S], keep: KeepPolicy) -> Vec<u32> {
    let mut order: Vec<u32> = (0..texts.len() as u32).collect();
    if keep != KeepPolicy::First {
        let lengths: Vec<usize> = texts
            .iter()
            .map(|text| text.as_ref().chars().count())
            .collect();
        order.sort_by_key(|&doc| {
            let length = lengths[doc as usize];
            (
                if keep == KeepPolicy::Longest {
                    usize::MAX - length
                } else {
                    length
                },
                doc,
            )
        });
    }
    order
}

/// Checks the options and that every document and index fits 32 bits.
fn check_corpus<S: AsRef<str>>(texts: &[S], options: &SpanOptions) -> Result<(), SpanError> {
    options.check()?;
    if texts.len() > u32::MAX as usize {
        return Err(SpanError::TooManyDocuments(texts.len()));
    }
    if let Some((index, text)) = texts
        .iter()
        .enumerate()
        .find(|(_, text)| text.as_ref().len() > u32::MAX as usize)
    {
        return Err(SpanError::DocumentTooLong {
            index,
            bytes: text.as_ref().len(),
        });
    }
    Ok(())
}

/// Finds the repeated spans of `texts`, given in keep order.
///
/// # Errors
///
/// Options out of range ([`SpanOptions::check`]), a document of 4 GiB or more, or more than
/// `u32::MAX` documents.
pub fn find_spans<S: AsRef<str> + Sync>(
    texts: &[S],
    options: &SpanOptions,
) -> Result<FoundSpans, SpanError> {
    check_corpus(texts, options)?;
    let (removals, kept) = match options.level {
        SpanLevel::Substring => windows::removals(texts, options),
        SpanLevel::Line | SpanLevel::Sentence => (units::removals(texts, options), Vec::new()),
    };
    Ok(FoundSpans::new(removals, kept, texts.len()))
}

#[cfg(test)]
mod tests;
