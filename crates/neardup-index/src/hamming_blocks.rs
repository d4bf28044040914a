//! What the Hamming index ([`crate::HammingIndex`]) and the Hamming join
//! ([`crate::HammingJoin`]) share: the error type, the cut of a 64-bit fingerprint into
//! contiguous blocks, and the enumeration of the block values within a radius.

use std::fmt;

/// Why an index cannot be built or used as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HammingError {
    /// An id already stored (ids are never overwritten).
    DuplicateId(u64),
    /// A distance beyond the one the index was built for.
    DistanceTooLarge {
        /// The distance asked for.
        asked: u32,
        /// The largest the index answers exactly.
        max: u32,
    },
    /// A parameter out of range (`max_distance` above 63, `blocks` 0 or above 64).
    Parameter(String),
    /// A saved index that is not one, of another version, or damaged.
    Format(String),
}

impl fmt::Display for HammingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HammingError::DuplicateId(id) => write!(f, "id {id} is already stored"),
            HammingError::DistanceTooLarge { asked, max } => write!(
                f,
                "distance {asked} is larger than the {max} this index was built for"
            ),
            HammingError::Parameter(message) | HammingError::Format(message) => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for HammingError {}

/// One block: bits `shift .. shift + width` of the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) shift: u32,
    pub(crate) width: u32,
}

impl Block {
    pub(crate) fn value(self, fingerprint: u64) -> u64 {
        let mask = if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        };
        (fingerprint >> self.shift) & mask
    }

    /// 32 bits of `fingerprint` outside this block (the lowest of the bits left when the
    /// block is cut out). Two fingerprints within `k` have residuals within `k`, so a dense
    /// table keeps these inline to filter a bucket at half the bytes of whole fingerprints.
    pub(crate) fn residual(self, fingerprint: u64) -> u32 {
        let below = fingerprint & ((1u64 << self.shift) - 1);
        let above = fingerprint
            .checked_shr(self.shift + self.width)
            .unwrap_or(0);
        (below | above.checked_shl(self.shift).unwrap_or(0)) as u32
    }
}

/// `n` choose `k`, as a real number.
pub(crate) fn binomial(n: u32, k: u32) -> f64 {
    (0..k)
        .map(|i| f64::from(n - i) / f64::from(i + 1))
        .product()
}

/// `m` contiguous blocks covering 64 bits, widths differing by at most one.
pub(crate) fn layout(m: u32) -> Vec<Block> {
    let mut blocks = Vec::with_capacity(m as usize);
    let mut shift = 0;
    for i in 0..m {
        let width = 64 / m + u32::from(i < 64 % m);
        blocks.push(Block { shift, width });
        shift += width;
    }
    blocks
}

/// Calls `visit` with every value within Hamming distance `radius` of `value` in the low
/// `width` bits (the value itself first).
pub(crate) fn for_each_within(value: u64, width: u32, radius: u32, visit: &mut impl FnMut(u64)) {
    fn flip(value: u64, from: u32, width: u32, left: u32, visit: &mut impl FnMut(u64)) {
        if left == 0 {
            return;
        }
        for bit in from..width {
            let flipped = value ^ (1u64 << bit);
            visit(flipped);
            flip(flipped, bit + 1, width, left - 1, visit);
        }
    }
    visit(value);
    flip(value, 0, width, radius.min(width), visit);
}

/// Calls `visit` with every value within Hamming distance `radius` of `value` in the low
/// `width` bits, nearest first: the value itself, then every value 1 bit away, then 2, in a
/// fixed order (Gosper's enumeration of the masks of each weight).
pub(crate) fn for_each_nearest_first(
    value: u64,
    width: u32,
    radius: u32,
    visit: &mut impl FnMut(u64),
) {
    visit(value);
    let end = 1u128 << width.min(64);
    for weight in 1..=radius.min(width) {
        let mut mask = (1u128 << weight) - 1;
        while mask < end {
            visit(value ^ mask as u64);
            let lowest = mask & mask.wrapping_neg();
            let carried = mask + lowest;
            mask = (((carried ^ mask) >> 2) / lowest) | carried;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_cover_the_64_bits_in_order() {
        for m in 1..=64 {
            let blocks = layout(m);
            assert_eq!(blocks.len(), m as usize);
            assert_eq!(blocks[0].shift, 0);
            for pair in blocks.windows(2) {
                assert_eq!(pair[0].shift + pair[0].width, pair[1].shift);
                assert!(pair[0].width.abs_diff(pair[1].width) <= 1);
            }
            let last = blocks[blocks.len() - 1];
            assert_eq!(last.shift + last.width, 64);
        }
        assert_eq!(layout(1)[0].value(u64::MAX), u64::MAX);
        assert_eq!(Block { shift: 4, width: 4 }.value(0xabcd), 0xc);
    }

    /// The residual is 32 bits outside the block: a flip inside the block leaves it, a flip
    /// of one of its bits changes exactly that bit, for every block of every layout.
    #[test]
    fn residuals_hold_only_bits_outside_their_block() {
        let fingerprint = 0x0123_4567_89ab_cdefu64;
        for m in 1..=64 {
            for block in layout(m) {
                let residual = block.residual(fingerprint);
                let mut changed = 0;
                for bit in 0..64 {
                    let flipped = block.residual(fingerprint ^ (1 << bit));
                    let inside = (block.shift..block.shift + block.width).contains(&bit);
                    match (residual ^ flipped).count_ones() {
                        0 => {}
                        1 => {
                            assert!(!inside, "block {block:?}, bit {bit}");
                            changed += 1;
                        }
                        n => panic!("block {block:?}, bit {bit}: {n} bits changed"),
                    }
                }
                assert_eq!(changed, (64 - block.width).min(32), "block {block:?}");
            }
        }
        let block = Block {
            shift: 0,
            width: 16,
        };
        assert_eq!(block.residual(fingerprint), 0x4567_89ab);
    }

    #[test]
    fn values_within_a_radius_are_each_visited_once() {
        for (width, radius) in [(8, 0), (8, 2), (10, 3), (5, 9)] {
            let mut seen = Vec::new();
            for_each_within(0b1011, width, radius, &mut |value| seen.push(value));
            assert_eq!(seen[0], 0b1011);
            let expected: f64 = (0..=radius.min(width)).map(|i| binomial(width, i)).sum();
            assert_eq!(seen.len() as f64, expected, "{width} {radius}");
            assert!(seen.iter().all(|v| (v ^ 0b1011).count_ones() <= radius));
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as f64, expected);
        }
        assert_eq!(binomial(64, 2), 2016.0);
    }

    #[test]
    fn values_nearest_first_are_each_visited_once_in_order_of_distance() {
        for (width, radius) in [(8, 0), (8, 2), (10, 3), (5, 9), (16, 3), (64, 2)] {
            let mut seen = Vec::new();
            for_each_nearest_first(0b1011, width, radius, &mut |value| seen.push(value));
            let mut within = Vec::new();
            for_each_within(0b1011, width, radius, &mut |value| within.push(value));
            let distances: Vec<u32> = seen.iter().map(|v| (v ^ 0b1011).count_ones()).collect();
            assert!(
                distances.windows(2).all(|w| w[0] <= w[1]),
                "{width} {radius}"
            );
            seen.sort_unstable();
            within.sort_unstable();
            let count = seen.len();
            seen.dedup();
            assert_eq!(seen.len(), count, "{width} {radius}: a value visited twice");
            assert_eq!(seen, within, "{width} {radius}");
        }
    }

    #[test]
    fn errors_say_what_went_wrong() {
        assert_eq!(
            HammingError::DuplicateId(7).to_string(),
            "id 7 is already stored"
        );
        let error = HammingError::DistanceTooLarge { asked: 9, max: 3 };
        assert!(error.to_string().contains("distance 9"));
    }
}
