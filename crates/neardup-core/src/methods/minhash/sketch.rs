//! The sketch of `minhash` and `supershingle`: the signature LSH reads, the verification
//! set, its weights and common marks, and their encoding (kinds [`SketchKind::MinHash`] and
//! [`SketchKind::WeightedMinHash`]).

use crate::method::{SketchDecoder, SketchEncoder};
use crate::sketch_kind::SketchKind;
use crate::slots::NumberPlaces;
use crate::{Error, Result, Sketch};

/// The kind of an encoded [`MinHashSketch`].
const SKETCH_KIND: SketchKind = SketchKind::MinHash;
/// The kind of an encoded weighted [`MinHashSketch`] (`weighting = idf`): the same fields,
/// then the weights.
const WEIGHTED_SKETCH_KIND: SketchKind = SketchKind::WeightedMinHash;
/// The kind of an encoded [`MinHashSketch`] under shingle sizes by length: the fields of
/// the unweighted kind, the common marks, the [`Scale`] and the short part.
const SCALED_SKETCH_KIND: SketchKind = SketchKind::ScaledMinHash;
/// The kind of an encoded [`MinHashSketch`] with slots (the numbers of its text): the slots,
/// then the whole encoding of the sketch without them (kind minhash, weighted or by length).
const SLOTTED_SKETCH_KIND: SketchKind = SketchKind::SlottedMinHash;
const ORDERED_SKETCH_KIND: SketchKind = SketchKind::OrderedSlotsMinHash;

/// Which shingles a document's sketch holds when the shingle size depends on the length
/// (`ngram = "<L:2,3"`; see [`super::MinHash::pair_sets`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Scale {
    /// The long shingles only: no rule, or a document too long for any short partner.
    #[default]
    Long,
    /// The short shingles only (a document under the rule's bound).
    Short,
    /// Both: the long shingles in the sketch, and the short ones here (`None` when they
    /// are the same set, as on text without CJK characters). A document in the overlap can
    /// pair with a short document (on the short shingles) and a long one.
    Both(Option<Box<ShortPart>>),
}

/// The short-shingle signature and set of a document in the overlap.
#[derive(Debug, Clone, PartialEq)]
pub struct ShortPart {
    pub(super) signature: Box<[u32]>,
    pub(super) set: Box<[u32]>,
}

/// The sketch of [`MinHash`](super::MinHash): the signature for LSH, the shingle set for verification.
#[derive(Debug, Clone, PartialEq)]
pub struct MinHashSketch {
    pub(super) signature: Box<[u32]>,
    pub(super) set: Box<[u32]>,
    /// Per element of `set`, its weight (`weighting = idf`); empty when unweighted.
    pub(super) weights: Box<[f32]>,
    /// Bit `i` set when element `i` of `set` is common (`common_shingles = check`); empty
    /// when not checked.
    pub(super) common: Box<[u32]>,
    pub(super) identity: u128,
    /// Which shingles `signature` and `set` are, and the short part of a document in the
    /// overlap.
    pub(super) scale: Scale,
    /// The numbers of the text, hashed and sorted ([`crate::slots::number_slots`]); empty
    /// without the slot check.
    pub(super) slots: Box<[u32]>,
    /// A hash of the text's digits in text order, whatever separates them
    /// ([`crate::slots::digit_order`]); 0 when unknown (a sketch of kind 11) or without
    /// digits.
    pub(super) digit_order: u32,
    /// Where the text's numbers stand ([`crate::slots::number_places`]); 0s when unknown (a
    /// sketch written before them) or without digits.
    pub(super) places: NumberPlaces,
}

impl MinHashSketch {
    /// A sketch of the long scale without common marks or slots.
    pub(super) fn long(
        signature: Box<[u32]>,
        set: Box<[u32]>,
        weights: Box<[f32]>,
        identity: u128,
    ) -> MinHashSketch {
        MinHashSketch {
            signature,
            set,
            weights,
            common: Box::default(),
            identity,
            scale: Scale::Long,
            slots: Box::default(),
            digit_order: 0,
            places: NumberPlaces::default(),
        }
    }
    /// The verification set with its common marks.
    pub(super) fn marked(&self) -> crate::methods::shared::template::Marked<'_> {
        crate::methods::shared::template::Marked {
            set: &self.set,
            common: &self.common,
        }
    }
    /// The MinHash signature.
    pub fn signature(&self) -> &[u32] {
        &self.signature
    }
    /// The verification set: the top 32 bits of every shingle hash, sorted, without repeats.
    ///
    /// Half the memory of the 64-bit hashes. Two different shingles share their top 32 bits
    /// with probability 2^-32, so for two documents of `m` and `n` shingles the expected number
    /// of false matches is `m n / 2^32` (0.0002 for two 1,000-shingle documents): the measured
    /// similarity moves by a fraction of one shingle, far below any threshold's resolution.
    pub fn verification_set(&self) -> &[u32] {
        &self.set
    }
    /// The weight of each element of the verification set (`weighting = idf`); empty when
    /// unweighted.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }
}

impl Sketch for MinHashSketch {
    /// No shingle at all. (An exact-only sketch, of a document that is nothing but
    /// boilerplate, has neither shingles nor a signature.)
    fn is_empty(&self) -> bool {
        self.set.is_empty() && !self.signature.is_empty()
    }
    fn exact_only(&self) -> bool {
        self.set.is_empty() && self.signature.is_empty()
    }
    fn identity(&self) -> u128 {
        self.identity
    }
    fn encode(&self, out: &mut Vec<u8>) {
        match (self.slots.is_empty(), self.digit_order) {
            (true, _) => {}
            (false, 0) => {
                SketchEncoder::new(out, SLOTTED_SKETCH_KIND.byte()).u32s(&self.slots);
            }
            (false, order) => {
                SketchEncoder::new(out, ORDERED_SKETCH_KIND.byte())
                    .u32s(&self.slots)
                    .u32s(&crate::methods::shared::template::order_and_places(
                        order,
                        self.places,
                    ));
            }
        }
        if self.scale != Scale::Long {
            let mut encoder = SketchEncoder::new(out, SCALED_SKETCH_KIND.byte());
            encoder
                .u128(self.identity)
                .u32s(&self.signature)
                .u32s(&self.set)
                .u32s(&self.common);
            match &self.scale {
                Scale::Long | Scale::Short => encoder.u8(1),
                Scale::Both(None) => encoder.u8(2),
                Scale::Both(Some(part)) => encoder.u8(3).u32s(&part.signature).u32s(&part.set),
            };
            return;
        }
        let kind = if self.weights.is_empty() && self.common.is_empty() {
            SKETCH_KIND
        } else {
            WEIGHTED_SKETCH_KIND
        };
        let mut encoder = SketchEncoder::new(out, kind.byte());
        encoder
            .u128(self.identity)
            .u32s(&self.signature)
            .u32s(&self.set);
        if kind == WEIGHTED_SKETCH_KIND {
            let bits: Vec<u32> = self.weights.iter().map(|w| w.to_bits()).collect();
            encoder.u32s(&bits).u32s(&self.common);
        }
    }
    fn decode(bytes: &[u8]) -> Result<MinHashSketch> {
        if bytes.get(3) == Some(&SLOTTED_SKETCH_KIND.byte()) {
            return decode_slotted(bytes, SLOTTED_SKETCH_KIND);
        }
        if bytes.get(3) == Some(&ORDERED_SKETCH_KIND.byte()) {
            return decode_slotted(bytes, ORDERED_SKETCH_KIND);
        }
        if bytes.get(3) == Some(&SCALED_SKETCH_KIND.byte()) {
            return decode_scaled(bytes);
        }
        let weighted = bytes.get(3) == Some(&WEIGHTED_SKETCH_KIND.byte());
        let mut decoder = if weighted {
            SketchDecoder::new(
                bytes,
                WEIGHTED_SKETCH_KIND.byte(),
                WEIGHTED_SKETCH_KIND.name(),
            )?
        } else {
            SketchDecoder::new(bytes, SKETCH_KIND.byte(), SKETCH_KIND.name())?
        };
        let identity = decoder.u128()?;
        let signature = decoder.u32s()?.into_boxed_slice();
        let set = decoder.u32s()?.into_boxed_slice();
        let (weights, common): (Box<[f32]>, Box<[u32]>) = if weighted {
            let weights = decoder.u32s()?.into_iter().map(f32::from_bits).collect();
            (weights, decoder.u32s()?.into_boxed_slice())
        } else {
            (Box::default(), Box::default())
        };
        decoder.finish()?;
        check_sketch(&set, &weights, &common)?;
        Ok(MinHashSketch {
            signature,
            set,
            weights,
            common,
            identity,
            scale: Scale::Long,
            slots: Box::default(),
            digit_order: 0,
            places: NumberPlaces::default(),
        })
    }
}

/// Decodes a sketch of kind [`SLOTTED_SKETCH_KIND`] (its slots, then a sketch of another
/// kind) or [`ORDERED_SKETCH_KIND`] (its slots, the order of its digits, then a sketch of
/// another kind).
fn decode_slotted(bytes: &[u8], kind: SketchKind) -> Result<MinHashSketch> {
    let mut decoder = SketchDecoder::new(bytes, kind.byte(), kind.name())?;
    let slots = decoder.u32s()?;
    // A sketch written before the places has the digit order alone.
    let (digit_order, places) = match kind == ORDERED_SKETCH_KIND {
        false => (0, NumberPlaces::default()),
        true => match decoder.u32s()?.as_slice() {
            &[order] if order != 0 => (order, NumberPlaces::default()),
            &[order, layout, numbers] if order != 0 => (order, NumberPlaces { layout, numbers }),
            other => {
                return Err(Error::invalid(
                    "sketch",
                    format!(
                        "{} digit orders and places (expected one or three, the order not 0)",
                        other.len()
                    ),
                ))
            }
        },
    };
    let inner = decoder.rest();
    if slots.is_empty() || !slots.is_sorted() {
        return Err(Error::invalid(
            "sketch",
            format!("{} slots, unsorted or none", slots.len()),
        ));
    }
    if [SLOTTED_SKETCH_KIND, ORDERED_SKETCH_KIND]
        .iter()
        .any(|kind| inner.get(3) == Some(&kind.byte()))
    {
        return Err(Error::invalid("sketch", "slots twice".to_owned()));
    }
    let mut sketch = MinHashSketch::decode(inner)?;
    sketch.slots = slots.into_boxed_slice();
    sketch.digit_order = digit_order;
    sketch.places = places;
    Ok(sketch)
}

/// Decodes a sketch of kind [`SCALED_SKETCH_KIND`].
fn decode_scaled(bytes: &[u8]) -> Result<MinHashSketch> {
    let mut decoder =
        SketchDecoder::new(bytes, SCALED_SKETCH_KIND.byte(), SCALED_SKETCH_KIND.name())?;
    let identity = decoder.u128()?;
    let signature = decoder.u32s()?.into_boxed_slice();
    let set = decoder.u32s()?.into_boxed_slice();
    let common = decoder.u32s()?.into_boxed_slice();
    let scale = match decoder.u8()? {
        1 => Scale::Short,
        2 => Scale::Both(None),
        3 => {
            let signature = decoder.u32s()?.into_boxed_slice();
            let set = decoder.u32s()?.into_boxed_slice();
            check_sketch(&set, &[], &[])?;
            Scale::Both(Some(Box::new(ShortPart { signature, set })))
        }
        other => {
            return Err(Error::invalid(
                "sketch",
                format!("scale {other} (expected 1, 2 or 3)"),
            ))
        }
    };
    decoder.finish()?;
    check_sketch(&set, &[], &common)?;
    Ok(MinHashSketch {
        signature,
        set,
        weights: Box::default(),
        common,
        identity,
        scale,
        slots: Box::default(),
        digit_order: 0,
        places: NumberPlaces::default(),
    })
}

/// The checks of a decoded set, its weights and its common marks.
fn check_sketch(set: &[u32], weights: &[f32], common: &[u32]) -> Result<()> {
    if !common.is_empty() && common.len() != set.len().div_ceil(32) {
        return Err(Error::invalid(
            "sketch",
            format!(
                "{} common-bit words for {} elements",
                common.len(),
                set.len()
            ),
        ));
    }
    if !weights.is_empty() && weights.len() != set.len() {
        return Err(Error::invalid(
            "sketch",
            format!("{} weights for {} elements", weights.len(), set.len()),
        ));
    }
    if !set.windows(2).all(|w| w[0] < w[1]) {
        return Err(Error::invalid(
            "sketch",
            "verification set not strictly increasing",
        ));
    }
    Ok(())
}
