//! Resumable runs (`dedup --resume`): a run under a memory limit that stops midway (killed,
//! out of disk, Ctrl-C) starts again from its last finished stage.
//!
//! A resumable run works in a directory with a fixed name beside its output (or in
//! `--temp-dir`): `.neardup-resume-{output file name}-{hash of the output path}`. The
//! directory holds a manifest (what the run was asked: neardup's version, the method and its
//! settings, the reading and engine options, and per input its path, size, modification time
//! and a hash of its whole content) and a checkpoint per finished stage:
//!
//! - `corpus.ckpt`: the corpus pass's document frequencies (methods that learn from the
//!   corpus);
//! - `sketch.ckpt`: the sketch stage: per document its facts and the place of its sketch in
//!   the spill `sketches` (kept beside it), the ids and places of the records, and the
//!   inputs' skips and sizes.
//!
//! A run with `--resume` whose manifest matches the directory's takes up the checkpoints it
//! finds there, newest first, and runs the stages after them; a manifest that does not match
//! (an input or an option changed) clears the directory and says why. Checkpoints are written
//! to a temporary name and renamed, so a run killed while writing one leaves the previous
//! state. The candidates, verification and clustering run again after a resumed sketch stage
//! (they are one stage here: their spills are not kept). The directory is removed when the
//! run succeeds, and kept when it fails or is interrupted.
//!
//! Every input is hashed in full (xxh3 of each 4 MiB block, hashed together) when the run
//! starts: an edit that keeps the size and the modification time (a tool that restores it) is
//! still seen. It costs one read of the inputs, at the speed of the disk or the page cache
//! (`resume_hash` in the stats' seconds), against the two or three reads of a spilling run.
//!
//! The directory is locked (`flock`, see [`crate::stale`]) by the run that uses it: a second
//! run of the same output at the same time is refused instead of clearing the first one's
//! files.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use neardup_core::codec::{Decoder, Encoder};
use neardup_core::hash::hash64;

use crate::error::{Error, Result};
use crate::stale::{self, FolderLock};

/// The manifest's file name.
const MANIFEST: &str = "manifest.txt";
/// Bytes of an input hashed at a time for its fingerprint.
const BLOCK: usize = 4 << 20;

/// The stages a resumable run checkpoints, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The corpus pass (`corpus.ckpt`).
    Corpus,
    /// The sketch stage (`sketch.ckpt`, with the spill `sketches`).
    Sketch,
}

impl Stage {
    /// The stage's name in stats and messages.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Corpus => "corpus",
            Stage::Sketch => "sketch",
        }
    }

    fn file(self) -> &'static str {
        match self {
            Stage::Corpus => "corpus.ckpt",
            Stage::Sketch => "sketch.ckpt",
        }
    }

    /// The files besides its checkpoint that the stage's checkpoint needs.
    fn companions(self) -> &'static [&'static str] {
        match self {
            Stage::Corpus => &[],
            Stage::Sketch => &["sketches"],
        }
    }
}

/// The directory of a resumable run, and what it found there.
#[derive(Debug)]
pub struct ResumeDir {
    path: PathBuf,
    key: u64,
    /// The stages whose checkpoints were found and match.
    found: Vec<Stage>,
    /// Why the checkpoints found were not taken, when they were not.
    discarded: Option<String>,
    /// Set once the run succeeded: the directory is then removed.
    done: bool,
    /// Holds the directory's lock while this run uses it (where the file system can lock);
    /// closed after the directory is removed.
    _lock: Option<File>,
}

impl ResumeDir {
    /// Opens (or creates) the directory of a resumable run writing `output`, in `parent`,
    /// for a run described by `manifest` (see [`manifest`]). Checkpoints of another manifest,
    /// and every file no checkpoint needs, are removed. The stale temporary files of killed
    /// runs in `parent` are removed first ([`stale::clean_once`]).
    ///
    /// # Errors
    /// The directory cannot be made or cleared (parameter `temp_dir`), or another run is
    /// using it (parameter `resume`).
    pub fn open(parent: &Path, output: &str, manifest: &str) -> Result<ResumeDir> {
        let name = Path::new(output)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "stdout".to_owned());
        let absolute = std::path::absolute(output).unwrap_or_else(|_| PathBuf::from(output));
        let hash = hash64(absolute.to_string_lossy().as_bytes());
        let path = parent.join(format!(".neardup-resume-{name}-{:08x}", hash as u32));
        let dir_error = |doing: &str, e: std::io::Error| {
            Error::Parameter(neardup_core::Error::invalid(
                "temp_dir",
                format!("cannot {doing} {}: {e}", path.display()),
            ))
        };
        stale::clean_once(parent);
        std::fs::create_dir_all(&path).map_err(|e| dir_error("create", e))?;
        // Where the file system cannot lock, the run goes on unguarded.
        let lock = match stale::lock_folder(&path) {
            FolderLock::Held(handle) => Some(handle),
            FolderLock::Unavailable => None,
            FolderLock::Busy => {
                return Err(Error::Parameter(neardup_core::Error::invalid(
                    "resume",
                    format!(
                        "another neardup run is using {} (a resumable run writing the same \
                         output); wait for it to end, or write elsewhere",
                        path.display()
                    ),
                )))
            }
        };
        let key = hash64(manifest.as_bytes());
        let previous = std::fs::read_to_string(path.join(MANIFEST)).ok();
        let (mut found, discarded) = match previous.as_deref() {
            None => (Vec::new(), None),
            Some(previous) if previous == manifest => (Vec::new(), None),
            Some(previous) => (Vec::new(), Some(difference(previous, manifest))),
        };
        if previous.as_deref() == Some(manifest) {
            for stage in [Stage::Corpus, Stage::Sketch] {
                let complete = path.join(stage.file()).is_file()
                    && stage.companions().iter().all(|c| path.join(c).is_file());
                if complete {
                    found.push(stage);
                }
            }
        }
        // Keep the manifest and the checkpoints taken up; remove the rest (partial
        // checkpoints, sorted runs and spills of the run that stopped).
        let mut keep: Vec<&str> = vec![MANIFEST];
        for stage in &found {
            keep.push(stage.file());
            keep.extend(stage.companions());
        }
        let entries = std::fs::read_dir(&path).map_err(|e| dir_error("read", e))?;
        for entry in entries {
            let entry = entry.map_err(|e| dir_error("read", e))?;
            let file = entry.file_name();
            if !keep.iter().any(|k| file.to_str() == Some(k)) {
                let target = entry.path();
                let removed = match entry.file_type() {
                    Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&target),
                    _ => std::fs::remove_file(&target),
                };
                removed.map_err(|e| dir_error("clear", e))?;
            }
        }
        write_atomic(&path, MANIFEST, manifest.as_bytes())?;
        Ok(ResumeDir {
            path,
            key,
            found,
            discarded,
            done: false,
            _lock: lock,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why checkpoints found were not taken up (another manifest), if they were not.
    pub fn discarded(&self) -> Option<&str> {
        self.discarded.as_deref()
    }

    /// The last stage whose checkpoint was taken up.
    pub fn last(&self) -> Option<Stage> {
        self.found.last().copied()
    }

    /// The payload of `stage`'s checkpoint, when it was found.
    ///
    /// # Errors
    /// It cannot be read, or is not this run's (parameter `checkpoint`).
    pub fn load(&self, stage: Stage) -> Result<Option<Vec<u8>>> {
        if !self.found.contains(&stage) {
            return Ok(None);
        }
        let path = self.path.join(stage.file());
        let bytes = std::fs::read(&path).map_err(|error| Error::Io {
            path: path.display().to_string(),
            error,
        })?;
        let mut from = Decoder::new(&bytes).map_err(|e| named(&path, e))?;
        let key = from.u64().map_err(|e| named(&path, e))?;
        if key != self.key {
            return Err(named(
                &path,
                neardup_core::codec::corrupt("it belongs to another run"),
            ));
        }
        let payload = from.bytes().map_err(|e| named(&path, e))?.to_vec();
        from.end().map_err(|e| named(&path, e))?;
        Ok(Some(payload))
    }

    /// Saves `payload` as `stage`'s checkpoint (its companions must be complete already).
    ///
    /// # Errors
    /// It cannot be written (parameter `temp_dir`).
    pub fn save(&self, stage: Stage, payload: &[u8]) -> Result<()> {
        let mut out = Encoder::new();
        out.u64(self.key);
        out.bytes(payload);
        write_atomic(&self.path, stage.file(), &out.finish())?;
        fail_after_stage(stage)
    }

    /// The run succeeded: the directory goes when this is dropped.
    pub fn complete(&mut self) {
        self.done = true;
    }
}

impl Drop for ResumeDir {
    fn drop(&mut self) {
        if self.done {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A checkpoint error naming its file.
fn named(path: &Path, error: neardup_core::Error) -> Error {
    Error::Parameter(neardup_core::Error::invalid(
        "checkpoint",
        format!("{}: {}", path.display(), error.message()),
    ))
}

/// For tests of resumption: `NEARDUP_FAIL_AFTER_STAGE=corpus|sketch` makes a resumable run
/// fail right after saving that stage's checkpoint, as a run killed there would stop.
fn fail_after_stage(stage: Stage) -> Result<()> {
    match std::env::var("NEARDUP_FAIL_AFTER_STAGE") {
        Ok(name) if name == stage.name() => Err(Error::Parameter(neardup_core::Error::invalid(
            "checkpoint",
            format!("stopped after the {name} stage (NEARDUP_FAIL_AFTER_STAGE)"),
        ))),
        _ => Ok(()),
    }
}

/// Writes `dir/name` through a temporary name and a rename.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let temporary = dir.join(format!("{name}.partial"));
    let target = dir.join(name);
    let failed = |e: std::io::Error| {
        Error::Parameter(neardup_core::Error::invalid(
            "temp_dir",
            format!("cannot write {}: {e}", target.display()),
        ))
    };
    std::fs::write(&temporary, bytes).map_err(failed)?;
    File::open(&temporary)
        .and_then(|f| f.sync_all())
        .map_err(failed)?;
    std::fs::rename(&temporary, &target).map_err(failed)
}

/// The first line where two manifests differ, as a reason.
fn difference(previous: &str, now: &str) -> String {
    let mut old = previous.lines();
    for line in now.lines() {
        match old.next() {
            Some(was) if was == line => continue,
            Some(was) => return format!("`{was}` is now `{line}`"),
            None => return format!("`{line}` is new"),
        }
    }
    match old.next() {
        Some(was) => format!("`{was}` is gone"),
        None => "the manifest changed".to_owned(),
    }
}

/// The manifest of a run: `head` (the version, the method and options, one fact a line),
/// then one line per input of `against` and `inputs` with its size, modification time and
/// the hash of its whole content (`fingerprint`).
///
/// # Errors
/// Standard input, which cannot be read again (parameter `resume`), or an input that
/// cannot be read.
pub fn manifest(head: &[String], against: &[String], inputs: &[String]) -> Result<String> {
    let mut text = String::new();
    for line in head {
        text.push_str(line);
        text.push('\n');
    }
    for (side, paths) in [("against", against), ("input", inputs)] {
        for path in paths {
            if crate::paths::read_once(path) {
                return Err(Error::Parameter(neardup_core::Error::invalid(
                    "resume",
                    format!(
                        "{} cannot be read again by a resumed run (it is standard input, a \
                         FIFO, a descriptor or a device); give a file",
                        crate::paths::display_input(path)
                    ),
                )));
            }
            text.push_str(&format!("{side} {path} {}\n", fingerprint(path)?));
        }
    }
    Ok(text)
}

/// Size, modification time (ns) and a hash of the whole content of `path`: the xxh3 of the
/// xxh3 of each [`BLOCK`] bytes. Every byte counts, so an edit anywhere changes it, also one
/// that keeps the size and restores the modification time.
fn fingerprint(path: &str) -> Result<String> {
    let io = |error: std::io::Error| Error::Io {
        path: path.to_owned(),
        error,
    };
    let mut file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let size = meta.len();
    let modified = (meta.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut block = vec![0u8; BLOCK];
    let mut hashes = Vec::new();
    let mut read = 0u64;
    loop {
        let filled = fill(&mut file, &mut block).map_err(io)?;
        if filled == 0 {
            break;
        }
        read += filled as u64;
        hashes.extend_from_slice(&hash64(&block[..filled]).to_le_bytes());
    }
    Ok(format!(
        "size={size} mtime={modified} bytes={read} xxh3={:016x}",
        hash64(&hashes)
    ))
}

/// Reads into `buffer` until it is full or the file ends; the bytes read.
fn fill(file: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use std::io::Seek;

    use super::*;

    #[test]
    fn checkpoints_are_taken_up_only_under_the_same_manifest() {
        let parent = tempfile::tempdir().unwrap();
        let output = parent.path().join("out.jsonl").display().to_string();
        let dir = ResumeDir::open(parent.path(), &output, "a\nb\n").unwrap();
        assert_eq!(dir.last(), None);
        dir.save(Stage::Corpus, b"counts").unwrap();
        std::fs::write(dir.path().join("keys-0"), b"stale run").unwrap();
        let path = dir.path().to_path_buf();
        drop(dir);
        // Kept after a failure; the checkpoint is taken up, the stale run removed.
        let dir = ResumeDir::open(parent.path(), &output, "a\nb\n").unwrap();
        assert_eq!(dir.last(), Some(Stage::Corpus));
        assert_eq!(dir.load(Stage::Corpus).unwrap().unwrap(), b"counts");
        assert_eq!(dir.load(Stage::Sketch).unwrap(), None);
        assert!(!path.join("keys-0").exists());
        // A sketch checkpoint without its spill is not complete.
        dir.save(Stage::Sketch, b"facts").unwrap();
        drop(dir);
        let dir = ResumeDir::open(parent.path(), &output, "a\nb\n").unwrap();
        assert_eq!(dir.last(), Some(Stage::Corpus));
        drop(dir);
        // Another manifest: nothing is taken up, and the reason names the change.
        let mut dir = ResumeDir::open(parent.path(), &output, "a\nc\n").unwrap();
        assert_eq!(dir.last(), None);
        assert_eq!(dir.discarded(), Some("`b` is now `c`"));
        assert!(!path.join("corpus.ckpt").exists());
        dir.complete();
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn a_changed_checkpoint_is_an_error_naming_it() {
        let parent = tempfile::tempdir().unwrap();
        let output = parent.path().join("o").display().to_string();
        let dir = ResumeDir::open(parent.path(), &output, "m\n").unwrap();
        dir.save(Stage::Corpus, b"counts").unwrap();
        let file = dir.path().join("corpus.ckpt");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[9] ^= 0xff;
        std::fs::write(&file, bytes).unwrap();
        drop(dir);
        let dir = ResumeDir::open(parent.path(), &output, "m\n").unwrap();
        let error = dir.load(Stage::Corpus).unwrap_err().to_string();
        assert!(
            error.contains("corpus.ckpt") && error.contains("checksum"),
            "{error}"
        );
    }

    #[test]
    fn regression_a_same_size_edit_in_the_middle_with_its_time_restored_changes_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("big.txt");
        // Longer than the two MiB an earlier version hashed (its first and last MiB).
        let text: Vec<u8> = (0..3 << 20).map(|i| b'a' + (i % 23) as u8).collect();
        std::fs::write(&input, &text).unwrap();
        let input = input.display().to_string();
        let before = manifest(&[], &[], std::slice::from_ref(&input)).unwrap();
        let modified = std::fs::metadata(&input).unwrap().modified().unwrap();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&input)
            .unwrap();
        file.seek(std::io::SeekFrom::Start(3 << 19)).unwrap();
        std::io::Write::write_all(&mut file, b"Z").unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        assert_eq!(
            std::fs::metadata(&input).unwrap().modified().unwrap(),
            modified
        );
        assert_eq!(std::fs::metadata(&input).unwrap().len(), 3 << 20);
        let after = manifest(&[], &[], std::slice::from_ref(&input)).unwrap();
        assert_ne!(before, after);
    }

    #[test]
    fn a_second_run_of_the_same_output_is_refused_while_the_first_holds_it() {
        let parent = tempfile::tempdir().unwrap();
        let output = parent.path().join("out.jsonl").display().to_string();
        let first = ResumeDir::open(parent.path(), &output, "m\n").unwrap();
        first.save(Stage::Corpus, b"counts").unwrap();
        let error = ResumeDir::open(parent.path(), &output, "other\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("another neardup run is using"), "{error}");
        // The first run's checkpoint is still there.
        assert!(first.path().join(Stage::Corpus.file()).is_file());
        drop(first);
        let again = ResumeDir::open(parent.path(), &output, "m\n").unwrap();
        assert_eq!(again.last(), Some(Stage::Corpus));
    }

    #[test]
    fn the_manifest_names_each_input_and_refuses_standard_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.jsonl");
        std::fs::write(&input, b"{\"text\": \"x\"}\n").unwrap();
        let input = input.display().to_string();
        let text = manifest(&["v".to_owned()], &[], std::slice::from_ref(&input)).unwrap();
        assert!(text.starts_with("v\ninput "), "{text}");
        assert!(text.contains("size=14"), "{text}");
        let again = manifest(&["v".to_owned()], &[], std::slice::from_ref(&input)).unwrap();
        assert_eq!(text, again);
        std::fs::write(&input, b"{\"text\": \"y\"}\n").unwrap();
        let changed = manifest(&["v".to_owned()], &[], std::slice::from_ref(&input)).unwrap();
        assert_ne!(text, changed);
        let error = manifest(&[], &["-".to_owned()], &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains("standard input"), "{error}");
    }
}
