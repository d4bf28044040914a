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

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use neardup_core::registry::Registered;
use neardup_core::{Method, Sketch};
use neardup_engine::online::{rank, verify, IndexEntry, Match, PartitionIndex};
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::error::ServiceError;
use crate::settings::{format_time, RetentionBy, Settings};
use crate::store::{self, Insert, Record, Recovery, Segment, StoreError};

/// Documents handled in one group at most (one sync per group).
const MAX_GROUP: usize = 4096;
/// Jobs waiting in a collection's queue at most; senders wait beyond it.
const QUEUE: usize = 1024;
/// How far in the future a document's own time may be.
const MAX_FUTURE_MS: i64 = 3_600_000;
/// Candidates verified per checked text at most, nearest first (see `find`): above the
/// largest `limit` a check may ask for (100), so a check's answer is cut only in a flood.
pub const MAX_VERIFIED: usize = 128;
/// How often the writer looks for expired partitions.
const MAINTENANCE: Duration = Duration::from_secs(1);

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

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

/// The answer to one insert.
#[derive(Debug, Clone, PartialEq)]
pub struct Inserted {
    /// The id.
    pub id: String,
    /// Whether it was stored.
    pub stored: bool,
    /// The stored document it duplicates.
    pub duplicate_of: Option<String>,
    /// Their similarity.
    pub similarity: Option<f64>,
    /// Their Hamming distance, for fingerprint methods.
    pub distance: Option<u32>,
}

impl Inserted {
    /// The JSON answer.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "stored": self.stored,
            "duplicate_of": self.duplicate_of,
            "similarity": self.similarity,
            "distance": self.distance,
        })
    }
}

/// A stored document that a text matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its id.
    pub id: String,
    /// The verified similarity.
    pub similarity: f64,
    /// The Hamming distance, for fingerprint methods.
    pub distance: Option<u32>,
}

impl Found {
    /// The JSON form.
    pub fn to_json(&self) -> Value {
        json!({"id": self.id, "similarity": self.similarity, "distance": self.distance})
    }
}

/// Counters of a collection, for `/metrics` and `GET /v1/collections/{name}`.
#[derive(Debug, Default)]
pub struct Counters {
    /// Documents stored.
    pub stored: AtomicU64,
    /// Inserts answered as duplicates.
    pub duplicates: AtomicU64,
    /// Inserts refused (existing id, bad time, store failure).
    pub refused: AtomicU64,
    /// Texts checked.
    pub checks: AtomicU64,
    /// Groups written (one sync each).
    pub groups: AtomicU64,
    /// Documents deleted.
    pub deleted: AtomicU64,
    /// Documents expired (dropped with their partition).
    pub expired: AtomicU64,
    /// Partitions dropped.
    pub partitions_dropped: AtomicU64,
    /// Bytes cut from a torn write at opening.
    pub recovered_bytes: AtomicU64,
    /// Candidates left unverified by the per-text cap (template floods).
    pub candidates_capped: AtomicU64,
}

/// The file of a collection's counters, kept across restarts.
const COUNTERS_FILE: &str = "counters.json";
/// The file of the sequence gaps `neardup salvage` accepted.
pub const ACCEPTED_GAPS_FILE: &str = "accepted-gaps.json";

impl Counters {
    /// The counters by name, as stored in `counters.json` and shown by `stats`.
    fn all(&self) -> [(&'static str, &AtomicU64); 10] {
        [
            ("stored", &self.stored),
            ("duplicates", &self.duplicates),
            ("refused", &self.refused),
            ("checks", &self.checks),
            ("groups", &self.groups),
            ("deleted", &self.deleted),
            ("expired", &self.expired),
            ("partitions_dropped", &self.partitions_dropped),
            ("recovered_bytes", &self.recovered_bytes),
            ("candidates_capped", &self.candidates_capped),
        ]
    }

    fn snapshot(&self) -> std::collections::BTreeMap<&'static str, u64> {
        self.all()
            .into_iter()
            .map(|(name, counter)| (name, counter.load(Ordering::Relaxed)))
            .collect()
    }

    /// Counters as saved in `dir` (zero when never saved).
    ///
    /// # Errors
    /// A file that cannot be read or is not the counters' JSON.
    fn load(dir: &Path) -> Result<Counters, StoreError> {
        let counters = Counters::default();
        let path = dir.join(COUNTERS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(counters),
            Err(e) => return Err(StoreError::io(&path, "cannot read", &e)),
        };
        let saved: std::collections::BTreeMap<String, u64> = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError {
                path: path.clone(),
                message: format!("not the collection's counters: {e}"),
                disk_full: false,
            })?;
        for (name, counter) in counters.all() {
            counter.store(saved.get(name).copied().unwrap_or(0), Ordering::Relaxed);
        }
        Ok(counters)
    }
}

/// The gaps in sequence numbers that `neardup salvage` accepted: `(first missing, first after)`.
///
/// # Errors
/// An unreadable or malformed file.
fn read_accepted_gaps(dir: &Path) -> Result<Vec<(u64, u64)>, StoreError> {
    let path = dir.join(ACCEPTED_GAPS_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| StoreError {
            path: path.clone(),
            message: format!("not a list of [first missing, first after] pairs: {e}"),
            disk_full: false,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(StoreError::io(&path, "cannot read", &e)),
    }
}

/// Adds `gap` to the accepted gaps of the collection in `dir`.
///
/// # Errors
/// The file cannot be read or written.
pub fn accept_gap(dir: &Path, gap: (u64, u64)) -> Result<(), StoreError> {
    let mut gaps = read_accepted_gaps(dir)?;
    if !gaps.contains(&gap) {
        gaps.push(gap);
    }
    let bytes = serde_json::to_vec(&gaps).map_err(|e| StoreError {
        path: dir.join(ACCEPTED_GAPS_FILE),
        message: e.to_string(),
        disk_full: false,
    })?;
    store::write_atomic(&dir.join(ACCEPTED_GAPS_FILE), &bytes)
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
    /// A stored document, as JSON; `None` when absent or expired.
    ///
    /// # Errors
    /// A store read failure.
    fn get(&self, id: &str) -> Result<Option<Value>, ServiceError>;
    /// Queues the deletion of `id`; the answer (`true` when it was stored) comes once durable.
    ///
    /// # Errors
    /// The collection is closed.
    fn delete(
        &self,
        id: &str,
    ) -> Result<oneshot::Receiver<Result<bool, ServiceError>>, ServiceError>;
    /// Counts and sizes, as JSON.
    fn stats(&self) -> Value;
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

/// A document as kept in memory.
#[derive(Debug)]
struct Doc {
    id: Box<str>,
    time_ms: i64,
    offset: u64,
    len: u32,
    live: bool,
}

/// A slice of the collection in arrival order: one segment file and its index.
struct Partition {
    segment: Arc<Segment>,
    docs: Vec<Doc>,
    index: PartitionIndex,
    /// The latest retention time of its documents.
    max_time: i64,
    /// When the partition was started.
    created_ms: i64,
}

impl Partition {
    fn first_seq(&self) -> u64 {
        self.segment.first_seq()
    }
}

struct State {
    partitions: VecDeque<Partition>,
    ids: HashMap<Box<str>, u64, foldhash::fast::FixedState>,
    next_seq: u64,
    /// Bytes of the ids held by `ids` (for the memory estimate without a scan).
    id_bytes: usize,
}

impl State {
    fn partition_of(&self, seq: u64) -> Option<&Partition> {
        let at = self.partitions.partition_point(|p| p.first_seq() <= seq);
        let partition = self.partitions.get(at.checked_sub(1)?)?;
        ((seq - partition.first_seq()) < partition.docs.len() as u64).then_some(partition)
    }

    fn doc(&self, seq: u64) -> Option<(&Partition, &Doc)> {
        let partition = self.partition_of(seq)?;
        Some((
            partition,
            &partition.docs[(seq - partition.first_seq()) as usize],
        ))
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
}

enum Job<M: Method> {
    Insert {
        documents: Vec<Prepared<M>>,
        reply: oneshot::Sender<Vec<Result<Inserted, ServiceError>>>,
    },
    Delete {
        id: String,
        reply: oneshot::Sender<Result<bool, ServiceError>>,
    },
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
    /// Set when a sync failed: the collection answers 500 until restarted.
    failed: Mutex<Option<String>>,
    counters: Counters,
    /// The counters as last saved to `counters.json`.
    saved: Mutex<std::collections::BTreeMap<&'static str, u64>>,
}

impl<M: Registered + 'static> Collection<M> {
    /// Opens the collection stored in `dir` (segments in `dir/segments`), replaying its
    /// segments, and starts its writer.
    ///
    /// # Errors
    /// An unreadable or corrupt store, naming the file.
    pub fn open(
        name: &str,
        dir: &Path,
        settings: Settings,
        method: M,
    ) -> Result<Arc<Collection<M>>, ServiceError> {
        let segments_dir = dir.join("segments");
        std::fs::create_dir_all(&segments_dir)
            .map_err(|e| StoreError::io(&segments_dir, "cannot create", &e))?;
        let max_radius = method.max_radius();
        let counters = Counters::load(dir)?;
        let mut state = State {
            partitions: VecDeque::new(),
            ids: HashMap::default(),
            next_seq: 0,
            id_bytes: 0,
        };
        let paths = store::list_segments(&segments_dir)?;
        let count = paths.len();
        let accepted_gaps = read_accepted_gaps(dir)?;
        for (i, path) in paths.iter().enumerate() {
            let mut docs = Vec::new();
            let mut index = PartitionIndex::new(&method, max_radius)?;
            let mut max_time = i64::MIN;
            let mut created_ms = i64::MAX;
            let mut deletes = Vec::new();
            let mut fingerprints = Vec::new();
            let mut first: Option<u64> = None;
            let recovery = if i + 1 == count {
                Recovery::CutTornTail
            } else {
                Recovery::Strict
            };
            let (segment, cut) = Segment::open(path, recovery, |offset, len, record| {
                match record {
                    Record::Insert(doc) => {
                        let first = *first.get_or_insert(doc.seq);
                        if doc.seq != first + docs.len() as u64 {
                            return Err(StoreError {
                                path: path.clone(),
                                message: format!(
                                    "record at byte {offset}: sequence {} out of order",
                                    doc.seq
                                ),
                                disk_full: false,
                            });
                        }
                        index.insert_deferred(doc.seq, &doc.entry);
                        if let (Some((fingerprint, _)), false) =
                            (doc.entry.hamming, doc.entry.exact_only)
                        {
                            fingerprints.push((doc.seq, fingerprint));
                        }
                        max_time = max_time.max(doc.time_ms);
                        created_ms = created_ms.min(doc.inserted_ms);
                        docs.push(Doc {
                            id: doc.id.into_boxed_str(),
                            time_ms: doc.time_ms,
                            offset,
                            len,
                            live: true,
                        });
                    }
                    Record::Delete(seq) => deletes.push(seq),
                }
                Ok(())
            })?;
            if cut.bytes > 0 {
                eprintln!(
                    "neardup: collection {name:?}: cut {} bytes of a write torn by a crash at \
                     byte {} of {} ({}); it was never acknowledged",
                    cut.bytes,
                    cut.offset,
                    path.display(),
                    cut.message
                );
            }
            counters
                .recovered_bytes
                .fetch_add(cut.bytes, Ordering::Relaxed);
            // The segments follow each other without a gap: a missing file in the middle is
            // lost acknowledged documents, refused like a corrupt record.
            if i > 0
                && segment.first_seq() != state.next_seq
                && !accepted_gaps.contains(&(state.next_seq, segment.first_seq()))
            {
                return Err(StoreError {
                    path: path.clone(),
                    message: format!(
                        "documents {} to {} are missing: the segment before ends at sequence \
                         {} and this one starts at {} (a segment file was removed?); see \
                         `neardup salvage` in docs/service.md",
                        state.next_seq,
                        segment.first_seq().saturating_sub(1),
                        state.next_seq,
                        segment.first_seq()
                    ),
                    disk_full: false,
                }
                .into());
            }
            index.set_fingerprints(&fingerprints)?;
            drop(fingerprints);
            if let Some(first) = first {
                if first != segment.first_seq() {
                    return Err(StoreError {
                        path: path.clone(),
                        message: format!(
                            "the first record has sequence {first}, the header {}",
                            segment.first_seq()
                        ),
                        disk_full: false,
                    }
                    .into());
                }
            }
            for (seq, doc) in (segment.first_seq()..).zip(&docs) {
                if state.ids.insert(doc.id.clone(), seq).is_none() {
                    state.id_bytes += doc.id.len();
                }
            }
            state.next_seq = segment.first_seq() + docs.len() as u64;
            state.partitions.push_back(Partition {
                segment: Arc::new(segment),
                docs,
                index,
                max_time,
                created_ms: if created_ms == i64::MAX {
                    now_ms()
                } else {
                    created_ms
                },
            });
            // Tombstones refer to this partition or older ones.
            for seq in deletes {
                kill(&mut state, seq);
            }
        }
        if state.partitions.is_empty() {
            let segment = Segment::create(&segments_dir, 0)?;
            state.partitions.push_back(Partition {
                segment: Arc::new(segment),
                docs: Vec::new(),
                index: PartitionIndex::new(&method, max_radius)?,
                max_time: i64::MIN,
                created_ms: now_ms(),
            });
        }
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
            failed: Mutex::new(None),
            saved: Mutex::new(counters.snapshot()),
            counters,
        });
        let (sender, receiver) = mpsc::sync_channel(QUEUE);
        *lock(&collection.queue) = Some(sender);
        let writer = Arc::clone(&collection);
        let handle = std::thread::Builder::new()
            .name(format!("writer-{name}"))
            .spawn(move || writer.run(receiver))
            .map_err(|e| {
                ServiceError::new(500, "internal", format!("cannot start a writer: {e}"))
            })?;
        *lock(&collection.writer) = Some(handle);
        Ok(collection)
    }

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
        let sketch = self.method.sketch(&document.text);
        let entry = IndexEntry::of(&self.method, &sketch);
        Prepared {
            id: document.id,
            time_ms: document.time_ms,
            text: self.settings.keep_text.then_some(document.text),
            sketch,
            entry,
        }
    }

    /// The stored, live, unexpired documents that match, best first.
    fn find(
        &self,
        state: &State,
        sketch: &M::Sketch,
        entry: &IndexEntry,
        now: i64,
    ) -> Result<Vec<Match>, StoreError> {
        // Live, unexpired candidates of every partition: (exact copy first, distance, seq).
        let mut all: Vec<(bool, Option<u32>, u64, usize)> = Vec::new();
        let mut candidates = Vec::new();
        for (at, partition) in state.partitions.iter().enumerate() {
            if self.expired(partition.max_time, now) {
                continue;
            }
            let copy = partition.index.identity(entry.identity);
            let left_out = partition.index.candidates(entry, &mut candidates);
            self.counters
                .candidates_capped
                .fetch_add(left_out, Ordering::Relaxed);
            for &(seq, distance) in &candidates {
                let doc = &partition.docs[(seq - partition.first_seq()) as usize];
                if doc.live && !self.expired(doc.time_ms, now) {
                    all.push((copy != Some(seq), distance, seq, at));
                }
            }
        }
        // A template flood puts every stored notice within reach of every new one: verify
        // only the nearest (exact copies first, then by distance), and count the rest.
        if all.len() > MAX_VERIFIED {
            all.sort_unstable();
            self.counters
                .candidates_capped
                .fetch_add((all.len() - MAX_VERIFIED) as u64, Ordering::Relaxed);
            all.truncate(MAX_VERIFIED);
        }
        let mut found = Vec::new();
        for &(_, _, seq, at) in &all {
            let partition = &state.partitions[at];
            let doc = &partition.docs[(seq - partition.first_seq()) as usize];
            let Record::Insert(stored) = partition.segment.read(doc.offset, doc.len)? else {
                continue;
            };
            let stored_sketch = M::Sketch::decode(&stored.sketch).map_err(|e| StoreError {
                path: partition.segment.path().to_owned(),
                message: format!("record at byte {}: {e}", doc.offset),
                disk_full: false,
            })?;
            if let Some(m) = verify(
                &self.method,
                sketch,
                entry,
                seq,
                &stored_sketch,
                &stored.entry,
            ) {
                found.push(m);
            }
        }
        rank(&mut found);
        Ok(found)
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

    /// The writer thread.
    fn run(&self, receiver: Receiver<Job<M>>) {
        let mut next_maintenance = Instant::now() + MAINTENANCE;
        let mut pending: Option<Job<M>> = None;
        loop {
            let job = match pending.take() {
                Some(job) => job,
                None => {
                    let wait = next_maintenance.saturating_duration_since(Instant::now());
                    match receiver.recv_timeout(wait) {
                        Ok(job) => job,
                        Err(RecvTimeoutError::Timeout) => {
                            self.maintain();
                            self.save_counters();
                            next_maintenance = Instant::now() + MAINTENANCE;
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => {
                            self.save_counters();
                            break;
                        }
                    }
                }
            };
            match job {
                Job::Delete { id, reply } => {
                    let _ = reply.send(self.apply_delete(&id));
                }
                Job::Insert { documents, reply } => {
                    let mut group = vec![(documents, reply)];
                    let mut size = group[0].0.len();
                    while size < MAX_GROUP {
                        match receiver.try_recv() {
                            Ok(Job::Insert { documents, reply }) => {
                                size += documents.len();
                                group.push((documents, reply));
                            }
                            Ok(other) => {
                                pending = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    let answers = self.apply_group(&group);
                    for ((_, reply), answer) in group.into_iter().zip(answers) {
                        let _ = reply.send(answer);
                    }
                }
            }
            if Instant::now() >= next_maintenance {
                self.maintain();
                self.save_counters();
                next_maintenance = Instant::now() + MAINTENANCE;
            }
        }
    }

    /// Checks and stores one group of jobs; the answers per job, in order.
    fn apply_group(
        &self,
        group: &[(Vec<Prepared<M>>, Reply)],
    ) -> Vec<Vec<Result<Inserted, ServiceError>>> {
        let now = now_ms();
        let mut answers: Vec<Vec<Result<Inserted, ServiceError>>> = Vec::new();
        if let Err(error) = self.check_failed() {
            return group
                .iter()
                .map(|(docs, _)| docs.iter().map(|_| Err(error.clone())).collect())
                .collect();
        }
        // The documents of this group accepted so far: an index over them, found by position.
        let mut local = match PartitionIndex::new(&self.method, self.max_radius) {
            Ok(index) => index,
            Err(e) => {
                let error = ServiceError::from(e);
                return group
                    .iter()
                    .map(|(docs, _)| docs.iter().map(|_| Err(error.clone())).collect())
                    .collect();
            }
        };
        // Accepted documents: the document, its retention time, its record's length.
        let mut accepted: Vec<(&Prepared<M>, i64, u32)> = Vec::new();
        let mut local_ids: hashbrown::HashSet<&str> = hashbrown::HashSet::new();
        let mut bytes = Vec::new();
        // Answer slots: (job, position) -> accepted index, filled after the sync.
        let mut slots: Vec<Vec<Option<usize>>> = Vec::new();
        {
            let state = self.read();
            let next_seq = state.next_seq;
            let mut candidates = Vec::new();
            // The checks against the stored documents read a state that does not change
            // during the group: in parallel. The checks within the group follow, in order.
            let all: Vec<&Prepared<M>> = group.iter().flat_map(|(docs, _)| docs).collect();
            let mut against_stored = {
                use rayon::prelude::*;
                let found: Vec<Result<Option<Match>, StoreError>> = all
                    .par_iter()
                    .map(|d| {
                        self.find(&state, &d.sketch, &d.entry, now)
                            .map(|found| found.into_iter().next())
                    })
                    .collect();
                found.into_iter()
            };
            for (documents, _) in group {
                let mut job_answers = Vec::with_capacity(documents.len());
                let mut job_slots = Vec::with_capacity(documents.len());
                for document in documents {
                    let stored = against_stored.next().unwrap_or(Ok(None));
                    job_slots.push(None);
                    if self.live_id(&state, &document.id, now).is_some()
                        || local_ids.contains(document.id.as_str())
                    {
                        job_answers.push(Err(ServiceError::new(
                            409,
                            "id_exists",
                            format!(
                                "id {:?} is already stored in collection {:?}; ids are never \
                                 overwritten (DELETE it first)",
                                document.id, self.name
                            ),
                        )
                        .field("id")));
                        continue;
                    }
                    let time_ms = match (self.settings.retention_by, document.time_ms) {
                        (RetentionBy::Time, Some(t)) => t,
                        _ => now,
                    };
                    if let Some(t) = document.time_ms {
                        if t > now + MAX_FUTURE_MS {
                            job_answers.push(Err(ServiceError::invalid(
                                "time",
                                format!(
                                    "{} is more than an hour ahead of the server's clock ({})",
                                    format_time(t),
                                    format_time(now)
                                ),
                            )));
                            continue;
                        }
                    }
                    if self.expired(time_ms, now) {
                        job_answers.push(Err(ServiceError::invalid(
                            "time",
                            format!(
                                "{} is already outside the retention window ({})",
                                format_time(time_ms),
                                self.settings.retention.as_deref().unwrap_or_default()
                            ),
                        )));
                        continue;
                    }
                    // Against the stored documents, then against this group's.
                    let stored = match stored {
                        Ok(found) => found,
                        Err(error) => {
                            job_answers.push(Err(error.into()));
                            continue;
                        }
                    };
                    let mut best = stored.map(|m| {
                        let id = state.doc(m.seq).map(|(_, d)| d.id.to_string());
                        (m, id.unwrap_or_default())
                    });
                    if best.is_none() {
                        let left_out = local.candidates(&document.entry, &mut candidates);
                        self.counters
                            .candidates_capped
                            .fetch_add(left_out, Ordering::Relaxed);
                        let mut found: Vec<Match> = candidates
                            .iter()
                            .filter_map(|&(at, _)| {
                                let (other, _, _) = accepted[at as usize];
                                verify(
                                    &self.method,
                                    &document.sketch,
                                    &document.entry,
                                    at,
                                    &other.sketch,
                                    &other.entry,
                                )
                            })
                            .collect();
                        rank(&mut found);
                        best = found
                            .first()
                            .map(|m| (*m, accepted[m.seq as usize].0.id.clone()));
                    }
                    match best {
                        Some((m, id)) => job_answers.push(Ok(Inserted {
                            id: document.id.clone(),
                            stored: false,
                            duplicate_of: Some(id),
                            similarity: Some(m.similarity),
                            distance: m.distance,
                        })),
                        None => {
                            let at = accepted.len();
                            local.insert(at as u64, &document.entry);
                            local_ids.insert(document.id.as_str());
                            let seq = next_seq + at as u64;
                            let before = bytes.len();
                            Record::Insert(Insert {
                                seq,
                                time_ms,
                                inserted_ms: now,
                                id: document.id.clone(),
                                entry: document.entry.clone(),
                                sketch: {
                                    let mut out = Vec::new();
                                    document.sketch.encode(&mut out);
                                    out
                                },
                                text: document.text.clone(),
                            })
                            .encode(&mut bytes);
                            let len = (bytes.len() - before) as u32;
                            accepted.push((document, time_ms, len));
                            *job_slots.last_mut().unwrap_or(&mut None) = Some(at);
                            job_answers.push(Ok(Inserted {
                                id: document.id.clone(),
                                stored: true,
                                duplicate_of: None,
                                similarity: None,
                                distance: None,
                            }));
                        }
                    }
                }
                answers.push(job_answers);
                slots.push(job_slots);
            }
        }
        if !accepted.is_empty() {
            if let Err(error) = self.commit(&bytes, &accepted, now) {
                for (job_answers, job_slots) in answers.iter_mut().zip(&slots) {
                    for (answer, slot) in job_answers.iter_mut().zip(job_slots) {
                        if slot.is_some() {
                            *answer = Err(error.clone());
                        }
                    }
                }
            }
        }
        for answer in answers.iter().flatten() {
            let counter = match answer {
                Ok(a) if a.stored => &self.counters.stored,
                Ok(_) => &self.counters.duplicates,
                Err(_) => &self.counters.refused,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        answers
    }

    /// Writes the accepted documents (encoded in `bytes`) durably, then publishes them.
    fn commit(
        &self,
        bytes: &[u8],
        accepted: &[(&Prepared<M>, i64, u32)],
        now: i64,
    ) -> Result<(), ServiceError> {
        // Start a new partition first when the newest is full or old.
        self.maybe_roll(now, accepted.len())?;
        let start = self.append(bytes)?;
        self.counters.groups.fetch_add(1, Ordering::Relaxed);
        let mut state = self.write();
        let State {
            partitions,
            ids,
            next_seq,
            id_bytes,
        } = &mut *state;
        let partition = partitions.back_mut().ok_or_else(|| {
            ServiceError::new(500, "internal", "a collection without a partition")
        })?;
        let mut offset = 0u64;
        for &(document, time_ms, len) in accepted {
            let seq = *next_seq;
            partition.index.insert(seq, &document.entry);
            partition.max_time = partition.max_time.max(time_ms);
            partition.docs.push(Doc {
                id: document.id.clone().into_boxed_str(),
                time_ms,
                offset: start + offset,
                len,
                live: true,
            });
            if ids
                .insert(document.id.clone().into_boxed_str(), seq)
                .is_none()
            {
                *id_bytes += document.id.len();
            }
            *next_seq += 1;
            offset += u64::from(len);
        }
        Ok(())
    }

    /// Starts a new partition when the newest one cannot take `incoming` more documents or
    /// is older than an eighth of the window.
    fn maybe_roll(&self, now: i64, incoming: usize) -> Result<(), ServiceError> {
        let full = self.read().partitions.back().is_some_and(|p| {
            let docs = p.docs.len();
            docs > 0
                && (docs + incoming > self.settings.partition_documents as usize
                    || self
                        .window_ms
                        .is_some_and(|w| now - p.created_ms >= (w / 8).max(1000)))
        });
        if full {
            self.roll(now)?;
        }
        Ok(())
    }

    /// Rebuilds the index of the partition before the newest (just sealed) in one level:
    /// built under the read lock (checks go on), installed under the write lock. Only the
    /// writer calls this, so nothing changes the partition in between.
    fn compact_sealed(&self) {
        let built = {
            let state = self.read();
            let n = state.partitions.len();
            if n < 2 {
                return;
            }
            match state.partitions[n - 2].index.compacted() {
                Some(Ok(built)) => built,
                _ => return,
            }
        };
        let mut state = self.write();
        let n = state.partitions.len();
        state.partitions[n - 2].index.install_compacted(built);
    }

    /// Appends framed records to the newest segment, durably; a failed sync (not a full disk)
    /// stops the collection's writes until a restart.
    fn append(&self, bytes: &[u8]) -> Result<u64, ServiceError> {
        self.newest_segment()?.append(bytes).map_err(|error| {
            if !error.disk_full {
                *lock(&self.failed) = Some(error.to_string());
            }
            error.into()
        })
    }

    fn apply_delete(&self, id: &str) -> Result<bool, ServiceError> {
        self.check_failed()?;
        let seq = match self.live_id(&self.read(), id, now_ms()) {
            Some(seq) => seq,
            None => return Ok(false),
        };
        let mut bytes = Vec::new();
        Record::Delete(seq).encode(&mut bytes);
        self.append(&bytes)?;
        kill(&mut self.write(), seq);
        self.counters.deleted.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// Saves the counters when they changed (every second at most, and when the writer
    /// stops): a crash loses at most the last second's counts. A failure is logged.
    fn save_counters(&self) {
        let now = self.counters.snapshot();
        let mut saved = lock(&self.saved);
        if *saved == now {
            return;
        }
        let path = self.dir.join(COUNTERS_FILE);
        let written = serde_json::to_vec(&now)
            .map_err(|e| e.to_string())
            .and_then(|bytes| store::write_atomic(&path, &bytes).map_err(|e| e.to_string()));
        match written {
            Ok(()) => *saved = now,
            Err(error) => eprintln!("neardup: collection {:?}: {error}", self.name),
        }
    }

    /// The stored document called `id`, unless it was deleted or has expired (then the id is
    /// free: it is gone for every route).
    fn live_id(&self, state: &State, id: &str, now: i64) -> Option<u64> {
        let &seq = state.ids.get(id)?;
        let (_, doc) = state.doc(seq)?;
        (doc.live && !self.expired(doc.time_ms, now)).then_some(seq)
    }

    /// Drops the oldest partitions whose documents have all expired, and rolls an expired
    /// newest partition so that it can go too.
    fn maintain(&self) {
        let Some(window) = self.window_ms else {
            return;
        };
        let now = now_ms();
        let newest_expired = {
            let state = self.read();
            state
                .partitions
                .back()
                .is_some_and(|p| !p.docs.is_empty() && p.max_time <= now - window)
        };
        if newest_expired && self.roll(now).is_err() {
            return;
        }
        loop {
            let dropped = {
                let mut state = self.write();
                let droppable = state.partitions.len() > 1
                    && state
                        .partitions
                        .front()
                        .is_some_and(|p| p.docs.is_empty() || p.max_time <= now - window);
                if !droppable {
                    break;
                }
                let Some(partition) = state.partitions.pop_front() else {
                    break;
                };
                let mut expired = 0;
                for (seq, doc) in (partition.first_seq()..).zip(&partition.docs) {
                    if doc.live {
                        expired += 1;
                        if state.ids.get(&doc.id).copied() == Some(seq) {
                            state.ids.remove(&doc.id);
                            state.id_bytes -= doc.id.len();
                        }
                    }
                }
                self.counters.expired.fetch_add(expired, Ordering::Relaxed);
                partition
            };
            let path = dropped.segment.path().to_owned();
            drop(dropped);
            if std::fs::remove_file(&path).is_ok() {
                let _ = store::sync_dir(&self.dir.join("segments"));
            }
            self.counters
                .partitions_dropped
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Starts a new partition (segment file and index) and compacts the one it seals.
    fn roll(&self, now: i64) -> Result<(), ServiceError> {
        let next_seq = self.read().next_seq;
        let segment = Segment::create(&self.dir.join("segments"), next_seq)?;
        let index = PartitionIndex::new(&self.method, self.max_radius)?;
        self.write().partitions.push_back(Partition {
            segment: Arc::new(segment),
            docs: Vec::new(),
            index,
            max_time: i64::MIN,
            created_ms: now,
        });
        self.compact_sealed();
        Ok(())
    }
}

/// Marks `seq` deleted: out of the id map and the near-duplicate index.
fn kill(state: &mut State, seq: u64) {
    let State {
        partitions,
        ids,
        id_bytes,
        ..
    } = state;
    let at = partitions.partition_point(|p| p.first_seq() <= seq);
    let Some(partition) = at.checked_sub(1).and_then(|at| partitions.get_mut(at)) else {
        return;
    };
    let Some(doc) = partition
        .docs
        .get_mut((seq - partition.segment.first_seq()) as usize)
    else {
        return;
    };
    if doc.live {
        doc.live = false;
        partition.index.remove(seq);
        if ids.get(&doc.id).copied() == Some(seq) {
            ids.remove(&doc.id);
            *id_bytes -= doc.id.len();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<M: Registered + 'static> AnyCollection for Collection<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn submit(
        &self,
        documents: Vec<NewDocument>,
    ) -> Result<oneshot::Receiver<Vec<Result<Inserted, ServiceError>>>, ServiceError> {
        let sender = lock(&self.queue).clone().ok_or_else(|| {
            ServiceError::unavailable(format!("collection {:?} is closing", self.name))
        })?;
        let documents: Vec<Prepared<M>> = documents.into_iter().map(|d| self.prepare(d)).collect();
        let (reply, answer) = oneshot::channel();
        let mut job = Job::Insert { documents, reply };
        // Wait while the queue is full (back-pressure), but not forever.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match sender.try_send(job) {
                Ok(()) => return Ok(answer),
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    job = back;
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(TrySendError::Full(_)) => {
                    return Err(ServiceError::unavailable(format!(
                        "collection {:?}: the write queue stayed full for 30 s",
                        self.name
                    )))
                }
                Err(TrySendError::Disconnected(_)) => {
                    return Err(ServiceError::unavailable(format!(
                        "collection {:?} is closing",
                        self.name
                    )))
                }
            }
        }
    }

    fn check(&self, texts: &[String], limit: usize) -> Result<Vec<Vec<Found>>, ServiceError> {
        let prepared: Vec<(M::Sketch, IndexEntry)> = texts
            .iter()
            .map(|text| {
                let sketch = self.method.sketch(text);
                let entry = IndexEntry::of(&self.method, &sketch);
                (sketch, entry)
            })
            .collect();
        let now = now_ms();
        let state = self.read();
        let mut out = Vec::with_capacity(texts.len());
        for (sketch, entry) in &prepared {
            let found = self.find(&state, sketch, entry, now)?;
            out.push(
                found
                    .into_iter()
                    .take(limit)
                    .map(|m| Found {
                        id: state
                            .doc(m.seq)
                            .map(|(_, d)| d.id.to_string())
                            .unwrap_or_default(),
                        similarity: m.similarity,
                        distance: m.distance,
                    })
                    .collect(),
            );
        }
        self.counters
            .checks
            .fetch_add(texts.len() as u64, Ordering::Relaxed);
        Ok(out)
    }

    fn get(&self, id: &str) -> Result<Option<Value>, ServiceError> {
        let now = now_ms();
        let state = self.read();
        let Some(&seq) = state.ids.get(id) else {
            return Ok(None);
        };
        let Some((partition, doc)) = state.doc(seq) else {
            return Ok(None);
        };
        if !doc.live || self.expired(doc.time_ms, now) {
            return Ok(None);
        }
        let Record::Insert(stored) = partition.segment.read(doc.offset, doc.len)? else {
            return Ok(None);
        };
        let mut body = json!({
            "id": stored.id,
            "time": format_time(stored.time_ms),
            "inserted": format_time(stored.inserted_ms),
        });
        if let Some((fingerprint, radius)) = stored.entry.hamming {
            body["fingerprint"] = json!(format!("{fingerprint:016x}"));
            body["max_distance"] = json!(radius);
        }
        if let Some(expires) = self.window_ms {
            body["expires"] = json!(format_time(stored.time_ms + expires));
        }
        if let Some(text) = stored.text {
            body["text"] = json!(text);
        }
        Ok(Some(body))
    }

    fn delete(
        &self,
        id: &str,
    ) -> Result<oneshot::Receiver<Result<bool, ServiceError>>, ServiceError> {
        let sender = lock(&self.queue).clone().ok_or_else(|| {
            ServiceError::unavailable(format!("collection {:?} is closing", self.name))
        })?;
        let (reply, answer) = oneshot::channel();
        sender
            .send(Job::Delete {
                id: id.to_owned(),
                reply,
            })
            .map_err(|_| ServiceError::unavailable("the collection is closing"))?;
        Ok(answer)
    }

    fn stats(&self) -> Value {
        let state = self.read();
        // Kept without a scan of the documents: /metrics and GET must not hold the lock long.
        let memory: usize = state
            .partitions
            .iter()
            .map(|p| p.index.memory_bytes() + p.docs.capacity() * std::mem::size_of::<Doc>())
            .sum::<usize>()
            + state.ids.capacity() * (std::mem::size_of::<(Box<str>, u64)>() + 1) * 8 / 7
            + 2 * state.id_bytes;
        let disk: u64 = state.partitions.iter().map(|p| p.segment.len()).sum();
        let c = &self.counters;
        let mut stats = json!({
            "documents": state.ids.len(),
            "partitions": state.partitions.len(),
            "disk_bytes": disk,
            "memory_bytes": memory,
            "next_seq": state.next_seq,
            "failed": lock(&self.failed).clone(),
        });
        if let Value::Object(object) = &mut stats {
            for (name, value) in c.snapshot() {
                object.insert(name.to_owned(), json!(value));
            }
        }
        stats
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn len(&self) -> u64 {
        self.read().ids.len() as u64
    }

    fn close(&self) {
        // Dropping the sender ends the writer once the queued jobs are done.
        lock(&self.queue).take();
        if let Some(handle) = lock(&self.writer).take() {
            let _ = handle.join();
        }
    }

    fn dir(&self) -> &Path {
        &self.dir
    }
}
