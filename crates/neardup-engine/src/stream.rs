//! Document frequencies learned from a stream: what an online index knows of its corpus.
//!
//! A batch run counts its whole corpus before sketching (the corpus pass). An online index
//! sees one document at a time, forever, so it counts the documents as they arrive over a
//! sliding window and applies the batch run's rules (`boilerplate_df` lines, `max_df` common
//! shingles) to the documents that come after:
//!
//! - **The window.** [`StreamFrequencies`] keeps [`EPOCHS`] tables of `window / EPOCHS`
//!   documents each: exact counts while they fit the table's memory, then count-min
//!   ([`CorpusStats::fit_within`]; the cells are the same as if counted there from the
//!   start), so that a collection that has seen a few documents holds a few kilobytes, not
//!   the tables' full memory. When the newest is
//!   full the oldest is dropped, so the counts cover between 7/8 of the window and the whole
//!   window: a template that stops recurring is forgotten, one that starts is learned. Memory
//!   is fixed by [`FrequencyOptions::memory`], whatever the stream.
//! - **Warm-up.** Nothing is learned before the window holds
//!   [`FrequencyOptions::warmup`] documents (100 by default): until then documents are
//!   sketched as with the limits off (a handful of documents tells nothing of what is
//!   frequent).
//! - **Learning.** At the end of the warm-up, then whenever the documents counted since the
//!   last learning reach the number counted before it, [`LEARN_EVERY`] (a 32nd of those
//!   counted once that is more, up to [`LEARN_EVERY_LARGE`]) or an epoch (the doubling keeps
//!   early learning quick, the other two bound how long a template that starts late in the
//!   stream goes unlearned, and the cost of learning at high rates), [`StreamFrequencies::add`] says it is time,
//!   and [`StreamFrequencies::snapshot`] gives the window's counts as one table for
//!   [`Method::learn`](neardup_core::Method::learn). Fractions resolve against the documents
//!   in the window, with floors that grow with them
//!   ([`DfFloors::stream`](neardup_core::boilerplate::DfFloors::stream)): a service learns
//!   a template after a handful of its notices, before it has answered fifty of them as
//!   duplicates of the first.
//! - **Cost.** A learning merges the window's tables: up to [`FrequencyOptions::memory`]
//!   bytes once they are count-min. A small window learns often (a window of 8 documents at
//!   every insert), so [`FrequencyOptions::check_learning_cost`] bounds the memory to
//!   [`MEMORY_PER_LEARNED_DOCUMENT`] for each document between two learnings; a front end
//!   refuses new settings past it (the service at creation, never a stored collection).
//!
//! What to count is the front end's rule; the service counts each inserted document that is
//! not an exact copy of one it holds (the batch run counts distinct contents once), so a text
//! reposted verbatim a thousand times does not become its own boilerplate.
//!
//! A document is sketched with what was learned when it arrived; a stored document keeps its
//! sketch. Two notices of one template that arrived before its lines were learned keep their
//! template lines in their sketches, and a later notice (stripped) still finds them when
//! their other lines agree.

use std::collections::VecDeque;

use hashbrown::HashSet;

use neardup_core::codec::{corrupt, Decoder, Encoder};
use neardup_core::{CorpusStats, Error, Result};

/// Tables of the window: the counts cover the last `EPOCHS - 1` full epochs and the newest.
pub const EPOCHS: usize = 8;

/// The default window: 1,000,000 documents.
pub const DEFAULT_WINDOW: u64 = 1_000_000;
/// The default warm-up: 100 documents.
pub const DEFAULT_WARMUP: u64 = 100;
/// Documents counted between two learnings at most while the stream is young (a learning
/// merges the window's tables: tens of milliseconds at the default memory).
pub const LEARN_EVERY: u64 = 2_000;
/// Documents counted between two learnings at most, later: the interval grows with the
/// documents counted (a 32nd of them) from [`LEARN_EVERY`] to this, so that a stream of tens
/// of thousands of inserts a second learns about once a second, not twenty-five times (at
/// 2,000 documents a learning, the learnings took a quarter of a 2-core server's time).
pub const LEARN_EVERY_LARGE: u64 = 32_768;
/// The default memory of all the window's tables and the learned snapshot: 36 MiB (4 MiB a
/// table).
pub const DEFAULT_MEMORY: usize = 36 << 20;
/// The most memory the tables may take: 4 GiB.
pub const MAX_MEMORY: usize = 4 << 30;
/// The most table memory a window may have for each document between two learnings (about
/// 2 MiB): what the largest memory has at its steady pace of one learning every
/// [`LEARN_EVERY`] documents. A learning merges the window's tables, up to
/// [`FrequencyOptions::memory`] bytes once they are count-min, so this bounds what an insert
/// pays for learning, amortised ([`FrequencyOptions::check_learning_cost`]).
pub const MEMORY_PER_LEARNED_DOCUMENT: usize = MAX_MEMORY.div_ceil(LEARN_EVERY as usize);

/// How a stream's frequencies are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrequencyOptions {
    /// Documents the counts cover at most.
    pub window: u64,
    /// Documents counted before anything is learned.
    pub warmup: u64,
    /// Bytes of the [`EPOCHS`] tables and the learned snapshot together.
    pub memory: usize,
}

impl Default for FrequencyOptions {
    fn default() -> FrequencyOptions {
        FrequencyOptions {
            window: DEFAULT_WINDOW,
            warmup: DEFAULT_WARMUP,
            memory: DEFAULT_MEMORY,
        }
    }
}

impl FrequencyOptions {
    /// Checks the options, naming the field: a window of at least [`EPOCHS`] documents, a
    /// warm-up of at least one document and at most the window, and from 64 KiB to
    /// [`MAX_MEMORY`].
    ///
    /// # Errors
    /// A value out of range, naming its field.
    pub fn check(&self) -> Result<()> {
        if self.window < EPOCHS as u64 {
            return Err(Error::invalid(
                "frequency_window",
                format!("{} (at least {EPOCHS} documents)", self.window),
            ));
        }
        if self.warmup == 0 || self.warmup > self.window {
            return Err(Error::invalid(
                "frequency_warmup",
                format!(
                    "{} (from 1 to the window, {} documents)",
                    self.warmup, self.window
                ),
            ));
        }
        if !(64 << 10..=MAX_MEMORY).contains(&self.memory) {
            return Err(Error::invalid(
                "frequency_memory",
                format!("{} bytes (from 65536 to {MAX_MEMORY})", self.memory),
            ));
        }
        Ok(())
    }

    /// Checks that learning is amortised: learning comes every eighth of the window or every
    /// [`LEARN_EVERY`] documents, whichever is sooner, and merges up to `memory` bytes, so
    /// `memory` may be at most [`MEMORY_PER_LEARNED_DOCUMENT`] for each document between two
    /// learnings. A window of 8 documents with 1 GiB learns at every insert and merges up to
    /// 1 GiB each time. [`FrequencyOptions::check`] does not ask this: a stored collection
    /// opens whatever its options; a new one is refused.
    ///
    /// # Errors
    /// `frequency_window`, naming the smallest window for this memory and the largest memory
    /// for this window.
    pub fn check_learning_cost(&self) -> Result<()> {
        let largest = self.largest_amortised_memory();
        if self.memory <= largest {
            return Ok(());
        }
        let epochs_needed = self.memory.div_ceil(MEMORY_PER_LEARNED_DOCUMENT) as u64;
        let pace = match self.learning_interval() {
            1 => "at every insert".to_owned(),
            n => format!("every {n} inserts"),
        };
        Err(Error::invalid(
            "frequency_window",
            format!(
                "{} documents with frequency_memory {}: learning would come {pace} and merge \
                 up to {} bytes of tables each time; give a window of at least {} documents, \
                 or frequency_memory at most {largest} bytes for this window (at most \
                 {MEMORY_PER_LEARNED_DOCUMENT} bytes a document between learnings)",
                self.window,
                self.memory,
                self.memory,
                epochs_needed * EPOCHS as u64,
            ),
        ))
    }

    /// Documents between two learnings once the window is past its doublings.
    pub fn learning_interval(&self) -> u64 {
        (self.window / EPOCHS as u64).clamp(1, LEARN_EVERY)
    }

    /// The most memory [`FrequencyOptions::check_learning_cost`] accepts for this window.
    pub fn largest_amortised_memory(&self) -> usize {
        (self.learning_interval() as usize).saturating_mul(MEMORY_PER_LEARNED_DOCUMENT)
    }

    /// Bytes of one table.
    fn table_memory(&self) -> usize {
        self.memory / (EPOCHS + 1)
    }
}

/// Document frequencies over a sliding window of a stream (see the module docs).
#[derive(Debug)]
pub struct StreamFrequencies {
    options: FrequencyOptions,
    epoch_documents: u64,
    /// Full epochs, oldest first: at most `EPOCHS - 1`.
    full: VecDeque<CorpusStats>,
    newest: CorpusStats,
    /// Documents counted since the start.
    counted: u64,
    /// When `counted` reaches this, it is time to learn.
    next_learning: u64,
    /// Features whose count in one table reached `watermark` ([`StreamFrequencies::add`]):
    /// the candidates of [`StreamFrequencies::common_features`], which a count-min table
    /// cannot list.
    noted: HashSet<u64, foldhash::fast::FixedState>,
    /// See `noted`; 1 (every feature, up to [`NOTED_BEFORE_LEARNING`]) until
    /// [`StreamFrequencies::set_watermark`].
    watermark: u32,
    /// Whether features are noted at all ([`StreamFrequencies::noting`]).
    noting: bool,
}

/// The most features noted before the first watermark (the warm-up notes every feature it
/// counts, as a count-min table cannot list them at the first learning): a warm-up of a
/// thousand documents of 160 features fits.
pub const NOTED_BEFORE_LEARNING: usize = 1 << 18;

impl StreamFrequencies {
    /// An empty window.
    ///
    /// # Errors
    /// Options [`FrequencyOptions::check`] refuses.
    pub fn new(options: FrequencyOptions) -> Result<StreamFrequencies> {
        options.check()?;
        Ok(StreamFrequencies {
            options,
            epoch_documents: options.window / EPOCHS as u64,
            full: VecDeque::new(),
            newest: CorpusStats::exact(),
            counted: 0,
            next_learning: options.warmup,
            noted: HashSet::default(),
            watermark: 1,
            noting: false,
        })
    }

    /// The options.
    pub fn options(&self) -> FrequencyOptions {
        self.options
    }

    /// Counts one document by its distinct features (as
    /// [`Method::corpus_features`](neardup_core::Method::corpus_features) gives them, without
    /// repeats). Returns true when it is time to learn ([`StreamFrequencies::snapshot`]).
    pub fn add(&mut self, features: &[u64]) -> bool {
        let noted = &mut self.noted;
        let room = match (self.noting, self.watermark) {
            (false, _) => 0,
            (true, 1) => NOTED_BEFORE_LEARNING,
            (true, _) => usize::MAX,
        };
        (self.newest).add_document_noting(features, self.watermark, |feature| {
            if noted.len() < room {
                noted.insert(feature);
            }
        });
        self.newest.fit_within(self.options.table_memory());
        self.counted += 1;
        if self.newest.documents() >= self.epoch_documents {
            let fresh = CorpusStats::exact();
            self.full
                .push_back(std::mem::replace(&mut self.newest, fresh));
            while self.full.len() >= EPOCHS {
                self.full.pop_front();
            }
        }
        if self.counted < self.next_learning || self.documents() < self.options.warmup {
            return false;
        }
        // At least 1: `counted` is, and an epoch (a window of at least EPOCHS documents).
        let pace = (self.counted / 32).clamp(LEARN_EVERY, LEARN_EVERY_LARGE);
        self.next_learning = self.counted + self.counted.min(self.epoch_documents).min(pace);
        true
    }

    /// The same window, noting the features it counts for
    /// [`StreamFrequencies::common_features`] (off by default: a window whose owner only
    /// takes snapshots holds nothing more than its tables).
    pub fn noting(mut self) -> StreamFrequencies {
        self.noting = true;
        self
    }

    /// Notes, from now on, every feature whose count in one of the window's tables reaches
    /// `min` as it is counted: the candidates of [`StreamFrequencies::common_features`]. A
    /// feature in more than `limit` documents of the window is in more than `limit /
    /// EPOCHS` of one table, so `min = limit / EPOCHS` misses none. A count-min estimate is
    /// the count plus the least of four cells' other counts, about the table's mean cell:
    /// half of the largest mean is added, so that a full table does not note every feature
    /// (at a million documents of 160 values each, the mean cell is about 80 and the
    /// watermark of `max_df` 0.1% 114: half a million rare values were noted).
    pub fn set_watermark(&mut self, min: u32) {
        let noise = (self.full.iter().chain([&self.newest]))
            .filter_map(CorpusStats::mean_cell)
            .fold(0.0, f64::max);
        self.watermark = min.max(2).saturating_add((noise / 2.0) as u32);
    }

    /// The documents of the window holding `feature` (an upper estimate once count-min).
    pub fn frequency(&self, feature: u64) -> u64 {
        (self.full.iter().chain([&self.newest]))
            .map(|table| u64::from(table.document_frequency(feature)))
            .sum()
    }

    /// The features in more than `limit` documents of the window, found among those noted
    /// as they were counted (see [`StreamFrequencies::set_watermark`]); the noted ones under
    /// the watermark now are forgotten. A few thousand features tested at a learning,
    /// instead of a count-min lookup for every feature of every document sketched.
    pub fn common_features(&mut self, limit: u64) -> HashSet<u64, foldhash::fast::FixedState> {
        let mut candidates: Vec<u64> = self.noted.iter().copied().collect();
        candidates.sort_unstable();
        // Each candidate's window count, and its largest count in one table: a noted feature
        // stays noted while that reaches the watermark (it would be noted again at its next
        // count anyway); the sums carry every table's noise, which a full table makes as
        // large as the limit.
        let counted: Vec<(u64, u64, u64)> = (candidates.into_iter())
            .map(|feature| {
                let counts = (self.full.iter().chain([&self.newest]))
                    .map(|table| u64::from(table.document_frequency(feature)));
                let (sum, peak) = counts.fold((0, 0), |(s, p), c| (s + c, p.max(c)));
                (feature, sum, peak)
            })
            .collect();
        let watermark = u64::from(self.watermark);
        self.noted = (counted.iter())
            .filter(|&&(_, _, peak)| peak >= watermark.min(limit))
            .map(|&(feature, _, _)| feature)
            .collect();
        (counted.into_iter())
            .filter(|&(_, df, _)| df > limit)
            .map(|(feature, _, _)| feature)
            .collect()
    }

    /// Documents in the window.
    pub fn documents(&self) -> u64 {
        self.full.iter().map(CorpusStats::documents).sum::<u64>() + self.newest.documents()
    }

    /// Documents counted since the start.
    pub fn counted(&self) -> u64 {
        self.counted
    }

    /// Whether the warm-up is over (the window holds [`FrequencyOptions::warmup`] documents
    /// or held them once).
    pub fn is_warm(&self) -> bool {
        self.counted >= self.options.warmup
    }

    /// The window's counts as one table.
    pub fn snapshot(&self) -> CorpusStats {
        let mut all = CorpusStats::exact();
        for table in self.full.iter().chain([&self.newest]) {
            all.merge(table.clone());
            all.fit_within(self.options.table_memory());
        }
        all
    }

    /// Appends the window to a checkpoint ([`neardup_core::codec`]): its options, what it
    /// counted and its tables, so that a service restarted reads the window it had.
    pub fn encode(&self, out: &mut Encoder) {
        out.u64(self.options.window);
        out.u64(self.options.warmup);
        out.u64(self.options.memory as u64);
        out.u64(self.counted);
        out.u64(self.next_learning);
        out.u64(self.full.len() as u64);
        for table in self.full.iter().chain([&self.newest]) {
            table.encode(out);
        }
        let mut noted: Vec<u64> = self.noted.iter().copied().collect();
        noted.sort_unstable();
        out.u32(self.watermark);
        out.seq(&noted, |out, &feature| out.u64(feature));
    }

    /// Reads a window written by [`StreamFrequencies::encode`] with the same `options`.
    ///
    /// # Errors
    /// The checkpoint is malformed, or was written with other options (parameter
    /// `checkpoint`).
    pub fn decode(from: &mut Decoder<'_>, options: FrequencyOptions) -> Result<Self> {
        let mut window = StreamFrequencies::new(options)?;
        let written = (from.u64()?, from.u64()?, from.u64()?);
        if written != (options.window, options.warmup, options.memory as u64) {
            return Err(corrupt(format!(
                "written with window {}, warm-up {}, memory {} (now {}, {}, {})",
                written.0, written.1, written.2, options.window, options.warmup, options.memory
            )));
        }
        window.counted = from.u64()?;
        window.next_learning = from.u64()?;
        let full = from.u64()?;
        if full >= EPOCHS as u64 {
            return Err(corrupt(format!(
                "{full} full epochs (at most {})",
                EPOCHS - 1
            )));
        }
        // Computed, not allocated: a 4 GiB window's table is 256 MiB, and a window read back
        // holds what it counted, not its memory (issue 44, item 3).
        let expected = CorpusStats::count_min_bytes(options.table_memory());
        let mut table = || -> Result<CorpusStats> {
            let table = CorpusStats::decode(from)?;
            if !table.is_exact() && table.memory_bytes() != expected {
                return Err(corrupt("a table of another size"));
            }
            Ok(table)
        };
        for _ in 0..full {
            let table = table()?;
            window.full.push_back(table);
        }
        window.newest = table()?;
        window.watermark = from.u32()?;
        window.noted = from.seq(8, |d| d.u64())?.into_iter().collect();
        Ok(window)
    }

    /// Bytes held: the window's tables (a snapshot costs one more while it is used) and
    /// the features noted.
    pub fn memory_bytes(&self) -> usize {
        (self.full.iter().chain([&self.newest]))
            .map(CorpusStats::memory_bytes)
            .sum::<usize>()
            + self.noted.capacity() * 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(window: u64, warmup: u64) -> FrequencyOptions {
        FrequencyOptions {
            window,
            warmup,
            memory: 1 << 20,
        }
    }

    /// Learning starts at the warm-up, doubles, then comes once an epoch; the counts cover
    /// the window and forget what left it.
    #[test]
    fn the_window_counts_its_documents_and_says_when_to_learn() {
        let mut stream = StreamFrequencies::new(options(800, 50)).unwrap();
        let mut learned_at = Vec::new();
        for n in 1..=2000u64 {
            // Feature 1 in the first 400 documents only, feature 2 in every one, feature 3
            // in every tenth.
            let mut features = vec![2];
            if n <= 400 {
                features.push(1);
            }
            if n % 10 == 0 {
                features.push(3);
            }
            if stream.add(&features) {
                learned_at.push(n);
            }
            if n == 400 {
                let snapshot = stream.snapshot();
                assert_eq!(snapshot.documents(), 400);
                assert_eq!(snapshot.document_frequency(1), 400);
                assert_eq!(snapshot.document_frequency(3), 40);
            }
        }
        assert_eq!(&learned_at[..4], &[50, 100, 200, 300]);
        assert!(learned_at[4..].windows(2).all(|w| w[1] - w[0] == 100));
        assert!(!learned_at.is_empty() && stream.is_warm());
        // 7 full epochs of 100 and an empty newest one: the last 700 documents.
        let snapshot = stream.snapshot();
        assert_eq!(stream.documents(), 700);
        assert_eq!(snapshot.documents(), 700);
        assert_eq!(snapshot.document_frequency(2), 700);
        assert_eq!(snapshot.document_frequency(1), 0);
        assert_eq!(snapshot.document_frequency(3), 70);
    }

    /// A large window learns at the warm-up, doubles, then every [`LEARN_EVERY`] documents
    /// (not once an epoch of 125,000): a template that starts late is learned soon.
    #[test]
    fn a_large_window_learns_every_few_thousand_documents() {
        let options = FrequencyOptions {
            window: 1_000_000,
            warmup: 100,
            memory: 1 << 20,
        };
        let mut stream = StreamFrequencies::new(options).unwrap();
        let at: Vec<u64> = (1..=12_000u64).filter(|&n| stream.add(&[n])).collect();
        assert_eq!(&at[..6], &[100, 200, 400, 800, 1600, 3200]);
        assert!(
            at[5..].windows(2).all(|w| w[1] - w[0] == LEARN_EVERY),
            "{at:?}"
        );
        assert_eq!(FrequencyOptions::default().warmup, DEFAULT_WARMUP);
        // Past 64,000 documents the interval grows with the stream, up to 32,768.
        let late: Vec<u64> = (12_001..=2_000_000u64)
            .filter(|&n| stream.add(&[n]))
            .collect();
        let gaps: Vec<u64> = late.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).all(|g| g[0] <= g[1]), "{gaps:?}");
        assert_eq!(gaps.first(), Some(&LEARN_EVERY));
        assert_eq!(gaps.last(), Some(&LEARN_EVERY_LARGE));
    }

    /// The common features found among those noted as they were counted are the ones a
    /// lookup of every feature finds in exact tables; in count-min tables, roomy or so full
    /// that noise alone passes the limit, every feature truly over it is found, and nothing
    /// a lookup would not find (a lookup also finds, rarely, a feature counted once whose
    /// cells it shares with the common ones: never noted, it is not marked).
    #[test]
    fn common_features_are_found_as_they_are_counted() {
        let features_of = |n: u64| -> Vec<u64> {
            let mut features: Vec<u64> = (0..20).map(|i| 1000 + n * 20 + i).collect();
            // Feature k (1..=6) is in one document in 2^k.
            features.extend((1..=6u64).filter(|k| n.is_multiple_of(1 << k)));
            features
        };
        // Exact tables; roomy count-min; count-min so full that noise passes the limit.
        for (memory, mode) in [(1 << 30, 0), (1 << 22, 1), (1 << 16, 2)] {
            let options = FrequencyOptions {
                window: 8_000,
                warmup: 100,
                memory,
            };
            let mut stream = StreamFrequencies::new(options).unwrap().noting();
            let mut learned = 0;
            for n in 0..20_000u64 {
                if !stream.add(&features_of(n)) {
                    continue;
                }
                let limit = stream.documents() / 20;
                let found = stream.common_features(limit);
                stream.set_watermark((limit / EPOCHS as u64) as u32);
                learned += 1;
                let seen = (n.saturating_sub(stream.documents())..=n).flat_map(features_of);
                let mut all: Vec<u64> = seen.filter(|&f| stream.frequency(f) > limit).collect();
                all.sort_unstable();
                all.dedup();
                // In one document in 2, 4, 8 and 16: over 5%.
                for feature in (1..=6u64).filter(|k| (1u64 << k) < 20) {
                    assert!(
                        found.contains(&feature),
                        "{memory}: feature {feature} at {n}"
                    );
                }
                let mut found: Vec<u64> = found.into_iter().collect();
                found.sort_unstable();
                match mode {
                    0 => assert_eq!(found, all, "{memory} at {n}"),
                    1 => assert!(found.iter().all(|f| all.contains(f)), "{memory} at {n}"),
                    _ => {}
                }
            }
            assert!(learned > 10);
        }
    }

    /// A window written and read back counts and learns as the one written; one written
    /// with other options, cut short or changed is refused.
    #[test]
    fn a_window_round_trips_and_bad_checkpoints_are_refused() {
        let mut stream = StreamFrequencies::new(options(800, 50)).unwrap();
        for n in 1..=450u64 {
            stream.add(&[n % 7, 1000 + n]);
        }
        let mut out = Encoder::new();
        stream.encode(&mut out);
        let bytes = out.finish();
        let read = |bytes: &[u8], options| {
            let mut from = Decoder::new(bytes)?;
            let window = StreamFrequencies::decode(&mut from, options)?;
            from.end()?;
            Ok::<_, Error>(window)
        };
        let mut back = read(&bytes, options(800, 50)).unwrap();
        assert_eq!(back.documents(), stream.documents());
        assert_eq!(back.counted(), 450);
        assert_eq!(back.snapshot().document_frequency(3), 64);
        for n in 451..=1000u64 {
            assert_eq!(back.add(&[n % 7]), stream.add(&[n % 7]), "{n}");
        }
        assert!(read(&bytes, options(1600, 50)).is_err());
        assert!(read(&bytes[..bytes.len() / 2], options(800, 50)).is_err());
        let mut changed = bytes.clone();
        changed[20] ^= 1;
        assert!(read(&changed, options(800, 50)).is_err());
    }

    #[test]
    fn nothing_is_learned_before_the_warm_up() {
        let mut stream = StreamFrequencies::new(options(1000, 300)).unwrap();
        for n in 1..300 {
            assert!(!stream.add(&[n]), "{n}");
            assert!(!stream.is_warm());
        }
        assert!(stream.add(&[7]));
        assert!(stream.is_warm());
    }

    #[test]
    fn memory_stays_fixed_whatever_the_stream() {
        let options = options(1000, 10);
        let mut stream = StreamFrequencies::new(options).unwrap();
        stream.add(&[1, 2, 3]);
        let young = stream.memory_bytes();
        assert!(
            young < 4096,
            "a young window holds its few counts: {young} bytes"
        );
        for n in 0..5000u64 {
            let features: Vec<u64> = (0..200).map(|i| n * 1000 + i).collect();
            stream.add(&features);
        }
        let table = options.memory / (EPOCHS + 1);
        let full = stream.memory_bytes();
        assert!(full <= table * EPOCHS, "{full} bytes");
        let count_min = CorpusStats::count_min(table).memory_bytes();
        assert!(
            full >= count_min * (EPOCHS - 1),
            "count-min tables by now: {full} bytes"
        );
        // The snapshot is one table of the same memory, and counts as the tables do.
        let snapshot = stream.snapshot();
        assert!(!snapshot.is_exact() && snapshot.memory_bytes() <= table);
        assert!(snapshot.document_frequency(4_999_000) >= 1);
    }

    /// Issue 44, item 3: a window of 8 documents with 1 GiB learned at every insert, merging
    /// up to 1 GiB each time. Learning must be amortised: the refusal names the smallest
    /// window and the largest memory that are.
    #[test]
    fn regression_a_tiny_window_with_a_large_memory_is_refused() {
        let tiny = FrequencyOptions {
            window: 8,
            warmup: 8,
            memory: 1 << 30,
        };
        assert!(tiny.check().is_ok(), "a stored collection still opens");
        let error = tiny.check_learning_cost().unwrap_err();
        assert_eq!(error.parameter(), "frequency_window");
        let message = error.to_string();
        assert!(
            message.contains("learning would come at every insert"),
            "{message}"
        );
        assert!(message.contains("at least 4000 documents"), "{message}");
        assert!(message.contains("at most 2147484 bytes"), "{message}");
        // What the message suggests is accepted, and one step beyond is not.
        let window = FrequencyOptions {
            window: 4000,
            ..tiny
        };
        assert!(window.check_learning_cost().is_ok());
        let memory = FrequencyOptions {
            memory: MEMORY_PER_LEARNED_DOCUMENT,
            ..tiny
        };
        assert!(memory.check_learning_cost().is_ok());
        let over = FrequencyOptions {
            memory: MEMORY_PER_LEARNED_DOCUMENT + 1,
            ..tiny
        };
        assert!(over.check_learning_cost().is_err());
        // The defaults, and the largest memory at the default window, are amortised.
        assert!(FrequencyOptions::default().check_learning_cost().is_ok());
        let largest = FrequencyOptions {
            memory: MAX_MEMORY,
            ..FrequencyOptions::default()
        };
        assert!(largest.check_learning_cost().is_ok());
    }

    #[test]
    fn options_out_of_range_are_refused_by_name() {
        let refused = |o: FrequencyOptions| o.check().unwrap_err().parameter().to_owned();
        assert_eq!(refused(options(4, 1)), "frequency_window");
        assert_eq!(refused(options(100, 0)), "frequency_warmup");
        assert_eq!(refused(options(100, 101)), "frequency_warmup");
        let small = FrequencyOptions {
            memory: 1000,
            ..FrequencyOptions::default()
        };
        assert_eq!(refused(small), "frequency_memory");
        let huge = FrequencyOptions {
            memory: MAX_MEMORY + 1,
            ..FrequencyOptions::default()
        };
        assert_eq!(refused(huge), "frequency_memory");
        assert!(FrequencyOptions::default().check().is_ok());
    }
}
