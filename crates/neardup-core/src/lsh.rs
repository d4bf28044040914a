//! LSH banding of MinHash signatures.
//!
//! A signature of `k` values is cut into `bands` bands of `rows` values (`bands * rows <= k`);
//! two documents are candidates when one band is equal, which happens with probability
//! `1 - (1 - s^rows)^bands` for Jaccard similarity `s` (the S-curve).
//! [`LshParams::optimal`] picks `bands x rows` minimising
//! `fp_weight * P(candidate | s < t) + fn_weight * P(missed | s >= t)`, both integrated over
//! `s`, as datasketch does; neardup weights misses higher by default because every candidate
//! is verified with the true measure, so a false positive costs time, never precision.

use crate::hash::hash64_seeded;
use crate::{Error, Result};

/// Bands and rows of an LSH table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LshParams {
    /// Number of bands.
    pub bands: usize,
    /// Signature values per band.
    pub rows: usize,
}

/// Default weight of false positives when choosing parameters.
pub const DEFAULT_FP_WEIGHT: f64 = 0.05;
/// Default weight of false negatives when choosing parameters.
pub const DEFAULT_FN_WEIGHT: f64 = 0.95;

impl LshParams {
    /// Checks explicit parameters against the signature length.
    ///
    /// # Errors
    /// When a value is zero or `bands * rows > permutations`.
    pub fn new(bands: usize, rows: usize, permutations: usize) -> Result<LshParams> {
        if bands == 0 || rows == 0 || bands * rows > permutations {
            return Err(Error::invalid(
                "bands",
                format!("{bands} x {rows} rows (both at least 1, bands x rows at most permutations = {permutations})"),
            ));
        }
        Ok(LshParams { bands, rows })
    }

    /// The parameters minimising the weighted false positive and false negative areas.
    ///
    /// # Errors
    /// When `threshold` is outside `(0, 1]`, a weight is negative or both are zero.
    pub fn optimal(
        threshold: f64,
        permutations: usize,
        fp_weight: f64,
        fn_weight: f64,
    ) -> Result<LshParams> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::invalid(
                "threshold",
                format!("{threshold} (expected {})", crate::error::THRESHOLD_RANGE),
            ));
        }
        if !(fp_weight >= 0.0 && fn_weight >= 0.0 && fp_weight + fn_weight > 0.0) {
            return Err(Error::invalid(
                "lsh weights",
                format!("{fp_weight}, {fn_weight}"),
            ));
        }
        let mut best = (
            f64::INFINITY,
            LshParams {
                bands: 1,
                rows: permutations.max(1),
            },
        );
        for bands in 1..=permutations {
            for rows in 1..=permutations / bands {
                let params = LshParams { bands, rows };
                let error = fp_weight * params.false_positive_area(threshold)
                    + fn_weight * params.false_negative_area(threshold);
                if error < best.0 {
                    best = (error, params);
                }
            }
        }
        Ok(best.1)
    }

    /// Probability that two documents of Jaccard similarity `s` share a band.
    pub fn candidate_probability(&self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }

    fn false_positive_area(&self, threshold: f64) -> f64 {
        integrate(|s| self.candidate_probability(s), 0.0, threshold)
    }

    fn false_negative_area(&self, threshold: f64) -> f64 {
        integrate(|s| 1.0 - self.candidate_probability(s), threshold, 1.0)
    }

    /// The bucket keys of a signature: one per band, seeded by the band index so that equal
    /// values in different bands never collide.
    pub fn band_keys(&self, signature: &[u32], keys: &mut Vec<u64>) {
        // The bytes of one band on the stack: no allocation per document (rows beyond
        // `STACK_ROWS` take a heap buffer).
        const STACK_ROWS: usize = 16;
        let mut stack = [0u8; STACK_ROWS * 4];
        let mut heap = Vec::new();
        let bytes: &mut [u8] = if self.rows <= STACK_ROWS {
            &mut stack[..self.rows * 4]
        } else {
            heap.resize(self.rows * 4, 0);
            &mut heap
        };
        keys.reserve(self.bands);
        for (band, chunk) in signature
            .chunks_exact(self.rows)
            .take(self.bands)
            .enumerate()
        {
            for (slot, value) in bytes.chunks_exact_mut(4).zip(chunk) {
                slot.copy_from_slice(&value.to_le_bytes());
            }
            keys.push(hash64_seeded(bytes, band as u64 + 1));
        }
    }
}

/// Midpoint rule with 200 steps: smooth integrands, plenty for choosing integers.
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const STEPS: usize = 200;
    let width = (b - a) / STEPS as f64;
    (0..STEPS)
        .map(|i| f(a + (i as f64 + 0.5) * width))
        .sum::<f64>()
        * width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimal_parameters_fit_the_signature_and_favour_recall() {
        for threshold in [0.3, 0.5, 0.7, 0.8, 0.9] {
            let p =
                LshParams::optimal(threshold, 128, DEFAULT_FP_WEIGHT, DEFAULT_FN_WEIGHT).unwrap();
            assert!(p.bands * p.rows <= 128);
            let margin = (threshold + 0.05).min(1.0);
            assert!(
                p.candidate_probability(margin) >= 0.98,
                "{threshold}: {p:?}"
            );
            assert!(
                p.candidate_probability(threshold - 0.3) < 0.3,
                "{threshold}: {p:?}"
            );
        }
    }

    #[test]
    fn explicit_parameters_are_checked() {
        assert!(LshParams::new(16, 8, 128).is_ok());
        let err = LshParams::new(20, 8, 128).unwrap_err();
        assert!(err.to_string().contains("20 x 8"), "{err}");
        assert!(LshParams::optimal(0.0, 128, 0.5, 0.5).is_err());
    }

    #[test]
    fn band_keys_differ_per_band() {
        let params = LshParams::new(4, 2, 8).unwrap();
        let mut keys = Vec::new();
        params.band_keys(&[1; 8], &mut keys);
        assert_eq!(keys.len(), 4);
        let mut unique = keys.clone();
        unique.dedup();
        assert_eq!(unique.len(), 4);
    }

    /// The keys are the seeded hash of each band's little-endian bytes, on the stack or
    /// not: persisted keys (the service's) stay valid.
    #[test]
    fn band_keys_hash_each_bands_bytes() {
        for rows in [1usize, 3, 16, 17, 40] {
            let params = LshParams::new(3, rows, 3 * rows).unwrap();
            let signature: Vec<u32> = (0..3 * rows as u32)
                .map(|v| v.wrapping_mul(2_654_435_761))
                .collect();
            let mut keys = Vec::new();
            params.band_keys(&signature, &mut keys);
            let expected: Vec<u64> = (signature.chunks(rows).enumerate())
                .map(|(band, chunk)| {
                    let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
                    hash64_seeded(&bytes, band as u64 + 1)
                })
                .collect();
            assert_eq!(keys, expected, "rows {rows}");
        }
    }
}
