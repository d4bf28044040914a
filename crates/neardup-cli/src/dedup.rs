//! `neardup dedup`: remove exact and near-duplicate documents.

use std::io::IsTerminal;

use clap::parser::ValueSource;
use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::measure::SetMeasure;
use neardup_core::methods::minhash::{MinHashBuilder, DEFAULT_THRESHOLD};
use neardup_core::minhash::SketchScheme;
use neardup_pipeline::engine::EngineOptions;
use neardup_pipeline::input::{InputOptions, OnError};
use neardup_pipeline::run::{run, MethodConfig, RunConfig};

use crate::args::{at_least_one, InputArgs, NormalizeArgs, ShingleArgs};
use crate::{progress, threads};

#[derive(Args)]
pub struct DedupArgs {
    /// Input files (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` = stdin).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output file for the kept documents, in the input's format (`-` = stdout).
    #[arg(short, long)]
    output: String,
    /// Write one JSON row per input document: id, cluster, duplicate_of, similarity.
    #[arg(long)]
    clusters: Option<String>,
    /// Write every verified pair as {"a","b","similarity"}.
    #[arg(long)]
    pairs: Option<String>,
    /// Write run statistics (JSON).
    #[arg(long)]
    stats: Option<String>,
    /// Method: `exact` (hash of the normalised text) or `minhash` (MinHash-LSH, verified).
    #[arg(long, default_value = "minhash", value_parser = ["exact", "minhash"])]
    method: String,
    /// Similarity threshold of the verification measure.
    #[arg(long, default_value_t = DEFAULT_THRESHOLD)]
    threshold: f64,
    /// Verification measure: `jaccard` or `containment` (|A∩B| / min(|A|,|B|)).
    #[arg(long, default_value = "jaccard")]
    measure: SetMeasure,
    /// Tokens per shingle; for `auto`, characters per shingle on CJK text [default: 3 for
    /// `auto`, 5 otherwise].
    #[arg(long, help_heading = "Shingles")]
    ngram: Option<usize>,
    /// MinHash signature length.
    #[arg(long, default_value_t = 128)]
    permutations: usize,
    /// LSH bands (with --rows); derived from the threshold when absent.
    #[arg(long, requires = "rows")]
    bands: Option<usize>,
    /// LSH rows per band (with --bands).
    #[arg(long, requires = "bands")]
    rows: Option<usize>,
    /// Jaccard similarity the LSH bands are tuned for (default: the threshold; 0.4 x the
    /// threshold with --measure containment).
    #[arg(long)]
    lsh_threshold: Option<f64>,
    /// Signature scheme: `classic` (k permutations) or `oph` (one permutation, densified).
    #[arg(long, default_value = "classic")]
    sketch: SketchScheme,
    /// Seed of the MinHash hash family.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Clustering: `representative` (every removed document is similar to the kept one) or
    /// `connected` (union-find over verified pairs).
    #[arg(long, default_value = "representative")]
    cluster: ClusterMode,
    /// Which document of a cluster is kept: `first`, `longest`, `shortest`.
    #[arg(long, default_value = "first")]
    keep: KeepPolicy,
    /// Index buckets with more documents than this pair each member with their N best-ranked
    /// members under --keep only (keeps template floods from going quadratic; counted as
    /// `capped_buckets` in stats). At least 1.
    #[arg(long, value_name = "N", default_value_t = EngineOptions::default().bucket_cap,
          value_parser = at_least_one)]
    bucket_cap: usize,
    /// At most documents x N candidate pairs: when the buckets hold more (a template flood),
    /// the documents with the most candidates keep their best-ranked ones under --keep only,
    /// up to a common limit (`budget_hits` and `partner_limit` in stats). At least 1.
    #[arg(long, value_name = "N", default_value_t = EngineOptions::default().candidate_budget,
          value_parser = at_least_one)]
    candidate_budget: usize,
    /// On a bad record: `fail` (default; nothing is written) or `skip` (counted, reported).
    #[arg(long, default_value = "fail")]
    on_error: OnError,
    /// Largest accepted record, in bytes.
    #[arg(long, default_value_t = 256 << 20)]
    max_doc_bytes: usize,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress bar and no summary (skipped records and warnings are still reported).
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    normalize: NormalizeArgs,
    #[command(flatten)]
    shingles: ShingleArgs,
}

impl DedupArgs {
    fn method(&self) -> MethodConfig {
        if self.method == "exact" {
            return MethodConfig::Exact(self.normalize.options());
        }
        let mut builder = self
            .shingles
            .apply(MinHashBuilder::new(), &self.normalize)
            .permutations(self.permutations)
            .scheme(self.sketch)
            .seed(self.seed)
            .threshold(self.threshold)
            .measure(self.measure);
        if let (Some(bands), Some(rows)) = (self.bands, self.rows) {
            builder = builder.bands_rows(bands, rows);
        }
        if let Some(n) = self.ngram {
            builder = builder.ngram(n);
        }
        if let Some(threshold) = self.lsh_threshold {
            builder = builder.lsh_threshold(threshold);
        }
        MethodConfig::MinHash(builder)
    }

    fn config(&self) -> RunConfig {
        RunConfig {
            inputs: self.inputs.clone(),
            input: InputOptions {
                on_error: self.on_error,
                max_doc_bytes: self.max_doc_bytes,
                ..self.input.options()
            },
            output: self.output.clone(),
            clusters: self.clusters.clone(),
            pairs: self.pairs.clone(),
            stats: self.stats.clone(),
            method: self.method(),
            engine: EngineOptions {
                cluster: self.cluster,
                keep: self.keep,
                bucket_cap: self.bucket_cap,
                candidate_budget: self.candidate_budget,
            },
        }
    }
}

/// Options that only `--method minhash` reads.
const MINHASH_ONLY: [&str; 14] = [
    "threshold",
    "measure",
    "ngram",
    "permutations",
    "bands",
    "rows",
    "lsh_threshold",
    "sketch",
    "seed",
    "tokenizer",
    "latin_ngram",
    "stopwords",
    "bucket_cap",
    "candidate_budget",
];

/// The options given on the command line (not defaulted), by argument id.
pub fn given_options(matches: &clap::ArgMatches) -> Vec<String> {
    (matches.ids())
        .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.as_str().to_owned())
        .collect()
}

pub fn dedup(args: &DedupArgs, given: Vec<String>) -> anyhow::Result<()> {
    warn_unused_options(args, &given);
    let pool = threads::pool(args.threads)?;
    let show = !args.quiet && std::io::stderr().is_terminal();
    let progress = progress::Bar::new(show);
    let report = pool.install(|| run(&args.config(), &progress))?;
    progress.finish();
    if !args.quiet {
        print_summary(&report.stats);
    }
    print_skipped(&report.stats);
    Ok(())
}

/// Warns about options given that the chosen method does not read.
fn warn_unused_options(args: &DedupArgs, given: &[String]) {
    if args.method != "exact" {
        return;
    }
    let unused: Vec<String> = (MINHASH_ONLY.iter())
        .filter(|option| given.iter().any(|id| id == *option))
        .map(|option| format!("--{}", option.replace('_', "-")))
        .collect();
    if !unused.is_empty() {
        eprintln!(
            "neardup: warning: {} not used by --method exact (ignored)",
            unused.join(", ")
        );
    }
}

fn print_summary(stats: &serde_json::Value) {
    let number = |key: &str| stats[key].as_u64().unwrap_or(0);
    eprintln!(
        "neardup: {} documents, {} kept, {} removed ({} duplicate clusters) in {:.2} s",
        number("documents_in"),
        number("kept"),
        number("removed"),
        number("clusters"),
        stats["seconds"]["total"].as_f64().unwrap_or(0.0),
    );
}

/// Reports skipped records, also under `--quiet`: a skip is data the user gave and did not get
/// back.
fn print_skipped(stats: &serde_json::Value) {
    let skipped = stats["skipped"].as_u64().unwrap_or(0);
    if skipped > 0 {
        eprintln!("neardup: skipped {skipped} bad records; first:");
        for message in stats["skipped_first"].as_array().into_iter().flatten() {
            eprintln!("  {}", message.as_str().unwrap_or_default());
        }
    }
}
