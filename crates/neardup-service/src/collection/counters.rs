//! The files a collection keeps beside its segments: its counters (`counters.json`, saved
//! every second at most, so that counts survive a restart) and the sequence gaps `neardup
//! salvage` accepted (`accepted-gaps.json`).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use neardup_core::registry::Registered;

use super::{lock, Collection};
use crate::store::{self, StoreError};

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
    /// Candidates verified (read and compared), for inserts and checks.
    pub verified: AtomicU64,
    /// Index level merges installed (built off the request path).
    pub merges: AtomicU64,
}

/// The file of a collection's counters, kept across restarts.
const COUNTERS_FILE: &str = "counters.json";
/// The file of the sequence gaps `neardup salvage` accepted.
pub const ACCEPTED_GAPS_FILE: &str = "accepted-gaps.json";

impl Counters {
    /// The counters by name, as stored in `counters.json` and shown by `stats`.
    fn all(&self) -> [(&'static str, &AtomicU64); 12] {
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
            ("verified", &self.verified),
            ("merges", &self.merges),
        ]
    }

    pub(super) fn snapshot(&self) -> std::collections::BTreeMap<&'static str, u64> {
        self.all()
            .into_iter()
            .map(|(name, counter)| (name, counter.load(Ordering::Relaxed)))
            .collect()
    }

    /// Counters as saved in `dir` (zero when never saved).
    ///
    /// # Errors
    /// A file that cannot be read or is not the counters' JSON.
    pub(super) fn load(dir: &Path) -> Result<Counters, StoreError> {
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
pub(super) fn read_accepted_gaps(dir: &Path) -> Result<Vec<(u64, u64)>, StoreError> {
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

impl<M: Registered + 'static> Collection<M> {
    /// Saves the counters when they changed (every second at most, and when the writer
    /// stops): a crash loses at most the last second's counts. A failure is logged.
    pub(super) fn save_counters(&self) {
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
}
