//! `neardup salvage`'s work on one segment: keep every record that checks, skip only the
//! bad bytes between them, and write what is kept back as whole segments.
//!
//! The scan is the one that opens a segment ([`super::scan_records`]); at a bad record the
//! next valid one is found by [`super::next_valid_record`], as recovery does to tell a torn
//! tail from corruption, and the scan goes on from there. A collection's documents are
//! numbered without gaps inside a segment, so the documents kept after a skipped range that
//! lost some start a segment of their own (`seg-<its first sequence number>.log`): the gap
//! between the two is then the gap between two segments that salvage accepts
//! (`accepted-gaps.json`), and every reader keeps its rule. A tombstone stays in the segment
//! before it.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{
    mark_bytes, next_valid_record, read_header, scan_records, sync_dir, Record, Segment,
    StoreError, HEADER, MAGIC,
};

/// Bytes skipped by salvage: from `offset` to the next record that checks (or the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where the bad bytes start.
    pub offset: u64,
    /// How many.
    pub bytes: u64,
    /// What was wrong with the first of them.
    pub message: String,
}

/// What [`salvage_segment`] did to one segment file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SalvagedSegment {
    /// The bad byte ranges skipped, in file order.
    pub skipped: Vec<Skipped>,
    /// Records kept (documents and tombstones).
    pub kept: u64,
    /// Documents lost inside the segment: the sequence numbers missing between the documents
    /// kept. Documents lost after the last one kept are counted by the gap to the next
    /// segment; at the end of the newest segment nothing tells how many there were.
    pub documents_skipped: u64,
    /// The segment files written, the first in place of the original unless it lost its
    /// first documents.
    pub written: Vec<PathBuf>,
}

/// A segment to write: its first sequence number and its records, as read.
struct Part {
    first_seq: u64,
    records: Vec<u8>,
    empty: bool,
}

impl Part {
    fn new(first_seq: u64) -> Part {
        Part {
            first_seq,
            records: Vec::new(),
            empty: true,
        }
    }
}

/// Keeps every record of the segment at `path` that checks and rewrites the file with them
/// (a new segment after each skipped range that lost documents); the caller has copied the
/// file aside. Each file written is synced and carries a synced mark of its whole length.
///
/// # Errors
/// A file that cannot be read, written or renamed, or that is not a segment.
pub fn salvage_segment(path: &Path) -> Result<SalvagedSegment, StoreError> {
    let io = |what: &str, e: &io::Error| StoreError::io(path, what, e);
    let file = File::open(path).map_err(|e| io("cannot open", &e))?;
    let len = file.metadata().map_err(|e| io("cannot stat", &e))?.len();
    let header = read_header(path, &file, len)?;
    let mut report = SalvagedSegment::default();
    let mut parts = vec![Part::new(header.first_seq)];
    let mut expected = header.first_seq;
    let mut from = header.len;
    let mut raw = Vec::new();
    while from < len {
        let mut keep = |offset: u64, length: u32, record: Record| {
            raw.resize(length as usize, 0);
            file.read_exact_at(&mut raw, offset)
                .map_err(|e| io("cannot read", &e))?;
            if let Record::Insert(insert) = &record {
                if insert.seq < expected {
                    // Numbered before a document kept (the writer never writes so): kept,
                    // it would break the segment's order. Skipped, and said.
                    report.skipped.push(Skipped {
                        offset,
                        bytes: u64::from(length),
                        message: format!("document {} out of order", insert.seq),
                    });
                    return Ok(());
                }
                if insert.seq != expected {
                    report.documents_skipped += insert.seq.saturating_sub(expected);
                    parts.push(Part::new(insert.seq));
                }
                expected = insert.seq + 1;
            }
            let part = parts
                .last_mut()
                .unwrap_or_else(|| unreachable!("one part at least"));
            part.records.extend_from_slice(&raw);
            part.empty = false;
            report.kept += 1;
            Ok(())
        };
        let (at, bad) = scan_records(path, &file, from, len, &mut keep)?;
        let Some(message) = bad else { break };
        let next = next_valid_record(&file, header.first_seq, at + 1, len)
            .map_err(|e| io("cannot read", &e))?
            .unwrap_or(len);
        report.skipped.push(Skipped {
            offset: at,
            bytes: next - at,
            message,
        });
        from = next;
    }
    // The first part is left out when its documents were all lost and others follow.
    let keep_first = !parts[0].empty || parts.len() == 1;
    let parts: Vec<Part> = parts
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i > 0 || keep_first)
        .map(|(_, part)| part)
        .collect();
    report.written = write_parts(path, &parts)?;
    Ok(report)
}

/// Writes each part as a segment beside `original` (to a temporary file, synced, renamed), the
/// one named like `original` last, so that a crash halfway leaves the original to salvage
/// again; removes the original when no part replaces it. Returns the files written.
fn write_parts(original: &Path, parts: &[Part]) -> Result<Vec<PathBuf>, StoreError> {
    let dir = original.parent().unwrap_or(Path::new("."));
    let mut written = Vec::new();
    for part in parts {
        let path = dir.join(Segment::file_name(part.first_seq));
        let tmp = path.with_extension("log.tmp");
        let length = HEADER + part.records.len() as u64;
        let result = File::create(&tmp).and_then(|mut file| {
            file.write_all(MAGIC)?;
            file.write_all(&part.first_seq.to_le_bytes())?;
            file.write_all(&mark_bytes(part.first_seq, length))?;
            file.write_all(&part.records)?;
            file.sync_all()
        });
        result.map_err(|e| StoreError::io(&tmp, "cannot write", &e))?;
        written.push((path, tmp));
    }
    written.sort_by_key(|(path, _)| path == original);
    if !written.iter().any(|(path, _)| path == original) {
        written.push((original.to_owned(), PathBuf::new()));
    }
    let mut files = Vec::new();
    for (path, tmp) in written {
        if tmp.as_os_str().is_empty() {
            fs::remove_file(&path).map_err(|e| StoreError::io(&path, "cannot remove", &e))?;
            continue;
        }
        fs::rename(&tmp, &path).map_err(|e| StoreError::io(&path, "cannot replace", &e))?;
        files.push(path);
    }
    sync_dir(dir)?;
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{insert, segment_of};
    use super::super::Recovery;
    use super::*;

    fn records_of(path: &Path) -> Vec<Record> {
        let mut records = Vec::new();
        Segment::open(path, Recovery::Strict, |_, _, record| {
            records.push(record);
            Ok(())
        })
        .unwrap();
        records
    }

    /// The inserts of documents `seqs`, with the ids the test segments give them.
    fn inserts(seqs: std::ops::Range<u64>) -> Vec<Record> {
        seqs.map(|s| insert(s, &format!("id-{s}"))).collect()
    }

    #[test]
    fn salvage_keeps_every_record_after_a_bad_one() {
        // Issue 44, item 6: salvage cut at the bad record and lost every good one after it.
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = segment_of(dir.path(), 10);
        let mut bytes = fs::read(&path).unwrap();
        bytes[(offsets[4] + 20) as usize] ^= 0x10;
        fs::write(&path, &bytes).unwrap();
        let report = salvage_segment(&path).unwrap();
        assert_eq!(report.kept, 9);
        assert_eq!(report.documents_skipped, 1);
        let skipped = &report.skipped;
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].offset, offsets[4]);
        assert_eq!(skipped[0].bytes, offsets[5] - offsets[4]);
        // Documents 0-3 in place, 5-9 in a segment of their own after the gap.
        let after = dir.path().join(Segment::file_name(5));
        assert_eq!(report.written, vec![path.clone(), after.clone()]);
        assert_eq!(records_of(&path), inserts(0..4));
        assert_eq!(records_of(&after), inserts(5..10));
    }

    #[test]
    fn salvage_of_a_bad_first_record_and_a_bad_last_one_keeps_the_middle() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = segment_of(dir.path(), 6);
        let mut bytes = fs::read(&path).unwrap();
        bytes[(offsets[0] + 1) as usize] ^= 0x40;
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        // A tombstone after the bad last record, for document 2: kept.
        let mut tombstone = Vec::new();
        Record::Delete(2).encode(&mut tombstone);
        bytes.extend_from_slice(&tombstone);
        fs::write(&path, &bytes).unwrap();
        let report = salvage_segment(&path).unwrap();
        assert_eq!(report.skipped.len(), 2);
        assert_eq!(report.kept, 5);
        // Document 0, before the first kept; document 5, the last, is counted by no one.
        assert_eq!(report.documents_skipped, 1);
        // The original lost its first document: the kept ones start a segment at 1.
        let kept = dir.path().join(Segment::file_name(1));
        assert_eq!(report.written, vec![kept.clone()]);
        assert!(!path.exists());
        let mut expected = inserts(1..5);
        expected.push(Record::Delete(2));
        assert_eq!(records_of(&kept), expected);
    }
}
