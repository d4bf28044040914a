//! A check of one text against the stored documents: the candidates of the collection's
//! index, live and unexpired, capped to the nearest [`MAX_VERIFIED`] in a flood, then verified on
//! their stored sketches and ranked.

use std::sync::atomic::Ordering;

use neardup_core::registry::Registered;
use neardup_core::Sketch;
use neardup_engine::collection_index::{rank, verify, IndexEntry, Match};

use super::{Collection, State, MAX_VERIFIED};
use crate::store::{Record, StoreError};

impl<M: Registered + 'static> Collection<M> {
    /// The stored, live, unexpired documents that match, best first.
    pub(super) fn find(
        &self,
        state: &State,
        sketch: &M::Sketch,
        entry: &IndexEntry,
        now: i64,
    ) -> Result<Vec<Match>, StoreError> {
        // Live, unexpired candidates: (exact copy first, distance, seq).
        let mut all: Vec<(bool, Option<u32>, u64)> = Vec::new();
        let mut candidates = Vec::new();
        let copy = state.index.identity(entry.identity);
        let left_out = state.index.candidates(entry, &mut candidates);
        self.counters
            .candidates_capped
            .fetch_add(left_out, Ordering::Relaxed);
        for &(seq, distance) in &candidates {
            if let Some((_, doc)) = state.doc(seq) {
                if doc.live && !self.expired(doc.time_ms, now) {
                    all.push((copy != Some(seq), distance, seq));
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
        self.counters
            .verified
            .fetch_add(all.len() as u64, Ordering::Relaxed);
        let mut found = Vec::new();
        let learned = self.learning.as_ref().map(|learning| learning.current());
        for &(_, _, seq) in &all {
            let Some((partition, doc)) = state.doc(seq) else {
                continue;
            };
            let Record::Insert(stored) = partition.segment.read(doc.offset, doc.len)? else {
                continue;
            };
            let mut stored_sketch = M::Sketch::decode(&stored.sketch).map_err(|e| StoreError {
                path: partition.segment.path().to_owned(),
                message: format!("record at byte {}: {e}", doc.offset),
                disk_full: false,
            })?;
            if let Some(learned) = &learned {
                learned.mark(&mut stored_sketch);
            }
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
}
