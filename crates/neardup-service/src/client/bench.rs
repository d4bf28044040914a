//! The load generator behind `neardup client bench`: documents composed from a corpus,
//! sent `concurrency` requests at a time, with throughput and latency percentiles.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::answers::{self, BatchResult, Expected};
use super::{Client, ClientError, Method};
use crate::api::{routes, CheckRequest, InsertBatchRequest, InsertRequest};

/// What `neardup client bench` does.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The collection.
    pub collection: String,
    /// `insert` (one document per request), `batch` (many per request) or `check`.
    pub mode: String,
    /// Requests to send.
    pub requests: u64,
    /// Documents per request in `batch` mode.
    pub batch: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Texts to compose documents from (one per line of a JSONL file, field `text_field`).
    pub corpus: PathBuf,
    /// The corpus field.
    pub text_field: String,
    /// Corpus texts per document.
    pub parts: usize,
    /// Fraction of documents sent as a lightly edited copy of an earlier one.
    pub duplicate_rate: f64,
    /// Seed of the document stream; the `n`th document of a seed is always the same.
    pub seed: u64,
    /// The first document number (ids are `<id_prefix><n>`).
    pub start: u64,
    /// Id prefix.
    pub id_prefix: String,
    /// Report every this many documents (0: never): one JSON line on standard error with
    /// the slice's rate and latency percentiles, so that a long load shows how its rate
    /// changes with the size stored.
    pub slice: u64,
}

/// The `n`th document of a bench stream: `parts` corpus texts picked by a hash of `(seed, n)`,
/// or, at `duplicate_rate`, an edited repeat of an earlier document (punctuation changed,
/// a suffix added) so that the service has true duplicates to find.
pub fn bench_text(corpus: &[String], options: &BenchOptions, n: u64) -> String {
    let hash = |a: u64, b: u64| xxhash_rust::xxh3::xxh3_64_with_seed(&a.to_le_bytes(), b);
    let base = options.seed;
    let pick = hash(n, base ^ 0x5eed);
    let duplicate = n > 0 && (pick % 1_000_000) as f64 / 1e6 < options.duplicate_rate;
    let source = if duplicate {
        hash(n, base ^ 0xd0) % n
    } else {
        n
    };
    let mut text = String::new();
    for part in 0..options.parts as u64 {
        let at = hash(source * 64 + part, base) % corpus.len().max(1) as u64;
        if !text.is_empty() {
            text.push('，');
        }
        text.push_str(corpus.get(at as usize).map_or("", String::as_str));
    }
    text.push('。');
    if duplicate {
        text = text.replace('，', ",");
        text.push_str("（转载）");
    }
    text
}

/// Reads the bench corpus.
///
/// # Errors
/// An unreadable file or a line without the field.
pub fn read_corpus(path: &Path, field: &str) -> Result<Vec<String>, ClientError> {
    let name = path.display();
    let file = File::open(path).map_err(|e| ClientError(format!("{name}: cannot open: {e}")))?;
    let mut texts = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| ClientError(format!("{name}:{}: {e}", i + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| ClientError(format!("{name}:{}: {e}", i + 1)))?;
        let text = value[field]
            .as_str()
            .ok_or_else(|| ClientError(format!("{name}:{}: no text field {field:?}", i + 1)))?;
        texts.push(text.to_owned());
    }
    if texts.is_empty() {
        return Err(ClientError(format!("{name}: no texts")));
    }
    Ok(texts)
}

/// What a bench run measured, as `neardup client bench` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// The mode.
    pub mode: String,
    /// Requests answered.
    pub requests: u64,
    /// Documents (or texts) sent.
    pub documents: u64,
    /// Requests in flight.
    pub concurrency: usize,
    /// Documents per request.
    pub batch: u64,
    /// Seconds taken.
    pub seconds: f64,
    /// Requests per second.
    pub requests_per_second: f64,
    /// Documents per second.
    pub documents_per_second: f64,
    /// Latency percentiles in milliseconds.
    pub latency_ms: Latency,
    /// Answers by status.
    pub statuses: BTreeMap<u16, u64>,
    /// Documents stored.
    pub stored: u64,
    /// Documents answered as duplicates.
    pub duplicates: u64,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The 99.9th percentile.
    pub p999: f64,
    /// The slowest.
    pub max: f64,
}

/// What `dump` wrote.
#[derive(Serialize)]
struct Dumped<'a> {
    mode: &'a str,
    documents: u64,
}

/// Latencies in constant memory: counts in buckets 0.5% wide (a percentile is the upper
/// bound of its bucket, at most 0.5% above the true value), and the exact maximum. A bench of
/// 50 million requests holds the same few kilobytes as one of a thousand.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: f64,
}

/// The ratio between bucket bounds.
const BUCKET_RATIO: f64 = 1.005;

impl Histogram {
    /// Counts one latency of `seconds`.
    pub fn record(&mut self, seconds: f64) {
        let micros = (seconds * 1e6).max(0.0);
        let at = ((micros + 1.0).ln() / BUCKET_RATIO.ln()) as usize;
        if at >= self.counts.len() {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] += 1;
        self.total += 1;
        self.max = self.max.max(seconds);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// Latencies counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The percentile `p` (0 to 1) in milliseconds: the upper bound of the bucket holding
    /// the `ceil(p n)`-th latency, never above the maximum (0 when empty).
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((self.total as f64 * p).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (at, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let upper_micros = BUCKET_RATIO.powi(at as i32 + 1) - 1.0;
                return (upper_micros / 1000.0).min(self.max * 1000.0);
            }
        }
        self.max * 1000.0
    }

    /// The percentiles reported.
    fn latency(&self) -> Latency {
        Latency {
            p50: self.percentile_ms(0.5),
            p90: self.percentile_ms(0.9),
            p99: self.percentile_ms(0.99),
            p999: self.percentile_ms(0.999),
            max: self.max * 1000.0,
        }
    }
}

/// The slice being measured (see [`BenchOptions::slice`]).
struct Slice {
    started: Instant,
    /// Documents answered before it.
    first: u64,
    /// Documents answered so far.
    done: u64,
    latencies: Histogram,
}

/// One slice's line on standard error.
#[derive(Serialize)]
struct SliceReport {
    /// Documents answered at its end.
    documents: u64,
    /// Documents in it.
    slice_documents: u64,
    seconds: f64,
    documents_per_second: f64,
    latency_ms: Latency,
}

impl Slice {
    /// Counts `documents` answered in `seconds`; prints and starts a new slice at each
    /// boundary of `every` documents.
    fn record(&mut self, every: u64, documents: u64, seconds: f64) {
        self.done += documents;
        self.latencies.record(seconds);
        if self.done - self.first >= every {
            let elapsed = self.started.elapsed().as_secs_f64();
            let report = SliceReport {
                documents: self.done,
                slice_documents: self.done - self.first,
                seconds: elapsed,
                documents_per_second: (self.done - self.first) as f64 / elapsed,
                latency_ms: self.latencies.latency(),
            };
            eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
            self.started = Instant::now();
            self.first = self.done;
            self.latencies = Histogram::default();
        }
    }
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    latencies: Histogram,
    statuses: BTreeMap<u16, u64>,
    stored: u64,
    duplicates: u64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.latencies.merge(&other.latencies);
        for (status, count) in other.statuses {
            *self.statuses.entry(status).or_default() += count;
        }
        self.stored += other.stored;
        self.duplicates += other.duplicates;
    }

    /// Counts an answer, checked against what its route promises.
    fn count(
        &mut self,
        options: &BenchOptions,
        first: u64,
        status: u16,
        answer: &Value,
    ) -> Result<(), String> {
        match options.mode.as_str() {
            "batch" if status == 200 => {
                let per = per_request(options);
                let ids: Vec<String> = (first..first + per)
                    .map(|n| format!("{}{n}", options.id_prefix))
                    .collect();
                for result in answers::batch_results(answer, &ids)? {
                    match result {
                        BatchResult::Inserted(i) if i.stored => self.stored += 1,
                        BatchResult::Inserted(_) => self.duplicates += 1,
                        BatchResult::Refused(_) => {}
                    }
                }
                Ok(())
            }
            "check" => answers::check(Expected::Matches, status, answer),
            _ => {
                answers::check(Expected::Inserted, status, answer)?;
                match answer["stored"].as_bool() {
                    Some(true) => self.stored += 1,
                    Some(false) => self.duplicates += 1,
                    None => {}
                }
                Ok(())
            }
        }
    }
}

/// Documents per request.
fn per_request(options: &BenchOptions) -> u64 {
    if options.mode == "batch" {
        options.batch as u64
    } else {
        1
    }
}

/// The document numbered `n`.
fn bench_document(corpus: &[String], options: &BenchOptions, n: u64) -> InsertRequest {
    InsertRequest {
        id: format!("{}{n}", options.id_prefix),
        text: bench_text(corpus, options, n),
        time: None,
    }
}

/// The path and body of the request whose first document is numbered `first`.
fn bench_request(
    corpus: &[String],
    options: &BenchOptions,
    name: &str,
    first: u64,
) -> (String, Vec<u8>) {
    let (path, body) = match options.mode.as_str() {
        "insert" => (
            routes::fill(routes::DOCUMENTS, name, None),
            serde_json::to_vec(&bench_document(corpus, options, first)),
        ),
        "batch" => {
            let per = per_request(options);
            let documents = (first..first + per)
                .map(|n| bench_document(corpus, options, n))
                .collect();
            (
                routes::fill(routes::DOCUMENTS_BATCH, name, None),
                serde_json::to_vec(&InsertBatchRequest { documents }),
            )
        }
        _ => (
            routes::fill(routes::CHECK, name, None),
            serde_json::to_vec(&CheckRequest {
                text: bench_text(corpus, options, first),
                limit: None,
            }),
        ),
    };
    (path, body.unwrap_or_default())
}

/// The documents the other modes would send, as JSONL on standard output (for peers).
fn dump(corpus: &[String], options: &BenchOptions) -> Result<Value, ClientError> {
    let per = options.batch.max(1) as u64;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let written = |e: std::io::Error| ClientError(format!("writing: {e}"));
    for n in options.start..options.start + options.requests * per {
        let line = serde_json::to_string(&bench_document(corpus, options, n)).unwrap_or_default();
        writeln!(out, "{line}").map_err(written)?;
    }
    out.flush().map_err(written)?;
    let dumped = Dumped {
        mode: "dump",
        documents: options.requests * per,
    };
    Ok(serde_json::to_value(dumped).unwrap_or_default())
}

/// One of the `concurrency` senders: takes request numbers from `next` until all are sent.
async fn worker(
    client: Client,
    corpus: Arc<Vec<String>>,
    options: Arc<BenchOptions>,
    next: Arc<AtomicU64>,
    slice: Arc<Mutex<Slice>>,
) -> Result<Tally, ClientError> {
    let mut tally = Tally::default();
    let name = options.collection.as_str();
    loop {
        let r = next.fetch_add(1, Ordering::Relaxed);
        if r >= options.requests {
            break;
        }
        let first = options.start + r * per_request(&options);
        let (path, bytes) = bench_request(&corpus, &options, name, first);
        let sent = Instant::now();
        let (status, answer) = client.send(Method::POST, &path, Some(bytes)).await?;
        let seconds = sent.elapsed().as_secs_f64();
        tally.latencies.record(seconds);
        if options.slice > 0 {
            let documents = per_request(&options);
            let mut slice = slice.lock().unwrap_or_else(|e| e.into_inner());
            slice.record(options.slice, documents, seconds);
        }
        *tally.statuses.entry(status).or_default() += 1;
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| {
            ClientError(format!(
                "POST {path}: status {status}, the answer is not JSON ({e}) (is --url a \
                 neardup service?)"
            ))
        })?;
        tally
            .count(&options, first, status, &answer)
            .map_err(|why| {
                ClientError(format!(
                    "POST {path}: status {status}: {why} (is --url a neardup service?)"
                ))
            })?;
    }
    Ok(tally)
}

/// Sends `requests` requests, `concurrency` at a time, and measures throughput and latency.
///
/// # Errors
/// A failed connection, or an answer that is not what the route promises (a batch's results
/// must answer each document sent).
pub async fn bench(client: &Client, options: &BenchOptions) -> Result<Value, ClientError> {
    let corpus = Arc::new(read_corpus(&options.corpus, &options.text_field)?);
    if options.mode == "dump" {
        return dump(&corpus, options);
    }
    let options = Arc::new(options.clone());
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let slice = Arc::new(Mutex::new(Slice {
        started: start,
        first: 0,
        done: 0,
        latencies: Histogram::default(),
    }));
    let workers: Vec<_> = (0..options.concurrency.max(1))
        .map(|_| {
            tokio::spawn(worker(
                client.clone(),
                Arc::clone(&corpus),
                Arc::clone(&options),
                Arc::clone(&next),
                Arc::clone(&slice),
            ))
        })
        .collect();
    let mut tally = Tally::default();
    for handle in workers {
        tally.add(
            handle
                .await
                .map_err(|e| ClientError(format!("a worker failed: {e}")))??,
        );
    }
    let seconds = start.elapsed().as_secs_f64();
    let per = per_request(&options);
    let requests = tally.latencies.count();
    let report = BenchReport {
        mode: options.mode.clone(),
        requests,
        documents: requests * per,
        concurrency: options.concurrency,
        batch: per,
        seconds,
        requests_per_second: requests as f64 / seconds,
        documents_per_second: (requests * per) as f64 / seconds,
        latency_ms: tally.latencies.latency(),
        statuses: tally.statuses,
        stored: tally.stored,
        duplicates: tally.duplicates,
    };
    Ok(serde_json::to_value(report).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Percentiles of the histogram are within its 0.5% bucket of the exact ones, never
    /// below them, and its memory does not grow with the count.
    #[test]
    fn histogram_percentiles_are_within_half_a_percent_in_constant_memory() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut exact = Vec::new();
        let mut histogram = Histogram::default();
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // 20 µs to about 2 s, log-spread.
            let seconds = 2e-5 * (1.0 + (state % 100_000) as f64).powf(1.0);
            exact.push(seconds);
            histogram.record(seconds);
        }
        exact.sort_by(f64::total_cmp);
        for p in [0.5, 0.9, 0.99, 0.999, 1.0] {
            let at = ((exact.len() as f64 * p).ceil() as usize).clamp(1, exact.len()) - 1;
            let want = exact[at] * 1000.0;
            let got = histogram.percentile_ms(p);
            assert!(got >= want * 0.999_999, "p{p}: {got} < {want}");
            assert!(got <= want * 1.006, "p{p}: {got} > {want} + 0.6%");
        }
        assert_eq!(histogram.count(), 200_000);
        let buckets = histogram.counts.len();
        for _ in 0..1_000_000 {
            histogram.record(0.5);
        }
        assert_eq!(
            histogram.counts.len(),
            buckets,
            "no growth below the maximum"
        );
        assert!(buckets < 5000, "{buckets} buckets");
    }
}
