//! The method registry: every method by name, with its parameters, defaults and help.
//!
//! Front ends (the CLI, `tune`, the stats file, later the HTTP service and the Python module)
//! never name a method type. They list [`methods`], read each [`MethodSpec`] to offer its
//! parameters, collect what the user gave as [`Params`] (text values by parameter name, as a
//! command line, a JSON body or Python keyword arguments carry them), and hand both to
//! [`with_method`], which builds the method and calls a [`MethodVisitor`] with the concrete
//! type, so that the engines stay generic and fast.
//!
//! # Adding a method
//!
//! One module in [`crate::methods`] that implements [`Method`] and [`Registered`], and its
//! type in the `registry!` list at the bottom of this file. Nothing else: the CLI grows a flag
//! per new parameter, `tune` and the stats file pick the method up by name.
//!
//! # Example
//!
//! ```
//! use neardup_core::registry::{self, MethodVisitor, Params};
//! use neardup_core::Method;
//!
//! struct Similarity<'a>(&'a str, &'a str);
//! impl MethodVisitor for Similarity<'_> {
//!     type Output = f64;
//!     fn visit<M: Method>(self, method: M) -> f64 {
//!         method.similarity(&method.sketch(self.0), &method.sketch(self.1))
//!     }
//! }
//!
//! let params = Params::new().set("ngram", "2");
//! let similarity = registry::with_method(
//!     "minhash",
//!     &params,
//!     Similarity("今天天气很好", "今天天气真好"),
//! )?;
//! assert!(similarity > 0.3);
//! assert!(registry::with_method("nope", &params, Similarity("", "")).is_err());
//! # Ok::<(), neardup_core::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::methods::exact::Exact;
use crate::methods::imatch::IMatch;
use crate::methods::minhash::MinHash;
use crate::methods::segments::Segments;
use crate::methods::sentences::Sentences;
use crate::methods::short::{NgramIndex, SimilarityJoin};
use crate::methods::simhash::SimHash;
use crate::methods::supershingle::SuperShingle;
use crate::methods::topn::TopN;
use crate::normalize::NormalizeOptions;
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
    /// contents as the value (the core does no I/O); see [`file_params`].
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

/// A registered method as front ends see it.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodSpec {
    /// The name given to `--method` (and the stats file's `method.name`).
    pub name: &'static str,
    /// One line of help.
    pub about: &'static str,
    /// Every parameter, in the order of the help page.
    pub params: Vec<ParamSpec>,
    /// Whether the method looks for candidates beyond exact copies: the engine's candidate
    /// limits (`bucket_cap`, `candidate_budget`) apply only then.
    pub finds_candidates: bool,
}

impl MethodSpec {
    /// The spec of `M`.
    pub fn of<M: Registered>() -> MethodSpec {
        MethodSpec {
            name: M::NAME,
            about: M::ABOUT,
            params: M::params(),
            finds_candidates: M::FINDS_CANDIDATES,
        }
    }

    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// A method the registry can build from [`Params`].
pub trait Registered: Method + Sized + 'static {
    /// The name given to `--method`; equal to [`Method::name`].
    const NAME: &'static str;
    /// One line of help.
    const ABOUT: &'static str;
    /// See [`MethodSpec::finds_candidates`].
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
                    Error::invalid(name, format!("{text:?} (expected {})", $what))
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

/// Choice parameters parse with their own `FromStr`, whose error already names the parameter
/// and the accepted names.
macro_rules! param_value_by_choice {
    ($($ty:ty),* $(,)?) => {$(
        impl ParamValue for $ty {
            fn parse(name: &'static str, text: &str) -> Result<Self> {
                <$ty as FromStr>::from_str(text)
                    .map_err(|error: Error| Error::invalid(name, error.message().to_owned()))
            }
        }
    )*};
}
param_value_by_choice!(
    crate::measure::SetMeasure,
    crate::methods::short::ShortMeasure,
    crate::methods::minhash::Weighting,
    crate::methods::minhash::Common,
    crate::minhash::SketchScheme,
    crate::tokenize::Tokenizer,
    crate::normalize::ChineseVariant,
    crate::methods::simhash::Verification,
    crate::methods::simhash::Weights,
    crate::methods::sentences::SentenceSignature,
);

/// The normalisation parameters every text method shares.
pub const NORMALIZE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "chinese_variant",
        kind: ParamKind::Choice(&["simplified", "keep"]),
        default: Some("simplified"),
        help: "Chinese script: `simplified` (convert traditional) or `keep`.",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "strip_html",
        kind: ParamKind::Flag,
        default: None,
        help: "Strip HTML tags and decode entities (web pages).",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "keep_punctuation",
        kind: ParamKind::Flag,
        default: None,
        help: "Keep punctuation and symbols (by default they become spaces).",
        group: Some("Normalisation"),
    },
    ParamSpec {
        name: "keep_case",
        kind: ParamKind::Flag,
        default: None,
        help: "Keep letter case (by default text is lowercased).",
        group: Some("Normalisation"),
    },
];

/// The normalisation options of [`NORMALIZE_PARAMS`] in `params`.
///
/// # Errors
/// A value that does not parse, naming the parameter.
pub fn normalize_options(params: &Params) -> Result<NormalizeOptions> {
    Ok(NormalizeOptions {
        lowercase: !params.flag("keep_case")?,
        chinese_variant: params.get("chinese_variant")?.unwrap_or_default(),
        strip_punctuation: !params.flag("keep_punctuation")?,
        strip_html: params.flag("strip_html")?,
    })
}

/// The settings of normalisation options, for [`Registered::settings`].
pub fn normalize_settings(options: &NormalizeOptions) -> Vec<(&'static str, Setting)> {
    vec![
        (
            "chinese_variant",
            Setting::Text(options.chinese_variant.name().to_owned()),
        ),
        ("strip_html", Setting::Flag(options.strip_html)),
        (
            "keep_punctuation",
            Setting::Flag(!options.strip_punctuation),
        ),
        ("keep_case", Setting::Flag(!options.lowercase)),
    ]
}

/// The shingling parameters of the set methods (besides `ngram`, which each method
/// documents with its own default).
pub const SHINGLE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "tokenizer",
        kind: ParamKind::Choice(&["auto", "token", "char", "word"]),
        default: Some("auto"),
        help: "Shingles: `auto` (character n-grams sized by script), `token` (one token per \
               CJK character and per word), `char` (character n-grams), `word` (jieba for \
               Chinese).",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "ngram",
        kind: ParamKind::Count,
        default: None,
        help: "Tokens per shingle; for `auto`, characters per shingle on CJK text [default: \
               minhash and supershingle 3 for `auto`, 5 otherwise; simhash, join and ngram 2 \
               for `auto` and `char`, 1 otherwise].",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "latin_ngram",
        kind: ParamKind::Count,
        default: None,
        help: "For `auto`: characters per shingle on non-CJK text [default: ngram + 2].",
        group: Some("Shingles"),
    },
    ParamSpec {
        name: "stopwords",
        kind: ParamKind::Flag,
        default: None,
        help: "Remove English and Chinese stopwords before shingling.",
        group: Some("Shingles"),
    },
];

/// The boilerplate parameters of the set methods (see [`crate::boilerplate`]).
pub const BOILERPLATE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "max_df",
        kind: ParamKind::Text,
        default: Some(crate::boilerplate::DEFAULT_MAX_DF),
        help: "Shingles found in more documents than this are common (a template's fixed \
               wording; see --common-shingles): a count such as 50, a fraction such as 0.01 \
               or 1% (at least 50 documents), or off.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "boilerplate_df",
        kind: ParamKind::Text,
        default: Some(crate::boilerplate::DEFAULT_BOILERPLATE_DF),
        help: "Lines (or sentences) found in at least this many documents are boilerplate and \
               leave the similarity: a count, a fraction (at least 20 documents), or off.",
        group: Some("Boilerplate"),
    },
    ParamSpec {
        name: "boilerplate_file",
        kind: ParamKind::File,
        default: None,
        help: "Boilerplate lines, one per line (a list written by --boilerplate-out, or your \
               own), removed whatever the corpus.",
        group: Some("Boilerplate"),
    },
];

/// The boilerplate settings of [`BOILERPLATE_PARAMS`] in `params`, as
/// `(max_df, boilerplate_df, listed lines)`.
///
/// # Errors
/// A limit that does not parse, naming its parameter.
pub fn boilerplate_params(
    params: &Params,
) -> Result<(
    crate::boilerplate::DfLimit,
    crate::boilerplate::DfLimit,
    String,
)> {
    use crate::boilerplate::{DfLimit, DEFAULT_BOILERPLATE_DF, DEFAULT_MAX_DF};
    let max_df = DfLimit::parse(params.raw("max_df").unwrap_or(DEFAULT_MAX_DF), "max_df")?;
    let line_df = DfLimit::parse(
        params
            .raw("boilerplate_df")
            .unwrap_or(DEFAULT_BOILERPLATE_DF),
        "boilerplate_df",
    )?;
    let listed = params.raw("boilerplate_file").unwrap_or("").to_owned();
    Ok((max_df, line_df, listed))
}

/// The settings of a [`crate::boilerplate::Boilerplate`], for the stats file.
pub fn boilerplate_settings(
    boilerplate: &crate::boilerplate::Boilerplate,
) -> Vec<(&'static str, Setting)> {
    let mut settings = vec![
        ("max_df", Setting::Text(boilerplate.max_df().to_string())),
        (
            "boilerplate_df",
            Setting::Text(boilerplate.line_df().to_string()),
        ),
    ];
    if boilerplate.listed_lines() > 0 {
        settings.push((
            "boilerplate_file",
            Setting::Text(format!("{} lines", boilerplate.listed_lines())),
        ));
    }
    settings
}

/// Receives the method that [`with_method`] built, as its concrete type.
pub trait MethodVisitor {
    /// What the visit returns.
    type Output;
    /// Called once with the built method.
    fn visit<M: Registered>(self, method: M) -> Self::Output;
}

/// Refuses parameters that `spec` does not declare, naming the method's parameters.
fn check_known(spec: &MethodSpec, params: &Params) -> Result<()> {
    for (name, value) in params.iter() {
        if spec.param(name).is_none() {
            let known: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            return Err(Error::invalid_owned(
                name.to_owned(),
                format!(
                    "{value:?}: not a parameter of method {} (its parameters: {})",
                    spec.name,
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Declares the registered methods: one type per method. [`methods`] lists them and
/// [`with_method`] dispatches on the name.
macro_rules! registry {
    ($($method:ty),+ $(,)?) => {
        /// Every registered method, in help order.
        pub fn methods() -> Vec<MethodSpec> {
            vec![$(MethodSpec::of::<$method>()),+]
        }

        /// Builds the method called `name` from `params` and gives it to `visitor`.
        ///
        /// # Errors
        /// An unknown method name (parameter `method`), a parameter the method does not
        /// have, or a value the method refuses; every error names the parameter.
        pub fn with_method<V: MethodVisitor>(
            name: &str,
            params: &Params,
            visitor: V,
        ) -> Result<V::Output> {
            $(
                if name == <$method as Registered>::NAME {
                    check_known(&MethodSpec::of::<$method>(), params)?;
                    let method = <$method as Registered>::from_params(params)?;
                    return Ok(visitor.visit(method));
                }
            )+
            let names: Vec<&str> = vec![$(<$method as Registered>::NAME),+];
            Err(Error::invalid(
                "method",
                format!("{name:?} (expected one of: {})", names.join(", ")),
            ))
        }
    };
}

registry!(
    Exact,
    MinHash,
    SimHash,
    SimilarityJoin,
    NgramIndex,
    SuperShingle,
    IMatch,
    TopN,
    Segments,
    Sentences,
);

/// The spec of the method called `name`.
pub fn method(name: &str) -> Option<MethodSpec> {
    methods().into_iter().find(|spec| spec.name == name)
}

/// The names of the [`ParamKind::File`] parameters given in `params` for method `name`:
/// front ends replace each value (a path) by the file's contents before building the method.
pub fn file_params<'a>(name: &str, params: &'a Params) -> Vec<(&'static str, &'a str)> {
    let Some(spec) = method(name) else {
        return Vec::new();
    };
    (spec.params.iter())
        .filter(|p| p.kind == ParamKind::File)
        .filter_map(|p| params.raw(p.name).map(|path| (p.name, path)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Settings;
    impl MethodVisitor for Settings {
        type Output = (String, Vec<(&'static str, Setting)>);
        fn visit<M: Registered>(self, method: M) -> Self::Output {
            assert_eq!(method.name(), M::NAME);
            (method.name().to_owned(), method.settings())
        }
    }

    #[test]
    fn every_method_builds_from_its_documented_defaults() {
        for spec in methods() {
            let mut documented = Params::new();
            for param in &spec.params {
                if let Some(default) = param.default {
                    documented.insert(param.name, default);
                }
            }
            let from_defaults = with_method(spec.name, &Params::new(), Settings).unwrap();
            let from_documented = with_method(spec.name, &documented, Settings).unwrap();
            assert_eq!(from_defaults, from_documented, "{}", spec.name);
        }
    }

    #[test]
    fn names_are_unique_and_parameters_declared_once() {
        let specs = methods();
        for (i, spec) in specs.iter().enumerate() {
            assert!(specs[i + 1..].iter().all(|other| other.name != spec.name));
            for (j, param) in spec.params.iter().enumerate() {
                assert!(
                    spec.params[j + 1..].iter().all(|p| p.name != param.name),
                    "{}: {}",
                    spec.name,
                    param.name
                );
                assert!(!param.help.is_empty());
            }
        }
    }

    #[test]
    fn same_named_parameters_agree_across_methods() {
        // The CLI offers one flag per name: its kind and default must not depend on the method.
        let specs = methods();
        for a in &specs {
            for b in &specs {
                for param in &a.params {
                    if let Some(other) = b.param(param.name) {
                        assert_eq!(
                            (param.kind, param.default),
                            (other.kind, other.default),
                            "{}",
                            param.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn errors_name_the_parameter() {
        let error =
            with_method("minhash", &Params::new().set("threshold", "x"), Settings).unwrap_err();
        assert_eq!(error.parameter(), "threshold");
        assert!(error.to_string().contains("\"x\""), "{error}");
        let error = with_method("exact", &Params::new().set("ngram", "3"), Settings).unwrap_err();
        assert_eq!(error.parameter(), "ngram");
        assert!(error
            .to_string()
            .contains("not a parameter of method exact"));
        let error = with_method("simhash2", &Params::new(), Settings).unwrap_err();
        assert_eq!(error.parameter(), "method");
        let error =
            with_method("minhash", &Params::new().set("measure", "cosine"), Settings).unwrap_err();
        assert_eq!(error.parameter(), "measure");
    }

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
}
