//! Sketches held out of memory: the seam between the pure engine and the disk.
//!
//! A run whose sketches do not fit in its memory limit writes them, encoded
//! ([`Sketch::encode`]), to a [`Spill`]: an append-only store of bytes read back by offset.
//! The engine never opens a file itself: the pipeline gives it a file-backed [`Spill`] in its
//! temporary directory, tests give it a [`MemorySpill`]. What the engine keeps in memory per
//! document is then a few fixed-size facts (identity, length, flags, an offset), not the
//! sketch.
//!
//! Every stage reads the spilled sketches it needs in document order, in blocks of about
//! [`READ_BLOCK_BYTES`] decoded in parallel (identity groups, keys, common features), except
//! verification and `connected` clustering, which read one sketch at a time by offset:
//! candidate pairs are sorted by their first document, so those reads are near-sequential and
//! served by the operating system's page cache. A method with pre-checks
//! ([`Method::precheck`]: MinHash's signature folded to a byte a place) has them written to
//! a spill of their own beside the sketches, a few bytes a document read by
//! `document * width`; verification reads a pair's pre-checks first and skips the sketches of
//! a pair they refuse (most false LSH candidates).
//!
//! The features a method marks as common ([`Method::mark_common`]) are not written back:
//! the store keeps the common features and which documents were marked, and marks a sketch
//! again each time it is decoded, so a spilled run verifies exactly what an in-memory run
//! verifies.

use neardup_core::offsets::Offsets;
use neardup_core::{CommonMarking, Method, Result, Sketch};
pub(crate) use neardup_index::spill_dir::spill_error;
pub use neardup_index::spill_dir::{MemorySpill, MemorySpillDir, Spill, SpillDir};
use rayon::prelude::*;

/// Bytes of spilled sketches read and decoded together by a scan.
pub const READ_BLOCK_BYTES: u64 = 8 << 20;

/// How a run spills: where, and how many bytes of keys it buffers before writing a sorted
/// run.
#[derive(Clone)]
pub struct Spilling {
    /// Where the spills are created.
    pub dir: std::sync::Arc<dyn SpillDir>,
    /// Bytes of candidate-stage entries held before they are sorted and written.
    pub budget: usize,
}

/// A sketch read from a [`SketchStore`]: borrowed from memory or decoded from the spill.
pub(crate) enum Held<'a, S> {
    Borrowed(&'a S),
    Owned(S),
}

impl<S> std::ops::Deref for Held<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        match self {
            Held::Borrowed(sketch) => sketch,
            Held::Owned(sketch) => sketch,
        }
    }
}

/// The common features marked on some sketches ([`Method::mark_common`]), applied again to
/// every spilled sketch of a marked document when it is read.
pub(crate) struct Marks {
    common: CommonSet,
    /// Per document.
    marked: Vec<bool>,
}

/// A sorted list of distinct features with a [`PrefixIndex`]: the common features, looked
/// up once per feature of every marked sketch.
pub(crate) struct CommonSet {
    sorted: Vec<u32>,
    index: PrefixIndex,
}

impl CommonSet {
    /// The set of `sorted` (ascending, distinct).
    pub(crate) fn new(sorted: Vec<u32>) -> CommonSet {
        let index = PrefixIndex::new(&sorted);
        CommonSet { sorted, index }
    }

    /// Whether `value` is in the set.
    #[inline]
    pub(crate) fn contains(&self, value: u32) -> bool {
        self.index.find(&self.sorted, value).is_some()
    }
}

/// Where each value of a sorted list of distinct `u32` may be: the list's positions by the
/// top bits of the value, about one value a bucket. A lookup reads two places (the bucket's
/// bounds, then its one or two values) where a search of the list reads a dozen, each a
/// cache miss when the list is large (the counted features of a long-text corpus).
pub(crate) struct PrefixIndex {
    /// `starts[b]..starts[b + 1]`: the positions of the values whose top bits are `b`.
    starts: Vec<u32>,
    shift: u32,
}

impl PrefixIndex {
    pub(crate) fn new(keys: &[u32]) -> PrefixIndex {
        let bits = keys.len().max(2).ilog2().clamp(1, 30);
        let shift = 32 - bits;
        let mut starts = vec![0u32; (1usize << bits) + 1];
        for &key in keys {
            starts[(key >> shift) as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        PrefixIndex { starts, shift }
    }

    /// The position of `value` in `keys` (the list the index was made of), if there.
    #[inline]
    pub(crate) fn find(&self, keys: &[u32], value: u32) -> Option<usize> {
        let bucket = (value >> self.shift) as usize;
        let (start, end) = (
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        );
        (start..end).find(|&at| keys[at] == value)
    }
}

/// The sketches of a run, in memory or spilled.
pub(crate) enum SketchStore<S> {
    /// All in memory, by document.
    Memory(Vec<S>),
    /// Encoded in a [`Spill`].
    Spilled(Encoded),
}

/// Sketches encoded in a [`Spill`]: document `d` is at `offsets[d]..offsets[d + 1]`.
pub(crate) struct Encoded {
    spill: Box<dyn Spill>,
    offsets: Offsets,
    marks: Option<Marks>,
    /// The documents' pre-checks, for a method with them ([`Method::precheck`]).
    prechecks: Option<Prechecks>,
}

impl Encoded {
    /// Reads the encoded sketches of `documents[0]` to `documents[last]` (ascending), one
    /// span of the spill, into `block`; returns the span's first offset.
    fn read_span(&self, first: u32, last: u32, block: &mut Vec<u8>) -> Result<u64> {
        let (start, end) = (
            self.offsets.get(first as usize),
            self.offsets.get(last as usize + 1),
        );
        block.clear();
        block.resize((end - start) as usize, 0);
        self.spill.read_at(start, block).map_err(spill_error)?;
        Ok(start)
    }

    /// The sketch of `document` from a span read by [`Encoded::read_span`] at `first`,
    /// marked again when it was marked.
    fn decode_in<M: Method>(
        &self,
        method: &M,
        document: u32,
        block: &[u8],
        first: u64,
    ) -> Result<M::Sketch> {
        let at = (self.offsets.get(document as usize) - first) as usize;
        let to = (self.offsets.get(document as usize + 1) - first) as usize;
        decode(method, self.marks.as_ref(), document, &block[at..to])
    }
}

/// The pre-checks ([`Method::precheck`]) of spilled sketches, `width` bytes a document at
/// `document * width`, in a spill of their own: a tenth of the sketches' bytes or less, so
/// the page cache keeps them while verification reads them in candidate order.
pub(crate) struct Prechecks {
    spill: Box<dyn Spill>,
    width: usize,
}

impl Prechecks {
    /// Pre-checks `width` bytes a document to `spill`.
    pub(crate) fn new(spill: Box<dyn Spill>, width: usize) -> Prechecks {
        Prechecks { spill, width }
    }

    /// Reads the pre-check of `document` into `out`.
    ///
    /// # Errors
    /// The spill cannot be read.
    pub(crate) fn read(&self, document: u32, out: &mut Vec<u8>) -> Result<()> {
        out.resize(self.width, 0);
        (self.spill)
            .read_at(u64::from(document) * self.width as u64, out)
            .map_err(spill_error)
    }
}

impl<S: Sketch> SketchStore<S> {
    /// Documents held.
    pub(crate) fn len(&self) -> usize {
        match self {
            SketchStore::Memory(sketches) => sketches.len(),
            SketchStore::Spilled(encoded) => encoded.offsets.len().saturating_sub(1),
        }
    }

    /// Bytes of encoded sketches in the spill, and of their pre-checks (0 in memory).
    pub(crate) fn spilled_bytes(&self) -> u64 {
        match self {
            SketchStore::Memory(_) => 0,
            SketchStore::Spilled(encoded) => {
                let documents = encoded.offsets.len().saturating_sub(1) as u64;
                let prechecks = encoded.prechecks.as_ref();
                encoded.offsets.last() + prechecks.map_or(0, |p| p.width as u64 * documents)
            }
        }
    }

    /// Whether the sketches are in a spill (each read costs a read and a decoding).
    pub(crate) fn is_spilled(&self) -> bool {
        matches!(self, SketchStore::Spilled(_))
    }

    /// The spilled sketches' pre-checks, when the method has them (never in memory: there
    /// the sketches are at hand).
    pub(crate) fn prechecks(&self) -> Option<&Prechecks> {
        match self {
            SketchStore::Memory(_) => None,
            SketchStore::Spilled(encoded) => encoded.prechecks.as_ref(),
        }
    }

    /// The sketch of `document`, marked as [`Method::mark_common`] marked it.
    pub(crate) fn get<M: Method<Sketch = S>>(
        &self,
        method: &M,
        document: u32,
    ) -> Result<Held<'_, S>> {
        match self {
            SketchStore::Memory(sketches) => Ok(Held::Borrowed(&sketches[document as usize])),
            SketchStore::Spilled(encoded) => {
                let mut bytes = Vec::new();
                let first = encoded.read_span(document, document, &mut bytes)?;
                Ok(Held::Owned(
                    encoded.decode_in(method, document, &bytes, first)?,
                ))
            }
        }
    }

    /// What `f(document, sketch, scratch, out)` appends to `out` for every document of
    /// `documents` (ascending), in their order, in one list: no list per document (`scratch`
    /// is a buffer `f` may reuse, left as `f` leaves it).
    ///
    /// # Errors
    /// A spilled sketch that cannot be read.
    pub(crate) fn flat_map_sorted<M, T, F>(
        &self,
        method: &M,
        documents: &[u32],
        f: F,
    ) -> Result<Vec<T>>
    where
        M: Method<Sketch = S>,
        T: Send,
        F: Fn(u32, &S, &mut Vec<u64>, &mut Vec<T>) + Sync,
    {
        const CHUNK: usize = 4096;
        let chunks: Vec<Vec<T>> = match self {
            SketchStore::Memory(sketches) => documents
                .par_chunks(CHUNK)
                .map(|chunk| {
                    let (mut scratch, mut out) = (Vec::new(), Vec::new());
                    for &d in chunk {
                        scratch.clear();
                        f(d, &sketches[d as usize], &mut scratch, &mut out);
                    }
                    out
                })
                .collect(),
            SketchStore::Spilled(_) => self.map_sorted(method, documents, |d, sketch| {
                let (mut scratch, mut out) = (Vec::new(), Vec::new());
                f(d, sketch, &mut scratch, &mut out);
                out
            })?,
        };
        let mut all = Vec::with_capacity(chunks.iter().map(Vec::len).sum());
        for chunk in chunks {
            all.extend(chunk);
        }
        Ok(all)
    }

    /// `f` of every document of `documents` (sorted, ascending) and its sketch, in that order;
    /// spilled sketches are read in blocks and decoded in parallel.
    pub(crate) fn map_sorted<M, R, F>(&self, method: &M, documents: &[u32], f: F) -> Result<Vec<R>>
    where
        M: Method<Sketch = S>,
        R: Send,
        F: Fn(u32, &S) -> R + Sync,
    {
        match self {
            SketchStore::Memory(sketches) => Ok(documents
                .par_iter()
                .map(|&d| f(d, &sketches[d as usize]))
                .collect()),
            SketchStore::Spilled(encoded) => {
                let offsets = &encoded.offsets;
                let mut results = Vec::with_capacity(documents.len());
                // One buffer for every block: a fresh one each time had its pages faulted in
                // (and zeroed) again whenever the allocator gave the last one back.
                let mut block: Vec<u8> = Vec::new();
                let mut start = 0;
                while start < documents.len() {
                    let first = offsets.get(documents[start] as usize);
                    let mut end = start + 1;
                    while end < documents.len()
                        && offsets.get(documents[end] as usize + 1) - first <= READ_BLOCK_BYTES
                    {
                        end += 1;
                    }
                    let first =
                        encoded.read_span(documents[start], documents[end - 1], &mut block)?;
                    let decoded: Result<Vec<R>> = documents[start..end]
                        .par_iter()
                        .map(|&d| Ok(f(d, &encoded.decode_in(method, d, &block, first)?)))
                        .collect();
                    results.extend(decoded?);
                    start = end;
                }
                Ok(results)
            }
        }
    }

    /// Marks the common features (`is_common`) of the documents flagged in `marked` and
    /// returns how many features were marked in all, and whether the keys of a marked sketch
    /// changed ([`Method::marks_changed_keys`]).
    pub(crate) fn mark_common<M: Method<Sketch = S>>(
        &mut self,
        method: &M,
        common: Vec<u32>,
        marked: Vec<bool>,
    ) -> Result<(u64, bool)> {
        let common = CommonSet::new(common);
        let is_common = |value: u32| common.contains(value);
        // Features marked, and whether a marked sketch's keys changed.
        let mark = |sketch: &mut S| {
            let count = method.mark_common(sketch, &is_common);
            (count, method.marks_changed_keys(sketch))
        };
        let sum = |a: (u64, bool), b: (u64, bool)| (a.0 + b.0, a.1 || b.1);
        match self {
            SketchStore::Memory(sketches) => Ok((sketches.par_iter_mut().zip(marked.par_iter()))
                .filter(|(_, marked)| **marked)
                .map(|(sketch, _)| mark(sketch))
                .reduce(|| (0, false), sum)),
            SketchStore::Spilled(_) => {
                let documents: Vec<u32> = (marked.iter().enumerate())
                    .filter(|(_, &m)| m)
                    .map(|(d, _)| d as u32)
                    .collect();
                let counts = self.map_sorted(method, &documents, |_, sketch| {
                    // The store's copy is not marked yet: mark a copy to count.
                    mark(&mut encode_copy(sketch))
                })?;
                if let SketchStore::Spilled(encoded) = self {
                    encoded.marks = Some(Marks { common, marked });
                }
                Ok(counts.into_iter().fold((0, false), sum))
            }
        }
    }
}

/// A copy of a sketch through its encoding (sketches need not be `Clone`).
fn encode_copy<S: Sketch>(sketch: &S) -> S {
    let mut bytes = Vec::new();
    sketch.encode(&mut bytes);
    // A sketch decodes what it encoded; the round trip is tested for every method.
    S::decode(&bytes).unwrap_or_else(|_| unreachable_decode())
}

#[cold]
fn unreachable_decode() -> ! {
    unreachable!("a sketch failed to decode its own encoding")
}

/// Decodes a spilled sketch and marks it again when it was marked.
fn decode<M: Method>(
    method: &M,
    marks: Option<&Marks>,
    document: u32,
    bytes: &[u8],
) -> Result<M::Sketch> {
    let mut sketch = M::Sketch::decode(bytes)
        .map_err(|e| spill_error(format!("a spilled sketch did not read back: {e}")))?;
    if let Some(marks) = marks {
        if marks.marked[document as usize] {
            let is_common = |value: u32| marks.common.contains(value);
            method.mark_common(&mut sketch, &is_common);
        }
    }
    Ok(sketch)
}

/// Builds a [`SketchStore`] document by document, in order.
pub(crate) enum StoreBuilder<S> {
    Memory(Vec<S>),
    Spilled {
        spill: Box<dyn Spill>,
        offsets: Offsets,
        buffer: Vec<u8>,
        /// The pre-checks and a buffer for them (see [`Prechecks`]); none for a method
        /// without them, or for a resumed run's store (its earlier documents have none).
        prechecks: Option<(Prechecks, Vec<u8>)>,
    },
}

impl<S: Sketch> StoreBuilder<S> {
    /// A builder with room for `documents` sketches (0 when the count is not known).
    pub(crate) fn new(
        spill: Option<Box<dyn Spill>>,
        prechecks: Option<Prechecks>,
        documents: usize,
    ) -> StoreBuilder<S> {
        match spill {
            None => StoreBuilder::Memory(Vec::with_capacity(documents)),
            Some(spill) => {
                let mut offsets = Offsets::with_capacity(documents + 1);
                offsets.push(0);
                StoreBuilder::Spilled {
                    spill,
                    offsets,
                    buffer: Vec::new(),
                    prechecks: prechecks.map(|p| (p, Vec::new())),
                }
            }
        }
    }

    /// Adds the sketches of the next documents.
    pub(crate) fn extend<M: Method<Sketch = S>>(
        &mut self,
        method: &M,
        sketches: Vec<S>,
    ) -> Result<()> {
        match self {
            StoreBuilder::Memory(all) => all.extend(sketches),
            StoreBuilder::Spilled {
                spill,
                offsets,
                buffer,
                prechecks,
            } => {
                if let Some((prechecks, bytes)) = prechecks {
                    let width = prechecks.width;
                    bytes.clear();
                    bytes.resize(width * sketches.len(), 0);
                    if let Some(check) = method.pair_precheck().filter(|_| width > 0) {
                        (bytes.par_chunks_mut(width).zip(&sketches))
                            .for_each(|(out, sketch)| (check.write)(method, sketch, out));
                    }
                    prechecks.spill.append(bytes).map_err(spill_error)?;
                }
                let encoded: Vec<Vec<u8>> = sketches
                    .into_par_iter()
                    .map(|sketch| {
                        let mut bytes = Vec::new();
                        sketch.encode(&mut bytes);
                        bytes
                    })
                    .collect();
                buffer.clear();
                let mut end = offsets.last();
                for bytes in &encoded {
                    buffer.extend_from_slice(bytes);
                    end += bytes.len() as u64;
                    offsets.push(end);
                }
                spill.append(buffer).map_err(spill_error)?;
            }
        }
        Ok(())
    }

    /// Makes every sketch added so far readable from the spill; the offsets of the spilled
    /// sketches (`None` for a store in memory).
    pub(crate) fn flushed_offsets(&mut self) -> Result<Option<&Offsets>> {
        match self {
            StoreBuilder::Memory(_) => Ok(None),
            StoreBuilder::Spilled { spill, offsets, .. } => {
                spill.flush().map_err(spill_error)?;
                Ok(Some(offsets))
            }
        }
    }

    /// A store whose sketches an earlier run spilled to `spill` at `offsets`.
    pub(crate) fn reopened(spill: Box<dyn Spill>, given: Vec<u64>) -> Result<StoreBuilder<S>> {
        if given.first() != Some(&0) || given.windows(2).any(|w| w[1] < w[0]) {
            return Err(spill_error(
                "the sketch offsets of the checkpoint do not start at 0 and go up".to_owned(),
            ));
        }
        let mut offsets = Offsets::with_capacity(given.len());
        for offset in given {
            offsets.push(offset);
        }
        if let Some(end) = Some(offsets.last()).filter(|&end| end > 0) {
            let mut last = [0u8; 1];
            spill.read_at(end - 1, &mut last).map_err(|e| {
                spill_error(format!(
                    "the sketches of the checkpoint are incomplete: {e}"
                ))
            })?;
        }
        Ok(StoreBuilder::Spilled {
            spill,
            offsets,
            buffer: Vec::new(),
            prechecks: None,
        })
    }

    /// The finished store.
    pub(crate) fn finish(self) -> Result<SketchStore<S>> {
        match self {
            StoreBuilder::Memory(all) => Ok(SketchStore::Memory(all)),
            StoreBuilder::Spilled {
                mut spill,
                offsets,
                prechecks,
                ..
            } => {
                spill.flush().map_err(spill_error)?;
                let prechecks = match prechecks {
                    Some((mut prechecks, _)) => {
                        prechecks.spill.flush().map_err(spill_error)?;
                        Some(prechecks)
                    }
                    None => None,
                };
                Ok(SketchStore::Spilled(Encoded {
                    spill,
                    offsets,
                    marks: None,
                    prechecks,
                }))
            }
        }
    }
}
