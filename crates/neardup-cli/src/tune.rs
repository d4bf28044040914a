//! `neardup tune`: sweep MinHash parameters on a labelled sample and recommend a setting.

use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_engine::EngineOptions;
use neardup_eval::eval::TruthFormat;
use neardup_eval::eval_io::EvalOptions;
use neardup_eval::tune::{run_tune, Objective, TuneConfig, TuneGrid};

use crate::args::{method_names, InputArgs, TuneMethodArgs};

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
    /// SimHash distance rules to try, separated by `;` (rules contain commas), e.g.
    /// "3;6;<100:10,<500:6,3".
    #[arg(long, value_delimiter = ';', default_value = "3;6;<100:10,<500:6,3")]
    max_distances: Vec<String>,
    /// Any other parameter to sweep, `NAME=V1;V2;...` (repeatable; every combination is
    /// run): rules by length (`threshold=0.4;<25:0.43,0.4`, `ngram=3;<24:2,3`, which replace
    /// --thresholds and --ngrams), `max_df=0.001;0.01;off`, `boilerplate_df=...`,
    /// `rare_threshold=0.4;0.6`. Names as in --stats (`max_df`) or as flags (`max-df`).
    #[arg(long, value_name = "NAME=V1;V2", value_parser = parse_sweep)]
    sweep: Vec<(String, Vec<String>)>,
    /// `f1`, or `recall@P`: the highest recall with precision at least P.
    #[arg(long, default_value = "f1")]
    objective: Objective,
    /// The method to tune (a swept value it has no parameter for is not swept).
    #[arg(long, default_value = "minhash", value_parser = method_names())]
    method: String,
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
    /// The method's other parameters, from the registry.
    #[command(flatten)]
    params: TuneMethodArgs,
}

pub fn tune(args: &TuneArgs) -> anyhow::Result<()> {
    let pool = crate::threads::pool(args.threads)?;
    let spec = neardup_core::registry::method(&args.method);
    let (params, unused) = match &spec {
        Some(spec) => args.params.0.for_method(spec),
        None => (args.params.0.given.clone(), Vec::new()),
    };
    if !unused.is_empty() {
        eprintln!(
            "neardup: warning: {} not used by --method {} (ignored)",
            unused.join(", "),
            args.method
        );
    }
    let config = TuneConfig {
        inputs: args.inputs.clone(),
        input: args.input.options(),
        truth: args.truth.clone(),
        eval: EvalOptions {
            truth_format: args.truth_format,
            positive_label: args.positive_label,
        },
        method: args.method.clone(),
        params,
        grid: TuneGrid {
            thresholds: args.thresholds.clone(),
            ngrams: args.ngrams.clone(),
            permutations: args.permutations.clone(),
            max_distances: args.max_distances.clone(),
            extra: args.sweep.clone(),
        },
        engine: EngineOptions {
            cluster: args.cluster,
            keep: KeepPolicy::First,
            ..EngineOptions::default()
        },
        objective: args.objective,
        json: args.json,
        output: args.output.clone(),
    };
    pool.install(|| run_tune(&config))?;
    Ok(())
}

/// `NAME=V1;V2;...` of `--sweep`.
fn parse_sweep(text: &str) -> Result<(String, Vec<String>), String> {
    let Some((name, values)) = text.split_once('=') else {
        return Err(format!(
            "{text:?}: expected NAME=V1;V2 (as in \"max_df=0.001;off\")"
        ));
    };
    let values: Vec<String> = (values.split(';').map(str::trim))
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect();
    if name.trim().is_empty() || values.is_empty() {
        return Err(format!("{text:?}: expected a name and at least one value"));
    }
    Ok((name.trim().replace('-', "_"), values))
}
