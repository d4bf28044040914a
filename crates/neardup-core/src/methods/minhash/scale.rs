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
//! long-only document is no duplicate: `overlap_end` is `below` divided by the smallest
//! threshold, and Jaccard cannot exceed the ratio of the smaller set to the larger one. (The
//! lengths are characters, spaces not counted; a text made of one repeated phrase has fewer
//! distinct shingles than characters, the one case where that bound is loose.)

use crate::tokenize::Shingler;

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
    /// The class of normalised text, by its characters other than white space.
    pub(super) fn class(&self, normalized: &str) -> Class {
        let length = normalized.chars().filter(|c| !c.is_whitespace()).count();
        if length < self.below {
            Class::Short
        } else if length < self.overlap_end {
            Class::Both
        } else {
            Class::Long
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
