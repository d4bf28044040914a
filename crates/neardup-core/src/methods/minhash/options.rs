//! The choices of `minhash` that are its own: what happens to common shingles ([`Common`])
//! and how shingles are weighted ([`Weighting`]); the template choices it shares with
//! `simhash` ([`Slots`], [`Templates`]) are re-exported from the shared template check.

use crate::params::param_value_by_choice;

/// What happens to common shingles (in more than `max_df` documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Common {
    /// They stay in the set, but a pair must also agree on its rare shingles: their Jaccard
    /// must reach `rare_threshold` (two notices of one template share their wording and
    /// differ in their numbers and names; two copies of a text share both).
    #[default]
    Check,
    /// They leave the set that is sketched and verified.
    Drop,
}

crate::named_choices!(Common as "common_shingles" {
    Check => "check",
    Drop => "drop",
});

param_value_by_choice!(Common);

/// The default shingle sizes by length (`auto` tokeniser, Jaccard, unweighted, no `ngram`
/// given): 2 characters on CJK text under 24 characters, 3 otherwise (chosen on the short
/// and long corpora of docs/evaluation.md, "Defaults by length").
pub const DEFAULT_NGRAM_RULE: &str = "<24:2,3";

/// The default threshold by length, with [`DEFAULT_NGRAM_RULE`] (no `threshold` given): 0.43
/// for a pair whose smaller set has under 25 shingles, 0.4 otherwise. Pairs of short texts
/// on 2-character shingles share more by chance than on 3-character ones.
pub const DEFAULT_THRESHOLD_RULE: &str = "<25:0.43,0.4";

pub use crate::methods::shared::template::{Slots, Templates, DEFAULT_RARE_THRESHOLD};

/// How shingles are weighted in the signature and the verification measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weighting {
    /// Every shingle weighs 1: Jaccard (or containment) of the sets, classic MinHash.
    #[default]
    None,
    /// A shingle weighs its smoothed inverse document frequency in the corpus
    /// ([`CorpusStats::idf`](crate::corpus::CorpusStats::idf)): weighted Jaccard (or containment) for verification and
    /// weighted MinHash ([`crate::minhash::icws_signature`]) for candidates, so that text
    /// many documents share counts for less.
    Idf,
}

crate::named_choices!(Weighting as "weighting" {
    None => "none",
    Idf => "idf",
});

param_value_by_choice!(Weighting);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    #[test]
    fn names_round_trip_and_errors_name_the_parameter() {
        for common in [Common::Check, Common::Drop] {
            assert_eq!(common.name().parse::<Common>().unwrap(), common);
        }
        for weighting in [Weighting::None, Weighting::Idf] {
            assert_eq!(weighting.name().parse::<Weighting>().unwrap(), weighting);
        }
        for slots in [Slots::Off, Slots::Numbers] {
            assert_eq!(slots.name().parse::<Slots>().unwrap(), slots);
        }
        let error = Params::new().set("slots", "names").get::<Slots>("slots");
        assert_eq!(error.unwrap_err().parameter(), "slots");
        let params = Params::new()
            .set("common_shingles", "keep")
            .set("weighting", "tf");
        let error = params.get::<Common>("common_shingles").unwrap_err();
        assert_eq!(error.parameter(), "common_shingles");
        let error = params.get::<Weighting>("weighting").unwrap_err();
        assert_eq!(error.parameter(), "weighting");
    }
}
