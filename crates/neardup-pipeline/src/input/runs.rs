//! Per-record numbers held as runs: a streamed read keeps each record's input, line and
//! ordinal, which mostly go up by one or stay the same from one record to the next.

use neardup_core::codec::{self, Decoder, Encoder};

use crate::Result;

/// A sequence of integers held as runs in which each value is the previous one plus `STEP`
/// (0: constant, as the input of each record; 1: counting, as lines and ordinals). A new
/// run starts where a value breaks the pattern, so a sequence that keeps it costs a few
/// bytes in all, and one that never does costs 16 bytes a value.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Runs<const STEP: u64> {
    /// (index, value) of the first value of each run.
    starts: Vec<(u64, u64)>,
    len: u64,
}

impl<const STEP: u64> Runs<STEP> {
    /// Values held.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no value is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `value` after the others.
    pub fn push(&mut self, value: u64) {
        let follows = self.starts.last().is_some_and(|&(index, first)| {
            first.wrapping_add(STEP.wrapping_mul(self.len - index)) == value
        });
        if !follows {
            self.starts.push((self.len, value));
        }
        self.len += 1;
    }

    /// Value `index`.
    ///
    /// # Panics
    /// `index` is not below [`Runs::len`].
    pub fn get(&self, index: usize) -> u64 {
        assert!(index < self.len(), "index {index} of {} values", self.len);
        let index = index as u64;
        let run = self.starts.partition_point(|&(first, _)| first <= index) - 1;
        let (first, value) = self.starts[run];
        value.wrapping_add(STEP.wrapping_mul(index - first))
    }

    /// Every value, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.starts.len()).flat_map(move |run| {
            let (first, value) = self.starts[run];
            let end = self.starts.get(run + 1).map_or(self.len, |next| next.0);
            (0..end - first).map(move |k| value.wrapping_add(STEP.wrapping_mul(k)))
        })
    }

    /// Gives back the room no run uses.
    pub fn shrink_to_fit(&mut self) {
        self.starts.shrink_to_fit();
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 16
    }

    /// Writes the runs (not the values) to `out`.
    pub fn encode(&self, out: &mut Encoder) {
        out.u64(self.len);
        out.seq(&self.starts, |out, &(index, value)| {
            out.u64(index);
            out.u64(value);
        });
    }

    /// Reads what [`Runs::encode`] wrote.
    ///
    /// # Errors
    /// Malformed runs (parameter `checkpoint`).
    pub fn decode(from: &mut Decoder<'_>) -> Result<Runs<STEP>> {
        let len = from.u64()?;
        let starts = from.seq(16, |d| Ok((d.u64()?, d.u64()?)))?;
        let ordered = starts.windows(2).all(|w| w[0].0 < w[1].0);
        let bounded = match starts.first() {
            None => len == 0,
            Some(first) => first.0 == 0 && starts.last().is_some_and(|last| last.0 < len),
        };
        if !ordered || !bounded {
            return Err(codec::corrupt("runs out of order").into());
        }
        Ok(Runs { starts, len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counting_values_take_one_run() {
        let mut lines = Runs::<1>::default();
        for line in 1..=1000 {
            lines.push(line);
        }
        assert_eq!(lines.starts.len(), 1);
        assert_eq!(lines.get(0), 1);
        assert_eq!(lines.get(999), 1000);
    }

    proptest! {
        #[test]
        fn runs_give_back_every_value(values in prop::collection::vec(0u64..6, 0..200)) {
            let mut constant = Runs::<0>::default();
            let mut counting = Runs::<1>::default();
            // Sums of small steps: runs of equal and of consecutive values, and breaks.
            let mut total = 0;
            let mut summed = Vec::new();
            for &v in &values {
                total += v / 2;
                summed.push(total);
                constant.push(total);
                counting.push(total);
            }
            prop_assert_eq!(constant.len(), summed.len());
            for (i, &v) in summed.iter().enumerate() {
                prop_assert_eq!(constant.get(i), v);
                prop_assert_eq!(counting.get(i), v);
            }
            prop_assert_eq!(constant.iter().collect::<Vec<_>>(), summed.clone());
            prop_assert_eq!(counting.iter().collect::<Vec<_>>(), summed);
            let mut out = Encoder::new();
            counting.encode(&mut out);
            let bytes = out.finish();
            let mut from = Decoder::new(&bytes).unwrap();
            prop_assert_eq!(Runs::<1>::decode(&mut from).unwrap(), counting);
        }
    }
}
