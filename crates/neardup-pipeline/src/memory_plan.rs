//! What a run is expected to hold in memory, and the path it takes: in memory, or streamed
//! ([`plan`], before reading), and the refusal of a streamed run whose documents alone pass
//! the limit ([`Plan::check_floor`]). While it reads, [`crate::memory_rule`] checks each
//! document and what an in-memory read holds.
//!
//! # The costs
//!
//! The in-memory path holds, per document, about [`PER_DOCUMENT_BYTES`] (its record, its
//! sketch, its facts) whatever its size, and [`BYTES_PER_INPUT_BYTE`] per byte of input
//! (the in-memory path measured 3 to 9 on Chinese corpora). Sketching one document takes a
//! multiple of its text ([`crate::memory_rule::document_factor`]): that multiple is held for
//! each document sketched at the same time.
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
use crate::memory_rule::{BYTES_PER_INPUT_BYTE, PER_DOCUMENT_BYTES, SMALLEST_LIMIT};
use crate::paths;

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

/// Bytes the streamed path holds per document whatever the limit: its facts (identity,
/// length, flags), the places of its sketch and the clusters' tables. 20,000,000 documents
/// of `{"text":"hi"}` peaked at 1.31 GB under `--memory-limit 500M` (65 a document).
pub const STREAMED_PER_DOCUMENT_BYTES: u64 = 72;

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
    let mut unsized_input = None;
    for path in inputs.iter().chain(against) {
        if paths::read_once(path) {
            // Sampling it would consume what the run must read.
            unsized_input.get_or_insert(paths::display_input(path));
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
    if let Some(path) = unsized_input.filter(|_| explicit) {
        return Plan {
            spill: true,
            reason: format!("{path} (size unknown) under a memory limit"),
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
}
