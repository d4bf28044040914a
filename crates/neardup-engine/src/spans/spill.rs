//! The substring level under a memory budget: anchors written in sorted runs to a spill,
//! merged back in key order, and walked group by group. The texts stay in memory; the
//! anchors (about 1.1 bytes per byte of English text at the default length) do not.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use neardup_index::spill_dir::{Spill, SpillDir};
use rayon::prelude::*;

use super::windows::{for_each_anchors, kgram_length, Anchor, Group};
use super::{check_corpus, FoundSpans, Removal, SpanCount, SpanError, SpanLevel, SpanOptions};

/// Bytes of one anchor in a run: key (two u32), document, byte, r low and high (u16).
const ANCHOR_BYTES: usize = 20;

/// Anchors read back from a run at a time.
const READ_ANCHORS: usize = 4096;

/// [`super::find_spans`] holding at most about `budget` bytes of anchors at once: past it,
/// the anchors go to sorted runs in a spill of `dir` and are merged back. The answer is the
/// same. The line and sentence levels do not spill (they hold one entry per distinct unit).
///
/// # Errors
/// As [`super::find_spans`], and [`SpanError::Spill`] when the spill cannot be written or
/// read.
pub fn find_spans_spilling<S: AsRef<str> + Sync>(
    texts: &[S],
    options: &SpanOptions,
    dir: &dyn SpillDir,
    budget: usize,
) -> Result<FoundSpans, SpanError> {
    if options.level != SpanLevel::Substring {
        return super::find_spans(texts, options);
    }
    check_corpus(texts, options)?;
    // A run's buffer, the documents' anchors being added to it, and the batch of merged
    // groups being walked: three of them at most at once.
    let per_run = (budget / ANCHOR_BYTES / 3).max(16);
    let (spill, runs) = write_runs(texts, options, dir, per_run)?;
    let mut merged = Merge::new(spill.as_ref(), &runs)?;
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    let mut batch: Vec<Anchor> = Vec::new();
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut group_start = 0;
    while let Some(anchor) = merged.next()? {
        if batch
            .get(group_start)
            .is_some_and(|first| first.key() != anchor.key())
        {
            close_group(&mut batch, &mut groups, group_start, options);
            if batch.len() >= per_run {
                walk(texts, &batch, &groups, options, &mut removed, &mut kept);
                batch.clear();
                groups.clear();
            }
            group_start = batch.len();
        }
        batch.push(anchor);
    }
    close_group(&mut batch, &mut groups, group_start, options);
    walk(texts, &batch, &groups, options, &mut removed, &mut kept);
    let spilled: usize = runs.iter().map(|&(_, count)| count).sum();
    let found = FoundSpans::new(removed, kept, texts.len());
    Ok(found.with_spilled((spilled * ANCHOR_BYTES) as u64))
}

/// Keeps the group `batch[start..]` if its documents (or occurrences) reach `min_count`,
/// else drops its anchors.
fn close_group(
    batch: &mut Vec<Anchor>,
    groups: &mut Vec<std::ops::Range<usize>>,
    start: usize,
    options: &SpanOptions,
) {
    let mut count = 0;
    let mut last_doc = None;
    for anchor in &batch[start..] {
        if options.count == SpanCount::Occurrences || last_doc != Some(anchor.doc) {
            count += 1;
            last_doc = Some(anchor.doc);
        }
    }
    if count >= options.min_count {
        groups.push(start..batch.len());
    } else {
        batch.truncate(start);
    }
}

/// Walks the groups of a batch in parallel, adding their marks.
fn walk<S: AsRef<str> + Sync>(
    texts: &[S],
    batch: &[Anchor],
    groups: &[std::ops::Range<usize>],
    options: &SpanOptions,
    removed: &mut Vec<Removal>,
    kept: &mut Vec<Removal>,
) {
    let found: Vec<_> = groups
        .par_iter()
        .map(|range| {
            let members = &batch[range.clone()];
            let text = |member: usize| texts[members[member].doc as usize].as_ref();
            Group::new(&text, members, options).walk()
        })
        .collect();
    for (group_removed, group_kept) in found {
        removed.extend(group_removed.into_iter().map(|(_, mark)| mark));
        kept.extend(group_kept.into_iter().map(|(_, mark)| mark));
    }
}

/// A run in the spill: its first anchor's index, and its anchors.
type Run = (u64, usize);

/// An anchor's place in the merge: its order, and its run.
type Head = Reverse<((u64, u32, u32), usize)>;

/// Writes the corpus's anchors in sorted runs of at most `per_run`: the spill and each run's
/// (first anchor, anchors).
fn write_runs<S: AsRef<str> + Sync>(
    texts: &[S],
    options: &SpanOptions,
    dir: &dyn SpillDir,
    per_run: usize,
) -> Result<(Box<dyn Spill>, Vec<Run>), SpanError> {
    let n = options.min_length;
    let k = kgram_length(n).min(n);
    let mut spill = dir.create("span-anchors").map_err(SpanError::Spill)?;
    let mut runs = Vec::new();
    let mut written = 0u64;
    let mut buffer: Vec<Anchor> = Vec::new();
    let mut flush = |buffer: &mut Vec<Anchor>| -> Result<(), SpanError> {
        buffer.par_sort_unstable_by_key(Anchor::order);
        let mut bytes = Vec::with_capacity(buffer.len() * ANCHOR_BYTES);
        for anchor in buffer.iter() {
            encode(anchor, &mut bytes);
        }
        spill.append(&bytes).map_err(SpanError::Spill)?;
        runs.push((written, buffer.len()));
        written += buffer.len() as u64;
        buffer.clear();
        Ok(())
    };
    // Documents a few at a time, in parallel: at most a run's worth of text.
    for_each_anchors(texts, n, k, per_run, |part| {
        buffer.extend_from_slice(&part);
        if buffer.len() >= per_run {
            flush(&mut buffer)?;
        }
        Ok(())
    })?;
    if !buffer.is_empty() {
        flush(&mut buffer)?;
    }
    spill.flush().map_err(SpanError::Spill)?;
    Ok((spill, runs))
}

fn encode(anchor: &Anchor, bytes: &mut Vec<u8>) {
    for value in [anchor.key_high, anchor.key_low, anchor.doc, anchor.byte] {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    bytes.extend_from_slice(&anchor.r_low.to_le_bytes());
    bytes.extend_from_slice(&anchor.r_high.to_le_bytes());
}

fn decode(bytes: &[u8]) -> Anchor {
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Anchor {
        key_high: word(0),
        key_low: word(4),
        doc: word(8),
        byte: word(12),
        r_low: u16::from_le_bytes([bytes[16], bytes[17]]),
        r_high: u16::from_le_bytes([bytes[18], bytes[19]]),
    }
}

/// The runs merged in key order: each read a few thousand anchors at a time.
struct Merge<'a> {
    spill: &'a dyn Spill,
    /// Per run: the next anchor to read (index in the spill), the anchors left, and those
    /// read but not yet merged (reversed: the next at the end).
    runs: Vec<(u64, usize, Vec<Anchor>)>,
    heap: BinaryHeap<Head>,
    bytes: Vec<u8>,
}

impl<'a> Merge<'a> {
    fn new(spill: &'a dyn Spill, runs: &[Run]) -> Result<Merge<'a>, SpanError> {
        let mut merge = Merge {
            spill,
            runs: runs
                .iter()
                .map(|&(at, count)| (at, count, Vec::new()))
                .collect(),
            heap: BinaryHeap::new(),
            bytes: Vec::new(),
        };
        for run in 0..merge.runs.len() {
            if let Some(anchor) = merge.take(run)? {
                merge.heap.push(Reverse((anchor.order(), run)));
                merge.runs[run].2.push(anchor);
            }
        }
        Ok(merge)
    }

    /// The next anchor of `run`, reading more from the spill when its buffer is empty.
    fn take(&mut self, run: usize) -> Result<Option<Anchor>, SpanError> {
        if self.runs[run].2.is_empty() {
            let (at, left, _) = self.runs[run];
            let count = left.min(READ_ANCHORS);
            if count == 0 {
                return Ok(None);
            }
            self.bytes.resize(count * ANCHOR_BYTES, 0);
            let offset = at * ANCHOR_BYTES as u64;
            self.spill
                .read_at(offset, &mut self.bytes)
                .map_err(SpanError::Spill)?;
            let mut read: Vec<Anchor> = self.bytes.chunks_exact(ANCHOR_BYTES).map(decode).collect();
            read.reverse();
            self.runs[run] = (at + count as u64, left - count, read);
        }
        Ok(self.runs[run].2.pop())
    }

    fn next(&mut self) -> Result<Option<Anchor>, SpanError> {
        let Some(Reverse((_, run))) = self.heap.pop() else {
            return Ok(None);
        };
        let anchor = self.runs[run]
            .2
            .pop()
            .expect("the heap's entry is the run's next anchor");
        if let Some(next) = self.take(run)? {
            self.heap.push(Reverse((next.order(), run)));
            self.runs[run].2.push(next);
        }
        Ok(Some(anchor))
    }
}
