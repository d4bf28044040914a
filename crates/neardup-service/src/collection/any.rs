//! The operations the HTTP layer calls on a collection, whatever its method
//! ([`AnyCollection`]): submit inserts and deletes to the writer, check texts, read a stored
//! document, and the counts.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::TrySendError;
use std::time::{Duration, Instant};

use neardup_core::registry::Registered;
use neardup_engine::collection_index::IndexEntry;
use tokio::sync::oneshot;

use super::{
    lock, AnyCollection, Collection, Counters, Found, Inserted, Job, NewDocument, Prepared,
    StoredDocument,
};
use crate::api::Stats;
use crate::error::ServiceError;
use crate::settings::{format_time, Settings};
use crate::store::Record;

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
                let sketch = match &self.learning {
                    Some(learning) => learning.current().sketch(text),
                    None => self.method.sketch(text),
                };
                let entry = IndexEntry::of(&self.method, &sketch);
                (sketch, entry)
            })
            .collect();
        let now = self.clock.now_ms();
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

    fn get(&self, id: &str) -> Result<Option<StoredDocument>, ServiceError> {
        let now = self.clock.now_ms();
        let state = self.read();
        let Some(seq) = state.seq_of(id) else {
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
        let hamming = stored.entry.hamming;
        Ok(Some(StoredDocument {
            id: stored.id,
            time: format_time(stored.time_ms),
            inserted: format_time(stored.inserted_ms),
            fingerprint: hamming.map(|(fingerprint, _)| format!("{fingerprint:016x}")),
            max_distance: hamming.map(|(_, radius)| radius),
            expires: self
                .window_ms
                .map(|expires| format_time(stored.time_ms + expires)),
            text: stored.text,
        }))
    }

    fn delete(
        &self,
        id: &str,
    ) -> Result<oneshot::Receiver<Result<bool, ServiceError>>, ServiceError> {
        let (reply, answer) = oneshot::channel();
        self.enqueue(Job::Delete {
            id: id.to_owned(),
            reply,
        })?;
        Ok(answer)
    }

    fn run_maintenance(&self) -> Result<oneshot::Receiver<()>, ServiceError> {
        let (reply, answer) = oneshot::channel();
        self.enqueue(Job::Maintain { reply })?;
        Ok(answer)
    }

    fn stats(&self) -> Stats {
        let state = self.read();
        // Kept without a scan of the documents: /metrics and GET must not hold the lock long.
        let memory: usize = state
            .partitions
            .iter()
            .map(|p| p.docs.memory_bytes())
            .sum::<usize>()
            + state.index.memory_bytes()
            + state.ids.memory_bytes();
        let disk: u64 = state.partitions.iter().map(|p| p.segment.len()).sum();
        let c = &self.counters;
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        Stats {
            documents: state.ids.len() as u64,
            partitions: state.partitions.len() as u64,
            disk_bytes: disk,
            memory_bytes: memory as u64,
            next_seq: state.next_seq,
            failed: lock(&self.failed).clone(),
            candidates_capped: load(&c.candidates_capped),
            checks: load(&c.checks),
            deleted: load(&c.deleted),
            duplicates: load(&c.duplicates),
            expired: load(&c.expired),
            groups: load(&c.groups),
            partitions_dropped: load(&c.partitions_dropped),
            recovered_bytes: load(&c.recovered_bytes),
            refused: load(&c.refused),
            stored: load(&c.stored),
            verified: load(&c.verified),
            merges: load(&c.merges),
            learning: self.learning.as_ref().map(|l| Box::new(l.report())),
        }
    }

    fn activity(&self) -> crate::api::Activity {
        self.activity.answer()
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
        self.stop_merges();
        // What was counted since the last save, now that the writer has stopped counting.
        if let Some(learning) = &self.learning {
            if self.dir.exists() {
                learning.save();
            }
        }
    }

    fn dir(&self) -> &Path {
        &self.dir
    }
}

impl<M: Registered + 'static> Collection<M> {
    /// Queues a job for the writer.
    fn enqueue(&self, job: Job<M>) -> Result<(), ServiceError> {
        let sender = lock(&self.queue).clone().ok_or_else(|| {
            ServiceError::unavailable(format!("collection {:?} is closing", self.name))
        })?;
        sender
            .send(job)
            .map_err(|_| ServiceError::unavailable("the collection is closing"))
    }
}
