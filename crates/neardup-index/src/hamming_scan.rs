//! Scanning a run of 32-bit fingerprint residuals for those within a Hamming distance of one.
//!
//! A dense table's bucket holds `n / 2^16` residuals by chance at 4 blocks of 16 bits (763 at
//! 50 million), read in sequence from the table's inline copy. The scan is the service's
//! hottest loop at tens of millions stored, so it is written once for sixteen residuals at a
//! time (a mask of those within the distance, then the hits in order) and compiled three
//! times: with AVX-512's vector population count, with the `popcnt` instruction, and for the
//! baseline x86-64 (whose `count_ones` is a dozen instructions). The CPU is asked which one
//! it runs; every form returns the same hits.

use std::ops::ControlFlow;

/// Calls `hit(position)` for every position `i` of `run` with
/// `(run[i] ^ fingerprint).count_ones() <= k`, in increasing order, until `hit` breaks.
/// Returns the position after the last one read: `run.len()`, or one past the hit that broke.
pub(crate) fn scan_within(
    run: &[u32],
    fingerprint: u32,
    k: u32,
    hit: &mut impl FnMut(usize) -> ControlFlow<()>,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            // SAFETY: the CPU supports AVX-512F and VPOPCNTDQ, checked just above.
            return unsafe { scan_avx512(run, fingerprint, k, hit) };
        }
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU supports POPCNT, checked just above.
            return unsafe { scan_popcnt(run, fingerprint, k, hit) };
        }
    }
    scan_generic(run, fingerprint, k, hit)
}

/// [`scan_generic`] compiled with `features` enabled, as an `unsafe fn` (the caller checks
/// that the CPU has them).
macro_rules! scan_with {
    ($name:ident, $features:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        unsafe fn $name(
            run: &[u32],
            fingerprint: u32,
            k: u32,
            hit: &mut impl FnMut(usize) -> ControlFlow<()>,
        ) -> usize {
            scan_generic(run, fingerprint, k, hit)
        }
    };
}

scan_with!(scan_avx512, "avx512f,avx512vpopcntdq,popcnt");
scan_with!(scan_popcnt, "popcnt");

/// Sixteen residuals a step: the comparisons have no branch, so the compiler vectorises
/// them where the target allows; a step with no fingerprint within `k` costs no call.
#[inline(always)]
fn scan_generic(
    run: &[u32],
    fingerprint: u32,
    k: u32,
    hit: &mut impl FnMut(usize) -> ControlFlow<()>,
) -> usize {
    const STEP: usize = 16;
    let mut chunks = run.chunks_exact(STEP);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut mask = 0u32;
        for (bit, &other) in chunk.iter().enumerate() {
            mask |= u32::from((other ^ fingerprint).count_ones() <= k) << bit;
        }
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            if hit(at).is_break() {
                return at + 1;
            }
            mask &= mask - 1;
        }
        base += STEP;
    }
    for (offset, &other) in chunks.remainder().iter().enumerate() {
        if (other ^ fingerprint).count_ones() <= k && hit(base + offset).is_break() {
            return base + offset + 1;
        }
    }
    run.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Every length around the step, every break point: the hits and the returned end are
    /// those of a plain loop, for the dispatched form and the baseline one.
    #[test]
    fn every_form_finds_the_hits_of_a_plain_loop_and_stops_where_told() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let fingerprint = xorshift(&mut state) as u32;
        for len in 0..50 {
            // About a third within 3: flips of 0 to 5 bits, and some random fingerprints.
            let run: Vec<u32> = (0..len)
                .map(|_| {
                    let r = xorshift(&mut state);
                    if r.is_multiple_of(4) {
                        r as u32
                    } else {
                        (0..r % 6).fold(fingerprint, |f, i| f ^ (1 << ((r >> (8 * i)) % 32)))
                    }
                })
                .collect();
            for k in [0, 3, 32] {
                let truth: Vec<usize> = (0..len)
                    .filter(|&i| (run[i] ^ fingerprint).count_ones() <= k)
                    .collect();
                for stop_after in 1..=truth.len() + 1 {
                    let expected_end = truth.get(stop_after - 1).map_or(len, |&at| at + 1);
                    let expected: Vec<usize> = truth.iter().copied().take(stop_after).collect();
                    for dispatched in [true, false] {
                        let mut seen = Vec::new();
                        let mut visit = |at: usize| {
                            seen.push(at);
                            if seen.len() == stop_after {
                                ControlFlow::Break(())
                            } else {
                                ControlFlow::Continue(())
                            }
                        };
                        let end = if dispatched {
                            scan_within(&run, fingerprint, k, &mut visit)
                        } else {
                            scan_generic(&run, fingerprint, k, &mut visit)
                        };
                        assert_eq!(seen, expected, "len {len}, k {k}, stop {stop_after}");
                        assert_eq!(end, expected_end, "len {len}, k {k}, stop {stop_after}");
                    }
                }
            }
        }
    }
}
