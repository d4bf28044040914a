//! Level files: the large frozen key levels of the collection's index (identities and band
//! keys), written to `index/` beside the segments by the merge thread, so that a restart
//! reads them in one sequential read each instead of rebuilding them from every stored
//! document, and gathers only the documents above them from the segments.
//!
//! - A level of at least [`LEVEL_FILE_DOCS`] documents gets a file when it is built (by a
//!   merge, or at a restart): its bytes ([`KeyLevel::encode`]) and their XXH3-64, written to
//!   a temporary file, synced, and renamed.
//! - `manifest.json` lists, per kind, the oldest levels that have files, in order: the run a
//!   restart loads. It is replaced atomically after the files it lists are durable; a file
//!   it no longer lists is removed after.
//! - A restart loads the listed files. Any of them missing, failing its checksum or its
//!   checks, or not fitting the segments (a level above the last stored document, a salvage
//!   since): the files are removed and the index is rebuilt from the segments, as without
//!   them. Deletes are tombstones in the segments, replayed over the loaded levels.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use neardup_engine::collection_index::{CollectionIndex, KeyLevel, Level, LevelKind};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::store::{self, StoreError};

/// A frozen level of at least this many documents gets a file. The levels below it are the
/// newest: a restart gathers their documents from the segments, at most about four times
/// this many.
pub const LEVEL_FILE_DOCS: usize = 1 << 18;

/// The manifest's name in the index folder.
const MANIFEST: &str = "manifest.json";

/// The manifest's format.
const FORMAT: u32 = 1;

/// What `manifest.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    identities: Vec<Listed>,
    keys: Vec<Listed>,
}

impl Manifest {
    fn of(&self, kind: LevelKind) -> &Vec<Listed> {
        match kind {
            LevelKind::Identities => &self.identities,
            LevelKind::Keys => &self.keys,
        }
    }

    fn of_mut(&mut self, kind: LevelKind) -> &mut Vec<Listed> {
        match kind {
            LevelKind::Identities => &mut self.identities,
            LevelKind::Keys => &mut self.keys,
        }
    }
}

/// One level file, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Listed {
    file: String,
    first: u64,
    last: u64,
}

/// A level read back: its kind, range and level.
pub type Restored = (LevelKind, u64, u64, KeyLevel);

/// The frozen levels of one kind, oldest first, each with its range.
pub type Frozen = (LevelKind, Vec<(u64, u64, Arc<KeyLevel>)>);

/// The level files of a collection, as the merge thread keeps them.
#[derive(Debug)]
pub struct LevelFiles {
    dir: PathBuf,
    /// A level of at least this many documents gets a file ([`LEVEL_FILE_DOCS`]).
    min_docs: usize,
    /// The files written (or loaded), by kind and range.
    written: HashMap<(LevelKind, u64, u64), String>,
    /// The manifest last written (or loaded).
    manifest: Manifest,
    /// A failure to write is logged once, not at every merge.
    failures: LoggedOnce,
}

/// A failure to write a file the restart needs (a full disk), logged when it is not the one
/// logged last: the writes are retried after every merge, the log told once.
#[derive(Debug, Default)]
pub struct LoggedOnce(Option<String>);

impl LoggedOnce {
    /// Logs `result`'s error for collection `name` (`what` could not be written), unless it
    /// is the one logged last; a success forgets it.
    pub fn note(&mut self, name: &str, what: &str, result: Result<(), StoreError>) {
        match result {
            Ok(()) => self.0 = None,
            Err(error) => {
                let message = error.to_string();
                if self.0.as_ref() != Some(&message) {
                    eprintln!("neardup: collection {name:?}: cannot write {what}: {message}");
                    self.0 = Some(message);
                }
            }
        }
    }
}

impl LevelFiles {
    /// The level files in `dir` (the collection's `index` folder), read back: the levels the
    /// manifest lists, per kind oldest first, each checked. Without a manifest, or when
    /// anything listed is missing or damaged, no level (and the files are removed, the
    /// reason logged for `name`): the caller rebuilds the index from the segments.
    pub fn open(name: &str, dir: &Path, min_docs: usize) -> (LevelFiles, Vec<Restored>) {
        let mut files = LevelFiles {
            dir: dir.to_owned(),
            min_docs,
            written: HashMap::new(),
            manifest: Manifest {
                format: FORMAT,
                ..Manifest::default()
            },
            failures: LoggedOnce::default(),
        };
        if !dir.join(MANIFEST).exists() {
            files.clear();
            return (files, Vec::new());
        }
        match files.read() {
            Ok(levels) => {
                files.remove_unlisted();
                (files, levels)
            }
            Err(error) => {
                files.discard(name, &error.to_string());
                (files, Vec::new())
            }
        }
    }

    /// Takes the level files out of use (removes them): the caller rebuilds its index
    /// from the segments instead.
    pub fn discard(&mut self, name: &str, why: &str) {
        eprintln!(
            "neardup: collection {name:?}: the index files are not used ({why}); the index is \
             rebuilt from the segments"
        );
        self.clear();
    }

    /// The levels the manifest lists, read and checked.
    fn read(&mut self) -> Result<Vec<Restored>, StoreError> {
        let path = self.dir.join(MANIFEST);
        let text = std::fs::read(&path).map_err(|e| StoreError::io(&path, "cannot read", &e))?;
        let manifest: Manifest = serde_json::from_slice(&text)
            .map_err(|e| corrupt(&path, format!("not a manifest: {e}")))?;
        if manifest.format != FORMAT {
            return Err(corrupt(
                &path,
                format!("format {}, not {FORMAT}", manifest.format),
            ));
        }
        let mut levels = Vec::new();
        for kind in LevelKind::ALL {
            let mut above: Option<u64> = None;
            for listed in manifest.of(kind) {
                let path = self.dir.join(&listed.file);
                if above.is_some_and(|above| listed.first <= above) || listed.last < listed.first {
                    return Err(corrupt(&path, "listed out of order"));
                }
                above = Some(listed.last);
                let level = read_level(&path)?;
                self.written
                    .insert((kind, listed.first, listed.last), listed.file.clone());
                levels.push((kind, listed.first, listed.last, level));
            }
        }
        self.manifest = manifest;
        Ok(levels)
    }

    /// Forgets and removes every level file, and the manifest first.
    pub fn clear(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(MANIFEST));
        self.manifest = Manifest {
            format: FORMAT,
            ..Manifest::default()
        };
        self.written.clear();
        self.remove_unlisted();
    }

    /// Removes the files of the folder the manifest does not list (left by a crash, or
    /// replaced).
    fn remove_unlisted(&mut self) {
        let listed: Vec<&String> = LevelKind::ALL
            .iter()
            .flat_map(|&kind| self.manifest.of(kind))
            .map(|l| &l.file)
            .collect();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != MANIFEST && !listed.contains(&&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        self.written
            .retain(|_, file| listed.iter().any(|l| *l == file));
    }

    /// Writes a file for every frozen level of at least `min_docs` documents that
    /// has none, then the manifest (per kind, the oldest levels that have files, in order)
    /// when it changed, then removes the files it no longer lists. A failure (a full disk)
    /// is logged for `name` once and leaves the files as they were: a restart rebuilds more.
    pub fn persist(&mut self, name: &str, frozen: &[Frozen]) {
        let result = self.try_persist(frozen);
        self.failures.note(name, "the index files", result);
    }

    fn try_persist(&mut self, frozen: &[Frozen]) -> Result<(), StoreError> {
        let mut manifest = Manifest {
            format: FORMAT,
            ..Manifest::default()
        };
        for (kind, levels) in frozen {
            let mut run = true;
            for (first, last, level) in levels {
                let key = (*kind, *first, *last);
                if !self.written.contains_key(&key) && level.docs() >= self.min_docs {
                    std::fs::create_dir_all(&self.dir)
                        .map_err(|e| StoreError::io(&self.dir, "cannot create", &e))?;
                    let file = format!("{}-{first}-{last}.level", kind.name());
                    let mut bytes = level.encode();
                    let sum = xxh3_64(&bytes);
                    bytes.extend_from_slice(&sum.to_le_bytes());
                    store::write_atomic(&self.dir.join(&file), &bytes)?;
                    self.written.insert(key, file);
                }
                match (run, self.written.get(&key)) {
                    (true, Some(file)) => manifest.of_mut(*kind).push(Listed {
                        file: file.clone(),
                        first: *first,
                        last: *last,
                    }),
                    _ => run = false,
                }
            }
        }
        if manifest != self.manifest {
            let text = serde_json::to_vec_pretty(&manifest)
                .map_err(|e| corrupt(&self.dir.join(MANIFEST), e))?;
            store::write_atomic(&self.dir.join(MANIFEST), &text)?;
            self.manifest = manifest;
            // Files of levels still frozen but not in the run are kept: they join it once
            // the levels before them have files.
            let current: Vec<(LevelKind, u64, u64)> = (frozen.iter())
                .flat_map(|(kind, levels)| levels.iter().map(move |(f, l, _)| (*kind, *f, *l)))
                .collect();
            let dir = self.dir.clone();
            self.written.retain(|key, file| {
                let keep = current.contains(key);
                if !keep {
                    let _ = std::fs::remove_file(dir.join(&*file));
                }
                keep
            });
        }
        Ok(())
    }

    /// The frozen levels of `index`, per kind (for [`LevelFiles::persist`], after the lock
    /// is released).
    pub fn frozen(index: &CollectionIndex) -> Vec<Frozen> {
        LevelKind::ALL
            .iter()
            .map(|&kind| (kind, index.frozen_levels(kind)))
            .collect()
    }
}

/// A level file read back and checked.
fn read_level(path: &Path) -> Result<KeyLevel, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, "cannot read", &e))?;
    let Some(body_len) = bytes.len().checked_sub(8) else {
        return Err(corrupt(path, "shorter than its checksum"));
    };
    let (body, sum) = bytes.split_at(body_len);
    if xxh3_64(body).to_le_bytes() != sum {
        return Err(corrupt(path, "checksum mismatch"));
    }
    KeyLevel::decode(body).map_err(|m| corrupt(path, m))
}

fn corrupt(path: &Path, message: impl std::fmt::Display) -> StoreError {
    StoreError {
        path: path.to_owned(),
        message: message.to_string(),
        disk_full: false,
    }
}
