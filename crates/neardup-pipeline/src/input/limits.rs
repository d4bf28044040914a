//! The limits a record meets as it is read: its size ([`ReadLimit`]: `max_doc_bytes`, or less
//! under a memory limit) and the memory rule ([`InputOptions::memory`]): a record whose
//! sketching alone would pass the limit is malformed, and an in-memory read stops once what it
//! holds is expected to pass it.

use std::fmt;

use super::{display_path, CorpusReader, InputOptions, Raw, Record};
use crate::error::{Error, Result};

/// The most bytes a record may have as it is read ([`InputOptions::read_limit`]), and what
/// set it, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadLimit {
    /// The bytes.
    pub(crate) bytes: usize,
    /// The memory limit, when it (not [`InputOptions::max_doc_bytes`]) set them.
    memory: Option<u64>,
}

impl fmt::Display for ReadLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.memory {
            None => write!(f, "`max_doc_bytes` {}", self.bytes),
            Some(limit) => write!(
                f,
                "{} bytes, the most a record may have under the memory limit of {limit} (its \
                 text could not be sketched within it)",
                self.bytes
            ),
        }
    }
}

impl InputOptions {
    /// The most bytes a record may have as it is read: [`InputOptions::max_doc_bytes`], or
    /// fewer when [`InputOptions::memory`] could not sketch a text that long
    /// ([`MemoryRule::most_record_bytes`]).
    pub(crate) fn read_limit(&self) -> ReadLimit {
        match self.memory.map(|rule| (rule, rule.most_record_bytes())) {
            Some((rule, bytes)) if bytes < self.max_doc_bytes => ReadLimit {
                bytes,
                memory: Some(rule.limit),
            },
            _ => ReadLimit {
                bytes: self.max_doc_bytes,
                memory: None,
            },
        }
    }
}

/// The message for a record larger than its [`ReadLimit`].
pub(super) fn too_long(size: u64, limit: ReadLimit) -> String {
    format!("record of {size} bytes exceeds {limit}")
}

/// The message for a record that passed its [`ReadLimit`] after `read` bytes and was not
/// read to its end.
pub(super) fn too_long_unfinished(read: u64, limit: ReadLimit) -> String {
    format!("record exceeds {limit} (stopped reading it after {read} bytes)")
}

impl CorpusReader<'_> {
    /// The record, unless its sketching alone would pass [`InputOptions::memory`].
    pub(super) fn check_memory(&self, record: Record) -> Result<Record> {
        match self
            .options
            .memory
            .and_then(|rule| rule.refuses(record.text.len()))
        {
            Some(message) => {
                let name = display_path(&self.paths[record.source as usize]);
                Err(Error::input(name, record.line, message))
            }
            None => Ok(record),
        }
    }

    /// Counts a record an in-memory read keeps; stops the read once what it holds is
    /// expected to pass [`InputOptions::memory`].
    pub(super) fn hold(&mut self, record: &Record) -> Result<()> {
        let Some(rule) = self.options.memory.filter(|rule| rule.holds) else {
            return Ok(());
        };
        let raw = match &record.raw {
            Raw::Line(line) => line.len(),
            Raw::At { len, .. } => *len as usize,
            _ => record.text.len(),
        };
        let Some(expected) = self.held.add(&rule, raw, record.text.len()) else {
            return Ok(());
        };
        let name = display_path(&self.paths[record.source as usize]);
        Err(Error::Stopped {
            parameter: "memory_limit".to_owned(),
            message: format!(
                "{name}:{}: after {} documents, the in-memory read is expected to need {expected} \
                 bytes, more than the memory limit of {}",
                record.line,
                self.held.documents(),
                rule.limit
            ),
        })
    }
}
