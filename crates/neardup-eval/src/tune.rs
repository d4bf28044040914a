//! Parameter sweeps on labelled data: `neardup tune`.
//!
//! Runs the dedup engine once per combination of a grid (threshold, n-gram size,
//! permutations; the LSH bands follow from each threshold as in a real run), scores each
//! result against the ground truth with [`crate::eval`], and recommends the setting that best
//! meets an [`Objective`]: the highest F1, or the highest recall at a minimum precision (the
//! question news feeds ask: "how much can I remove while staying 97% precise?"). Timings are
//! wall-clock seconds of the engine on this machine, for comparing settings, not a benchmark.
//!
//! Every combination is a run, so a grid grows as the product of its dimensions (six
//! parameters of ten values: a million runs). The runs are counted before any is made, and a
//! grid of more than [`TuneConfig::max_runs`] ([`DEFAULT_MAX_RUNS`]) is refused, naming the
//! count; a [`SweepObserver`] hears of the count and of each run as it finishes (the CLI's
//! estimate, progress bar and partial table on Ctrl-C, [`write_table`]).

use std::fmt::Write as _;
use std::str::FromStr;
use std::time::Instant;

use neardup_core::registry::{self, MethodVisitor, Params, Registered, Setting};
use neardup_engine::{dedup, EngineOptions, NoProgress, Outcome};
use neardup_pipeline::input::{read_inputs, InputOptions};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct_named;
use neardup_pipeline::run::{file_params_read, read_file_params};
use neardup_pipeline::{Error, Result};
use serde::Serialize;
use serde_json::Value;

use crate::eval::{Metrics, Scores};
use crate::eval_io::{load_truth, EvalOptions, LoadedTruth};

/// The default most runs of a sweep (`--max-runs`): a thousand runs of a labelled sample of
/// a few thousand documents take minutes; a grid beyond is usually a mistake (every
/// combination is a run), and raising the cap says it is not.
pub const DEFAULT_MAX_RUNS: u64 = 1_000;

/// What a sweep tells as it runs: the CLI prints the count and an estimate, draws progress,
/// and keeps the rows finished for a partial table. Both methods do nothing by default.
pub trait SweepObserver: Sync {
    /// The runs of the sweep, told once, before the first starts.
    fn planned(&self, _runs: u64) {}
    /// A run finished (in the order of the table).
    fn finished(&self, _row: &TuneRow) {}
}

/// An observer that hears nothing.
pub struct Unobserved;

impl SweepObserver for Unobserved {}

/// How much of a sweep a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Every run.
    All,
    /// The runs finished when the sweep was stopped (Ctrl-C), of those planned.
    Partial {
        /// Runs finished (the table's rows).
        finished: u64,
        /// Runs planned.
        planned: u64,
    },
}

/// What the recommendation optimises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// The highest F1.
    F1,
    /// The highest recall among settings with at least this precision.
    RecallAtPrecision(f64),
}

impl FromStr for Objective {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Objective, String> {
        if text == "f1" {
            return Ok(Objective::F1);
        }
        let precision = text
            .strip_prefix("recall@")
            .and_then(|p| p.parse::<f64>().ok());
        match precision {
            Some(p) if (0.0..=1.0).contains(&p) => Ok(Objective::RecallAtPrecision(p)),
            _ => Err(format!(
                "{text:?} (expected f1 or recall@P with 0 <= P <= 1, e.g. recall@0.97)"
            )),
        }
    }
}

/// The values to sweep; every combination is run. A dimension the method has no parameter
/// for (`exact` has no `ngram`) is not swept.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneGrid {
    /// Similarity thresholds.
    pub thresholds: Vec<f64>,
    /// Tokens per shingle.
    pub ngrams: Vec<usize>,
    /// Signature lengths.
    pub permutations: Vec<usize>,
    /// SimHash distance rules (`3`, `<100:10,<500:6,3`).
    pub max_distances: Vec<String>,
    /// Any other parameters to sweep, by name, with their values as given on the command
    /// line (`threshold` and `ngram` rules by length, `max_df`, `boilerplate_df`,
    /// `rare_threshold`, ...). Naming `threshold` or `ngram` here replaces that dimension.
    pub extra: Vec<(String, Vec<String>)>,
}

/// The result of one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneRow {
    /// Tokens per shingle (`auto`: characters on CJK text), for methods with shingles.
    pub ngram: Option<usize>,
    /// `auto` only: characters per shingle on non-CJK text.
    pub latin_ngram: Option<usize>,
    /// Signature length, for MinHash.
    pub permutations: Option<usize>,
    /// Similarity threshold.
    pub threshold: f64,
    /// The flag the threshold was swept as (`--threshold`, or `--verify-threshold` for a
    /// verified SimHash), `None` when it was not swept.
    pub threshold_flag: Option<&'static str>,
    /// SimHash distance rule.
    pub max_distance: Option<String>,
    /// LSH bands and rows used, for MinHash.
    pub bands_rows: Option<(usize, usize)>,
    /// Pairwise precision, recall and F1.
    pub scores: Scores,
    /// Adjusted Rand index (cluster truth only).
    pub adjusted_rand_index: Option<f64>,
    /// Documents kept.
    pub kept: u64,
    /// Engine seconds.
    pub seconds: f64,
    /// The values of [`TuneGrid::extra`] this row ran with, in the grid's order.
    pub extra: Vec<(String, String)>,
}

/// The dimensions of a sweep for one method, before anything is run: each value a setting
/// of the parameter (`None`: the method has no such parameter, run once unset).
struct Plan {
    ngrams: Vec<Option<String>>,
    permutations: Vec<Option<String>>,
    /// `threshold`, or `verify_threshold` for a verified SimHash.
    threshold_name: &'static str,
    thresholds: Vec<Option<String>>,
    /// The flag the threshold is swept as, when it is.
    threshold_flag: Option<&'static str>,
    max_distances: Vec<Option<String>>,
    /// Whether `--sweep` names the n-gram size (the rows then show no `ngram`).
    ngram_swept: bool,
}

impl Plan {
    /// The dimensions of `grid` for `method` with the other parameters `base`.
    ///
    /// # Errors
    /// An unknown method, or a `--sweep` parameter the method does not have.
    fn new(method: &str, base: &Params, grid: &TuneGrid) -> Result<Plan> {
        let spec = registry::method(method).ok_or_else(|| {
            let names: Vec<&str> = registry::methods().iter().map(|m| m.name).collect();
            neardup_core::Error::invalid(
                "method",
                format!("{method:?} (expected one of: {})", names.join(", ")),
            )
        })?;
        if let Some((name, _)) = (grid.extra.iter()).find(|(name, _)| spec.param(name).is_none()) {
            return Err(neardup_core::Error::invalid_owned(
                name.clone(),
                format!("swept, but --method {method} has no such parameter"),
            )
            .into());
        }
        // A dimension the method does not have is run once, unset.
        let values = |name: &str, values: Vec<String>| -> Vec<Option<String>> {
            match spec.param(name) {
                Some(_) => values.into_iter().map(Some).collect(),
                None => vec![None],
            }
        };
        let text = |values: &[usize]| values.iter().map(usize::to_string).collect::<Vec<_>>();
        let swept = |name: &str| grid.extra.iter().any(|(n, _)| n == name);
        // SimHash has no `threshold`; verified, it sweeps the verification's threshold.
        let verified = base.raw("verify").is_some_and(|v| v.trim() != "none");
        let threshold_name = match spec.param("threshold") {
            None if verified && spec.param("verify_threshold").is_some() => "verify_threshold",
            _ => "threshold",
        };
        let thresholds = match swept(threshold_name) {
            true => vec![None],
            false => values(
                threshold_name,
                grid.thresholds.iter().map(f64::to_string).collect(),
            ),
        };
        let plan = Plan {
            ngram_swept: swept("ngram"),
            ngrams: match swept("ngram") {
                true => vec![None],
                false => values("ngram", text(&grid.ngrams)),
            },
            permutations: values("permutations", text(&grid.permutations)),
            threshold_name,
            threshold_flag: thresholds[0].as_ref().map(|_| match threshold_name {
                "threshold" => "--threshold",
                _ => "--verify-threshold",
            }),
            thresholds,
            max_distances: values("max_distance", grid.max_distances.clone()),
        };
        Ok(plan)
    }

    /// The runs of the sweep with the extra dimensions `extra` (saturating), and what makes
    /// them, as `threshold 7 x ngram 4 x max_df 3`.
    fn runs(&self, extra: &[(String, Vec<String>)]) -> (u64, String) {
        let own = [
            ("ngram", self.ngrams.len()),
            ("permutations", self.permutations.len()),
            (self.threshold_name, self.thresholds.len()),
            ("max_distance", self.max_distances.len()),
        ];
        let dimensions: Vec<(&str, usize)> = (own.into_iter())
            .chain(
                extra
                    .iter()
                    .map(|(name, values)| (name.as_str(), values.len())),
            )
            .filter(|&(_, count)| count > 1)
            .collect();
        let runs =
            (dimensions.iter()).fold(1u64, |runs, &(_, count)| runs.saturating_mul(count as u64));
        let made: Vec<String> = (dimensions.iter())
            .map(|(name, count)| format!("{name} {count}"))
            .collect();
        (runs, made.join(" x "))
    }
}

/// Counts the runs of sweeping `grid` with `method` and the other parameters `base`, without
/// running any, and refuses more than `max_runs`.
///
/// # Errors
/// An unknown method or swept parameter; more runs than `max_runs`, naming the count, what
/// makes it and the `max_runs` option.
pub fn count_runs(method: &str, base: &Params, grid: &TuneGrid, max_runs: u64) -> Result<u64> {
    let plan = Plan::new(method, base, grid)?;
    let (runs, made) = plan.runs(&grid.extra);
    if runs > max_runs {
        return Err(neardup_core::Error::invalid(
            "max_runs",
            format!(
                "the grid makes {runs} runs ({made}; every combination is a run), more than \
                 `max_runs` {max_runs}: sweep fewer values, or raise `max_runs` to run them all"
            ),
        )
        .into());
    }
    Ok(runs)
}

/// A labelled sample: texts, their ids, and the truth they are scored against.
#[derive(Clone, Copy)]
pub struct Labelled<'a> {
    /// The texts.
    pub texts: &'a [&'a str],
    /// The id of each text.
    pub ids: &'a [Value],
    /// The ground truth, by id.
    pub truth: &'a LoadedTruth,
}

/// Runs every setting of `grid` for the registered method `method` with the other
/// parameters `base` on `sample`, and scores it; `observer` hears of the count first and of
/// each row as it is made.
///
/// # Errors
/// When a combination of parameters is invalid (named in the error), or when the sample's
/// ids hold fewer than half of the truth's ids ([`LoadedTruth::check_ids`]).
pub fn sweep(
    sample: Labelled<'_>,
    method: &str,
    base: &Params,
    grid: &TuneGrid,
    engine: EngineOptions,
    observer: &dyn SweepObserver,
) -> Result<Vec<TuneRow>> {
    let Labelled { texts, ids, truth } = sample;
    truth.check_ids("the inputs", ids)?;
    let plan = Plan::new(method, base, grid)?;
    observer.planned(plan.runs(&grid.extra).0);
    let combinations = extra_combinations(&grid.extra);
    let mut rows = Vec::new();
    for combination in &combinations {
        for (ngram, max_distance) in
            (plan.ngrams.iter()).flat_map(|n| plan.max_distances.iter().map(move |d| (n, d)))
        {
            for permutation in &plan.permutations {
                for threshold in &plan.thresholds {
                    let mut params = base.clone();
                    let grid_values = [
                        ("ngram", ngram),
                        ("permutations", permutation),
                        (plan.threshold_name, threshold),
                        ("max_distance", max_distance),
                    ];
                    for (name, value) in grid_values {
                        if let Some(value) = value {
                            params.insert(name, value.clone());
                        }
                    }
                    for (name, value) in combination {
                        params.insert(name.clone(), value.clone());
                    }
                    let setting = Setting1 { texts, engine };
                    let mut row = score_setting(method, &params, setting, (truth, ids))?;
                    row.threshold_flag = plan.threshold_flag.filter(|_| threshold.is_some());
                    row.max_distance = max_distance.clone();
                    row.extra = combination.clone();
                    if plan.ngram_swept {
                        (row.ngram, row.latin_ngram) = (None, None);
                    }
                    observer.finished(&row);
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// Every combination of the extra dimensions of a sweep (one empty combination without
/// them); [`Plan::new`] checked their names.
fn extra_combinations(extra: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut combinations: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, options) in extra {
        combinations = (combinations.iter())
            .flat_map(|done| {
                options.iter().map(move |value| {
                    let mut next = done.clone();
                    next.push((name.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    combinations
}

/// Runs one setting and scores it against the truth.
fn score_setting(
    method: &str,
    params: &Params,
    setting: Setting1<'_>,
    (truth, ids): (&LoadedTruth, &[Value]),
) -> Result<TuneRow> {
    let texts = setting.texts.len() as u32;
    let (settings, threshold, outcome, seconds) = registry::with_method(method, params, setting)??;
    let clusters: Vec<u32> = (0..texts)
        .map(|d| outcome.assignment.cluster_of(d))
        .collect();
    let (scores, adjusted_rand_index) = match truth.score(ids, &clusters) {
        Metrics::Clusters(m) => (m.pairs.scores(), Some(m.adjusted_rand_index)),
        Metrics::Pairs(m) => (m.confusion.scores(), None),
    };
    let count = |name: &str| {
        (settings.iter())
            .find(|(n, _)| *n == name)
            .and_then(|(_, s)| match s {
                Setting::Count(n) => usize::try_from(*n).ok(),
                _ => None,
            })
    };
    Ok(TuneRow {
        ngram: count("ngram"),
        latin_ngram: count("latin_ngram"),
        permutations: count("permutations"),
        threshold,
        threshold_flag: None,
        max_distance: None,
        bands_rows: count("bands").zip(count("rows")),
        scores,
        adjusted_rand_index,
        kept: outcome.assignment.kept() as u64,
        seconds,
        extra: Vec::new(),
    })
}

/// One setting of a sweep: the method's settings, threshold, outcome and engine seconds.
type SettingRun = (Vec<(&'static str, Setting)>, f64, Outcome, f64);

/// Runs the engine with the method the registry built.
struct Setting1<'a> {
    texts: &'a [&'a str],
    engine: EngineOptions,
}

impl MethodVisitor for Setting1<'_> {
    type Output = Result<SettingRun>;
    fn visit<M: Registered>(self, method: M) -> Result<SettingRun> {
        let started = Instant::now();
        let outcome = dedup(&method, self.texts, self.engine, &NoProgress)?;
        let seconds = started.elapsed().as_secs_f64();
        Ok((method.settings(), method.threshold(), outcome, seconds))
    }
}

/// Everything `neardup tune` needs.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// The labelled sample (any input format of `dedup`).
    pub inputs: Vec<String>,
    /// How to read them (the ids must match the truth's).
    pub input: InputOptions,
    /// The ground truth file.
    pub truth: String,
    /// How to read the truth.
    pub eval: EvalOptions,
    /// The registered method to tune.
    pub method: String,
    /// Its parameters besides the swept ones.
    pub params: Params,
    /// The values to sweep.
    pub grid: TuneGrid,
    /// Clustering (the keep policy is always `first` in a sweep).
    pub engine: EngineOptions,
    /// What the recommendation optimises.
    pub objective: Objective,
    /// JSON instead of the table.
    pub json: bool,
    /// Where the table goes (`-` = stdout).
    pub output: String,
    /// The most runs: a larger grid is refused before anything is read
    /// ([`DEFAULT_MAX_RUNS`]).
    pub max_runs: u64,
}

/// Runs `neardup tune`: reads the sample and the truth, sweeps, writes the table.
///
/// # Errors
/// The output is an input; unreadable inputs or truth; an invalid parameter; too few of the
/// truth's ids among the inputs; an unwritable output.
pub fn run_tune(config: &TuneConfig, observer: &dyn SweepObserver) -> Result<()> {
    let mut inputs: Vec<(Option<String>, &str)> = config
        .inputs
        .iter()
        .map(|path| (None, path.as_str()))
        .collect();
    inputs.push((Some("`truth`".to_owned()), &config.truth));
    inputs.extend(file_params_read(&config.method, &config.params));
    check_distinct_named(&inputs, &[("`output`", &config.output)])?;
    // Counted before anything is read: a grid too large is refused at once.
    count_runs(
        &config.method,
        &config.params,
        &config.grid,
        config.max_runs,
    )?;
    // File parameters (`boilerplate_file`, ...) are paths: the methods take their contents.
    let params = read_file_params(&config.method, &config.params)?;
    let out = AtomicOutput::create(&config.output)?;
    let truth = load_truth(&config.truth, &config.eval)?;
    let corpus = read_inputs(&config.inputs, &config.input)?;
    let texts: Vec<&str> = corpus.records.iter().map(|r| r.text.as_str()).collect();
    let ids: Vec<Value> = corpus.records.iter().map(|r| r.id.clone()).collect();
    let sample = Labelled {
        texts: &texts,
        ids: &ids,
        truth: &truth,
    };
    let rows = sweep(
        sample,
        &config.method,
        &params,
        &config.grid,
        config.engine,
        observer,
    )?;
    write_rows(out, config, &rows, Completion::All)
}

/// Writes the table of `rows` to `config.output` (text or JSON as `config.json` says),
/// marked partial unless `completion` is [`Completion::All`]: what the CLI writes when a
/// sweep is stopped with Ctrl-C.
///
/// # Errors
/// The output cannot be written.
pub fn write_table(config: &TuneConfig, rows: &[TuneRow], completion: Completion) -> Result<()> {
    write_rows(
        AtomicOutput::create(&config.output)?,
        config,
        rows,
        completion,
    )
}

fn write_rows(
    mut out: AtomicOutput,
    config: &TuneConfig,
    rows: &[TuneRow],
    completion: Completion,
) -> Result<()> {
    let text = if config.json {
        format!("{:#}\n", table_json(rows, config.objective, completion))
    } else {
        partial_line(completion) + &render_text(rows, config.objective)
    };
    let path = out.path().to_owned();
    (out.writer().write_all(text.as_bytes())).map_err(|error| Error::Io { path, error })?;
    out.commit()
}

/// The first line of a partial text table (empty for a complete one).
fn partial_line(completion: Completion) -> String {
    match completion {
        Completion::All => String::new(),
        Completion::Partial { finished, planned } => format!(
            "partial: {finished} of {planned} runs finished (the sweep was stopped); the \
             recommendation is among them\n\n"
        ),
    }
}

/// The index of the recommended row, or `None` when no row meets the objective.
pub fn recommend(rows: &[TuneRow], objective: Objective) -> Option<usize> {
    let key = |row: &TuneRow| match objective {
        Objective::F1 => (row.scores.f1, row.scores.recall),
        Objective::RecallAtPrecision(_) => (row.scores.recall, row.scores.f1),
    };
    rows.iter()
        .enumerate()
        .filter(|(_, row)| match objective {
            Objective::F1 => true,
            Objective::RecallAtPrecision(p) => row.scores.precision >= p,
        })
        // Ties go to the earlier (usually cheaper) setting.
        .max_by(|(i, a), (j, b)| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(j.cmp(i))
        })
        .map(|(index, _)| index)
}

/// The table and the recommendation as text.
pub fn render_text(rows: &[TuneRow], objective: Objective) -> String {
    let mut out = String::new();
    let distances = rows.iter().any(|row| row.max_distance.is_some());
    let extra: String = (rows.first().map_or(&[][..], |row| &row.extra[..]).iter())
        .map(|(name, _)| format!("  {name}"))
        .collect();
    let _ = writeln!(
        out,
        "ngram  perms  threshold  bands x rows  precision  recall      F1     ARI     kept  seconds{}{extra}",
        if distances { "  max distance" } else { "" }
    );
    let ngram = |row: &TuneRow| match (row.ngram, row.latin_ngram) {
        (Some(ngram), Some(latin)) => format!("{ngram}/{latin}"),
        (Some(ngram), None) => ngram.to_string(),
        (None, _) => "-".to_owned(),
    };
    let dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_owned());
    for row in rows {
        let ari = row
            .adjusted_rand_index
            .map_or("      -".to_owned(), |a| format!("{a:7.4}"));
        let distance = match &row.max_distance {
            Some(rule) => format!("  {rule}"),
            None if distances => "  -".to_owned(),
            None => String::new(),
        };
        let extra: String = (row.extra.iter())
            .map(|(name, value)| format!("  {value:>width$}", width = name.len()))
            .collect();
        let _ = writeln!(
            out,
            "{:>5}  {:>5}  {:9.2}  {:>12}  {:9.4}  {:6.4}  {:6.4}  {ari}  {:7}  {:7.2}{distance}{extra}",
            ngram(row),
            dash(row.permutations.map(|p| p.to_string())),
            row.threshold,
            dash(row.bands_rows.map(|(b, r)| format!("{b} x {r}"))),
            row.scores.precision,
            row.scores.recall,
            row.scores.f1,
            row.kept,
            row.seconds,
        );
    }
    let _ = match recommend(rows, objective) {
        Some(best) => {
            let row = &rows[best];
            writeln!(
                out,
                "\nrecommended ({}):{} (precision {:.4}, recall {:.4}, F1 {:.4})",
                describe(objective),
                recommended_flags(row),
                row.scores.precision,
                row.scores.recall,
                row.scores.f1
            )
        }
        None => writeln!(
            out,
            "\nno setting meets the objective ({})",
            describe(objective)
        ),
    };
    out
}

/// The swept parameters of `row` besides the threshold, as command-line flags.
fn recommended_flags(row: &TuneRow) -> String {
    let mut flags = String::new();
    if let Some(ngram) = row.ngram {
        let _ = write!(flags, " --ngram {ngram}");
        if let Some(latin) = row.latin_ngram.filter(|&latin| latin != ngram + 2) {
            let _ = write!(flags, " --latin-ngram {latin}");
        }
    }
    if let Some(permutations) = row.permutations {
        let _ = write!(flags, " --permutations {permutations}");
    }
    if let Some(rule) = &row.max_distance {
        let _ = write!(flags, " --max-distance \"{rule}\"");
    }
    if let Some(flag) = row.threshold_flag {
        let _ = write!(flags, " {flag} {}", row.threshold);
    }
    for (name, value) in &row.extra {
        let _ = write!(flags, " --{} \"{value}\"", name.replace('_', "-"));
    }
    flags
}

/// One row of `neardup tune --json`: a setting and its scores.
#[derive(Serialize)]
struct RowJson<'a> {
    ngram: Option<usize>,
    latin_ngram: Option<usize>,
    permutations: Option<usize>,
    threshold: f64,
    max_distance: &'a Option<String>,
    bands: Option<usize>,
    rows: Option<usize>,
    precision: f64,
    recall: f64,
    f1: f64,
    adjusted_rand_index: Option<f64>,
    kept: u64,
    seconds: f64,
    /// The swept parameters of `--sweep`, by name (absent without them: the rows are
    /// what they were before `--sweep`).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    swept: serde_json::Map<String, Value>,
}

/// `neardup tune --json`: the objective, every row and the index of the recommended one.
#[derive(Serialize)]
struct TuneJson<'a> {
    objective: String,
    rows: Vec<RowJson<'a>>,
    recommended: Option<usize>,
    /// A sweep stopped before its end: the runs finished and planned (absent when complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<PartialJson>,
}

/// The `partial` member of a stopped sweep's JSON table.
#[derive(Serialize)]
struct PartialJson {
    finished: u64,
    planned: u64,
}

/// The table and the recommendation as JSON.
pub fn render_json(rows: &[TuneRow], objective: Objective) -> Value {
    table_json(rows, objective, Completion::All)
}

/// [`render_json`], marked partial when `completion` says so.
fn table_json(rows: &[TuneRow], objective: Objective, completion: Completion) -> Value {
    let table = TuneJson {
        objective: describe(objective),
        rows: (rows.iter()).map(row_json).collect(),
        recommended: recommend(rows, objective),
        partial: match completion {
            Completion::All => None,
            Completion::Partial { finished, planned } => Some(PartialJson { finished, planned }),
        },
    };
    // Serialising plain fields and options into a value cannot fail.
    serde_json::to_value(table).unwrap_or(Value::Null)
}

fn row_json(row: &TuneRow) -> RowJson<'_> {
    RowJson {
        ngram: row.ngram,
        latin_ngram: row.latin_ngram,
        permutations: row.permutations,
        threshold: row.threshold,
        max_distance: &row.max_distance,
        bands: row.bands_rows.map(|b| b.0),
        rows: row.bands_rows.map(|b| b.1),
        precision: row.scores.precision,
        recall: row.scores.recall,
        f1: row.scores.f1,
        adjusted_rand_index: row.adjusted_rand_index,
        kept: row.kept,
        seconds: row.seconds,
        swept: (row.extra.iter())
            .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
            .collect(),
    }
}

fn describe(objective: Objective) -> String {
    match objective {
        Objective::F1 => "highest F1".to_owned(),
        Objective::RecallAtPrecision(p) => format!("highest recall at precision >= {p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_table_is_the_one_json_rows_made() {
        let mut simhash = row(0.7, 0.5, 0.25);
        simhash.max_distance = Some("<100:15,11".into());
        simhash.bands_rows = None;
        simhash.adjusted_rand_index = Some(0.125);
        simhash.kept = 12;
        simhash.seconds = 1.5;
        let rows = [row(0.5, 0.9, 0.95), simhash];
        let old_rows: Vec<Value> = (rows.iter())
            .map(|row| {
                serde_json::json!({
                    "ngram": row.ngram, "latin_ngram": row.latin_ngram,
                    "permutations": row.permutations, "threshold": row.threshold,
                    "max_distance": row.max_distance,
                    "bands": row.bands_rows.map(|b| b.0), "rows": row.bands_rows.map(|b| b.1),
                    "precision": row.scores.precision, "recall": row.scores.recall,
                    "f1": row.scores.f1, "adjusted_rand_index": row.adjusted_rand_index,
                    "kept": row.kept, "seconds": row.seconds,
                })
            })
            .collect();
        let objective = Objective::F1;
        let old = serde_json::json!({"objective": describe(objective), "rows": old_rows,
            "recommended": recommend(&rows, objective)});
        let new = render_json(&rows, objective);
        assert_eq!(format!("{new:#}"), format!("{old:#}"));
        // A row of `--sweep` carries its values.
        let mut swept = row(0.4, 0.9, 0.9);
        swept.extra = vec![("threshold".into(), "<25:0.43,0.4".into())];
        let json = render_json(&[swept], objective);
        assert_eq!(json["rows"][0]["swept"]["threshold"], "<25:0.43,0.4");
    }

    fn row(threshold: f64, precision: f64, recall: f64) -> TuneRow {
        let f1 = 2.0 * precision * recall / (precision + recall);
        TuneRow {
            ngram: Some(5),
            latin_ngram: None,
            permutations: Some(128),
            threshold,
            threshold_flag: Some("--threshold"),
            max_distance: None,
            bands_rows: Some((21, 6)),
            scores: Scores {
                precision,
                recall,
                f1,
            },
            adjusted_rand_index: None,
            kept: 0,
            seconds: 0.0,
            extra: Vec::new(),
        }
    }

    fn grid(extra: &[(&str, usize)]) -> TuneGrid {
        let values = |count: usize| (1..=count).map(|i| format!("0.{i:02}")).collect();
        TuneGrid {
            thresholds: vec![0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
            ngrams: vec![2, 3, 4, 5],
            permutations: vec![128],
            max_distances: vec!["3".into()],
            extra: (extra.iter())
                .map(|&(name, count)| (name.to_owned(), values(count)))
                .collect(),
        }
    }

    /// Issue 44, item 4: six parameters of ten values each made a million runs, started
    /// without a word. The runs are counted before any is made, and a grid past the cap is
    /// refused naming the count, what makes it and the option.
    #[test]
    fn regression_a_million_run_sweep_is_refused_before_it_runs() {
        let mut huge = grid(&[
            ("max_df", 10),
            ("boilerplate_df", 10),
            ("rare_threshold", 10),
        ]);
        huge.thresholds = (1..=10).map(|i| f64::from(i) / 10.0).collect();
        huge.ngrams = (1..=10).collect();
        huge.permutations = (1..=10).map(|i| i * 16).collect();
        let base = Params::new();
        let error = count_runs("minhash", &base, &huge, DEFAULT_MAX_RUNS)
            .unwrap_err()
            .to_string();
        for part in [
            "the grid makes 1000000 runs",
            "ngram 10 x permutations 10 x threshold 10 x max_df 10 x boilerplate_df 10 x \
             rare_threshold 10",
            "more than `max_runs` 1000",
        ] {
            assert!(error.contains(part), "{part:?} in {error}");
        }
        assert_eq!(
            count_runs("minhash", &base, &huge, 1_000_000).unwrap(),
            1_000_000
        );
        // The defaults: 7 thresholds x 4 n-gram sizes; SimHash (no threshold unverified)
        // 4 n-gram sizes x 3 distance rules.
        assert_eq!(count_runs("minhash", &base, &grid(&[]), 1000).unwrap(), 28);
        let mut simhash = grid(&[]);
        simhash.max_distances = vec!["3".into(), "6".into(), "<100:10,<500:6,3".into()];
        assert_eq!(count_runs("simhash", &base, &simhash, 1000).unwrap(), 12);
        assert!(count_runs("exact", &base, &grid(&[("max_df", 2)]), 1000).is_err());
    }

    /// A sweep stopped with Ctrl-C writes the rows it finished, marked partial in both
    /// forms; a complete table carries no mark.
    #[test]
    fn a_partial_table_says_how_many_runs_it_holds() {
        let rows = [row(0.5, 0.9, 0.95)];
        let partial = Completion::Partial {
            finished: 1,
            planned: 40,
        };
        let json = table_json(&rows, Objective::F1, partial);
        assert_eq!(
            json["partial"],
            serde_json::json!({"finished": 1, "planned": 40})
        );
        assert_eq!(json["rows"].as_array().unwrap().len(), 1);
        assert!(table_json(&rows, Objective::F1, Completion::All)
            .get("partial")
            .is_none());
        assert!(partial_line(partial).starts_with("partial: 1 of 40 runs finished"));
        assert_eq!(partial_line(Completion::All), "");
    }

    #[test]
    fn objectives_parse() {
        assert_eq!("f1".parse::<Objective>(), Ok(Objective::F1));
        assert_eq!(
            "recall@0.97".parse::<Objective>(),
            Ok(Objective::RecallAtPrecision(0.97))
        );
        assert!("recall@2".parse::<Objective>().is_err());
        assert!("precision".parse::<Objective>().is_err());
    }

    #[test]
    fn recommendation_follows_the_objective() {
        let rows = [
            row(0.5, 0.90, 0.95),
            row(0.7, 0.98, 0.85),
            row(0.9, 1.0, 0.60),
        ];
        assert_eq!(recommend(&rows, Objective::F1), Some(0));
        assert_eq!(
            recommend(&rows, Objective::RecallAtPrecision(0.97)),
            Some(1)
        );
        assert_eq!(
            recommend(&rows, Objective::RecallAtPrecision(0.999)),
            Some(2)
        );
        assert_eq!(
            recommend(&rows[..1], Objective::RecallAtPrecision(0.97)),
            None
        );
        assert!(render_text(&rows[..1], Objective::RecallAtPrecision(0.97)).contains("no setting"));
    }

    #[test]
    fn ties_go_to_the_first_setting() {
        let rows = [row(0.6, 1.0, 1.0), row(0.7, 1.0, 1.0)];
        assert_eq!(recommend(&rows, Objective::F1), Some(0));
    }
}
