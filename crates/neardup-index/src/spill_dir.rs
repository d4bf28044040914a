//! Where a run that does not fit in memory writes its bytes: the seam between the pure
//! index and engine and the disk.
//!
//! A [`Spill`] is an append-only store of bytes read back by offset; a [`SpillDir`] creates
//! them. Neither crate opens a file itself: the pipeline gives a file-backed [`SpillDir`] in
//! its temporary directory, tests give a [`MemorySpillDir`]. The spilling key table
//! ([`crate::ExternalKeys`]) writes its sorted runs there; the engine writes sketches.

use neardup_core::Error;

/// An append-only byte store, read back by offset.
///
/// Errors are messages that name what failed (the pipeline's file store names its path and
/// the operating system's error, such as a full disk); they are reported under the
/// parameter `temp_dir` ([`spill_error`]).
pub trait Spill: Send + Sync {
    /// Appends `bytes` at the end of the store.
    ///
    /// # Errors
    /// The store cannot be written (a full disk).
    fn append(&mut self, bytes: &[u8]) -> std::result::Result<(), String>;
    /// Makes everything appended so far readable by [`Spill::read_at`].
    ///
    /// # Errors
    /// The store cannot be written.
    fn flush(&mut self) -> std::result::Result<(), String>;
    /// Fills `buffer` with the bytes stored from `offset`.
    ///
    /// # Errors
    /// The store cannot be read, or holds fewer bytes.
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> std::result::Result<(), String>;
}

/// Where spills are created: a temporary directory, for the pipeline.
pub trait SpillDir: Send + Sync {
    /// A new, empty spill called `name` (unique within the directory).
    ///
    /// # Errors
    /// It cannot be created.
    fn create(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String>;

    /// The spill called `name` that an earlier run left (a resumed run's sketches: see the
    /// engine's `Sketcher::checkpoint`), to read and append to. By default there is none.
    ///
    /// # Errors
    /// It does not exist or cannot be opened.
    fn open(&self, name: &str) -> std::result::Result<Box<dyn Spill>, String> {
        Err(format!(
            "the spill {name} of an earlier run cannot be opened here"
        ))
    }
}

/// A [`SpillDir`] of [`MemorySpill`]s: for tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct MemorySpillDir;

impl SpillDir for MemorySpillDir {
    fn create(&self, _name: &str) -> std::result::Result<Box<dyn Spill>, String> {
        Ok(Box::new(MemorySpill::default()))
    }
}

/// A [`Spill`] in memory: for tests of the spilling path without a disk.
#[derive(Debug, Default, Clone)]
pub struct MemorySpill {
    bytes: Vec<u8>,
}

impl Spill for MemorySpill {
    fn append(&mut self, bytes: &[u8]) -> std::result::Result<(), String> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
    fn flush(&mut self) -> std::result::Result<(), String> {
        Ok(())
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> std::result::Result<(), String> {
        let start = usize::try_from(offset).map_err(|e| e.to_string())?;
        let stored = self.bytes.get(start..start + buffer.len());
        let stored = stored.ok_or_else(|| format!("no bytes at {offset}+{}", buffer.len()))?;
        buffer.copy_from_slice(stored);
        Ok(())
    }
}

/// The error of a spill operation, under the parameter the CLI calls `--temp-dir`.
pub fn spill_error(message: String) -> Error {
    Error::invalid("temp_dir", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_spill_reads_back_what_was_appended() {
        let mut spill = MemorySpillDir.create("runs").unwrap();
        spill.append(b"abc").unwrap();
        spill.append(b"de").unwrap();
        spill.flush().unwrap();
        let mut buffer = [0u8; 3];
        spill.read_at(2, &mut buffer).unwrap();
        assert_eq!(&buffer, b"cde");
        assert!(spill.read_at(4, &mut buffer).is_err());
        assert!(MemorySpillDir.open("runs").is_err());
    }

    #[test]
    fn spill_errors_name_temp_dir() {
        let error = spill_error("disk full".to_owned());
        assert!(error.to_string().contains("temp_dir"), "{error}");
    }
}
