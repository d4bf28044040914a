//! The durable store of one collection: a sequence of append-only segment files.
//!
//! A collection's documents are appended, in the order the writer accepted them, to the
//! newest segment file (`seg-<first seq>.log` in the collection's `segments/` folder); the
//! writer starts a new segment when the newest one is full or old (see
//! [`crate::collection`]), and the oldest segments are deleted whole when their documents
//! leave the retention window. Deleting a document appends a tombstone.
//!
//! # Layout
//!
//! A segment starts with a 32-byte header: the magic `NDSEG\x02\0\0`, the sequence number of
//! its first document (little-endian `u64`) and the *synced mark*: the length of the file at
//! its last `fdatasync` (`u64`) and the xxh3 of the sequence number and that length (`u64`).
//! Records follow, each `[u32 body length][u64 xxh3 of the body][body]`, little-endian.
//! Bodies are described by [`Record`]. Segments of version 1 (magic `NDSEG\x01\0\0`, a
//! 16-byte header without the mark) are still read and appended to; new segments are version 2.
//!
//! # Durability
//!
//! [`Segment::append`] writes a group of records after the durable end and syncs the file
//! (`fdatasync`) before returning: the writer acknowledges a group only after that. Then it
//! writes the new length into the synced mark, without a sync of its own.
//!
//! Why so: the mark must say how far the file is *known* to be on disk, so it can only be
//! written after the sync returns. Written with the group, before the sync, it could reach the
//! disk before the records it vouches for (a power loss may write a file's pages in any
//! order), and a torn group would then look like corruption. Written in the *next* group
//! instead, it would not cover the last group, the one a torn write and a flipped bit are
//! told apart in (for the others a valid record follows, which proves corruption already). So
//! the mark is one 16-byte `pwrite` per group into a page of the page cache: it survives a
//! crash of the process (`kill -9`) and a clean stop at once, and reaches the disk with the
//! next group's `fdatasync` (which writes every dirty page of the file), or when the writer
//! syncs it on its own: before it starts a new segment, when it closes, and when it has been
//! idle for a second ([`Segment::sync_mark`]). No group waits for an extra sync; each sync
//! writes the header's page besides the tail. After a power loss the mark may lag one group
//! behind the acknowledgements: that group is judged by the old rule below. It is never ahead
//! of what was synced.
//!
//! # Recovery
//!
//! A crash can leave a partly written group after the durable end of the newest segment: a
//! *torn tail*, a bad record (incomplete, failing its checksum, or not decodable) with no
//! valid record after it and past the synced mark. Opening cuts it off (that write was never
//! acknowledged) and the collection counts the bytes in `recovered_bytes`. A bad record
//! before the mark (the last acknowledged record with a flipped bit included), or followed by
//! a valid one, in any segment, is *corruption*, and so is a file shorter than its mark:
//! opening refuses, naming the file and the offset, rather than drop acknowledged documents
//! ([`Recovery`]). `neardup salvage` copies a corrupt segment aside and rewrites it with every
//! record that checks ([`salvage_segment`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use neardup_engine::collection_index::IndexEntry;
use xxhash_rust::xxh3::xxh3_64;

mod salvage;

pub use salvage::{salvage_segment, SalvagedSegment, Skipped};

/// Magic bytes at the start of a segment (version 2: with the synced mark).
const MAGIC: &[u8; 8] = b"NDSEG\x02\0\0";
/// Magic bytes of a version 1 segment (no synced mark), read and appended to, never created.
const MAGIC_V1: &[u8; 8] = b"NDSEG\x01\0\0";
/// Header bytes (version 2): magic, first sequence number, synced mark.
pub const HEADER: u64 = 32;
/// Header bytes of version 1: magic, first sequence number.
const HEADER_V1: u64 = 16;
/// Where the synced mark lies in a version 2 header: the synced length and its checksum.
const MARK_AT: u64 = 16;
/// Bytes before a record's body: length and checksum.
const FRAME: usize = 12;
/// The largest body accepted when reading (a text of at most 1 GiB and its sketch).
const MAX_BODY: u32 = 1 << 31;

const KIND_INSERT: u8 = 1;
const KIND_DELETE: u8 = 2;

/// A store error, with the file it concerns.
#[derive(Debug)]
pub struct StoreError {
    /// The file or folder.
    pub path: PathBuf,
    /// What happened.
    pub message: String,
    /// The disk is full (the answer is 507 rather than 500).
    pub disk_full: bool,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, what: &str, error: &io::Error) -> StoreError {
        StoreError {
            path: path.to_owned(),
            message: format!("{what}: {error}"),
            disk_full: error.raw_os_error() == Some(28),
        }
    }

    fn corrupt(path: &Path, offset: u64, message: impl std::fmt::Display) -> StoreError {
        StoreError {
            path: path.to_owned(),
            message: format!("corrupt record at byte {offset}: {message}"),
            disk_full: false,
        }
    }
}

/// A stored document, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    /// The collection's sequence number of the document.
    pub seq: u64,
    /// The retention time: milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// When it was inserted, milliseconds since the Unix epoch.
    pub inserted_ms: i64,
    /// The caller's id.
    pub id: String,
    /// What the index needs.
    pub entry: IndexEntry,
    /// The method's sketch ([`neardup_core::Sketch::encode`]).
    pub sketch: Vec<u8>,
    /// The text, when the collection keeps texts.
    pub text: Option<String>,
}

/// One record of a segment.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A stored document.
    Insert(Insert),
    /// Document `seq` was deleted.
    Delete(u64),
}

impl Record {
    /// Appends the framed record to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; FRAME]);
        match self {
            Record::Insert(doc) => {
                out.push(KIND_INSERT);
                out.extend_from_slice(&doc.seq.to_le_bytes());
                out.extend_from_slice(&doc.time_ms.to_le_bytes());
                out.extend_from_slice(&doc.inserted_ms.to_le_bytes());
                put_bytes(out, doc.id.as_bytes());
                let entry = &doc.entry;
                out.extend_from_slice(&entry.identity.to_le_bytes());
                out.push(u8::from(entry.exact_only));
                match entry.hamming {
                    Some((fingerprint, radius)) => {
                        out.push(1);
                        out.extend_from_slice(&fingerprint.to_le_bytes());
                        out.extend_from_slice(&radius.to_le_bytes());
                    }
                    None => out.push(0),
                }
                out.extend_from_slice(&(entry.keys.len() as u32).to_le_bytes());
                for key in &entry.keys {
                    out.extend_from_slice(&key.to_le_bytes());
                }
                put_bytes(out, &doc.sketch);
                match &doc.text {
                    Some(text) => {
                        out.push(1);
                        put_bytes(out, text.as_bytes());
                    }
                    None => out.push(0),
                }
            }
            Record::Delete(seq) => {
                out.push(KIND_DELETE);
                out.extend_from_slice(&seq.to_le_bytes());
            }
        }
        let body_len = (out.len() - start - FRAME) as u32;
        let hash = xxh3_64(&out[start + FRAME..]);
        out[start..start + 4].copy_from_slice(&body_len.to_le_bytes());
        out[start + 4..start + FRAME].copy_from_slice(&hash.to_le_bytes());
    }

    /// Decodes a body (checksum already checked).
    pub fn decode(body: &[u8]) -> Result<Record, String> {
        let mut r = Reader { bytes: body, at: 0 };
        match r.u8()? {
            KIND_INSERT => {
                let seq = r.u64()?;
                let time_ms = r.u64()? as i64;
                let inserted_ms = r.u64()? as i64;
                let id = String::from_utf8(r.bytes()?.to_vec())
                    .map_err(|_| "the id is not UTF-8".to_owned())?;
                let identity = u128::from_le_bytes(r.take(16)?.try_into().unwrap_or_default());
                let exact_only = r.u8()? == 1;
                let hamming = match r.u8()? {
                    0 => None,
                    _ => Some((r.u64()?, r.u32()?)),
                };
                let count = r.u32()? as usize;
                if count > body.len() / 8 {
                    return Err(format!("{count} keys in a {}-byte record", body.len()));
                }
                let keys = (0..count).map(|_| r.u64()).collect::<Result<Vec<_>, _>>()?;
                let sketch = r.bytes()?.to_vec();
                let text = match r.u8()? {
                    0 => None,
                    _ => Some(
                        String::from_utf8(r.bytes()?.to_vec())
                            .map_err(|_| "the text is not UTF-8".to_owned())?,
                    ),
                };
                if r.at != body.len() {
                    return Err(format!("{} bytes after the record", body.len() - r.at));
                }
                Ok(Record::Insert(Insert {
                    seq,
                    time_ms,
                    inserted_ms,
                    id,
                    entry: IndexEntry {
                        identity,
                        exact_only,
                        hamming,
                        keys,
                        probe_keys: Vec::new(),
                    },
                    sketch,
                    text,
                }))
            }
            KIND_DELETE => {
                let seq = r.u64()?;
                Ok(Record::Delete(seq))
            }
            other => Err(format!("unknown record kind {other}")),
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {} of the body", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// What [`Segment::open`] does at a bad record (incomplete, failing its checksum, or not
/// decodable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Every bad record is an error (segments before the newest).
    Strict,
    /// The newest segment: a torn tail (a bad record with no valid record after it, as a
    /// crash during a group's write leaves) is cut; a bad record followed by a valid one is
    /// corruption, an error.
    CutTornTail,
}

/// What [`Segment::open`] cut from the end of a segment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut {
    /// Bytes removed (0: nothing was cut).
    pub bytes: u64,
    /// Where the cut was made.
    pub offset: u64,
    /// No valid record followed the bad one (a torn write).
    pub torn: bool,
    /// What was wrong with the first removed record.
    pub message: String,
}

/// The offset of the first whole, valid record at or after `from` and before `len`, if any:
/// a frame whose body fits in the file, whose sequence number can be in a segment starting
/// at `first_seq`, and which passes its checksum and decodes. Scanned a byte at a
/// time through a window, so that a bad record followed by good ones is told from a torn
/// tail whatever the bad record's length field says.
fn next_valid_record(file: &File, first_seq: u64, from: u64, len: u64) -> io::Result<Option<u64>> {
    const WINDOW: usize = 1 << 20;
    let mut window = Vec::new();
    let mut start = from;
    let mut body = Vec::new();
    while start + (FRAME as u64) < len {
        let size = (len - start).min(WINDOW as u64 + FRAME as u64) as usize;
        window.resize(size, 0);
        file.read_exact_at(&mut window, start)?;
        let last = size - FRAME;
        for i in 0..=last.min(WINDOW - 1) {
            let offset = start + i as u64;
            let frame = &window[i..i + FRAME];
            let body_len = u32::from_le_bytes(frame[..4].try_into().unwrap_or_default());
            let remaining = len - offset - FRAME as u64;
            // The smallest record is a delete: kind and sequence number.
            if body_len < 9 || u64::from(body_len) > remaining || body_len > MAX_BODY {
                continue;
            }
            // The kind and the sequence number (both kinds start so), from the window or the
            // file: a sequence number that cannot be this segment's rules out random bytes
            // before the body is read and hashed.
            let mut head = [0u8; 9];
            match window.get(i + FRAME..i + FRAME + 9) {
                Some(bytes) => head.copy_from_slice(bytes),
                None => file.read_exact_at(&mut head, offset + FRAME as u64)?,
            }
            let seq = u64::from_le_bytes(head[1..].try_into().unwrap_or_default());
            let plausible = match head[0] {
                KIND_INSERT => seq >= first_seq && seq - first_seq < len,
                KIND_DELETE => seq < first_seq.saturating_add(len),
                _ => false,
            };
            if !plausible {
                continue;
            }
            let hash = u64::from_le_bytes(frame[4..].try_into().unwrap_or_default());
            body.resize(body_len as usize, 0);
            file.read_exact_at(&mut body, offset + FRAME as u64)?;
            if xxh3_64(&body) == hash && Record::decode(&body).is_ok() {
                return Ok(Some(offset));
            }
        }
        start += (last.min(WINDOW - 1) + 1) as u64;
    }
    Ok(None)
}

/// Reads the records of `file` (`len` bytes) from byte `from`, calling `visit(offset,
/// length, record)` for each, up to the end or the first bad record: where it stopped, and
/// what was wrong there.
fn scan_records(
    path: &Path,
    file: &File,
    from: u64,
    len: u64,
    visit: &mut impl FnMut(u64, u32, Record) -> Result<(), StoreError>,
) -> Result<(u64, Option<String>), StoreError> {
    let io = |what: &str, e: &io::Error| StoreError::io(path, what, e);
    let mut reader = io::BufReader::with_capacity(1 << 20, file);
    reader
        .seek(io::SeekFrom::Start(from))
        .map_err(|e| io("cannot read", &e))?;
    let mut at = from;
    let mut body = Vec::new();
    while at < len {
        let mut frame = [0u8; FRAME];
        if len - at < FRAME as u64 {
            return Ok((at, Some("a record frame cut short".into())));
        }
        reader
            .read_exact(&mut frame)
            .map_err(|e| io("cannot read", &e))?;
        let body_len = u32::from_le_bytes(frame[..4].try_into().unwrap_or_default());
        let hash = u64::from_le_bytes(frame[4..].try_into().unwrap_or_default());
        if body_len > MAX_BODY || u64::from(body_len) > len - at - FRAME as u64 {
            return Ok((at, Some(format!("a {body_len}-byte record cut short"))));
        }
        body.resize(body_len as usize, 0);
        reader
            .read_exact(&mut body)
            .map_err(|e| io("cannot read", &e))?;
        if xxh3_64(&body) != hash {
            return Ok((at, Some("checksum mismatch".into())));
        }
        let record = match Record::decode(&body) {
            Ok(record) => record,
            Err(message) => return Ok((at, Some(message))),
        };
        visit(at, FRAME as u32 + body_len, record)?;
        at += FRAME as u64 + u64::from(body_len);
    }
    Ok((at, None))
}

/// One segment file, shared by the writer (appends) and the readers (verification reads).
#[derive(Debug)]
pub struct Segment {
    path: PathBuf,
    file: File,
    first_seq: u64,
    /// The header's length: [`HEADER`], or [`HEADER_V1`] for a segment without a synced mark.
    header: u64,
    /// The durable end: records before it are synced and acknowledged.
    end: AtomicU64,
    /// The length the synced mark on disk was last synced with (`end` once
    /// [`Segment::sync_mark`] ran after the last append).
    mark_durable: AtomicU64,
}

/// The synced mark of a segment starting at `first_seq`: `synced` and its checksum.
fn mark_bytes(first_seq: u64, synced: u64) -> [u8; 16] {
    let mut mark = [0u8; 16];
    mark[..8].copy_from_slice(&synced.to_le_bytes());
    let mut checked = [0u8; 16];
    checked[..8].copy_from_slice(&first_seq.to_le_bytes());
    checked[8..].copy_from_slice(&synced.to_le_bytes());
    mark[8..].copy_from_slice(&xxh3_64(&checked).to_le_bytes());
    mark
}

/// The synced length of a mark read from a segment starting at `first_seq`; `None` when it
/// fails its checksum.
fn read_mark(first_seq: u64, mark: &[u8; 16]) -> Option<u64> {
    let synced = u64::from_le_bytes(mark[..8].try_into().unwrap_or_default());
    (mark_bytes(first_seq, synced) == *mark).then_some(synced)
}

/// What a segment's header says.
struct Header {
    first_seq: u64,
    /// [`HEADER`] or [`HEADER_V1`].
    len: u64,
    /// The synced length of the mark (version 1: the header's length, no claim); `Err` with
    /// the reason when the mark fails its checksum.
    synced: Result<u64, String>,
}

/// Reads and checks the header of a segment file of `len` bytes.
fn read_header(path: &Path, file: &File, len: u64) -> Result<Header, StoreError> {
    let io = |what: &str, e: &io::Error| StoreError::io(path, what, e);
    let mut head = [0u8; HEADER as usize];
    let given = (len.min(HEADER)) as usize;
    file.read_exact_at(&mut head[..given], 0)
        .map_err(|e| io("cannot read the segment header", &e))?;
    let first_seq = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    let version = &head[..8];
    if version == MAGIC_V1 && len >= HEADER_V1 {
        return Ok(Header {
            first_seq,
            len: HEADER_V1,
            synced: Ok(HEADER_V1),
        });
    }
    if version != MAGIC || len < HEADER {
        return Err(StoreError::corrupt(path, 0, "not a neardup segment"));
    }
    let mark: [u8; 16] = head[16..].try_into().unwrap_or_default();
    let synced = read_mark(first_seq, &mark)
        .ok_or_else(|| "the header's synced mark fails its checksum".to_owned());
    Ok(Header {
        first_seq,
        len: HEADER,
        synced,
    })
}

/// Opens segment `path` for reading and appending: the file, its length and its header.
fn open_file(path: &Path) -> Result<(File, u64, Header), StoreError> {
    let io = |what: &str, e: &io::Error| StoreError::io(path, what, e);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| io("cannot open", &e))?;
    let len = file.metadata().map_err(|e| io("cannot stat", &e))?.len();
    let header = read_header(path, &file, len)?;
    Ok((file, len, header))
}

impl Segment {
    /// The file name of the segment starting at `first_seq`.
    pub fn file_name(first_seq: u64) -> String {
        format!("seg-{first_seq:020}.log")
    }

    /// Creates an empty segment in `dir` (the folder is synced).
    ///
    /// # Errors
    /// The file exists or cannot be written.
    pub fn create(dir: &Path, first_seq: u64) -> Result<Segment, StoreError> {
        let path = dir.join(Self::file_name(first_seq));
        let io = |what: &str, e: &io::Error| StoreError::io(&path, what, e);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io("cannot create", &e))?;
        let mut header = MAGIC.to_vec();
        header.extend_from_slice(&first_seq.to_le_bytes());
        header.extend_from_slice(&mark_bytes(first_seq, HEADER));
        file.write_all(&header)
            .map_err(|e| io("cannot write", &e))?;
        file.sync_all().map_err(|e| io("cannot sync", &e))?;
        sync_dir(dir)?;
        Ok(Segment {
            path,
            file,
            first_seq,
            header: HEADER,
            end: AtomicU64::new(HEADER),
            mark_durable: AtomicU64::new(HEADER),
        })
    }

    /// Opens a sealed segment of `len` bytes without reading its records (a restart that
    /// has their summary): the file must still be that long, with a header whose synced
    /// mark covers all of it.
    ///
    /// # Errors
    /// An unreadable file, a bad header, or another length or synced mark.
    pub fn open_sealed(path: &Path, len: u64) -> Result<Segment, StoreError> {
        let (file, actual, header) = open_file(path)?;
        if actual != len || header.synced != Ok(len) || header.len != HEADER {
            return Err(StoreError::corrupt(
                path,
                0,
                format!(
                    "{actual} bytes, synced {:?}, where its summary says {len}",
                    header.synced
                ),
            ));
        }
        Ok(Segment {
            path: path.to_owned(),
            file,
            first_seq: header.first_seq,
            header: header.len,
            end: AtomicU64::new(len),
            mark_durable: AtomicU64::new(len),
        })
    }

    /// Opens a segment and reads every record, calling `visit(offset, length, record)`; what
    /// happens at a bad record is `recovery`'s rule. Returns the segment and what was cut.
    ///
    /// # Errors
    /// An unreadable file, a bad header, a bad record that `recovery` does not cut, or a file
    /// shorter than its synced mark: the error names the file and the offset.
    pub fn open(
        path: &Path,
        recovery: Recovery,
        mut visit: impl FnMut(u64, u32, Record) -> Result<(), StoreError>,
    ) -> Result<(Segment, Cut), StoreError> {
        let (file, len, header) = open_file(path)?;
        let synced = match &header.synced {
            Ok(synced) => *synced,
            Err(message) => return Err(StoreError::corrupt(path, MARK_AT, message)),
        };
        let (at, bad) = scan_records(path, &file, header.len, len, &mut visit)?;
        let mut segment = Segment {
            path: path.to_owned(),
            file,
            first_seq: header.first_seq,
            header: header.len,
            end: AtomicU64::new(at),
            mark_durable: AtomicU64::new(synced),
        };
        let cut = match bad {
            Some(message) => segment.cut_bad_record(recovery, len, synced, message)?,
            None if at < synced => {
                return Err(StoreError::corrupt(
                    path,
                    at,
                    format!(
                        "the file ends here, but it was synced to byte {synced} before an \
                         acknowledgement: acknowledged records are missing (the file was cut \
                         short?)"
                    ),
                ))
            }
            None => Cut::default(),
        };
        Ok((segment, cut))
    }

    /// At a bad record at the segment's end (`self.len()`) of a file of `len` bytes synced to
    /// `synced`: cuts it when `recovery` allows (a torn tail), else the error.
    fn cut_bad_record(
        &mut self,
        recovery: Recovery,
        len: u64,
        synced: u64,
        message: String,
    ) -> Result<Cut, StoreError> {
        let path = &self.path;
        let io = |what: &str, e: &io::Error| StoreError::io(path, what, e);
        let at = self.len();
        let valid_after = next_valid_record(&self.file, self.first_seq, at + 1, len)
            .map_err(|e| io("cannot read", &e))?;
        let acknowledged = at < synced;
        let torn = valid_after.is_none() && !acknowledged;
        match recovery {
            Recovery::CutTornTail if torn => {}
            Recovery::Strict | Recovery::CutTornTail => {
                let after = match valid_after {
                    Some(next) => format!(
                        "; a valid record follows at byte {next}, so this is corruption, not a \
                         write torn by a crash ({} bytes from the bad record to the end of the \
                         file)",
                        len - at
                    ),
                    None if acknowledged => format!(
                        "; the file was synced to byte {synced} before an acknowledgement, so \
                         this record was acknowledged: this is corruption, not a write torn by \
                         a crash"
                    ),
                    None => String::new(),
                };
                return Err(StoreError::corrupt(path, at, format!("{message}{after}")));
            }
        }
        self.file
            .set_len(at)
            .map_err(|e| io("cannot cut off a torn write", &e))?;
        self.file.sync_all().map_err(|e| io("cannot sync", &e))?;
        Ok(Cut {
            bytes: len - at,
            offset: at,
            torn,
            message,
        })
    }

    /// The sequence number of the segment's first document.
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The durable size in bytes.
    pub fn len(&self) -> u64 {
        self.end.load(Ordering::Acquire)
    }

    /// True when the segment holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == self.header
    }

    /// Writes the synced mark: the durable end, after it was synced. No sync of its own (see
    /// the module documentation). A version 1 segment has no mark.
    fn write_mark(&self, synced: u64) {
        if self.header == HEADER {
            // A failed write leaves an older, smaller mark: a bad last record is then
            // judged as before the marks (torn unless a valid record follows), never wrongly
            // called corruption.
            let _ = (self.file).write_all_at(&mark_bytes(self.first_seq, synced), MARK_AT);
        }
    }

    /// Makes the synced mark hold the durable end on disk: syncs the records, writes the mark,
    /// syncs it. Nothing to do when it holds it already. The writer calls it before it starts
    /// a new segment, when it stops, and when it has been idle a second.
    ///
    /// # Errors
    /// A failed sync.
    pub fn sync_mark(&self) -> Result<(), StoreError> {
        let end = self.len();
        if self.header != HEADER || self.mark_durable.load(Ordering::Acquire) == end {
            return Ok(());
        }
        let sync = |file: &File| {
            file.sync_data()
                .map_err(|e| StoreError::io(&self.path, "cannot sync", &e))
        };
        // The records first: a mark must never reach the disk before what it vouches for.
        sync(&self.file)?;
        self.write_mark(end);
        sync(&self.file)?;
        self.mark_durable.store(end, Ordering::Release);
        Ok(())
    }

    /// Writes `bytes` (whole framed records) at the durable end and syncs; returns the offset
    /// they start at. On failure the file is cut back to the durable end, so nothing half
    /// written stays. Only the collection's writer calls this.
    ///
    /// # Errors
    /// A failed write or sync (a full disk is flagged).
    pub fn append(&self, bytes: &[u8]) -> Result<u64, StoreError> {
        let start = self.len();
        let result = self
            .file
            .write_all_at(bytes, start)
            .and_then(|()| self.file.sync_data());
        if let Err(error) = result {
            let _ = self.file.set_len(start);
            return Err(StoreError::io(&self.path, "cannot append", &error));
        }
        let end = start + bytes.len() as u64;
        self.end.store(end, Ordering::Release);
        self.write_mark(end);
        Ok(start)
    }

    /// Reads the record of `len` bytes at `offset` (as given when it was appended or read).
    ///
    /// # Errors
    /// An unreadable or corrupt record.
    pub fn read(&self, offset: u64, len: u32) -> Result<Record, StoreError> {
        let mut bytes = vec![0u8; len as usize];
        self.file
            .read_exact_at(&mut bytes, offset)
            .map_err(|e| StoreError::io(&self.path, "cannot read", &e))?;
        if bytes.len() < FRAME {
            return Err(StoreError::corrupt(&self.path, offset, "short record"));
        }
        let hash = u64::from_le_bytes(bytes[4..FRAME].try_into().unwrap_or_default());
        if xxh3_64(&bytes[FRAME..]) != hash {
            return Err(StoreError::corrupt(&self.path, offset, "checksum mismatch"));
        }
        Record::decode(&bytes[FRAME..]).map_err(|m| StoreError::corrupt(&self.path, offset, m))
    }
}

/// Syncs a folder, so that a file created, renamed or removed in it stays so after a crash.
///
/// # Errors
/// The folder cannot be opened or synced.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(dir, "cannot sync the folder", &e))
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed over
/// it, and the folder synced.
///
/// # Errors
/// Any I/O failure; the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(error) = result {
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io(path, "cannot write", &error));
    }
    sync_dir(dir)
}

/// The first sequence number in the name of segment file `path` (`seg-<number>.log`).
pub fn segment_first_seq(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("seg-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

/// The segment files of `dir`, oldest first (by first sequence number).
///
/// # Errors
/// The folder cannot be read, or holds a file that is not a segment.
pub fn list_segments(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut found = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| StoreError::io(dir, "cannot list", &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(dir, "cannot list", &e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        match segment_first_seq(&entry.path()) {
            Some(seq) => found.push((seq, entry.path())),
            None if name.ends_with(".tmp") => {}
            None => {
                return Err(StoreError {
                    path: entry.path(),
                    message: "not a segment file (seg-<number>.log); move it out of the folder"
                        .into(),
                    disk_full: false,
                })
            }
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn insert(seq: u64, id: &str) -> Record {
        Record::Insert(Insert {
            seq,
            time_ms: 1_700_000_000_000 + seq as i64,
            inserted_ms: 1_700_000_000_000,
            id: id.into(),
            entry: IndexEntry {
                identity: u128::from(seq) << 64 | 7,
                exact_only: seq.is_multiple_of(2),
                hamming: seq.is_multiple_of(3).then_some((seq * 31, 11)),
                keys: vec![seq, seq + 1],
                probe_keys: Vec::new(),
            },
            sketch: vec![1, 2, 3, seq as u8],
            text: (seq % 2 == 1).then(|| format!("文本 {seq}")),
        })
    }

    fn collect(path: &Path, newest: bool) -> Result<(Vec<Record>, u64), StoreError> {
        let recovery = if newest {
            Recovery::CutTornTail
        } else {
            Recovery::Strict
        };
        let (records, cut) = collect_with(path, recovery)?;
        Ok((records, cut.bytes))
    }

    fn collect_with(path: &Path, recovery: Recovery) -> Result<(Vec<Record>, Cut), StoreError> {
        let mut records = Vec::new();
        let (_, cut) = Segment::open(path, recovery, |_, _, record| {
            records.push(record);
            Ok(())
        })?;
        Ok((records, cut))
    }

    /// Writes records `0..n` to a new segment; returns its path and each record's offset.
    pub(super) fn segment_of(dir: &Path, n: u64) -> (PathBuf, Vec<u64>) {
        let segment = Segment::create(dir, 0).unwrap();
        let mut offsets = Vec::new();
        for seq in 0..n {
            let mut bytes = Vec::new();
            insert(seq, &format!("id-{seq}")).encode(&mut bytes);
            offsets.push(segment.append(&bytes).unwrap());
        }
        (segment.path().to_owned(), offsets)
    }

    #[test]
    fn a_flipped_bit_before_valid_records_of_the_newest_segment_is_corruption_not_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = segment_of(dir.path(), 10);
        let size = fs::metadata(&path).unwrap().len();
        // One bit in the body of record 4, then one in the length field of record 6.
        for (record, byte) in [(4usize, 20u64), (6, 1)] {
            let mut bytes = fs::read(&path).unwrap();
            let original = bytes.clone();
            bytes[(offsets[record] + byte) as usize] ^= 0x10;
            fs::write(&path, &bytes).unwrap();
            let error = collect(&path, true).unwrap_err();
            assert_eq!(error.path, path);
            assert!(
                error
                    .message
                    .contains(&format!("corrupt record at byte {}", offsets[record])),
                "{error}"
            );
            assert!(error.message.contains("a valid record follows"), "{error}");
            // Nothing was cut.
            assert_eq!(fs::metadata(&path).unwrap().len(), size);
            fs::write(&path, &original).unwrap();
        }
        assert_eq!(collect(&path, true).unwrap().0.len(), 10);
    }

    #[test]
    fn a_flipped_bit_in_the_last_acknowledged_record_is_corruption_not_a_torn_tail() {
        // Issue 44, item 5: the last record, synced and acknowledged, was cut as a torn write.
        // Closed without `sync_mark`, as a killed process leaves it: the mark is in the cache.
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = segment_of(dir.path(), 5);
        let size = fs::metadata(&path).unwrap().len();
        let original = fs::read(&path).unwrap();
        for byte in [1u64, 20, size - offsets[4] - 1] {
            let mut bytes = original.clone();
            bytes[(offsets[4] + byte) as usize] ^= 0x10;
            fs::write(&path, &bytes).unwrap();
            let error = collect(&path, true).unwrap_err();
            let at = format!("corrupt record at byte {}", offsets[4]);
            assert!(error.message.contains(&at), "{error}");
            assert!(
                error.message.contains("this record was acknowledged"),
                "{error}"
            );
            assert_eq!(fs::metadata(&path).unwrap().len(), size, "nothing was cut");
        }
        // Past the mark a bad record is still a torn tail: the group after the last sync.
        fs::write(&path, &original).unwrap();
        let mut torn = Vec::new();
        insert(5, "id-5").encode(&mut torn);
        torn.truncate(torn.len() - 3);
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&torn)
            .unwrap();
        let (records, cut) = collect_with(&path, Recovery::CutTornTail).unwrap();
        assert_eq!(
            (records.len(), cut.bytes, cut.torn),
            (5, torn.len() as u64, true)
        );
        assert_eq!(fs::metadata(&path).unwrap().len(), size);
    }

    #[test]
    fn a_segment_cut_short_of_its_synced_mark_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = segment_of(dir.path(), 5);
        // The last record removed whole: every record left is valid, and yet one is missing.
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(offsets[4])
            .unwrap();
        let error = collect(&path, true).unwrap_err();
        assert!(
            error.message.contains("acknowledged records are missing"),
            "{error}"
        );
        // Salvage takes what is there and marks it synced: the segment opens again.
        assert_eq!(salvage_segment(&path).unwrap().kept, 4);
        assert_eq!(collect(&path, true).unwrap().0.len(), 4);
    }

    #[test]
    fn the_synced_mark_follows_the_appends_and_reaches_the_disk_on_sync_mark() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 7).unwrap();
        let mark = |path: &Path| {
            let bytes = fs::read(path).unwrap();
            read_mark(7, bytes[16..32].try_into().unwrap())
        };
        assert_eq!(mark(segment.path()), Some(HEADER));
        let mut bytes = Vec::new();
        insert(7, "a").encode(&mut bytes);
        segment.append(&bytes).unwrap();
        assert_eq!(mark(segment.path()), Some(segment.len()));
        segment.sync_mark().unwrap();
        assert_eq!(segment.mark_durable.load(Ordering::Acquire), segment.len());
        // A mark that fails its checksum is corruption of the header; salvage rewrites it.
        let path = segment.path().to_owned();
        drop(segment);
        let mut bytes = fs::read(&path).unwrap();
        bytes[MARK_AT as usize] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let error = collect(&path, true).unwrap_err();
        assert!(
            error.message.contains("synced mark fails its checksum"),
            "{error}"
        );
        salvage_segment(&path).unwrap();
        assert_eq!(mark(&path), Some(fs::metadata(&path).unwrap().len()));
        assert_eq!(collect(&path, true).unwrap().0.len(), 1);
    }

    #[test]
    fn a_version_1_segment_is_read_and_appended_to_without_a_mark() {
        // The layout before the synced mark: a 16-byte header, the same records.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(Segment::file_name(3));
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&3u64.to_le_bytes());
        insert(3, "a").encode(&mut bytes);
        fs::write(&path, &bytes).unwrap();
        let (segment, _) = Segment::open(&path, Recovery::CutTornTail, |_, _, _| Ok(())).unwrap();
        assert!(!segment.is_empty());
        let mut more = Vec::new();
        insert(4, "b").encode(&mut more);
        assert_eq!(segment.append(&more).unwrap(), bytes.len() as u64);
        segment.sync_mark().unwrap();
        drop(segment);
        assert_eq!(
            collect(&path, true).unwrap().0,
            vec![insert(3, "a"), insert(4, "b")]
        );
        // Without a mark, a bad last record is judged by the rule before marks: torn.
        let mut flipped = fs::read(&path).unwrap();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        fs::write(&path, &flipped).unwrap();
        let (records, cut) = collect_with(&path, Recovery::CutTornTail).unwrap();
        assert_eq!((records.len(), cut.torn), (1, true));
    }

    #[test]
    fn zeros_after_the_last_record_are_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = segment_of(dir.path(), 3);
        let size = fs::metadata(&path).unwrap().len();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[0u8; 4096]).unwrap();
        drop(file);
        let (records, cut) = collect_with(&path, Recovery::CutTornTail).unwrap();
        assert_eq!(records.len(), 3);
        assert!(cut.torn);
        assert_eq!(cut.bytes, 4096);
        assert_eq!(fs::metadata(&path).unwrap().len(), size);
    }

    #[test]
    fn records_round_trip_through_a_segment_and_reads_by_offset() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 5).unwrap();
        let records: Vec<Record> = (5..9)
            .map(|seq| insert(seq, &format!("id-{seq}")))
            .chain([Record::Delete(6)])
            .collect();
        let mut offsets = Vec::new();
        for record in &records {
            let mut bytes = Vec::new();
            record.encode(&mut bytes);
            offsets.push((segment.append(&bytes).unwrap(), bytes.len() as u32));
        }
        for (record, &(offset, len)) in records.iter().zip(&offsets) {
            assert_eq!(&segment.read(offset, len).unwrap(), record);
        }
        let path = segment.path().to_owned();
        drop(segment);
        assert_eq!(collect(&path, false).unwrap(), (records, 0));
        assert_eq!(list_segments(dir.path()).unwrap(), vec![path]);
    }

    #[test]
    fn a_torn_tail_is_cut_from_the_newest_segment_and_refused_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0).unwrap();
        let mut bytes = Vec::new();
        insert(0, "a").encode(&mut bytes);
        segment.append(&bytes).unwrap();
        let good = segment.len();
        let path = segment.path().to_owned();
        drop(segment);
        for torn in [3usize, 11, 20, bytes.len() - 1] {
            let mut file = OpenOptions::new().append(true).open(&path).unwrap();
            let mut second = Vec::new();
            insert(1, "b").encode(&mut second);
            file.write_all(&second[..torn]).unwrap();
            drop(file);
            let error = collect(&path, false).unwrap_err();
            assert!(error.message.contains("corrupt record"), "{error}");
            let (records, cut) = collect(&path, true).unwrap();
            assert_eq!(records, vec![insert(0, "a")]);
            assert_eq!(cut, torn as u64);
            assert_eq!(fs::metadata(&path).unwrap().len(), good);
        }
        // A flipped byte in a whole record is caught by the checksum.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        let mut second = Vec::new();
        insert(1, "b").encode(&mut second);
        let last = second.len() - 1;
        second[last] ^= 1;
        file.write_all(&second).unwrap();
        drop(file);
        assert_eq!(collect(&path, true).unwrap().0, vec![insert(0, "a")]);
    }

    #[test]
    fn stray_files_in_the_segment_folder_are_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let error = list_segments(dir.path()).unwrap_err();
        assert!(error.to_string().contains("notes.txt"), "{error}");
    }
}
