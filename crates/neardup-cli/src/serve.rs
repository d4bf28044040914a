//! `neardup serve`: the online dedup service, and `neardup client`: talk to it
//! ([`client`]).

mod client;

pub use client::{client, ClientArgs};

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use neardup_service::http::{self, HttpConfig, Tokens};

use crate::args::parse_size;

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
    /// The most memory the collections' stream learning (`max_df`, `boilerplate_df`) may
    /// take together: each counts its `frequency_memory` (twice with `common_shingles`
    /// `check`), and a creation past the budget is refused with 409 (default: a quarter of
    /// the machine's memory; see docs/service.md).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    learning_memory: Option<usize>,
    /// A frozen index level of at least this many documents is written to a level file
    /// beside the segments, which a restart loads instead of rebuilding the level; the
    /// documents above the files are read from the segments (see docs/service.md).
    #[arg(long, value_name = "N", default_value_t = neardup_service::LEVEL_FILE_DOCS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    level_file_docs: u64,
}

/// The single admin token, checked as a token of the tokens file is
/// ([`Tokens::single`]: 16 to 512 visible ASCII characters).
fn token(file: Option<&PathBuf>) -> Result<Option<String>> {
    let (text, source) = match file {
        Some(path) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("--token-file {}: cannot read", path.display()))?,
            format!("--token-file {}", path.display()),
        ),
        None => match std::env::var("NEARDUP_TOKEN") {
            Ok(text) => (text, "NEARDUP_TOKEN".to_owned()),
            Err(_) => return Ok(None),
        },
    };
    let token = Tokens::single(&text, &source).map_err(|e| anyhow!("{}", e.message))?;
    Ok(Some(token))
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
        level_file_docs: usize::try_from(args.level_file_docs).unwrap_or(usize::MAX),
        ..HttpConfig::default()
    };
    if let Some(bytes) = args.learning_memory {
        config.learning_memory = bytes as u64;
    }
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
