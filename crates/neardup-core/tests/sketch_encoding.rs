//! The sketch encoding of every method: round trips on any text, and no panic on any bytes
//! (the service reads sketches from disk, Spark from the network).

use neardup_core::methods::exact::{Exact, ExactSketch};
use neardup_core::methods::minhash::{MinHashBuilder, MinHashSketch, Slots};
use neardup_core::minhash::SketchScheme;
use neardup_core::{Method, Sketch};
use proptest::prelude::*;

fn round_trip<M: Method>(method: &M, text: &str) -> Result<(), TestCaseError>
where
    M::Sketch: PartialEq + std::fmt::Debug,
{
    let sketch = method.sketch(text);
    let mut bytes = Vec::new();
    sketch.encode(&mut bytes);
    let decoded = M::Sketch::decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&decoded, &sketch);
    prop_assert_eq!(decoded.identity(), sketch.identity());
    // Two encodings of equal sketches are equal bytes: safe to compare or hash stored sketches.
    let mut again = Vec::new();
    decoded.encode(&mut again);
    prop_assert_eq!(again, bytes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_sketch_round_trips(text in "\\PC{0,200}", oph in any::<bool>(), permutations in 1usize..64) {
        let scheme = if oph { SketchScheme::OnePermutation } else { SketchScheme::Classic };
        let minhash = MinHashBuilder::new().permutations(permutations).scheme(scheme).build().unwrap();
        round_trip(&minhash, &text)?;
        // With the slot check (kind 11 around the others when the text has numbers), and
        // shingle sizes by length.
        let slotted = MinHashBuilder::new()
            .permutations(permutations)
            .slots(Slots::Numbers, 0.2)
            .ngram_rule(&"<24:2,3".parse().unwrap())
            .unwrap()
            .build()
            .unwrap();
        round_trip(&slotted, &text)?;
        round_trip(&slotted, &format!("{text} 2024 年 {permutations} 号 638121"))?;
        round_trip(&Exact::default(), &text)?;
    }

    #[test]
    fn any_bytes_decode_to_a_sketch_or_an_error(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let errors = [MinHashSketch::decode(&bytes).err(), ExactSketch::decode(&bytes).err()];
        for error in errors.into_iter().flatten() {
            prop_assert_eq!(error.parameter(), "sketch");
        }
        // With a valid header the rest is still checked.
        let mut headed = b"ND\x01\x02".to_vec();
        headed.extend_from_slice(&bytes);
        let _ = MinHashSketch::decode(&headed);
        for kind in [b"ND\x01\x0b", b"ND\x01\x0c"] {
            let mut slotted = kind.to_vec();
            slotted.extend_from_slice(&bytes);
            let _ = MinHashSketch::decode(&slotted);
        }
    }
}

#[test]
fn the_format_of_a_sketch_is_pinned() {
    // Stored sketches outlive the binary that wrote them: this layout must not change within
    // version 1 ("ND", version, kind, then little-endian fields).
    let sketch = Exact::default().sketch("Hello, World!");
    let mut bytes = Vec::new();
    sketch.encode(&mut bytes);
    assert_eq!(&bytes[..4], b"ND\x01\x01");
    assert_eq!(bytes.len(), 4 + 16 + 1);
    let minhash = MinHashBuilder::new().permutations(2).build().unwrap();
    let mut bytes = Vec::new();
    minhash.sketch("abcdefg").encode(&mut bytes);
    assert_eq!(&bytes[..4], b"ND\x01\x02");
    // identity, then 2 signature values, then the verification set (3 shingles of 5).
    assert_eq!(bytes.len(), 4 + 16 + (4 + 2 * 4) + (4 + 3 * 4));
    // With slots: kind 12, the numbers (one short, one long counted three times), the hash
    // of the digits in order, then the sketch of kind 2 as above.
    let slotted = MinHashBuilder::new()
        .permutations(2)
        .slots(Slots::Numbers, 0.2)
        .build()
        .unwrap();
    let mut with_numbers = Vec::new();
    slotted.sketch("abcdefg 7 123456").encode(&mut with_numbers);
    assert_eq!(&with_numbers[..4], b"ND\x01\x0c");
    assert_eq!(&with_numbers[4..8], &4u32.to_le_bytes());
    assert_eq!(&with_numbers[24..28], &1u32.to_le_bytes());
    assert_eq!(&with_numbers[32..36], b"ND\x01\x02");
    // Kind 11 (slots without their order, as written before kind 12) still decodes.
    let mut older = b"ND\x01\x0b".to_vec();
    older.extend_from_slice(&with_numbers[4..24]);
    older.extend_from_slice(&with_numbers[32..]);
    let decoded = MinHashSketch::decode(&older).unwrap();
    let mut again = Vec::new();
    decoded.encode(&mut again);
    assert_eq!(again, older);
    // Numbers in plain places (none apart from another only by spaces): the digit order,
    // the layout and the numbers; a text whose numbers are grouped (above) has the order
    // alone, as written before the places.
    let mut placed = Vec::new();
    slotted.sketch("abcdefg 7 x 123456").encode(&mut placed);
    assert_eq!(&placed[..4], b"ND\x01\x0c");
    assert_eq!(&placed[24..28], &3u32.to_le_bytes());
    assert_eq!(&placed[40..44], b"ND\x01\x02");
    // A text without numbers is encoded as before.
    let mut without = Vec::new();
    slotted.sketch("abcdefg").encode(&mut without);
    assert_eq!(without, bytes);
}
