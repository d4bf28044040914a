//! What the Spark path may run, in the words of a refusal: the rules beside those of the
//! online index ([`crate::online_rules`]), so that every front end asks the candidate
//! factory ([`neardup_index::spark_form`]) and no front end reads a join's shape from text.
//!
//! The Spark path runs the joins whose candidates a shuffle can gather: exact identities,
//! banded keys, Hamming blocks and the exact set join (PPJoin's prefixes). It refuses the
//! edit-distance join, the joins that need one global index, and weights learned from the
//! whole corpus's shingle counts.

use neardup_core::registry::Params;
use neardup_core::JoinShape;
use neardup_index::{spark_form as form_of, SparkForm, SparkGap};

use crate::online_rules::Refusal;

/// The form the Spark path runs `method` (of join `shape`, built with `params`) in.
///
/// # Errors
/// A [`Refusal`] naming the parameter to change (`measure`, `method` or `weighting`) and why.
pub fn spark_form(method: &str, shape: JoinShape, params: &Params) -> Result<SparkForm, Refusal> {
    let refusal = |parameter: &str, message: String| Refusal {
        parameter: parameter.to_owned(),
        message,
    };
    let form = form_of(shape).map_err(|gap| match gap {
        SparkGap::Edit => refusal(
            "measure",
            "'edit' on Spark: Pass-Join's distributed form looks up every substring where a \
             partner's segment can be, for every partner length (on the order of the squared \
             length of a text per text); run the edit-distance join on one machine with \
             neardup.dedup or `neardup dedup`, or use a set measure"
                .to_owned(),
        ),
        SparkGap::GlobalIndex(index) => refusal(
            "method",
            format!(
                "{method:?}: the Spark path runs the methods whose candidates share a key \
                 (exact, minhash, supershingle, imatch, topn, and join with a set measure) and \
                 simhash (Hamming blocks); {method} finds candidates with a global index \
                 ({index}): run it on one machine with neardup.dedup or `neardup dedup`"
            ),
        ),
    })?;
    if params.raw("weighting") == Some("idf") {
        return Err(refusal(
            "weighting",
            "'idf' weighs every shingle by its count in the whole corpus; the Spark path's \
             corpus pass counts boilerplate lines only"
                .to_owned(),
        ));
    }
    Ok(form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gap_is_refused_naming_its_parameter() {
        let params = Params::new();
        let form = |shape| spark_form("m", shape, &params);
        assert_eq!(form(JoinShape::Hamming), Ok(SparkForm::Hamming));
        assert_eq!(form(JoinShape::Prefix), Ok(SparkForm::SetJoin));
        let edit = form(JoinShape::Edit).unwrap_err();
        assert_eq!(edit.parameter, "measure");
        assert!(edit.message.starts_with("'edit' on Spark"), "{edit:?}");
        let global = form(JoinShape::NgramBuckets).unwrap_err();
        assert_eq!(global.parameter, "method");
        assert!(
            global.message.contains("global index (n-gram buckets)"),
            "{global:?}"
        );
        let idf = Params::new().set("weighting", "idf");
        let weighted = spark_form("minhash", JoinShape::SymmetricKeys, &idf).unwrap_err();
        assert_eq!(weighted.parameter, "weighting");
        let tf = Params::new().set("weighting", "none");
        assert_eq!(
            spark_form("minhash", JoinShape::SymmetricKeys, &tf),
            Ok(SparkForm::Keys)
        );
    }
}
