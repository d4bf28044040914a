//! The kind byte of every encoded sketch, in one place.
//!
//! An encoded sketch starts with `"ND"`, the encoding version and a one-byte kind (see
//! [`crate::method::SketchEncoder`]). The kinds are persisted (service stores, checkpoints,
//! Spark shuffles), so a value is never reused or renumbered: a new sketch type takes a new
//! byte at the end of [`SketchKind::ALL`].

/// What an encoded sketch is; its byte is [`SketchKind::byte`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SketchKind {
    /// `exact`: the hash of the normalised text.
    Exact = 1,
    /// `minhash` and `supershingle`: a MinHash signature and its shingle set.
    MinHash = 2,
    /// `simhash`: a fingerprint and what its verification reads.
    SimHash = 3,
    /// `minhash` with `weighting = idf`: the MinHash fields, then the weights.
    WeightedMinHash = 4,
    /// `join` and `ngram`: characters and shingle hashes of a short text.
    ShortText = 5,
    /// `imatch`: lexicon signatures.
    IMatch = 6,
    /// `topn`: the top-N word fingerprint.
    TopN = 7,
    /// `segments`: the segment signatures.
    Segments = 8,
    /// `sentences`: the sentence signatures.
    Sentences = 9,
    /// `minhash` with shingle sizes by length (`ngram = "<L:2,3"`): the sketch, its scale
    /// and the short-shingle part of a document in the overlap.
    ScaledMinHash = 10,
    /// `minhash` with the slot check: the numbers of the text, then the sketch in one of
    /// the other minhash kinds.
    SlottedMinHash = 11,
    /// `minhash` with the slot check, the order of its digits known: the numbers, a hash of
    /// the digits in text order, then the sketch in one of kinds 2, 4 and 10.
    OrderedSlotsMinHash = 12,
    /// `simhash` with the template check: its template set and its common marks, the numbers of
    /// the text, a hash
    /// of its digits in text order (0 without digits), then the sketch of kind 3.
    TemplatedSimHash = 13,
    /// `join` and `ngram` with the template check: the same template part as kind 13, then
    /// the sketch of kind 5.
    TemplatedShortText = 14,
    /// `imatch`, `topn`, `segments` and `sentences` with the template check: the same
    /// template part as kind 13, then the sketch of the method's own kind (6 to 9).
    TemplatedClassic = 15,
}

impl SketchKind {
    /// Every kind, in byte order.
    pub const ALL: [SketchKind; 15] = [
        SketchKind::Exact,
        SketchKind::MinHash,
        SketchKind::SimHash,
        SketchKind::WeightedMinHash,
        SketchKind::ShortText,
        SketchKind::IMatch,
        SketchKind::TopN,
        SketchKind::Segments,
        SketchKind::Sentences,
        SketchKind::ScaledMinHash,
        SketchKind::SlottedMinHash,
        SketchKind::OrderedSlotsMinHash,
        SketchKind::TemplatedSimHash,
        SketchKind::TemplatedShortText,
        SketchKind::TemplatedClassic,
    ];

    /// The byte written after the version.
    pub const fn byte(self) -> u8 {
        self as u8
    }

    /// The kind of `byte`, if it is one.
    pub fn from_byte(byte: u8) -> Option<SketchKind> {
        SketchKind::ALL.into_iter().find(|kind| kind.byte() == byte)
    }

    /// What decoding errors call a sketch of this kind.
    pub fn name(self) -> &'static str {
        match self {
            SketchKind::Exact => "exact",
            SketchKind::MinHash => "minhash",
            SketchKind::SimHash => "simhash",
            SketchKind::WeightedMinHash => "weighted minhash",
            SketchKind::ShortText => "short-text",
            SketchKind::IMatch => "imatch",
            SketchKind::TopN => "topn",
            SketchKind::Segments => "segments",
            SketchKind::Sentences => "sentences",
            SketchKind::ScaledMinHash => "minhash by length",
            SketchKind::SlottedMinHash => "minhash with slots",
            SketchKind::OrderedSlotsMinHash => "minhash with ordered slots",
            SketchKind::TemplatedSimHash => "simhash with a template set",
            SketchKind::TemplatedShortText => "short-text with a template set",
            SketchKind::TemplatedClassic => "classic with a template set",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_unique_and_round_trip() {
        for (i, kind) in SketchKind::ALL.into_iter().enumerate() {
            assert_eq!(SketchKind::from_byte(kind.byte()), Some(kind));
            assert!(
                SketchKind::ALL[i + 1..]
                    .iter()
                    .all(|other| other.byte() != kind.byte()),
                "{kind:?}"
            );
            assert!(
                SketchKind::ALL[i + 1..]
                    .iter()
                    .all(|other| other.name() != kind.name()),
                "{kind:?}"
            );
        }
        assert_eq!(SketchKind::from_byte(0), None);
        assert_eq!(SketchKind::from_byte(16), None);
    }

    #[test]
    fn persisted_bytes_never_change() {
        // Service stores and checkpoints hold these bytes: pinned, never renumbered.
        let pinned: Vec<(SketchKind, u8)> =
            SketchKind::ALL.iter().map(|k| (*k, k.byte())).collect();
        assert_eq!(
            pinned,
            vec![
                (SketchKind::Exact, 1),
                (SketchKind::MinHash, 2),
                (SketchKind::SimHash, 3),
                (SketchKind::WeightedMinHash, 4),
                (SketchKind::ShortText, 5),
                (SketchKind::IMatch, 6),
                (SketchKind::TopN, 7),
                (SketchKind::Segments, 8),
                (SketchKind::Sentences, 9),
                (SketchKind::ScaledMinHash, 10),
                (SketchKind::SlottedMinHash, 11),
                (SketchKind::OrderedSlotsMinHash, 12),
                (SketchKind::TemplatedSimHash, 13),
                (SketchKind::TemplatedShortText, 14),
                (SketchKind::TemplatedClassic, 15),
            ]
        );
    }
}
