//! `neardup dedup`: remove exact and near-duplicate documents.

use std::io::IsTerminal;

use anyhow::Context;
use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::measure::SetMeasure;
use neardup_core::methods::minhash::{MinHashBuilder, DEFAULT_THRESHOLD};
use neardup_core::minhash::SketchScheme;
use neardup_core::normalize::{ChineseVariant, NormalizeOptions};
use neardup_core::tokenize::Tokenizer;
use neardup_pipeline::engine::EngineOptions;
use neardup_pipeline::input::{Format, InputOptions, OnError};
use neardup_pipeline::run::{run, MethodConfig, RunConfig};

use crate::progress;

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
    /// Shingles: `auto` (character n-grams sized by script), `token` (one token per CJK
    /// character and per word), `char` (character n-grams), `word` (jieba for Chinese).
    #[arg(long, default_value = "auto")]
    tokenizer: Tokenizer,
    /// Tokens per shingle; for `auto`, characters per shingle on CJK text [default: 3 for
    /// `auto`, 5 otherwise].
    #[arg(long)]
    ngram: Option<usize>,
    /// For `auto`: characters per shingle on non-CJK text [default: --ngram + 2].
    #[arg(long)]
    latin_ngram: Option<usize>,
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
            .remove_stopwords(self.stopwords)
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
        if let Some(n) = self.latin_ngram {
            builder = builder.latin_ngram(n);
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

pub fn dedup(args: &DedupArgs) -> anyhow::Result<()> {
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
