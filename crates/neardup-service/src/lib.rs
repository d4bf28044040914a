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

pub mod client;
pub mod collection;
pub mod error;
pub mod http;
pub mod settings;
pub mod store;

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use neardup_core::registry::{self, MethodVisitor, Registered};
use serde_json::{json, Value};

pub use collection::{AnyCollection, Found, Inserted, NewDocument};
pub use error::ServiceError;
pub use settings::Settings;

use crate::collection::Collection;
use crate::store::StoreError;

/// The longest collection name.
const MAX_NAME: usize = 64;

/// Every collection of a data folder.
pub struct Service {
    data_dir: PathBuf,
    collections: RwLock<BTreeMap<String, Arc<dyn AnyCollection>>>,
    /// Serialises creating and dropping collections.
    admin: Mutex<()>,
    /// Held while the service runs: one service per data folder.
    _lock: File,
}

struct Open<'a> {
    name: &'a str,
    dir: &'a Path,
    settings: Settings,
}

impl MethodVisitor for Open<'_> {
    type Output = Result<Arc<dyn AnyCollection>, ServiceError>;
    fn visit<M: Registered>(self, method: M) -> Self::Output {
        let collection = Collection::open(self.name, self.dir, self.settings, method)?;
        Ok(collection)
    }
}

fn open_collection(
    name: &str,
    dir: &Path,
    settings: Settings,
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

impl Service {
    /// Opens (creating if needed) the data folder and every collection in it.
    ///
    /// # Errors
    /// The folder cannot be created or locked (another service uses it), or a collection
    /// cannot be opened (named).
    pub fn open(data_dir: &Path) -> Result<Arc<Service>, ServiceError> {
        let collections_dir = data_dir.join("collections");
        fs::create_dir_all(&collections_dir)
            .map_err(|e| StoreError::io(&collections_dir, "cannot create", &e))?;
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
        // Collections dropped before a crash: finish removing them.
        let trash = data_dir.join("trash");
        if trash.exists() {
            fs::remove_dir_all(&trash).map_err(|e| StoreError::io(&trash, "cannot remove", &e))?;
        }
        let mut collections = BTreeMap::new();
        let entries = fs::read_dir(&collections_dir)
            .map_err(|e| StoreError::io(&collections_dir, "cannot list", &e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io(&collections_dir, "cannot list", &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".creating") {
                // A creation interrupted before its rename: never acknowledged.
                fs::remove_dir_all(entry.path())
                    .map_err(|e| StoreError::io(&entry.path(), "cannot remove", &e))?;
                continue;
            }
            names.push(name);
        }
        names.sort();
        for name in names {
            let dir = collections_dir.join(&name);
            let settings_path = dir.join("settings.json");
            let settings: Settings = fs::read(&settings_path)
                .map_err(|e| StoreError::io(&settings_path, "cannot read", &e).into())
                .and_then(|bytes| {
                    serde_json::from_slice(&bytes).map_err(|e| {
                        ServiceError::new(
                            500,
                            "store_error",
                            format!("{}: {e}", settings_path.display()),
                        )
                    })
                })?;
            let collection = open_collection(&name, &dir, settings)?;
            collections.insert(name, collection);
        }
        Ok(Arc::new(Service {
            data_dir: data_dir.to_owned(),
            collections: RwLock::new(collections),
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
        collections
            .get(name)
            .cloned()
            .ok_or_else(|| ServiceError::unknown_collection(name))
    }

    /// The names of the collections, sorted.
    pub fn names(&self) -> Vec<String> {
        let collections = self.collections.read().unwrap_or_else(|e| e.into_inner());
        collections.keys().cloned().collect()
    }

    /// Creates collection `name` with `settings`; true when created, false when it exists
    /// with the same settings.
    ///
    /// # Errors
    /// A bad name, settings that differ from the existing collection's (409), or a store
    /// failure.
    pub fn create(&self, name: &str, settings: Settings) -> Result<bool, ServiceError> {
        check_name(name)?;
        let _admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
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
        let collections_dir = self.data_dir.join("collections");
        let building = collections_dir.join(format!("{name}.creating"));
        let dir = collections_dir.join(name);
        let _ = fs::remove_dir_all(&building);
        fs::create_dir_all(building.join("segments"))
            .map_err(|e| StoreError::io(&building, "cannot create", &e))?;
        let bytes = serde_json::to_vec_pretty(&settings)
            .map_err(|e| ServiceError::new(500, "internal", e.to_string()))?;
        store::write_atomic(&building.join("settings.json"), &bytes)?;
        fs::rename(&building, &dir).map_err(|e| StoreError::io(&dir, "cannot create", &e))?;
        store::sync_dir(&collections_dir)?;
        let collection = open_collection(name, &dir, settings)?;
        self.collections
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), collection);
        Ok(true)
    }

    /// Drops collection `name` and its stored documents; false when there was none.
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
        let Some(collection) = removed else {
            return Ok(false);
        };
        collection.close();
        let trash = self.data_dir.join("trash");
        fs::create_dir_all(&trash).map_err(|e| StoreError::io(&trash, "cannot create", &e))?;
        let target = trash.join(format!("{name}.{}", collection::now_ms()));
        fs::rename(collection.dir(), &target)
            .map_err(|e| StoreError::io(collection.dir(), "cannot drop", &e))?;
        store::sync_dir(&self.data_dir.join("collections"))?;
        drop(collection);
        std::thread::spawn(move || {
            let _ = fs::remove_dir_all(&target);
        });
        Ok(true)
    }

    /// A collection as JSON: name, settings, the method's settings in effect, and counts.
    pub fn describe(&self, collection: &dyn AnyCollection) -> Value {
        json!({
            "name": collection.name(),
            "settings": collection.settings(),
            "stats": collection.stats(),
        })
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
