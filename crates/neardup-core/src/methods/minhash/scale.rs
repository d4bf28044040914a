//! Shingle sizes by length (`ngram = "<30:2,3"`): a short document is shingled finer than a
//! long one, because one edited character takes `n` of a short text's few `n`-character
//! shingles with it.
//!
//! A pair must be compared on one kind of shingle, so a document gets the short shingles when
//! it can pair with a short document, and the long ones when it can pair with a long one:
//!
//! - under `below` characters: the short shingles only ([`Scale::Short`]);
//! - from `below` to `overlap_end` characters: both ([`Scale::Both`]), the long ones in the
//!   sketch and the short ones beside them, with LSH keys of both signatures;
//! - from `overlap_end` on: the long shingles only ([`Scale::Long`]).
//!
//! A pair with a short-only document is compared on the short shingles (the pair takes the
//! rule of its shorter document); any other on the long ones. A pair of a short-only and a
//! long-only document is no duplicate: Jaccard cannot exceed the ratio of the smaller set to
//! the larger one, a short-only document has at most `below - 1` shingles, and `overlap_end`
//! is `(below - 1) / t + 2` for the least threshold `t` of those sizes (56 characters at the
//! defaults). (The lengths are characters, spaces not counted; a text made of one repeated
//! phrase has fewer distinct shingles than characters, the one case where that bound is
//! loose.)

use crate::tokenize::{is_cjk, Shingler};

pub use super::sketch::{Scale, ShortPart};
use super::MinHashSketch;

/// The shingle sizes by length of a [`super::MinHash`].
#[derive(Debug, Clone)]
pub(super) struct ScaleRule {
    /// The short shingles' shingler (the long one's tokeniser and Latin shingle size).
    pub(super) shingler: Shingler,
    /// Documents under this many characters take the short shingles only.
    pub(super) below: usize,
    /// Documents under this many characters, and at least `below`, take both.
    pub(super) overlap_end: usize,
}

/// Which shingles a document of a given length takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Long,
    Short,
    Both,
}

impl ScaleRule {
    /// The class of normalised text, by its characters other than white space (counted up
    /// to `overlap_end` only), and whether those hold a CJK character (without one, the
    /// short and the long shingles are the same).
    pub(super) fn class(&self, normalized: &str) -> (Class, bool) {
        let (mut length, mut cjk) = (0, false);
        for c in normalized.chars().filter(|c| !c.is_whitespace()) {
            length += 1;
            cjk |= is_cjk(c);
            if length >= self.overlap_end {
                return (Class::Long, cjk);
            }
        }
        match length < self.below {
            true => (Class::Short, cjk),
            false => (Class::Both, cjk),
        }
    }
}

/// The signature and set one side of a pair is compared on, and whether they are the
/// sketch's own (with its weights and common marks).
#[derive(Debug, Clone, Copy)]
pub(super) struct View<'s> {
    pub(super) signature: &'s [u32],
    pub(super) set: &'s [u32],
    pub(super) own: bool,
}

impl<'s> View<'s> {
    fn own(sketch: &'s MinHashSketch) -> View<'s> {
        View {
            signature: &sketch.signature,
            set: &sketch.set,
            own: true,
        }
    }

    /// The short shingles of `sketch`, if it has them.
    fn short(sketch: &'s MinHashSketch) -> Option<View<'s>> {
        match &sketch.scale {
            Scale::Short | Scale::Both(None) => Some(View::own(sketch)),
            Scale::Both(Some(part)) => Some(View {
                signature: &part.signature,
                set: &part.set,
                own: false,
            }),
            Scale::Long => None,
        }
    }

    /// The long shingles of `sketch`, if it has them.
    fn long(sketch: &'s MinHashSketch) -> Option<View<'s>> {
        match sketch.scale {
            Scale::Short => None,
            _ => Some(View::own(sketch)),
        }
    }
}

/// What the pair `a`, `b` is compared on: the short shingles when one of them is short-only,
/// else the long ones; `None` when one side lacks them (no duplicate). Without a rule every
/// sketch is [`Scale::Long`] and this is the two sketches' own sets.
pub(super) fn pair_views<'s>(
    a: &'s MinHashSketch,
    b: &'s MinHashSketch,
) -> Option<(View<'s>, View<'s>)> {
    if a.scale == Scale::Short || b.scale == Scale::Short {
        Some((View::short(a)?, View::short(b)?))
    } else {
        Some((View::long(a)?, View::long(b)?))
    }
}

/// The pre-check's first byte: 0 when the signature is not a full classic one, else which
/// signature is folded: 1 the long one of a long-only document (or any document without a
/// rule), 2 the short one of a short-only document, 3 the short one of a document in the
/// overlap.
pub(super) fn precheck_flag(sketch: &MinHashSketch, places: usize) -> (u8, &[u32]) {
    let (flag, signature): (u8, &[u32]) = match &sketch.scale {
        Scale::Long => (1, &sketch.signature),
        Scale::Short => (2, &sketch.signature),
        Scale::Both(None) => (3, &sketch.signature),
        Scale::Both(Some(part)) => (3, &part.signature),
    };
    match signature.len() == places {
        true => (flag, signature),
        false => (0, &[]),
    }
}

/// How two pre-checks' flags ([`precheck_flag`]) decide: `Some(true)` when their folded
/// bytes are to be compared (the same signatures the pair is verified on), `Some(false)`
/// when the pair cannot be a duplicate, `None` when the bytes say nothing about it.
pub(super) fn precheck_compares(a: u8, b: u8) -> Option<bool> {
    match (a, b) {
        (0, _) | (_, 0) => None,
        (2, 1) | (1, 2) => Some(false),
        (2, _) | (_, 2) | (1, 1) => Some(true),
        // A pair in the overlap is verified on its long shingles: the bytes are short ones.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::minhash::MinHash;
    use crate::params::{Params, Registered};
    use crate::{Method, Sketch};

    fn defaults() -> MinHash {
        MinHash::from_params(&Params::new()).unwrap()
    }

    /// `n` distinct CJK characters from `from` on.
    fn cjk(from: u32, n: u32) -> String {
        (from..from + n)
            .map(|c| char::from_u32(0x4e00 + c).unwrap())
            .collect()
    }

    #[test]
    fn each_length_takes_its_class() {
        let method = defaults();
        let short = method.sketch(&cjk(0, 15));
        let both = method.sketch(&cjk(0, 40));
        let long = method.sketch(&cjk(0, 80));
        assert_eq!(short.scale, Scale::Short);
        assert!(
            matches!(both.scale, Scale::Both(Some(_))),
            "{:?}",
            both.scale
        );
        assert_eq!(long.scale, Scale::Long);
        // 2-character shingles under 24 characters: 14 of 15 characters.
        assert_eq!(short.set.len(), 14);
        // Latin text has one shingle size: the overlap keeps one set.
        let latin = method.sketch("the quick brown fox jumps over it");
        assert_eq!(latin.scale, Scale::Both(None));
    }

    #[test]
    fn a_short_text_pairs_with_its_edited_copy_in_the_overlap() {
        let method = defaults();
        let text = cjk(0, 22);
        // Two characters more: 24 characters, in the overlap; compared on 2-character
        // shingles (the shorter is short-only), Jaccard 21/23.
        let longer = format!("{text}{}", cjk(100, 2));
        let (a, b) = (method.sketch(&text), method.sketch(&longer));
        assert_eq!(a.scale, Scale::Short);
        assert!(matches!(b.scale, Scale::Both(Some(_))));
        let similarity = method
            .verify(&a, &b)
            .expect("a duplicate on short shingles");
        assert!((similarity - 21.0 / 23.0).abs() < 1e-9, "{similarity}");
        // Two edited characters of 15: 2-character shingles keep 10 of 18 (0.56), where
        // 3-character ones keep 7 of 19 (0.37, under 0.4).
        let edited = format!(
            "{}{}{}{}{}",
            cjk(0, 4),
            cjk(200, 1),
            cjk(5, 5),
            cjk(201, 1),
            cjk(11, 4)
        );
        let (x, y) = (method.sketch(&cjk(0, 15)), method.sketch(&edited));
        let similarity = method
            .verify(&x, &y)
            .expect("a duplicate on 2-character shingles");
        assert!((similarity - 10.0 / 18.0).abs() < 1e-9, "{similarity}");
        let trigrams = MinHash::from_params(&Params::new().set("ngram", "3")).unwrap();
        let (x, y) = (trigrams.sketch(&cjk(0, 15)), trigrams.sketch(&edited));
        assert!((trigrams.similarity(&x, &y) - 7.0 / 19.0).abs() < 1e-9);
        assert!(trigrams.verify(&x, &y).is_none());
    }

    #[test]
    fn short_only_and_long_only_documents_cannot_reach_the_threshold() {
        // The bound the classes rest on: a document under 24 characters and one of 60 or
        // more are below the least threshold on any shingles, whatever they share.
        let method = defaults();
        let bigrams = MinHash::from_params(&Params::new().set("ngram", "2")).unwrap();
        for short in 1..24 {
            let a = cjk(0, short);
            let b = format!("{a}{}", cjk(500, 60 - short));
            let (x, y) = (method.sketch(&a), method.sketch(&b));
            assert_eq!((&x.scale, &y.scale), (&Scale::Short, &Scale::Long));
            assert_eq!(method.verify(&x, &y), None);
            assert_eq!(method.similarity(&x, &y), 0.0);
            let exact = bigrams.similarity(&bigrams.sketch(&a), &bigrams.sketch(&b));
            assert!(exact < method.threshold(), "{short}: {exact}");
        }
    }

    #[test]
    fn scaled_sketches_round_trip_and_their_prechecks_pass_their_pairs() {
        let method = defaults();
        let texts: Vec<String> = (0..30)
            .map(|i| cjk(i % 3, 10 + 3 * i))
            .chain(["a short latin text of some words".to_owned()])
            .collect();
        let sketches: Vec<MinHashSketch> = texts.iter().map(|t| method.sketch(t)).collect();
        let width = method.precheck_width();
        assert!(width > 0);
        let prechecks: Vec<Vec<u8>> = (sketches.iter())
            .map(|s| {
                let mut out = vec![0u8; width];
                method.precheck(s, &mut out);
                out
            })
            .collect();
        let mut verified = 0;
        for (a, x) in sketches.iter().enumerate() {
            let mut bytes = Vec::new();
            x.encode(&mut bytes);
            assert_eq!(&MinHashSketch::decode(&bytes).unwrap(), x);
            for (b, y) in sketches.iter().enumerate().skip(a + 1) {
                if method.verify(x, y).is_some() {
                    verified += 1;
                    assert!(method.precheck_may_agree(&prechecks[a], &prechecks[b]));
                }
            }
        }
        assert!(verified > 10, "{verified}");
    }

    #[test]
    fn a_rule_needs_unweighted_jaccard_and_one_bound() {
        let build = |pairs: &[(&str, &str)]| {
            let mut params = Params::new();
            for (name, value) in pairs {
                params = params.set(*name, *value);
            }
            MinHash::from_params(&params)
        };
        for pairs in [
            &[("ngram", "<24:2,3"), ("weighting", "idf")][..],
            &[("ngram", "<24:2,3"), ("measure", "containment")],
            &[("ngram", "<10:1,<24:2,3")],
        ] {
            let error = build(pairs).unwrap_err();
            assert_eq!(error.parameter(), "ngram", "{pairs:?}");
        }
        // Given parameters turn the defaults by length off; a fixed rule is a number.
        assert!(build(&[("ngram", "3")]).unwrap().scale.is_none());
        assert!(build(&[("weighting", "idf")]).unwrap().scale.is_none());
        assert!(build(&[("ngram", "<24:3,3")]).unwrap().scale.is_none());
        let method = build(&[("threshold", "0.5")]).unwrap();
        assert!(method.scale.is_some());
        assert!(method.threshold_rule().is_fixed());
    }
}
