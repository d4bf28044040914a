//! Summaries of sealed segments: what a restart needs of a segment that no longer grows
//! (its documents' ids, times and places, its tombstones, its retention bounds), about 35
//! bytes a document where the segment holds about a kilobyte, in `docs/seg-<first>.docs`.
//!
//! The merge thread writes one for each sealed partition (every partition but the newest),
//! after the level files. A restart reads a segment's summary instead of its records when
//! the level files hold every document of the segment (the index needs nothing else from
//! it) and the collection has no Hamming index (whose fingerprints only the records hold).
//! A summary is used only if its checksum holds and the segment is still exactly as long as
//! when it was summarised, with a synced mark covering all of it; otherwise the segment is
//! replayed, as without summaries. A summary whose segment is gone (dropped by retention)
//! is removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use super::docs::Docs;
use super::level_files::LoggedOnce;
use super::Partition;
use crate::store::{self, StoreError};

/// The first bytes of a summary (and its version).
const MAGIC: &[u8; 8] = b"NDSUMRY1";

/// A sealed segment's summary.
#[derive(Debug)]
pub struct Summary {
    /// The segment's first sequence number.
    pub first_seq: u64,
    /// The segment's length in bytes.
    pub segment_len: u64,
    /// The latest retention time of its documents.
    pub max_time: i64,
    /// When the partition was started.
    pub created_ms: i64,
    /// The tombstones the segment holds.
    pub deletes: Vec<u64>,
    /// Its documents, every one live (the tombstones are applied again).
    pub docs: Docs,
}

/// The summaries of a collection, as the merge thread keeps them.
#[derive(Debug)]
pub struct Summaries {
    dir: PathBuf,
    /// The first sequence numbers of the segments summarised.
    written: HashSet<u64>,
    /// A failure to write is logged once.
    failures: LoggedOnce,
}

impl Summaries {
    /// The summaries in `dir` (the collection's `docs` folder).
    pub fn new(dir: &Path) -> Summaries {
        Summaries {
            dir: dir.to_owned(),
            written: HashSet::new(),
            failures: LoggedOnce::default(),
        }
    }

    /// The path of the summary of the segment starting at `first_seq`.
    fn path(&self, first_seq: u64) -> PathBuf {
        self.dir.join(format!("seg-{first_seq:020}.docs"))
    }

    /// The summary of the segment starting at `first_seq`, if there is one and it holds
    /// together (the caller still checks the segment against it).
    pub fn read(&mut self, first_seq: u64) -> Option<Summary> {
        let path = self.path(first_seq);
        let bytes = std::fs::read(&path).ok()?;
        let summary = decode(&bytes).filter(|s| s.first_seq == first_seq);
        match &summary {
            Some(_) => {
                self.written.insert(first_seq);
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        summary
    }

    /// Writes the summaries of `sealed` (partitions that no longer grow, encoded by
    /// [`encode`]) that have none, and removes those of segments not in `kept` (dropped by
    /// retention). A failure is logged for `name` once.
    pub fn persist(&mut self, name: &str, sealed: Vec<(u64, Vec<u8>)>, kept: &HashSet<u64>) {
        let mut result = Ok(());
        for (first_seq, bytes) in sealed {
            if self.written.contains(&first_seq) {
                continue;
            }
            result = std::fs::create_dir_all(&self.dir)
                .map_err(|e| StoreError::io(&self.dir, "cannot create", &e))
                .and_then(|()| store::write_atomic(&self.path(first_seq), &bytes));
            if result.is_err() {
                break;
            }
            self.written.insert(first_seq);
        }
        let gone: Vec<u64> = (self.written.iter())
            .copied()
            .filter(|s| !kept.contains(s))
            .collect();
        for first_seq in gone {
            let _ = std::fs::remove_file(self.path(first_seq));
            self.written.remove(&first_seq);
        }
        self.failures.note(name, "a segment summary", result);
    }

    /// Removes the files of the folder that are not the summary of a segment in `kept`: the
    /// summaries of segments dropped while a crash stopped their removal, and temporary files
    /// a crash left.
    pub fn remove_others(&mut self, kept: &HashSet<u64>) {
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let first_seq = (name.strip_prefix("seg-"))
                    .and_then(|rest| rest.strip_suffix(".docs"))
                    .and_then(|digits| digits.parse::<u64>().ok());
                if !first_seq.is_some_and(|s| kept.contains(&s)) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        self.written.retain(|s| kept.contains(s));
    }

    /// Whether the segment starting at `first_seq` has a summary.
    pub fn has(&self, first_seq: u64) -> bool {
        self.written.contains(&first_seq)
    }
}

/// The summary of a sealed partition, with the tombstones its segment holds.
pub fn encode(partition: &Partition) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for word in [
        partition.first_seq(),
        partition.segment.len(),
        partition.max_time as u64,
        partition.created_ms as u64,
        partition.deletes.len() as u64,
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for seq in &partition.deletes {
        out.extend_from_slice(&seq.to_le_bytes());
    }
    partition.docs.encode(&mut out);
    let sum = xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The summary in `bytes`; `None` when anything is wrong.
fn decode(bytes: &[u8]) -> Option<Summary> {
    let body = bytes.get(..bytes.len().checked_sub(8)?)?;
    if xxh3_64(body).to_le_bytes() != bytes[body.len()..] || body.get(..8)? != MAGIC {
        return None;
    }
    let word = |at: usize| {
        body.get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
    };
    let deletes = usize::try_from(word(40)?).ok()?;
    let docs_at = deletes.checked_mul(8)?.checked_add(48)?;
    let delete_bytes = body.get(48..docs_at)?;
    let (docs, rest) = Docs::decode(body.get(docs_at..)?).ok()?;
    if !rest.is_empty() {
        return None;
    }
    Some(Summary {
        first_seq: word(8)?,
        segment_len: word(16)?,
        max_time: word(24)? as i64,
        created_ms: word(32)? as i64,
        deletes: (delete_bytes.chunks_exact(8))
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
            .collect(),
        docs,
    })
}
