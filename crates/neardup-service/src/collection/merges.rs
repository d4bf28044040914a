//! The merge thread of a collection: it builds the index's level merges off the request
//! path. The writer signals it after each group it stores; the thread takes the merge due
//! under the read lock (a snapshot of the frozen levels behind `Arc`s), builds it with no lock
//! held while checks and inserts go on, and swaps it in under the write lock (a splice of a
//! few pointers). Removals and retention drops made meanwhile are kept by the index and
//! replayed: the merged level skips them until its own next merge. The replaced levels are
//! freed after the lock is released. Then the large levels are written to level files
//! (`level_files`), for a quick restart.

use std::collections::HashSet;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;

use neardup_core::registry::Registered;

use super::level_files::LevelFiles;
use super::summaries;
use super::{lock, Collection};
use crate::error::ServiceError;

impl<M: Registered + 'static> Collection<M> {
    /// Starts the merge thread.
    pub(super) fn start_merges(self: &Arc<Self>) -> Result<(), ServiceError> {
        // One pending signal is enough: the thread merges until nothing is due.
        let (sender, receiver) = mpsc::sync_channel(1);
        *lock(&self.merges) = Some(sender);
        let handle = self.spawn("merges", move |merger| merger.run_merges(receiver))?;
        *lock(&self.merger) = Some(handle);
        Ok(())
    }

    /// Tells the merge thread to look for a merge (without waiting).
    pub(super) fn signal_merges(&self) {
        if let Some(sender) = lock(&self.merges).as_ref() {
            let _ = SyncSender::try_send(sender, ());
        }
    }

    /// Stops the merge thread once its merge is done (after the writer stopped).
    pub(super) fn stop_merges(&self) {
        lock(&self.merges).take();
        if let Some(handle) = lock(&self.merger).take() {
            let _ = handle.join();
        }
    }

    /// The merge thread: every merge due, built with no lock held.
    fn run_merges(&self, signals: Receiver<()>) {
        while signals.recv().is_ok() {
            self.merge_all();
            self.persist_levels();
        }
    }

    /// Writes the level files of the frozen levels that have none (see `level_files`), then
    /// the summaries of the sealed segments that have none (see `summaries`), with no lock on
    /// the state held while writing.
    pub(super) fn persist_levels(&self) {
        let frozen = LevelFiles::frozen(&self.read().index);
        lock(&self.level_files).persist(&self.name, &frozen);
        let mut summaries = lock(&self.summaries);
        let (sealed, kept) = {
            let state = self.read();
            if state.index.has_hamming() {
                // A restart replays every segment for the fingerprints: no summary is read.
                return;
            }
            let sealed_count = state.partitions.len().saturating_sub(1);
            let sealed: Vec<(u64, Vec<u8>)> = (state.partitions.iter().take(sealed_count))
                .filter(|p| !summaries.has(p.first_seq()))
                .map(|p| (p.first_seq(), summaries::encode(p)))
                .collect();
            let kept: HashSet<u64> = state.partitions.iter().map(|p| p.first_seq()).collect();
            (sealed, kept)
        };
        summaries.persist(&self.name, sealed, &kept);
    }

    /// Builds and installs merges until none is due.
    pub(super) fn merge_all(&self) {
        loop {
            let Some(merge) = self.read().index.merge() else {
                return;
            };
            let built = match merge.build() {
                Ok(built) => built,
                Err(error) => {
                    eprintln!(
                        "neardup: collection {:?}: a merge failed: {error}",
                        self.name
                    );
                    return;
                }
            };
            let replaced = merge.hold();
            let installed = self.write().index.install(merge, built);
            // The replaced levels are freed here, with no lock held.
            drop(replaced);
            self.counters
                .merges
                .fetch_add(u64::from(installed), std::sync::atomic::Ordering::Relaxed);
        }
    }
}
