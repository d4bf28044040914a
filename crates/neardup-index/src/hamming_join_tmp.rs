//! TEMPORARY: replaced by the real `HammingJoin` of the hamming-index branch.

use crate::{BucketStats, CandidateGenerator, CandidateLimits, HammingIndex};

/// Pairs of documents within the smaller of their Hamming radii.
#[derive(Debug, Clone)]
pub struct HammingJoin {
    entries: Vec<(u32, u64, u32)>,
}

impl HammingJoin {
    /// `(rank, fingerprint, radius)` per document.
    pub fn new(entries: Vec<(u32, u64, u32)>) -> HammingJoin {
        HammingJoin { entries }
    }
}

impl CandidateGenerator for HammingJoin {
    fn candidate_pairs(self, _limits: CandidateLimits) -> (Vec<(u32, u32)>, BucketStats) {
        let mut radii: Vec<u32> = self.entries.iter().map(|e| e.2).collect();
        radii.sort_unstable();
        radii.dedup();
        let radius_of: hashbrown::HashMap<u32, u32> =
            self.entries.iter().map(|e| (e.0, e.2)).collect();
        let mut pairs = Vec::new();
        for &k in radii.iter().rev() {
            let members: Vec<(u64, u64)> = (self.entries.iter())
                .filter(|e| e.2 >= k)
                .map(|e| (u64::from(e.0), e.1))
                .collect();
            let index = HammingIndex::build(&members, k, Some(k + 1)).expect("radius");
            for (a, b, _) in index.self_join(k).expect("radius") {
                let (a, b) = (a as u32, b as u32);
                if radius_of[&a].min(radius_of[&b]) == k {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let stats = BucketStats {
            partner_limit: u64::MAX,
            ..BucketStats::default()
        };
        (pairs, stats)
    }
}

/// Every pair of 128-bit fingerprints within `k`: `(a, b, distance)` positions, `a < b`,
/// sorted. TEMPORARY brute-force-free version by halves.
///
/// # Errors
/// `k` above 127.
pub fn self_join_128(
    fingerprints: &[u128],
    k: u32,
) -> Result<Vec<(u32, u32, u32)>, crate::HammingError> {
    if k > 127 {
        return Err(crate::HammingError::Parameter(format!(
            "max_distance {k} (expected 0 to 127)"
        )));
    }
    let half = (k / 2).min(63);
    let mut pairs = Vec::new();
    for shift in [0u32, 64] {
        let entries: Vec<(u64, u64)> = (fingerprints.iter().enumerate())
            .map(|(i, &fp)| (i as u64, (fp >> shift) as u64))
            .collect();
        let index = HammingIndex::build(&entries, half, Some(half + 1))?;
        for (a, b, _) in index.self_join(half)? {
            let (a, b) = (a.min(b) as u32, a.max(b) as u32);
            let d = (fingerprints[a as usize] ^ fingerprints[b as usize]).count_ones();
            if d <= k {
                pairs.push((a, b, d));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    Ok(pairs)
}
