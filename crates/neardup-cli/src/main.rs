//! `neardup`: find and remove near-duplicate text.
//!
//! This binary only translates the command line into a [`neardup_pipeline::run::RunConfig`]
//! and draws progress; every algorithm lives in the library crates.

mod progress;
mod tune;

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::measure::SetMeasure;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::minhash::SketchScheme;
use neardup_core::normalize::{ChineseVariant, NormalizeOptions};
use neardup_core::tokenize::Tokenizer;
use neardup_pipeline::engine::EngineOptions;
use neardup_pipeline::input::{Format, InputOptions, OnError};
use neardup_pipeline::run::{run, MethodConfig, RunConfig};

#[derive(Parser)]
#[command(
    name = "neardup",
    version,
    about = "Find and remove near-duplicate text (Chinese and English)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Remove exact and near-duplicate documents; write the kept ones and what was removed.
    Dedup(Box<DedupArgs>),
    /// Write one self-contained HTML page about a dedup run: numbers, charts, and the largest and
    /// borderline clusters with each duplicate beside its representative.
    Report(ReportArgs),
    /// Score a `dedup --clusters` file against ground truth (clusters or labelled pairs).
    Eval(EvalArgs),
    /// Build a near-duplicate benchmark from a corpus: edited copies, hard negatives, truth.
    Synth(SynthArgs),
    /// Sweep thresholds, shingle sizes and permutations on a labelled sample; recommend one.
    Tune(Box<tune::TuneArgs>),
}

#[derive(Args)]
struct DedupArgs {
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
    #[arg(long, default_value_t = 0.7)]
    threshold: f64,
    /// Verification measure: `jaccard` or `containment` (|A∩B| / min(|A|,|B|)).
    #[arg(long, default_value = "jaccard")]
    measure: SetMeasure,
    /// Tokens: `auto` (CJK characters + words), `char`, `word` (jieba for Chinese).
    #[arg(long, default_value = "auto")]
    tokenizer: Tokenizer,
    /// Tokens per shingle.
    #[arg(long, default_value_t = 5)]
    ngram: usize,
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
    /// Remove English and Chinese stopwords before shingling.
    #[arg(long)]
    stopwords: bool,
    /// Chinese script: `simplified` (convert traditional) or `keep`.
    #[arg(long, default_value = "simplified", value_parser = ["simplified", "keep"])]
    chinese_variant: String,
    /// Strip HTML tags and decode entities (web pages).
    #[arg(long)]
    strip_html: bool,
    /// Keep punctuation and symbols (by default they become spaces).
    #[arg(long)]
    keep_punctuation: bool,
    /// Keep letter case (by default text is lowercased).
    #[arg(long)]
    keep_case: bool,
    /// Clustering: `representative` (every removed document is similar to the kept one) or
    /// `connected` (union-find over verified pairs).
    #[arg(long, default_value = "representative")]
    cluster: ClusterMode,
    /// Which document of a cluster is kept: `first`, `longest`, `shortest`.
    #[arg(long, default_value = "first")]
    keep: KeepPolicy,
    /// Index buckets with more documents than this pair each member with the first N only
    /// (keeps template floods from going quadratic; counted as `capped_buckets` in stats).
    #[arg(long, default_value_t = 1000)]
    bucket_cap: usize,
    /// Field holding the text (dotted path for nested JSON; column name for CSV/Parquet).
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Field holding the id; without it the id is the 1-based record number.
    #[arg(long)]
    id_field: Option<String>,
    /// Input format (default: from the extension): jsonl, text, csv, tsv, parquet.
    #[arg(long)]
    format: Option<Format>,
    /// On a bad record: `fail` (default; nothing is written) or `skip` (counted, reported).
    #[arg(long, default_value = "fail")]
    on_error: OnError,
    /// Largest accepted record, in bytes.
    #[arg(long, default_value_t = 256 << 20)]
    max_doc_bytes: usize,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress bar and no summary.
    #[arg(short, long)]
    quiet: bool,
}

impl DedupArgs {
    fn normalize_options(&self) -> NormalizeOptions {
        NormalizeOptions {
            lowercase: !self.keep_case,
            chinese_variant: match self.chinese_variant.as_str() {
                "keep" => ChineseVariant::Keep,
                _ => ChineseVariant::Simplified,
            },
            strip_punctuation: !self.keep_punctuation,
            strip_html: self.strip_html,
        }
    }

    fn method(&self) -> MethodConfig {
        if self.method == "exact" {
            return MethodConfig::Exact(self.normalize_options());
        }
        let mut builder = MinHashBuilder::new()
            .normalize(self.normalize_options())
            .tokenizer(self.tokenizer)
            .ngram(self.ngram)
            .remove_stopwords(self.stopwords)
            .permutations(self.permutations)
            .scheme(self.sketch)
            .seed(self.seed)
            .threshold(self.threshold)
            .measure(self.measure);
        if let (Some(bands), Some(rows)) = (self.bands, self.rows) {
            builder = builder.bands_rows(bands, rows);
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
                format: self.format,
                text_field: self.text_field.clone(),
                id_field: self.id_field.clone(),
                on_error: self.on_error,
                max_doc_bytes: self.max_doc_bytes,
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
            },
        }
    }
}

#[derive(Args)]
struct EvalArgs {
    /// Ground truth (JSONL): clusters {"id","cluster","category"?}, labelled pairs
    /// {"a","b","label"}, or Sohu pairs {"sentence1","sentence2","label"} whose row i holds
    /// documents 2i+1 and 2i+2 (the record numbers of its texts written one after another).
    #[arg(long)]
    truth: String,
    /// The clusters file written by `neardup dedup --clusters` (ids compare as JSON: 3 != "3").
    #[arg(long)]
    predicted: String,
    /// Truth format (default: from the first row's fields): clusters, pairs, sohu.
    #[arg(long)]
    truth_format: Option<neardup_pipeline::eval::TruthFormat>,
    /// The numeric pair label that marks duplicates (the Sohu files use 5).
    #[arg(long, default_value_t = 1.0)]
    positive_label: f64,
    /// Write the numbers as one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Where to write the report (`-` = stdout).
    #[arg(short, long, default_value = "-")]
    output: String,
}

fn eval(args: &EvalArgs) -> anyhow::Result<()> {
    use neardup_pipeline::eval_io::{evaluate, EvalOptions};
    use neardup_pipeline::output::AtomicOutput;

    let options = EvalOptions {
        truth_format: args.truth_format,
        positive_label: args.positive_label,
    };
    let report = evaluate(&args.truth, &args.predicted, &options)?;
    let text = if args.json {
        format!("{:#}\n", report.to_json())
    } else {
        report.to_string()
    };
    let mut out = AtomicOutput::create(&args.output)?;
    let written = out.writer().write_all(text.as_bytes());
    written.with_context(|| format!("{}: cannot write the report", args.output))?;
    out.commit()?;
    Ok(())
}

#[derive(Args)]
struct SynthArgs {
    /// Source corpus (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` =
    /// stdin). Its documents are assumed distinct; identical texts share a truth cluster.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output corpus (JSONL): {"id": "s<N>" | "s<N>-v<K>" | "s<N>-hn<K>", "text", "source"},
    /// shuffled with the seed.
    #[arg(short, long)]
    output: String,
    /// Output truth (JSONL, one row per corpus row): {"id", "cluster", "category"}.
    #[arg(long)]
    truth: String,
    /// Field holding the text (dotted path for nested JSON; column name for CSV/Parquet).
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Field holding the id (copied to "source"); without it the 1-based record number.
    #[arg(long)]
    id_field: Option<String>,
    /// Input format (default: from the extension): jsonl, text, csv, tsv, parquet.
    #[arg(long)]
    format: Option<Format>,
    /// Seed of every random choice: the same input, seed and options give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fraction of source documents that get edited copies.
    #[arg(long, default_value_t = 0.3)]
    duplicate_rate: f64,
    /// A source that gets copies gets 1 to this many.
    #[arg(long, default_value_t = 3)]
    max_variants: usize,
    /// Edits to draw from (one or two per copy): char-sub, word-sub, script, insert, delete,
    /// punct, width, boilerplate, truncate, swap.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "char-sub,word-sub,script,insert,delete,punct,width,boilerplate,truncate,swap"
    )]
    edits: Vec<neardup_pipeline::synth::Edit>,
    /// Strength of each edit in (0, 1]: roughly the fraction of characters it touches.
    #[arg(long, default_value_t = 0.05)]
    strength: f64,
    /// Fraction of source documents that get a hard negative (same opening, other text).
    #[arg(long, default_value_t = 0.05)]
    hard_negatives: f64,
    /// Use only the first N source documents.
    #[arg(long)]
    limit: Option<usize>,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
}

fn synth(args: &SynthArgs) -> anyhow::Result<()> {
    use neardup_pipeline::synth::SynthOptions;
    use neardup_pipeline::synth_io::{run_synth, SynthConfig};

    let config = SynthConfig {
        inputs: args.inputs.clone(),
        input: InputOptions {
            format: args.format,
            text_field: args.text_field.clone(),
            id_field: args.id_field.clone(),
            ..InputOptions::default()
        },
        corpus: args.output.clone(),
        truth: args.truth.clone(),
        limit: args.limit,
        options: SynthOptions {
            seed: args.seed,
            duplicate_rate: args.duplicate_rate,
            max_variants: args.max_variants,
            edits: args.edits.clone(),
            strength: args.strength,
            hard_negatives: args.hard_negatives,
        },
    };
    let summary = run_synth(&config)?;
    if !args.quiet {
        print_synth_summary(&summary);
    }
    Ok(())
}

fn print_synth_summary(summary: &neardup_pipeline::synth::Summary) {
    eprintln!(
        "neardup: {} sources ({} repeating an earlier text), {} variants, {} hard negatives",
        summary.sources, summary.repeated_sources, summary.variants, summary.hard_negatives,
    );
    let by_edit: Vec<String> = summary
        .variants_by_edit
        .iter()
        .map(|(edit, count)| format!("{edit} {count}"))
        .collect();
    eprintln!("neardup: variants per edit: {}", by_edit.join(", "));
    if summary.skipped_variants + summary.skipped_hard_negatives > 0 {
        eprintln!(
            "neardup: not produced: {} variants (no enabled edit changed the text), {} hard \
             negatives (no other text to take from)",
            summary.skipped_variants, summary.skipped_hard_negatives,
        );
    }
}

#[derive(Args)]
struct ReportArgs {
    /// The inputs of the dedup run, read with the same options (the page shows their texts).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The clusters file written by `neardup dedup --clusters`.
    #[arg(long)]
    clusters: String,
    /// The statistics file written by `neardup dedup --stats` (method, timings, S-curve).
    #[arg(long)]
    stats: Option<String>,
    /// Where to write the HTML page (`-` = stdout).
    #[arg(short, long)]
    output: String,
    /// Field holding the text, as given to `dedup`.
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Field holding the id, as given to `dedup`.
    #[arg(long)]
    id_field: Option<String>,
    /// Input format, as given to `dedup` (default: from the extension).
    #[arg(long)]
    format: Option<Format>,
    /// Clusters in each of the two lists (largest, borderline).
    #[arg(long, default_value_t = 50)]
    max_clusters: usize,
    /// Duplicates shown per cluster, the least similar first.
    #[arg(long, default_value_t = 8)]
    max_members: usize,
    /// Characters of each text shown and compared; longer texts are cut with a note.
    #[arg(long, default_value_t = 3000)]
    max_chars: usize,
    /// No summary line.
    #[arg(short, long)]
    quiet: bool,
}

fn report(args: &ReportArgs) -> anyhow::Result<()> {
    use neardup_pipeline::report::ReportOptions;
    use neardup_pipeline::report_io::{write_report, ReportConfig};

    let config = ReportConfig {
        inputs: args.inputs.clone(),
        input: InputOptions {
            format: args.format,
            text_field: args.text_field.clone(),
            id_field: args.id_field.clone(),
            ..InputOptions::default()
        },
        clusters: args.clusters.clone(),
        stats: args.stats.clone(),
        output: args.output.clone(),
        options: ReportOptions {
            max_clusters: args.max_clusters,
            max_members: args.max_members,
            max_chars: args.max_chars,
            ..ReportOptions::default()
        },
    };
    let summary = write_report(&config)?;
    if !args.quiet {
        eprintln!(
            "neardup: report of {} documents written to {} ({:.1} KiB)",
            summary.documents,
            args.output,
            summary.bytes as f64 / 1024.0
        );
    }
    Ok(())
}

fn dedup(args: &DedupArgs) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .context("cannot start worker threads")?;
    let show = !args.quiet && std::io::stderr().is_terminal();
    let progress = progress::Bar::new(show);
    let report = pool.install(|| run(&args.config(), &progress))?;
    progress.finish();
    if !args.quiet {
        print_summary(&report.stats);
    }
    Ok(())
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
    let skipped = number("skipped");
    if skipped > 0 {
        eprintln!("neardup: skipped {skipped} bad records; first:");
        for message in stats["skipped_first"].as_array().into_iter().flatten() {
            eprintln!("  {}", message.as_str().unwrap_or_default());
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Dedup(args) => dedup(args),
        Command::Report(args) => report(args),
        Command::Eval(args) => eval(args),
        Command::Synth(args) => synth(args),
        Command::Tune(args) => tune::tune(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("neardup: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
