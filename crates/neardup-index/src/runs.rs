//! Fixed-size entries gathered into sorted, deduplicated runs in spills, and merged back in
//! order: the out-of-memory sort under the spilling key table ([`crate::ExternalKeys`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use neardup_core::Result;
use rayon::prelude::*;

use crate::spill_dir::{spill_error, Spill, SpillDir};

/// Bytes read from each run at a time during a merge.
const RUN_READ_BYTES: usize = 256 << 10;

/// An entry of a run: ordered, and encoded in [`RunEntry::BYTES`] bytes, little-endian.
pub(crate) trait RunEntry: Copy + Ord + Send {
    /// Bytes of one entry.
    const BYTES: usize;
    /// Appends the entry's bytes.
    fn encode(&self, bytes: &mut Vec<u8>);
    /// The entry of `bytes` ([`RunEntry::BYTES`] of them).
    fn decode(bytes: &[u8]) -> Self;
}

/// A `(key, rank)` entry of the key table: the key (8 bytes) and the rank (4).
impl RunEntry for (u64, u32) {
    const BYTES: usize = 12;
    #[inline]
    fn encode(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.0.to_le_bytes());
        bytes.extend_from_slice(&self.1.to_le_bytes());
    }
    #[inline]
    fn decode(bytes: &[u8]) -> Self {
        let mut key = [0u8; 8];
        key.copy_from_slice(&bytes[..8]);
        let mut rank = [0u8; 4];
        rank.copy_from_slice(&bytes[8..]);
        (u64::from_le_bytes(key), u32::from_le_bytes(rank))
    }
}

/// A packed pair or any other `u64`.
impl RunEntry for u64 {
    const BYTES: usize = 8;
    #[inline]
    fn encode(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.to_le_bytes());
    }
    #[inline]
    fn decode(bytes: &[u8]) -> Self {
        let mut value = [0u8; 8];
        value.copy_from_slice(bytes);
        u64::from_le_bytes(value)
    }
}

/// Entries gathered into sorted, deduplicated runs in spills.
pub(crate) struct Runs<'d, T> {
    dir: &'d dyn SpillDir,
    /// The runs are called `{name}-{n}`.
    name: &'static str,
    buffer: Vec<T>,
    /// Entries buffered before a run is written.
    pub(crate) capacity: usize,
    runs: Vec<(Box<dyn Spill>, u64)>,
    /// Bytes written to runs.
    pub(crate) spilled: u64,
}

impl<'d, T: RunEntry> Runs<'d, T> {
    /// Entries spilled to `dir` (as runs called `{name}-{n}`) whenever `capacity` of them
    /// are buffered.
    pub(crate) fn new(dir: &'d dyn SpillDir, name: &'static str, capacity: usize) -> Self {
        Runs {
            dir,
            name,
            buffer: Vec::new(),
            capacity,
            runs: Vec::new(),
            spilled: 0,
        }
    }

    /// The spill directory.
    pub(crate) fn dir(&self) -> &'d dyn SpillDir {
        self.dir
    }

    /// Adds an entry.
    #[inline]
    pub(crate) fn push(&mut self, entry: T) -> Result<()> {
        self.buffer.push(entry);
        if self.buffer.len() >= self.capacity {
            self.write_run()?;
        }
        Ok(())
    }

    /// Writes the buffered entries, sorted and deduplicated, as the next run.
    pub(crate) fn write_run(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.buffer.par_sort_unstable();
        self.buffer.dedup();
        let name = format!("{}-{}", self.name, self.runs.len());
        let mut spill = self.dir.create(&name).map_err(spill_error)?;
        let mut bytes = Vec::with_capacity(RUN_READ_BYTES);
        let mut length = 0;
        for entry in &self.buffer {
            entry.encode(&mut bytes);
            if bytes.len() >= RUN_READ_BYTES {
                spill.append(&bytes).map_err(spill_error)?;
                length += bytes.len() as u64;
                bytes.clear();
            }
        }
        spill.append(&bytes).map_err(spill_error)?;
        spill.flush().map_err(spill_error)?;
        let length = length + bytes.len() as u64;
        self.spilled += length;
        self.runs.push((spill, length));
        self.buffer.clear();
        Ok(())
    }

    /// Writes the buffered entries to a last run: the entries are all in runs.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.write_run()?;
        self.buffer = Vec::new();
        Ok(())
    }

    /// Whether every entry is in a run (see [`Runs::finish`]).
    pub(crate) fn is_finished(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Calls `entry` with every entry of every run, ascending (an entry in several runs is
    /// given once per run). The runs must be complete (see [`Runs::finish`]).
    pub(crate) fn merge(&self, mut entry: impl FnMut(T) -> Result<()>) -> Result<()> {
        let mut readers: Vec<RunReader<'_>> = (self.runs.iter())
            .map(|(spill, length)| RunReader::new(spill.as_ref(), *length))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (index, reader) in readers.iter_mut().enumerate() {
            if let Some(first) = reader.next::<T>()? {
                heap.push(Reverse((first, index)));
            }
        }
        while let Some(Reverse((value, index))) = heap.pop() {
            entry(value)?;
            if let Some(next) = readers[index].next::<T>()? {
                heap.push(Reverse((next, index)));
            }
        }
        Ok(())
    }
}

/// Reads the entries of one run in order.
struct RunReader<'s> {
    spill: &'s dyn Spill,
    length: u64,
    offset: u64,
    buffer: Vec<u8>,
    at: usize,
}

impl<'s> RunReader<'s> {
    fn new(spill: &'s dyn Spill, length: u64) -> RunReader<'s> {
        RunReader {
            spill,
            length,
            offset: 0,
            buffer: Vec::new(),
            at: 0,
        }
    }

    /// The next entry of `size` bytes (every entry of a run has the same size).
    fn entry(&mut self, size: usize) -> Result<Option<&[u8]>> {
        if self.at == self.buffer.len() {
            if self.offset == self.length {
                return Ok(None);
            }
            let block = (RUN_READ_BYTES / size * size) as u64;
            let read = (self.length - self.offset).min(block);
            self.buffer.resize(read as usize, 0);
            self.spill
                .read_at(self.offset, &mut self.buffer)
                .map_err(spill_error)?;
            self.offset += read;
            self.at = 0;
        }
        let bytes = &self.buffer[self.at..self.at + size];
        self.at += size;
        Ok(Some(bytes))
    }

    /// The next entry.
    #[inline]
    fn next<T: RunEntry>(&mut self) -> Result<Option<T>> {
        Ok(self.entry(T::BYTES)?.map(T::decode))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill_dir::MemorySpillDir;

    #[test]
    fn runs_merge_sorted_and_each_run_deduplicated() {
        let dir = MemorySpillDir;
        let mut runs: Runs<'_, (u64, u32)> = Runs::new(&dir, "keys", 3);
        for entry in [(5, 1), (2, 0), (5, 1), (9, 2), (2, 0), (1, 7), (5, 1)] {
            runs.push(entry).unwrap();
        }
        runs.finish().unwrap();
        assert!(runs.is_finished());
        // Runs of three pushes: {5, 2, 5} (two distinct), {9, 2, 1} and {5}: 6 entries of 12
        // bytes.
        assert_eq!(runs.spilled, 6 * 12);
        let mut merged = Vec::new();
        runs.merge(|entry| {
            merged.push(entry);
            Ok(())
        })
        .unwrap();
        assert_eq!(merged, vec![(1, 7), (2, 0), (2, 0), (5, 1), (5, 1), (9, 2)]);
    }

    #[test]
    fn entries_read_back_across_read_blocks() {
        let dir = MemorySpillDir;
        let count = (RUN_READ_BYTES / 8 * 3 + 5) as u64;
        let mut runs: Runs<'_, u64> = Runs::new(&dir, "pairs", usize::MAX);
        for value in (0..count).rev() {
            runs.push(value).unwrap();
        }
        runs.finish().unwrap();
        let mut expected = 0;
        runs.merge(|value| {
            assert_eq!(value, expected);
            expected += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(expected, count);
    }

    #[test]
    fn an_entry_encodes_in_its_size_little_endian() {
        let mut bytes = Vec::new();
        (0x0102u64, 0x03u32).encode(&mut bytes);
        assert_eq!(bytes, [2, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(<(u64, u32)>::decode(&bytes), (0x0102, 0x03));
        assert_eq!(u64::decode(&7u64.to_le_bytes()), 7);
    }
}
