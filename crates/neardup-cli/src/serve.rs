//! `neardup serve`: the online dedup service, and `neardup client`: talk to it.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct;
use neardup_service::client::{self, BenchOptions, Client, LoadOptions};
use neardup_service::http::{self, HttpConfig};
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
    /// A file holding the bearer token clients must send (else the environment variable
    /// NEARDUP_TOKEN; none: no authentication, allowed on loopback only).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
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

pub fn serve(args: &ServeArgs) -> Result<()> {
    let config = HttpConfig {
        token: token(args.token_file.as_ref())?,
        max_body_bytes: args.max_body_bytes,
        max_batch: args.max_batch,
        max_text_bytes: args.max_text_bytes,
        max_collections: args.max_collections,
        ..HttpConfig::default()
    };
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
        let client = Client::new(&url, token)?;
        let c = |name: &str| format!("/v1/collections/{}", client::segment(name));
        use neardup_service::client::Method;
        let (status, answer) = match &args.command {
            ClientCommand::Create { name, settings } => {
                let settings: Value = serde_json::from_str(settings)
                    .with_context(|| format!("--settings {settings:?}: not JSON"))?;
                client.json(Method::PUT, &c(name), Some(&settings)).await?
            }
            ClientCommand::List => client.json(Method::GET, "/v1/collections", None).await?,
            ClientCommand::Show { name } => client.json(Method::GET, &c(name), None).await?,
            ClientCommand::Drop { name } => client.json(Method::DELETE, &c(name), None).await?,
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
                client.json(Method::POST, &path, Some(&body)).await?
            }
            ClientCommand::Check { name, limit, text } => {
                let body = json!({"text": read_text(text)?, "limit": limit});
                let path = format!("{}/check", c(name));
                client.json(Method::POST, &path, Some(&body)).await?
            }
            ClientCommand::Get { name, id } => {
                let path = format!("{}/documents/{}", c(name), client::segment(id));
                client.json(Method::GET, &path, None).await?
            }
            ClientCommand::Delete { name, id } => {
                let path = format!("{}/documents/{}", c(name), client::segment(id));
                client.json(Method::DELETE, &path, None).await?
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
