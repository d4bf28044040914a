//! What stands at an output's path, which paths name the same file, and the temporary files to
//! remove if the process is stopped.
//!
//! # Overview
//!
//! An output path is one of three things ([`Destination`]):
//!
//! - standard output: `-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`;
//! - something written in place, streaming: a path that exists and is not a regular file (a
//!   device such as `/dev/null`, a FIFO, a terminal) or that names an open descriptor
//!   (`/dev/fd/N`, `/proc/self/fd/N`, `/dev/stderr`, a process substitution). Replacing such
//!   a path with a regular file would break the machine (`/dev/null`) or lose the data (a
//!   FIFO's reader would see nothing);
//! - a regular file, new or existing, replaced atomically: written to a temporary file beside
//!   it and renamed over it. A symbolic link is followed, and its final target is what gets
//!   replaced; the link itself stays.
//!
//! [`check_distinct_named`] refuses, before anything is read or written, an output that is the
//! same file as any file the run reads (the corpus, and every list, table or lexicon an option
//! names) or as another output: same canonical path, or same device and inode.
//!
//! Temporary files are registered (`register_temporary`) while they exist, so that a signal
//! handler can [remove them all](remove_temporary_files) before the process exits.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// The path that stands for standard input or output.
pub const STANDARD: &str = "-";

/// Whether the input `path` can be read only once: standard input, or what is neither a
/// regular file nor a directory (a FIFO, a process substitution's `/dev/fd/N`, a device, a
/// socket), whose bytes the first read consumes. Such an input is never sampled or peeked
/// at, and a run that reads its inputs more than once reads a copy of it.
pub fn read_once(path: &str) -> bool {
    path == STANDARD || fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The name of an input `path` in messages: `-` is `<stdin>`.
pub fn display_input(path: &str) -> &str {
    if path == STANDARD {
        "<stdin>"
    } else {
        path
    }
}

/// The name of an output `path` in messages: `-` is `<stdout>`.
pub fn display_output(path: &str) -> &str {
    if path == STANDARD {
        "<stdout>"
    } else {
        path
    }
}

/// Symbolic links followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: usize = 40;

/// Where an output's bytes go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// The process's standard output.
    Stdout,
    /// Opened for writing and written as the data comes: a device, a FIFO, a descriptor.
    InPlace(PathBuf),
    /// A regular file (existing or not), written beside and renamed over; for a symbolic link,
    /// its final target.
    Replace(PathBuf),
}

/// What stands at `path`, following symbolic links.
///
/// # Errors
///
/// [`Error::Output`] if `path` is a directory, a chain of more than 40 links, or cannot be
/// examined (permission denied on a parent directory, ...).
pub fn resolve(path: &str) -> Result<Destination> {
    if path == STANDARD {
        return Ok(Destination::Stdout);
    }
    if let Some(descriptor) = descriptor_alias(Path::new(path)) {
        return Ok(match descriptor {
            Some(1) => Destination::Stdout,
            _ => Destination::InPlace(PathBuf::from(path)),
        });
    }
    let mut current = PathBuf::from(path);
    for _ in 0..MAX_LINKS {
        let metadata = match fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(Destination::Replace(current));
            }
            Err(error) => return Err(Error::output(path, error)),
        };
        let kind = metadata.file_type();
        if kind.is_symlink() {
            let target = fs::read_link(&current).map_err(|e| Error::output(path, e))?;
            if descriptor_alias(&target).is_some() {
                return Ok(Destination::InPlace(PathBuf::from(path)));
            }
            current = match current.parent() {
                Some(parent) if target.is_relative() => parent.join(target),
                _ => target,
            };
        } else if kind.is_dir() {
            return Err(Error::output(path, "it is a directory"));
        } else if kind.is_file() {
            return Ok(Destination::Replace(current));
        } else {
            return Ok(Destination::InPlace(current));
        }
    }
    Err(Error::output(path, "too many levels of symbolic links"))
}

/// For a path that names an open descriptor of this process (`/dev/stdout`, `/dev/stderr`,
/// `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`, `/proc/<pid>/fd/N`): `Some` of its number
/// when the path gives one.
fn descriptor_alias(path: &Path) -> Option<Option<u32>> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(Some(0)),
        "/dev/stdout" => return Some(Some(1)),
        "/dev/stderr" => return Some(Some(2)),
        _ => {}
    }
    let number = |rest: &str| rest.parse::<u32>().ok();
    if let Some(rest) = text.strip_prefix("/dev/fd/") {
        return Some(number(rest));
    }
    if text.starts_with("/proc/") {
        let fd = text.rsplit_once("/fd/").and_then(|(_, rest)| number(rest));
        let own = text.starts_with("/proc/self/")
            || text.starts_with("/proc/thread-self/")
            || text.starts_with(&format!("/proc/{}/", std::process::id()));
        return Some(if own { fd } else { None });
    }
    None
}

/// What identifies a file for [`check_distinct`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    /// The canonical path of what the path finally names (for a file that does not exist yet,
    /// its canonical directory joined with its name).
    canonical: Option<PathBuf>,
    /// Device and inode, when the file exists.
    inode: Option<(u64, u64)>,
    /// A character device (`/dev/null`, a terminal): several outputs may share one.
    character_device: bool,
}

impl Identity {
    fn of(path: &str) -> Identity {
        let metadata = fs::metadata(path).ok();
        Identity {
            canonical: canonical(path),
            inode: metadata.as_ref().and_then(inode),
            character_device: metadata.as_ref().is_some_and(is_character_device),
        }
    }

    fn same_file(&self, other: &Identity) -> bool {
        if self.character_device && other.character_device {
            return false;
        }
        let same_path = self.canonical.is_some() && self.canonical == other.canonical;
        let same_inode = self.inode.is_some() && self.inode == other.inode;
        same_path || same_inode
    }
}

/// The canonical form of `path`, also for a file that does not exist yet (or a dangling link).
fn canonical(path: &str) -> Option<PathBuf> {
    if let Ok(canonical) = fs::canonicalize(path) {
        return Some(canonical);
    }
    let target = match resolve(path).ok()? {
        Destination::Replace(target) | Destination::InPlace(target) => target,
        Destination::Stdout => return None,
    };
    let name = target.file_name()?;
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let directory = fs::canonicalize(parent).ok()?;
    if matches!(
        Path::new(name).components().next(),
        Some(Component::ParentDir)
    ) {
        return None;
    }
    Some(directory.join(name))
}

#[cfg(unix)]
fn inode(metadata: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(unix)]
fn is_character_device(metadata: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    metadata.file_type().is_char_device()
}

#[cfg(not(unix))]
fn is_character_device(_: &fs::Metadata) -> bool {
    false
}

/// Refuses an output that is the same file as an input or as another output, and more than
/// one output on standard output: [`check_distinct_named`] for inputs that are all given
/// without an option (the positional inputs of a command).
///
/// # Errors
///
/// As [`check_distinct_named`].
pub fn check_distinct(inputs: &[&str], outputs: &[(&str, &str)]) -> Result<()> {
    let inputs: Vec<(Option<&str>, &str)> = inputs.iter().map(|&path| (None, path)).collect();
    check_distinct_named(&inputs, outputs)
}

/// Refuses an output that is the same file as a file the run reads or as another output, and
/// more than one output on standard output. `inputs` pairs every file the run reads with the
/// option that names it (`None` for a positional input; `` `boilerplate_file` `` for a
/// method's list, `` `truth` ``, ...): every one counts, not only the corpus. `outputs` pairs
/// each output's option (`` `clusters` ``) with its path. Call it before reading or creating
/// anything.
///
/// Two paths are the same file when they have the same canonical path (symbolic links and `..`
/// resolved; for a file not created yet, its directory's) or the same device and inode (hard
/// links). Character devices (`/dev/null`, a terminal) may take several outputs.
///
/// # Errors
///
/// [`Error::Output`] naming the output, its option, the file it collides with and that
/// file's option.
pub fn check_distinct_named<S: AsRef<str>>(
    inputs: &[(Option<S>, &str)],
    outputs: &[(&str, &str)],
) -> Result<()> {
    let mut on_stdout: Option<&str> = None;
    let mut seen: Vec<(&str, &str, Identity)> = Vec::new();
    let read: Vec<(Option<&str>, &str, Identity)> = (inputs.iter())
        .filter(|(_, path)| *path != STANDARD)
        .map(|(option, path)| {
            (
                option.as_ref().map(AsRef::as_ref),
                *path,
                Identity::of(path),
            )
        })
        .collect();
    for &(option, path) in outputs {
        if resolve(path).ok() == Some(Destination::Stdout) {
            if let Some(first) = on_stdout {
                let message =
                    format!("{option} and {first} both write to standard output; give files");
                return Err(Error::output(path, message));
            }
            on_stdout = Some(option);
            continue;
        }
        let identity = Identity::of(path);
        for (input_option, input, input_identity) in &read {
            if identity.same_file(input_identity) {
                let read_by = match input_option {
                    Some(input_option) => format!(" (read by {input_option})"),
                    None => String::new(),
                };
                let message = format!(
                    "{option} is the input {input}{read_by}; refusing to overwrite an input \
                     (choose another output path)"
                );
                return Err(Error::output(path, message));
            }
        }
        for (other_option, other_path, other) in &seen {
            if identity.same_file(other) {
                let message = format!(
                    "{option} and {other_option} ({other_path}) are the same file; \
                     give each output its own path"
                );
                return Err(Error::output(path, message));
            }
        }
        seen.push((option, path, identity));
    }
    Ok(())
}

/// Temporary files (and a run's temporary directories) that exist now, removed by
/// [`remove_temporary_files`].
static TEMPORARY_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Records a temporary file until [`forget_temporary`] is called for it.
pub(crate) fn register_temporary(path: &Path) {
    let mut files = TEMPORARY_FILES.lock().unwrap_or_else(|e| e.into_inner());
    files.push(path.to_path_buf());
}

/// Forgets a temporary file (renamed into place or removed).
pub(crate) fn forget_temporary(path: &Path) {
    let mut files = TEMPORARY_FILES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(index) = files.iter().rposition(|file| file == path) {
        files.swap_remove(index);
    }
}

/// Removes every temporary output file of this process and runs `then` while still holding the
/// registry, so that no new temporary file can appear before `then` ends (a signal handler
/// passes [`std::process::exit`]). Returns what `then` returns.
pub fn remove_temporary_files<T>(then: impl FnOnce(usize) -> T) -> T {
    let mut files = TEMPORARY_FILES.lock().unwrap_or_else(|e| e.into_inner());
    let mut removed = 0;
    for file in files.drain(..) {
        // A run's temporary directory (spilled sketches, a copy of standard input) too.
        let gone = match fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_dir() => fs::remove_dir_all(&file),
            _ => fs::remove_file(&file),
        };
        if gone.is_ok() {
            removed += 1;
        }
    }
    then(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
        dir.path().join(name).to_string_lossy().into_owned()
    }

    #[test]
    fn devices_and_descriptors_are_written_in_place() {
        assert_eq!(resolve("-").unwrap(), Destination::Stdout);
        assert_eq!(resolve("/dev/stdout").unwrap(), Destination::Stdout);
        assert_eq!(resolve("/dev/fd/1").unwrap(), Destination::Stdout);
        assert_eq!(
            resolve("/dev/null").unwrap(),
            Destination::InPlace("/dev/null".into())
        );
        assert_eq!(
            resolve("/dev/fd/63").unwrap(),
            Destination::InPlace("/dev/fd/63".into())
        );
        assert_eq!(
            resolve("/dev/stderr").unwrap(),
            Destination::InPlace("/dev/stderr".into())
        );
    }

    #[test]
    fn regular_files_and_new_paths_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let new = path_in(&dir, "new.jsonl");
        assert_eq!(
            resolve(&new).unwrap(),
            Destination::Replace(new.clone().into())
        );
        std::fs::write(&new, b"x").unwrap();
        assert_eq!(resolve(&new).unwrap(), Destination::Replace(new.into()));
        let error = resolve(&dir.path().to_string_lossy()).unwrap_err();
        assert!(error.to_string().ends_with("it is a directory"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_to_their_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = path_in(&dir, "target.jsonl");
        let link = path_in(&dir, "link.jsonl");
        std::os::unix::fs::symlink("target.jsonl", &link).unwrap();
        // Dangling: the target is created.
        let expected = dir.path().join("target.jsonl");
        assert_eq!(
            resolve(&link).unwrap(),
            Destination::Replace(expected.clone())
        );
        std::fs::write(&target, b"x").unwrap();
        assert_eq!(resolve(&link).unwrap(), Destination::Replace(expected));
        let device = path_in(&dir, "null");
        std::os::unix::fs::symlink("/dev/null", &device).unwrap();
        assert_eq!(
            resolve(&device).unwrap(),
            Destination::InPlace("/dev/null".into())
        );
        let looped = path_in(&dir, "loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        assert!(resolve(&looped).is_err());
    }

    #[test]
    fn an_output_may_not_be_an_input_or_another_output() {
        let dir = tempfile::tempdir().unwrap();
        let input = path_in(&dir, "x.jsonl");
        std::fs::write(&input, b"{}\n").unwrap();
        let dotted = format!("{}/./x.jsonl", dir.path().display());
        let error = check_distinct(&[&input], &[("--clusters", &dotted)]).unwrap_err();
        assert!(
            error.to_string().contains("--clusters is the input"),
            "{error}"
        );
        let out = path_in(&dir, "y");
        let error = check_distinct(&[&input], &[("--output", &out), ("--stats", &out)])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--stats and --output"), "{error}");
        let error = check_distinct(&[], &[("--output", "-"), ("--pairs", "/dev/stdout")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("both write to standard output"), "{error}");
        let other = path_in(&dir, "z");
        check_distinct(&[&input, "-"], &[("--output", "-"), ("--stats", &other)]).unwrap();
        check_distinct(&[], &[("--output", "/dev/null"), ("--stats", "/dev/null")]).unwrap();
    }

    #[test]
    fn an_output_may_not_be_a_file_an_option_reads() {
        let dir = tempfile::tempdir().unwrap();
        let list = path_in(&dir, "boilerplate.txt");
        std::fs::write(&list, b"header\n").unwrap();
        let reads = [
            (None, "corpus.jsonl"),
            (Some("`boilerplate_file`"), list.as_str()),
        ];
        let error = check_distinct_named(&reads, &[("`boilerplate_out`", &list)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{list}: cannot write output: `boilerplate_out` is the input {list} (read by \
                 `boilerplate_file`); refusing to overwrite an input (choose another output \
                 path)"
            )
        );
        let other = path_in(&dir, "kept.jsonl");
        check_distinct_named(&reads, &[("`output`", &other)]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn hard_and_symbolic_links_to_an_input_are_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = path_in(&dir, "x.jsonl");
        std::fs::write(&input, b"{}\n").unwrap();
        let hard = path_in(&dir, "hard.jsonl");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = path_in(&dir, "soft.jsonl");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        for output in [&hard, &soft] {
            assert!(check_distinct(&[&input], &[("--output", output)]).is_err());
        }
    }

    #[test]
    fn temporaries_are_registered_until_forgotten() {
        let file = PathBuf::from("/nonexistent/registered.tmp-1");
        let registered = || TEMPORARY_FILES.lock().unwrap().contains(&file);
        register_temporary(&file);
        assert!(registered());
        forget_temporary(&file);
        assert!(!registered());
    }
}
