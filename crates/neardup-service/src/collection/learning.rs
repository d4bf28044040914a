//! Frequencies learned from the stream of inserts, for a collection whose method takes
//! `max_df` or `boilerplate_df` (see [`neardup_engine::stream`]): the counts of a sliding
//! window, and the method as last learned from them, which sketches every new text.
//!
//! The callers' threads sketch with the learned method they find ([`Learning::sketch`]); the
//! writer counts the documents it answered, in order ([`Learning::count`]), and publishes a
//! newly learned method when the window says it is time. A check sketches as an insert
//! arriving at that moment would.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use neardup_core::boilerplate::DfFloors;
use neardup_core::codec::{Decoder, Encoder};
use neardup_core::hash::mix64;
use neardup_core::{CommonMarking, Method};
use neardup_engine::stream::{FrequencyOptions, StreamFrequencies, EPOCHS};

use super::lock;
use crate::api::StreamLearning;

/// The file of the saved window, in the collection's folder.
pub(super) const LEARNING_FILE: &str = "learning.bin";

/// The seed of the frequency keys of a sketch's set values (`common_shingles = check`).
const VALUE_SEED: u64 = 0x7661_6c75_6573_6b65;

/// The frequency-table key of a sketch's set value: top bit clear (line keys have it set),
/// hashed so that values do not sit next to shingle keys.
fn value_key(value: u32) -> u64 {
    mix64(u64::from(value) ^ VALUE_SEED) >> 1
}

/// The keys ([`value_key`]) of the set values common when a method was learned.
type CommonValues = hashbrown::HashSet<u64, foldhash::fast::FixedState>;

/// The method as learned at some point of the stream.
pub(super) struct Learned<M: Method> {
    method: M,
    /// The set values in more documents of the window than the limit (the limit beside),
    /// when the method marks common values (`max_df` with `common_shingles = check`): a set
    /// of a few thousand keys, so that marking a sketch's 150 values is 150 lookups in a
    /// table that stays in cache, not in the window's count-min tables.
    common: Option<(Arc<CommonValues>, u64)>,
}

impl<M: Method> Learned<M> {
    /// The sketch of `text`, its common set values marked.
    pub(super) fn sketch(&self, text: &str) -> M::Sketch {
        let mut sketch = self.method.sketch(text);
        self.mark(&mut sketch);
        sketch
    }

    /// Marks the common set values of `sketch` as learned now: a new text's, or a stored
    /// sketch read back for verification (marks are not stored), so that both sides of a
    /// pair are judged by one model and two fillings of a template are told apart by their
    /// fillings whenever the stored one arrived.
    pub(super) fn mark(&self, sketch: &mut M::Sketch) {
        if let Some((common, _)) = &self.common {
            let is_common = |value: u32| common.contains(&value_key(value));
            self.method.mark_common(sketch, &is_common);
        }
    }
}

/// What one document adds to the window: the keys of its lines (and of its shingles, for
/// `common_shingles = drop`), and the keys of its sketch's set values (for `max_df` with
/// `common_shingles = check`), counted in a table of their own so that the many values of
/// every document do not drown the few lines in one count-min table.
#[derive(Debug, Clone, Default)]
pub(super) struct Features {
    corpus: Vec<u64>,
    values: Vec<u64>,
}

/// A collection's stream learning.
pub(super) struct Learning<M: Method> {
    /// The method as configured (limits set, nothing learned).
    base: M,
    frequencies: Mutex<StreamFrequencies>,
    /// The set values' counts, when the method marks common values.
    values: Option<Mutex<StreamFrequencies>>,
    current: RwLock<Arc<Learned<M>>>,
    /// Times the method was learned.
    learned: AtomicU64,
    /// Where the window is saved.
    path: PathBuf,
    /// Documents counted when the window was last saved (or read).
    saved_at: AtomicU64,
}

impl<M: Method> Learning<M> {
    /// Learning for `method`, which sketches as with its limits off until the warm-up ends.
    ///
    /// # Errors
    /// Options out of range, naming the field.
    ///
    /// The window saved in `dir` is read back, and learned from when it is past its warm-up.
    pub(super) fn new(
        method: &M,
        options: FrequencyOptions,
        dir: &Path,
    ) -> neardup_core::Result<Self> {
        let values = match method.common_limit(1) {
            Some(_) => Some(Mutex::new(StreamFrequencies::new(options)?.noting())),
            None => None,
        };
        let learning = Learning {
            base: method.clone(),
            frequencies: Mutex::new(StreamFrequencies::new(options)?),
            values,
            current: RwLock::new(Arc::new(Learned {
                method: method.clone(),
                common: None,
            })),
            learned: Default::default(),
            path: dir.join(LEARNING_FILE),
            saved_at: AtomicU64::new(0),
        };
        learning.restore(options);
        Ok(learning)
    }

    /// Reads the saved window, if any, and learns from it.
    fn restore(&self, options: FrequencyOptions) {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return,
            Err(error) => {
                eprintln!(
                    "neardup: cannot read {}: {error}; the stream's frequencies start empty",
                    self.path.display()
                );
                return;
            }
        };
        let read = || -> neardup_core::Result<(StreamFrequencies, Option<StreamFrequencies>)> {
            let mut from = Decoder::new(&bytes)?;
            let frequencies = StreamFrequencies::decode(&mut from, options)?;
            let values = match (from.bool()?, &self.values) {
                (true, Some(_)) => Some(StreamFrequencies::decode(&mut from, options)?),
                (false, None) => None,
                _ => return Err(neardup_core::codec::corrupt("written for another method")),
            };
            from.end()?;
            Ok((frequencies, values))
        };
        match read() {
            Ok((frequencies, values)) => {
                let warm = frequencies.is_warm();
                self.saved_at
                    .store(frequencies.counted(), Ordering::Relaxed);
                *lock(&self.frequencies) = frequencies;
                if let (Some(mine), Some(values)) = (&self.values, values) {
                    *lock(mine) = values.noting();
                }
                if warm {
                    self.learn_now();
                }
            }
            Err(error) => {
                let aside = self.path.with_extension("bin.bad");
                let _ = std::fs::rename(&self.path, &aside);
                eprintln!(
                    "neardup: {} cannot be read ({error}); set aside as {}, the stream's \
                     frequencies start empty",
                    self.path.display(),
                    aside.display()
                );
            }
        }
    }

    /// Saves the window (atomically: a reader finds the old file or the new one).
    pub(super) fn save(&self) {
        let mut out = Encoder::new();
        let frequencies = lock(&self.frequencies);
        let counted = frequencies.counted();
        if counted == self.saved_at.load(Ordering::Relaxed) {
            return;
        }
        frequencies.encode(&mut out);
        drop(frequencies);
        out.bool(self.values.is_some());
        if let Some(values) = &self.values {
            lock(values).encode(&mut out);
        }
        match crate::store::write_atomic(&self.path, &out.finish()) {
            Ok(()) => self.saved_at.store(counted, Ordering::Relaxed),
            Err(error) => eprintln!("neardup: {error}; the stream's frequencies are not saved"),
        }
    }

    /// The method as last learned.
    pub(super) fn current(&self) -> Arc<Learned<M>> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The sketch of `text` with the method as last learned, and the distinct features the
    /// window counts for it.
    pub(super) fn sketch(&self, text: &str) -> (M::Sketch, Features) {
        let learned = self.current();
        let sketch = learned.sketch(text);
        let mut features = Features::default();
        self.base.corpus_features(text, &mut features.corpus);
        features.corpus.sort_unstable();
        features.corpus.dedup();
        if self.values.is_some() {
            let values = self.base.frequency_features(&sketch);
            features.values = values.iter().map(|&value| value_key(value)).collect();
            features.values.sort_unstable();
            features.values.dedup();
        }
        (sketch, features)
    }

    /// Counts one answered document; learns again when the window says it is time.
    pub(super) fn count(&self, features: &Features) {
        let values = self.values.as_ref().map(|values| {
            let mut values = lock(values);
            values.add(&features.values);
            values
        });
        let mut frequencies = lock(&self.frequencies);
        let (learn, counted) = (frequencies.add(&features.corpus), frequencies.counted());
        let epoch = frequencies.options().window / EPOCHS as u64;
        drop(frequencies);
        drop(values);
        if !learn {
            return;
        }
        self.learn_now();
        // Saved as learned while the window is young (the counts double), then once an epoch.
        let saved = self.saved_at.load(Ordering::Relaxed);
        if counted >= saved.saturating_mul(2) || counted.saturating_sub(saved) >= epoch {
            self.save();
        }
    }

    /// Learns from the window as it is now, and publishes the method learned.
    fn learn_now(&self) {
        let stats = Arc::new(lock(&self.frequencies).snapshot());
        let mut method = self.base.clone();
        method.set_frequency_floors(DfFloors::stream(stats.documents()));
        method.learn(&stats);
        let common = self.values.as_ref().and_then(|values| {
            let mut values = lock(values);
            let limit = method.common_limit(values.documents())?;
            let common = values.common_features(limit);
            let per_table = limit / EPOCHS as u64;
            values.set_watermark(u32::try_from(per_table).unwrap_or(u32::MAX));
            Some((Arc::new(common), limit))
        });
        let learned = Arc::new(Learned { method, common });
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = learned;
        self.learned.fetch_add(1, Ordering::Relaxed);
    }

    /// What the stats route says of it.
    pub(super) fn report(&self) -> StreamLearning {
        let frequencies = lock(&self.frequencies);
        let current = self.current();
        let limits = current.method.learned_limits();
        let limit = |name: &str| {
            (limits.iter())
                .find(|(n, _)| *n == name)
                .map(|&(_, count)| count)
        };
        let options = frequencies.options();
        StreamLearning {
            window: options.window,
            warmup: options.warmup,
            documents: frequencies.documents(),
            counted: frequencies.counted(),
            warm: frequencies.is_warm(),
            learned: self.learned.load(Ordering::Relaxed),
            max_df: limit("max_df").or(current.common.as_ref().map(|c| c.1)),
            boilerplate_df: limit("boilerplate_df"),
            saturated: limit("table_saturated").is_some(),
            memory_bytes: (frequencies.memory_bytes()
                + (self.values.as_ref()).map_or(0, |values| lock(values).memory_bytes()))
                as u64,
        }
    }
}
