//! One collection: its partitions in memory and on disk, its writer, and its checks.
//!
//! # Semantics
//!
//! - **Check-and-insert is linearizable.** One writer thread per collection takes insert and
//!   delete jobs from a bounded queue, in order, and handles them in groups: each document of a
//!   group is checked against the stored documents *and* against the documents of its own
//!   group accepted before it, so of two identical texts exactly one is stored, whichever
//!   group they fall in. The accepted documents of a group are written with one `fdatasync`,
//!   and only then made visible and answered: an acknowledged insert is durable, and a check
//!   never sees a document that is not.
//! - **Checks** run on the callers' threads under a read lock, concurrently with the writer,
//!   which takes the write lock only to publish a durable group.
//! - **Retention.** A document's retention time is its insertion time, or its own `time`
//!   (`retention_by = time`). Documents older than the window are skipped by every check at
//!   once; partitions (a segment file and its index, about `partition_documents` documents or
//!   an eighth of the window) are dropped whole when all their documents have expired,
//!   oldest first, by the writer's maintenance every second.

//!
//! # Layout
//!
//! This module holds the collection's types and its small shared pieces; the rest is one
//! file per concern: `open` (replaying the segments), `find` (a check against the stored
//! documents), `apply` (a group of inserts), `writer` (the writer thread: commits,
//! deletes, partitions and maintenance), `merges` (the merge thread), `level_files` (the
//! index levels a restart loads), `summaries` (what a restart reads of a sealed segment), `counters` (the counters and accepted gaps kept
//! beside the segments), `learning` (frequencies learned from the stream), `docs` (the documents' packed metadata and the id map), `activity`
//! (the latest duplicates and the counters over time) and `any` (the operations the HTTP
//! layer calls).

mod activity;
mod any;
mod apply;
mod counters;
mod docs;
mod find;
mod learning;
mod level_files;
mod merges;
mod open;
mod summaries;
mod writer;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use neardup_core::registry::Registered;
use neardup_core::Method;
use neardup_engine::collection_index::{CollectionIndex, IndexEntry};
use tokio::sync::oneshot;

use crate::api::Stats;
pub use crate::api::{Found, Inserted, StoredDocument};
use crate::clock::Clock;
use crate::error::ServiceError;
use crate::settings::Settings;
use crate::store::Segment;
pub use counters::{accept_gap, Counters, ACCEPTED_GAPS_FILE};
use docs::{Doc, Docs, Ids};
pub use level_files::LEVEL_FILE_DOCS;

/// Documents handled in one group at most (one sync per group).
const MAX_GROUP: usize = 4096;
/// Jobs waiting in a collection's queue at most; senders wait beyond it.
const QUEUE: usize = 1024;
/// How far in the future a document's own time may be.
const MAX_FUTURE_MS: i64 = 3_600_000;
/// Candidates verified per checked text at most, nearest first (see `find`): above the
/// largest `limit` a check may ask for (100), so a check's answer is cut only in a flood.
pub const MAX_VERIFIED: usize = 128;

/// A document to check and insert, as the HTTP layer read it.
#[derive(Debug, Clone)]
pub struct NewDocument {
    /// The caller's id.
    pub id: String,
    /// The text.
    pub text: String,
    /// Its own time (milliseconds since the epoch), if given.
    pub time_ms: Option<i64>,
}

/// The collection operations the HTTP layer uses, whatever the method.
pub trait AnyCollection: Send + Sync {
    /// The name.
    fn name(&self) -> &str;
    /// The settings.
    fn settings(&self) -> &Settings;
    /// Sketches `documents` and queues them for check-and-insert; the answers, in order, come
    /// on the receiver once the group is durable. Blocks while the queue is full.
    ///
    /// # Errors
    /// The collection is closed.
    fn submit(
        &self,
        documents: Vec<NewDocument>,
    ) -> Result<oneshot::Receiver<Vec<Result<Inserted, ServiceError>>>, ServiceError>;
    /// The stored documents each text matches, best first, at most `limit` each.
    ///
    /// # Errors
    /// A store read failure.
    fn check(&self, texts: &[String], limit: usize) -> Result<Vec<Vec<Found>>, ServiceError>;
    /// A stored document; `None` when absent or expired.
    ///
    /// # Errors
    /// A store read failure.
    fn get(&self, id: &str) -> Result<Option<StoredDocument>, ServiceError>;
    /// Queues the deletion of `id`; the answer (`true` when it was stored) comes once durable.
    ///
    /// # Errors
    /// The collection is closed.
    fn delete(
        &self,
        id: &str,
    ) -> Result<oneshot::Receiver<Result<bool, ServiceError>>, ServiceError>;
    /// Queues the retention maintenance (the oldest partitions whose documents have all
    /// expired are dropped), which the writer otherwise runs every second; the receiver
    /// completes once it ran.
    ///
    /// # Errors
    /// The collection is closed.
    fn run_maintenance(&self) -> Result<oneshot::Receiver<()>, ServiceError>;
    /// Counts and sizes.
    fn stats(&self) -> Stats;
    /// The latest duplicates and the counters over the last day.
    fn activity(&self) -> crate::api::Activity;
    /// The counters.
    fn counters(&self) -> &Counters;
    /// Live documents.
    fn len(&self) -> u64;
    /// True when no document is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stops taking jobs, finishes the queued ones and waits for the writer.
    fn close(&self);
    /// The collection's folder.
    fn dir(&self) -> &Path;
}

/// A slice of the collection in arrival order: one segment file and its documents.
struct Partition {
    segment: Arc<Segment>,
    docs: Docs,
    /// The latest retention time of its documents.
    max_time: i64,
    /// When the partition was started.
    created_ms: i64,
    /// The tombstones its segment holds (for its summary, see `summaries`).
    deletes: Vec<u64>,
}

impl Partition {
    /// A partition without documents on `segment`, started at `created_ms`.
    fn empty(segment: Segment, created_ms: i64) -> Partition {
        Partition {
            segment: Arc::new(segment),
            docs: Docs::default(),
            max_time: i64::MIN,
            created_ms,
            deletes: Vec::new(),
        }
    }

    fn first_seq(&self) -> u64 {
        self.segment.first_seq()
    }
}

struct State {
    partitions: VecDeque<Partition>,
    /// One index over every partition: a check costs the same whatever the number of
    /// partitions (its Hamming levels grow geometrically, see [`CollectionIndex`]). Documents
    /// of dropped partitions are forgotten at the drop; a Hamming level may still name them
    /// until its next merge, and [`State::doc`] no longer finds them.
    index: CollectionIndex,
    ids: Ids,
    next_seq: u64,
}

/// The partition holding `seq` and the document.
fn doc_in(partitions: &VecDeque<Partition>, seq: u64) -> Option<(&Partition, Doc<'_>)> {
    let at = partitions.partition_point(|p| p.first_seq() <= seq);
    let partition = partitions.get(at.checked_sub(1)?)?;
    let doc = partition
        .docs
        .get(usize::try_from(seq - partition.first_seq()).ok()?)?;
    Some((partition, doc))
}

impl State {
    fn doc(&self, seq: u64) -> Option<(&Partition, Doc<'_>)> {
        doc_in(&self.partitions, seq)
    }

    /// The sequence number `id` maps to (live or not: callers check).
    fn seq_of(&self, id: &str) -> Option<u64> {
        self.ids
            .get(id, |seq| doc_in(&self.partitions, seq).map(|(_, d)| d.id))
    }

    /// Maps `id` to `seq`, a document already in its partition.
    fn map_id(&mut self, id: &str, seq: u64) {
        let partitions = &self.partitions;
        self.ids
            .insert(id, seq, |s| doc_in(partitions, s).map(|(_, d)| d.id));
    }

    /// Maps the id of every stored document to it (a later document takes its id over), less
    /// the deleted ones, as their tombstones did when written: the map built once, on two
    /// threads (see [`Ids::build`]). For a restart, whose tombstones were applied before.
    fn map_all_ids(&mut self) {
        let partitions = &self.partitions;
        let count = partitions.iter().map(|p| p.docs.len()).sum();
        let docs = || {
            partitions.iter().flat_map(|p| {
                let first = p.first_seq();
                (p.docs.iter().enumerate()).map(move |(at, d)| (d.id, first + at as u64, d.live))
            })
        };
        let id_of = |s| doc_in(partitions, s).map(|(_, d): (_, Doc<'_>)| d.id);
        self.ids = Ids::build(count, docs, id_of);
    }
}

/// Where a job's answers go, in order.
type Reply = oneshot::Sender<Vec<Result<Inserted, ServiceError>>>;

struct Prepared<M: Method> {
    id: String,
    time_ms: Option<i64>,
    text: Option<String>,
    sketch: M::Sketch,
    entry: IndexEntry,
    /// The features the stream's frequencies count for it (empty without learning).
    features: learning::Features,
}

enum Job<M: Method> {
    Insert {
        documents: Vec<Prepared<M>>,
        reply: Reply,
    },
    Delete {
        id: String,
        reply: oneshot::Sender<Result<bool, ServiceError>>,
    },
    /// Run the retention maintenance now.
    Maintain { reply: oneshot::Sender<()> },
}

/// A collection of method `M`.
pub struct Collection<M: Registered> {
    name: String,
    dir: PathBuf,
    settings: Settings,
    method: M,
    window_ms: Option<i64>,
    max_radius: u32,
    state: RwLock<State>,
    queue: Mutex<Option<SyncSender<Job<M>>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// Signals the merge thread (see `merges`).
    merges: Mutex<Option<SyncSender<()>>>,
    /// The merge thread.
    merger: Mutex<Option<JoinHandle<()>>>,
    /// Set when a sync failed: the collection answers 500 until restarted.
    failed: Mutex<Option<String>>,
    counters: Counters,
    /// The counters as last saved to `counters.json`.
    saved: Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// The time source (retention, insertion times).
    clock: Arc<dyn Clock>,
    /// The latest duplicates and the sampled counters.
    activity: activity::Activity,
    /// Frequencies learned from the stream (`max_df`, `boilerplate_df`), when set.
    learning: Option<learning::Learning<M>>,
    /// The index's level files, kept by the merge thread.
    level_files: Mutex<level_files::LevelFiles>,
    /// The summaries of the sealed segments, kept by the merge thread.
    summaries: Mutex<summaries::Summaries>,
}

impl<M: Registered + 'static> Collection<M> {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn newest_segment(&self) -> Result<Arc<Segment>, ServiceError> {
        let state = self.read();
        let partition = state.partitions.back().ok_or_else(|| {
            ServiceError::new(500, "internal", "a collection without a partition")
        })?;
        Ok(Arc::clone(&partition.segment))
    }

    fn expired(&self, time_ms: i64, now: i64) -> bool {
        self.window_ms.is_some_and(|w| time_ms <= now - w)
    }

    fn prepare(&self, document: NewDocument) -> Prepared<M> {
        let (sketch, features) = match &self.learning {
            Some(learning) => learning.sketch(&document.text),
            None => (self.method.sketch(&document.text), Default::default()),
        };
        let entry = IndexEntry::of(&self.method, &sketch);
        Prepared {
            id: document.id,
            time_ms: document.time_ms,
            text: self.settings.keep_text.then_some(document.text),
            sketch,
            entry,
            features,
        }
    }

    fn check_failed(&self) -> Result<(), ServiceError> {
        match &*lock(&self.failed) {
            Some(message) => Err(ServiceError::new(
                500,
                "store_failed",
                format!(
                    "collection {:?} stopped writing after a failed sync ({message}); restart \
                     the service to recover from its durable state",
                    self.name
                ),
            )),
            None => Ok(()),
        }
    }

    /// The stored document called `id`, unless it was deleted or has expired (then the id is
    /// free: it is gone for every route).
    fn live_id(&self, state: &State, id: &str, now: i64) -> Option<u64> {
        let seq = state.seq_of(id)?;
        let (_, doc) = state.doc(seq)?;
        (doc.live && !self.expired(doc.time_ms, now)).then_some(seq)
    }
}

/// Marks `seq` deleted: out of the id map and the near-duplicate index.
fn kill(state: &mut State, seq: u64) {
    let State {
        partitions,
        index,
        ids,
        ..
    } = state;
    let at = partitions.partition_point(|p| p.first_seq() <= seq);
    let Some(partition) = at.checked_sub(1).and_then(|at| partitions.get_mut(at)) else {
        return;
    };
    let at = (seq - partition.segment.first_seq()) as usize;
    if partition.docs.kill(at) {
        index.remove(seq);
        if let Some(doc) = partition.docs.get(at) {
            ids.remove_if(doc.id, seq);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
