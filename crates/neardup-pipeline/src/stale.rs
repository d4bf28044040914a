//! Temporary files and folders that say whether the run that made them still runs, and the
//! removal of those whose run is gone.
//!
//! # Overview
//!
//! A run writes each output to a temporary file beside it and spills to a temporary folder;
//! both are removed when the run ends, fails or gets a signal it can handle. A run killed
//! with SIGKILL, or stopped by the machine, leaves them behind, and they can be large (a
//! spill folder of hundreds of megabytes). So they carry a name a later run recognises, and
//! a lock that says whether their owner is alive:
//!
//! - output files: `<output name>.tmp-neardup-<pid>-<random>` beside the output;
//! - spill folders: `.neardup-tmp-<pid>-<random>` in `--temp-dir` or beside the output.
//!
//! The owner holds an exclusive `flock` on the file (or folder) from right after creating it
//! until it is renamed into place or removed. The kernel releases the lock when the process
//! ends, however it ends, so a file whose lock can be taken is stale: its run is gone. The
//! process id in the name is only for people reading the folder; it is never trusted (ids
//! are reused).
//!
//! Before a run creates a temporary file or folder in a folder, it [removes](clean_once) the
//! stale ones there (once per folder and process), and a [reporter](report_removed_with)
//! installed by the front end says what went and how many bytes were freed. A live run's files
//! are never touched: their lock is held.
//!
//! Races: a remover takes the lock, checks that the name still names the file it locked, and
//! removes it while holding the lock. An owner locks right after creating, waits if a
//! remover holds the lock, and checks that the name still names its file; if a remover took
//! it in between, the owner makes another.
//!
//! Files of versions before this scheme (`<name>.tmp-XXXXXX`, `.neardup-tmp-XXXXXX`) carry no
//! lock and are left alone: nothing tells whether their run still goes.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What the name of a temporary output file has between the output's name and the owner's
/// process id.
pub const FILE_MARK: &str = ".tmp-neardup-";
/// How the name of a temporary folder starts.
pub const FOLDER_PREFIX: &str = ".neardup-tmp-";
/// Random characters at the end of a temporary name.
const RANDOM: usize = 6;
/// Attempts at a temporary name before giving up (a remover would have to take each one in
/// the instant between its creation and its lock).
const ATTEMPTS: usize = 8;

/// A stale temporary file or folder that was removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The file or folder.
    pub path: PathBuf,
    /// Bytes freed (for a folder, the sizes of the files in it).
    pub bytes: u64,
    /// The process id its name gives (the run that left it).
    pub pid: Option<u32>,
}

impl std::fmt::Display for Removed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "removed {} ({}) left by an interrupted run",
            self.path.display(),
            human_bytes(self.bytes)
        )?;
        match self.pid {
            Some(pid) => write!(f, " (process {pid}, gone)"),
            None => Ok(()),
        }
    }
}

/// `bytes` for people: `402.0 MB`, `12 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Told of every stale file or folder a run removes; set once by the front end.
static REPORTER: OnceLock<fn(&Removed)> = OnceLock::new();

/// Folders already cleaned by this process.
static CLEANED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Has `reporter` told of every stale temporary file or folder this process removes (the CLI
/// prints a line unless `--quiet`). Only the first call counts.
pub fn report_removed_with(reporter: fn(&Removed)) {
    let _ = REPORTER.set(reporter);
}

/// Removes the stale temporary files and folders of `directory` ([`remove_stale`]) the first
/// time this process is about to write there, and reports them.
pub fn clean_once(directory: &Path) {
    let key = fs::canonicalize(directory).unwrap_or_else(|_| directory.to_path_buf());
    {
        let mut cleaned = CLEANED.lock().unwrap_or_else(|e| e.into_inner());
        if cleaned.contains(&key) {
            return;
        }
        cleaned.push(key);
    }
    for removed in remove_stale(directory) {
        if let Some(report) = REPORTER.get() {
            report(&removed);
        }
    }
}

/// Removes every temporary file and folder of `directory` (named as this module says) whose
/// lock nobody holds, and returns what it removed. What cannot be examined or removed
/// (permissions) is left as it is.
pub fn remove_stale(directory: &Path) -> Vec<Removed> {
    let Ok(entries) = fs::read_dir(directory) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(kind) = Kind::of(&name) else {
            continue;
        };
        if let Some(gone) = remove_if_stale(&entry.path(), kind) {
            removed.push(gone);
        }
    }
    removed.sort_by(|a, b| a.path.cmp(&b.path));
    removed
}

/// What a temporary name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An output's temporary file; the process id of its name.
    File(u32),
    /// A run's temporary folder.
    Folder(u32),
}

impl Kind {
    /// The kind of a name made by [`create_file`] or [`create_folder`].
    fn of(name: &OsStr) -> Option<Kind> {
        let name = name.to_str()?;
        if let Some(rest) = name.strip_prefix(FOLDER_PREFIX) {
            return owner(rest).map(Kind::Folder);
        }
        let (stem, rest) = name.rsplit_once(FILE_MARK)?;
        (!stem.is_empty()).then_some(())?;
        owner(rest).map(Kind::File)
    }
}

/// The process id of `<pid>-<random>`.
fn owner(rest: &str) -> Option<u32> {
    let (pid, random) = rest.split_once('-')?;
    let alphanumeric = random.chars().all(|c| c.is_ascii_alphanumeric());
    (random.len() == RANDOM && alphanumeric && !pid.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// Removes `path` if it is what `kind` says and its lock is free.
fn remove_if_stale(path: &Path, kind: Kind) -> Option<Removed> {
    let meta = fs::symlink_metadata(path).ok()?;
    let (is_kind, pid) = match kind {
        Kind::File(pid) => (meta.file_type().is_file(), pid),
        Kind::Folder(pid) => (meta.file_type().is_dir(), pid),
    };
    if !is_kind {
        return None;
    }
    let handle = File::open(path).ok()?;
    // Held: its run is alive. Any other failure: leave it.
    handle.try_lock().ok()?;
    // The name still names what was locked (not a file made since under the same name).
    if !same_file(&handle, path) {
        return None;
    }
    let bytes = match kind {
        Kind::File(_) => meta.len(),
        Kind::Folder(_) => folder_bytes(path),
    };
    let gone = match kind {
        Kind::File(_) => fs::remove_file(path),
        Kind::Folder(_) => fs::remove_dir_all(path),
    };
    gone.ok()?;
    Some(Removed {
        path: path.to_path_buf(),
        bytes,
        pid: Some(pid),
    })
}

/// The bytes of the files under `folder` (links not followed).
fn folder_bytes(folder: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![folder.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// Whether `path` names the file `handle` has open.
fn same_file(handle: &File, path: &Path) -> bool {
    match (handle.metadata(), fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => identity(&open) == identity(&named),
        _ => false,
    }
}

#[cfg(unix)]
fn identity(meta: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(meta: &fs::Metadata) -> (u64, u64) {
    // Without inodes: the size and time stand in (a remover's check is then weaker).
    let modified = (meta.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    (meta.len(), modified)
}

/// Locks `handle` (waiting while a remover holds it) and checks that `path` still names it:
/// `Some(true)` when it is this process's, `Some(false)` when a remover took it, `None` when
/// the file system cannot lock.
fn lock_own(handle: &File, path: &Path) -> Option<bool> {
    handle.lock().ok()?;
    Some(same_file(handle, path))
}

/// The prefix of this process's temporary names for `stem`: `<stem><mark><pid>-`.
fn prefix(stem: &OsStr, mark: &str) -> OsString {
    let mut prefix = stem.to_os_string();
    prefix.push(mark);
    prefix.push(format!("{}-", std::process::id()));
    prefix
}

/// Creates `<name>.tmp-neardup-<pid>-<random>` in `directory`, with `permissions` when given,
/// and locks it. Returns the file (open for reading and writing; the lock goes with it and
/// its clones) and its path. Where the file system cannot lock, the file is named
/// `<name>.tmp-<random>` instead, which no later run removes.
///
/// # Errors
/// The file cannot be created.
pub(crate) fn create_file(
    directory: &Path,
    name: &OsStr,
    permissions: Option<fs::Permissions>,
) -> io::Result<(File, PathBuf)> {
    let create = |prefix: &OsStr| {
        let mut builder = tempfile::Builder::new();
        builder.prefix(prefix).rand_bytes(RANDOM);
        if let Some(permissions) = &permissions {
            builder.permissions(permissions.clone());
        }
        let (file, temp_path) = builder.tempfile_in(directory)?.into_parts();
        let path = temp_path.keep().map_err(|e| e.error)?;
        io::Result::Ok((file, path))
    };
    let marked = prefix(name, FILE_MARK);
    for _ in 0..ATTEMPTS {
        let (file, path) = create(&marked)?;
        match lock_own(&file, &path) {
            Some(true) => return Ok((file, path)),
            Some(false) => continue,
            None => {
                let _ = fs::remove_file(&path);
                let mut unmarked = name.to_os_string();
                unmarked.push(".tmp-");
                return create(&unmarked);
            }
        }
    }
    Err(io::Error::other(
        "another process kept removing the temporary files made here",
    ))
}

/// Creates `.neardup-tmp-<pid>-<random>` in `parent` and locks it. Returns the folder's
/// path and the handle that holds the lock (the folder is stale once it is closed; `None`
/// where the file system cannot lock: the folder is then named `.neardup-tmp-<random>`,
/// which no later run removes).
///
/// # Errors
/// The folder cannot be created.
pub(crate) fn create_folder(parent: &Path) -> io::Result<(PathBuf, Option<File>)> {
    let create = |prefix: &OsStr| {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .rand_bytes(RANDOM)
            .tempdir_in(parent)?;
        io::Result::Ok(dir.keep())
    };
    let marked = prefix(OsStr::new(""), FOLDER_PREFIX);
    for _ in 0..ATTEMPTS {
        let path = create(&marked)?;
        let handle = File::open(&path).ok();
        match handle.as_ref().and_then(|handle| lock_own(handle, &path)) {
            Some(true) => return Ok((path, handle)),
            Some(false) => continue,
            None => {
                let _ = fs::remove_dir(&path);
                return Ok((create(OsStr::new(FOLDER_PREFIX))?, None));
            }
        }
    }
    Err(io::Error::other(
        "another process kept removing the temporary folders made here",
    ))
}

/// A folder one process at a time may use (a resumable run's), and whether this one got it.
#[derive(Debug)]
pub(crate) enum FolderLock {
    /// This process holds it while the handle is open.
    Held(File),
    /// Another process holds it.
    Busy,
    /// The folder cannot be opened or the file system cannot lock: nothing is known.
    Unavailable,
}

/// Opens and locks `folder` for this process alone, without waiting.
pub(crate) fn lock_folder(folder: &Path) -> FolderLock {
    let Ok(handle) = File::open(folder) else {
        return FolderLock::Unavailable;
    };
    match handle.try_lock() {
        Ok(()) => FolderLock::Held(handle),
        Err(fs::TryLockError::WouldBlock) => FolderLock::Busy,
        Err(fs::TryLockError::Error(_)) => FolderLock::Unavailable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn names_are_recognised_and_others_are_not() {
        let kind = |name: &str| Kind::of(OsStr::new(name));
        assert_eq!(
            kind("out.jsonl.tmp-neardup-42-aB3dE9"),
            Some(Kind::File(42))
        );
        assert_eq!(kind(".neardup-tmp-7-aB3dE9"), Some(Kind::Folder(7)));
        for other in [
            "out.jsonl.tmp-aB3dE9",
            ".neardup-tmp-aB3dE9",
            ".tmp-neardup-42-aB3dE9",
            "out.tmp-neardup-x-aB3dE9",
            "out.tmp-neardup-42-aB3dE",
            "out.tmp-neardup-42-aB3dE9.bak",
            "notes.txt",
        ] {
            assert_eq!(kind(other), None, "{other}");
        }
    }

    #[test]
    fn a_live_file_is_kept_and_a_dead_one_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (live, live_path) = create_file(dir.path(), OsStr::new("out.jsonl"), None).unwrap();
        let (folder, folder_lock) = create_folder(dir.path()).unwrap();
        assert!(folder_lock.is_some());
        fs::write(folder.join("sketches"), vec![0u8; 3000]).unwrap();
        assert!(remove_stale(dir.path()).is_empty());
        assert_eq!(names(dir.path()).len(), 2);
        // Their owner is gone: the handles that held the locks are closed.
        drop(folder_lock);
        let mut dead = live.try_clone().unwrap();
        drop(live);
        io::Write::write_all(&mut dead, b"partial").unwrap();
        drop(dead);
        let removed = remove_stale(dir.path());
        let pid = Some(std::process::id());
        let mut expected = vec![
            Removed {
                path: folder,
                bytes: 3000,
                pid,
            },
            Removed {
                path: live_path,
                bytes: 7,
                pid,
            },
        ];
        expected.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(removed, expected);
        assert!(names(dir.path()).is_empty());
        assert!(removed[0]
            .to_string()
            .contains("left by an interrupted run"));
    }

    #[test]
    fn look_alikes_of_other_kinds_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        // A folder named like a file, a file named like a folder, an older unlocked name.
        fs::create_dir(dir.path().join("x.tmp-neardup-1-aaaaaa")).unwrap();
        fs::write(dir.path().join(".neardup-tmp-1-aaaaaa"), b"x").unwrap();
        fs::write(dir.path().join("x.tmp-aaaaaa"), b"x").unwrap();
        assert!(remove_stale(dir.path()).is_empty());
        assert_eq!(names(dir.path()).len(), 3);
    }

    #[test]
    fn a_locked_resume_folder_is_refused_to_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_folder(dir.path());
        assert!(matches!(first, FolderLock::Held(_)), "{first:?}");
        assert!(matches!(lock_folder(dir.path()), FolderLock::Busy));
        drop(first);
        assert!(matches!(lock_folder(dir.path()), FolderLock::Held(_)));
        let missing = dir.path().join("missing");
        assert!(matches!(lock_folder(&missing), FolderLock::Unavailable));
    }

    #[test]
    fn sizes_read_for_people() {
        assert_eq!(human_bytes(12), "12 bytes");
        assert_eq!(human_bytes(402_000_000), "402.0 MB");
        assert_eq!(human_bytes(1_500), "1.5 kB");
    }
}
