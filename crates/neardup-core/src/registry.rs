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
//! One module in [`crate::methods`] that implements [`Method`](crate::Method) and [`Registered`], and its
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

use crate::methods::exact::Exact;
use crate::methods::imatch::IMatch;
use crate::methods::minhash::MinHash;
use crate::methods::segments::Segments;
use crate::methods::sentences::Sentences;
use crate::methods::short::{NgramIndex, SimilarityJoin};
use crate::methods::simhash::SimHash;
use crate::methods::supershingle::SuperShingle;
use crate::methods::topn::TopN;
use crate::{Error, Result};

pub use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Registered, Setting};

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
}
