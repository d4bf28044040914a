//! Runs under a memory limit: the choice between holding the corpus in memory and spilling
//! it, the temporary directory, and the file store the engine spills sketches to.
//!
//! # The two paths
//!
//! A run that fits in its memory limit reads every record into memory and runs the engine
//! over the texts ([`crate::run`], unchanged by the limit). A run that would not fit reads
//! its inputs as a stream instead: it keeps per record only its id and place ([`Meta`]), gives
//! the texts to the engine in blocks (a second read when the method learns from the corpus
//! first), has the sketches written to a [`FileSpill`] in the temporary directory, and writes
//! the kept records by reading the inputs once more, byte for byte. Both paths give the same
//! outputs; the tests check it for every method.
//!
//! The choice is made before reading, from the inputs' sizes and their heads
//! ([`crate::memory_plan`]: bytes and documents), and made again while the in-memory path reads:
//! once what it holds is expected to pass the limit, the run starts again on the streamed
//! path. Parquet inputs are held in memory by their reader and always take the in-memory
//! path.
//!
//! [`Meta`]: crate::input::Meta

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use neardup_engine::sketch_store::{Spill, SpillDir};

use crate::error::{Error, Result};
use crate::paths;
use crate::stale;

/// The default memory limit when the machine's available memory is unknown.
pub const FALLBACK_LIMIT: u64 = 4 << 30;

/// The default memory limit: three quarters of the memory available now (Linux
/// `MemAvailable`), or [`FALLBACK_LIMIT`] where it cannot be read.
pub fn default_memory_limit() -> u64 {
    available_memory().map_or(FALLBACK_LIMIT, |bytes| bytes / 4 * 3)
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

/// The temporary directory of one run: created in `--temp-dir` (default: beside the
/// output), removed when dropped (success or error) and by the signal handler (Ctrl-C).
/// Locked while the run lives, so that a later run removes it only once this one is gone
/// (killed: [`crate::stale`]).
#[derive(Debug)]
pub struct TempArea {
    path: PathBuf,
    /// Holds the directory's lock (where the file system can lock); closed after the
    /// directory is removed.
    _lock: Option<File>,
}

impl TempArea {
    /// Creates `.neardup-tmp-<pid>-XXXXXX` in `parent`, after removing the stale temporary
    /// directories and files of killed runs there.
    ///
    /// # Errors
    /// The directory cannot be created (naming it and `temp_dir`).
    pub fn create(parent: &Path) -> Result<TempArea> {
        stale::clean_once(parent);
        let (path, lock) = stale::create_folder(parent).map_err(|e| {
            Error::Parameter(neardup_core::Error::invalid(
                "temp_dir",
                format!("cannot create a directory in {}: {e}", parent.display()),
            ))
        })?;
        paths::register_temporary(&path);
        Ok(TempArea { path, _lock: lock })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempArea {
    fn drop(&mut self) {
        paths::forget_temporary(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The parent of the temporary directory: `--temp-dir` when given, else the directory of the
/// output (the working directory for standard output or a bare file name).
pub fn temp_parent(temp_dir: Option<&str>, output: &str) -> PathBuf {
    if let Some(dir) = temp_dir {
        return PathBuf::from(dir);
    }
    if output == paths::STANDARD {
        return PathBuf::from(".");
    }
    // An output that is a symlink is written at its target: its directory may be elsewhere,
    // but the link's directory is writable enough to hold a temporary directory in practice.
    match Path::new(output).parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The engine's spills as files in a directory (a [`TempArea`], or a resumable run's
/// directory).
#[derive(Debug, Clone)]
pub struct FileSpillDir {
    /// The directory.
    pub path: PathBuf,
    /// Whether the spill of sketches outlives the run that made it (a resumable run keeps
    /// it with its checkpoint); other spills are removed once used either way.
    pub keep_sketches: bool,
}

impl SpillDir for FileSpillDir {
    fn create(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String> {
        let path = self.path.join(name);
        match FileSpill::create(path.clone()) {
            Ok(mut spill) => {
                spill.remove_on_drop = !(self.keep_sketches && name == "sketches");
                Ok(Box::new(spill))
            }
            Err(error) => Err(format!(
                "{error} (the temporary directory holds the spilled sketches and keys; give \
                 one with room with --temp-dir)"
            )),
        }
    }

    fn open(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String> {
        let path = self.path.join(name);
        match FileSpill::open(path) {
            Ok(spill) => Ok(Box::new(spill)),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// A [`Spill`] in a file: appended through a buffer, read back by offset. The buffer is
/// released when the spill is flushed: a merge holds hundreds of finished runs open, and a
/// megabyte of idle buffer each held a gigabyte under a small limit (a template flood).
pub struct FileSpill {
    path: PathBuf,
    /// Where appends go: buffered while appending, `None` once flushed.
    writer: Option<BufWriter<File>>,
    /// The file, to start a new buffer on the next append.
    file: File,
    reader: File,
    remove_on_drop: bool,
}

impl FileSpill {
    /// Creates the file `path` (in a [`TempArea`]).
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: PathBuf) -> Result<FileSpill> {
        let mut options = File::options();
        options.create_new(true).read(true).write(true);
        FileSpill::with_options(path, &options, true)
    }

    /// Opens the file `path` that an earlier run left (kept, not removed when dropped).
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn open(path: PathBuf) -> Result<FileSpill> {
        let mut options = File::options();
        options.read(true).append(true);
        FileSpill::with_options(path, &options, false)
    }

    fn with_options(
        path: PathBuf,
        options: &OpenOptions,
        remove_on_drop: bool,
    ) -> Result<FileSpill> {
        let io = |error| Error::Io {
            path: path.display().to_string(),
            error,
        };
        let file = options.open(&path).map_err(io)?;
        let reader = file.try_clone().map_err(io)?;
        Ok(FileSpill {
            path,
            writer: None,
            file,
            reader,
            remove_on_drop,
        })
    }

    fn failed(&self, doing: &str, error: std::io::Error) -> String {
        format!(
            "{doing} {}: {error} (the temporary directory holds the spilled sketches; \
             give one with room with --temp-dir)",
            self.path.display()
        )
    }
}

impl Spill for FileSpill {
    fn append(&mut self, bytes: &[u8]) -> std::result::Result<(), String> {
        let writer = match &mut self.writer {
            Some(writer) => writer,
            None => {
                // A clone of the handle shares its offset: appends continue where they were.
                let file = self
                    .file
                    .try_clone()
                    .map_err(|e| self.failed("writing", e))?;
                self.writer.insert(BufWriter::with_capacity(1 << 20, file))
            }
        };
        writer
            .write_all(bytes)
            .map_err(|e| self.failed("writing", e))
    }

    fn flush(&mut self) -> std::result::Result<(), String> {
        match self.writer.take() {
            Some(mut writer) => writer.flush().map_err(|e| self.failed("writing", e)),
            None => Ok(()),
        }
    }

    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> std::result::Result<(), String> {
        read_exact_at(&self.reader, offset, buffer).map_err(|e| self.failed("reading", e))
    }
}

impl Drop for FileSpill {
    /// A spill is removed as soon as the engine is done with it (the temporary directory
    /// would remove it at the end of the run): sorted runs do not pile up on the disk.
    fn drop(&mut self) {
        if self.remove_on_drop {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, offset: u64, buffer: &mut [u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buffer, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut offset: u64, mut buffer: &mut [u8]) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buffer.is_empty() {
        match file.seek_read(buffer, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buffer = &mut buffer[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_spill_reads_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = FileSpill::create(dir.path().join("s")).unwrap();
        spill.append(b"hello ").unwrap();
        spill.append(b"world").unwrap();
        spill.flush().unwrap();
        let mut buffer = [0u8; 5];
        spill.read_at(6, &mut buffer).unwrap();
        assert_eq!(&buffer, b"world");
        let message = spill.read_at(8, &mut buffer).unwrap_err();
        assert!(
            message.contains("reading") && message.contains("--temp-dir"),
            "{message}"
        );
    }

    #[test]
    fn appends_after_a_flush_continue_where_the_file_ends() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = FileSpill::create(dir.path().join("s")).unwrap();
        spill.append(b"one ").unwrap();
        spill.flush().unwrap();
        // Flushed: no buffer is held until the next append.
        assert!(spill.writer.is_none());
        spill.append(b"two ").unwrap();
        spill.flush().unwrap();
        spill.flush().unwrap();
        spill.append(b"three").unwrap();
        spill.flush().unwrap();
        let mut buffer = [0u8; 13];
        spill.read_at(0, &mut buffer).unwrap();
        assert_eq!(&buffer, b"one two three");
        assert_eq!(
            std::fs::read(dir.path().join("s")).unwrap(),
            b"one two three"
        );
    }

    #[test]
    fn temp_area_is_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let area = TempArea::create(dir.path()).unwrap();
        std::fs::write(area.path().join("x"), b"1").unwrap();
        let path = area.path().to_path_buf();
        assert!(path.exists());
        drop(area);
        assert!(!path.exists());
    }
}
