//! MinHash signatures over shingle hashes.
//!
//! Two schemes, chosen by [`SketchScheme`]:
//!
//! - [`SketchScheme::Classic`]: `k` independent permutations `h_i(x) = a_i * x + b_i`
//!   (mod 2^32, `a_i` odd, so each is a bijection) applied to the 32-bit fold of every shingle
//!   hash, keeping the minimum per permutation. The inner loop is a branch-free
//!   multiply-add-min over a contiguous `[u32; k]`, which the compiler vectorises; on x86-64
//!   an AVX2 copy of the loop is selected at run time.
//! - [`SketchScheme::OnePermutation`]: one-permutation hashing with optimal densification
//!   (Shrivastava 2017): each shingle hash is routed to one of `k` bins and only the bin
//!   minimum is kept, `O(1)` per shingle instead of `O(k)`; empty bins borrow the value of a
//!   pseudo-randomly chosen non-empty bin. Its estimate is as good as classic MinHash for
//!   sets much larger than `k` and noisier for sets smaller than `k`.
//!
//! Parameters are derived from a seed with SplitMix64, so signatures are stable across runs,
//! machines and releases (and may be persisted).

use crate::hash::mix64;
use crate::{Error, Result};

/// How a signature is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SketchScheme {
    /// `k` independent permutations (default).
    #[default]
    Classic,
    /// One-permutation hashing with optimal densification.
    OnePermutation,
}

crate::named_choices!(SketchScheme as "sketch" {
    Classic => "classic",
    OnePermutation => "oph",
});

/// Computes MinHash signatures of a fixed length.
#[derive(Debug, Clone)]
pub struct MinHasher {
    scheme: SketchScheme,
    multipliers: Vec<u32>,
    offsets: Vec<u32>,
    seed: u64,
}

impl MinHasher {
    /// A hasher with `permutations` values per signature.
    ///
    /// # Errors
    /// When `permutations` is 0 or above 4096.
    pub fn new(permutations: usize, scheme: SketchScheme, seed: u64) -> Result<MinHasher> {
        if !(1..=4096).contains(&permutations) {
            return Err(Error::invalid(
                "permutations",
                format!("{permutations} (expected 1 to 4096)"),
            ));
        }
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        let multipliers = (0..permutations).map(|_| (next() as u32) | 1).collect();
        let offsets = (0..permutations).map(|_| next() as u32).collect();
        Ok(MinHasher {
            scheme,
            multipliers,
            offsets,
            seed,
        })
    }

    /// Values per signature.
    pub fn permutations(&self) -> usize {
        self.multipliers.len()
    }

    /// The signature scheme.
    pub fn scheme(&self) -> SketchScheme {
        self.scheme
    }

    /// The seed of the hash family.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The signature of a set of shingle hashes. An empty set gives all `u32::MAX`.
    pub fn signature(&self, shingles: &[u64]) -> Vec<u32> {
        match self.scheme {
            SketchScheme::Classic => self.classic(shingles),
            SketchScheme::OnePermutation => self.one_permutation(shingles),
        }
    }

    fn classic(&self, shingles: &[u64]) -> Vec<u32> {
        let mut signature = vec![u32::MAX; self.permutations()];
        let (multipliers, offsets) = (&self.multipliers, &self.offsets);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, checked just above.
            unsafe { classic_avx512(&mut signature, multipliers, offsets, shingles) };
            return signature;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { classic_avx2(&mut signature, multipliers, offsets, shingles) };
            return signature;
        }
        classic_blocked::<32>(&mut signature, multipliers, offsets, shingles);
        signature
    }

    fn one_permutation(&self, shingles: &[u64]) -> Vec<u32> {
        let bins = self.permutations();
        let mut signature = vec![u32::MAX; bins];
        let mut filled = vec![false; bins];
        for &shingle in shingles {
            let h = mix64(shingle ^ self.seed);
            let bin = (((h >> 32) * bins as u64) >> 32) as usize;
            let value = h as u32;
            filled[bin] = true;
            signature[bin] = signature[bin].min(value);
        }
        if filled.iter().all(|&f| f) || shingles.is_empty() {
            return signature;
        }
        densify(&mut signature, &filled, self.seed);
        signature
    }
}

/// Optimal densification: an empty bin copies the value of the first non-empty bin hit by a
/// pseudo-random probe sequence seeded by the bin index (the same for every document).
fn densify(signature: &mut [u32], filled: &[bool], seed: u64) {
    let bins = signature.len() as u64;
    for bin in 0..signature.len() {
        if filled[bin] {
            continue;
        }
        let mut attempt = 0u64;
        loop {
            let probe = mix64(seed ^ ((bin as u64) << 20) ^ attempt);
            let source = (((probe >> 32) * bins) >> 32) as usize;
            if filled[source] {
                signature[bin] = signature[source];
                break;
            }
            attempt += 1;
        }
    }
}

#[inline(always)]
fn fold(shingle: u64) -> u32 {
    (shingle ^ (shingle >> 32)) as u32
}

#[inline(always)]
fn classic_kernel(signature: &mut [u32], multipliers: &[u32], offsets: &[u32], shingles: &[u64]) {
    for &shingle in shingles {
        let x = fold(shingle);
        for ((slot, &a), &b) in signature.iter_mut().zip(multipliers).zip(offsets) {
            *slot = (*slot).min(a.wrapping_mul(x).wrapping_add(b));
        }
    }
}

/// [`classic_kernel`] `W` permutations at a time: their minima, multipliers and offsets stay
/// in registers while every shingle goes by, instead of the whole signature being loaded
/// and stored again for each shingle (2 to 4 times faster; the same minima).
#[inline(always)]
fn classic_blocked<const W: usize>(
    signature: &mut [u32],
    multipliers: &[u32],
    offsets: &[u32],
    shingles: &[u64],
) {
    let mut blocks = signature.chunks_exact_mut(W);
    let mut at = 0;
    for block in &mut blocks {
        let mut minima = [0u32; W];
        minima.copy_from_slice(block);
        let mut a = [0u32; W];
        a.copy_from_slice(&multipliers[at..at + W]);
        let mut b = [0u32; W];
        b.copy_from_slice(&offsets[at..at + W]);
        for &shingle in shingles {
            let x = fold(shingle);
            for i in 0..W {
                minima[i] = minima[i].min(a[i].wrapping_mul(x).wrapping_add(b[i]));
            }
        }
        block.copy_from_slice(&minima);
        at += W;
    }
    let rest = blocks.into_remainder();
    let end = at + rest.len();
    classic_kernel(rest, &multipliers[at..end], &offsets[at..end], shingles);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classic_avx2(
    signature: &mut [u32],
    multipliers: &[u32],
    offsets: &[u32],
    shingles: &[u64],
) {
    classic_blocked::<32>(signature, multipliers, offsets, shingles);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn classic_avx512(
    signature: &mut [u32],
    multipliers: &[u32],
    offsets: &[u32],
    shingles: &[u64],
) {
    classic_blocked::<64>(signature, multipliers, offsets, shingles);
}

/// The chance, for a pair whose Jaccard similarity is exactly the threshold, that its
/// classic signatures agree in fewer than [`agreement_floor`] places: a pair at or above the
/// threshold is refused by the signature check with at most this probability (about one
/// in a thousand runs of a billion such pairs; pairs above the threshold far less).
pub const MISS_RISK: f64 = 1e-9;

/// The fewest places in which two classic signatures of `permutations` values must agree
/// for a pair of Jaccard similarity `jaccard` or more to be kept with probability at least
/// `1 - risk`: the largest `k` with `P(Binomial(permutations, jaccard) < k) <= risk`. Each
/// place agrees with probability equal to the Jaccard similarity of the two shingle sets, and
/// places are independent permutations, so the count of agreements is binomial; a higher
/// similarity only moves it up.
///
/// ```
/// use neardup_core::minhash::agreement_floor;
/// assert_eq!(agreement_floor(128, 0.4, 1e-9), 20);
/// assert_eq!(agreement_floor(128, 1.0, 1e-9), 128);
/// ```
pub fn agreement_floor(permutations: usize, jaccard: f64, risk: f64) -> usize {
    let n = permutations as f64;
    if jaccard >= 1.0 {
        return permutations;
    }
    if jaccard <= 0.0 || permutations == 0 {
        return 0;
    }
    let (ln_p, ln_q) = (jaccard.ln(), (1.0 - jaccard).ln());
    // ln C(n, k), built up one k at a time, and the lower tail summed in linear space (its
    // terms are tiny only where they no longer matter).
    let mut ln_choose = 0.0f64;
    let mut tail = 0.0f64;
    for k in 0..permutations {
        let kf = k as f64;
        let term = (ln_choose + kf * ln_p + (n - kf) * ln_q).exp();
        if tail + term > risk {
            return k;
        }
        tail += term;
        ln_choose += ((n - kf) / (kf + 1.0)).ln();
    }
    permutations
}

/// The number of places in which two signatures agree.
#[inline]
pub fn agreements(a: &[u32], b: &[u32]) -> usize {
    // A sum of 0/1 (not a filtered count) so that the loop vectorises.
    a.iter().zip(b).map(|(x, y)| u32::from(x == y)).sum::<u32>() as usize
}

/// One byte per place of a signature, each folding the place's four bytes: equal places
/// give equal bytes, so two signatures' bytes agree in at least as many places as the
/// signatures do ([`agreements`] of the bytes never undercounts). A pre-check kept at a
/// quarter of the signature's size.
pub fn fold_bytes(signature: &[u32], out: &mut [u8]) {
    for (slot, &value) in out.iter_mut().zip(signature) {
        let [a, b, c, d] = value.to_le_bytes();
        *slot = a ^ b ^ c ^ d;
    }
}

/// The number of places in which two byte signatures ([`fold_bytes`]) agree.
#[inline]
pub fn byte_agreements(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).map(|(x, y)| u32::from(x == y)).sum::<u32>() as usize
}

/// Fraction of equal positions: the MinHash estimate of Jaccard similarity.
pub fn estimate_jaccard(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    agreements(a, b) as f64 / a.len() as f64
}

/// A weighted MinHash signature by improved consistent weighted sampling (Ioffe, "Improved
/// consistent sampling, weighted minhash and L1 sketching", ICDM 2010): for every one of
/// `permutations` hash functions, each element `i` of weight `w_i > 0` draws `r, c ~
/// Gamma(2, 1)` and `beta ~ U(0, 1)` from its hash, takes `t = floor(ln w_i / r + beta)`
/// and `ln a = ln c - r (t - beta + 1)`; the element of least `a`, with its `t`, is the
/// sample, hashed to 32 bits. Two documents' samples agree with probability their weighted
/// Jaccard similarity. Elements of weight 0 or less are skipped; an empty input gives
/// `u32::MAX` everywhere, like [`MinHasher::signature`].
///
/// The random draws depend on the element hash, the function index and `seed` only, so the
/// signature is stable across runs and machines.
pub fn icws_signature(hashes: &[u64], weights: &[f32], permutations: usize, seed: u64) -> Vec<u32> {
    let mut signature = vec![u32::MAX; permutations];
    let mut best = vec![f64::INFINITY; permutations];
    for (&hash, &weight) in hashes.iter().zip(weights) {
        if weight <= 0.0 || !weight.is_finite() {
            continue;
        }
        let ln_weight = f64::from(weight).ln();
        let base = crate::hash::mix64(hash ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for (j, (slot, best)) in signature.iter_mut().zip(best.iter_mut()).enumerate() {
            let mut state = base ^ (j as u64 + 1).wrapping_mul(0xd6e8_feb8_6659_fd93);
            let mut uniform = || {
                state = crate::hash::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
                // In (0, 1): 53 random bits, never 0.
                ((state >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
            };
            let r = -(uniform() * uniform()).ln();
            let c = -(uniform() * uniform()).ln();
            let beta = uniform();
            let t = (ln_weight / r + beta).floor();
            let ln_a = c.ln() - r * (t - beta + 1.0);
            if ln_a < *best {
                *best = ln_a;
                let sample = crate::hash::mix64(
                    hash ^ (t as i64 as u64).wrapping_mul(0xff51_afd7_ed55_8ccd),
                );
                *slot = (sample >> 32) as u32;
            }
        }
    }
    signature
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::jaccard;

    fn set(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| mix64(i + 17)).collect()
    }

    fn mean_error(scheme: SketchScheme, size: u64) -> f64 {
        let hasher = MinHasher::new(128, scheme, 1).unwrap();
        let mut total = 0.0;
        let trials = 60;
        for t in 0..trials {
            let shift = size * (t % 10) / 10;
            let a = set(t * 10_000..t * 10_000 + size);
            let b = set(t * 10_000 + shift..t * 10_000 + shift + size);
            let mut sorted_a = a.clone();
            sorted_a.sort_unstable();
            let mut sorted_b = b.clone();
            sorted_b.sort_unstable();
            let exact = jaccard(&sorted_a, &sorted_b);
            total += (estimate_jaccard(&hasher.signature(&a), &hasher.signature(&b)) - exact).abs();
        }
        total / trials as f64
    }

    #[test]
    fn estimates_are_close_to_exact_jaccard() {
        // Standard error at k = 128 is at most 0.044; the mean absolute error is below it.
        for scheme in [SketchScheme::Classic, SketchScheme::OnePermutation] {
            let error = mean_error(scheme, 1000);
            assert!(error < 0.045, "{scheme:?}: {error}");
        }
        assert!(mean_error(SketchScheme::Classic, 40) < 0.045);
    }

    #[test]
    fn identical_sets_give_identical_signatures() {
        for scheme in [SketchScheme::Classic, SketchScheme::OnePermutation] {
            let hasher = MinHasher::new(64, scheme, 7).unwrap();
            let mut reversed = set(0..30);
            let forward = reversed.clone();
            reversed.reverse();
            assert_eq!(hasher.signature(&forward), hasher.signature(&reversed));
        }
    }

    #[test]
    fn icws_collides_at_the_weighted_jaccard() {
        // A: elements 0..100 of weight 1 and 100..150 of weight 3; B: 50..150 of weight 3.
        // Weighted Jaccard: shared 100..150 (weight 3 x 50 = 150) over union
        // (100 + 150 = 250): 0.6.
        let a: Vec<u64> = (0..150).map(crate::hash::mix64).collect();
        let a_weights: Vec<f32> = (0..150).map(|i| if i < 100 { 1.0 } else { 3.0 }).collect();
        let b: Vec<u64> = (50..150).map(crate::hash::mix64).collect();
        let b_weights: Vec<f32> = (50..150).map(|i| if i < 100 { 0.0 } else { 3.0 }).collect();
        let k = 2000;
        let sa = icws_signature(&a, &a_weights, k, 7);
        let sb = icws_signature(&b, &b_weights, k, 7);
        let agree = sa.iter().zip(&sb).filter(|(x, y)| x == y).count() as f64 / k as f64;
        assert!((agree - 0.6).abs() < 0.05, "{agree}");
        assert_eq!(sa, icws_signature(&a, &a_weights, k, 7));
        assert_eq!(icws_signature(&[], &[], 3, 1), [u32::MAX; 3]);
    }

    #[test]
    fn signatures_are_stable_across_releases() {
        // Pinned values: a change here breaks persisted signatures and must be versioned.
        let hasher = MinHasher::new(4, SketchScheme::Classic, 1).unwrap();
        let signature = hasher.signature(&[1, 2, 3]);
        assert_eq!(signature, hasher.signature(&[3, 2, 1]));
        assert_eq!(signature, [1510216314, 1530059598, 3368893634, 6966912]);
    }

    #[test]
    fn portable_and_vectorised_kernels_agree() {
        // Every block width and a remainder (a width that does not divide the count).
        for permutations in [1, 7, 32, 100, 128, 200] {
            let hasher = MinHasher::new(permutations, SketchScheme::Classic, 3).unwrap();
            let shingles = set(0..500);
            let (a, b) = (&hasher.multipliers, &hasher.offsets);
            let mut plain = vec![u32::MAX; permutations];
            classic_kernel(&mut plain, a, b, &shingles);
            let mut blocked = vec![u32::MAX; permutations];
            classic_blocked::<32>(&mut blocked, a, b, &shingles);
            assert_eq!(plain, blocked, "{permutations}");
            let mut blocked = vec![u32::MAX; permutations];
            classic_blocked::<64>(&mut blocked, a, b, &shingles);
            assert_eq!(plain, blocked, "{permutations}");
            assert_eq!(plain, hasher.signature(&shingles), "{permutations}");
        }
    }

    /// Two sets of `size` and `size` shingles sharing `shared`, from `seed`.
    fn planted_pair(size: u64, shared: u64, seed: u64) -> (Vec<u64>, Vec<u64>) {
        let hash = |i: u64| mix64(i ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let a: Vec<u64> = (0..size).map(hash).collect();
        let b: Vec<u64> = (0..shared)
            .chain(size..2 * size - shared)
            .map(hash)
            .collect();
        (a, b)
    }

    #[test]
    fn pairs_at_the_threshold_pass_the_signature_check() {
        // The signature check's margin against exact Jaccard: 2,000 pairs of planted
        // similarity at or just above 0.4 (sizes from 10 to 2,000 shingles) all agree in at
        // least the floor's places, and agreement estimates the similarity without bias.
        let hasher = MinHasher::new(128, SketchScheme::Classic, 1).unwrap();
        let floor = agreement_floor(128, 0.4, MISS_RISK);
        assert_eq!(floor, 20);
        let (mut estimated, mut exact) = (0.0, 0.0);
        for seed in 0..2000u64 {
            let size = 10 + (seed * 7919) % 1990;
            // shared / (2 size - shared) >= 0.4 <=> shared >= 0.8 size / 1.4.
            let shared = (size * 8).div_ceil(14) + seed % 3;
            let shared = shared.min(size);
            let (a, b) = planted_pair(size, shared, seed);
            let jaccard = shared as f64 / (2 * size - shared) as f64;
            assert!(jaccard >= 0.4 - 1e-12, "{jaccard}");
            let agree = agreements(&hasher.signature(&a), &hasher.signature(&b));
            assert!(
                agree >= floor,
                "seed {seed}: {agree} places for J = {jaccard}"
            );
            estimated += agree as f64 / 128.0;
            exact += jaccard;
        }
        let bias = (estimated - exact) / 2000.0;
        assert!(bias.abs() < 0.01, "mean estimate off by {bias}");
    }

    #[test]
    fn the_floor_is_the_binomial_quantile() {
        // Direct sums of the binomial lower tail.
        let tail = |n: u64, p: f64, k: u64| -> f64 {
            (0..k)
                .map(|i| {
                    let choose: f64 = (0..i).map(|j| (n - j) as f64 / (j + 1) as f64).product();
                    choose * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32)
                })
                .sum()
        };
        for (n, p) in [(128u64, 0.4), (128, 0.7), (256, 0.5), (64, 0.9)] {
            let k = agreement_floor(n as usize, p, 1e-9) as u64;
            assert!(tail(n, p, k) <= 1e-9, "{n} {p} {k}");
            assert!(tail(n, p, k + 1) > 1e-9, "{n} {p} {k}");
        }
        assert_eq!(agreement_floor(128, 0.0, 1e-9), 0);
    }

    #[test]
    fn folded_bytes_agree_wherever_the_signatures_do() {
        // Folded bytes never undercount agreement (the pre-check is as safe as the check),
        // and on unrelated signatures they agree by chance about once in 256 places.
        let hasher = MinHasher::new(128, SketchScheme::Classic, 1).unwrap();
        let (mut chance, mut places) = (0, 0);
        for seed in 0..300u64 {
            let size = 5 + seed % 200;
            let (a, b) = planted_pair(size, (seed * 31) % (size + 1), seed);
            let (sa, sb) = (hasher.signature(&a), hasher.signature(&b));
            let (mut fa, mut fb) = (vec![0u8; 128], vec![0u8; 128]);
            fold_bytes(&sa, &mut fa);
            fold_bytes(&sb, &mut fb);
            let (full, folded) = (agreements(&sa, &sb), byte_agreements(&fa, &fb));
            assert!(folded >= full, "seed {seed}: {folded} < {full}");
            chance += folded - full;
            places += 128 - full;
        }
        let rate = chance as f64 / places as f64;
        assert!(rate < 2.0 / 256.0, "{rate}");
    }

    #[test]
    fn zero_permutations_are_refused() {
        assert!(MinHasher::new(0, SketchScheme::Classic, 1).is_err());
    }
}
