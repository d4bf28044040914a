//! The seeded random generator every choice of a benchmark is drawn from.

use neardup_core::hash::mix64;

/// The SplitMix64 increment (the golden ratio in 64 bits).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// A small seeded random generator: SplitMix64, whose output function is [`mix64`].
///
/// Not for cryptography; chosen because it is tiny, fast, and its sequence is fixed forever,
/// which is what a reproducible benchmark needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// An independent generator for `stream` (for example a document's position) under `seed`.
    pub fn stream(seed: u64, stream: u64) -> Rng {
        Rng::new(mix64(seed ^ mix64(stream.wrapping_add(GOLDEN))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// A number in `0..bound` (0 when `bound` is 0), by multiply-and-shift.
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `probability`.
    pub fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// A random element of `items`, `None` if it is empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for end in (1..items.len()).rev() {
            items.swap(end, self.below(end + 1));
        }
    }

    /// `count` distinct numbers from `0..bound` (all of them if `count >= bound`), ascending.
    pub fn sample(&mut self, bound: usize, count: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..bound).collect();
        let count = count.min(bound);
        for index in 0..count {
            let other = index + self.below(bound - index);
            all.swap(index, other);
        }
        all.truncate(count);
        all.sort_unstable();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_fixed_and_bounded() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        let first: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert!((0..1000).all(|_| a.below(7) < 7));
        assert_eq!(a.below(0), 0);
        let sample = a.sample(10, 4);
        assert_eq!(sample.len(), 4);
        assert!(sample.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a.sample(3, 10), vec![0, 1, 2]);
    }
}
