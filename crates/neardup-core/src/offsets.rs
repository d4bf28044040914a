//! Non-decreasing 64-bit offsets in 4 bytes each.
//!
//! A spilling run keeps one offset per document (where its sketch is in the spill, where its
//! id ends in the id buffer). They only go up, and pass a multiple of 4 GiB rarely, so each
//! is held modulo 2^32, with the indexes at which a multiple was passed on the side.

/// Non-decreasing `u64` offsets, 4 bytes each plus 4 bytes per multiple of 2^32 passed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Offsets {
    low: Vec<u32>,
    /// The index of the offset at which each multiple of 2^32 was passed (once per multiple).
    wraps: Vec<u32>,
}

impl Offsets {
    /// Room for `offsets` offsets.
    pub fn with_capacity(offsets: usize) -> Offsets {
        Offsets {
            low: Vec::with_capacity(offsets),
            wraps: Vec::new(),
        }
    }

    /// Room for `offsets` more offsets.
    pub fn reserve_exact(&mut self, offsets: usize) {
        self.low.reserve_exact(offsets);
    }

    /// Adds `offset`.
    ///
    /// # Panics
    /// `offset` is below the last offset, or more than `u32::MAX` offsets are held.
    pub fn push(&mut self, offset: u64) {
        let last = self.last();
        assert!(offset >= last, "offset {offset} after {last}");
        let index = u32::try_from(self.low.len()).expect("at most u32::MAX offsets");
        for _ in (last >> 32)..(offset >> 32) {
            self.wraps.push(index);
        }
        self.low.push(offset as u32);
    }

    /// Offset `index`.
    ///
    /// # Panics
    /// `index` is not below [`Offsets::len`].
    pub fn get(&self, index: usize) -> u64 {
        let wrapped = self.wraps.partition_point(|&at| at as usize <= index) as u64;
        (wrapped << 32) | u64::from(self.low[index])
    }

    /// Gives back the room no offset uses.
    pub fn shrink_to_fit(&mut self) {
        self.low.shrink_to_fit();
        self.wraps.shrink_to_fit();
    }

    /// Offsets held.
    pub fn len(&self) -> usize {
        self.low.len()
    }

    /// Whether no offset is held.
    pub fn is_empty(&self) -> bool {
        self.low.is_empty()
    }

    /// The last offset (0 when none).
    pub fn last(&self) -> u64 {
        match self.low.len() {
            0 => 0,
            n => self.get(n - 1),
        }
    }

    /// Every offset, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.low.capacity() + self.wraps.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_several_multiples_of_four_gib_come_back() {
        const G4: u64 = 1 << 32;
        let values = [
            0,
            5,
            G4 - 1,
            G4,
            G4 + 3,
            G4 + 3,
            3 * G4 + 7,
            3 * G4 + 7,
            10 * G4,
            10 * G4 + 1,
        ];
        let mut offsets = Offsets::default();
        for &value in &values {
            offsets.push(value);
        }
        assert_eq!(offsets.len(), values.len());
        assert_eq!(offsets.iter().collect::<Vec<_>>(), values);
        assert_eq!(offsets.last(), 10 * G4 + 1);
        // One wrap index per multiple passed, however many at once.
        assert_eq!(offsets.wraps, vec![3, 6, 6, 8, 8, 8, 8, 8, 8, 8]);
    }

    #[test]
    #[should_panic(expected = "offset 4 after 5")]
    fn offsets_must_not_go_down() {
        let mut offsets = Offsets::default();
        offsets.push(5);
        offsets.push(4);
    }
}
