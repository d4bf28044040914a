//! `neardup client`: the service's routes from the command line, the bulk loader and the
//! load generator. Bodies are the request types of `neardup_service::api`.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct;
use neardup_service::api::{CheckRequest, InsertRequest};
use neardup_service::client::{self, BenchOptions, Client, LoadOptions};
use serde_json::Value;

use super::{parse_seconds, token, Seconds};

#[derive(Args)]
pub struct ClientArgs {
    /// The service (else the environment variable NEARDUP_URL, else http://127.0.0.1:8080).
    #[arg(long, global = true, value_name = "URL")]
    url: Option<String>,
    /// A file holding the bearer token (else the environment variable NEARDUP_TOKEN).
    #[arg(long, global = true, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Seconds to wait for a connection to open.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(client::DEFAULT_CONNECT_TIMEOUT))]
    connect_timeout: Seconds,
    /// Seconds to wait for each whole answer (a batch of `load` included).
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_seconds,
          default_value_t = Seconds(client::DEFAULT_ANSWER_TIMEOUT))]
    timeout: Seconds,
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(Subcommand)]
enum ClientCommand {
    /// Create a collection: --settings '{"method": "simhash", "retention": "48h"}'.
    Create {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
        /// The settings as JSON (`{}` = defaults).
        #[arg(long, default_value = "{}")]
        settings: String,
    },
    /// List the collections.
    List,
    /// Show a collection's settings and counts.
    Show {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
    },
    /// Drop a collection and its documents.
    Drop {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
    },
    /// Check-and-insert one document.
    Insert {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
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
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
        /// The most matches to show.
        #[arg(long, default_value_t = 10)]
        limit: u64,
        /// The text (`-`: read standard input).
        text: String,
    },
    /// Show a stored document.
    Get {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
        /// The document's id.
        id: String,
    },
    /// Delete a stored document.
    Delete {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
        /// The document's id.
        id: String,
    },
    /// Stream a JSONL file into a collection through the batch route; prints a summary.
    Load {
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
        name: String,
        /// The JSONL file (`-`: standard input).
        input: PathBuf,
        /// The field holding each document's id. A stored document needs an id of its own
        /// (record numbers, `dedup`'s default, would meet again in the next load), so a line
        /// without it stops the load, listing the fields it has.
        #[arg(long, default_value = "id")]
        id_field: String,
        /// The field holding the text.
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
        /// The collection's name (1 to 64 of A-Z, a-z, 0-9, `_`, `-`, `.`; not starting with `.`).
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
        /// Print a JSON line on standard error every N documents answered: the slice's
        /// documents per second and latency percentiles (0: never).
        #[arg(long, default_value_t = 0, value_name = "N")]
        slice: u64,
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
    // A reader that closed the pipe (`| head`) has what it wanted: no panic, and the
    // status still decides the exit code.
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", serde_json::to_string_pretty(answer)?) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.context("writing the answer to standard output")?,
    }
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
        let answered = run(&client, &args.command).await.map_err(|error| {
            // Nothing listens there: say where the client looked and how to point it.
            if format!("{error:#}").contains("Connection refused") {
                error.context(format!(
                    "no service at {url}: start one (`neardup serve --data-dir DIR`), or point \
                     the client at it with --url or NEARDUP_URL"
                ))
            } else {
                error
            }
        })?;
        match answered {
            Some((status, answer)) => show(status, &answer),
            None => Ok(()),
        }
    })
}

/// Runs one command; the status and answer to show (none for `bench --mode dump`).
async fn run(client: &Client, command: &ClientCommand) -> Result<Option<(u16, Value)>> {
    let answered = match command {
        ClientCommand::Create { name, settings } => {
            let settings: Value = serde_json::from_str(settings)
                .with_context(|| format!("--settings {settings:?}: not JSON"))?;
            client.create_collection(name, &settings).await?.shown()
        }
        ClientCommand::List => client.collections().await?.shown(),
        ClientCommand::Show { name } => client.collection(name).await?.shown(),
        ClientCommand::Drop { name } => client.drop_collection(name).await?.shown(),
        ClientCommand::Insert {
            name,
            id,
            time,
            text,
        } => {
            let body = InsertRequest {
                id: id.clone(),
                text: read_text(text)?,
                // A number is seconds since the epoch, anything else an RFC 3339 time.
                time: time.as_ref().map(|time| match time.parse::<f64>() {
                    Ok(seconds) => Value::from(seconds),
                    Err(_) => Value::from(time.as_str()),
                }),
            };
            client.insert(name, &body).await?.shown()
        }
        ClientCommand::Check { name, limit, text } => {
            let body = CheckRequest {
                text: read_text(text)?,
                limit: Some(*limit),
            };
            client.check(name, &body).await?.shown()
        }
        ClientCommand::Get { name, id } => client.document(name, id).await?.shown(),
        ClientCommand::Delete { name, id } => client.delete_document(name, id).await?.shown(),
        ClientCommand::Load { .. } => load(client, command).await?,
        ClientCommand::Bench { .. } => return bench(client, command).await,
    };
    Ok(Some(answered))
}

/// `neardup client load`: the summary to show.
async fn load(client: &Client, command: &ClientCommand) -> Result<(u16, Value)> {
    let ClientCommand::Load {
        name,
        input,
        id_field,
        text_field,
        time_field,
        batch,
        concurrency,
        answers,
    } = command
    else {
        bail!("not a load");
    };
    let options = LoadOptions {
        collection: name.clone(),
        input: input.clone(),
        id_field: id_field.clone(),
        text_field: text_field.clone(),
        time_field: time_field.clone(),
        batch: (*batch).max(1),
        concurrency: (*concurrency).max(1),
    };
    // The answers file is an output like dedup's: never the input, written to a temporary
    // file and renamed only when the whole load succeeded.
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
    let summary = client::load(client, &options, writer).await?;
    if let Some(out) = out {
        out.commit()?;
    }
    // Refused documents fail the load (after the summary and the answers are written): a
    // script must not take a load that stored nothing for a success.
    if let Some(refusals) = summary.refusals() {
        show(200, &summary.to_json())?;
        bail!("{refusals}");
    }
    Ok((200, summary.to_json()))
}

/// `neardup client bench`: the measures to show (none for `--mode dump`).
async fn bench(client: &Client, command: &ClientCommand) -> Result<Option<(u16, Value)>> {
    let ClientCommand::Bench {
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
        slice,
    } = command
    else {
        bail!("not a bench");
    };
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
        slice: *slice,
    };
    let answer = client::bench(client, &options).await?;
    if options.mode == "dump" {
        return Ok(None);
    }
    Ok(Some((200, answer)))
}
