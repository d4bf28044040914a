//! Checkpoints of a spilling sketch stage: what [`Sketcher::checkpoint`] saves and
//! [`Sketcher::resume`] reads back (the facts and notes of every document sketched so far,
//! and where its sketch is in the spill). The byte layout is the checkpoint format that
//! `dedup --resume` keeps between runs: it does not change.

use std::time::Instant;

use neardup_core::codec::{self, Decoder, Encoder};
use neardup_core::{Error, Method, Result};

use super::sketch::{Facts, FirstLines, NoteTotals, Sketcher};
use crate::sketch_store::{Spilling, StoreBuilder};

impl<'m, M: Method> Sketcher<'m, M> {
    /// The state of a spilling sketch stage, to save as a checkpoint: the facts and notes of
    /// every document sketched so far and where its sketch is in the spill (which is
    /// flushed, and must be kept with the checkpoint). [`Sketcher::resume`] reads it back.
    ///
    /// # Errors
    /// A sketch stage that does not spill (parameter `checkpoint`), or a spill that cannot
    /// be written (parameter `temp_dir`).
    pub fn checkpoint(&mut self) -> Result<Vec<u8>> {
        let offsets = match self.store.flushed_offsets()? {
            Some(offsets) => offsets,
            None => {
                return Err(Error::invalid(
                    "checkpoint",
                    "only a spilling sketch stage saves checkpoints",
                ))
            }
        };
        let mut out = Encoder::new();
        out.u64(self.documents.map_or(u64::MAX, |d| d as u64));
        out.f64(self.started.elapsed().as_secs_f64());
        out.u64(offsets.len() as u64);
        for offset in offsets.iter() {
            out.u64(offset);
        }
        let facts = &self.facts;
        out.seq(&facts.identity, |out, &identity| out.u128(identity));
        out.seq(&facts.empty, |out, &empty| out.bool(empty));
        out.seq(&facts.exact_only, |out, &only| out.bool(only));
        out.seq(&facts.lengths, |out, &length| out.u32(length));
        out.u8(match facts.distances {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
        self.notes.encode(&mut out);
        let mut first: Vec<(u64, (u32, u32), Box<str>)> = (self.first_lines.shards.iter())
            .flat_map(|shard| {
                let map = shard
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                (map.iter())
                    .map(|(&key, (at, text))| (key, *at, text.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        first.sort_unstable();
        out.seq(&first, |out, (key, (document, position), text)| {
            out.u64(*key);
            out.u32(*document);
            out.u32(*position);
            out.str(text);
        });
        Ok(out.finish())
    }

    /// A sketch stage resumed from a [`Sketcher::checkpoint`] of the same method (learned
    /// the same way) and the same texts, its sketches in the spill `sketches` of
    /// `spilling`'s directory. Its seconds count on from the checkpoint's.
    ///
    /// # Errors
    /// The checkpoint is malformed (parameter `checkpoint`), or its spill is missing or
    /// shorter than it says (parameter `temp_dir`).
    pub fn resume(method: &'m M, checkpoint: &[u8], spilling: Spilling) -> Result<Sketcher<'m, M>> {
        let mut from = Decoder::new(checkpoint)?;
        let documents = match from.u64()? {
            u64::MAX => None,
            d => Some(usize::try_from(d).map_err(|_| codec::corrupt("a document count"))?),
        };
        let seconds = from.f64()?;
        let offsets = from.seq(8, |d| d.u64())?;
        let identity = from.seq(16, |d| d.u128())?;
        let empty = from.seq(1, |d| d.bool())?;
        let exact_only = from.seq(1, |d| d.bool())?;
        let lengths = from.seq(4, |d| d.u32())?;
        let distances = match from.u8()? {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            other => return Err(codec::corrupt(format!("distances {other}"))),
        };
        let notes = NoteTotals::decode(&mut from)?;
        let first = from.seq(24, |d| {
            Ok((d.u64()?, (d.u32()?, d.u32()?), Box::<str>::from(d.str()?)))
        })?;
        from.end()?;
        let count = lengths.len();
        if offsets.is_empty()
            || [
                identity.len(),
                empty.len(),
                exact_only.len(),
                offsets.len() - 1,
            ]
            .iter()
            .any(|&n| n != count)
        {
            return Err(codec::corrupt("its per-document lists differ in length"));
        }
        let first_lines = FirstLines::default();
        for (key, at, text) in first {
            first_lines.shards[(key % 64) as usize]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(key, (at, text));
        }
        let spill = (spilling.dir.open("sketches")).map_err(crate::sketch_store::spill_error)?;
        let store = StoreBuilder::reopened(spill, offsets)?;
        let started = Instant::now()
            .checked_sub(std::time::Duration::from_secs_f64(seconds.max(0.0)))
            .unwrap_or_else(Instant::now);
        Ok(Sketcher {
            method,
            documents,
            store,
            spilling: Some(spilling),
            facts: Facts {
                identity,
                empty,
                exact_only,
                lengths,
                distances,
            },
            notes,
            first_lines,
            started,
        })
    }
}

impl NoteTotals {
    fn encode(&self, out: &mut Encoder) {
        out.u64(self.discounted);
        out.u64(self.documents);
        out.u64(self.removed_lines);
        let mut counts: Vec<(u64, u64)> = self.counts.iter().map(|(&k, &n)| (k, n)).collect();
        counts.sort_unstable();
        out.seq(&counts, |out, &(key, documents)| {
            out.u64(key);
            out.u64(documents);
        });
    }

    fn decode(from: &mut Decoder<'_>) -> Result<NoteTotals> {
        let (discounted, documents, removed_lines) = (from.u64()?, from.u64()?, from.u64()?);
        let counts = from.seq(16, |d| Ok((d.u64()?, d.u64()?)))?;
        Ok(NoteTotals {
            discounted,
            documents,
            removed_lines,
            counts: counts.into_iter().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::batch::testing::Words;
    use crate::sketch_store::{Spill, SpillDir};
    use crate::{EngineOptions, NoProgress};

    /// A spill whose bytes outlive it, so that a resumed stage finds them.
    #[derive(Clone, Default)]
    struct Kept(Arc<Mutex<Vec<u8>>>);

    impl Spill for Kept {
        fn append(&mut self, bytes: &[u8]) -> std::result::Result<(), String> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(())
        }
        fn flush(&mut self) -> std::result::Result<(), String> {
            Ok(())
        }
        fn read_at(&self, offset: u64, buffer: &mut [u8]) -> std::result::Result<(), String> {
            let bytes = self.0.lock().unwrap();
            let start = offset as usize;
            let stored = bytes.get(start..start + buffer.len()).ok_or("cut short")?;
            buffer.copy_from_slice(stored);
            Ok(())
        }
    }

    #[derive(Default)]
    struct KeptDir(Mutex<HashMap<String, Kept>>);

    impl SpillDir for KeptDir {
        fn create(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String> {
            let spill = Kept::default();
            self.0
                .lock()
                .unwrap()
                .insert(name.to_owned(), spill.clone());
            Ok(Box::new(spill))
        }
        fn open(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String> {
            let spill = self.0.lock().unwrap().get(name).cloned();
            let spill = spill.ok_or_else(|| format!("no spill {name}"))?;
            Ok(Box::new(spill))
        }
    }

    fn spilling(dir: &Arc<KeptDir>) -> Spilling {
        Spilling {
            dir: dir.clone(),
            budget: 1 << 20,
        }
    }

    const TEXTS: [&str; 5] = ["a b c", "x y", "a b c", "a b d", "x y z"];

    #[test]
    fn a_resumed_stage_finishes_as_an_uninterrupted_one() {
        let (method, options) = (Words::default(), EngineOptions::default());
        let dir = Arc::new(KeptDir::default());
        let mut first = Sketcher::new(&method, Some(5), Some(spilling(&dir)), &NoProgress).unwrap();
        first.push(&TEXTS[..2], &NoProgress).unwrap();
        let saved = first.checkpoint().unwrap();
        drop(first);
        let mut resumed = Sketcher::resume(&method, &saved, spilling(&dir)).unwrap();
        assert_eq!(resumed.facts.lengths, vec![5, 3]);
        assert_eq!(resumed.documents, Some(5));
        resumed.push(&TEXTS[2..], &NoProgress).unwrap();
        let resumed = resumed.finish(options, &NoProgress).unwrap();
        let whole = crate::dedup(&method, &TEXTS, options, &NoProgress).unwrap();
        assert_eq!(resumed.assignment, whole.assignment);
        assert_eq!(resumed.groups, whole.groups);
        assert_eq!(resumed.assignment.duplicate_of[2], Some(0));
    }

    #[test]
    fn a_checkpoint_cut_short_is_refused() {
        let method = Words::default();
        let dir = Arc::new(KeptDir::default());
        let mut first = Sketcher::new(&method, None, Some(spilling(&dir)), &NoProgress).unwrap();
        first.push(&TEXTS, &NoProgress).unwrap();
        let saved = first.checkpoint().unwrap();
        let cut = Sketcher::resume(&method, &saved[..saved.len() - 1], spilling(&dir));
        assert!(cut.is_err());
    }

    #[test]
    fn an_in_memory_stage_has_no_checkpoint() {
        let method = Words::default();
        let mut sketcher = Sketcher::new(&method, None, None, &NoProgress).unwrap();
        let refused = sketcher.checkpoint().unwrap_err();
        assert!(refused.to_string().contains("checkpoint"), "{refused}");
    }

    #[test]
    fn note_totals_read_back() {
        let mut notes = NoteTotals {
            discounted: 5,
            documents: 2,
            removed_lines: 3,
            ..NoteTotals::default()
        };
        notes.counts.extend([(9, 2), (4, 1)]);
        let mut out = Encoder::new();
        notes.encode(&mut out);
        let bytes = out.finish();
        let mut from = Decoder::new(&bytes).unwrap();
        let read = NoteTotals::decode(&mut from).unwrap();
        from.end().unwrap();
        assert_eq!(
            (read.discounted, read.documents, read.removed_lines),
            (5, 2, 3)
        );
        assert_eq!(read.counts, notes.counts);
    }
}
