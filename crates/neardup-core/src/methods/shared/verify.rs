//! How candidates are confirmed, as the methods with a `verify` parameter (`simhash`, the
//! classic fingerprints, `supershingle`) share it: the [`Verification`] choice and the
//! default thresholds (the edit similarity is [`crate::measure::edit_similarity`]).

use crate::params::param_value_by_choice;

/// The default similarity threshold of a set measure (Jaccard on the default `auto`
/// shingles: 3 characters on CJK text, 5 elsewhere): `minhash`'s, and the classic methods'
/// with `verify = jaccard`.
///
/// Chosen with `neardup tune` on `neardup synth` corpora of Chinese headlines, Chinese
/// articles and English newswire with light edits (docs/evaluation.md): at 0.4 precision
/// stays at or above 0.97 on all three and recall is 0.87 to 1.0; 0.5 trades about a tenth of
/// the recall for precision 0.99. One edited character removes up to 3 of a Chinese text's
/// shingles, so Jaccard 0.4 on these shingles is a light edit, not a loose match.
pub const DEFAULT_THRESHOLD: f64 = 0.4;

/// The default `threshold` with `verify = edit`.
pub const DEFAULT_EDIT_THRESHOLD: f64 = 0.7;

/// How candidates are confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verification {
    /// The distance decides.
    None,
    /// Jaccard of the shingle sets (the default).
    #[default]
    Jaccard,
    /// Normalised edit similarity of the normalised texts (`1 - distance / longer length`).
    Edit,
}

crate::named_choices!(Verification as "verify", trimmed {
    None => "none",
    Jaccard => "jaccard",
    Edit => "edit",
});

param_value_by_choice!(Verification);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verification_names_round_trip() {
        for mode in [
            Verification::None,
            Verification::Jaccard,
            Verification::Edit,
        ] {
            assert_eq!(mode.name().parse::<Verification>().unwrap(), mode);
        }
        assert_eq!(
            "x".parse::<Verification>().unwrap_err().parameter(),
            "verify"
        );
    }
}
