//! Compression by name and by content: gzip and zstd. Inputs are opened here (a file or
//! standard input, the compression recognised by its magic bytes and checked against the
//! extension); outputs ask [`Compression::from_extension`] how to encode.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use crate::error::{Error, Result};
use crate::paths::{display_input as display_path, STANDARD as STDIN};

/// The compression of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression a file name announces, and the name without that extension.
    pub(crate) fn from_extension(path: &str) -> (Compression, &str) {
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
pub fn open_stream(path: &str) -> Result<Box<dyn BufRead>> {
    Ok(open_stream_plain(path)?.0)
}

/// [`open_stream`], and whether the stream is the file's own bytes (not standard input, not
/// compressed): offsets in it are offsets in the file.
pub fn open_stream_plain(path: &str) -> Result<(Box<dyn BufRead>, bool)> {
    let name = display_path(path);
    let mut raw: Box<dyn Read> = if path == STDIN {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(|e| Error::io(name, e))?)
    };
    let head = read_head(&mut raw).map_err(|e| Error::io(name, e))?;
    let compression = checked_compression(path, &head)?;
    let stream = io::Cursor::new(head).chain(raw);
    let plain = !crate::paths::read_once(path) && compression == Compression::None;
    let stream = decoded(compression, stream).map_err(|e| Error::io(name, e))?;
    Ok((stream, plain))
}

/// `stream` decoded as `compression` says, buffered.
fn decoded(compression: Compression, stream: impl Read + 'static) -> io::Result<Box<dyn BufRead>> {
    Ok(match compression {
        Compression::None => Box::new(BufReader::with_capacity(1 << 16, stream)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::read::MultiGzDecoder::new(stream),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            1 << 16,
            zstd::Decoder::new(stream)?,
        )),
    })
}

/// The head of a file, decompressed, for the memory estimate ([`crate::memory_plan::plan`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Decompressed bytes read.
    pub(crate) bytes: u64,
    /// Line breaks among them.
    pub(crate) lines: u64,
    /// Bytes of the file consumed to decompress them.
    pub(crate) consumed: u64,
    /// Whether the sample is the whole file.
    pub(crate) whole: bool,
}

/// Reads decompressed bytes of the file `path` until `max` of them, or `enough` once the
/// decompressor has consumed `consumed` bytes of the file (its read-ahead then weighs little
/// in the ratio); `None` when the file cannot be read (the read itself reports why).
pub(crate) fn sample(path: &str, enough: u64, consumed_enough: u64, max: u64) -> Option<Sample> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Counts the bytes read through it.
    struct Counted<R>(R, Arc<AtomicU64>);
    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buffer)?;
            self.1.fetch_add(n as u64, Ordering::Relaxed);
            Ok(n)
        }
    }
    let mut file = File::open(path).ok()?;
    // A FIFO or a descriptor would lose to the sample the bytes the run must read.
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let head = read_head(&mut file).ok()?;
    let compression = Compression::from_magic(&head);
    let consumed = Arc::new(AtomicU64::new(head.len() as u64));
    let raw = Counted(file, consumed.clone());
    let mut stream = decoded(compression, io::Cursor::new(head).chain(raw)).ok()?;
    let (mut bytes, mut lines) = (0u64, 0u64);
    let whole = loop {
        let buffer = stream.fill_buf().ok()?;
        if buffer.is_empty() {
            break true;
        }
        let take = buffer.len().min((max - bytes) as usize);
        lines += buffer[..take].iter().filter(|&&b| b == b'\n').count() as u64;
        bytes += take as u64;
        stream.consume(take);
        let read = consumed.load(Ordering::Relaxed);
        if bytes >= max || (bytes >= enough && read >= consumed_enough) {
            break false;
        }
    };
    let consumed = consumed.load(Ordering::Relaxed);
    Some(Sample {
        bytes,
        lines,
        consumed,
        whole,
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

#[cfg(feature = "parquet")]
/// Opens `path` as a seekable file: an uncompressed file directly, anything else (standard
/// input, compressed data) decompressed into an anonymous temporary file.
pub(crate) fn open_seekable(path: &str) -> Result<File> {
    use std::io::{Seek, SeekFrom};

    let name = display_path(path);
    if !crate::paths::read_once(path) && Compression::from_extension(path).0 == Compression::None {
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

#[cfg(test)]
mod tests {
    use crate::input::tests::{error_of, gzip, read_one, texts, write_file};
    use crate::input::InputOptions;

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
    fn missing_file_is_an_io_error() {
        let message = error_of("/nonexistent/in.jsonl", &InputOptions::default());
        assert!(message.starts_with("/nonexistent/in.jsonl: "), "{message}");
    }
}
