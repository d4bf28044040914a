//! `neardup tune`: sweep MinHash parameters on a labelled sample and recommend a setting.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_engine::{EngineOptions, Progress};
use neardup_eval::eval::TruthFormat;
use neardup_eval::eval_io::EvalOptions;
use neardup_eval::tune::{
    run_tune, write_table, Completion, Objective, SweepObserver, TuneConfig, TuneGrid, TuneRow,
    DEFAULT_MAX_RUNS,
};

use crate::args::{method_names, InputArgs, TuneMethodArgs};
use crate::{progress, signals};

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
    /// The most runs (every combination of the swept values is one): a larger grid is
    /// refused before anything is read, naming its count.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RUNS)]
    max_runs: u64,
    /// No run count, estimate or progress bar.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Where the text and the id are (the ids must match the truth's).
    #[command(flatten)]
    input: InputArgs,
    /// The method's other parameters, from the registry.
    #[command(flatten)]
    params: TuneMethodArgs,
}

pub fn tune(args: &TuneArgs) -> anyhow::Result<()> {
    args.input.note_unused_id(&args.inputs, args.quiet);
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
        max_runs: args.max_runs,
    };
    let show = !args.quiet && std::io::stderr().is_terminal();
    let watch = Watch {
        bar: progress::Bar::new(show),
        quiet: args.quiet,
        sweep: Arc::new(Mutex::new(Sweep::default())),
    };
    let sweep = Arc::clone(&watch.sweep);
    let partial = config.clone();
    signals::before_exit_on_signal(move || write_partial(&partial, &lock(&sweep)));
    let result = pool.install(|| run_tune(&config, &watch));
    watch.bar.finish();
    Ok(result?)
}

/// The runs of a sweep so far.
#[derive(Default)]
struct Sweep {
    planned: u64,
    rows: Vec<TuneRow>,
    /// When the first run started.
    started: Option<Instant>,
}

fn lock(sweep: &Mutex<Sweep>) -> MutexGuard<'_, Sweep> {
    sweep.lock().unwrap_or_else(|e| e.into_inner())
}

/// What `tune` says while it sweeps: the count of runs before the first, an estimate after
/// it (unless --quiet), a progress bar on a terminal; and the rows, for a partial table.
struct Watch {
    bar: progress::Bar,
    quiet: bool,
    sweep: Arc<Mutex<Sweep>>,
}

impl SweepObserver for Watch {
    fn planned(&self, runs: u64) {
        let mut sweep = lock(&self.sweep);
        (sweep.planned, sweep.started) = (runs, Some(Instant::now()));
        if !self.quiet {
            eprintln!("neardup: tune: {runs} runs (every combination of the swept values)");
        }
        self.bar.stage("runs", runs);
    }

    fn finished(&self, row: &TuneRow) {
        let mut sweep = lock(&self.sweep);
        sweep.rows.push(row.clone());
        if sweep.rows.len() == 1 && !self.quiet {
            let first = sweep
                .started
                .map_or(Duration::ZERO, |started| started.elapsed());
            let all = first.mul_f64(sweep.planned as f64);
            self.bar.println(&format!(
                "neardup: tune: the first run took {:.2} s: about {} for the {} runs \
                 (Ctrl-C stops and writes the table of the runs finished)",
                first.as_secs_f64(),
                about(all),
                sweep.planned
            ));
        }
        self.bar.advance(1);
    }
}

/// A duration, roughly: `40 s`, `12 min`, `3.5 h`.
fn about(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 5400.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// On Ctrl-C (or SIGTERM, SIGHUP): writes the table of the runs finished, marked partial,
/// where the whole table would have gone. Nothing when no run was planned yet, or when every
/// run finished (the whole table is being written).
fn write_partial(config: &TuneConfig, sweep: &Sweep) {
    let finished = sweep.rows.len() as u64;
    if sweep.planned == 0 || finished == sweep.planned {
        return;
    }
    let completion = Completion::Partial {
        finished,
        planned: sweep.planned,
    };
    match write_table(config, &sweep.rows, completion) {
        Ok(()) => eprintln!(
            "neardup: tune: stopped after {finished} of {} runs; their table is in {}",
            sweep.planned,
            match config.output.as_str() {
                "-" => "the standard output",
                path => path,
            }
        ),
        Err(error) => eprintln!("neardup: tune: stopped; the partial table: {error}"),
    }
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
