//! `exact`: a 128-bit xxh3 hash of the normalised text. Two documents are duplicates when
//! their normalised texts are equal (punctuation, width, case and script variants aside).

use crate::hash::hash128;
use crate::method::{SketchDecoder, SketchEncoder};
use crate::methods::shared::params::{normalize_options, normalize_settings, NORMALIZE_PARAMS};
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::params::{ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::{Join, Method, Result, Sketch};

/// The kind of an encoded [`ExactSketch`].
const SKETCH_KIND: SketchKind = SketchKind::Exact;

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
    fn encode(&self, out: &mut Vec<u8>) {
        SketchEncoder::new(out, SKETCH_KIND.byte())
            .u128(self.identity)
            .u8(u8::from(self.empty));
    }
    fn decode(bytes: &[u8]) -> Result<ExactSketch> {
        let mut decoder = SketchDecoder::new(bytes, SKETCH_KIND.byte(), SKETCH_KIND.name())?;
        let identity = decoder.u128()?;
        let empty = match decoder.u8()? {
            0 => false,
            1 => true,
            other => {
                return Err(crate::Error::invalid(
                    "sketch",
                    format!("empty flag {other} (expected 0 or 1)"),
                ))
            }
        };
        decoder.finish()?;
        Ok(ExactSketch { identity, empty })
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

    /// Only equal identities are duplicates: no candidate generation at all.
    fn join(&self) -> Join<Self> {
        Join::Identity
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

impl Registered for Exact {
    const NAME: &'static str = "exact";
    const ABOUT: &'static str = "hash of the normalised text";
    const FINDS_CANDIDATES: bool = false;

    fn params() -> Vec<ParamSpec> {
        NORMALIZE_PARAMS.to_vec()
    }

    fn from_params(params: &Params) -> Result<Exact> {
        Ok(Exact::new(normalize_options(params)?))
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        normalize_settings(self.normalizer.options())
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

    #[test]
    fn sketches_round_trip_and_bad_bytes_are_refused() {
        let exact = Exact::default();
        for text in ["Hello", "", "今天"] {
            let sketch = exact.sketch(text);
            let mut bytes = Vec::new();
            sketch.encode(&mut bytes);
            assert_eq!(ExactSketch::decode(&bytes).unwrap(), sketch);
            for cut in 0..bytes.len() {
                assert!(ExactSketch::decode(&bytes[..cut]).is_err());
            }
            bytes.push(0);
            assert!(ExactSketch::decode(&bytes).is_err());
        }
    }
}
