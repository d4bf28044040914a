//! What a run is expected to hold in memory, and the checks that keep it under its limit:
//! the choice of path before reading ([`plan`]), the measured check of the in-memory read
//! ([`MemoryRule`], which switches the run to the streamed path), and the refusal of a
//! document whose sketching alone would pass the limit.
//!
//! # The costs
//!
//! The in-memory path holds, per document, about [`PER_DOCUMENT_BYTES`] (its record, its
//! sketch, its facts) whatever its size, and [`BYTES_PER_INPUT_BYTE`] per byte of input
//! (the in-memory path measured 3 to 9 on Chinese corpora). Sketching one document takes a
//! multiple of its text ([`document_factor`]: its features, their hashes, the method's
//! tables), measured on random ASCII, the worst case (every feature distinct, one byte a
//! character): that multiple is held for each document sketched at the same time.
//!
//! # The estimate
//!
//! Before reading, each file's head is sampled ([`SAMPLE_BYTES`], more for a compressed file
//! until the decompressor has consumed [`SAMPLE_CONSUMED`] of it): its line breaks give the
//! documents a byte, its decompressed size against the bytes consumed gives the
//! compression ratio. A file that cannot be sampled counts [`COMPRESSION_RATIO`] times its
//! size when compressed, and a document every [`FALLBACK_DOCUMENT_BYTES`]. Standard input
//! (whose size is unknown) is streamed whenever a limit is given.

use crate::compression::{self, Compression};
use crate::input::Format;
use crate::paths;

/// Bytes of memory the in-memory path is expected to need per byte of (uncompressed) input.
pub const BYTES_PER_INPUT_BYTE: u64 = 10;
/// Bytes of memory the in-memory path is expected to need per document, besides its bytes
/// (2,000,000 documents of `{"text":"hi"}` peaked at 1.88 GB with minhash: 940 a document).
pub const PER_DOCUMENT_BYTES: u64 = 1024;
/// How many times its size a compressed input is counted when its head cannot be sampled.
pub const COMPRESSION_RATIO: u64 = 4;
/// Bytes a document is assumed to take when an input cannot be sampled.
pub const FALLBACK_DOCUMENT_BYTES: u64 = 256;
/// Decompressed bytes of each input's head read for the estimate.
pub const SAMPLE_BYTES: u64 = 1 << 20;
/// Bytes of a compressed input the sample goes on consuming, up to [`SAMPLE_MAX_BYTES`]
/// decompressed, so that the ratio of a highly compressed file is measured, not guessed.
pub const SAMPLE_CONSUMED: u64 = 256 << 10;
/// The most decompressed bytes a sample reads.
pub const SAMPLE_MAX_BYTES: u64 = 64 << 20;

/// Bytes of memory sketching (and verifying) one document takes per byte of its text with
/// `method`, measured with `/usr/bin/time` on one document of 20 MB of random lowercase
/// ASCII and spaces (peak resident memory over text bytes, rounded up): `exact` 2.7,
/// `minhash`, `join`, `sentences`, `supershingle` 18, `segments`, `imatch`, `topn` 19,
/// `ngram` 22, `simhash` 25.
pub fn document_factor(method: &str) -> u64 {
    match method {
        "exact" => 4,
        "simhash" => 28,
        "ngram" => 24,
        _ => 20,
    }
}

/// Bytes the streamed path holds per document whatever the limit: its facts (identity,
/// length, flags), the places of its sketch and the clusters' tables. 20,000,000 documents
/// of `{"text":"hi"}` peaked at 1.31 GB under `--memory-limit 500M` (65 a document).
pub const STREAMED_PER_DOCUMENT_BYTES: u64 = 72;

/// The smallest limit a run can keep (the program itself, its buffers and one block of
/// texts): a smaller limit streams the corpus, and is taken as this one for the refusals.
pub const SMALLEST_LIMIT: u64 = 64 << 20;

/// Bytes of a JSON line per byte of the text it spells, at most (`\u0001` for one byte).
pub const JSON_ESCAPE_BYTES: u64 = 6;

/// How a run holds its corpus, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Whether the corpus is streamed and its sketches spilled.
    pub spill: bool,
    /// Why, for the stats file.
    pub reason: String,
    /// The documents expected (0 when unknown: standard input, Parquet).
    pub documents: u64,
}

impl Plan {
    /// Refuses a streamed run whose documents alone are expected to pass `limit` (at least
    /// [`SMALLEST_LIMIT`]) at [`STREAMED_PER_DOCUMENT_BYTES`] each: the message says the
    /// limit that would do.
    pub fn check_floor(&self, limit: u64) -> Option<String> {
        let need = self.documents.saturating_mul(STREAMED_PER_DOCUMENT_BYTES);
        (self.spill && need > limit.max(SMALLEST_LIMIT)).then(|| {
            format!(
                "about {} documents need at least {need} bytes of memory even streamed ({} a \
                 document), more than the memory limit of {limit}: give --memory-limit {}M or \
                 more, or split the inputs",
                self.documents,
                STREAMED_PER_DOCUMENT_BYTES,
                (need.saturating_mul(5) / 4).div_ceil(1 << 20)
            )
        })
    }
}

/// What one input is expected to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Estimate {
    bytes: u64,
    documents: u64,
}

impl Estimate {
    /// The memory the in-memory path is expected to need for it.
    fn memory(self) -> u64 {
        (self.bytes.saturating_mul(BYTES_PER_INPUT_BYTE))
            .saturating_add(self.documents.saturating_mul(PER_DOCUMENT_BYTES))
    }
}

/// The decompressed bytes and the documents of the file `path` of `size` bytes, from a
/// sample of its head.
fn estimate_file(path: &str, size: u64) -> Estimate {
    let compressed = Compression::from_extension(path).0 != Compression::None;
    match compression::sample(path, SAMPLE_BYTES, SAMPLE_CONSUMED, SAMPLE_MAX_BYTES) {
        Some(sample) if sample.whole => Estimate {
            bytes: sample.bytes,
            documents: sample.lines.max(u64::from(sample.bytes > 0)),
        },
        Some(sample) if sample.bytes > 0 && sample.consumed > 0 => {
            let bytes = (size as f64 * sample.bytes as f64 / sample.consumed as f64) as u64;
            let per_byte = sample.lines.max(1) as f64 / sample.bytes as f64;
            Estimate {
                bytes: bytes.max(size),
                documents: (bytes as f64 * per_byte).ceil() as u64,
            }
        }
        _ => {
            let bytes = size.saturating_mul(if compressed { COMPRESSION_RATIO } else { 1 });
            Estimate {
                bytes,
                documents: bytes / FALLBACK_DOCUMENT_BYTES,
            }
        }
    }
}

/// Chooses the path of a run over `inputs` (and `against`) under `limit` bytes;
/// `explicit` is whether the limit was given (standard input is streamed only then).
pub fn plan(
    inputs: &[String],
    against: &[String],
    format: Option<Format>,
    limit: u64,
    explicit: bool,
) -> Plan {
    let mut total = Estimate::default();
    let mut stdin = false;
    for path in inputs.iter().chain(against) {
        if path == paths::STANDARD {
            stdin = true;
            continue;
        }
        let (_, stem) = Compression::from_extension(path);
        let parquet = format == Some(Format::Parquet)
            || (format.is_none() && stem.to_ascii_lowercase().ends_with(".parquet"));
        if parquet {
            return Plan {
                spill: false,
                reason: format!("{path} is Parquet, which is read into memory"),
                documents: 0,
            };
        }
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let file = estimate_file(path, size);
        total.bytes = total.bytes.saturating_add(file.bytes);
        total.documents = total.documents.saturating_add(file.documents);
    }
    if stdin && explicit {
        return Plan {
            spill: true,
            reason: "standard input (size unknown) under a memory limit".to_owned(),
            documents: total.documents,
        };
    }
    let estimate = total.memory();
    let spill = estimate > limit;
    let verb = if spill { "exceeds" } else { "fits" };
    Plan {
        spill,
        reason: format!(
            "estimated {estimate} bytes in memory (about {} documents, {} bytes) {verb} the \
             limit of {limit}",
            total.documents, total.bytes
        ),
        documents: total.documents,
    }
}

/// The memory rule the reader checks (issue 44): a document whose sketching alone passes the
/// limit is refused as it is read, and the in-memory read stops (to be done again streamed)
/// once what it holds is expected to pass the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRule {
    /// The limit, in bytes.
    pub limit: u64,
    /// The method's [`document_factor`].
    pub factor: u64,
    /// Whether the read holds its records (the in-memory path), so that what it holds is
    /// counted; a streamed read checks only each document.
    pub holds: bool,
    /// Documents sketched at the same time (the threads), each of which may be the largest.
    pub threads: u64,
}

impl MemoryRule {
    /// The memory sketching a text of `bytes` bytes takes.
    pub fn document_cost(&self, bytes: usize) -> u64 {
        (bytes as u64).saturating_mul(self.factor)
    }

    /// The most bytes a record may have as it is read: a JSON line can spell a text in up
    /// to [`JSON_ESCAPE_BYTES`] times its bytes (`\u0001`), so a record that long is read,
    /// and its text checked by [`MemoryRule::refuses`]. Reading it holds about twice its
    /// bytes, well under the limit.
    pub fn most_record_bytes(&self) -> usize {
        let text = self.limit.max(SMALLEST_LIMIT) / self.factor.max(1);
        usize::try_from(text.saturating_mul(JSON_ESCAPE_BYTES)).unwrap_or(usize::MAX)
    }

    /// Why a text of `bytes` bytes is refused, when its sketching alone passes the limit
    /// (at least [`SMALLEST_LIMIT`]).
    pub fn refuses(&self, bytes: usize) -> Option<String> {
        let cost = self.document_cost(bytes);
        (cost > self.limit.max(SMALLEST_LIMIT)).then(|| {
            format!(
                "record of {bytes} bytes needs about {cost} bytes of memory to sketch ({} a \
                 byte of text), more than the memory limit of {}: raise --memory-limit, or \
                 leave it out with --on-error skip",
                self.factor, self.limit
            )
        })
    }
}

/// What an in-memory read holds, counted as it goes ([`MemoryRule::holds`]).
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Bytes expected for the records read.
    records: u64,
    /// Documents read.
    documents: u64,
    /// The largest texts read (at most [`MemoryRule::threads`] of them), smallest first.
    largest: Vec<u64>,
}

impl Held {
    /// Counts a record of `raw` input bytes whose text has `text` bytes; the memory now
    /// expected when it passes `rule`'s limit.
    pub(crate) fn add(&mut self, rule: &MemoryRule, raw: usize, text: usize) -> Option<u64> {
        self.documents += 1;
        self.records = (self.records)
            .saturating_add((raw as u64).saturating_mul(BYTES_PER_INPUT_BYTE))
            .saturating_add(PER_DOCUMENT_BYTES);
        let text = text as u64;
        let room = rule.threads.max(1) as usize;
        if self.largest.len() < room || self.largest[0] < text {
            if self.largest.len() == room {
                self.largest.remove(0);
            }
            let at = self.largest.partition_point(|&t| t < text);
            self.largest.insert(at, text);
        }
        let sketching: u64 = self.largest.iter().map(|&t| t * rule.factor).sum();
        let expected = self.records.saturating_add(sketching);
        (expected > rule.limit).then_some(expected)
    }

    /// Documents counted.
    pub(crate) fn documents(&self) -> u64 {
        self.documents
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn plan_streams_what_does_not_fit() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.jsonl", &[b'x'; 1000]);
        let inputs = [path.clone()];
        // 1000 bytes and one document.
        let need = 1000 * BYTES_PER_INPUT_BYTE + PER_DOCUMENT_BYTES;
        assert!(!plan(&inputs, &[], None, need, true).spill);
        let tight = plan(&inputs, &[], None, need - 1, true);
        assert!(tight.spill, "{tight:?}");
        assert!(tight.reason.contains(&need.to_string()), "{tight:?}");
        assert!(plan(&["-".to_owned()], &[], Some(Format::Jsonl), 1 << 40, true).spill);
        assert!(!plan(&["-".to_owned()], &[], Some(Format::Jsonl), 1, false).spill);
        let parquet = plan(&["x.parquet".to_owned()], &[], None, 1, true);
        assert!(!parquet.spill && parquet.reason.contains("Parquet"));
    }

    #[test]
    fn tiny_documents_count_by_their_number() {
        // Issue 44: 2,000,000 documents of {"text":"hi"} (28 MB) were estimated at 280 MB
        // and took the in-memory path under 500M, peaking at 1.86 GB.
        let dir = tempfile::tempdir().unwrap();
        let line = b"{\"text\":\"hi\"}\n";
        let path = write(dir.path(), "tiny.jsonl", &line.repeat(200_000));
        let plan = plan(&[path], &[], None, 50 << 20, true);
        assert!(plan.spill, "{plan:?}");
        assert!(plan.documents.abs_diff(200_000) < 100, "{plan:?}");
        assert_eq!(plan.check_floor(50 << 20), None);
    }

    #[test]
    fn a_streamed_run_whose_documents_alone_pass_the_limit_is_refused() {
        let plan = Plan {
            spill: true,
            reason: String::new(),
            documents: 20_000_000,
        };
        let message = plan.check_floor(500 << 20).unwrap();
        assert!(message.contains("about 20000000 documents need at least 1440000000 bytes"));
        assert!(
            message.contains("give --memory-limit 1717M or more"),
            "{message}"
        );
        assert_eq!(plan.check_floor(2 << 30), None);
        let in_memory = Plan {
            spill: false,
            ..plan
        };
        assert_eq!(in_memory.check_floor(1), None);
    }

    #[test]
    fn a_gzip_bomb_is_estimated_by_its_measured_ratio() {
        // Issue 44: 543 KB of gzip held 20,000,000 documents and reached 16.3 GB.
        let dir = tempfile::tempdir().unwrap();
        let line = b"{\"text\":\"hi\"}\n";
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut encoder, &line.repeat(1_000_000)).unwrap();
        let gz = encoder.finish().unwrap();
        assert!(gz.len() < 100_000, "{}", gz.len());
        let path = write(dir.path(), "bomb.jsonl.gz", &gz);
        let estimate = estimate_file(&path, gz.len() as u64);
        // The whole file is sampled here (14 MB): exact.
        assert_eq!(estimate.documents, 1_000_000, "{estimate:?}");
        assert!(plan(&[path], &[], None, 500 << 20, true).spill);
    }

    #[test]
    fn a_large_file_is_extrapolated_from_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let line = b"{\"text\":\"0123456789012345678901234567890123456789012\"}\n";
        let bytes = line.repeat(100_000);
        let path = write(dir.path(), "big.jsonl", &bytes);
        let estimate = estimate_file(&path, bytes.len() as u64);
        assert_eq!(estimate.bytes, bytes.len() as u64);
        let documents = estimate.documents as f64;
        assert!((documents / 100_000.0 - 1.0).abs() < 0.01, "{estimate:?}");
    }

    #[test]
    fn a_document_whose_sketching_passes_the_limit_is_refused() {
        let rule = MemoryRule {
            limit: 1 << 30,
            factor: 20,
            holds: false,
            threads: 2,
        };
        let most = (1 << 30) / 20;
        assert_eq!(rule.refuses(most), None);
        let message = rule.refuses(most + 1).unwrap();
        let cost = (most as u64 + 1) * 20;
        let expected = format!("record of {} bytes needs about {cost} bytes", most + 1);
        assert!(message.contains(&expected), "{message}");
        assert!(message.contains("memory limit of 1073741824"), "{message}");
        // A limit below the smallest one a run can keep is taken as that one.
        let tiny = MemoryRule { limit: 1, ..rule };
        assert_eq!(tiny.refuses(1000), None);
        assert!(tiny.refuses((SMALLEST_LIMIT / 20) as usize + 1).is_some());
    }

    #[test]
    fn what_a_read_holds_counts_documents_and_the_largest_texts() {
        let rule = MemoryRule {
            limit: 100_000,
            factor: 20,
            holds: true,
            threads: 2,
        };
        let mut held = Held::default();
        // 1,000 bytes of text: 10,000 + 1,024 + 20,000.
        assert_eq!(held.add(&rule, 1000, 1000), None);
        assert_eq!(held.add(&rule, 10, 10), None);
        // Two texts of 1,000 bytes sketched at once: 40,000, and 22,168 for the records.
        assert_eq!(held.add(&rule, 1000, 1000), None);
        assert_eq!(held.largest, [1000, 1000]);
        let mut passed = None;
        while passed.is_none() {
            passed = held.add(&rule, 2, 2);
        }
        assert!(passed.unwrap() > 100_000);
        assert!(held.documents() < 60, "{}", held.documents());
    }
}
