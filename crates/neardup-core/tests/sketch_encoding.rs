//! The sketch encoding of every method: round trips on any text, and no panic on any bytes
//! (the service reads sketches from disk, Spark from the network).

use neardup_core::methods::exact::{Exact, ExactSketch};
use neardup_core::methods::minhash::{MinHashBuilder, MinHashSketch};
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
}
