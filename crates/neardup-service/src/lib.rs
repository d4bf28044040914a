//! The neardup online dedup service: durable check-and-insert over HTTP.
//!
//! `neardup serve --data-dir DIR --listen 127.0.0.1:8080` runs [`http::serve`] over a
//! [`Service`]: named collections, each with its own method and parameters (SimHash,
//! MinHash-LSH, exact), kept in `DIR/collections/<name>/` (a `settings.json` and the segment
//! files of [`store`]) and reopened at start. The semantics (linearizable check-and-insert,
//! group commit, retention) are described in [`collection`]; the HTTP contract in
//! [`http`] and in the OpenAPI document it serves.
//!
//! The crate also holds a small HTTP [`client`] (the CLI's `neardup client`, the bulk loader
//! and the load generator use it).

pub mod api;
pub mod client;
pub mod clock;
pub mod collection;
pub mod error;
pub mod http;
pub mod learning_budget;
pub mod settings;
pub mod store;

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use neardup_core::registry::{self, MethodVisitor, Registered};

pub use collection::{AnyCollection, Found, Inserted, NewDocument, LEVEL_FILE_DOCS};
pub use error::ServiceError;
pub use settings::Settings;

use crate::api::CollectionAnswer;
use crate::clock::{Clock, SystemClock};
use crate::collection::Collection;
use crate::store::StoreError;

/// The longest collection name.
const MAX_NAME: usize = 64;
/// The default most collections a service holds (`--max-collections`).
pub const DEFAULT_MAX_COLLECTIONS: usize = 1000;

/// Options of a [`Service`].
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// The most collections, open or unavailable: each costs a writer thread and an open file
    /// per segment.
    pub max_collections: usize,
    /// The most memory the collections' stream learning may take together, in bytes
    /// (`--learning-memory`; [`learning_budget`]): a creation past it is refused.
    pub learning_memory: u64,
    /// The time of insertions, retention and expiry ([`SystemClock`] by default).
    pub clock: Arc<dyn Clock>,
    /// A frozen index level of at least this many documents is written to a level file, which
    /// a restart loads instead of rebuilding it ([`LEVEL_FILE_DOCS`] by default; tests set it
    /// low to have files from few documents).
    pub level_file_docs: usize,
}

impl Default for ServiceOptions {
    fn default() -> ServiceOptions {
        ServiceOptions {
            max_collections: DEFAULT_MAX_COLLECTIONS,
            learning_memory: learning_budget::default_learning_memory(),
            clock: Arc::new(SystemClock),
            level_file_docs: LEVEL_FILE_DOCS,
        }
    }
}

/// Every collection of a data folder.
///
/// # Layout
///
/// `DIR/collections/<name>/` holds each collection (any legal name, `x.creating` included:
/// nothing else lives in that folder); `DIR/staging/` holds creations under way (renamed into
/// `collections/` once complete; what is left there at a start was never acknowledged and is
/// removed); `DIR/trash/` holds dropped collections until they are removed.
pub struct Service {
    data_dir: PathBuf,
    collections: RwLock<BTreeMap<String, Arc<dyn AnyCollection>>>,
    /// Collections whose folder could not be opened at start: name -> why (the paths relative
    /// to the collection's folder; the whole message is in the log). They are listed, answer
    /// 503, and can be dropped; the others serve.
    unavailable: RwLock<BTreeMap<String, String>>,
    options: ServiceOptions,
    /// Serialises creating and dropping collections.
    admin: Mutex<()>,
    /// Held while the service runs: one service per data folder.
    _lock: File,
}

struct Open<'a> {
    name: &'a str,
    dir: &'a Path,
    settings: Settings,
    options: &'a ServiceOptions,
}

impl MethodVisitor for Open<'_> {
    type Output = Result<Arc<dyn AnyCollection>, ServiceError>;
    fn visit<M: Registered>(self, method: M) -> Self::Output {
        let collection = Collection::open(
            self.name,
            self.dir,
            self.settings,
            method,
            Arc::clone(&self.options.clock),
            self.options.level_file_docs,
        )?;
        Ok(collection)
    }
}

fn open_collection(
    name: &str,
    dir: &Path,
    settings: Settings,
    options: &ServiceOptions,
) -> Result<Arc<dyn AnyCollection>, ServiceError> {
    let params = settings.method_params()?;
    let method = settings.method.clone();
    registry::with_method(
        &method,
        &params,
        Open {
            name,
            dir,
            settings,
            options,
        },
    )?
}

/// Checks a collection name: 1 to 64 of `A-Z a-z 0-9 _ - .`, not starting with `.`.
///
/// # Errors
/// A 422 naming the value.
pub fn check_name(name: &str) -> Result<(), ServiceError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(
            "name",
            format!(
                "{name:?}: a collection name is 1 to {MAX_NAME} of A-Z, a-z, 0-9, '_', '-', '.', \
                 not starting with '.'"
            ),
        ))
    }
}

/// Takes the data folder's lock: one service (or salvage) per folder.
fn lock_data_dir(data_dir: &Path) -> Result<File, ServiceError> {
    let lock_path = data_dir.join("neardup-service.lock");
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| StoreError::io(&lock_path, "cannot open", &e))?;
    lock.try_lock().map_err(|_| {
        ServiceError::new(
            500,
            "data_dir_in_use",
            format!(
                "{}: another neardup service is using this data folder",
                data_dir.display()
            ),
        )
    })?;
    Ok(lock)
}

/// The names of the folders in `collections/`, sorted.
fn list_names(collections_dir: &Path) -> Result<Vec<String>, ServiceError> {
    let entries = fs::read_dir(collections_dir)
        .map_err(|e| StoreError::io(collections_dir, "cannot list", &e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(collections_dir, "cannot list", &e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// The settings stored in a collection's folder.
fn read_settings(dir: &Path) -> Result<Settings, ServiceError> {
    let path = dir.join("settings.json");
    let bytes = fs::read(&path).map_err(|e| StoreError::io(&path, "cannot read", &e))?;
    let settings: Settings = serde_json::from_slice(&bytes)
        .map_err(|e| ServiceError::new(500, "store_error", format!("{}: {e}", path.display())))?;
    settings.check().map_err(|e| {
        ServiceError::new(
            500,
            "store_error",
            format!("{}: settings refused: {}", path.display(), e.message),
        )
    })?;
    Ok(settings)
}

/// Opens the collection stored in `dir` at start.
fn open_stored(
    name: &str,
    dir: &Path,
    options: &ServiceOptions,
) -> Result<Arc<dyn AnyCollection>, ServiceError> {
    check_name(name).map_err(|e| {
        ServiceError::new(
            500,
            "store_error",
            format!("{}: {}", dir.display(), e.message),
        )
    })?;
    let settings = read_settings(dir)?;
    open_collection(name, dir, settings, options)
}

/// `message` with the collection's folder `dir` left out of the paths it names
/// (`segments/seg-….log`, `settings.json`): what a client may be told of a store error.
fn without_data_path(message: &str, dir: &Path) -> String {
    let dir = dir.display().to_string();
    message
        .replace(&format!("{dir}/"), "")
        .replace(&dir, "the collection's folder")
}

/// What [`salvage`] did to a collection.
#[derive(Debug, Default)]
pub struct Salvaged {
    /// The segments rewritten with the records that check, in file order.
    pub rewritten: Vec<RewrittenSegment>,
    /// Gaps in sequence numbers accepted: (first missing, first after).
    pub gaps: Vec<(u64, u64)>,
}

/// A segment [`salvage`] rewrote.
#[derive(Debug)]
pub struct RewrittenSegment {
    /// The segment file.
    pub path: PathBuf,
    /// Where the original was copied whole.
    pub copy: PathBuf,
    /// What was kept and skipped.
    pub salvaged: store::SalvagedSegment,
}

/// Salvages collection `name` of a data folder whose service is stopped: every segment that
/// does not open is copied whole to `collections/<name>/salvaged/` and rewritten with every
/// record that checks (the bad bytes between them skipped, [`store::salvage_segment`]); every
/// gap in sequence numbers (documents lost in a skipped range, a missing segment, one cut
/// short before later ones) is accepted in `accepted-gaps.json`. The collection then opens
/// with every record that checks; the copies keep the rest for inspection.
///
/// # Errors
/// The data folder does not exist or is in use by a running service, the name is not a
/// collection name (`../x` never leaves the folder), the collection does not exist, or a
/// file cannot be read, copied or written.
pub fn salvage(data_dir: &Path, name: &str) -> Result<Salvaged, ServiceError> {
    if !data_dir.is_dir() {
        return Err(ServiceError::invalid(
            "data_dir",
            format!("{}: the data folder does not exist", data_dir.display()),
        ));
    }
    check_name(name)?;
    let _lock = lock_data_dir(data_dir)?;
    let dir = data_dir.join("collections").join(name);
    if !dir.is_dir() {
        return Err(ServiceError::new(
            404,
            "unknown_collection",
            format!(
                "no collection {name:?} in {} (nothing to salvage)",
                data_dir.display()
            ),
        ));
    }
    let mut report = Salvaged::default();
    for path in store::list_segments(&dir.join("segments"))? {
        if store::Segment::open(&path, store::Recovery::Strict, |_, _, _| Ok(())).is_ok() {
            continue;
        }
        let copy = copy_aside(&path, &dir.join("salvaged"))?;
        let salvaged = store::salvage_segment(&path)?;
        report.rewritten.push(RewrittenSegment {
            path,
            copy,
            salvaged,
        });
    }
    report.gaps = accept_gaps(&dir)?;
    let index = dir.join("index");
    if !report.rewritten.is_empty() && index.exists() {
        // The level files may hold documents the rewritten segments no longer have: the
        // next start rebuilds the index from the segments.
        fs::remove_dir_all(&index).map_err(|e| StoreError::io(&index, "cannot remove", &e))?;
    }
    Ok(report)
}

/// Copies segment `path` whole into `copies` (synced, with the folder); the copy's path.
fn copy_aside(path: &Path, copies: &Path) -> Result<PathBuf, ServiceError> {
    fs::create_dir_all(copies).map_err(|e| StoreError::io(copies, "cannot create", &e))?;
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let copy = copies.join(format!("{file_name}.{}", clock::now_ms()));
    fs::copy(path, &copy).map_err(|e| StoreError::io(&copy, "cannot copy", &e))?;
    File::open(&copy)
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::io(&copy, "cannot sync", &e))?;
    store::sync_dir(copies)?;
    Ok(copy)
}

/// Accepts every gap in sequence numbers between the segments of the collection in `dir`
/// (each must open); the gaps.
fn accept_gaps(dir: &Path) -> Result<Vec<(u64, u64)>, ServiceError> {
    let mut gaps = Vec::new();
    let mut next_seq: Option<u64> = None;
    for path in store::list_segments(&dir.join("segments"))? {
        let mut inserts = 0u64;
        let (segment, _) = store::Segment::open(&path, store::Recovery::Strict, |_, _, record| {
            inserts += u64::from(matches!(record, store::Record::Insert(_)));
            Ok(())
        })?;
        if let Some(expected) = next_seq.filter(|&expected| expected != segment.first_seq()) {
            let gap = (expected, segment.first_seq());
            collection::accept_gap(dir, gap)?;
            gaps.push(gap);
        }
        next_seq = Some(segment.first_seq() + inserts);
    }
    Ok(gaps)
}

impl Service {
    /// Opens (creating if needed) the data folder and every collection in it, with the
    /// default options.
    ///
    /// # Errors
    /// As [`Service::open_with`].
    pub fn open(data_dir: &Path) -> Result<Arc<Service>, ServiceError> {
        Service::open_with(data_dir, ServiceOptions::default())
    }

    /// Opens (creating if needed) the data folder and every collection in it. A collection
    /// that cannot be opened (a corrupt segment, an unreadable settings file, no file
    /// descriptor left) is logged by name and kept [unavailable](Service::unavailable): it
    /// never stops the others from serving.
    ///
    /// # Errors
    /// The folder cannot be created, listed or locked (another service uses it).
    pub fn open_with(
        data_dir: &Path,
        options: ServiceOptions,
    ) -> Result<Arc<Service>, ServiceError> {
        let collections_dir = data_dir.join("collections");
        fs::create_dir_all(&collections_dir)
            .map_err(|e| StoreError::io(&collections_dir, "cannot create", &e))?;
        let lock = lock_data_dir(data_dir)?;
        // Collections dropped, and creations interrupted, before a crash: finish removing them.
        for leftover in [data_dir.join("trash"), data_dir.join("staging")] {
            if leftover.exists() {
                fs::remove_dir_all(&leftover)
                    .map_err(|e| StoreError::io(&leftover, "cannot remove", &e))?;
            }
        }
        let mut collections = BTreeMap::new();
        let mut unavailable = BTreeMap::new();
        for name in list_names(&collections_dir)? {
            match open_stored(&name, &collections_dir.join(&name), &options) {
                Ok(collection) => {
                    collections.insert(name, collection);
                }
                Err(error) => {
                    // The log has the whole message; clients are told the file inside the
                    // collection's folder, never the server's data path.
                    eprintln!(
                        "neardup: collection {name:?} cannot be opened and is unavailable \
                         (the others serve): {}",
                        error.message
                    );
                    let shown = without_data_path(&error.message, &collections_dir.join(&name));
                    unavailable.insert(name, shown);
                }
            }
        }
        let taken = learning_budget::taken(collections.values().map(|c| c.settings()));
        learning_budget::warn_at_start(options.learning_memory, taken);
        Ok(Arc::new(Service {
            data_dir: data_dir.to_owned(),
            collections: RwLock::new(collections),
            unavailable: RwLock::new(unavailable),
            options,
            admin: Mutex::new(()),
            _lock: lock,
        }))
    }

    /// The collection called `name`.
    ///
    /// # Errors
    /// 404 when there is none.
    pub fn collection(&self, name: &str) -> Result<Arc<dyn AnyCollection>, ServiceError> {
        let collections = self.collections.read().unwrap_or_else(|e| e.into_inner());
        if let Some(collection) = collections.get(name) {
            return Ok(Arc::clone(collection));
        }
        match self.unavailable_reason(name) {
            Some(why) => Err(ServiceError::new(
                503,
                "collection_unavailable",
                format!(
                    "collection {name:?} could not be opened at start: {why}; see the recovery \
                     rules in docs/service.md (DELETE drops it)"
                ),
            )),
            None => Err(ServiceError::unknown_collection(name)),
        }
    }

    /// Why collection `name` is unavailable, if it is.
    fn unavailable_reason(&self, name: &str) -> Option<String> {
        let unavailable = self.unavailable.read().unwrap_or_else(|e| e.into_inner());
        unavailable.get(name).cloned()
    }

    /// The collections that could not be opened at start, with the reason, sorted by name.
    pub fn unavailable(&self) -> Vec<(String, String)> {
        let unavailable = self.unavailable.read().unwrap_or_else(|e| e.into_inner());
        unavailable
            .iter()
            .map(|(name, why)| (name.clone(), why.clone()))
            .collect()
    }

    /// The names of the collections, sorted.
    pub fn names(&self) -> Vec<String> {
        let collections = self.collections.read().unwrap_or_else(|e| e.into_inner());
        collections.keys().cloned().collect()
    }

    /// Creates collection `name` with `settings`; true when created, false when it exists
    /// with the same settings. The settings are checked completely before anything is
    /// written; the collection is built in `staging/` and renamed into place, and a creation
    /// that fails after that is undone: it either completes or leaves nothing.
    ///
    /// # Errors
    /// A bad name or settings (422; for a new collection also [`Settings::check_new`]),
    /// settings that differ from the existing collection's (409), an unavailable collection
    /// of that name (409), the collection limit (409), the learning budget (409,
    /// [`learning_budget`]), or a store failure.
    pub fn create(&self, name: &str, settings: Settings) -> Result<bool, ServiceError> {
        check_name(name)?;
        settings.check()?;
        let _admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = self.unavailable_reason(name) {
            return Err(ServiceError::new(
                409,
                "collection_exists",
                format!(
                    "collection {name:?} exists but could not be opened ({why}); DELETE it first"
                ),
            ));
        }
        if let Ok(existing) = self.collection(name) {
            if existing.settings() == &settings {
                return Ok(false);
            }
            return Err(ServiceError::new(
                409,
                "collection_exists",
                format!(
                    "collection {name:?} exists with other settings ({}); DELETE it first",
                    serde_json::to_string(existing.settings()).unwrap_or_default()
                ),
            ));
        }
        settings.check_new()?;
        let count = self.names().len() + self.unavailable().len();
        if count >= self.options.max_collections {
            return Err(ServiceError::new(
                409,
                "collection_limit",
                format!(
                    "this service holds {count} collections, its limit (--max-collections {}); \
                     drop one or raise the limit",
                    self.options.max_collections
                ),
            ));
        }
        let taken = {
            let collections = self.collections.read().unwrap_or_else(|e| e.into_inner());
            learning_budget::taken(collections.values().map(|c| c.settings()))
        };
        learning_budget::admit(self.options.learning_memory, taken, &settings)?;
        let dir = self.stage(name, &settings)?;
        match open_collection(name, &dir, settings, &self.options) {
            Ok(collection) => {
                self.collections
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.to_owned(), collection);
                Ok(true)
            }
            Err(error) => {
                // Undo: the collection was never acknowledged.
                self.discard(name, &dir)?;
                Err(error)
            }
        }
    }

    /// Writes a new collection's folder in `staging/` and renames it into `collections/`;
    /// returns its folder. Nothing is left behind on failure.
    fn stage(&self, name: &str, settings: &Settings) -> Result<PathBuf, ServiceError> {
        let collections_dir = self.data_dir.join("collections");
        let staging = self.data_dir.join("staging");
        let building = staging.join(name);
        let dir = collections_dir.join(name);
        if fs::symlink_metadata(&dir).is_ok() {
            return Err(ServiceError::new(
                409,
                "collection_exists",
                format!(
                    "{} exists but is not a collection this service opened; move it away",
                    dir.display()
                ),
            ));
        }
        let _ = fs::remove_dir_all(&building);
        let result = (|| {
            fs::create_dir_all(building.join("segments"))
                .map_err(|e| StoreError::io(&building, "cannot create", &e))?;
            let bytes = serde_json::to_vec_pretty(settings)
                .map_err(|e| ServiceError::new(500, "internal", e.to_string()))?;
            store::write_atomic(&building.join("settings.json"), &bytes)?;
            fs::rename(&building, &dir).map_err(|e| StoreError::io(&dir, "cannot create", &e))?;
            store::sync_dir(&collections_dir)?;
            Ok(dir.clone())
        })();
        if result.is_err() {
            let _ = fs::remove_dir_all(&building);
        }
        result
    }

    /// Moves a collection's folder to the trash and removes it.
    fn discard(&self, name: &str, dir: &Path) -> Result<(), ServiceError> {
        let trash = self.data_dir.join("trash");
        fs::create_dir_all(&trash).map_err(|e| StoreError::io(&trash, "cannot create", &e))?;
        let target = trash.join(format!("{name}.{}", clock::now_ms()));
        fs::rename(dir, &target).map_err(|e| StoreError::io(dir, "cannot drop", &e))?;
        store::sync_dir(&self.data_dir.join("collections"))?;
        std::thread::spawn(move || {
            let _ = fs::remove_dir_all(&target);
        });
        Ok(())
    }

    /// Drops collection `name` and its stored documents (an unavailable one too); false when
    /// there was none.
    ///
    /// # Errors
    /// A store failure.
    pub fn drop_collection(&self, name: &str) -> Result<bool, ServiceError> {
        let _admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
        let removed = self
            .collections
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        if let Some(collection) = removed {
            collection.close();
            let dir = collection.dir().to_owned();
            drop(collection);
            self.discard(name, &dir)?;
            return Ok(true);
        }
        let was_unavailable = self
            .unavailable
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
            .is_some();
        if was_unavailable {
            self.discard(name, &self.data_dir.join("collections").join(name))?;
        }
        Ok(was_unavailable)
    }

    /// A collection's answer: name, settings and counts.
    pub fn describe(&self, collection: &dyn AnyCollection) -> CollectionAnswer {
        CollectionAnswer {
            name: collection.name().to_owned(),
            settings: collection.settings().clone(),
            stats: collection.stats(),
        }
    }

    /// Stops every collection's writer after its queued jobs.
    pub fn close(&self) {
        let collections: Vec<Arc<dyn AnyCollection>> = {
            let collections = self.collections.read().unwrap_or_else(|e| e.into_inner());
            collections.values().cloned().collect()
        };
        for collection in collections {
            collection.close();
        }
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }
}
