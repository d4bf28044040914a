//! A small HTTP/1.1 client of the service: single calls, the JSONL bulk loader, and the load
//! generator behind `neardup client bench`.
//!
//! Every call has a connect timeout and an answer timeout (a server that accepts and never
//! answers is an error, not a hang), and every answer is checked against what its route
//! promises ([`answers`]): a batch must answer each document sent, in order.

pub mod answers;

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
pub use hyper::Method;
use hyper::Request;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

use answers::{BatchResult, Expected};

/// How long a connection may take to open, by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answer may take, from sending the request to its last byte, by default.
pub const DEFAULT_ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an idle pooled connection is kept: well under the service's idle timeout (30 s
/// by default), so that the client never sends on a connection the service is closing.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// A client error: the connection, or an answer that is not what the route promises.
#[derive(Debug)]
pub struct ClientError(pub String);

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

/// A connection pool to one service.
#[derive(Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>,
    answer_timeout: Duration,
}

/// The base of every request path: `http://host:port` and the path prefix of `url`, if any,
/// without a trailing `/`.
fn base_url(url: &str) -> Result<String, ClientError> {
    let bad = |why: &str| {
        ClientError(format!(
            "--url {url:?}: {why} (expected http://host:port or http://host:port/prefix; the \
             service speaks plain HTTP: put TLS in a proxy in front of it)"
        ))
    };
    let uri: hyper::Uri = url.parse().map_err(|_| bad("not a URL"))?;
    if uri.scheme_str() != Some("http") {
        return Err(bad("not an http:// URL"));
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("a user name in the URL is not sent; use --token-file"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(bad("a query or fragment cannot prefix the routes"));
    }
    let prefix = uri.path().trim_end_matches('/');
    Ok(format!("http://{authority}{prefix}"))
}

fn connector(connect_timeout: Duration) -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(connect_timeout));
    connector
}

/// An error and its causes, as one line (`client error (Connect): tcp connect error:
/// Connection refused (os error 111)`).
fn causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

impl Client {
    /// A client of the service at `url` (`http://127.0.0.1:8080`, or with a path prefix when
    /// a proxy serves it under one: `http://proxy/neardup`), sending `token` when given, with
    /// the default timeouts.
    ///
    /// # Errors
    /// A URL that is not `http://host:port` with an optional path.
    pub fn new(url: &str, token: Option<String>) -> Result<Client, ClientError> {
        let base = base_url(url)?;
        let http = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector(DEFAULT_CONNECT_TIMEOUT));
        Ok(Client {
            base,
            token,
            http,
            answer_timeout: DEFAULT_ANSWER_TIMEOUT,
        })
    }

    /// The same client with other timeouts: `connect` to open a connection, `answer` from
    /// sending a request to the last byte of its answer.
    pub fn with_timeouts(mut self, connect: Duration, answer: Duration) -> Client {
        self.http = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector(connect));
        self.answer_timeout = answer;
        self
    }

    /// Sends a request with a raw body; the status and the body.
    ///
    /// # Errors
    /// The connection fails, or the whole answer does not arrive within the answer timeout.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes), ClientError> {
        let url = format!("{}{path}", self.base);
        let seconds = self.answer_timeout.as_secs_f64();
        tokio::time::timeout(
            self.answer_timeout,
            self.exchange(method.clone(), &url, body),
        )
        .await
        .map_err(|_| {
            ClientError(format!(
                "{method} {url}: no complete answer within {seconds} s (--timeout)"
            ))
        })?
    }

    async fn exchange(
        &self,
        method: Method,
        url: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes), ClientError> {
        let mut request = Request::builder().method(method.clone()).uri(url);
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| ClientError(format!("{method} {url}: {e}")))?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| ClientError(format!("{method} {url}: {}", causes(&e))))?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| {
                ClientError(format!(
                    "{method} {url}: reading the answer: {}",
                    causes(&e)
                ))
            })?
            .to_bytes();
        Ok((status, bytes))
    }

    /// Sends JSON and reads JSON.
    ///
    /// # Errors
    /// The connection fails or the answer is not JSON.
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), ClientError> {
        let bytes = body.map(|b| serde_json::to_vec(b).unwrap_or_default());
        let (status, answer) = self.send(method.clone(), path, bytes).await?;
        let value = serde_json::from_slice(&answer).map_err(|e| {
            ClientError(format!(
                "{method} {path}: status {status}, the answer is not JSON ({e}): {}",
                String::from_utf8_lossy(&answer[..answer.len().min(200)])
            ))
        })?;
        Ok((status, value))
    }

    /// Sends JSON and reads JSON, checking the answer against what the route promises
    /// (`expected` on success, an error body on failure).
    ///
    /// # Errors
    /// The connection fails, or the answer is not JSON or not of the promised shape.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        expected: Expected,
    ) -> Result<(u16, Value), ClientError> {
        let (status, answer) = self.json(method.clone(), path, body).await?;
        answers::check(expected, status, &answer).map_err(|why| {
            ClientError(format!(
                "{method} {}{path}: status {status}: {why} (is --url a neardup service?)",
                self.base
            ))
        })?;
        Ok((status, answer))
    }
}

/// Percent-encodes a path segment (collection names and ids).
pub fn segment(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the bulk loader reads from each JSONL line.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The collection.
    pub collection: String,
    /// The JSONL file (`-`: standard input).
    pub input: PathBuf,
    /// The id field.
    pub id_field: String,
    /// The text field.
    pub text_field: String,
    /// The time field, when documents carry their own time.
    pub time_field: Option<String>,
    /// Documents per request.
    pub batch: usize,
    /// Requests in flight.
    pub concurrency: usize,
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadSummary {
    /// Documents sent.
    pub sent: u64,
    /// Stored.
    pub stored: u64,
    /// Answered as duplicates.
    pub duplicates: u64,
    /// Refused, by error code.
    pub refused: std::collections::BTreeMap<String, u64>,
    /// The first few refusals (id and message).
    pub examples: Vec<String>,
    /// Seconds taken.
    pub seconds: f64,
}

impl LoadSummary {
    /// The JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "sent": self.sent,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "refused": self.refused,
            "refused_examples": self.examples,
            "seconds": self.seconds,
            "documents_per_second": self.sent as f64 / self.seconds.max(1e-9),
        })
    }
}

/// Streams a JSONL file into a collection through the batch route, `concurrency` requests in
/// flight; every answer is written to `answers`, in input order, when given (the caller makes
/// it an atomic output and commits it on success).
///
/// # Errors
/// An unreadable file or a line without the id or text (named by file, line and field), a
/// failed connection, a request the service refused as a whole, or an answer that does not
/// answer each document sent, in order (then the load stops: it is not a neardup service, or
/// something in between changed the answer); the summary of what was answered before is in
/// the message.
pub async fn load(
    client: &Client,
    options: &LoadOptions,
    mut answers: Option<&mut dyn Write>,
) -> Result<LoadSummary, ClientError> {
    let start = Instant::now();
    let name = options.input.display().to_string();
    let reader: Box<dyn BufRead> = if options.input == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            File::open(&options.input)
                .map_err(|e| ClientError(format!("{name}: cannot open: {e}")))?,
        ))
    };
    let path = format!(
        "/v1/collections/{}/documents/batch",
        segment(&options.collection)
    );
    let mut summary = LoadSummary::default();
    let mut in_flight: VecDeque<tokio::task::JoinHandle<Result<Answered, ClientError>>> =
        VecDeque::new();
    let mut batch: Vec<Value> = Vec::new();
    // The input line of each document of the batch, to name it when the batch is refused.
    let mut batch_lines: Vec<u64> = Vec::new();
    let mut lines = reader.lines();
    let mut line_number = 0u64;
    let mut finish = |summary: &mut LoadSummary, answered: Answered| -> Result<(), ClientError> {
        let raw = answered.answer["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (result, raw) in answered.results.into_iter().zip(&raw) {
            summary.sent += 1;
            match result {
                BatchResult::Refused(refused) => {
                    *summary.refused.entry(refused.error.code).or_default() += 1;
                    if summary.examples.len() < 5 {
                        summary
                            .examples
                            .push(format!("{}: {}", refused.id, refused.error.message));
                    }
                }
                BatchResult::Inserted(inserted) if inserted.stored => summary.stored += 1,
                BatchResult::Inserted(_) => summary.duplicates += 1,
            }
            if let Some(out) = answers.as_mut() {
                serde_json::to_writer(&mut *out, raw)
                    .and_then(|()| out.write_all(b"\n").map_err(serde_json::Error::io))
                    .map_err(|e| ClientError(format!("writing the answers: {e}")))?;
            }
        }
        Ok(())
    };
    loop {
        let line = lines.next();
        let end = line.is_none();
        if let Some(line) = line {
            line_number += 1;
            let line = line.map_err(|e| ClientError(format!("{name}:{line_number}: {e}")))?;
            if line.trim().is_empty() {
                continue;
            }
            let record: Value = serde_json::from_str(&line).map_err(|e| {
                ClientError(format!("{name}:{line_number}: not a JSON object: {e}"))
            })?;
            let field = |f: &str| -> Result<&Value, ClientError> {
                record
                    .get(f)
                    .ok_or_else(|| ClientError(format!("{name}:{line_number}: no field {f:?}")))
            };
            let id = match field(&options.id_field)? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(ClientError(format!(
                        "{name}:{line_number}: field {:?} is {other}, not a string or a number",
                        options.id_field
                    )))
                }
            };
            let text = field(&options.text_field)?.as_str().ok_or_else(|| {
                ClientError(format!(
                    "{name}:{line_number}: field {:?} is not a string",
                    options.text_field
                ))
            })?;
            let mut document = json!({"id": id, "text": text});
            if let Some(time_field) = &options.time_field {
                if let Some(time) = record.get(time_field) {
                    document["time"] = time.clone();
                }
            }
            batch.push(document);
            batch_lines.push(line_number);
        }
        if batch.len() >= options.batch || (end && !batch.is_empty()) {
            let ids: Vec<String> = batch
                .iter()
                .map(|d| d["id"].as_str().unwrap_or_default().to_owned())
                .collect();
            let body = json!({"documents": std::mem::take(&mut batch)});
            let lines = std::mem::take(&mut batch_lines);
            let client = client.clone();
            let path = path.clone();
            let name = name.clone();
            in_flight.push_back(tokio::spawn(async move {
                let (status, answer) = client.json(Method::POST, &path, Some(&body)).await?;
                let span = match (lines.first(), lines.last()) {
                    (Some(first), Some(last)) => format!("{name}:{first}-{last}"),
                    _ => name.clone(),
                };
                if status == 200 {
                    let results = answers::batch_results(&answer, &ids).map_err(|why| {
                        ClientError(format!(
                            "{span}: POST {path}: {why}; the load stops (is --url a neardup \
                             service?)"
                        ))
                    })?;
                    return Ok(Answered { answer, results });
                }
                let refusal = match status {
                    400..=599 => answers::check(Expected::Inserted, status, &answer),
                    _ => Err(format!("unexpected status {status}")),
                };
                refusal.map_err(|why| {
                    ClientError(format!(
                        "{span}: POST {path}: status {status}: {why} (is --url a neardup \
                         service?)"
                    ))
                })?;
                // A field such as `documents[3].text` names the document: give its line.
                let error = &answer["error"];
                let field = error["field"].as_str().unwrap_or_default();
                let at = field
                    .strip_prefix("documents[")
                    .and_then(|rest| rest.split(']').next())
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| lines.get(i));
                let message = error["message"].as_str().unwrap_or_default();
                Err(ClientError(match at {
                    Some(line) => format!(
                        "{name}:{line}: the service refused the batch holding this line \
                         ({status}, field {field}): {message}"
                    ),
                    None => format!(
                        "{span}: the service refused the batch ({status}, {}): {message}",
                        error["code"].as_str().unwrap_or_default()
                    ),
                }))
            }));
        }
        while in_flight.len() >= options.concurrency.max(1) || (end && !in_flight.is_empty()) {
            let Some(handle) = in_flight.pop_front() else {
                break;
            };
            let answered = handle
                .await
                .map_err(|e| ClientError(format!("a request task failed: {e}")))?
                .map_err(|e| {
                    ClientError(format!(
                        "{e} (after {} documents were answered: {} stored, {} duplicates)",
                        summary.sent, summary.stored, summary.duplicates
                    ))
                })?;
            finish(&mut summary, answered)?;
        }
        if end {
            break;
        }
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// A batch's answer and its results, checked against the ids sent.
struct Answered {
    answer: Value,
    results: Vec<BatchResult>,
}

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

/// Sends `requests` requests, `concurrency` at a time, and measures throughput and latency.
///
/// # Errors
/// A failed connection, or an answer that is not what the route promises (a batch's results
/// must answer each document sent).
pub async fn bench(client: &Client, options: &BenchOptions) -> Result<Value, ClientError> {
    let corpus = Arc::new(read_corpus(&options.corpus, &options.text_field)?);
    if options.mode == "dump" {
        // The documents the other modes would send, as JSONL on standard output (for peers).
        let per = options.batch.max(1) as u64;
        let mut out = BufWriter::new(std::io::stdout().lock());
        for n in options.start..options.start + options.requests * per {
            let line = json!({"id": format!("{}{n}", options.id_prefix), "text": bench_text(&corpus, options, n)});
            writeln!(out, "{line}").map_err(|e| ClientError(format!("writing: {e}")))?;
        }
        out.flush()
            .map_err(|e| ClientError(format!("writing: {e}")))?;
        return Ok(json!({"mode": "dump", "documents": options.requests * per}));
    }
    let options = Arc::new(options.clone());
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..options.concurrency.max(1) {
        let client = client.clone();
        let corpus = Arc::clone(&corpus);
        let options = Arc::clone(&options);
        let next = Arc::clone(&next);
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut statuses: std::collections::BTreeMap<u16, u64> = Default::default();
            let mut stored = 0u64;
            let mut duplicates = 0u64;
            let name = segment(&options.collection);
            loop {
                let r = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if r >= options.requests {
                    break;
                }
                let per = if options.mode == "batch" {
                    options.batch as u64
                } else {
                    1
                };
                let first = options.start + r * per;
                let (path, body) = match options.mode.as_str() {
                    "insert" => (
                        format!("/v1/collections/{name}/documents"),
                        json!({"id": format!("{}{first}", options.id_prefix),
                               "text": bench_text(&corpus, &options, first)}),
                    ),
                    "batch" => (
                        format!("/v1/collections/{name}/documents/batch"),
                        json!({"documents": (first..first + per).map(|n| json!({
                            "id": format!("{}{n}", options.id_prefix),
                            "text": bench_text(&corpus, &options, n)})).collect::<Vec<_>>()}),
                    ),
                    _ => (
                        format!("/v1/collections/{name}/check"),
                        json!({"text": bench_text(&corpus, &options, first)}),
                    ),
                };
                let bytes = serde_json::to_vec(&body).unwrap_or_default();
                let sent = Instant::now();
                let (status, answer) = client.send(Method::POST, &path, Some(bytes)).await?;
                latencies.push(sent.elapsed().as_secs_f64());
                *statuses.entry(status).or_default() += 1;
                let answer: Value = serde_json::from_slice(&answer).map_err(|e| {
                    ClientError(format!(
                        "POST {path}: status {status}, the answer is not JSON ({e}) (is --url \
                         a neardup service?)"
                    ))
                })?;
                let counted = match options.mode.as_str() {
                    "batch" if status == 200 => {
                        let ids: Vec<String> = (first..first + per)
                            .map(|n| format!("{}{n}", options.id_prefix))
                            .collect();
                        answers::batch_results(&answer, &ids).map(|results| {
                            for result in results {
                                match result {
                                    BatchResult::Inserted(i) if i.stored => stored += 1,
                                    BatchResult::Inserted(_) => duplicates += 1,
                                    BatchResult::Refused(_) => {}
                                }
                            }
                        })
                    }
                    "check" => answers::check(Expected::Matches, status, &answer),
                    _ => answers::check(Expected::Inserted, status, &answer).map(|()| match answer
                        ["stored"]
                        .as_bool()
                    {
                        Some(true) => stored += 1,
                        Some(false) => duplicates += 1,
                        None => {}
                    }),
                };
                counted.map_err(|why| {
                    ClientError(format!(
                        "POST {path}: status {status}: {why} (is --url a neardup service?)"
                    ))
                })?;
            }
            Ok::<_, ClientError>((latencies, statuses, stored, duplicates))
        }));
    }
    let mut latencies = Vec::new();
    let mut statuses: std::collections::BTreeMap<u16, u64> = Default::default();
    let (mut stored, mut duplicates) = (0, 0);
    for worker in workers {
        let (l, s, st, du) = worker
            .await
            .map_err(|e| ClientError(format!("a worker failed: {e}")))??;
        latencies.extend(l);
        for (k, v) in s {
            *statuses.entry(k).or_default() += v;
        }
        stored += st;
        duplicates += du;
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let q = |p: f64| -> f64 {
        if latencies.is_empty() {
            return 0.0;
        }
        let at = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[at] * 1000.0
    };
    let per = if options.mode == "batch" {
        options.batch as u64
    } else {
        1
    };
    let requests = latencies.len() as u64;
    Ok(json!({
        "mode": options.mode,
        "requests": requests,
        "documents": requests * per,
        "concurrency": options.concurrency,
        "batch": per,
        "seconds": seconds,
        "requests_per_second": requests as f64 / seconds,
        "documents_per_second": (requests * per) as f64 / seconds,
        "latency_ms": {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999), "max": q(1.0)},
        "statuses": statuses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "stored": stored,
        "duplicates": duplicates,
    }))
}

/// A tokio runtime for the CLI's client commands.
///
/// # Errors
/// The runtime cannot start.
pub fn runtime() -> Result<tokio::runtime::Runtime, ClientError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ClientError(format!("cannot start the async runtime: {e}")))
}
