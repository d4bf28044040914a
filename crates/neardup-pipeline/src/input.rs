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
//! depend on [`OnError`]; blank JSONL lines are not records and take none.
//!
//! Compression is recognised by the magic bytes at the start of the stream (gzip `1f 8b`, zstd
//! `28 b5 2f fd`), so compressed standard input works; a file whose name ends in `.gz`, `.zst`
//! or `.zstd` must actually be compressed that way. The format is named by
//! [`InputOptions::format`] or detected from the file name once the compression extension is
//! removed: `.jsonl`, `.json`, `.ndjson`, `.txt`, `.text`, `.csv`, `.tsv`, `.parquet`.
//!
//! JSON lines are parsed on all cores in batches; everything else is sequential.

use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::str::FromStr;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{self, DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;
use serde_json::Value;

use crate::error::{Error, Result};

/// The path that stands for standard input.
const STDIN: &str = "-";
/// How many messages [`Skipped::first`] keeps.
const SKIPPED_MESSAGES: usize = 10;
/// Lines of JSONL or text parsed together in one parallel batch.
const BATCH_LINES: usize = 16_384;
/// Bytes of JSONL or text parsed together in one parallel batch.
const BATCH_BYTES: usize = 32 << 20;

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
    fn from_extension(extension: &str) -> Option<Format> {
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
    pub id_field: Option<String>,
    /// What to do with malformed records.
    pub on_error: OnError,
    /// The largest record accepted, in bytes (a JSON or text line without its line break, the
    /// fields of a CSV row, the text of a Parquet row). Larger records are malformed; a long
    /// line is skipped over without being held in memory.
    pub max_doc_bytes: usize,
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
        }
    }
}

/// The raw form of a record, enough to write it back out in the input's format.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// A JSONL or text line, without its `\n` or `\r\n`.
    Line(Vec<u8>),
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
    /// The id: the id field's value (a JSON string or number), or the record's 1-based ordinal
    /// across all inputs.
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
}

/// A Parquet input as Arrow data.
#[derive(Debug, Clone)]
pub struct ParquetData {
    /// The Arrow schema of the file.
    pub schema: SchemaRef,
    /// All its rows.
    pub batches: Vec<RecordBatch>,
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
/// inputs every line, empty or not, is a document.
///
/// # Errors
///
/// [`Error::Io`] if a file cannot be read, [`Error::Format`] if its format is unknown or a column
/// is missing, and [`Error::Input`] for the first malformed record when
/// [`InputOptions::on_error`] is [`OnError::Fail`].
pub fn read_inputs(paths: &[String], options: &InputOptions) -> Result<Corpus> {
    let mut reader = CorpusReader {
        options,
        corpus: Corpus::default(),
        ordinal: 0,
    };
    for (index, path) in paths.iter().enumerate() {
        let index = u32::try_from(index).map_err(|_| Error::format(path, "too many inputs"))?;
        reader.read_source(index, path)?;
    }
    Ok(reader.corpus)
}

/// The name of `path` in messages.
pub(crate) fn display_path(path: &str) -> &str {
    if path == STDIN {
        "<stdin>"
    } else {
        path
    }
}

/// The format of `path`: the one requested, or the one its extension names.
fn resolve_format(path: &str, requested: Option<Format>) -> Result<Format> {
    if let Some(format) = requested {
        return Ok(format);
    }
    if path == STDIN {
        return Err(Error::format(
            display_path(path),
            "the format of standard input cannot be detected; give it with --format",
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
                 .parquet (optionally followed by .gz or .zst) or give --format",
            )
        })
}

/// The compression of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression a file name announces, and the name without that extension.
    fn from_extension(path: &str) -> (Compression, &str) {
        let lower = path.to_ascii_lowercase();
        for (suffix, compression) in [
            (".gz", Compression::Gzip),
            (".zst", Compression::Zstd),
            (".zstd", Compression::Zstd),
        ] {
            if lower.ends_with(suffix) {
                return (compression, &path[..path.len() - suffix.len()]);
            }
        }
        (Compression::None, path)
    }

    /// The compression the first bytes of a stream show.
    fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// Reads up to four bytes, fewer only at the end of the stream.
fn read_head(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(4);
    reader.take(4).read_to_end(&mut head)?;
    Ok(head)
}

/// Opens `path` (or standard input) as a buffered, decompressed stream.
fn open_stream(path: &str) -> Result<Box<dyn BufRead>> {
    let name = display_path(path);
    let mut raw: Box<dyn Read> = if path == STDIN {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(|e| Error::io(name, e))?)
    };
    let head = read_head(&mut raw).map_err(|e| Error::io(name, e))?;
    let compression = checked_compression(path, &head)?;
    let stream = io::Cursor::new(head).chain(raw);
    Ok(match compression {
        Compression::None => Box::new(BufReader::with_capacity(1 << 16, stream)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::read::MultiGzDecoder::new(stream),
        )),
        Compression::Zstd => {
            let decoder = zstd::Decoder::new(stream).map_err(|e| Error::io(name, e))?;
            Box::new(BufReader::with_capacity(1 << 16, decoder))
        }
    })
}

/// The compression of a stream starting with `head`, which must match the one its name
/// announces.
fn checked_compression(path: &str, head: &[u8]) -> Result<Compression> {
    let by_magic = Compression::from_magic(head);
    let (by_name, _) = Compression::from_extension(path);
    if path != STDIN && by_name != Compression::None && by_name != by_magic && !head.is_empty() {
        let expected = if by_name == Compression::Gzip {
            "gzip"
        } else {
            "zstd"
        };
        return Err(Error::format(
            path,
            format!("the name says {expected}, but the data is not {expected}-compressed"),
        ));
    }
    Ok(by_magic)
}

/// Opens `path` as a seekable file: an uncompressed file directly, anything else (standard
/// input, compressed data) decompressed into an anonymous temporary file.
fn open_seekable(path: &str) -> Result<File> {
    let name = display_path(path);
    if path != STDIN && Compression::from_extension(path).0 == Compression::None {
        let mut file = File::open(path).map_err(|e| Error::io(name, e))?;
        let head = read_head(&mut file).map_err(|e| Error::io(name, e))?;
        if Compression::from_magic(&head) == Compression::None {
            file.seek(SeekFrom::Start(0))
                .map_err(|e| Error::io(name, e))?;
            return Ok(file);
        }
    }
    let mut stream = open_stream(path)?;
    let mut spool = tempfile::tempfile().map_err(|e| Error::io(name, e))?;
    io::copy(&mut stream, &mut spool).map_err(|e| Error::io(name, e))?;
    spool
        .seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(name, e))?;
    Ok(spool)
}

/// The size of a line read by [`read_line`].
struct LineSize {
    /// Bytes consumed from the stream, line break included.
    consumed: u64,
    /// Bytes of the line without its `\n` or `\r\n`.
    content: u64,
}

/// Reads the next line into `line` without its `\n` or `\r\n`; `None` at the end of the stream.
///
/// At most `limit + 1` bytes are stored: when [`LineSize::content`] exceeds `limit`, `line`
/// holds only a prefix, and the rest of the line has been skipped.
fn read_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<LineSize>> {
    line.clear();
    let room = limit.saturating_add(1);
    let (mut consumed, mut content, mut last) = (0u64, 0u64, None);
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((consumed > 0).then_some(LineSize { consumed, content }));
        }
        let newline = chunk.iter().position(|&byte| byte == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let stored = part.len().min(room - line.len().min(room));
        line.extend_from_slice(&part[..stored]);
        content += part.len() as u64;
        last = part.last().copied().or(last);
        let used = newline.map_or(part.len(), |at| at + 1);
        consumed += used as u64;
        reader.consume(used);
        if newline.is_some() {
            if last == Some(b'\r') {
                content -= 1;
                if line.len() as u64 == content + 1 {
                    line.pop();
                }
            }
            return Ok(Some(LineSize { consumed, content }));
        }
    }
}

/// The message for a record larger than [`InputOptions::max_doc_bytes`].
fn too_long(size: u64, limit: usize) -> String {
    format!("record of {size} bytes exceeds --max-doc-bytes {limit}")
}

/// A line waiting to be parsed.
struct PendingLine {
    line: u64,
    ordinal: u64,
    bytes: Vec<u8>,
}

/// Lines waiting to be parsed together.
#[derive(Default)]
struct LineBatch {
    lines: Vec<PendingLine>,
    bytes: usize,
}

impl LineBatch {
    /// Adds a line; `true` when the batch is full.
    fn push(&mut self, pending: PendingLine) -> bool {
        self.bytes += pending.bytes.len();
        self.lines.push(pending);
        self.lines.len() >= BATCH_LINES || self.bytes >= BATCH_BYTES
    }

    /// Takes the lines out, leaving the batch empty.
    fn take(&mut self) -> Vec<PendingLine> {
        self.bytes = 0;
        std::mem::take(&mut self.lines)
    }
}

/// What turns lines of one JSONL or text source into records; shared by the parsing threads.
struct LineParser<'a> {
    name: &'a str,
    source: u32,
    format: Format,
    text_field: &'a str,
    id_field: Option<&'a str>,
}

impl LineParser<'_> {
    /// Parses one line into a record.
    fn parse(&self, pending: PendingLine) -> Result<Record> {
        let PendingLine {
            line,
            ordinal,
            bytes,
        } = pending;
        let body = self.utf8(line, &bytes)?;
        let (id, text) = match self.format {
            Format::Jsonl => self.json_fields(line, body)?,
            _ => (None, body.to_owned()),
        };
        Ok(Record {
            id: id.unwrap_or_else(|| Value::from(ordinal)),
            text,
            raw: Raw::Line(bytes),
            source: self.source,
            line,
        })
    }

    /// The line as UTF-8, without the byte order mark of a first line.
    fn utf8<'b>(&self, line: u64, bytes: &'b [u8]) -> Result<&'b str> {
        let body = std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            Error::input(
                self.name,
                line,
                format!("invalid UTF-8 at byte offset {offset}"),
            )
        })?;
        Ok(match line {
            1 => body.strip_prefix('\u{feff}').unwrap_or(body),
            _ => body,
        })
    }

    /// The id (if there is an id field) and the text of a JSON object.
    fn json_fields(&self, line: u64, body: &str) -> Result<(Option<Value>, String)> {
        let error = |message: String| Error::input(self.name, line, message);
        let mut value: Value = serde_json::from_str(body).map_err(|e| error(json_error(&e)))?;
        if !value.is_object() {
            return Err(error(format!(
                "expected a JSON object, found {}",
                describe(&value)
            )));
        }
        let id = match self.id_field {
            Some(field) => Some(json_id(&value, field).map_err(error)?),
            None => None,
        };
        let text = match lookup_mut(&mut value, self.text_field) {
            Some(Value::String(text)) => std::mem::take(text),
            Some(other) => {
                let found = describe(other);
                return Err(error(format!(
                    "field {:?} must be a string, found {found}",
                    self.text_field
                )));
            }
            None => return Err(error(format!("field {:?} is missing", self.text_field))),
        };
        Ok((id, text))
    }
}

/// A serde_json message without its position, which is always line 1 of a one-line document.
fn json_error(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    format!("invalid JSON at column {}: {message}", error.column())
}

/// The id at `field`: a JSON string or number.
fn json_id(value: &Value, field: &str) -> std::result::Result<Value, String> {
    match lookup(value, field) {
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(id.clone()),
        Some(other) => Err(format!(
            "field {field:?} must be a string or a number, found {}",
            describe(other)
        )),
        None => Err(format!("field {field:?} is missing")),
    }
}

/// The value at a dotted path; a top-level key equal to the whole path wins.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    if let Some(found) = value.get(path) {
        return Some(found);
    }
    path.split('.').try_fold(value, |value, key| value.get(key))
}

/// [`lookup`], mutably.
fn lookup_mut<'v>(value: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    if value.get(path).is_some() {
        return value.get_mut(path);
    }
    path.split('.')
        .try_fold(value, |value, key| value.get_mut(key))
}

/// The JSON type of a value and a short preview of it, as in `number 42`.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {}", preview(&value.to_string()))
}

/// At most 40 characters of `text`, with `...` when cut.
fn preview(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// The message for a Parquet or Arrow failure.
fn parquet_error(name: &str, error: impl fmt::Display) -> Error {
    Error::format(name, format!("cannot read Parquet: {error}"))
}

/// The error for a CSV failure that is not about one record.
fn csv_error(name: &str, error: csv::Error) -> Error {
    let message = error.to_string();
    match error.into_kind() {
        csv::ErrorKind::Io(source) => Error::io(name, source),
        _ => Error::format(name, format!("cannot read CSV: {message}")),
    }
}

/// Reads the next CSV row into `row`: `None` at the end, an inner error for a malformed row
/// (reading can go on after it), an outer error when reading cannot go on.
fn next_row(
    reader: &mut csv::Reader<Box<dyn BufRead>>,
    row: &mut csv::ByteRecord,
    name: &str,
) -> Result<Option<Result<()>>> {
    let error = match reader.read_byte_record(row) {
        Ok(more) => return Ok(more.then_some(Ok(()))),
        Err(error) => error,
    };
    if let csv::ErrorKind::UnequalLengths {
        pos,
        expected_len,
        len,
    } = error.kind()
    {
        let line = pos.as_ref().map_or(0, csv::Position::line);
        let message = format!("expected {expected_len} fields, found {len}");
        return Ok(Some(Err(Error::input(name, line, message))));
    }
    Err(csv_error(name, error))
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

/// The index of the column named `field` in a CSV header row.
fn header_column(name: &str, headers: &csv::ByteRecord, field: &str) -> Result<usize> {
    headers
        .iter()
        .position(|header| header == field.as_bytes())
        .ok_or_else(|| {
            let names = quoted_list(headers.iter().map(String::from_utf8_lossy));
            Error::format(
                name,
                format!("column {field:?} not found; the header has {names}"),
            )
        })
}

/// The index of the column named `field` in a Parquet schema, which must hold a type that
/// `accepts` takes (`expected` names those types).
fn schema_column(
    name: &str,
    schema: &SchemaRef,
    field: &str,
    (accepts, expected): (fn(&DataType) -> bool, &str),
) -> Result<usize> {
    let index = schema.index_of(field).map_err(|_| {
        let names = quoted_list(schema.fields().iter().map(|column| column.name()));
        Error::format(
            name,
            format!("column {field:?} not found; the schema has {names}"),
        )
    })?;
    let data_type = schema.field(index).data_type();
    if !accepts(data_type) {
        let message = format!("column {field:?} has type {data_type}; expected {expected}");
        return Err(Error::format(name, message));
    }
    Ok(index)
}

/// The Arrow types a text column may have.
const TEXT_TYPES: (fn(&DataType) -> bool, &str) = (
    |data_type| {
        matches!(
            data_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        )
    },
    "a string type (Utf8, LargeUtf8 or Utf8View)",
);

/// The Arrow types an id column may have.
const ID_TYPES: (fn(&DataType) -> bool, &str) = (
    |data_type| TEXT_TYPES.0(data_type) || data_type.is_integer(),
    "a string or integer type",
);

/// The string at `row` of a string array; `None` if it is null.
fn string_value(array: &ArrayRef, row: usize) -> Option<&str> {
    if array.is_null(row) {
        return None;
    }
    // Other types were refused by `schema_column`.
    match array.data_type() {
        DataType::Utf8 => array
            .as_string_opt::<i32>()
            .map(|strings| strings.value(row)),
        DataType::LargeUtf8 => array
            .as_string_opt::<i64>()
            .map(|strings| strings.value(row)),
        DataType::Utf8View => array.as_string_view_opt().map(|strings| strings.value(row)),
        _ => None,
    }
}

/// The value at `row` of a string or integer array as JSON; `None` if it is null.
fn id_value(array: &ArrayRef, row: usize) -> Option<Value> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Int8 => integer::<datatypes::Int8Type>(array, row),
        DataType::Int16 => integer::<datatypes::Int16Type>(array, row),
        DataType::Int32 => integer::<datatypes::Int32Type>(array, row),
        DataType::Int64 => integer::<datatypes::Int64Type>(array, row),
        DataType::UInt8 => integer::<datatypes::UInt8Type>(array, row),
        DataType::UInt16 => integer::<datatypes::UInt16Type>(array, row),
        DataType::UInt32 => integer::<datatypes::UInt32Type>(array, row),
        DataType::UInt64 => integer::<datatypes::UInt64Type>(array, row),
        _ => string_value(array, row).map(Value::from),
    }
}

/// The integer at `row` of a primitive array as JSON.
fn integer<T: datatypes::ArrowPrimitiveType>(array: &ArrayRef, row: usize) -> Option<Value>
where
    T::Native: Into<Value>,
{
    array
        .as_primitive_opt::<T>()
        .map(|integers| integers.value(row).into())
}

/// The columns of a CSV, TSV or Parquet input that records are made from.
struct Columns<'a> {
    name: &'a str,
    source: u32,
    /// Name and index of the text column.
    text: (&'a str, usize),
    /// Name and index of the id column.
    id: Option<(&'a str, usize)>,
    limit: usize,
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
            limit: options.max_doc_bytes,
        }
    }

    /// Makes a record of a CSV row.
    fn row_record(&self, row: &csv::ByteRecord, ordinal: u64) -> Result<Record> {
        let line = row.position().map_or(0, csv::Position::line);
        let size = row.as_slice().len();
        if size > self.limit {
            return Err(Error::input(
                self.name,
                line,
                too_long(size as u64, self.limit),
            ));
        }
        let text = self.row_field(row, self.text, line)?.to_owned();
        let id = match self.id {
            Some(column) => Value::from(self.row_field(row, column, line)?),
            None => Value::from(ordinal),
        };
        let raw = Raw::Csv(row.clone());
        Ok(self.record(id, text, raw, line))
    }

    /// A field of a CSV row as UTF-8.
    fn row_field<'r>(
        &self,
        row: &'r csv::ByteRecord,
        (field, index): (&str, usize),
        line: u64,
    ) -> Result<&'r str> {
        // Every row has as many fields as the header (the reader is not flexible).
        let bytes = row.get(index).unwrap_or_default();
        std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            let message = format!("column {field:?} is not valid UTF-8 (byte offset {offset})");
            Error::input(self.name, line, message)
        })
    }

    /// Makes a record of row `row` of batch `batch`, which is row `line` of the file.
    fn batch_record(
        &self,
        batch: (&RecordBatch, u32),
        row: usize,
        line: u64,
        ordinal: u64,
    ) -> Result<Record> {
        let (batch, index) = batch;
        let null = |field: &str| Error::input(self.name, line, format!("column {field:?} is null"));
        let text = string_value(batch.column(self.text.1), row).ok_or_else(|| null(self.text.0))?;
        if text.len() > self.limit {
            return Err(Error::input(
                self.name,
                line,
                too_long(text.len() as u64, self.limit),
            ));
        }
        let id = match self.id {
            Some((field, column)) => {
                id_value(batch.column(column), row).ok_or_else(|| null(field))?
            }
            None => Value::from(ordinal),
        };
        let row =
            u32::try_from(row).map_err(|_| Error::format(self.name, "record batch too large"))?;
        let raw = Raw::Parquet { batch: index, row };
        Ok(self.record(id, text.to_owned(), raw, line))
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
    corpus: Corpus,
    /// The ordinal of the last record seen, across all inputs.
    ordinal: u64,
}

impl CorpusReader<'_> {
    /// Reads one input and adds it to the corpus.
    fn read_source(&mut self, index: u32, path: &str) -> Result<()> {
        let format = resolve_format(path, self.options.format)?;
        let mut source = Source {
            path: path.to_owned(),
            format,
            csv_headers: None,
            parquet: None,
        };
        match format {
            Format::Jsonl | Format::Text => self.read_lines(index, path, format)?,
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

    /// Keeps a record, or handles its error as [`InputOptions::on_error`] says.
    fn accept(&mut self, outcome: Result<Record>) -> Result<()> {
        match outcome {
            Ok(record) => self.corpus.records.push(record),
            Err(error @ Error::Input { .. }) if self.options.on_error == OnError::Skip => {
                self.corpus.skipped.note(&error);
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }

    /// Reads a JSONL or text input, parsing its lines in parallel batches.
    fn read_lines(&mut self, source: u32, path: &str, format: Format) -> Result<()> {
        let name = display_path(path);
        let parser = LineParser {
            name,
            source,
            format,
            text_field: &self.options.text_field,
            id_field: self.options.id_field.as_deref(),
        };
        let limit = self.options.max_doc_bytes;
        let mut stream = open_stream(path)?;
        let (mut batch, mut line, mut bytes) = (LineBatch::default(), 0, Vec::new());
        while let Some(size) =
            read_line(&mut stream, &mut bytes, limit).map_err(|e| Error::io(name, e))?
        {
            line += 1;
            self.corpus.bytes_read += size.consumed;
            if format == Format::Jsonl && bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let ordinal = self.next_ordinal();
            let bytes = std::mem::take(&mut bytes);
            if size.content > limit as u64 {
                self.parse_batch(&parser, batch.take())?;
                let error = Error::input(name, line, too_long(size.content, limit));
                self.accept(Err(error))?;
            } else if batch.push(PendingLine {
                line,
                ordinal,
                bytes,
            }) {
                self.parse_batch(&parser, batch.take())?;
            }
        }
        self.parse_batch(&parser, batch.take())
    }

    /// Parses a batch of lines in parallel and accepts the results in order.
    fn parse_batch(&mut self, parser: &LineParser<'_>, batch: Vec<PendingLine>) -> Result<()> {
        let parsed: Vec<Result<Record>> = batch
            .into_par_iter()
            .map(|pending| parser.parse(pending))
            .collect();
        parsed
            .into_iter()
            .try_for_each(|outcome| self.accept(outcome))
    }

    /// Reads a CSV or TSV input and returns its header row.
    fn read_delimited(
        &mut self,
        source: u32,
        path: &str,
        format: Format,
    ) -> Result<csv::ByteRecord> {
        let (name, options) = (display_path(path), self.options);
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(if format == Format::Tsv { b'\t' } else { b',' })
            .quoting(format == Format::Csv)
            .flexible(false)
            .from_reader(open_stream(path)?);
        let headers = reader
            .byte_headers()
            .map_err(|e| csv_error(name, e))?
            .clone();
        let text = header_column(name, &headers, &options.text_field)?;
        let id = options.id_field.as_deref();
        let id = id
            .map(|field| header_column(name, &headers, field))
            .transpose()?;
        let columns = Columns::new(name, source, options, text, id);
        let mut row = csv::ByteRecord::new();
        while let Some(outcome) = next_row(&mut reader, &mut row, name)? {
            let ordinal = self.next_ordinal();
            self.accept(outcome.and_then(|()| columns.row_record(&row, ordinal)))?;
        }
        self.corpus.bytes_read += reader.position().byte();
        Ok(headers)
    }

    /// Reads a Parquet input.
    fn read_parquet(&mut self, source: u32, path: &str) -> Result<ParquetData> {
        let (name, options) = (display_path(path), self.options);
        let file = open_seekable(path)?;
        self.corpus.bytes_read += file.metadata().map_err(|e| Error::io(name, e))?.len();
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(name, e))?;
        let schema = builder.schema().clone();
        let text = schema_column(name, &schema, &options.text_field, TEXT_TYPES)?;
        let id = options.id_field.as_deref();
        let id = id
            .map(|field| schema_column(name, &schema, field, ID_TYPES))
            .transpose()?;
        let columns = Columns::new(name, source, options, text, id);
        let (mut batches, mut rows_before) = (Vec::new(), 0);
        for batch in builder.build().map_err(|e| parquet_error(name, e))? {
            let batch = batch.map_err(|e| parquet_error(name, e))?;
            let index = u32::try_from(batches.len())
                .map_err(|_| parquet_error(name, "too many record batches"))?;
            self.read_batch(&columns, (&batch, index), rows_before)?;
            rows_before += batch.num_rows() as u64;
            batches.push(batch);
        }
        Ok(ParquetData { schema, batches })
    }

    /// Makes records of the rows of one record batch, which follows `rows_before` rows.
    fn read_batch(
        &mut self,
        columns: &Columns<'_>,
        batch: (&RecordBatch, u32),
        rows_before: u64,
    ) -> Result<()> {
        for row in 0..batch.0.num_rows() {
            let ordinal = self.next_ordinal();
            let line = rows_before + row as u64 + 1;
            self.accept(columns.batch_record(batch, row, line, ordinal))?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use serde_json::json;

    use super::*;

    /// Writes `bytes` to `name` in `dir` and returns the path.
    pub(crate) fn write_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write test file");
        path.to_string_lossy().into_owned()
    }

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

    fn read_one(path: &str, options: &InputOptions) -> Result<Corpus> {
        read_inputs(&[path.to_owned()], options)
    }

    fn skip() -> InputOptions {
        InputOptions {
            on_error: OnError::Skip,
            ..InputOptions::default()
        }
    }

    fn texts(corpus: &Corpus) -> Vec<&str> {
        corpus.records.iter().map(|r| r.text.as_str()).collect()
    }

    fn ids(corpus: &Corpus) -> Vec<Value> {
        corpus.records.iter().map(|r| r.id.clone()).collect()
    }

    fn error_of(path: &str, options: &InputOptions) -> String {
        match read_one(path, options) {
            Ok(corpus) => panic!("expected an error, read {} records", corpus.records.len()),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn jsonl_keeps_raw_lines_and_ignores_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\", \"x\": 1}\r\n\n  \n{\"text\":\"b\"}\n{\"text\":\"c\"}";
        let path = write_file(&dir, "in.jsonl", data);
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b", "c"]);
        assert_eq!(ids(&corpus), [json!(1), json!(2), json!(3)]);
        let lines: Vec<u64> = corpus.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 4, 5]);
        assert_eq!(
            corpus.records[0].raw,
            Raw::Line(b"{\"text\": \"a\", \"x\": 1}".to_vec())
        );
        assert_eq!(corpus.bytes_read, data.len() as u64);
        assert_eq!(corpus.sources[0].format, Format::Jsonl);
    }

    #[test]
    fn jsonl_nested_dotted_text_field() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"meta\": {\"body\": \"deep\"}}\n{\"meta.body\": \"literal\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            text_field: "meta.body".to_owned(),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["deep", "literal"]);
    }

    #[test]
    fn jsonl_id_field_numeric_and_string() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"id\": 7, \"text\": \"a\"}\n{\"id\": \"doc-2\", \"text\": \"b\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(ids(&corpus), [json!(7), json!("doc-2")]);
    }

    #[test]
    fn jsonl_id_field_missing_or_wrong_type_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let data =
            b"{\"id\": 1, \"text\": \"a\"}\n{\"text\": \"b\"}\n{\"id\": [1], \"text\": \"c\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            on_error: OnError::Skip,
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(corpus.skipped.count, 2);
        assert!(corpus.skipped.first[0].ends_with(":2: field \"id\" is missing"));
        assert!(corpus.skipped.first[1]
            .ends_with(":3: field \"id\" must be a string or a number, found array [1]"));
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn reads_gzip_and_zstd_by_extension_and_by_magic() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n";
        let zstd = zstd::encode_all(&data[..], 3).unwrap();
        let mut two_members = gzip(b"{\"text\": \"a\"}\n");
        two_members.extend(gzip(b"{\"text\": \"b\"}\n"));
        let paths = [
            write_file(&dir, "a.jsonl.gz", &gzip(data)),
            write_file(&dir, "b.jsonl.zst", &zstd),
            write_file(&dir, "c.jsonl", &gzip(data)),
            write_file(&dir, "d.jsonl.zstd", &zstd),
            write_file(&dir, "e.jsonl.gz", &two_members),
        ];
        for path in &paths {
            let corpus = read_one(path, &InputOptions::default()).unwrap();
            assert_eq!(texts(&corpus), ["a", "b"], "{path}");
            assert_eq!(corpus.bytes_read, data.len() as u64, "{path}");
        }
    }

    #[test]
    fn compression_extension_must_match_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl.gz", b"{\"text\": \"a\"}\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.contains("in.jsonl.gz: the name says gzip"),
            "{message}"
        );
    }

    #[test]
    fn broken_json_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"\n";
        let path = write_file(&dir, "broken.jsonl", data);
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message
                .contains("broken.jsonl:3: invalid JSON at column 12: EOF while parsing an object"),
            "{message}"
        );
    }

    #[test]
    fn missing_text_field_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", b"{\"text\": \"a\"}\n{\"body\": \"b\"}\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:2: field \"text\" is missing"),
            "{message}"
        );
    }

    #[test]
    fn text_field_of_another_type_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", b"{\"text\": 42}\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:1: field \"text\" must be a string, found number 42"),
            "{message}"
        );
        let path = write_file(&dir, "array.jsonl", b"[1, 2]\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(message.ends_with("array.jsonl:1: expected a JSON object, found array [1,2]"));
    }

    #[test]
    fn invalid_utf8_names_line_and_byte_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(
            &dir,
            "in.jsonl",
            b"{\"text\": \"a\"}\n{\"text\": \"\xff\"}\n",
        );
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:2: invalid UTF-8 at byte offset 10"),
            "{message}"
        );
        let path = write_file(&dir, "in.txt", b"fine\nbad \xc3\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.txt:2: invalid UTF-8 at byte offset 4"),
            "{message}"
        );
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
    fn long_line_is_refused_and_the_next_line_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = "x".repeat(10_240).into_bytes();
        data.extend_from_slice(b"\nshort\n");
        let path = write_file(&dir, "in.txt", &data);
        let options = InputOptions {
            max_doc_bytes: 100,
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["short"]);
        assert_eq!(corpus.records[0].id, json!(2));
        assert_eq!(
            corpus.skipped.first,
            [format!(
                "{path}:1: record of 10240 bytes exceeds --max-doc-bytes 100"
            )]
        );
        let options = InputOptions {
            max_doc_bytes: 100,
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(message.ends_with(":1: record of 10240 bytes exceeds --max-doc-bytes 100"));
    }

    #[test]
    fn read_line_stores_at_most_limit_plus_one_bytes() {
        let mut data = vec![b'x'; 10_000];
        data.extend_from_slice(b"\r\nab\r\n\r\nlast\r");
        let mut reader = BufReader::with_capacity(64, &data[..]);
        let mut line = Vec::new();
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!(
            (size.content, size.consumed, line.len()),
            (10_000, 10_002, 101)
        );
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (2, &b"ab"[..]));
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (0, &b""[..]));
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (5, &b"last\r"[..]));
        assert!(read_line(&mut reader, &mut line, 100).unwrap().is_none());
        let mut exact = BufReader::new(&b"abcd\r\n"[..]);
        let size = read_line(&mut exact, &mut line, 4).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (4, &b"abcd"[..]));
    }

    #[test]
    fn text_lines_are_documents_even_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.txt", "\u{feff}first\n\nthird\r\n".as_bytes());
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["first", "", "third"]);
        assert_eq!(ids(&corpus), [json!(1), json!(2), json!(3)]);
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
        assert!(message.starts_with("<stdin>: ") && message.contains("--format"));
    }

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

    #[test]
    fn csv_reads_quoted_fields_and_id_column() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"\xef\xbb\xbfid,text,extra\nx1,\"two\nlines, quoted\",1\nx2,plain,2\n";
        let path = write_file(&dir, "in.csv", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["two\nlines, quoted", "plain"]);
        assert_eq!(ids(&corpus), [json!("x1"), json!("x2")]);
        let lines: Vec<u64> = corpus.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 4]);
        let headers = corpus.sources[0].csv_headers.as_ref().unwrap();
        assert_eq!(headers, &csv::ByteRecord::from(vec!["id", "text", "extra"]));
        assert_eq!(corpus.bytes_read, data.len() as u64);
    }

    #[test]
    fn tsv_treats_quotes_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.tsv", b"text\tn\n\"quoted\" word\t1\n");
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["\"quoted\" word"]);
    }

    #[test]
    fn csv_row_with_wrong_field_count_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "rows.csv", b"id,text\n1,a\n2,b,extra\n3,c\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("rows.csv:3: expected 2 fields, found 3"),
            "{message}"
        );
        let corpus = read_one(&path, &skip()).unwrap();
        assert_eq!(texts(&corpus), ["a", "c"]);
        assert_eq!(ids(&corpus), [json!(1), json!(3)]);
        assert_eq!(corpus.skipped.count, 1);
    }

    #[test]
    fn csv_missing_column_lists_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "cols.csv", b"id,body\n1,a\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message
                .ends_with("cols.csv: column \"text\" not found; the header has \"id\", \"body\""),
            "{message}"
        );
        let path = write_file(&dir, "empty.csv", b"");
        let message = error_of(&path, &InputOptions::default());
        assert!(message.ends_with("the header has no columns"), "{message}");
    }

    #[test]
    fn csv_invalid_utf8_names_the_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "bad.csv", b"text\nok\nno\xff\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("bad.csv:3: column \"text\" is not valid UTF-8 (byte offset 2)"),
            "{message}"
        );
    }

    #[test]
    fn parquet_reads_all_batches_with_row_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let count = 2_500;
        let ids: Vec<i64> = (100..100 + count).collect();
        let texts: Vec<String> = (0..count).map(|n| format!("doc {n}")).collect();
        let mut text_refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
        text_refs[1_999] = None;
        let path = write_parquet_file(&dir, "in.parquet", ids, text_refs);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(corpus.records.len(), 2_499);
        assert_eq!(corpus.records[0].id, json!(100));
        assert_eq!(corpus.records[2_000].text, "doc 2001");
        assert_eq!(corpus.records[2_000].line, 2_002);
        assert_eq!(
            corpus.records[2_000].raw,
            Raw::Parquet { batch: 1, row: 977 }
        );
        assert!(corpus.skipped.first[0].ends_with("in.parquet:2000: column \"text\" is null"));
        let data = corpus.sources[0].parquet.as_ref().unwrap();
        assert_eq!(
            data.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            2_500
        );
    }

    #[test]
    fn parquet_column_must_exist_and_hold_strings() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_parquet_file(&dir, "in.parquet", vec![1], vec![Some("a")]);
        let options = InputOptions {
            text_field: "body".to_owned(),
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(
            message.ends_with("column \"body\" not found; the schema has \"id\", \"text\""),
            "{message}"
        );
        let options = InputOptions {
            text_field: "id".to_owned(),
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(message.contains("column \"id\" has type Int64; expected a string type"));
    }

    #[test]
    fn parquet_compressed_input_is_spooled() {
        let dir = tempfile::tempdir().unwrap();
        let plain = write_parquet_file(&dir, "in.parquet", vec![1, 2], vec![Some("a"), Some("b")]);
        let bytes = std::fs::read(&plain).unwrap();
        let path = write_file(&dir, "in.parquet.gz", &gzip(&bytes));
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b"]);
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let message = error_of("/nonexistent/in.jsonl", &InputOptions::default());
        assert!(message.starts_with("/nonexistent/in.jsonl: "), "{message}");
    }
}
