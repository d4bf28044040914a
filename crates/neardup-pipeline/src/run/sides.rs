//! The streamed reads of a run that does not fit in memory: the reference corpus and the
//! inputs read one after the other, their texts handed on in blocks, what each read found
//! ([`SidesRead`], [`ReadSummary`]) kept for the next read to check, and the ids parked on
//! disk while the engine runs ([`ParkedSides`]).

use std::path::Path;

use neardup_engine::Progress;

use super::{refuse_all_skipped, RunConfig};
use crate::error::{Error, Result};
use crate::input::{
    read_inputs_replayed, read_inputs_streamed, Corpus, Meta, ParkedIds, Raw, Record,
};

/// Texts of a streamed read given to the engine together, in bytes (their sketches, often
/// larger than the texts, are held until the block is encoded into the spill). Each text
/// counts [`PER_DOCUMENT_BYTES`](crate::memory_rule::PER_DOCUMENT_BYTES) besides its bytes, so that
/// a block of tiny texts holds a few thousand of them, not millions.
pub(super) const STREAM_BLOCK_BYTES: usize = 4 << 20;

/// The reference corpus and the inputs of a streamed run.
pub(super) struct Sides<'a> {
    pub(super) config: &'a RunConfig,
    pub(super) against_opened: &'a [String],
    pub(super) inputs_opened: &'a [String],
}

/// The ids of both sides of a [`SidesRead`], parked in the run's temporary directory
/// ([`ParkedIds`]): the stages between the first read and the clusters file need only the
/// records' places.
pub(super) struct ParkedSides {
    reference: ParkedIds,
    corpus: ParkedIds,
}

impl ParkedSides {
    /// Moves the ids of `read` to files in `dir`.
    pub(super) fn park(read: &mut SidesRead, dir: &Path) -> Result<ParkedSides> {
        let park = |meta: &mut Meta, name: &str| {
            let path = dir.join(name);
            ParkedIds::park(std::mem::take(&mut meta.ids), &path)
                .map_err(|e| parked_error("writing", &path, &e))
        };
        Ok(ParkedSides {
            reference: park(&mut read.reference_meta, "ids-reference")?,
            corpus: park(&mut read.corpus_meta, "ids")?,
        })
    }

    /// Gives the ids back to the metas they were taken from.
    pub(super) fn restore(self, reference: &mut Meta, corpus: &mut Meta) -> Result<()> {
        for (parked, meta) in [(self.reference, reference), (self.corpus, corpus)] {
            let path = parked.path().to_path_buf();
            meta.ids = parked
                .restore()
                .map_err(|e| parked_error("reading", &path, &e))?;
        }
        Ok(())
    }
}

/// The error of parking ids, under the parameter `--temp-dir` names.
fn parked_error(doing: &str, path: &Path, error: &std::io::Error) -> Error {
    Error::Parameter(neardup_core::Error::invalid(
        "temp_dir",
        format!(
            "{doing} {}: {error} (the temporary directory holds the ids while the engine runs; \
             give one with room with --temp-dir)",
            path.display()
        ),
    ))
}

/// What one streamed read of both sides found.
pub(super) struct SidesRead {
    pub(super) reference: Corpus,
    pub(super) corpus: Corpus,
    pub(super) reference_meta: Meta,
    pub(super) corpus_meta: Meta,
}

impl SidesRead {
    /// What a second read must find again: reference records and bytes, input records
    /// and bytes.
    pub(super) fn summary(&self) -> ReadSummary {
        ReadSummary {
            reference: (
                self.reference_meta.len(),
                self.reference_meta.ids.text_bytes(),
            ),
            reference_bytes: self.reference.bytes_read,
            corpus: (self.corpus_meta.len(), self.corpus_meta.ids.text_bytes()),
            corpus_bytes: self.corpus.bytes_read,
        }
    }
}

/// [`SidesRead::summary`]: per side, the records accepted, the bytes of their ids' text and
/// the bytes read. A second read must find them again, and reserves its memory by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ReadSummary {
    pub(super) reference: (usize, usize),
    pub(super) reference_bytes: u64,
    pub(super) corpus: (usize, usize),
    pub(super) corpus_bytes: u64,
}

impl Sides<'_> {
    /// The error of inputs (of either side) that changed between two reads.
    pub(super) fn changed(&self) -> Error {
        let all: Vec<String> = (self.config.against.iter().chain(&self.config.inputs))
            .cloned()
            .collect();
        changed(&all)
    }

    /// Bytes of the inputs on disk, for progress (0 when unknown).
    pub(super) fn total_bytes(&self) -> u64 {
        (self.against_opened.iter().chain(self.inputs_opened))
            .map(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
            .sum()
    }

    /// Reads the reference corpus, then the inputs, giving their texts to `each` in blocks
    /// of about [`STREAM_BLOCK_BYTES`].
    pub(super) fn read(
        &self,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        self.read_sized(None, progress, each)
    }

    /// [`Sides::read`] again after a read that found `first`, giving `each` the texts of the
    /// same records ([`read_inputs_replayed`]) and keeping nothing per record: returns
    /// `first`, or fails when this read met other records or bytes (an input that changed).
    pub(super) fn replay(
        &self,
        first: SidesRead,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        let mut blocks = Blocks::new(progress, each);
        let mut sink = |record: Record| blocks.push(record);
        let options = &self.config.input;
        let reference_bytes = match self.config.against.is_empty() {
            true => 0,
            false => {
                (read_inputs_replayed(
                    &self.config.against,
                    self.against_opened,
                    options,
                    &first.reference_meta,
                    &mut sink,
                )?)
                .bytes_read
            }
        };
        let corpus_bytes = read_inputs_replayed(
            &self.config.inputs,
            self.inputs_opened,
            options,
            &first.corpus_meta,
            &mut sink,
        )?
        .bytes_read;
        let records = blocks.finish()?;
        if records != first.reference_meta.len() + first.corpus_meta.len()
            || reference_bytes != first.reference.bytes_read
            || corpus_bytes != first.corpus.bytes_read
        {
            return Err(self.changed());
        }
        Ok(first)
    }

    /// [`Sides::read`], reserving memory for the ids of the records an earlier read found
    /// on each side (records, bytes of id text), when it is known.
    pub(super) fn read_sized(
        &self,
        sizes: Option<((usize, usize), (usize, usize))>,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        let (reference_size, corpus_size) = sizes.unwrap_or_default();
        let mut blocks = Blocks::new(progress, each);
        let mut sink = |record: Record| blocks.push(record);
        let options = &self.config.input;
        let (reference, reference_meta) = match self.config.against.is_empty() {
            true => (Corpus::default(), Meta::default()),
            false => read_inputs_streamed(
                &self.config.against,
                self.against_opened,
                options,
                reference_size,
                &mut sink,
            )?,
        };
        let (corpus, corpus_meta) = read_inputs_streamed(
            &self.config.inputs,
            self.inputs_opened,
            options,
            corpus_size,
            &mut sink,
        )?;
        blocks.finish()?;
        Ok(SidesRead {
            reference,
            corpus,
            reference_meta,
            corpus_meta,
        })
    }
}

/// The texts of a streamed read, gathered into blocks of about [`STREAM_BLOCK_BYTES`] for
/// `each`, the bytes read counted in `progress`.
struct Blocks<'e> {
    block: Vec<String>,
    bytes: usize,
    records: usize,
    progress: &'e dyn Progress,
    each: &'e mut dyn FnMut(Vec<String>) -> Result<()>,
}

impl<'e> Blocks<'e> {
    fn new(progress: &'e dyn Progress, each: &'e mut dyn FnMut(Vec<String>) -> Result<()>) -> Self {
        Blocks {
            block: Vec::new(),
            bytes: 0,
            records: 0,
            progress,
            each,
        }
    }

    fn push(&mut self, record: Record) -> Result<()> {
        self.records += 1;
        let raw = match &record.raw {
            Raw::Line(line) => line.len() + 1,
            Raw::At { len, .. } => *len as usize + 1,
            _ => record.text.len(),
        };
        self.progress.advance(raw as u64);
        self.bytes += record.text.len() + crate::memory_rule::PER_DOCUMENT_BYTES as usize;
        self.block.push(record.text);
        if self.bytes >= STREAM_BLOCK_BYTES {
            self.bytes = 0;
            (self.each)(std::mem::take(&mut self.block))?;
        }
        Ok(())
    }

    /// Hands on the last block; returns the records seen.
    fn finish(mut self) -> Result<usize> {
        if !self.block.is_empty() {
            (self.each)(std::mem::take(&mut self.block))?;
        }
        Ok(self.records)
    }
}

/// [`refuse_all_skipped`] for a streamed read.
pub(super) fn refuse_all_skipped_meta(corpus: &Corpus, meta: &Meta) -> Result<()> {
    if !meta.is_empty() {
        return Ok(());
    }
    refuse_all_skipped(corpus)
}

/// The error of an input that changed between two reads of one run.
pub(super) fn changed(paths: &[String]) -> Error {
    Error::format(
        &paths.join(", "),
        "the input changed while it was being read (a run that does not fit in memory reads \
         its inputs more than once); run it again on a file that does not change",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Format, InputOptions};
    use neardup_core::registry::Params;
    use neardup_engine::NoProgress;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Counts the bytes reported.
    #[derive(Default)]
    struct Bytes(AtomicU64);

    impl Progress for Bytes {
        fn advance(&self, done: u64) {
            self.0.fetch_add(done, Ordering::Relaxed);
        }
    }

    fn record(text: String) -> Record {
        Record {
            id: serde_json::Value::Null,
            raw: Raw::Line(format!("raw {text}").into_bytes()),
            text,
            source: 0,
            line: 1,
        }
    }

    /// The sizes of the blocks `texts` are handed on in, and the bytes counted in progress.
    fn block_sizes(texts: Vec<String>) -> (Vec<usize>, u64) {
        let progress = Bytes::default();
        let mut sizes = Vec::new();
        let mut each = |block: Vec<String>| {
            sizes.push(block.len());
            Ok(())
        };
        let mut blocks = Blocks::new(&progress, &mut each);
        let count = texts.len();
        for text in texts {
            blocks.push(record(text)).unwrap();
        }
        assert_eq!(blocks.finish().unwrap(), count);
        (sizes, progress.0.load(Ordering::Relaxed))
    }

    #[test]
    fn blocks_are_handed_on_once_they_reach_the_block_size_and_at_the_end() {
        let big = "x".repeat(STREAM_BLOCK_BYTES / 2);
        let mut texts = vec![big.clone(); 5];
        texts.push("tail".into());
        let (sizes, bytes) = block_sizes(texts);
        assert_eq!(sizes, [2, 2, 2]);
        // Raw lines count with their line break.
        let raw = 5 * (big.len() + 5) + "raw tail\n".len();
        assert_eq!(bytes, raw as u64);
    }

    #[test]
    fn a_block_of_tiny_texts_is_bounded_by_their_number() {
        // Issue 44: two million texts of "hi" were one block, sketched all at once.
        let (sizes, _) = block_sizes(vec!["hi".to_owned(); 20_000]);
        let per_block =
            STREAM_BLOCK_BYTES / (crate::memory_rule::PER_DOCUMENT_BYTES as usize + 2) + 1;
        assert!(sizes.len() > 1, "{sizes:?}");
        assert!(sizes.iter().all(|&n| n <= per_block), "{sizes:?}");
    }

    #[test]
    fn an_error_of_the_consumer_stops_the_read() {
        let progress = Bytes::default();
        let mut each = |_: Vec<String>| Err(changed(&["x".to_owned()]));
        let mut blocks = Blocks::new(&progress, &mut each);
        blocks.push(record("short".into())).unwrap();
        assert!(blocks.finish().is_err());
    }

    fn config(dir: &Path, text: &str) -> RunConfig {
        let input = dir.join("in.txt");
        std::fs::write(&input, text).unwrap();
        let mut config = RunConfig::new(
            vec![input.display().to_string()],
            "-".into(),
            "exact",
            Params::new(),
        );
        config.input = InputOptions {
            format: Some(Format::Text),
            ..InputOptions::default()
        };
        config
    }

    #[test]
    fn a_replay_finds_the_first_read_again_or_says_the_input_changed() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), "one\ntwo\nthree\n");
        let sides = Sides {
            config: &config,
            against_opened: &[],
            inputs_opened: &config.inputs,
        };
        let mut texts = Vec::new();
        let first = (sides.read(&NoProgress, &mut |block| {
            texts.extend(block);
            Ok(())
        }))
        .unwrap();
        assert_eq!(texts, ["one", "two", "three"]);
        let summary = first.summary();
        assert_eq!((summary.corpus.0, summary.corpus_bytes), (3, 14));
        assert_eq!(summary.reference, (0, 0));
        let mut again = Vec::new();
        let replayed = (sides.replay(first, &NoProgress, &mut |block| {
            again.extend(block);
            Ok(())
        }))
        .unwrap();
        assert_eq!(again, texts);
        assert_eq!(replayed.summary(), summary);
        std::fs::write(&config.inputs[0], "one\ntwo\nthree!\n").unwrap();
        let error = (sides.replay(replayed, &NoProgress, &mut |_| Ok(())))
            .err()
            .unwrap();
        assert!(error.to_string().contains("the input changed"), "{error}");
    }

    #[test]
    fn parked_ids_come_back_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mut read = SidesRead {
            reference: Corpus::default(),
            corpus: Corpus::default(),
            reference_meta: Meta::default(),
            corpus_meta: Meta::default(),
        };
        let ids = [serde_json::json!("a"), serde_json::json!(7)];
        read.corpus_meta.ids = ids.iter().cloned().collect();
        let parked = ParkedSides::park(&mut read, dir.path()).unwrap();
        assert_eq!(read.corpus_meta.ids.len(), 0);
        parked
            .restore(&mut read.reference_meta, &mut read.corpus_meta)
            .unwrap();
        assert_eq!(read.corpus_meta.ids.get(1), Some(serde_json::json!(7)));
        assert_eq!(read.reference_meta.ids.len(), 0);
    }
}
