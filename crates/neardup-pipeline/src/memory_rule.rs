//! What one document and one in-memory read may take under a run's memory limit
//! ([`MemoryRule`]): the reader refuses a document whose sketching alone would pass the limit,
//! and stops an in-memory read once what it holds is expected to pass it ([`Held`]), so that
//! the run starts again streamed ([`crate::memory_plan`] chose the path before reading).

/// Bytes of memory the in-memory path is expected to need per byte of (uncompressed) input.
pub const BYTES_PER_INPUT_BYTE: u64 = 10;
/// Bytes of memory the in-memory path is expected to need per document, besides its bytes
/// (2,000,000 documents of `{"text":"hi"}` peaked at 1.88 GB with minhash: 940 a document).
pub const PER_DOCUMENT_BYTES: u64 = 1024;
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

/// The smallest limit a run can keep (the program itself, its dictionaries, its buffers and
/// one block of texts): a smaller limit streams the corpus, and is taken as this one for the
/// refusals. Streamed runs under `64M` peaked at 44 to 88 MiB on the regress corpora (the
/// 18 MB Reuters bodies at 67 MiB), so 64 MiB was not kept; 128 MiB is.
pub const SMALLEST_LIMIT: u64 = 128 << 20;

/// Bytes of a JSON line per byte of the text it spells, at most (`\u0001` for one byte).
pub const JSON_ESCAPE_BYTES: u64 = 6;

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
