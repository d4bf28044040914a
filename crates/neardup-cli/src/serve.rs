//! `neardup serve`: the online dedup service, and `neardup client`: talk to it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct;
use neardup_service::client::answers::Expected;
use neardup_service::client::{self, BenchOptions, Client, LoadOptions};
use neardup_service::http::{self, HttpConfig, Tokens};
use serde_json::{json, Value};

use crate::dedup::parse_size;

#[derive(Args)]
pub struct ServeArgs {
    /// The folder of the stored collections (created if absent; one service per folder).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The address to listen on; beyond loopback a token is required.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    /// A file holding a bearer token with every right (admin on every collection; else the
    /// environment variable NEARDUP_TOKEN). With neither this nor --tokens-file: no
    /// authentication, allowed on loopback only.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// A file of scoped tokens, one grant a line: `SCOPE COLLECTION TOKEN` with SCOPE read
    /// (check, get, show), write (read + insert, delete) or admin (write + create, drop),
    /// COLLECTION a name or * for all; `#` starts a comment line (see docs/service.md).
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// The most open connections (default: half the open-files limit, at most 10,000); at the
    /// limit a new connection closes the longest idle one.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Seconds a connection may wait for a request (its first, or the next one) before it is
    /// closed.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(http::DEFAULT_IDLE_TIMEOUT))]
    idle_timeout: Seconds,
    /// Seconds from the first byte of a request to the end of its headers.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(http::DEFAULT_HEADER_TIMEOUT))]
    header_timeout: Seconds,
    /// Seconds a request body may send nothing before it is answered 408.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(http::DEFAULT_BODY_TIMEOUT))]
    body_timeout: Seconds,
    /// The largest request body.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    max_body_bytes: usize,
    /// The most documents or texts in one batch request.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_batch: usize,
    /// The longest text accepted.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    max_text_bytes: usize,
    /// The most collections (each costs a writer thread and an open file per segment); a
    /// creation beyond it is refused with 409.
    #[arg(long, value_name = "N", default_value_t = neardup_service::DEFAULT_MAX_COLLECTIONS)]
    max_collections: usize,
}

fn token(file: Option<&PathBuf>) -> Result<Option<String>> {
    let token = match file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--token-file {}: cannot read", path.display()))?
                .trim()
                .to_owned(),
        ),
        None => std::env::var("NEARDUP_TOKEN").ok(),
    };
    match token {
        Some(t) if t.is_empty() => bail!("the token is empty (--token-file or NEARDUP_TOKEN)"),
        Some(t) if t.chars().any(|c| c.is_control() || c == ' ') => {
            bail!("the token holds spaces or control characters")
        }
        other => Ok(other),
    }
}

/// A duration given in seconds on the command line.
#[derive(Debug, Clone, Copy)]
struct Seconds(Duration);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.as_secs_f64())
    }
}

/// A positive number of seconds (fractions allowed).
fn parse_seconds(text: &str) -> Result<Seconds, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 1e6 => {
            Ok(Seconds(Duration::from_secs_f64(seconds)))
        }
        _ => Err(format!(
            "{text:?}: expected a number of seconds greater than 0 (at most 1000000)"
        )),
    }
}

pub fn serve(args: &ServeArgs) -> Result<()> {
    // Each connection and each collection's segments hold a file descriptor.
    http::raise_open_files_limit();
    let tokens = match &args.tokens_file {
        Some(path) => Tokens::read(path).map_err(|e| anyhow!("--tokens-file: {}", e.message))?,
        None => Tokens::new(),
    };
    let mut config = HttpConfig {
        token: token(args.token_file.as_ref())?,
        tokens,
        idle_timeout: args.idle_timeout.0,
        header_timeout: args.header_timeout.0,
        body_timeout: args.body_timeout.0,
        max_body_bytes: args.max_body_bytes,
        max_batch: args.max_batch,
        max_text_bytes: args.max_text_bytes,
        max_collections: args.max_collections,
        ..HttpConfig::default()
    };
    if let Some(max) = args.max_connections {
        if max == 0 {
            bail!("--max-connections 0: at least one connection is needed");
        }
        config.max_connections = max;
    }
    let data_dir = args.data_dir.clone();
    http::run(&args.data_dir, &args.listen, config, |addr| {
        eprintln!(
            "neardup: serving http://{addr} (data in {}); SIGTERM or Ctrl-C stops after the \
             queued writes",
            data_dir.display()
        );
    })
    .map_err(|e| match &e.field {
        Some(field) => anyhow!("--{}: {}", field.replace('_', "-"), e.message),
        None => anyhow!("{}", e.message),
    })
}

#[derive(Args)]
pub struct ClientArgs {
    /// The service (else the environment variable NEARDUP_URL, else http://127.0.0.1:8080).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// A file holding the bearer token (else the environment variable NEARDUP_TOKEN).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Seconds to wait for a connection to open.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(client::DEFAULT_CONNECT_TIMEOUT))]
    connect_timeout: Seconds,
    /// Seconds to wait for each whole answer (a batch of `load` included).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(client::DEFAULT_ANSWER_TIMEOUT))]
    timeout: Seconds,
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(Subcommand)]
enum ClientCommand {
    /// Create a collection: --settings '{"method": "simhash", "retention": "48h"}'.
    Create {
        name: String,
        /// The settings as JSON (`{}` = defaults).
        #[arg(long, default_value = "{}")]
        settings: String,
    },
    /// List the collections.
    List,
    /// Show a collection's settings and counts.
    Show { name: String },
    /// Drop a collection and its documents.
    Drop { name: String },
    /// Check-and-insert one document.
    Insert {
        name: String,
        /// The document's id.
        #[arg(long)]
        id: String,
        /// Its own time: seconds since the epoch or RFC 3339.
        #[arg(long)]
        time: Option<String>,
        /// The text (`-`: read standard input).
        text: String,
    },
    /// Check a text against a collection (nothing is stored).
    Check {
        name: String,
        /// The most matches to show.
        #[arg(long, default_value_t = 10)]
        limit: u64,
        /// The text (`-`: read standard input).
        text: String,
    },
    /// Show a stored document.
    Get { name: String, id: String },
    /// Delete a stored document.
    Delete { name: String, id: String },
    /// Stream a JSONL file into a collection through the batch route; prints a summary.
    Load {
        name: String,
        /// The JSONL file (`-`: standard input).
        input: PathBuf,
        #[arg(long, default_value = "id")]
        id_field: String,
        #[arg(long, default_value = "text")]
        text_field: String,
        /// The field holding each document's own time, if any.
        #[arg(long)]
        time_field: Option<String>,
        /// Documents per request.
        #[arg(long, default_value_t = 1000)]
        batch: usize,
        /// Requests in flight.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Write every answer, in input order, to this JSONL file.
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Load-test a collection with documents composed from a corpus; prints throughput and
    /// latency percentiles as JSON.
    Bench {
        name: String,
        /// insert (one document per request), batch, check, or dump (print the documents
        /// as JSONL instead of sending them: requests x batch of them).
        #[arg(long, default_value = "insert", value_parser = ["insert", "batch", "check", "dump"])]
        mode: String,
        /// Requests to send.
        #[arg(long, default_value_t = 10_000)]
        requests: u64,
        /// Documents per request in batch mode.
        #[arg(long, default_value_t = 1000)]
        batch: usize,
        /// Requests in flight.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// A JSONL corpus whose texts are composed into documents.
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long, default_value = "text")]
        text_field: String,
        /// Corpus texts per document.
        #[arg(long, default_value_t = 5)]
        parts: usize,
        /// Fraction of documents that are edited copies of earlier ones.
        #[arg(long, default_value_t = 0.1)]
        duplicate_rate: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The first document number (ids continue from it).
        #[arg(long, default_value_t = 0)]
        start: u64,
        #[arg(long, default_value = "doc-")]
        id_prefix: String,
    },
}

fn read_text(text: &str) -> Result<String> {
    if text == "-" {
        let mut buffer = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut buffer)
            .context("reading the text from standard input")?;
        Ok(buffer)
    } else {
        Ok(text.to_owned())
    }
}

fn show(status: u16, answer: &Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(answer)?);
    if status >= 400 {
        let message = answer["error"]["message"].as_str().unwrap_or("error");
        bail!("the service answered {status}: {message}");
    }
    Ok(())
}

pub fn client(args: &ClientArgs) -> Result<()> {
    let url = args
        .url
        .clone()
        .or_else(|| std::env::var("NEARDUP_URL").ok())
        .unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let token = token(args.token_file.as_ref())?;
    let runtime = client::runtime()?;
    runtime.block_on(async {
        let client =
            Client::new(&url, token)?.with_timeouts(args.connect_timeout.0, args.timeout.0);
        let c = |name: &str| format!("/v1/collections/{}", client::segment(name));
        use neardup_service::client::Method;
        let (status, answer) = match &args.command {
            ClientCommand::Create { name, settings } => {
                let settings: Value = serde_json::from_str(settings)
                    .with_context(|| format!("--settings {settings:?}: not JSON"))?;
                let path = c(name);
                let expected = Expected::Collection;
                client
                    .call(Method::PUT, &path, Some(&settings), expected)
                    .await?
            }
            ClientCommand::List => {
                let expected = Expected::Collections;
                client
                    .call(Method::GET, "/v1/collections", None, expected)
                    .await?
            }
            ClientCommand::Show { name } => {
                let expected = Expected::Collection;
                client.call(Method::GET, &c(name), None, expected).await?
            }
            ClientCommand::Drop { name } => {
                let expected = Expected::Dropped;
                client
                    .call(Method::DELETE, &c(name), None, expected)
                    .await?
            }
            ClientCommand::Insert {
                name,
                id,
                time,
                text,
            } => {
                let mut body = json!({"id": id, "text": read_text(text)?});
                if let Some(time) = time {
                    body["time"] = match time.parse::<f64>() {
                        Ok(seconds) => json!(seconds),
                        Err(_) => json!(time),
                    };
                }
                let path = format!("{}/documents", c(name));
                let expected = Expected::Inserted;
                client
                    .call(Method::POST, &path, Some(&body), expected)
                    .await?
            }
            ClientCommand::Check { name, limit, text } => {
                let body = json!({"text": read_text(text)?, "limit": limit});
                let path = format!("{}/check", c(name));
                let expected = Expected::Matches;
                client
                    .call(Method::POST, &path, Some(&body), expected)
                    .await?
            }
            ClientCommand::Get { name, id } => {
                let path = format!("{}/documents/{}", c(name), client::segment(id));
                client
                    .call(Method::GET, &path, None, Expected::Document)
                    .await?
            }
            ClientCommand::Delete { name, id } => {
                let path = format!("{}/documents/{}", c(name), client::segment(id));
                client
                    .call(Method::DELETE, &path, None, Expected::Deleted)
                    .await?
            }
            ClientCommand::Load {
                name,
                input,
                id_field,
                text_field,
                time_field,
                batch,
                concurrency,
                answers,
            } => {
                let options = LoadOptions {
                    collection: name.clone(),
                    input: input.clone(),
                    id_field: id_field.clone(),
                    text_field: text_field.clone(),
                    time_field: time_field.clone(),
                    batch: (*batch).max(1),
                    concurrency: (*concurrency).max(1),
                };
                // The answers file is an output like dedup's: never the input, written to a
                // temporary file and renamed only when the whole load succeeded.
                let mut out = match answers {
                    Some(path) => {
                        let path = path.to_string_lossy();
                        let input = input.to_string_lossy();
                        check_distinct(&[&input], &[("--answers", &path)])?;
                        Some(AtomicOutput::create(&path)?)
                    }
                    None => None,
                };
                let writer = out.as_mut().map(|o| o.writer());
                let summary = client::load(&client, &options, writer).await?;
                if let Some(out) = out {
                    out.commit()?;
                }
                (200, summary.to_json())
            }
            ClientCommand::Bench {
                name,
                mode,
                requests,
                batch,
                concurrency,
                corpus,
                text_field,
                parts,
                duplicate_rate,
                seed,
                start,
                id_prefix,
            } => {
                let options = BenchOptions {
                    collection: name.clone(),
                    mode: mode.clone(),
                    requests: *requests,
                    batch: (*batch).max(1),
                    concurrency: (*concurrency).max(1),
                    corpus: corpus.clone(),
                    text_field: text_field.clone(),
                    parts: (*parts).max(1),
                    duplicate_rate: *duplicate_rate,
                    seed: *seed,
                    start: *start,
                    id_prefix: id_prefix.clone(),
                };
                let answer = client::bench(&client, &options).await?;
                if options.mode == "dump" {
                    return Ok(());
                }
                (200, answer)
            }
        };
        show(status, &answer)
    })
}
