//! SimHash fingerprints (Charikar, "Similarity estimation techniques from rounding algorithms",
//! STOC 2002; the 64-bit fingerprint of web-scale near-duplicate detection): every weighted
//! feature votes on each bit with its weight, `+w` where the feature's hash has a 1 and `-w`
//! where it has a 0; a bit of the fingerprint is 1 where the sum is positive (0 on a tie or a
//! negative sum). Similar feature sets give fingerprints at a small Hamming distance.
//!
//! Features are `(hash, weight)`: the 64-bit hashes of [`crate::tokenize`] (xxh3 based,
//! pinned across releases) and weights such as term frequencies ([`term_frequencies`]) or
//! TF-IDF. The 128-bit fingerprint uses the feature hash for its low half and
//! [`mix64`]`(hash ^ `[`HIGH_HALF_SEED`]`)` for its high half.
//!
//! Fingerprints are meant to be stored: for the same features and weights they are the same
//! in every release (a test pins known values). Weights are summed in `f64` in feature order,
//! so give features in a fixed order (sorted by hash, as [`term_frequencies`] returns them).

use crate::hash::mix64;

/// The seed mixed into a feature hash for the high half of a 128-bit fingerprint.
pub const HIGH_HALF_SEED: u64 = 0x5349_4d48_4153_4831; // "SIMHASH1"

/// The 64-bit SimHash of weighted features. No feature (or all weights 0) gives 0.
pub fn simhash64(features: &[(u64, f64)]) -> u64 {
    let mut votes = [0f64; 64];
    for &(hash, weight) in features {
        vote(&mut votes, hash, weight);
    }
    fingerprint(&votes)
}

/// The 128-bit SimHash of weighted features: low half as [`simhash64`], high half from the
/// remixed hashes.
pub fn simhash128(features: &[(u64, f64)]) -> u128 {
    let mut high = [0f64; 64];
    for &(hash, weight) in features {
        vote(&mut high, mix64(hash ^ HIGH_HALF_SEED), weight);
    }
    (u128::from(fingerprint(&high)) << 64) | u128::from(simhash64(features))
}

fn vote(votes: &mut [f64; 64], hash: u64, weight: f64) {
    for (bit, vote) in votes.iter_mut().enumerate() {
        if (hash >> bit) & 1 == 1 {
            *vote += weight;
        } else {
            *vote -= weight;
        }
    }
}

fn fingerprint(votes: &[f64; 64]) -> u64 {
    (votes.iter().enumerate())
        .filter(|(_, &vote)| vote > 0.0)
        .fold(0u64, |bits, (bit, _)| bits | (1u64 << bit))
}

/// Term frequencies of token hashes: `(hash, count)`, sorted by hash.
pub fn term_frequencies(hashes: &[u64]) -> Vec<(u64, f64)> {
    let mut sorted = hashes.to_vec();
    sorted.sort_unstable();
    (sorted.chunk_by(|a, b| a == b))
        .map(|run| (run[0], run.len() as f64))
        .collect()
}

/// The Hamming distance of two 64-bit fingerprints.
pub fn distance64(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The Hamming distance of two 128-bit fingerprints.
pub fn distance128(a: u128, b: u128) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Normalizer;
    use crate::tokenize::{ShinglerBuilder, Tokenizer};

    fn words(text: &str) -> Vec<(u64, f64)> {
        let shingler = ShinglerBuilder::new()
            .tokenizer(Tokenizer::Token)
            .ngram(1)
            .build()
            .unwrap();
        term_frequencies(&shingler.token_hashes(&Normalizer::default().normalize(text)))
    }

    #[test]
    fn fingerprints_are_pinned() {
        // Stored fingerprints outlive releases: these values must never change.
        let features = words("国务院总理今天在北京主持召开常务会议，部署进一步扩大内需的措施。");
        assert_eq!(format!("{:016x}", simhash64(&features)), PINNED_64);
        assert_eq!(format!("{:032x}", simhash128(&features)), PINNED_128);
        assert_eq!(simhash64(&[]), 0);
        assert_eq!(simhash64(&[(0xF0, 1.0)]), 0xF0);
        assert_eq!(simhash64(&[(0b01, 1.0), (0b10, 2.0)]), 0b10);
    }

    const PINNED_64: &str = "6c3cb111fb07056e";
    const PINNED_128: &str = "7219c0f2d05030906c3cb111fb07056e";

    #[test]
    fn light_edits_move_few_bits_and_other_texts_many() {
        let base = "The central bank raised its benchmark interest rate by a quarter point on \
                    Tuesday, citing persistent inflation and a strong labour market.";
        let edited = "The central bank raised its benchmark interest rate by a quarter point on \
                      Wednesday, citing persistent inflation and a strong labor market.";
        let other = "Heavy rain flooded several villages in the south of the province overnight, \
                     and rescue teams evacuated hundreds of residents by boat.";
        let (a, b, c) = (
            simhash64(&words(base)),
            simhash64(&words(edited)),
            simhash64(&words(other)),
        );
        assert!(
            distance64(a, b) < distance64(a, c),
            "{} vs {}",
            distance64(a, b),
            distance64(a, c)
        );
        assert!(distance64(a, b) <= 12, "{}", distance64(a, b));
        assert_eq!(simhash64(&words(base)), a, "deterministic");
        assert_eq!(
            simhash128(&words(base)) as u64,
            a,
            "the low half is the 64-bit fingerprint"
        );
    }

    #[test]
    fn term_frequencies_count_and_sort() {
        assert_eq!(term_frequencies(&[5, 3, 5, 5]), vec![(3, 1.0), (5, 3.0)]);
        assert!(term_frequencies(&[]).is_empty());
    }
}
