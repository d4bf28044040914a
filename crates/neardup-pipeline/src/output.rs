//! Writing results: the kept records in the format they were read in, and JSON lines reports.
//!
//! # Overview
//!
//! Every output goes through an [`AtomicOutput`]. What happens depends on what stands at the
//! path ([`paths::resolve`]):
//!
//! - a regular file, or nothing yet: the data is written to a temporary file next to the
//!   destination and renamed over it only when everything has been written, so a failed or
//!   interrupted run never leaves a truncated file behind. A symbolic link is followed and its
//!   target replaced; the link stays a link.
//! - a device (`/dev/null`), a FIFO, a descriptor (`/dev/fd/N`, a process substitution) or
//!   standard output (`-`, `/dev/stdout`): written in place as the data comes. Such a path is
//!   never replaced by a regular file.
//!
//! A run with several outputs commits them together with [`commit_all`]: all are written,
//! flushed and synced first, and only then renamed into place, so a failure in any of them
//! leaves every previous file untouched. The destination's extension chooses compression:
//! `.gz` (gzip) or `.zst` / `.zstd` (zstd).
//!
//! [`write_kept`] copies kept records out from their [`Raw`] form, so JSON and text lines come out
//! byte for byte as they went in, CSV rows keep all their columns and Parquet rows keep their
//! whole Arrow row.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

#[cfg(feature = "parquet")]
use arrow::array::BooleanArray;
#[cfg(feature = "parquet")]
use arrow::compute::filter_record_batch;
#[cfg(feature = "parquet")]
use arrow::record_batch::RecordBatch;
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
#[cfg(feature = "parquet")]
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;
use serde::Serialize;

use crate::compression::Compression;
use crate::error::{Error, Result};
use crate::input::{line_check, Corpus, Format, Raw, Record, Reread, Source};
use crate::paths::{self, Destination};
use crate::stale;

/// The zstd level of `.zst` outputs.
const ZSTD_LEVEL: i32 = 3;

/// One output: a regular file written to `<name>.tmp-neardup-<pid>-XXXXXX` beside it (locked
/// while the run lives, see [`crate::stale`]) and renamed into place by
/// [`commit`](AtomicOutput::commit) (dropped without a commit, the temporary file is removed),
/// or standard output, a device, a FIFO or a descriptor, written in place.
pub struct AtomicOutput {
    /// The destination as given.
    path: String,
    /// Buffered and, as the destination's extension says, compressed.
    encoder: Encoder,
    /// The temporary file and the file it replaces; `None` when written in place. Declared
    /// after `encoder` so that the file is closed before it is removed.
    temp: Option<Temporary>,
}

impl AtomicOutput {
    /// Prepares the output `path`: creates the temporary file beside a regular (or new) file,
    /// opens a device, FIFO or descriptor for writing, or takes standard output for `-`.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] if `path` is a directory or its directory does not exist or is not
    /// writable: creating the temporary file right away is the check.
    pub fn create(path: &str) -> Result<AtomicOutput> {
        let (sink, temp) = match paths::resolve(path)? {
            Destination::Stdout => (Sink::Stdout(io::stdout()), None),
            Destination::InPlace(target) => {
                let file = open_in_place(path, &target).map_err(|e| Error::output(path, e))?;
                (Sink::File(file), None)
            }
            Destination::Replace(target) => {
                let (file, temp) = Temporary::create(path, target)?;
                (Sink::File(file), Some(temp))
            }
        };
        let encoder =
            Encoder::new(sink, path).map_err(|e| Error::output(paths::display_output(path), e))?;
        Ok(AtomicOutput {
            path: path.to_owned(),
            encoder,
            temp,
        })
    }

    /// The destination as given (`-` for standard output).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Where to write the content: buffered, and compressed if the destination's extension
    /// says so.
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.encoder
    }

    #[cfg(feature = "parquet")]
    /// [`writer`](AtomicOutput::writer) for sinks that must be [`Send`], such as Parquet's.
    fn send_writer(&mut self) -> &mut (dyn Write + Send) {
        &mut self.encoder
    }

    /// Flushes everything, finishes the compression, syncs the file and renames it into place.
    /// Several outputs of one run are committed with [`commit_all`] instead.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] if writing, syncing or renaming fails; the temporary file is removed.
    pub fn commit(self) -> Result<()> {
        commit_all(vec![self])
    }

    /// Everything written, flushed and synced; what remains is the rename.
    fn finish(self) -> Result<Option<Temporary>> {
        let name = self.display_path().to_owned();
        let sink = self.encoder.finish().map_err(|e| Error::output(&name, e))?;
        match sink {
            Sink::File(file) if self.temp.is_some() => {
                file.sync_all().map_err(|e| Error::output(&name, e))?;
            }
            Sink::File(mut file) => file.flush().map_err(|e| Error::output(&name, e))?,
            Sink::Stdout(mut stdout) => stdout.flush().map_err(|e| Error::output(&name, e))?,
        }
        Ok(self.temp)
    }

    /// The destination's name in messages.
    fn display_path(&self) -> &str {
        paths::display_output(&self.path)
    }

    /// The [`Error::Output`] for a failed write.
    pub(crate) fn error(&self, error: impl std::fmt::Display) -> Error {
        Error::output(self.display_path(), error)
    }
}

impl std::fmt::Debug for AtomicOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicOutput")
            .field("path", &self.path)
            .field("temp", &self.temp)
            .finish_non_exhaustive()
    }
}

/// Commits several outputs together: every one is finished (flushed, compressed stream ended,
/// synced) before any is renamed into place. If finishing any of them fails, none is renamed,
/// every temporary file is removed and the files at the destinations are as they were.
///
/// # Errors
///
/// [`Error::Output`] naming the output that could not be finished or renamed.
pub fn commit_all(outputs: Vec<AtomicOutput>) -> Result<()> {
    let mut finished = Vec::with_capacity(outputs.len());
    for out in outputs {
        finished.push(out.finish()?);
    }
    for temp in finished.into_iter().flatten() {
        temp.persist()?;
    }
    Ok(())
}

/// A temporary file beside the file it will replace, registered for removal on a signal and
/// removed when dropped unless it was renamed into place. It is locked while it lives, so that
/// a later run can tell it from one a killed run left ([`crate::stale`]).
#[derive(Debug)]
struct Temporary {
    /// The output as given, for messages.
    name: String,
    /// The temporary file.
    path: PathBuf,
    /// The regular file it replaces (the final target of a symbolic link).
    target: PathBuf,
    /// A handle on the file that holds its lock until it is renamed or removed (the writer's
    /// handle is closed before the rename); dropped after the file is removed.
    _lock: File,
    /// False once renamed into place.
    armed: bool,
}

impl Temporary {
    /// Creates `<target>.tmp-neardup-<pid>-XXXXXX` next to `target`, with the permissions of
    /// the file it replaces (or those of a new file), after removing the stale temporary files
    /// of killed runs there.
    fn create(name: &str, target: PathBuf) -> Result<(File, Temporary)> {
        let file_name = target
            .file_name()
            .ok_or_else(|| Error::output(name, "not a file name"))?;
        let directory = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let permissions = match std::fs::metadata(&target) {
            Ok(existing) => Some(existing.permissions()),
            Err(_) => new_file_permissions(),
        };
        stale::clean_once(directory);
        let (file, path) = stale::create_file(directory, file_name, permissions).map_err(|e| {
            let message = format!("cannot create a file in {}: {e}", directory.display());
            Error::output(name, message)
        })?;
        let lock = file.try_clone().map_err(|e| {
            let _ = std::fs::remove_file(&path);
            Error::output(name, e)
        })?;
        paths::register_temporary(&path);
        let temporary = Temporary {
            name: name.to_owned(),
            path,
            target,
            _lock: lock,
            armed: true,
        };
        Ok((file, temporary))
    }

    /// Renames the temporary file over its target.
    fn persist(mut self) -> Result<()> {
        std::fs::rename(&self.path, &self.target).map_err(|e| Error::output(&self.name, e))?;
        self.armed = false;
        paths::forget_temporary(&self.path);
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if self.armed {
            // Best effort: the file may already be gone (removed by a signal handler).
            let _ = std::fs::remove_file(&self.path);
            paths::forget_temporary(&self.path);
        }
    }
}

/// The permissions of a new output file: readable by all, less the umask.
fn new_file_permissions() -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(std::fs::Permissions::from_mode(0o666))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Where the bytes finally go.
enum Sink {
    File(File),
    Stdout(io::Stdout),
}

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = match self {
            Sink::File(file) => file.write(bytes),
            Sink::Stdout(stdout) => stdout.write(bytes),
        };
        written.inspect_err(note_closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        let flushed = match self {
            Sink::File(file) => file.flush(),
            Sink::Stdout(stdout) => stdout.flush(),
        };
        flushed.inspect_err(note_closed)
    }
}

/// Whether a write to standard output, a FIFO or a pipe failed because its reader closed it.
static READER_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes a write that failed because the reader went away (`EPIPE`).
fn note_closed(error: &io::Error) {
    if error.kind() == io::ErrorKind::BrokenPipe {
        READER_GONE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether an output's reader went away while it was written (`-o - | head`): the run stops
/// with an error, which a command-line front end may leave unsaid, as ripgrep does.
pub fn reader_gone() -> bool {
    READER_GONE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Who is told that an output waits for a reader ([`tell_waiting_with`]).
static WAITING: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// Has `teller` told when an output is a FIFO that no process reads yet: opening it waits
/// until one does (the CLI prints a line unless `--quiet`). Only the first call counts.
pub fn tell_waiting_with(teller: fn(&str)) {
    let _ = WAITING.set(teller);
}

/// Opens a device, FIFO or descriptor for writing. A FIFO is first opened without waiting:
/// with no reader, the wait is told ([`tell_waiting_with`]) before it begins; with one, that
/// descriptor is kept, made blocking again (closing it could end the reader's input).
fn open_in_place(path: &str, target: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let fifo = std::fs::metadata(target).is_ok_and(|m| m.file_type().is_fifo());
        if fifo {
            let tried = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(target);
            match tried {
                Ok(file) => return set_blocking(file),
                Err(error) if error.raw_os_error() == Some(libc::ENXIO) => {
                    if let Some(tell) = WAITING.get() {
                        tell(&format!(
                            "{path} is a FIFO: waiting for a reader to open it"
                        ));
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }
    let _ = path;
    std::fs::OpenOptions::new().write(true).open(target)
}

/// `file` with `O_NONBLOCK` cleared, so that writes wait for the reader as they would have.
#[cfg(unix)]
fn set_blocking(file: File) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the life of `file`; F_GETFL and F_SETFL take no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// A buffered [`Sink`], compressed or not.
enum Encoder {
    Plain(BufWriter<Sink>),
    Gzip(flate2::write::GzEncoder<BufWriter<Sink>>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<Sink>>),
}

impl Encoder {
    /// Buffers `sink`, compressing as the extension of `path` says.
    fn new(sink: Sink, path: &str) -> io::Result<Encoder> {
        let buffered = BufWriter::with_capacity(1 << 16, sink);
        Ok(match Compression::from_extension(path).0 {
            Compression::Gzip => {
                let level = flate2::Compression::default();
                Encoder::Gzip(flate2::write::GzEncoder::new(buffered, level))
            }
            Compression::Zstd => {
                Encoder::Zstd(zstd::stream::write::Encoder::new(buffered, ZSTD_LEVEL)?)
            }
            Compression::None => Encoder::Plain(buffered),
        })
    }

    /// Ends the compressed stream, flushes the buffer and returns the sink.
    fn finish(self) -> io::Result<Sink> {
        let buffered = match self {
            Encoder::Plain(buffered) => buffered,
            Encoder::Gzip(gzip) => gzip.finish()?,
            Encoder::Zstd(zstd) => zstd.finish()?,
        };
        buffered
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
    }
}

impl Write for Encoder {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(writer) => writer.write(bytes),
            Encoder::Gzip(writer) => writer.write(bytes),
            Encoder::Zstd(writer) => writer.write(bytes),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Plain(writer) => writer.write_all(bytes),
            Encoder::Gzip(writer) => writer.write_all(bytes),
            Encoder::Zstd(writer) => writer.write_all(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(writer) => writer.flush(),
            Encoder::Gzip(writer) => writer.flush(),
            Encoder::Zstd(writer) => writer.flush(),
        }
    }
}

/// Writes the records with `keep[i] == true`, in input order, in the format they were read in:
/// JSONL and text lines byte for byte, each ended by `\n`; CSV and TSV as the header row and the
/// kept rows; Parquet as the kept rows of every input, zstd-compressed.
///
/// # Errors
///
/// [`Error::Format`] if the inputs have different formats, CSV headers or Parquet schemas;
/// [`Error::Output`] if writing fails or `keep` does not have one flag per record.
pub fn write_kept(corpus: &Corpus, keep: &[bool], out: &mut AtomicOutput) -> Result<()> {
    if keep.len() != corpus.records.len() {
        let message = format!(
            "{} keep flags given for {} records",
            keep.len(),
            corpus.records.len()
        );
        return Err(out.error(message));
    }
    let Some(first) = corpus.sources.first() else {
        return Ok(());
    };
    check_same_format(&corpus.sources)?;
    let kept = corpus
        .records
        .iter()
        .zip(keep)
        .filter_map(|(record, &keep)| keep.then_some(record));
    match first.format {
        Format::Jsonl | Format::Text => write_lines(&corpus.sources, kept, out),
        Format::Csv | Format::Tsv => write_delimited(first, kept, out),
        Format::Parquet => write_parquet(corpus, keep, out),
    }
}

/// Writes kept records given one at a time, as [`write_kept`] writes them: `each` is called
/// with a function that writes one record (the caller streams its input again and calls it
/// for the kept records only, in input order). Parquet is not written this way (its rows are
/// Arrow batches held by their source).
///
/// # Errors
/// As [`write_kept`]; a Parquet source; whatever `each` returns.
pub fn write_kept_streamed(
    sources: &[Source],
    out: &mut AtomicOutput,
    each: impl FnOnce(&mut dyn FnMut(&Record) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let Some(first) = sources.first() else {
        return Ok(());
    };
    check_same_format(sources)?;
    let path = out.path().to_owned();
    let failed = |e: &dyn std::fmt::Display| Error::Output {
        path: path.clone(),
        message: e.to_string(),
    };
    match first.format {
        Format::Jsonl | Format::Text => {
            let writer = out.writer();
            each(&mut |record| match &record.raw {
                Raw::Line(bytes) => (writer.write_all(bytes))
                    .and_then(|()| writer.write_all(b"\n"))
                    .map_err(|e| failed(&e)),
                _ => Ok(()),
            })
        }
        Format::Csv | Format::Tsv => {
            let mut writer = csv_writer(first, out.writer());
            if let Some(headers) = first.csv_headers.as_ref() {
                writer.write_byte_record(headers).map_err(|e| failed(&e))?;
            }
            each(&mut |record| match &record.raw {
                Raw::Csv(row) => writer.write_byte_record(row).map_err(|e| failed(&e)),
                _ => Ok(()),
            })?;
            writer.flush().map_err(|e| failed(&e))
        }
        Format::Parquet => Err(Error::format(
            &first.path,
            "a Parquet input is held in memory; it cannot be written from a second read",
        )),
    }
}

/// Checks that one output can hold all the sources: same format, same CSV header, same Parquet
/// columns.
fn check_same_format(sources: &[Source]) -> Result<()> {
    let Some((first, others)) = sources.split_first() else {
        return Ok(());
    };
    for other in others {
        let difference = if other.format != first.format {
            Some(format!("it is {}", other.format))
        } else if other.csv_headers != first.csv_headers {
            Some("its header row differs".to_owned())
        } else if !same_columns(first, other) {
            Some("its Parquet columns differ".to_owned())
        } else {
            None
        };
        if let Some(difference) = difference {
            let message = format!(
                "cannot write one output from inputs of different formats: {difference} \
                 and {} is {}",
                first.path, first.format
            );
            return Err(Error::format(&other.path, message));
        }
    }
    Ok(())
}

/// Whether two sources have the same Parquet columns (schema metadata aside).
#[cfg(feature = "parquet")]
fn same_columns(first: &Source, other: &Source) -> bool {
    match (&first.parquet, &other.parquet) {
        (Some(first), Some(other)) => first.schema.fields() == other.schema.fields(),
        (first, other) => first.is_none() && other.is_none(),
    }
}

/// Without the `parquet` feature no source has Parquet columns.
#[cfg(not(feature = "parquet"))]
fn same_columns(_first: &Source, _other: &Source) -> bool {
    true
}

/// Without the `parquet` feature no Parquet input is read, so none is written.
#[cfg(not(feature = "parquet"))]
fn write_parquet(_corpus: &Corpus, _keep: &[bool], out: &mut AtomicOutput) -> Result<()> {
    Err(Error::format(
        out.path(),
        "Parquet output needs the `parquet` feature of neardup-pipeline",
    ))
}

/// Writes each kept line followed by `\n`: its bytes ([`Raw::Line`]), or the bytes read
/// again from its file ([`Raw::At`]; see [`LinesAgain`]).
fn write_lines<'r>(
    sources: &[Source],
    kept: impl Iterator<Item = &'r Record>,
    out: &mut AtomicOutput,
) -> Result<()> {
    let mut again = LinesAgain::new(sources);
    let writer = out.writer();
    for record in kept {
        // Records of line-based inputs are always `Raw::Line` or `Raw::At`.
        let bytes = match &record.raw {
            Raw::Line(bytes) => bytes.as_slice(),
            &Raw::At { offset, len, check } => again.line(record, offset, len, check)?,
            _ => continue,
        };
        if let Err(e) = writer
            .write_all(bytes)
            .and_then(|()| writer.write_all(b"\n"))
        {
            return Err(out.error(e));
        }
    }
    Ok(())
}

/// The lines left in their files ([`Raw::At`]), read again in order: one open file at a time,
/// read forward (a kept line after the last one read skips the lines between), each file's
/// size and time checked against what they were when it was first read, and each line's
/// bytes against its check.
pub(crate) struct LinesAgain<'s> {
    sources: &'s [Source],
    /// The source open now, its reader, and the offset the reader is at.
    open: Option<(u32, std::io::BufReader<std::fs::File>, u64)>,
    line: Vec<u8>,
}

impl<'s> LinesAgain<'s> {
    pub(crate) fn new(sources: &'s [Source]) -> LinesAgain<'s> {
        LinesAgain {
            sources,
            open: None,
            line: Vec::new(),
        }
    }

    /// The bytes of `record`'s line, `len` bytes at `offset` of its file.
    pub(crate) fn line(
        &mut self,
        record: &Record,
        offset: u64,
        len: u64,
        check: u32,
    ) -> Result<&[u8]> {
        use std::io::{Read, Seek, SeekFrom};
        let source = &self.sources[record.source as usize];
        let changed = || {
            Error::format(
                &source.path,
                format!(
                    "the input changed between its reading and the writing of the kept \
                     records (line {}); run again on a file that does not change while it is read",
                    record.line
                ),
            )
        };
        let io = |e: std::io::Error| Error::io(&source.path, e);
        let Some(reread) = source.reread.as_ref() else {
            return Err(changed());
        };
        if self
            .open
            .as_ref()
            .is_none_or(|open| open.0 != record.source)
        {
            if Reread::of(&reread.opened).as_ref() != Some(reread) {
                return Err(changed());
            }
            let file = std::fs::File::open(&reread.opened).map_err(io)?;
            self.open = Some((
                record.source,
                std::io::BufReader::with_capacity(1 << 16, file),
                0,
            ));
        }
        let Some((_, reader, at)) = self.open.as_mut() else {
            unreachable!("opened above")
        };
        if offset + len > reread.len {
            return Err(changed());
        }
        match offset.checked_sub(*at) {
            Some(ahead) => reader.seek_relative(ahead as i64).map_err(io)?,
            None => {
                reader.seek(SeekFrom::Start(offset)).map_err(io)?;
            }
        }
        self.line.resize(len as usize, 0);
        reader.read_exact(&mut self.line).map_err(io)?;
        *at = offset + len;
        if line_check(&self.line) != check {
            return Err(changed());
        }
        Ok(&self.line)
    }
}

/// A CSV or TSV writer in the format of `first` (TSV fields are never quoted).
pub(crate) fn csv_writer<W: Write>(first: &Source, sink: W) -> csv::Writer<W> {
    let tsv = first.format == Format::Tsv;
    csv::WriterBuilder::new()
        .delimiter(if tsv { b'\t' } else { b',' })
        .quote_style(if tsv {
            csv::QuoteStyle::Never
        } else {
            csv::QuoteStyle::Necessary
        })
        .from_writer(sink)
}

/// Writes the header row of `first` and the kept rows, with the delimiter of its format.
fn write_delimited<'r>(
    first: &Source,
    kept: impl Iterator<Item = &'r Record>,
    out: &mut AtomicOutput,
) -> Result<()> {
    let mut writer = csv_writer(first, out.writer());
    let result = write_rows(&mut writer, first.csv_headers.as_ref(), kept);
    drop(writer);
    result.map_err(|e| out.error(e))
}

/// Writes `headers` (if any) and the kept CSV rows, then flushes.
fn write_rows<'r, W: Write>(
    writer: &mut csv::Writer<W>,
    headers: Option<&csv::ByteRecord>,
    kept: impl Iterator<Item = &'r Record>,
) -> csv::Result<()> {
    if let Some(headers) = headers {
        writer.write_byte_record(headers)?;
    }
    for record in kept {
        // Records of CSV and TSV inputs are always `Raw::Csv`.
        if let Raw::Csv(row) = &record.raw {
            writer.write_byte_record(row)?;
        }
    }
    writer.flush()?;
    Ok(())
}

#[cfg(feature = "parquet")]
/// Writes the kept rows of every Parquet source into one zstd-compressed Parquet file.
fn write_parquet(corpus: &Corpus, keep: &[bool], out: &mut AtomicOutput) -> Result<()> {
    let masks = parquet_masks(corpus, keep);
    let Some(schema) = corpus
        .sources
        .iter()
        .find_map(|source| source.parquet.as_ref().map(|data| data.schema.clone()))
    else {
        return Ok(());
    };
    let properties = WriterProperties::builder()
        .set_compression(ParquetCompression::ZSTD(ZstdLevel::default()))
        .build();
    let name = out.display_path().to_owned();
    let mut writer = ArrowWriter::try_new(out.send_writer(), schema.clone(), Some(properties))
        .map_err(|e| Error::output(&name, e))?;
    let mut result = Ok(());
    for (source, source_masks) in corpus.sources.iter().zip(masks) {
        let batches = source.parquet.iter().flat_map(|data| &data.batches);
        for (batch, mask) in batches.zip(source_masks) {
            result = write_filtered(&mut writer, &schema, batch, mask);
            if result.is_err() {
                break;
            }
        }
    }
    let result = result.and_then(|()| writer.close().map(drop).map_err(|e| e.to_string()));
    result.map_err(|message| out.error(message))
}

#[cfg(feature = "parquet")]
/// For each source and each of its batches, which rows to keep.
fn parquet_masks(corpus: &Corpus, keep: &[bool]) -> Vec<Vec<Vec<bool>>> {
    let mut masks: Vec<Vec<Vec<bool>>> = corpus
        .sources
        .iter()
        .map(|source| {
            let batches = source.parquet.iter().flat_map(|data| &data.batches);
            batches.map(|batch| vec![false; batch.num_rows()]).collect()
        })
        .collect();
    for (record, _) in corpus.records.iter().zip(keep).filter(|(_, &keep)| keep) {
        if let Raw::Parquet { batch, row } = record.raw {
            let flag = masks
                .get_mut(record.source as usize)
                .and_then(|batches| batches.get_mut(batch as usize))
                .and_then(|rows| rows.get_mut(row as usize));
            // Records point into their source's batches; a stray one is simply not written.
            if let Some(flag) = flag {
                *flag = true;
            }
        }
    }
    masks
}

#[cfg(feature = "parquet")]
/// Writes the rows of `batch` that `mask` keeps, under the writer's schema.
fn write_filtered<W: Write + Send>(
    writer: &mut ArrowWriter<W>,
    schema: &arrow::datatypes::SchemaRef,
    batch: &RecordBatch,
    mask: Vec<bool>,
) -> std::result::Result<(), String> {
    let filtered = filter_record_batch(batch, &BooleanArray::from(mask))
        .and_then(|filtered| RecordBatch::try_new(schema.clone(), filtered.columns().to_vec()))
        .map_err(|e| e.to_string())?;
    writer.write(&filtered).map_err(|e| e.to_string())
}

/// Writes one JSON value per line; used for the clusters and pairs reports (rows of
/// [`crate::rows`]).
///
/// # Errors
///
/// [`Error::Output`] if writing fails.
pub fn write_json_lines<T: Serialize, I: IntoIterator<Item = T>>(
    out: &mut AtomicOutput,
    rows: I,
) -> Result<()> {
    let writer = out.writer();
    let mut result = Ok(());
    for row in rows {
        result = serde_json::to_writer(&mut *writer, &row)
            .map_err(io::Error::from)
            .and_then(|()| writer.write_all(b"\n"));
        if result.is_err() {
            break;
        }
    }
    result.map_err(|e| out.error(e))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use serde_json::json;

    use super::*;
    use crate::input::tests::write_file;
    #[cfg(feature = "parquet")]
    use crate::input::tests::write_parquet_file;
    use crate::input::{read_inputs, InputOptions};

    fn read(paths: &[&str]) -> Corpus {
        let paths: Vec<String> = paths.iter().map(|path| path.to_string()).collect();
        read_inputs(&paths, &InputOptions::default()).expect("read inputs")
    }

    /// Writes the kept records of `corpus` to `name` in `dir` and returns the path.
    fn write(dir: &tempfile::TempDir, name: &str, corpus: &Corpus, keep: &[bool]) -> String {
        let path = dir.path().join(name).to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        write_kept(corpus, keep, &mut out).unwrap();
        out.commit().unwrap();
        path
    }

    fn entries(dir: &tempfile::TempDir) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn jsonl_and_text_round_trip_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = b"{\"text\": \"a\",  \"n\": 1.50}\n{\"text\":\"\\u00e9 b\"}\n";
        let text = "first\n\n  third \u{e9}\n".as_bytes();
        for (name, data) in [("in.jsonl", &jsonl[..]), ("in.txt", text)] {
            let input = write_file(&dir, name, data);
            let corpus = read(&[&input]);
            let output = write(
                &dir,
                &format!("out-{name}"),
                &corpus,
                &[true; 3][..corpus.records.len()],
            );
            assert_eq!(std::fs::read(output).unwrap(), data, "{name}");
        }
    }

    /// Lines left in their plain files are written as the held lines are: byte for byte,
    /// BOM and CRLF included, in order over several inputs; compressed inputs keep theirs.
    #[test]
    fn lines_left_in_their_files_are_written_as_held_ones() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = b"\xef\xbb\xbf{\"text\": \"a\"}\r\n\n{\"text\": \"b\"}\n  \n{\"text\": \"c\"}";
        let first = write_file(&dir, "a.jsonl", jsonl);
        let second = write_file(&dir, "b.jsonl", b"{\"text\": \"d\"}\n{\"text\": \"e\"}\n");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"{\"text\": \"f\"}\n").unwrap();
        let third = write_file(&dir, "c.jsonl.gz", &gz.finish().unwrap());
        let paths = [first, second, third];
        let held = read(&[&paths[0], &paths[1], &paths[2]]);
        let left =
            crate::input::read_inputs_leaving_lines(&paths, &InputOptions::default()).unwrap();
        let kinds: Vec<bool> = (left.records.iter())
            .map(|r| matches!(r.raw, Raw::At { .. }))
            .collect();
        assert_eq!(kinds, [true, true, true, true, true, false]);
        for keep in [
            [true; 6],
            [false, true, true, false, true, true],
            [true, false, false, false, false, false],
        ] {
            let a = std::fs::read(write(&dir, "held.jsonl", &held, &keep)).unwrap();
            let b = std::fs::read(write(&dir, "left.jsonl", &left, &keep)).unwrap();
            assert_eq!(a, b, "{keep:?}");
        }
    }

    /// A file changed after it was read is never copied from: the write fails, naming it.
    #[test]
    fn a_file_changed_since_it_was_read_fails_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "a.txt", b"one\ntwo\n");
        let left = crate::input::read_inputs_leaving_lines(
            std::slice::from_ref(&path),
            &InputOptions::default(),
        )
        .unwrap();
        // Same size, other bytes, the time set back: only the line's check sees it.
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, b"one\ntwO\n").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let out_path = dir.path().join("out.txt").to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&out_path).unwrap();
        let error = write_kept(&left, &[false, true], &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("a.txt") && error.contains("changed") && error.contains("line 2"),
            "{error}"
        );
        // A longer file fails on its size.
        std::fs::write(&path, b"one\ntwo\nthree\n").unwrap();
        let mut out = AtomicOutput::create(&out_path).unwrap();
        let error = write_kept(&left, &[true, false], &mut out)
            .unwrap_err()
            .to_string();
        assert!(error.contains("changed"), "{error}");
    }

    #[test]
    fn only_kept_records_are_written_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_file(&dir, "a.txt", b"one\ntwo\n");
        let second = write_file(&dir, "b.txt", b"three\nfour\n");
        let corpus = read(&[&first, &second]);
        let output = write(&dir, "out.txt", &corpus, &[true, false, false, true]);
        assert_eq!(std::fs::read(output).unwrap(), b"one\nfour\n");
    }

    #[test]
    fn csv_and_tsv_round_trip_rows() {
        let dir = tempfile::tempdir().unwrap();
        let csv_data = b"id,text\n1,\"with, comma\"\n2,\"two\nlines\"\n3,plain\n";
        let tsv_data = b"id\ttext\n1\t\"quoted\" as is\n2\tplain\n";
        for (name, data) in [("in.csv", &csv_data[..]), ("in.tsv", &tsv_data[..])] {
            let input = write_file(&dir, name, data);
            let corpus = read(&[&input]);
            let keep = vec![true; corpus.records.len()];
            let output = write(&dir, &format!("out-{name}"), &corpus, &keep);
            assert_eq!(std::fs::read(&output).unwrap(), data, "{name}");
            let again = read(&[&output]);
            let raws = |corpus: &Corpus| -> Vec<Raw> {
                corpus.records.iter().map(|r| r.raw.clone()).collect()
            };
            let strip = |raws: Vec<Raw>| -> Vec<Vec<Vec<u8>>> {
                raws.into_iter()
                    .map(|raw| match raw {
                        Raw::Csv(row) => row.iter().map(<[u8]>::to_vec).collect(),
                        other => panic!("not a CSV row: {other:?}"),
                    })
                    .collect()
            };
            assert_eq!(strip(raws(&again)), strip(raws(&corpus)));
        }
    }

    #[test]
    fn csv_output_drops_rows() {
        let dir = tempfile::tempdir().unwrap();
        let input = write_file(&dir, "in.csv", b"text,n\na,1\nb,2\nc,3\n");
        let corpus = read(&[&input]);
        let output = write(&dir, "out.csv", &corpus, &[false, true, false]);
        assert_eq!(std::fs::read(output).unwrap(), b"text,n\nb,2\n");
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_round_trip_keeps_rows_of_all_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_parquet_file(&dir, "a.parquet", vec![1, 2], vec![Some("a"), Some("b")]);
        let second = write_parquet_file(&dir, "b.parquet", vec![3], vec![Some("c")]);
        let corpus = read(&[&first, &second]);
        let all = write(&dir, "all.parquet", &corpus, &[true, true, true]);
        let again = read(&[&all]);
        assert_eq!(again.records.len(), 3);
        let data = |corpus: &Corpus| corpus.sources[0].parquet.as_ref().unwrap().clone();
        assert_eq!(data(&again).schema.fields(), data(&corpus).schema.fields());
        let some = write(&dir, "some.parquet", &corpus, &[false, true, true]);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        let again = read_inputs(&[some], &options).unwrap();
        let rows: Vec<(serde_json::Value, &str)> = again
            .records
            .iter()
            .map(|r| (r.id.clone(), r.text.as_str()))
            .collect();
        assert_eq!(rows, [(json!(2), "b"), (json!(3), "c")]);
    }

    #[test]
    fn output_extension_chooses_compression() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n";
        let input = write_file(&dir, "in.jsonl", data);
        let corpus = read(&[&input]);
        let gz = write(&dir, "out.jsonl.gz", &corpus, &[true, true]);
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(File::open(&gz).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        assert_eq!(text, data);
        let zst = write(&dir, "out.jsonl.zst", &corpus, &[true, true]);
        let text = zstd::decode_all(File::open(&zst).unwrap()).unwrap();
        assert_eq!(text, data);
        assert_eq!(read(&[&gz]).records, corpus.records);
    }

    #[test]
    fn uncommitted_output_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl").to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        out.writer().write_all(b"partial\n").unwrap();
        let names = entries(&dir);
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with("out.jsonl.tmp-"), "{names:?}");
        drop(out);
        assert!(entries(&dir).is_empty());
    }

    #[test]
    fn commit_replaces_the_file_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "out.jsonl", b"old\n");
        let mut out = AtomicOutput::create(&path).unwrap();
        out.writer().write_all(b"new\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
        out.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
        assert_eq!(entries(&dir), ["out.jsonl"]);
    }

    #[test]
    fn unwritable_path_fails_at_create() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("missing/out.jsonl")
            .to_string_lossy()
            .into_owned();
        let error = AtomicOutput::create(&path).unwrap_err();
        assert!(matches!(error, Error::Output { .. }));
        assert!(error
            .to_string()
            .starts_with(&format!("{path}: cannot write output: ")));
        let directory = dir.path().to_string_lossy().into_owned();
        assert!(AtomicOutput::create(&directory).is_err());
    }

    #[test]
    fn mixed_formats_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = write_file(&dir, "a.jsonl", b"{\"text\": \"a\"}\n");
        let text = write_file(&dir, "b.txt", b"b\n");
        let corpus = read(&[&jsonl, &text]);
        let path = dir.path().join("out").to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        let error = write_kept(&corpus, &[true, true], &mut out).unwrap_err();
        assert!(matches!(error, Error::Format { .. }));
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("{text}: cannot write one output from inputs of different formats: it is text and {jsonl} is jsonl")),
            "{message}"
        );
    }

    #[test]
    fn csv_inputs_with_different_headers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_file(&dir, "a.csv", b"text,id\na,1\n");
        let second = write_file(&dir, "b.csv", b"text,n\nb,2\n");
        let corpus = read(&[&first, &second]);
        let path = dir.path().join("out.csv").to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        let message = write_kept(&corpus, &[true, true], &mut out)
            .unwrap_err()
            .to_string();
        assert!(message.contains("its header row differs"), "{message}");
    }

    #[test]
    fn keep_flags_must_match_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let input = write_file(&dir, "in.txt", b"a\nb\n");
        let corpus = read(&[&input]);
        let path = dir.path().join("out.txt").to_string_lossy().into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        let message = write_kept(&corpus, &[true], &mut out)
            .unwrap_err()
            .to_string();
        assert!(message.ends_with("cannot write output: 1 keep flags given for 2 records"));
    }

    #[test]
    fn json_lines_are_written_one_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("pairs.jsonl")
            .to_string_lossy()
            .into_owned();
        let mut out = AtomicOutput::create(&path).unwrap();
        write_json_lines(&mut out, [json!({"a": 1, "b": "x"}), json!([1, 2])]).unwrap();
        out.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1,\"b\":\"x\"}\n[1,2]\n"
        );
    }
}
