//! `neardup tune`: sweep MinHash parameters on a labelled sample and recommend a setting.

use anyhow::Context;
use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::measure::SetMeasure;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::normalize::{ChineseVariant, NormalizeOptions};
use neardup_core::tokenize::Tokenizer;
use neardup_pipeline::engine::EngineOptions;
use neardup_pipeline::eval::TruthFormat;
use neardup_pipeline::eval_io::{load_truth, EvalOptions};
use neardup_pipeline::input::{read_inputs, Format, InputOptions, OnError};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::tune::{render_json, render_text, sweep, Objective, TuneGrid};

#[derive(Args)]
pub struct TuneArgs {
    /// The labelled sample (any input format of `dedup`).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Ground truth: clusters `{"id","cluster"}` or labelled pairs (as for `neardup eval`).
    #[arg(long)]
    truth: String,
    /// Truth format (default: detected): clusters, pairs, sohu.
    #[arg(long)]
    truth_format: Option<TruthFormat>,
    /// Numeric pair label that marks duplicates.
    #[arg(long, default_value_t = 1.0)]
    positive_label: f64,
    /// Thresholds to try (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.3,0.4,0.5,0.6,0.7,0.8,0.9"
    )]
    thresholds: Vec<f64>,
    /// Shingle sizes to try (comma-separated; for `auto`, the CJK size, the other scripts
    /// following at +2 unless --latin-ngram is given).
    #[arg(long, value_delimiter = ',', default_value = "2,3,4,5")]
    ngrams: Vec<usize>,
    /// For `auto`: a fixed shingle size on non-CJK text.
    #[arg(long)]
    latin_ngram: Option<usize>,
    /// Signature lengths to try (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "128")]
    permutations: Vec<usize>,
    /// `f1`, or `recall@P`: the highest recall with precision at least P.
    #[arg(long, default_value = "f1")]
    objective: Objective,
    /// Verification measure: `jaccard` or `containment`.
    #[arg(long, default_value = "jaccard")]
    measure: SetMeasure,
    /// Shingles: `auto`, `token`, `char`, `word` (as for `dedup`).
    #[arg(long, default_value = "auto")]
    tokenizer: Tokenizer,
    /// Chinese script: `simplified` or `keep`.
    #[arg(long, default_value = "simplified", value_parser = ["simplified", "keep"])]
    chinese_variant: String,
    /// Clustering: `representative` or `connected`.
    #[arg(long, default_value = "representative")]
    cluster: ClusterMode,
    /// Field holding the text.
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Field holding the id (must match the truth's ids); default: 1-based record number.
    #[arg(long)]
    id_field: Option<String>,
    /// Input format (default: from the extension).
    #[arg(long)]
    format: Option<Format>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Where the table goes (`-` = stdout).
    #[arg(short, long, default_value = "-")]
    output: String,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

pub fn tune(args: &TuneArgs) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()?;
    let mut out = AtomicOutput::create(&args.output)?;
    let options = EvalOptions {
        truth_format: args.truth_format,
        positive_label: args.positive_label,
    };
    let truth = load_truth(&args.truth, &options)?;
    let input = InputOptions {
        format: args.format,
        text_field: args.text_field.clone(),
        id_field: args.id_field.clone(),
        on_error: OnError::Fail,
        ..InputOptions::default()
    };
    let corpus = read_inputs(&args.inputs, &input)?;
    let texts: Vec<&str> = corpus.records.iter().map(|r| r.text.as_str()).collect();
    let ids: Vec<serde_json::Value> = corpus.records.iter().map(|r| r.id.clone()).collect();
    let grid = TuneGrid {
        thresholds: args.thresholds.clone(),
        ngrams: args.ngrams.clone(),
        permutations: args.permutations.clone(),
    };
    let normalize = NormalizeOptions {
        chinese_variant: match args.chinese_variant.as_str() {
            "keep" => ChineseVariant::Keep,
            _ => ChineseVariant::Simplified,
        },
        ..NormalizeOptions::default()
    };
    let mut base = MinHashBuilder::new()
        .normalize(normalize)
        .tokenizer(args.tokenizer)
        .measure(args.measure);
    if let Some(n) = args.latin_ngram {
        base = base.latin_ngram(n);
    }
    let engine = EngineOptions {
        cluster: args.cluster,
        keep: KeepPolicy::First,
        ..EngineOptions::default()
    };
    let rows = pool.install(|| sweep(&texts, &ids, &truth, &base, &grid, engine))?;
    let text = if args.json {
        format!("{:#}\n", render_json(&rows, args.objective))
    } else {
        render_text(&rows, args.objective)
    };
    out.writer()
        .write_all(text.as_bytes())
        .with_context(|| format!("{}: cannot write", args.output))?;
    out.commit()?;
    Ok(())
}
