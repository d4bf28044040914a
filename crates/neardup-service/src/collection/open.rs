//! Opening a collection: its segments replayed in order into partitions (documents, index,
//! tombstones applied), a torn tail of the newest cut, a gap in sequence numbers refused
//! unless `neardup salvage` accepted it; then its writer started.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex, RwLock};

use neardup_core::registry::Registered;
use neardup_engine::collection_index::{CollectionIndex, Loading};

use super::counters::{read_accepted_gaps, Counters};
use super::level_files::{LevelFiles, Restored};
use super::summaries::Summaries;
use super::{kill, lock, Collection, Docs, Ids, Partition, State, QUEUE};
use crate::clock::Clock;
use crate::error::ServiceError;
use crate::settings::Settings;
use crate::store::{self, Cut, Record, Recovery, Segment, StoreError};

/// One segment as read back.
struct Replayed {
    segment: Segment,
    cut: Cut,
    docs: Docs,
    /// The latest retention time of its documents.
    max_time: i64,
    /// The earliest insertion time of its documents (`i64::MAX`: none).
    created_ms: i64,
    /// The tombstones it holds.
    deletes: Vec<u64>,
    /// The sequence number of its first record.
    first: Option<u64>,
}

impl<M: Registered + 'static> Collection<M> {
    /// Opens the collection stored in `dir` (segments in `dir/segments`), replaying its
    /// segments over the index levels of its level files (`dir/index`, see `level_files`),
    /// and starts its writer; `clock` gives the time; a frozen level of at least
    /// `level_file_docs` documents gets a file.
    ///
    /// # Errors
    /// An unreadable or corrupt store, naming the file.
    pub fn open(
        name: &str,
        dir: &Path,
        settings: Settings,
        method: M,
        clock: Arc<dyn Clock>,
        level_file_docs: usize,
    ) -> Result<Arc<Collection<M>>, ServiceError> {
        let segments_dir = dir.join("segments");
        std::fs::create_dir_all(&segments_dir)
            .map_err(|e| StoreError::io(&segments_dir, "cannot create", &e))?;
        let max_radius = method.join().max_radius();
        let counters = Counters::load(dir)?;
        let paths = store::list_segments(&segments_dir)?;
        let accepted_gaps = read_accepted_gaps(dir)?;
        let (mut level_files, mut restored) =
            LevelFiles::open(name, &dir.join("index"), level_file_docs);
        if !accepted_gaps.is_empty() && !restored.is_empty() {
            // Documents taken out by a salvage may be in the levels.
            level_files.discard(name, "a salvage accepted a gap in the segments");
            restored.clear();
        }
        let opening = Opening {
            method: &method,
            max_radius,
            paths: &paths,
            accepted_gaps: &accepted_gaps,
            clock: clock.as_ref(),
        };
        let mut summaries = Summaries::new(&dir.join("docs"));
        let mut replayed = opening.replay_all(restored, &mut summaries)?;
        if let Err(why) = &replayed.fits {
            level_files.discard(name, why);
            replayed = opening.replay_all(Vec::new(), &mut summaries)?;
        }
        let Replay {
            mut state, cuts, ..
        } = replayed;
        for (path, cut) in &cuts {
            log_cut(name, path, cut);
            counters
                .recovered_bytes
                .fetch_add(cut.bytes, Ordering::Relaxed);
        }
        let kept = state.partitions.iter().map(Partition::first_seq).collect();
        summaries.remove_others(&kept);
        if state.partitions.is_empty() {
            let segment = Segment::create(&segments_dir, 0)?;
            let partition = Partition::empty(segment, clock.now_ms());
            state.partitions.push_back(partition);
        }
        let learning = match settings.frequency_options() {
            Some(options) => Some(super::learning::Learning::new(&method, options, dir)?),
            None => None,
        };
        let level_files = Mutex::new(level_files);
        let summaries = Mutex::new(summaries);
        let collection = Arc::new(Collection {
            name: name.to_owned(),
            dir: dir.to_owned(),
            window_ms: settings.window_ms(),
            settings,
            method,
            max_radius,
            state: RwLock::new(state),
            queue: Mutex::new(None),
            writer: Mutex::new(None),
            merges: Mutex::new(None),
            merger: Mutex::new(None),
            failed: Mutex::new(None),
            saved: Mutex::new(counters.snapshot()),
            counters,
            clock,
            activity: Default::default(),
            learning,
            level_files,
            summaries,
        });
        collection.start_merges()?;
        // The levels loaded are merged from the start, not at the first insert.
        collection.signal_merges();
        collection.start_writer()?;
        Ok(collection)
    }

    /// Starts a thread named `what-NAME` running `run` on the collection.
    pub(super) fn spawn(
        self: &Arc<Self>,
        what: &str,
        run: impl FnOnce(Arc<Self>) + Send + 'static,
    ) -> Result<std::thread::JoinHandle<()>, ServiceError> {
        let collection = Arc::clone(self);
        std::thread::Builder::new()
            .name(format!("{what}-{}", self.name))
            .spawn(move || run(collection))
            .map_err(|e| {
                ServiceError::new(
                    500,
                    "internal",
                    format!("cannot start a {what} thread: {e}"),
                )
            })
    }

    /// Starts the writer thread on a new queue.
    fn start_writer(self: &Arc<Self>) -> Result<(), ServiceError> {
        let (sender, receiver) = mpsc::sync_channel(QUEUE);
        *lock(&self.queue) = Some(sender);
        let handle = self.spawn("writer", move |writer| writer.run(receiver))?;
        *lock(&self.writer) = Some(handle);
        Ok(())
    }
}

/// What opening a collection reads from, and for.
struct Opening<'a, M> {
    method: &'a M,
    max_radius: u32,
    paths: &'a [std::path::PathBuf],
    accepted_gaps: &'a [(u64, u64)],
    clock: &'a dyn Clock,
}

/// The segments replayed.
struct Replay {
    state: State,
    /// The torn tails cut, per segment.
    cuts: Vec<(std::path::PathBuf, Cut)>,
    /// Whether the levels restored fit the segments (the reason when not).
    fits: Result<(), String>,
}

impl<M: Registered> Opening<'_, M> {
    /// Replays every segment in order into a new state: over the `restored` levels, whose
    /// documents are not gathered again, then a level of identities and one of keys per
    /// segment (each built by a sort), merged by the merge thread once serving.
    ///
    /// A sealed segment whose documents the restored levels all hold is read from its
    /// summary (see `summaries`) when it has a good one, not record by record.
    fn replay_all(
        &self,
        restored: Vec<Restored>,
        summaries: &mut Summaries,
    ) -> Result<Replay, ServiceError> {
        let mut state = State {
            partitions: VecDeque::new(),
            index: CollectionIndex::new(self.method, self.max_radius)?,
            ids: Ids::default(),
            next_seq: 0,
        };
        let mut fits = Ok(());
        let mut restored_last = None;
        for (kind, first, last, level) in restored {
            if let Err(e) = state.index.restore_level(kind, level, first, last) {
                fits = Err(e.to_string());
                break;
            }
            restored_last = restored_last.max(Some(last));
        }
        if fits.is_err() {
            return Ok(Replay {
                state,
                cuts: Vec::new(),
                fits,
            });
        }
        // Summaries are read only when the restored levels hold what the index needs.
        let covered = (state.index.restored_through()).filter(|_| !state.index.has_hamming());
        // Fingerprints of the whole collection, set in the index in one level at the end.
        let mut fingerprints = Vec::new();
        let mut cuts = Vec::new();
        for (i, path) in self.paths.iter().enumerate() {
            let recovery = if i + 1 == self.paths.len() {
                Recovery::CutTornTail
            } else {
                Recovery::Strict
            };
            let summarised = match (i + 1 < self.paths.len(), covered) {
                (true, Some(covered)) => summarised(path, covered, summaries),
                _ => None,
            };
            let mut loading = Loading::default();
            let replayed = match summarised {
                Some(replayed) => replayed,
                None => replay(
                    path,
                    recovery,
                    &state.index,
                    &mut loading,
                    &mut fingerprints,
                )?,
            };
            state.index.load(loading).map_err(|e| StoreError {
                path: path.clone(),
                message: format!("its documents cannot be indexed: {e}"),
                disk_full: false,
            })?;
            cuts.push((path.clone(), replayed.cut.clone()));
            if i > 0 {
                check_gap(path, &state, &replayed.segment, self.accepted_gaps)?;
            }
            add_partition(&mut state, path, replayed, self.clock)?;
        }
        if let Some(last) = restored_last.filter(|&last| last >= state.next_seq) {
            fits = Err(format!(
                "a level holds document {last}, the segments end before it, at {}",
                state.next_seq
            ));
        }
        let front = state.partitions.front().map(Partition::first_seq);
        if let (Some(first), Some(_)) = (front, restored_last) {
            // Levels restored may hold documents of partitions dropped since they were written.
            state.index.forget_below(first);
        }
        // Deleted documents were taken out of the keys as their tombstones were read; their
        // fingerprints are left out here.
        fingerprints.retain(|&(seq, _)| state.doc(seq).is_some_and(|(_, doc)| doc.live));
        state.index.set_fingerprints(&fingerprints)?;
        state.map_all_ids();
        state.index.set_deferred(true);
        Ok(Replay { state, cuts, fits })
    }
}

/// The sealed segment `path` as its summary tells it, when the summary holds together, the
/// segment is as it was summarised, and its documents are all at or below `covered` (the
/// restored levels hold them).
fn summarised(path: &Path, covered: u64, summaries: &mut Summaries) -> Option<Replayed> {
    let first_seq = store::segment_first_seq(path)?;
    let summary = summaries.read(first_seq)?;
    let count = summary.docs.len() as u64;
    if count > 0 && first_seq + count - 1 > covered {
        return None;
    }
    let segment = Segment::open_sealed(path, summary.segment_len).ok()?;
    Some(Replayed {
        segment,
        cut: Cut::default(),
        docs: summary.docs,
        max_time: summary.max_time,
        created_ms: summary.created_ms,
        deletes: summary.deletes,
        first: (count > 0).then_some(first_seq),
    })
}

/// Reads one segment: its documents in order, gathered for `index` in `loading` (their
/// fingerprints added to `fingerprints`), and its tombstones.
fn replay(
    path: &Path,
    recovery: Recovery,
    index: &CollectionIndex,
    loading: &mut Loading,
    fingerprints: &mut Vec<(u64, u64)>,
) -> Result<Replayed, ServiceError> {
    let mut docs = Docs::default();
    let mut max_time = i64::MIN;
    let mut created_ms = i64::MAX;
    let mut deletes = Vec::new();
    let mut first: Option<u64> = None;
    let (segment, cut) = Segment::open(path, recovery, |offset, len, record| {
        match record {
            Record::Insert(doc) => {
                let first = *first.get_or_insert(doc.seq);
                if doc.seq != first + docs.len() as u64 {
                    return Err(StoreError {
                        path: path.to_path_buf(),
                        message: format!(
                            "record at byte {offset}: sequence {} out of order",
                            doc.seq
                        ),
                        disk_full: false,
                    });
                }
                index.gather(loading, doc.seq, &doc.entry);
                if let (Some((fingerprint, _)), false) = (doc.entry.hamming, doc.entry.exact_only) {
                    fingerprints.push((doc.seq, fingerprint));
                }
                max_time = max_time.max(doc.time_ms);
                created_ms = created_ms.min(doc.inserted_ms);
                if !docs.push(&doc.id, doc.time_ms, offset, len) {
                    return Err(StoreError {
                        path: path.to_path_buf(),
                        message: format!(
                            "record at byte {offset}: the segment's ids pass {} bytes (written \
                             by an older version with larger partitions?)",
                            super::docs::MAX_PARTITION_ID_BYTES
                        ),
                        disk_full: false,
                    });
                }
            }
            Record::Delete(seq) => deletes.push(seq),
        }
        Ok(())
    })?;
    Ok(Replayed {
        segment,
        cut,
        docs,
        max_time,
        created_ms,
        deletes,
        first,
    })
}

fn log_cut(name: &str, path: &Path, cut: &Cut) {
    if cut.bytes > 0 {
        eprintln!(
            "neardup: collection {name:?}: cut {} bytes of a write torn by a crash at byte {} \
             of {} ({}); it was never acknowledged",
            cut.bytes,
            cut.offset,
            path.display(),
            cut.message
        );
    }
}

/// The segments follow each other without a gap: a missing file in the middle is lost
/// acknowledged documents, refused like a corrupt record, unless `neardup salvage` accepted
/// the gap.
fn check_gap(
    path: &Path,
    state: &State,
    segment: &Segment,
    accepted_gaps: &[(u64, u64)],
) -> Result<(), ServiceError> {
    if segment.first_seq() == state.next_seq
        || accepted_gaps.contains(&(state.next_seq, segment.first_seq()))
    {
        return Ok(());
    }
    Err(StoreError {
        path: path.to_owned(),
        message: format!(
            "documents {} to {} are missing: the segment before ends at sequence {} and this \
             one starts at {} (a segment file was removed?); see `neardup salvage` in \
             docs/service.md",
            state.next_seq,
            segment.first_seq().saturating_sub(1),
            state.next_seq,
            segment.first_seq()
        ),
        disk_full: false,
    }
    .into())
}

/// Adds a replayed segment to the state as its newest partition, then applies its tombstones
/// (to it or older ones).
fn add_partition(
    state: &mut State,
    path: &Path,
    replayed: Replayed,
    clock: &dyn Clock,
) -> Result<(), ServiceError> {
    let Replayed {
        segment,
        docs,
        max_time,
        created_ms,
        deletes,
        first,
        ..
    } = replayed;
    if let Some(first) = first {
        if first != segment.first_seq() {
            return Err(StoreError {
                path: path.to_owned(),
                message: format!(
                    "the first record has sequence {first}, the header {}",
                    segment.first_seq()
                ),
                disk_full: false,
            }
            .into());
        }
    }
    let first_seq = segment.first_seq();
    let count = docs.len() as u64;
    state.partitions.push_back(Partition {
        segment: Arc::new(segment),
        docs,
        max_time,
        created_ms: if created_ms == i64::MAX {
            clock.now_ms()
        } else {
            created_ms
        },
        deletes: deletes.clone(),
    });
    state.next_seq = first_seq + count;
    for seq in deletes {
        kill(state, seq);
    }
    Ok(())
}
