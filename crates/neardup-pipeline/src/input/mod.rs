//! Reading the corpus: JSON lines, plain text, CSV, TSV and Parquet, from files or standard
//! input, optionally gzip- or zstd-compressed.
//!
//! # Overview
//!
//! Near-duplicate detection needs every document before it can decide anything, so
//! [`read_inputs`] reads all inputs into one in-memory [`Corpus`]. Each [`Record`] carries its
//! text, its id, where it came from (file and line) and its [`Raw`] form, which is what the
//! output writers copy back out: a kept JSON line is written byte for byte, a kept CSV row keeps
//! all its columns, a kept Parquet row keeps its whole Arrow row.
//!
//! Ids are either taken from a field of the record ([`InputOptions::id_field`]) or are the
//! record's 1-based ordinal across all inputs taken together, so that they are unique even when
//! several files are read. Records rejected as malformed still take their ordinal, so ids do not
//! depend on [`OnError`]; blank JSONL lines are not records and take none. Ids taken from a
//! field must be unique and non-empty, since the outputs name documents by id: a repeated id
//! is a malformed record naming where the id was first seen.
//!
//! Compression is recognised by the magic bytes at the start of the stream (gzip `1f 8b`, zstd
//! `28 b5 2f fd`), so compressed standard input works; a file whose name ends in `.gz`, `.zst`
//! or `.zstd` must actually be compressed that way. The format is named by
//! [`InputOptions::format`] or detected from the file name once the compression extension is
//! removed: `.jsonl`, `.json`, `.ndjson`, `.txt`, `.text`, `.csv`, `.tsv`, `.parquet`.
//!
//! JSON lines are parsed on all cores in batches; everything else is sequential.

mod delimited;
mod ids;
mod limits;
mod lines;
mod peek;
mod row_tracker;
mod runs;

pub use crate::compression::open_stream;
pub(crate) use lines::lookup_mut;
pub use lines::{describe, text_again};
pub use peek::first_record_has_field;
pub use runs::Runs;
#[cfg(feature = "parquet")]
mod parquet;

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

#[cfg(feature = "parquet")]
use arrow::datatypes::SchemaRef;
#[cfg(feature = "parquet")]
use arrow::record_batch::RecordBatch;
use serde_json::Value;

use self::ids::{empty_id, SeenIds};
pub use self::ids::{IdArena, ParkedIds};
use self::limits::{too_long, too_long_unfinished, ReadLimit};
use crate::compression::Compression;
use crate::error::{Error, Result};
use crate::memory_rule::Held;
pub use crate::memory_rule::MemoryRule;

/// The path that stands for standard input.
use crate::paths::STANDARD as STDIN;
/// How many messages [`Skipped::first`] keeps.
const SKIPPED_MESSAGES: usize = 10;

/// The format of an input (and of the deduplicated output written from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// One document per line.
    Text,
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
    /// Tab-separated values with a header row; fields are never quoted, so they cannot contain
    /// tabs or newlines, and quote characters are ordinary text.
    Tsv,
    /// Apache Parquet; the text column must be a string column.
    Parquet,
}

impl Format {
    /// All formats, in the order they are listed in messages.
    pub const ALL: [Format; 5] = [
        Format::Jsonl,
        Format::Text,
        Format::Csv,
        Format::Tsv,
        Format::Parquet,
    ];

    /// The canonical lowercase name (`jsonl`, `text`, `csv`, `tsv`, `parquet`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Text => "text",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Parquet => "parquet",
        }
    }

    /// The format a file extension (without the dot, any case) stands for.
    pub(crate) fn from_extension(extension: &str) -> Option<Format> {
        match extension.to_ascii_lowercase().as_str() {
            "jsonl" | "json" | "ndjson" => Some(Format::Jsonl),
            "txt" | "text" => Some(Format::Text),
            "csv" => Some(Format::Csv),
            "tsv" => Some(Format::Tsv),
            "parquet" => Some(Format::Parquet),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = UnknownName;

    /// Accepts `jsonl`, `json`, `ndjson`, `text`, `txt`, `csv`, `tsv` and `parquet`.
    fn from_str(name: &str) -> std::result::Result<Format, UnknownName> {
        Format::from_extension(name).ok_or_else(|| UnknownName {
            value: name.to_owned(),
            expected: "jsonl, text, csv, tsv, parquet",
        })
    }
}

/// What to do with a malformed record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// Stop reading and return the error.
    #[default]
    Fail,
    /// Drop the record and count it in [`Corpus::skipped`].
    Skip,
}

impl FromStr for OnError {
    type Err = UnknownName;

    /// Accepts `fail` and `skip`.
    fn from_str(name: &str) -> std::result::Result<OnError, UnknownName> {
        match name {
            "fail" => Ok(OnError::Fail),
            "skip" => Ok(OnError::Skip),
            _ => Err(UnknownName {
                value: name.to_owned(),
                expected: "fail, skip",
            }),
        }
    }
}

/// A name that [`Format::from_str`] or [`OnError::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    value: String,
    expected: &'static str,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown value {:?}; expected one of: {}",
            self.value, self.expected
        )
    }
}

impl std::error::Error for UnknownName {}

/// How to read the inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputOptions {
    /// The format of every input; `None` detects it from each file name. Standard input has no
    /// name, so reading it requires a format.
    pub format: Option<Format>,
    /// Where the text is: a dotted path into JSON objects (`meta.body`; a top-level key that
    /// contains dots is found first), or a column name for CSV, TSV and Parquet.
    pub text_field: String,
    /// Where the id is, like `text_field`; `None` numbers the records 1, 2, ... across all
    /// inputs. JSON ids must be strings or numbers; CSV and TSV ids are strings; Parquet id
    /// columns hold strings or integers. Text inputs have no fields and are always numbered.
    /// An id is written back as it was read: a JSON number keeps its digits
    /// (`12345678901234567890123`, `-0`, `1.50`; only an exponent is spelled with a sign,
    /// `1e2` as `1e+2`). A record whose id is empty or repeats an earlier record's id
    /// (compared as JSON text, so `"7"`, `7` and `7.0` differ) is malformed.
    pub id_field: Option<String>,
    /// What to do with malformed records.
    pub on_error: OnError,
    /// The largest record accepted, in bytes (a JSON or text line without its line break, the
    /// fields of a CSV row, the text of a Parquet row). Larger records are malformed. Under
    /// [`OnError::Fail`] reading stops as soon as a line or CSV row passes the limit (so an
    /// endless line fails at once); under [`OnError::Skip`] the rest of a long line is read
    /// past without being held in memory.
    pub max_doc_bytes: usize,
    /// The memory a run may take ([`MemoryRule`]): a record whose sketching alone would pass
    /// it is malformed, and an in-memory read stops with [`Error::Stopped`] on
    /// `memory_limit` once what it holds is expected to pass it. `None`: no check.
    pub memory: Option<MemoryRule>,
}

impl Default for InputOptions {
    /// Detected format, text in `text`, numbered ids, fail on errors, 256 MiB per record.
    fn default() -> InputOptions {
        InputOptions {
            format: None,
            text_field: "text".to_owned(),
            id_field: None,
            on_error: OnError::Fail,
            max_doc_bytes: 256 << 20,
            memory: None,
        }
    }
}

/// The raw form of a record, enough to write it back out in the input's format.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// A JSONL or text line without its `\n` but with the `\r` of a `\r\n`, so that writing
    /// it followed by `\n` reproduces it byte for byte. A UTF-8 byte order mark at the start
    /// of an input is not part of its first line.
    Line(Vec<u8>),
    /// A JSONL or text line left in its input, a plain file the writer reads again
    /// ([`Source::reread`]): where the bytes of [`Raw::Line`] start, their length, and the low
    /// 32 bits of their xxh3, checked when they are read again.
    At {
        /// Byte offset of the line in the file.
        offset: u64,
        /// Length of the line without its `\n` (with the `\r` of a `\r\n`).
        len: u64,
        /// The low 32 bits of the line's xxh3 (seed 0).
        check: u32,
    },
    /// A CSV or TSV row.
    Csv(csv::ByteRecord),
    /// A row of a Parquet input: an index into [`ParquetData::batches`] and a row in that batch.
    Parquet {
        /// Index of the batch in the source's [`ParquetData::batches`].
        batch: u32,
        /// Row within the batch, from 0.
        row: u32,
    },
}

/// One document of the corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The id: the id field's value (a JSON string or number, kept as written thanks to
    /// serde_json's `arbitrary_precision`), or the record's 1-based ordinal across all inputs.
    pub id: Value,
    /// The text to deduplicate.
    pub text: String,
    /// What the output writers copy out.
    pub raw: Raw,
    /// Index of the input file in [`Corpus::sources`] (and in the paths given).
    pub source: u32,
    /// The 1-based line (JSONL, text), the line where a CSV row starts, or the 1-based row
    /// number (Parquet).
    pub line: u64,
}

/// The malformed records dropped under [`OnError::Skip`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many records were dropped.
    pub count: u64,
    /// The messages (`path:line: message`) of the first ten.
    pub first: Vec<String>,
}

impl Skipped {
    /// Counts one dropped record.
    fn note(&mut self, error: &Error) {
        self.count += 1;
        if self.first.len() < SKIPPED_MESSAGES {
            self.first.push(error.to_string());
        }
    }
}

/// One input file and what its output needs besides the records.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as given (`-` for standard input).
    pub path: String,
    /// Its format.
    pub format: Format,
    /// The header row of a CSV or TSV input.
    pub csv_headers: Option<csv::ByteRecord>,
    /// The data of a Parquet input.
    pub parquet: Option<ParquetData>,
    /// A plain file whose lines were left in it ([`Raw::At`]): what it was when read.
    pub reread: Option<Reread>,
}

/// A plain (uncompressed, regular) input file whose records were left in it, to be read again
/// by the writer: its size and modification time when it was read, checked again then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reread {
    /// Where it was opened.
    pub opened: String,
    /// Its size in bytes.
    pub len: u64,
    /// Its modification time.
    pub modified: Option<std::time::SystemTime>,
}

impl Reread {
    /// `opened`'s size and modification time, when it is a regular file.
    pub fn of(opened: &str) -> Option<Reread> {
        let meta = std::fs::metadata(opened)
            .ok()
            .filter(std::fs::Metadata::is_file)?;
        Some(Reread {
            opened: opened.to_owned(),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// The check of a line's bytes kept in [`Raw::At`].
pub fn line_check(bytes: &[u8]) -> u32 {
    neardup_core::hash::hash64_seeded(bytes, 0) as u32
}

/// A Parquet input as Arrow data.
#[cfg(feature = "parquet")]
#[derive(Debug, Clone)]
pub struct ParquetData {
    /// The Arrow schema of the file.
    pub schema: SchemaRef,
    /// All its rows.
    pub batches: Vec<RecordBatch>,
}

/// A Parquet input: never made when the crate is built without the `parquet` feature (a
/// Parquet input is refused).
#[cfg(not(feature = "parquet"))]
#[derive(Debug, Clone)]
pub struct ParquetData {
    _never: (),
}

#[cfg(not(feature = "parquet"))]
impl CorpusReader<'_> {
    /// Refuses a Parquet input: this build has no Parquet reader.
    fn read_parquet(&mut self, _source: u32, path: &str) -> Result<ParquetData> {
        Err(Error::format(
            path,
            "Parquet input needs the `parquet` feature of neardup-pipeline, which this build \
             was compiled without",
        ))
    }
}

/// Everything read from the inputs.
#[derive(Debug, Default)]
pub struct Corpus {
    /// The well-formed records, in input order.
    pub records: Vec<Record>,
    /// The inputs, in the order given.
    pub sources: Vec<Source>,
    /// The malformed records dropped.
    pub skipped: Skipped,
    /// Bytes read, after decompression (for Parquet, the size of the file).
    pub bytes_read: u64,
}

/// Reads every input into one corpus.
///
/// `-` is standard input. JSONL inputs may contain blank lines, which are ignored; in text
/// inputs every line, empty or not, is a document. A UTF-8 byte order mark at the start of an
/// input is dropped, so outputs made of several inputs carry none in the middle.
///
/// # Errors
///
/// [`Error::Io`] if a file cannot be read, [`Error::Format`] if its format is unknown or a column
/// is missing, and [`Error::Input`] for the first malformed record when
/// [`InputOptions::on_error`] is [`OnError::Fail`].
pub fn read_inputs(paths: &[String], options: &InputOptions) -> Result<Corpus> {
    let mut reader = CorpusReader::new(options, paths, paths, None);
    reader.read_all()?;
    Ok(reader.corpus)
}

/// [`read_inputs`], except that the lines of plain JSONL and text files (not compressed, not
/// standard input) are left in them: their records hold [`Raw::At`] instead of the bytes,
/// which the writer ([`crate::output::write_kept`]) reads again, checking that the files did
/// not change. A run's memory then holds no input line.
///
/// # Errors
/// As [`read_inputs`].
pub fn read_inputs_leaving_lines(paths: &[String], options: &InputOptions) -> Result<Corpus> {
    let mut reader = CorpusReader::new(options, paths, paths, None);
    reader.leave_lines = true;
    reader.read_all()?;
    Ok(reader.corpus)
}

/// What a streamed read ([`read_inputs_streamed`]) keeps of each accepted record: its id
/// and where it came from, in a few bytes, not its text or its raw form. Inputs, lines and
/// ordinals are held as [`Runs`] (a few bytes per input file, and per record skipped or
/// line not a record); ids taken from a field cost their JSON text and 4 bytes.
#[derive(Debug, Default, Clone)]
pub struct Meta {
    /// The ids read from [`InputOptions::id_field`] (empty without one).
    pub ids: IdArena,
    /// The 1-based ordinals, which are the ids without an id field (empty with one).
    pub ordinals: Runs<1>,
    /// The index of each record's input.
    pub sources: Runs<0>,
    /// Each record's line ([`Record::line`]).
    pub lines: Runs<1>,
}

impl Meta {
    /// Records kept.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether no record was kept.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The id of record `index`.
    pub fn id(&self, index: usize) -> Value {
        match self.ids.get(index) {
            Some(id) => id,
            None => Value::from(self.ordinals.get(index)),
        }
    }

    /// The index of record `index`'s input.
    pub fn source(&self, index: usize) -> u32 {
        self.sources.get(index) as u32
    }

    /// Record `index`'s line.
    pub fn line(&self, index: usize) -> u64 {
        self.lines.get(index)
    }

    /// Gives back the growth slack of a read whose size was not known in advance (about a
    /// third of the ids' memory, on average).
    pub fn shrink_to_fit(&mut self) {
        self.ids.shrink_to_fit();
        self.ordinals.shrink_to_fit();
        self.sources.shrink_to_fit();
        self.lines.shrink_to_fit();
    }

    /// Bytes held, about.
    pub fn heap_bytes(&self) -> usize {
        self.sources.heap_bytes()
            + self.lines.heap_bytes()
            + self.ordinals.heap_bytes()
            + self.ids.heap_bytes()
    }

    fn push(&mut self, record: &Record, by_field: bool) {
        if by_field {
            self.ids.push(&record.id);
        } else {
            self.ordinals.push(record.id.as_u64().unwrap_or(0));
        }
        self.sources.push(u64::from(record.source));
        self.lines.push(record.line);
    }
}

/// Reads every input as [`read_inputs`] does, with the same checks, errors and skips, but
/// hands each accepted record to `sink` in input order instead of keeping it: the returned
/// [`Corpus`] has no records (its sources, skips and bytes read are filled), the [`Meta`]
/// has each record's id and place. Input `i` is opened at `open_as[i]` (a copy of standard
/// input, say) and named `paths[i]` in messages. `expected` (records, bytes of their ids'
/// JSON text; zeros when unknown) is what an earlier read of the same inputs found: the
/// [`Meta`] and the table of ids are made that size at once, not grown by doubling.
///
/// # Errors
/// As [`read_inputs`], and whatever `sink` returns.
pub fn read_inputs_streamed(
    paths: &[String],
    open_as: &[String],
    options: &InputOptions,
    expected: (usize, usize),
    sink: &mut dyn FnMut(Record) -> Result<()>,
) -> Result<(Corpus, Meta)> {
    let by_field = options.id_field.is_some();
    let mut meta = Meta::default();
    let mut ids = SeenIds::default();
    if by_field {
        meta.ids.reserve(expected.0, expected.1);
        ids.reserve(expected.0);
    }
    let mut reader = CorpusReader {
        ids,
        meta,
        ..CorpusReader::new(options, paths, open_as, Some(sink))
    };
    reader.read_all()?;
    Ok((reader.corpus, reader.meta))
}

/// Reads the inputs again after a [`read_inputs_streamed`] of them that found `earlier`,
/// handing `sink` the same records in the same order, and keeping nothing per record: a
/// record is accepted when it is the next one `earlier` holds (same input and line), so
/// that records the earlier read refused for their ids are refused again without a table
/// of ids. Returns the corpus without records (sources, skips and bytes read).
///
/// # Errors
/// As [`read_inputs`], and whatever `sink` returns.
pub fn read_inputs_replayed(
    paths: &[String],
    open_as: &[String],
    options: &InputOptions,
    earlier: &Meta,
    sink: &mut dyn FnMut(Record) -> Result<()>,
) -> Result<Corpus> {
    let mut reader = CorpusReader {
        replay: Some((earlier, 0)),
        ..CorpusReader::new(options, paths, open_as, Some(sink))
    };
    reader.read_all()?;
    Ok(reader.corpus)
}

/// The name of an input `path` in messages (`-` is `<stdin>`).
pub use crate::paths::display_input as display_path;

/// The format of `path`: the one requested, or the one its extension names.
fn resolve_format(path: &str, requested: Option<Format>) -> Result<Format> {
    if let Some(format) = requested {
        return Ok(format);
    }
    if path == STDIN {
        return Err(Error::format(
            display_path(path),
            "the format of standard input cannot be detected; give it with `format`",
        ));
    }
    let (_, stem) = Compression::from_extension(path);
    Path::new(stem)
        .extension()
        .and_then(OsStr::to_str)
        .and_then(Format::from_extension)
        .ok_or_else(|| {
            Error::format(
                path,
                "cannot tell the format from the file name; name it .jsonl, .txt, .csv, .tsv or \
                 .parquet (optionally followed by .gz or .zst) or give `format`",
            )
        })
}

/// Names as a list for messages: `"a", "b"`.
fn quoted_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names
        .into_iter()
        .map(|name| format!("{:?}", name.as_ref()))
        .collect();
    if quoted.is_empty() {
        "no columns".to_owned()
    } else {
        quoted.join(", ")
    }
}

/// The message for `field` missing from the object `value`: the fields it has, and the
/// option that names the field (`` `text_field` ``, which the command line shows as its flag).
pub(crate) fn missing(field: &str, value: &Value, option: &str) -> String {
    const SHOWN: usize = 12;
    let Some(object) = value.as_object() else {
        return format!("field {field:?} is missing");
    };
    if object.is_empty() {
        return format!("field {field:?} is missing; the object has no fields");
    }
    let mut names: Vec<String> = object
        .keys()
        .take(SHOWN)
        .map(|k| format!("{k:?}"))
        .collect();
    if object.len() > SHOWN {
        names.push(format!("and {} more", object.len() - SHOWN));
    }
    format!(
        "field {field:?} is missing; the object has {}: give the one to read with `{option}`",
        names.join(", ")
    )
}

/// The columns of a CSV, TSV or Parquet input that records are made from.
struct Columns<'a> {
    name: &'a str,
    source: u32,
    /// Name and index of the text column.
    text: (&'a str, usize),
    /// Name and index of the id column.
    id: Option<(&'a str, usize)>,
    limit: ReadLimit,
}

impl<'a> Columns<'a> {
    /// The columns of input `name` at index `text` and `id`, as the options name them.
    fn new(
        name: &'a str,
        source: u32,
        options: &'a InputOptions,
        text: usize,
        id: Option<usize>,
    ) -> Columns<'a> {
        Columns {
            name,
            source,
            text: (&options.text_field, text),
            id: options.id_field.as_deref().zip(id),
            limit: options.read_limit(),
        }
    }

    /// A record of this input.
    fn record(&self, id: Value, text: String, raw: Raw, line: u64) -> Record {
        Record {
            id,
            text,
            raw,
            source: self.source,
            line,
        }
    }
}

/// Gathers records from the inputs one after another.
struct CorpusReader<'a> {
    options: &'a InputOptions,
    /// All the inputs, as given.
    paths: &'a [String],
    /// Where each input is opened (a copy of standard input, say).
    open_as: &'a [String],
    corpus: Corpus,
    /// Where accepted records go in a streamed read (else into `corpus.records`).
    sink: Option<&'a mut dyn FnMut(Record) -> Result<()>>,
    /// What a streamed read keeps of each accepted record.
    meta: Meta,
    /// The ordinal of the last record seen, across all inputs.
    ordinal: u64,
    /// The ids of the records in `corpus` (only kept with [`InputOptions::id_field`]).
    ids: SeenIds,
    /// A read that replays an earlier one ([`read_inputs_replayed`]): what it found, and
    /// how many of its records were met again.
    replay: Option<(&'a Meta, usize)>,
    /// Whether lines of plain files are left in them ([`Raw::At`], [`read_inputs_leaving_lines`]).
    leave_lines: bool,
    /// What an in-memory read holds, for [`InputOptions::memory`].
    held: Held,
}

impl<'a> CorpusReader<'a> {
    /// A reader of `paths` (opened at `open_as`) that keeps its records in its corpus, or
    /// hands them to `sink`; nothing read yet.
    fn new(
        options: &'a InputOptions,
        paths: &'a [String],
        open_as: &'a [String],
        sink: Option<&'a mut dyn FnMut(Record) -> Result<()>>,
    ) -> CorpusReader<'a> {
        CorpusReader {
            options,
            paths,
            open_as,
            corpus: Corpus::default(),
            ordinal: 0,
            ids: SeenIds::default(),
            sink,
            meta: Meta::default(),
            replay: None,
            leave_lines: false,
            held: Held::default(),
        }
    }

    /// Reads every input in order.
    fn read_all(&mut self) -> Result<()> {
        for (index, path) in self.paths.iter().enumerate() {
            let index = u32::try_from(index).map_err(|_| Error::format(path, "too many inputs"))?;
            self.read_source(index, path)?;
        }
        Ok(())
    }

    /// Where input `source` (given as `path`) is opened.
    fn opened<'p>(&'p self, source: u32, path: &'p str) -> &'p str {
        self.open_as
            .get(source as usize)
            .map_or(path, String::as_str)
    }

    /// Reads one input and adds it to the corpus.
    fn read_source(&mut self, index: u32, path: &str) -> Result<()> {
        let format = resolve_format(path, self.options.format)?;
        let mut source = Source {
            path: path.to_owned(),
            format,
            csv_headers: None,
            parquet: None,
            reread: None,
        };
        match format {
            Format::Jsonl | Format::Text => source.reread = self.read_lines(index, path, format)?,
            Format::Csv | Format::Tsv => {
                source.csv_headers = Some(self.read_delimited(index, path, format)?);
            }
            Format::Parquet => source.parquet = Some(self.read_parquet(index, path)?),
        }
        self.corpus.sources.push(source);
        Ok(())
    }

    /// The ordinal of a new record.
    fn next_ordinal(&mut self) -> u64 {
        self.ordinal += 1;
        self.ordinal
    }

    /// Keeps a record, or handles its error (or its repeated id) as [`InputOptions::on_error`]
    /// says.
    fn accept(&mut self, outcome: Result<Record>) -> Result<()> {
        let outcome = outcome.and_then(|record| self.check_memory(record));
        if let Some((earlier, met)) = self.replay.as_mut() {
            match outcome {
                Ok(record) => {
                    let next = *met;
                    let again = next < earlier.len()
                        && earlier.source(next) == record.source
                        && earlier.line(next) == record.line;
                    // Otherwise a record the earlier read refused for its id.
                    if again {
                        *met += 1;
                        if let Some(sink) = self.sink.as_mut() {
                            sink(record)?;
                        }
                    }
                }
                Err(error @ Error::Input { .. }) if self.options.on_error == OnError::Skip => {
                    self.corpus.skipped.note(&error);
                }
                Err(error) => return Err(error),
            }
            return Ok(());
        }
        match outcome.and_then(|record| self.check_id(record)) {
            Ok(record) if self.sink.is_some() => {
                let by_field = self.options.id_field.is_some();
                let index = u32::try_from(self.meta.len()).map_err(|_| {
                    let name = display_path(&self.paths[record.source as usize]);
                    Error::format(name, "too many records")
                })?;
                self.meta.push(&record, by_field);
                if by_field {
                    let ids = &self.meta.ids;
                    self.ids.insert_text(index, |i| ids.text(i as usize));
                }
                if let Some(sink) = self.sink.as_mut() {
                    sink(record)?;
                }
            }
            Ok(record) => {
                self.hold(&record)?;
                let records = &mut self.corpus.records;
                if self.options.id_field.is_some() {
                    let index = u32::try_from(records.len()).map_err(|_| {
                        let name = display_path(&self.paths[record.source as usize]);
                        Error::format(name, "too many records")
                    })?;
                    records.push(record);
                    self.ids.insert(index, |i| &records[i as usize].id);
                } else {
                    records.push(record);
                }
            }
            Err(error @ Error::Input { .. }) if self.options.on_error == OnError::Skip => {
                self.corpus.skipped.note(&error);
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }
}

impl CorpusReader<'_> {
    /// The record, if its id (taken from [`InputOptions::id_field`]) is neither empty nor the
    /// id of a record already accepted.
    fn check_id(&self, record: Record) -> Result<Record> {
        let Some(field) = self.options.id_field.as_deref() else {
            return Ok(record);
        };
        let name = display_path(&self.paths[record.source as usize]);
        if let Some(message) = empty_id(&record.id, field) {
            return Err(Error::input(name, record.line, message));
        }
        let first = match self.sink {
            Some(_) => {
                let text = serde_json::to_vec(&record.id).unwrap_or_default();
                (self
                    .ids
                    .find_text(&text, |i| self.meta.ids.text(i as usize)))
                .map(|i| (self.meta.source(i as usize), self.meta.line(i as usize)))
            }
            None => (self
                .ids
                .find(&record.id, |i| &self.corpus.records[i as usize].id))
            .map(|i| {
                let first = &self.corpus.records[i as usize];
                (first.source, first.line)
            }),
        };
        match first {
            None => Ok(record),
            Some((source, line)) => {
                let first_name = display_path(&self.paths[source as usize]);
                let message = format!(
                    "duplicate id {} (field {field:?}): first seen at {first_name}:{line}",
                    record.id
                );
                Err(Error::input(name, record.line, message))
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #[cfg(feature = "parquet")]
    use std::fs::File;
    use std::io::Write;
    #[cfg(feature = "parquet")]
    use std::sync::Arc;

    #[cfg(feature = "parquet")]
    use ::parquet::arrow::ArrowWriter;
    #[cfg(feature = "parquet")]
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    #[cfg(feature = "parquet")]
    use arrow::datatypes::{DataType, Field, Schema};
    use serde_json::json;

    use super::*;

    /// Writes `bytes` to `name` in `dir` and returns the path.
    pub(crate) fn write_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write test file");
        path.to_string_lossy().into_owned()
    }

    #[cfg(feature = "parquet")]
    /// Writes a Parquet file with an `id` and a `text` column.
    pub(crate) fn write_parquet_file(
        dir: &tempfile::TempDir,
        name: &str,
        ids: Vec<i64>,
        texts: Vec<Option<&str>>,
    ) -> String {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(texts)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).expect("batch");
        let path = dir.path().join(name);
        let file = File::create(&path).expect("create parquet");
        let mut writer = ArrowWriter::try_new(file, schema, None).expect("writer");
        writer.write(&batch).expect("write batch");
        writer.close().expect("close");
        path.to_string_lossy().into_owned()
    }

    pub(crate) fn read_one(path: &str, options: &InputOptions) -> Result<Corpus> {
        read_inputs(&[path.to_owned()], options)
    }

    pub(crate) fn skip() -> InputOptions {
        InputOptions {
            on_error: OnError::Skip,
            ..InputOptions::default()
        }
    }

    pub(crate) fn texts(corpus: &Corpus) -> Vec<&str> {
        corpus.records.iter().map(|r| r.text.as_str()).collect()
    }

    pub(crate) fn ids(corpus: &Corpus) -> Vec<Value> {
        corpus.records.iter().map(|r| r.id.clone()).collect()
    }

    pub(crate) fn error_of(path: &str, options: &InputOptions) -> String {
        match read_one(path, options) {
            Ok(corpus) => panic!("expected an error, read {} records", corpus.records.len()),
            Err(error) => error.to_string(),
        }
    }

    pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn skip_mode_counts_skipped_records_and_keeps_ordinals() {
        let dir = tempfile::tempdir().unwrap();
        let data =
            b"{\"text\": \"a\"}\n{oops\n{\"text\": \"c\"}\n{\"text\": 1}\n{\"text\": \"e\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let corpus = read_one(&path, &skip()).unwrap();
        assert_eq!(texts(&corpus), ["a", "c", "e"]);
        assert_eq!(ids(&corpus), [json!(1), json!(3), json!(5)]);
        assert_eq!(corpus.skipped.count, 2);
        assert!(corpus.skipped.first[0].contains("in.jsonl:2: invalid JSON"));
        assert!(corpus.skipped.first[1].contains("in.jsonl:4: field \"text\""));
    }

    #[test]
    fn skip_mode_keeps_only_ten_messages() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", "{}\n".repeat(25).as_bytes());
        let corpus = read_one(&path, &skip()).unwrap();
        assert_eq!(corpus.skipped.count, 25);
        assert_eq!(corpus.skipped.first.len(), 10);
        assert!(corpus.records.is_empty());
    }

    #[test]
    fn ids_count_across_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_file(&dir, "a.txt", b"a\nb\n");
        let second = write_file(&dir, "b.jsonl", b"{\"text\": \"c\"}\n");
        let corpus = read_inputs(&[first, second], &InputOptions::default()).unwrap();
        assert_eq!(ids(&corpus), [json!(1), json!(2), json!(3)]);
        let sources: Vec<u32> = corpus.records.iter().map(|r| r.source).collect();
        assert_eq!(sources, [0, 0, 1]);
        assert_eq!(corpus.sources.len(), 2);
    }

    #[test]
    fn format_comes_from_option_or_extension() {
        assert_eq!(resolve_format("a.JSONL.gz", None).unwrap(), Format::Jsonl);
        assert_eq!(resolve_format("a.ndjson", None).unwrap(), Format::Jsonl);
        assert_eq!(
            resolve_format("dir.v2/a.tsv.zstd", None).unwrap(),
            Format::Tsv
        );
        assert_eq!(resolve_format("a.text", None).unwrap(), Format::Text);
        assert_eq!(
            resolve_format("a.xml", Some(Format::Csv)).unwrap(),
            Format::Csv
        );
        assert_eq!(
            resolve_format("-", Some(Format::Text)).unwrap(),
            Format::Text
        );
        let message = resolve_format("a.xml", None).unwrap_err().to_string();
        assert!(
            message.starts_with("a.xml: cannot tell the format"),
            "{message}"
        );
        let message = resolve_format("-", None).unwrap_err().to_string();
        assert!(message.starts_with("<stdin>: ") && message.contains("`format`"));
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn format_and_on_error_parse_and_display() {
        for format in Format::ALL {
            assert_eq!(format.to_string().parse::<Format>(), Ok(format));
        }
        assert_eq!("ndjson".parse::<Format>(), Ok(Format::Jsonl));
        assert_eq!("txt".parse::<Format>(), Ok(Format::Text));
        let message = "xml".parse::<Format>().unwrap_err().to_string();
        assert_eq!(
            message,
            "unknown value \"xml\"; expected one of: jsonl, text, csv, tsv, parquet"
        );
        assert_eq!("skip".parse::<OnError>(), Ok(OnError::Skip));
        assert!("ignore".parse::<OnError>().is_err());
    }
}
