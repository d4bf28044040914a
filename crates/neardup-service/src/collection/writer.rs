//! The writer thread of a collection: it takes insert and delete jobs from the queue in
//! order, hands groups of inserts to `apply_group`, commits them durably, and every second
//! drops the partitions whose documents have all expired.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use neardup_core::registry::Registered;

use super::docs::MAX_PARTITION_ID_BYTES;
use super::{kill, lock, Collection, Job, Partition, Prepared, MAX_GROUP};
use crate::error::ServiceError;
use crate::store::{self, Record, Segment};

/// How often the writer looks for expired partitions.
const MAINTENANCE: Duration = Duration::from_secs(1);

impl<M: Registered + 'static> Collection<M> {
    /// The writer thread.
    pub(super) fn run(&self, receiver: Receiver<Job<M>>) {
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
                            self.sync_mark();
                            self.maintain();
                            self.save_counters();
                            self.sample_activity();
                            next_maintenance = Instant::now() + MAINTENANCE;
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => {
                            self.sync_mark();
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
                Job::Maintain { reply } => {
                    self.maintain();
                    self.save_counters();
                    self.sample_activity();
                    let _ = reply.send(());
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
                self.sample_activity();
                next_maintenance = Instant::now() + MAINTENANCE;
            }
        }
    }

    /// Samples the counters for the activity history (every 10 seconds at most).
    fn sample_activity(&self) {
        let documents = self.read().ids.len() as u64;
        self.activity
            .sample(self.clock.now_ms(), documents, &self.counters);
    }

    /// Writes the accepted documents (encoded in `bytes`) durably, then publishes them.
    pub(super) fn commit(
        &self,
        bytes: &[u8],
        accepted: &[(&Prepared<M>, i64, u32)],
        now: i64,
    ) -> Result<(), ServiceError> {
        // Start a new partition first when the newest is full or old.
        let id_bytes = accepted.iter().map(|(d, _, _)| d.id.len()).sum();
        self.maybe_roll(now, accepted.len(), id_bytes)?;
        let start = self.append(bytes)?;
        self.counters.groups.fetch_add(1, Ordering::Relaxed);
        let mut state = self.write();
        let mut offset = 0u64;
        for &(document, time_ms, len) in accepted {
            let seq = state.next_seq;
            let partition = state.partitions.back_mut().ok_or_else(|| {
                ServiceError::new(500, "internal", "a collection without a partition")
            })?;
            partition.max_time = partition.max_time.max(time_ms);
            // maybe_roll left room for the group's ids, and bodies are below 2^31 bytes.
            if !partition
                .docs
                .push(&document.id, time_ms, start + offset, len)
            {
                return Err(ServiceError::new(
                    500,
                    "internal",
                    "a partition's documents are full",
                ));
            }
            state.index.insert(seq, &document.entry);
            state.map_id(&document.id, seq);
            state.next_seq += 1;
            offset += u64::from(len);
        }
        drop(state);
        self.signal_merges();
        Ok(())
    }

    /// Starts a new partition when the newest one cannot take `incoming` more documents (or
    /// their `incoming_id_bytes` of ids) or is older than an eighth of the window.
    fn maybe_roll(
        &self,
        now: i64,
        incoming: usize,
        incoming_id_bytes: usize,
    ) -> Result<(), ServiceError> {
        let full = self.read().partitions.back().is_some_and(|p| {
            let docs = p.docs.len();
            docs > 0
                && (docs + incoming > self.settings.partition_documents as usize
                    || p.docs.id_len() + incoming_id_bytes > MAX_PARTITION_ID_BYTES
                    || self
                        .window_ms
                        .is_some_and(|w| now - p.created_ms >= (w / 8).max(1000)))
        });
        if full {
            self.roll(now)?;
        }
        Ok(())
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
        let seq = match self.live_id(&self.read(), id, self.clock.now_ms()) {
            Some(seq) => seq,
            None => return Ok(false),
        };
        let mut bytes = Vec::new();
        Record::Delete(seq).encode(&mut bytes);
        self.append(&bytes)?;
        let mut state = self.write();
        if let Some(newest) = state.partitions.back_mut() {
            newest.deletes.push(seq);
        }
        kill(&mut state, seq);
        drop(state);
        self.counters.deleted.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    fn maintain(&self) {
        let Some(window) = self.window_ms else {
            return;
        };
        let now = self.clock.now_ms();
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
                for (seq, doc) in (partition.first_seq()..).zip(partition.docs.iter()) {
                    if doc.live {
                        expired += 1;
                        state.ids.remove_if(doc.id, seq);
                    }
                }
                self.counters.expired.fetch_add(expired, Ordering::Relaxed);
                let first_kept = state.partitions.front().map_or(0, Partition::first_seq);
                state.index.forget_below(first_kept);
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

    /// Brings the newest segment's synced mark to disk (see `store`): when the writer is
    /// idle, before it starts a new segment, and when it stops. Under load each group's sync
    /// does it anyway. A failed sync is left alone: the mark then lags, which is safe (a bad
    /// last record is judged as before the marks), and the next append reports the disk.
    fn sync_mark(&self) {
        if let Ok(segment) = self.newest_segment() {
            let _ = segment.sync_mark();
        }
    }

    /// Starts a new partition (segment file).
    fn roll(&self, now: i64) -> Result<(), ServiceError> {
        self.sync_mark();
        let next_seq = self.read().next_seq;
        let segment = Segment::create(&self.dir.join("segments"), next_seq)?;
        self.write()
            .partitions
            .push_back(Partition::empty(segment, now));
        Ok(())
    }
}
