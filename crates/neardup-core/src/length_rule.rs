//! Values that depend on a document's length: `max_distance` of `simhash` ([`DistanceRule`])
//! and `threshold` of the set-measure methods ([`ThresholdRule`]).
//!
//! A rule is a number (`0.4`) or items read left to right, `"<20:0.3,<60:0.35,0.4"`: a length
//! under 20 gets 0.3, under 60 gets 0.35, and the last item, a bare value, is the default.
//! Bounds must increase. A pair of documents takes the rule of its shorter document. Each
//! method says what it counts as a length (characters for `simhash`; the features the measure
//! compares for the set measures).

use std::fmt;
use std::str::FromStr;

use crate::error::{quoted, THRESHOLD_RANGE};
use crate::{Error, Result};

/// A value by document length (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LengthRule<T> {
    /// `(below, value)`: lengths under `below` get `value`; bounds increasing.
    bands: Vec<(usize, T)>,
    default: T,
}

/// The Hamming distance limit of `simhash` by length in characters.
pub type DistanceRule = LengthRule<u32>;

/// The similarity threshold of a set measure by length in features.
pub type ThresholdRule = LengthRule<f64>;

/// Tokens per shingle by length in characters (`minhash`).
pub type NgramRule = LengthRule<usize>;

impl<T: Copy + PartialOrd> LengthRule<T> {
    /// One value for every length.
    pub fn fixed(value: T) -> LengthRule<T> {
        LengthRule {
            bands: Vec::new(),
            default: value,
        }
    }

    /// The value of a document of `length`.
    pub fn at(&self, length: usize) -> T {
        (self.bands.iter())
            .find(|&&(below, _)| length < below)
            .map_or(self.default, |&(_, value)| value)
    }

    /// The value of lengths not under any bound.
    pub fn default_value(&self) -> T {
        self.default
    }

    /// Whether the value is the same at every length.
    pub fn is_fixed(&self) -> bool {
        self.bands.iter().all(|&(_, value)| value == self.default)
    }

    /// Every value the rule can give, the default last.
    pub fn values(&self) -> impl Iterator<Item = T> + '_ {
        self.bands.iter().map(|b| b.1).chain([self.default])
    }

    /// The smallest value of any length.
    pub fn min(&self) -> T {
        self.values()
            .fold(self.default, |m, v| if v < m { v } else { m })
    }

    /// The largest value of any length.
    pub fn max(&self) -> T {
        self.values()
            .fold(self.default, |m, v| if v > m { v } else { m })
    }

    /// The same bounds with `f` of each value.
    pub fn map<U>(&self, f: impl Fn(T) -> U) -> LengthRule<U> {
        LengthRule {
            bands: self.bands.iter().map(|&(below, v)| (below, f(v))).collect(),
            default: f(self.default),
        }
    }

    /// The smallest value of the lengths under `length`.
    pub fn min_under(&self, length: usize) -> T {
        let mut least = self.at(0);
        let mut start = 0;
        for &(below, value) in self.bands.iter().chain([(usize::MAX, self.default)].iter()) {
            if start < length && value < least {
                least = value;
            }
            start = below;
        }
        least
    }

    /// The bounds and their values, in order (the default not included).
    pub fn bands(&self) -> &[(usize, T)] {
        &self.bands
    }

    /// The rule `text` of `parameter`, each value read by `value` (whose error says what a
    /// value must be); `example` is a valid rule, quoted in the errors.
    pub(crate) fn parse(
        text: &str,
        parameter: &'static str,
        example: &str,
        value: impl Fn(&str) -> std::result::Result<T, String>,
    ) -> Result<LengthRule<T>> {
        let bad = |message: String| Error::invalid(parameter, message);
        let echoed = quoted(text);
        let read = |item: &str| value(item.trim()).map_err(|e| bad(format!("{echoed}: {e}")));
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        let (last, rules) = items.split_last().unwrap_or((&"", &[]));
        let mut bands: Vec<(usize, T)> = Vec::with_capacity(rules.len());
        for item in rules {
            let parts = (item.strip_prefix('<')).and_then(|rest| rest.split_once(':'));
            let Some((below, v)) = parts else {
                return Err(bad(format!(
                    "{echoed}: {} is not a rule item (expected <LENGTH:VALUE, as in \
                     {example:?})",
                    quoted(item)
                )));
            };
            let below = below.trim();
            let Ok(below) = below.parse::<usize>() else {
                let what = match below.bytes().all(|b| b.is_ascii_digit()) && !below.is_empty() {
                    true => format!("the length bound {} is too large", quoted(below)),
                    false => format!("{} is not a length (a whole number)", quoted(below)),
                };
                return Err(bad(format!("{echoed}: {what}")));
            };
            if bands.last().is_some_and(|&(previous, _)| below <= previous) {
                return Err(bad(format!(
                    "{echoed}: length bounds must increase from left to right"
                )));
            }
            bands.push((below, read(v)?));
        }
        if last.starts_with('<') {
            return Err(bad(format!(
                "{echoed}: the last item must be the default (a bare value, as in {example:?})"
            )));
        }
        Ok(LengthRule {
            bands,
            default: read(last)?,
        })
    }
}

impl<T: fmt::Display> fmt::Display for LengthRule<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (below, value) in &self.bands {
            write!(f, "<{below}:{value},")?;
        }
        write!(f, "{}", self.default)
    }
}

impl FromStr for ThresholdRule {
    type Err = Error;
    fn from_str(text: &str) -> Result<ThresholdRule> {
        LengthRule::parse(text, "threshold", "<20:0.3,<60:0.35,0.4", |item| {
            let value: f64 = item.parse().map_err(|_| {
                format!(
                    "{} is not a threshold (expected {THRESHOLD_RANGE})",
                    quoted(item)
                )
            })?;
            if !(value > 0.0 && value <= 1.0) {
                return Err(format!("threshold {value} (expected {THRESHOLD_RANGE})"));
            }
            Ok(value)
        })
    }
}

impl FromStr for NgramRule {
    type Err = Error;
    fn from_str(text: &str) -> Result<NgramRule> {
        LengthRule::parse(text, "ngram", "<30:2,3", |item| {
            match item.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(format!(
                    "{} is not a shingle size (expected a whole number, at least 1)",
                    quoted(item)
                )),
            }
        })
    }
}

crate::params::param_value_by_choice!(ThresholdRule, NgramRule);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_gives_each_length_its_band() {
        let rule: ThresholdRule = "<20:0.3, <60:0.35, 0.4".parse().unwrap();
        assert_eq!(rule.at(0), 0.3);
        assert_eq!(rule.at(19), 0.3);
        assert_eq!(rule.at(20), 0.35);
        assert_eq!(rule.at(59), 0.35);
        assert_eq!(rule.at(60), 0.4);
        assert_eq!(rule.at(usize::MAX), 0.4);
        assert_eq!(
            (rule.min(), rule.max(), rule.default_value()),
            (0.3, 0.4, 0.4)
        );
        assert_eq!(rule.min_under(1), 0.3);
        assert_eq!(rule.min_under(21), 0.3);
        let rising: ThresholdRule = "<25:0.43,0.4".parse().unwrap();
        assert_eq!((rising.min_under(25), rising.min_under(26)), (0.43, 0.4));
        assert!(!rule.is_fixed());
        assert_eq!(rule.to_string(), "<20:0.3,<60:0.35,0.4");
        assert_eq!(rule.to_string().parse::<ThresholdRule>().unwrap(), rule);
    }

    #[test]
    fn a_number_is_a_fixed_rule() {
        let rule: ThresholdRule = "0.7".parse().unwrap();
        assert_eq!(rule, ThresholdRule::fixed(0.7));
        assert!(rule.is_fixed());
        assert_eq!(rule.to_string(), "0.7");
        let same: ThresholdRule = "<10:0.5,0.5".parse().unwrap();
        assert!(same.is_fixed());
    }

    #[test]
    fn bad_rules_are_refused_naming_the_parameter_and_the_item() {
        for (text, says) in [
            ("", "not a threshold"),
            ("x", "not a threshold"),
            ("1.5", "threshold 1.5 (expected a number t with 0 < t <= 1)"),
            ("0", "threshold 0 (expected a number t with 0 < t <= 1)"),
            ("<20:0.3", "last item must be the default"),
            ("<60:0.3,<20:0.35,0.4", "must increase"),
            ("<a:0.3,0.4", "\"a\" is not a length"),
            (
                "<99999999999999999999999:0.3,0.4",
                "the length bound \"99999999999999999999999\" is too large",
            ),
            ("20:0.3,0.4", "not a rule item"),
            ("<20:x,0.4", "\"x\" is not a threshold"),
        ] {
            let error = text.parse::<ThresholdRule>().unwrap_err();
            assert_eq!(error.parameter(), "threshold", "{text:?}");
            assert!(error.to_string().contains(says), "{text:?}: {error}");
        }
        // A hostile value is cut in the message, not echoed whole (issue 44).
        let long = format!("<20:{},0.4", "1".repeat(120_000));
        let error = long.parse::<ThresholdRule>().unwrap_err().to_string();
        assert!(error.len() < 400, "{} bytes", error.len());
        let error = "<100:30,3".parse::<DistanceRule>().unwrap_err();
        assert_eq!(error.parameter(), "max_distance");
        assert!(error.to_string().contains("above the largest"), "{error}");
    }
}
