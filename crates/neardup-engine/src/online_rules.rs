//! What an online index may be built with, shared by every front end that holds one (the
//! service's collections, the Python `Index`).
//!
//! An online index has no corpus: it sees documents one at a time, forever. So the
//! parameters a batch run learns from its corpus (`max_df`, `boilerplate_df`) are off unless
//! given, and refused when given another value; and a method that learns from a corpus in a
//! first pass (a lexicon, IDF weights) is refused, since its statistics would be those of an
//! empty corpus. The front ends word the refusal for what they hold ([`Holder`]).

use neardup_core::registry::{MethodSpec, Params};

/// Parameters learned from a corpus in a batch run: off online.
pub const CORPUS_PARAMS: &[&str] = &["max_df", "boilerplate_df"];

/// What holds the online index, as the messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A collection of the service.
    Collection,
    /// The Python `Index`.
    Index,
}

impl Holder {
    fn named(self) -> &'static str {
        match self {
            Holder::Collection => "a collection",
            Holder::Index => "an index",
        }
    }
}

/// A refused parameter or method: the parameter to name and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The parameter (`max_df`, `weights`, or `method` for the method itself).
    pub parameter: String,
    /// Why, for people.
    pub message: String,
}

/// The parameters `spec` takes from a corpus, each set to `off`: the defaults of an online
/// index, before the given parameters.
pub fn corpus_params_off(spec: &MethodSpec) -> Params {
    let mut params = Params::new();
    for name in CORPUS_PARAMS {
        if spec.param(name).is_some() {
            params.insert(*name, "off");
        }
    }
    params
}

/// Refuses a corpus-learned parameter given another value than `off`.
///
/// # Errors
/// `name` is one of [`CORPUS_PARAMS`] and `value` is not `off`.
pub fn check_corpus_param(name: &str, value: &str, holder: Holder) -> Result<(), Refusal> {
    if !CORPUS_PARAMS.contains(&name) || value == "off" {
        return Ok(());
    }
    let has_none = holder.named();
    let message = format!(
        "{value:?}: learned from a corpus in batch runs; {has_none} has none, so only \"off\" \
         is accepted"
    );
    Err(Refusal {
        parameter: name.to_owned(),
        message,
    })
}

/// Refuses a method that learns from a corpus (`learns`: its
/// [`learns_from_corpus`](neardup_core::Method::learns_from_corpus)). `params` are those it
/// was built with: a `weights` parameter is named when given to the Python index.
///
/// # Errors
/// `learns` is true.
pub fn refuse_learning(
    learns: bool,
    method: &str,
    params: &Params,
    holder: Holder,
) -> Result<(), Refusal> {
    if !learns {
        return Ok(());
    }
    // Its statistics (imatch's lexicon, topn's or simhash tfidf's IDF) would be those of an
    // empty corpus: every word in the lexicon, every IDF 1.
    let has_none = holder.named();
    let (parameter, message) = match holder {
        Holder::Collection => (
            "method",
            format!(
                "{method:?} with these parameters learns from a corpus in a first pass (a \
                 lexicon or IDF weights); {has_none} has none: use simhash (weights tf), \
                 minhash, join or exact"
            ),
        ),
        // SimHash learns IDF weights unless given a table; imatch and topn learn a lexicon
        // or IDF weights whatever their parameters.
        Holder::Index if params.raw("weights").is_some() => (
            "weights",
            format!(
                "the method learns weights from a corpus (tfidf without an idf file); \
                 {has_none} has none: give idf_file or another weighting"
            ),
        ),
        Holder::Index => (
            "method",
            format!(
                "{method} learns from a corpus in a first pass (a lexicon or IDF weights); \
                 {has_none} has none: give imatch a lexicon_file, or use simhash, minhash, join \
                 or exact"
            ),
        ),
    };
    Err(Refusal {
        parameter: parameter.to_owned(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_params_are_off_and_other_values_refused() {
        let spec = neardup_core::registry::method("minhash").expect("minhash is registered");
        let params = corpus_params_off(&spec);
        for (name, value) in params.iter() {
            assert!(CORPUS_PARAMS.contains(&name), "{name}");
            assert_eq!(value, "off");
        }
        assert!(check_corpus_param("max_df", "off", Holder::Index).is_ok());
        assert!(check_corpus_param("threshold", "0.5", Holder::Index).is_ok());
        let refused = check_corpus_param("max_df", "1%", Holder::Collection).unwrap_err();
        assert_eq!(refused.parameter, "max_df");
        assert!(refused.message.contains("a collection has none"));
    }

    #[test]
    fn learning_methods_are_refused_naming_the_holder() {
        let params = Params::new();
        assert!(refuse_learning(false, "minhash", &params, Holder::Index).is_ok());
        let refused = refuse_learning(true, "imatch", &params, Holder::Index).unwrap_err();
        assert_eq!(refused.parameter, "method");
        assert!(refused.message.starts_with("imatch learns"));
        let refused = refuse_learning(true, "topn", &params, Holder::Collection).unwrap_err();
        assert!(refused.message.starts_with("\"topn\" with these"));
    }

    /// The messages the service and the Python index gave before the rule was shared.
    #[test]
    fn the_messages_are_those_of_each_front_end() {
        let message = |refused: Result<(), Refusal>| {
            let refused = refused.unwrap_err();
            format!("{}: {}", refused.parameter, refused.message)
        };
        assert_eq!(
            message(check_corpus_param("max_df", "1%", Holder::Collection)),
            "max_df: \"1%\": learned from a corpus in batch runs; a collection has none, so \
             only \"off\" is accepted"
        );
        assert_eq!(
            message(check_corpus_param("boilerplate_df", "5", Holder::Index)),
            "boilerplate_df: \"5\": learned from a corpus in batch runs; an index has none, so \
             only \"off\" is accepted"
        );
        let none = Params::new();
        assert_eq!(
            message(refuse_learning(true, "imatch", &none, Holder::Collection)),
            "method: \"imatch\" with these parameters learns from a corpus in a first pass (a \
             lexicon or IDF weights); a collection has none: use simhash (weights tf), minhash, \
             join or exact"
        );
        assert_eq!(
            message(refuse_learning(true, "imatch", &none, Holder::Index)),
            "method: imatch learns from a corpus in a first pass (a lexicon or IDF weights); an \
             index has none: give imatch a lexicon_file, or use simhash, minhash, join or exact"
        );
        let mut weights = Params::new();
        weights.insert("weights", "tfidf");
        assert_eq!(
            message(refuse_learning(true, "simhash", &weights, Holder::Index)),
            "weights: the method learns weights from a corpus (tfidf without an idf file); an \
             index has none: give idf_file or another weighting"
        );
    }
}
