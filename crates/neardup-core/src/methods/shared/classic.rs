//! What the classic fingerprint methods share (`imatch`, `topn`, `segments`, `sentences`;
//! `supershingle` is MinHash underneath and uses MinHash's sketch): their sketch, its
//! verification, their signatures and their word features.
//!
//! Each of them turns a document into a few *signatures* (64-bit keys): documents sharing a
//! signature (or enough of them) are candidates, as in the published methods. What their
//! descriptions leave out is a check of the candidates: a signature hides how much two texts share, so a short text or
//! an unlucky collision of features makes a false duplicate. Here every candidate is
//! verified by default ([`Verifier`]): the Jaccard of its 3-character (CJK) and 5-character
//! shingles, the measure `minhash` verifies with, must reach `threshold`. `verify = none`
//! gives the classic behaviour (a shared signature is a duplicate; the similarity reported is
//! the Jaccard of the two documents' signature sets), `verify = edit` the normalised edit
//! similarity of the characters.
//!
//! The identity of a sketch is the hash of the normalised text, so exact copies (after
//! normalisation) are grouped before any signature is compared.

use crate::hash::{hash128, hash128_u64s, mix64};
use crate::measure::{edit_similarity, jaccard};
use crate::method::{SketchDecoder, SketchEncoder};
use crate::methods::shared::params::THRESHOLD_PARAM;
use crate::methods::shared::verify::{Verification, DEFAULT_EDIT_THRESHOLD, DEFAULT_THRESHOLD};
use crate::params::{ParamKind, ParamSpec, Params, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Result, Sketch};

/// The sketch of a classic method (kind byte `KIND`, a [`SketchKind::byte`]): signatures, and
/// what verification needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicSketch<const KIND: u8> {
    identity: u128,
    /// The signatures, sorted, without repeats.
    keys: Box<[u64]>,
    /// `verify = jaccard`: the top 32 bits of the shingle hashes, sorted, without repeats.
    set: Box<[u32]>,
    /// `verify = edit`: the normalised characters, spaces left out.
    text: Box<[u32]>,
    empty: bool,
    exact_only: bool,
}

impl<const KIND: u8> ClassicSketch<KIND> {
    /// The signatures, sorted, without repeats.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }
}

impl<const KIND: u8> Sketch for ClassicSketch<KIND> {
    fn is_empty(&self) -> bool {
        self.empty
    }
    fn exact_only(&self) -> bool {
        self.exact_only
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        let flags = u8::from(self.empty) | u8::from(self.exact_only) << 1;
        let mut encoder = SketchEncoder::new(out, KIND);
        encoder.u128(self.identity).u8(flags);
        encoder.u32(self.keys.len() as u32);
        for &key in self.keys.iter() {
            encoder.u64(key);
        }
        encoder.u32s(&self.set).u32s(&self.text);
    }
    fn decode(bytes: &[u8]) -> Result<Self> {
        let mut decoder = SketchDecoder::new(bytes, KIND, kind_name(KIND))?;
        let identity = decoder.u128()?;
        let flags = decoder.u8()?;
        if flags > 3 {
            return Err(Error::invalid(
                "sketch",
                format!("flags {flags} (expected 0 to 3)"),
            ));
        }
        let count = decoder.u32()? as usize;
        if count > bytes.len() / 8 {
            return Err(Error::invalid(
                "sketch",
                format!("{count} signatures in {} bytes", bytes.len()),
            ));
        }
        let keys = (0..count)
            .map(|_| decoder.u64())
            .collect::<Result<Vec<u64>>>()?;
        let set = decoder.u32s()?;
        let text = decoder.u32s()?;
        decoder.finish()?;
        if !keys.windows(2).all(|w| w[0] < w[1]) || !set.windows(2).all(|w| w[0] < w[1]) {
            return Err(Error::invalid(
                "sketch",
                "signatures or verification set not strictly increasing",
            ));
        }
        Ok(ClassicSketch {
            identity,
            keys: keys.into_boxed_slice(),
            set: set.into_boxed_slice(),
            text: text.into_boxed_slice(),
            empty: flags & 1 != 0,
            exact_only: flags & 2 != 0,
        })
    }
}

fn kind_name(kind: u8) -> &'static str {
    SketchKind::from_byte(kind).map_or("classic", SketchKind::name)
}

/// Builds sketches and verifies candidates the same way for every classic method.
#[derive(Debug, Clone)]
pub struct Verifier {
    mode: Verification,
    threshold: f64,
    shingler: Shingler,
}

impl Verifier {
    /// `verify` and `threshold` from `params`.
    ///
    /// # Errors
    /// A value that does not parse, or a threshold outside `(0, 1]`.
    pub fn from_params(params: &Params) -> Result<Verifier> {
        let mode = params.get("verify")?.unwrap_or(Verification::Jaccard);
        let threshold = params.get("threshold")?.unwrap_or(match mode {
            Verification::Edit => DEFAULT_EDIT_THRESHOLD,
            _ => DEFAULT_THRESHOLD,
        });
        Verifier::new(mode, threshold)
    }

    /// A verifier.
    ///
    /// # Errors
    /// A threshold outside `(0, 1]`.
    pub fn new(mode: Verification, threshold: f64) -> Result<Verifier> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!("{threshold} (expected 0 < t <= 1)"),
            ));
        }
        let shingler = ShinglerBuilder::new().tokenizer(Tokenizer::Auto).build()?;
        Ok(Verifier {
            mode,
            threshold,
            shingler,
        })
    }

    /// The verification.
    pub fn mode(&self) -> Verification {
        self.mode
    }

    /// The sketch of a document whose normalised text is `normalized`, with signatures
    /// `keys` (any order, repeats allowed). A document without signatures but with text is
    /// exact-only (`exact_only` forces it).
    pub fn sketch<const KIND: u8>(
        &self,
        normalized: &str,
        mut keys: Vec<u64>,
        exact_only: bool,
    ) -> ClassicSketch<KIND> {
        keys.sort_unstable();
        keys.dedup();
        let empty = normalized.is_empty();
        let set = match self.mode {
            Verification::Jaccard => {
                let shingles = self.shingler.shingles(normalized);
                let mut set: Vec<u32> = (shingles.hashes().iter())
                    .map(|&h| (h >> 32) as u32)
                    .collect();
                set.dedup();
                set.into_boxed_slice()
            }
            _ => Box::default(),
        };
        let text = match self.mode {
            Verification::Edit => (normalized.chars())
                .filter(|&c| c != ' ')
                .map(u32::from)
                .collect(),
            _ => Box::default(),
        };
        ClassicSketch {
            identity: hash128(normalized.as_bytes()),
            exact_only: !empty && (exact_only || keys.is_empty()),
            keys: if empty || exact_only {
                Box::default()
            } else {
                keys.into_boxed_slice()
            },
            set,
            text,
            empty,
        }
    }

    /// The similarity of two sketches under the verification (with `none`, the Jaccard of
    /// their signature sets).
    pub fn similarity<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> f64 {
        if a.empty || b.empty {
            return 0.0;
        }
        if a.identity == b.identity {
            return 1.0;
        }
        match self.mode {
            Verification::None => jaccard(&a.keys, &b.keys),
            Verification::Jaccard => jaccard(&a.set, &b.set),
            Verification::Edit => edit_similarity(&a.text, &b.text, 0.0).unwrap_or(0.0),
        }
    }

    /// The similarity of a candidate pair if it is a duplicate.
    pub fn verify<const KIND: u8>(
        &self,
        a: &ClassicSketch<KIND>,
        b: &ClassicSketch<KIND>,
    ) -> Option<f64> {
        match self.mode {
            Verification::None => Some(self.similarity(a, b)),
            Verification::Jaccard => {
                let (small, large) = (a.set.len().min(b.set.len()), a.set.len().max(b.set.len()));
                if large > 0 && (small as f64) / (large as f64) < self.threshold - 1e-9 {
                    return None;
                }
                let similarity = self.similarity(a, b);
                (similarity >= self.threshold - 1e-9).then_some(similarity)
            }
            Verification::Edit => {
                if a.identity == b.identity {
                    return Some(1.0);
                }
                edit_similarity(&a.text, &b.text, self.threshold)
            }
        }
    }

    /// The threshold (0 with `verify = none`: a shared signature is enough).
    pub fn threshold(&self) -> f64 {
        match self.mode {
            Verification::None => 0.0,
            _ => self.threshold,
        }
    }

    /// `verify` and `threshold`, for the stats file.
    pub fn settings(&self) -> Vec<(&'static str, Setting)> {
        vec![
            ("verify", Setting::Text(self.mode.name().to_owned())),
            ("threshold", Setting::Number(self.threshold)),
        ]
    }
}

/// The classic methods' `verify` parameter (`supershingle` has it too).
pub const VERIFY_PARAM: ParamSpec = ParamSpec {
    name: "verify",
    kind: ParamKind::Choice(&["none", "jaccard", "edit"]),
    default: Some("jaccard"),
    help: "Confirm candidates with `jaccard` (shingle sets, at --threshold) or `edit` \
           (normalised edit similarity); `none`: a shared signature is a duplicate.",
    group: None,
};

/// `threshold` and `verify`: the same specs as minhash's `threshold` and the same kind and
/// default as simhash's `verify` (the CLI has one flag per name).
pub fn verify_params() -> Vec<ParamSpec> {
    vec![THRESHOLD_PARAM, VERIFY_PARAM]
}

/// The word features of `imatch` and `topn`: jieba words on Chinese, Unicode words
/// elsewhere.
///
/// # Errors
/// A `stopwords` value that does not parse.
pub fn word_shingler(params: &Params) -> Result<Shingler> {
    ShinglerBuilder::new()
        .tokenizer(Tokenizer::Word)
        .ngram(1)
        .remove_stopwords(params.flag("stopwords")?)
        .build()
}

/// A signature of `values` (sorted or not, as the caller decides) tagged with `tag`, so that
/// the signatures of different lexicons, segments or kinds never meet.
pub fn signature(tag: u64, values: &[u64]) -> u64 {
    let mut tagged = Vec::with_capacity(values.len() + 1);
    tagged.push(mix64(tag ^ 0x636c_6173_7369_6321));
    tagged.extend_from_slice(values);
    let hash = hash128_u64s(&tagged);
    (hash as u64) ^ ((hash >> 64) as u64)
}

/// Whether `c` is punctuation or a symbol for the sentence methods: not a letter, digit,
/// mark of a letter, or white space.
pub fn is_mark(c: char) -> bool {
    !(c.is_alphanumeric() || c.is_whitespace() || matches!(c, '\u{300}'..='\u{36F}'))
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestSketch = ClassicSketch<{ SketchKind::TopN.byte() }>;

    #[test]
    fn sketches_round_trip_under_their_kind() {
        let verifier = Verifier::new(Verification::Jaccard, 0.4).unwrap();
        let sketch: TestSketch =
            verifier.sketch("今天天气很好 我们去公园散步", vec![3, 1, 3], false);
        assert_eq!(sketch.keys(), &[1, 3]);
        let mut bytes = Vec::new();
        sketch.encode(&mut bytes);
        assert_eq!(bytes[3], SketchKind::TopN.byte());
        assert_eq!(TestSketch::decode(&bytes).unwrap(), sketch);
        let error = ClassicSketch::<{ SketchKind::IMatch.byte() }>::decode(&bytes).unwrap_err();
        assert!(error.to_string().contains("imatch"), "{error}");
    }

    #[test]
    fn verification_modes_decide() {
        let text = "the quick brown fox jumps over the lazy dog";
        let edited = "the quick brown fox jumped over the lazy dog";
        for mode in [
            Verification::None,
            Verification::Jaccard,
            Verification::Edit,
        ] {
            let verifier = Verifier::new(mode, 0.5).unwrap();
            let a: TestSketch = verifier.sketch(text, vec![1, 2], false);
            let b: TestSketch = verifier.sketch(edited, vec![2, 3], false);
            let similarity = verifier.verify(&a, &b).unwrap();
            assert!(
                (verifier.similarity(&a, &b) - similarity).abs() < 1e-12,
                "{mode:?}"
            );
            assert!(similarity < 1.0, "{mode:?}");
        }
        assert!(Verifier::new(Verification::Jaccard, 0.0).is_err());
        assert_ne!(signature(1, &[1, 2]), signature(2, &[1, 2]));
        assert!(is_mark('，') && !is_mark('中'));
    }
}
