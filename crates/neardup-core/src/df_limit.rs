//! Document-frequency limits (`max_df`, `boilerplate_df`): a count, a fraction of the
//! corpus or off, the floors of a fraction, and their defaults (see [`crate::boilerplate`]).

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// The default of `max_df`: 0.1% of the documents, at least [`MAX_DF_FLOOR`] (see the
/// module documentation and docs/evaluation.md).
pub const DEFAULT_MAX_DF: &str = "0.1%";
/// The default of `boilerplate_df`: 0.05% of the documents, at least
/// [`BOILERPLATE_DF_FLOOR`].
pub const DEFAULT_BOILERPLATE_DF: &str = "0.05%";
/// A fractional `max_df` is at least this many documents.
pub const MAX_DF_FLOOR: u64 = 50;
/// A fractional `boilerplate_df` is at least this many documents.
pub const BOILERPLATE_DF_FLOOR: u64 = 20;

/// The least counts of fractional limits: `max_df` (common shingles) and `boilerplate_df`
/// (boilerplate lines). A batch run uses [`DfFloors::BATCH`]; an online index, whose window
/// starts empty, [`DfFloors::stream`], which grows with the documents counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DfFloors {
    /// A fractional `max_df` is at least this many documents.
    pub common: u64,
    /// A fractional `boilerplate_df` is at least this many documents.
    pub line: u64,
}

impl DfFloors {
    /// The floors of a batch run: [`MAX_DF_FLOOR`] and [`BOILERPLATE_DF_FLOOR`].
    pub const BATCH: DfFloors = DfFloors {
        common: MAX_DF_FLOOR,
        line: BOILERPLATE_DF_FLOOR,
    };

    /// The least floor of a stream: a feature in more than 4 documents of a young window
    /// may be common, a line in 4 of them boilerplate.
    pub const STREAM_MIN: u64 = 4;

    /// The floors of a stream whose window holds `documents`: one document in
    /// [`STREAM_RAMP`](DfFloors::STREAM_RAMP), from [`DfFloors::STREAM_MIN`] up to the batch
    /// floors. A service learns a template after a handful of its notices, not after 50 of
    /// them (each answered as a duplicate of the first); a window of 5,000 documents or more
    /// has the batch floors.
    pub fn stream(documents: u64) -> DfFloors {
        let ramp = documents / Self::STREAM_RAMP;
        DfFloors {
            common: ramp.clamp(Self::STREAM_MIN, MAX_DF_FLOOR),
            line: ramp.clamp(Self::STREAM_MIN, BOILERPLATE_DF_FLOOR),
        }
    }

    /// Documents of a stream's window per unit of its floors.
    pub const STREAM_RAMP: u64 = 100;
}

impl Default for DfFloors {
    fn default() -> DfFloors {
        DfFloors::BATCH
    }
}

/// A document-frequency limit: a count of documents, a fraction of the corpus, or off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum DfLimit {
    /// No limit.
    #[default]
    Off,
    /// A number of documents, at least 1.
    Count(u64),
    /// A fraction of the documents counted, in `(0, 1)`.
    Fraction(f64),
}

impl DfLimit {
    /// The limit in documents for a corpus of `documents`: a count as given (at least
    /// `minimum`); a fraction rounded up, at least `fraction_floor` (a fraction of a small
    /// corpus is a handful of documents, which ordinary text reaches); `None` when off.
    pub fn resolve(self, documents: u64, minimum: u64, fraction_floor: u64) -> Option<u64> {
        match self {
            DfLimit::Off => None,
            DfLimit::Count(count) => Some(count.max(minimum)),
            DfLimit::Fraction(fraction) => Some(
                ((fraction * documents as f64).ceil() as u64)
                    .max(fraction_floor)
                    .max(minimum),
            ),
        }
    }

    /// Reads a limit for parameter `name`: `off`, a count (`50`), a fraction (`0.01`) or a
    /// percentage (`0.5%`).
    ///
    /// # Errors
    /// Anything else, naming `name` and the value.
    pub fn parse(text: &str, name: &'static str) -> Result<DfLimit> {
        let text = text.trim();
        let bad = || {
            Error::invalid(
                name,
                format!(
                    "{text:?} (expected off, a count of documents such as 50, or a fraction \
                     such as 0.01 or 1%)"
                ),
            )
        };
        if text.eq_ignore_ascii_case("off") || text.eq_ignore_ascii_case("none") {
            return Ok(DfLimit::Off);
        }
        if let Some(percent) = text.strip_suffix('%') {
            let value: f64 = percent.trim().parse().map_err(|_| bad())?;
            return if value > 0.0 && value < 100.0 {
                Ok(DfLimit::Fraction(value / 100.0))
            } else {
                Err(bad())
            };
        }
        if let Ok(count) = text.parse::<u64>() {
            return if count >= 1 {
                Ok(DfLimit::Count(count))
            } else {
                Err(bad())
            };
        }
        let value: f64 = text.parse().map_err(|_| bad())?;
        if value > 0.0 && value < 1.0 {
            Ok(DfLimit::Fraction(value))
        } else {
            Err(bad())
        }
    }
}

impl fmt::Display for DfLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DfLimit::Off => f.write_str("off"),
            DfLimit::Count(count) => write!(f, "{count}"),
            DfLimit::Fraction(fraction) => write!(f, "{fraction}"),
        }
    }
}

impl FromStr for DfLimit {
    type Err = Error;
    fn from_str(text: &str) -> Result<DfLimit> {
        DfLimit::parse(text, "max_df")
    }
}
