//! Method parameters as every front end sees them: what a parameter is ([`ParamSpec`]), the
//! values a user gave ([`Params`], text by name), how a value parses ([`ParamValue`]), the
//! values in effect ([`Setting`]) and the trait of a method built from them ([`Registered`]).
//!
//! The methods import this module, and the registry ([`crate::registry`]) imports the
//! methods: the dependency points one way. The parameter groups several methods share
//! (normalisation, shingles, verification) are in [`crate::methods::shared`].

use std::collections::BTreeMap;
use std::fmt;

use crate::{Error, Method, Result};

/// What kind of value a parameter takes; front ends use it to parse and to show help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A real number.
    Number,
    /// A whole number, at least 0.
    Count,
    /// A switch: present (`true`) or absent (`false`); a value `true` or `false` is accepted.
    Flag,
    /// One of a fixed set of names.
    Choice(&'static [&'static str]),
    /// Free text (a rule such as `"<100:10,3"`, a list such as `"n,v"`).
    Text,
    /// A file: the user gives a path, and the front end reads the file and passes its
    /// contents as the value (the core does no I/O); see [`file_params`](crate::registry::file_params).
    File,
}

/// One parameter of a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The name, in `snake_case` (`threshold`, `lsh_threshold`). The CLI shows it as
    /// `--lsh-threshold`, Python as a keyword argument, HTTP as a JSON key.
    pub name: &'static str,
    /// The value's kind.
    pub kind: ParamKind,
    /// The default as text, or `None` when it is derived from other parameters (the help says
    /// how).
    pub default: Option<&'static str>,
    /// One paragraph of help.
    pub help: &'static str,
    /// The group the parameter belongs to in help pages (`Shingles`, `Normalisation`), or
    /// `None` for the method's own.
    pub group: Option<&'static str>,
}

/// A method the registry can build from [`Params`].
pub trait Registered: Method + Sized + 'static {
    /// The name given to `--method`; equal to [`Method::name`].
    const NAME: &'static str;
    /// One line of help.
    const ABOUT: &'static str;
    /// See [`MethodSpec::finds_candidates`](crate::registry::MethodSpec::finds_candidates).
    const FINDS_CANDIDATES: bool = true;

    /// The parameters, in help order.
    fn params() -> Vec<ParamSpec>;

    /// Builds the method; absent parameters take their defaults.
    ///
    /// # Errors
    /// A value that does not parse or is out of range, naming the parameter.
    fn from_params(params: &Params) -> Result<Self>;

    /// The parameters in effect, by name, as the stats file records them: the derived ones
    /// too (LSH bands and rows, shingle sizes), so a run can be reproduced.
    fn settings(&self) -> Vec<(&'static str, Setting)>;
}

/// A resolved parameter value, for the stats file and for display.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// A real number.
    Number(f64),
    /// A whole number.
    Count(u64),
    /// A name or text.
    Text(String),
    /// A switch.
    Flag(bool),
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Setting::Number(x) => write!(f, "{x}"),
            Setting::Count(n) => write!(f, "{n}"),
            Setting::Text(text) => f.write_str(text),
            Setting::Flag(yes) => write!(f, "{yes}"),
        }
    }
}

/// Parameter values by name, as text, in name order.
///
/// Text is what every front end has (a command line, JSON numbers and strings, Python values
/// through `str`); the method parses it with [`Params::get`], so the messages for a bad value
/// are the same everywhere and name the parameter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    /// No parameters: every default.
    pub fn new() -> Params {
        Params::default()
    }

    /// Sets `name` to `value` (builder style).
    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> Params {
        self.insert(name, value);
        self
    }

    /// Sets `name` to `value`.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.values.insert(name.into(), value.into());
    }

    /// The text value of `name`, if given.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Every given parameter, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `name` parsed as `T`, or `None` if not given.
    ///
    /// # Errors
    /// When the value does not parse: the error names `name` and the value.
    pub fn get<T: ParamValue>(&self, name: &'static str) -> Result<Option<T>> {
        self.raw(name).map(|text| T::parse(name, text)).transpose()
    }

    /// The value of a [`ParamKind::Flag`] parameter: `false` when not given.
    ///
    /// # Errors
    /// When the value is neither `true` nor `false`.
    pub fn flag(&self, name: &'static str) -> Result<bool> {
        Ok(self.get::<bool>(name)?.unwrap_or(false))
    }
}

/// A type a parameter's text parses into, with an error naming the parameter.
pub trait ParamValue: Sized {
    /// Parses `text`, the value of the parameter `name`.
    ///
    /// # Errors
    /// When `text` is not a value of this type.
    fn parse(name: &'static str, text: &str) -> Result<Self>;
}

macro_rules! param_value_by_from_str {
    ($($ty:ty => $what:literal),* $(,)?) => {$(
        impl ParamValue for $ty {
            fn parse(name: &'static str, text: &str) -> Result<Self> {
                text.trim().parse::<$ty>().map_err(|_| {
                    let echoed = $crate::error::quoted(text);
                    Error::invalid(name, format!("{echoed} (expected {})", $what))
                })
            }
        }
    )*};
}
param_value_by_from_str!(
    f64 => "a number",
    usize => "a whole number, at least 0",
    u64 => "a whole number, at least 0",
    bool => "true or false",
);

impl ParamValue for crate::tokenize::ShingleSize {
    fn parse(name: &'static str, text: &str) -> Result<crate::tokenize::ShingleSize> {
        match text.trim().parse::<usize>() {
            Ok(n) if (1..=64).contains(&n) => Ok(crate::tokenize::ShingleSize(n)),
            _ => {
                let rule = if text.trim_start().starts_with('<') {
                    "; length rules such as \"<30:2,3\" are taken by minhash only"
                } else {
                    ""
                };
                Err(Error::invalid(
                    name,
                    format!(
                        "{} (expected a whole number, 1 to 64{rule})",
                        crate::error::quoted(text)
                    ),
                ))
            }
        }
    }
}

/// Implements [`ParamValue`] for choice types, which parse with their own `FromStr` whose
/// error already names the parameter and the accepted names. A method's own choice types
/// (its measures, weightings) invoke it next to their definition.
macro_rules! param_value_by_choice {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::params::ParamValue for $ty {
            fn parse(name: &'static str, text: &str) -> $crate::Result<Self> {
                <$ty as ::std::str::FromStr>::from_str(text).map_err(|error: $crate::Error| {
                    $crate::Error::invalid(name, error.message().to_owned())
                })
            }
        }
    )*};
}
pub(crate) use param_value_by_choice;
param_value_by_choice!(
    crate::measure::SetMeasure,
    crate::minhash::SketchScheme,
    crate::tokenize::Tokenizer,
    crate::normalize::ChineseVariant,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_accept_true_and_false() {
        let params = Params::new()
            .set("strip_html", "true")
            .set("keep_case", "false");
        assert!(params.flag("strip_html").unwrap());
        assert!(!params.flag("keep_case").unwrap());
        assert!(!params.flag("keep_punctuation").unwrap());
        assert!(Params::new()
            .set("keep_case", "yes")
            .flag("keep_case")
            .is_err());
    }

    #[test]
    fn values_parse_with_errors_naming_the_parameter() {
        let params = Params::new().set("ngram", " 3 ").set("threshold", "x");
        assert_eq!(params.get::<usize>("ngram").unwrap(), Some(3));
        assert_eq!(params.get::<usize>("absent").unwrap(), None);
        let error = params.get::<f64>("threshold").unwrap_err();
        assert_eq!(error.parameter(), "threshold");
        assert!(error.to_string().contains("\"x\""), "{error}");
        let error = Params::new()
            .set("tokenizer", "nope")
            .get::<crate::tokenize::Tokenizer>("tokenizer")
            .unwrap_err();
        assert_eq!(error.parameter(), "tokenizer");
    }

    #[test]
    fn settings_display_as_text() {
        assert_eq!(Setting::Number(0.5).to_string(), "0.5");
        assert_eq!(Setting::Count(3).to_string(), "3");
        assert_eq!(Setting::Text("auto".into()).to_string(), "auto");
        assert_eq!(Setting::Flag(true).to_string(), "true");
    }
}
