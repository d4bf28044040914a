//! `neardup tune`: sweep MinHash parameters on a labelled sample and recommend a setting.

use anyhow::Context;
use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::measure::SetMeasure;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_pipeline::engine::EngineOptions;
use neardup_pipeline::eval::TruthFormat;
use neardup_pipeline::eval_io::{load_truth, EvalOptions};
use neardup_pipeline::input::read_inputs;
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct;
use neardup_pipeline::tune::{render_json, render_text, sweep, Objective, TuneGrid};

use crate::args::{InputArgs, NormalizeArgs, ShingleArgs};

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
    /// Signature lengths to try (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "128")]
    permutations: Vec<usize>,
    /// `f1`, or `recall@P`: the highest recall with precision at least P.
    #[arg(long, default_value = "f1")]
    objective: Objective,
    /// Verification measure: `jaccard` or `containment`.
    #[arg(long, default_value = "jaccard")]
    measure: SetMeasure,
    /// Clustering: `representative` or `connected`.
    #[arg(long, default_value = "representative")]
    cluster: ClusterMode,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Where the table goes (`-` = stdout).
    #[arg(short, long, default_value = "-")]
    output: String,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Where the text and the id are (the ids must match the truth's).
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    normalize: NormalizeArgs,
    #[command(flatten)]
    shingles: ShingleArgs,
}

pub fn tune(args: &TuneArgs) -> anyhow::Result<()> {
    let mut inputs: Vec<&str> = args.inputs.iter().map(String::as_str).collect();
    inputs.push(&args.truth);
    check_distinct(&inputs, &[("--output", &args.output)])?;
    let pool = crate::threads::pool(args.threads)?;
    let mut out = AtomicOutput::create(&args.output)?;
    let options = EvalOptions {
        truth_format: args.truth_format,
        positive_label: args.positive_label,
    };
    let truth = load_truth(&args.truth, &options)?;
    let corpus = read_inputs(&args.inputs, &args.input.options())?;
    let texts: Vec<&str> = corpus.records.iter().map(|r| r.text.as_str()).collect();
    let ids: Vec<serde_json::Value> = corpus.records.iter().map(|r| r.id.clone()).collect();
    let grid = TuneGrid {
        thresholds: args.thresholds.clone(),
        ngrams: args.ngrams.clone(),
        permutations: args.permutations.clone(),
    };
    let base = args
        .shingles
        .apply(MinHashBuilder::new(), &args.normalize)
        .measure(args.measure);
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
