//! `exact`: a 128-bit xxh3 hash of the normalised text. Two documents are duplicates when
//! their normalised texts are equal (punctuation, width, case and script variants aside).

use crate::hash::hash128;
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::{Method, Sketch};

/// The sketch of [`Exact`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactSketch {
    identity: u128,
    empty: bool,
}

impl Sketch for ExactSketch {
    fn is_empty(&self) -> bool {
        self.empty
    }
    fn identity(&self) -> u128 {
        self.identity
    }
}

/// Exact duplicates of the normalised text.
#[derive(Debug, Clone, Default)]
pub struct Exact {
    normalizer: Normalizer,
}

impl Exact {
    /// An exact method with the given normalisation.
    pub fn new(options: NormalizeOptions) -> Exact {
        Exact {
            normalizer: Normalizer::new(options),
        }
    }
}

impl Method for Exact {
    type Sketch = ExactSketch;

    fn name(&self) -> &'static str {
        "exact"
    }

    fn sketch(&self, text: &str) -> ExactSketch {
        let normalized = self.normalizer.normalize(text);
        ExactSketch {
            identity: hash128(normalized.as_bytes()),
            empty: normalized.is_empty(),
        }
    }

    /// No keys: every exact duplicate shares its identity, which engines group already.
    fn keys(&self, _sketch: &ExactSketch, _keys: &mut Vec<u64>) {}

    fn similarity(&self, a: &ExactSketch, b: &ExactSketch) -> f64 {
        if !a.empty && a.identity == b.identity {
            1.0
        } else {
            0.0
        }
    }

    fn threshold(&self) -> f64 {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_copies_are_equal() {
        let exact = Exact::default();
        let a = exact.sketch("Hello, World!");
        let b = exact.sketch("ｈｅｌｌｏ  world");
        assert_eq!(exact.similarity(&a, &b), 1.0);
        assert_eq!(exact.similarity(&a, &exact.sketch("hello word")), 0.0);
        assert!(exact.sketch(" !! ").is_empty());
    }
}
