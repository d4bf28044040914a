//! One `dedup` run: read the inputs, run the engine, write the outputs atomically.
//!
//! Every output file is created (as a temporary file beside its final path) before any work
//! starts, so an unwritable path fails at once; all of them are renamed into place only after
//! everything was written, so a failed or killed run leaves no complete-looking file.
//!
//! A run is a row of rooms, each a module:
//!
//! - `outputs`: the output files, checked against the files read and created first;
//! - `memory`: the peak resident memory of each stage, sampled by a thread;
//! - `in_memory`: the path of a run that fits in memory (every record read, the texts
//!   moved into the engine);
//! - `streamed`: the path of a run that does not (the inputs streamed once or twice, the
//!   sketches spilled, the kept records written by reading the inputs again), over
//!   `sides` (the streamed reads of both sides, in blocks) and `checkpoint` (the codecs
//!   of a resumable run's checkpoints);
//! - `report`: the clusters, pairs, boilerplate, lexicon and statistics files, and the
//!   commit of every output.
//!
//! Both paths hand a `Read` to `report`.

mod checkpoint;
mod in_memory;
mod memory;
mod outputs;
mod report;
mod sides;
mod streamed;
mod templates;

use std::time::Instant;

use neardup_core::registry::{self, MethodVisitor, Params, Registered, Setting};
use neardup_engine::{EngineOptions, Outcome, Progress};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::file_spill::default_memory_limit;
use crate::input::{Corpus, InputOptions, Meta};
use crate::memory_plan::{plan, Plan};
use crate::memory_rule::{document_factor, MemoryRule};
use crate::stats::RunStats;

use in_memory::read_in_memory;
use memory::StagePeaks;
use outputs::{check_outputs, open_outputs};
use report::finish;
use streamed::read_streamed;

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Input paths (`-` for stdin).
    pub inputs: Vec<String>,
    /// How to read them.
    pub input: InputOptions,
    /// Where the kept documents go (`-` for stdout).
    pub output: String,
    /// Optional clusters file (one JSON row per input document).
    pub clusters: Option<String>,
    /// Optional verified-pairs file.
    pub pairs: Option<String>,
    /// Optional statistics file (JSON, [`RunStats`]).
    pub stats: Option<String>,
    /// Optional list of the boilerplate lines found, one per line, most frequent first
    /// (readable back with the method parameter `boilerplate_file`).
    pub boilerplate_out: Option<String>,
    /// Optional lexicon file: what the method learned (imatch), readable back with its
    /// `lexicon_file` parameter. Needs `engine.save_lexicon`.
    pub save_lexicon: Option<String>,
    /// The method's name in the registry ([`neardup_core::registry::methods`]).
    pub method: String,
    /// The method's parameters; absent ones take their defaults.
    pub params: Params,
    /// Clustering, keep policy and candidate limits.
    pub engine: EngineOptions,
    /// Reference corpus files (`dedup --against`), read with the same options: the inputs
    /// are checked against them and only the inputs are written. Empty: none.
    /// `engine.within` says whether the inputs are also deduplicated among themselves.
    pub against: Vec<String>,
    /// The memory limit in bytes (`--memory-limit`); `None`: three quarters of the memory
    /// available (see [`crate::file_spill`]). A run expected to pass it streams its inputs and
    /// spills its sketches.
    pub memory_limit: Option<u64>,
    /// Where the temporary directory of a spilling run is made (`--temp-dir`); `None`: beside
    /// the output.
    pub temp_dir: Option<String>,
    /// Whether a spilling run checkpoints its stages and takes up the checkpoints an earlier
    /// run of the same inputs and options left (`--resume`; see [`crate::resume`]).
    pub resume: bool,
    /// Span removal from the kept documents, in the same run (`dedup --spans`); `None`: none.
    /// It holds the texts in memory: a corpus that needs the streamed path is refused.
    pub spans: Option<crate::spans::SpanRun>,
}

impl RunConfig {
    /// A run of `method` with `params` from `inputs` to `output`, with default reading, no
    /// report files and default engine options.
    pub fn new(inputs: Vec<String>, output: String, method: &str, params: Params) -> RunConfig {
        RunConfig {
            inputs,
            input: InputOptions::default(),
            output,
            clusters: None,
            pairs: None,
            stats: None,
            boilerplate_out: None,
            save_lexicon: None,
            method: method.to_owned(),
            params,
            engine: EngineOptions::default(),
            against: Vec::new(),
            memory_limit: None,
            temp_dir: None,
            resume: false,
            spans: None,
        }
    }
}

/// What a run reports back (also written to the stats file).
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The statistics.
    pub stats: RunStats,
    /// What span removal did (`dedup --spans`).
    pub spans: Option<crate::spans::SpansReport>,
}

/// Runs one dedup job.
///
/// # Errors
/// Invalid parameters (naming the parameter, e.g. `threshold` or `bucket_cap`), unreadable or
/// malformed input (unless skipped), unwritable outputs.
pub fn run(config: &RunConfig, progress: &dyn Progress) -> Result<RunReport> {
    config.engine.validate()?;
    check_outputs(config)?;
    let params = read_file_params(&config.method, &config.params)?;
    let budget = config.engine.candidate_budget;
    registry::with_method(&config.method, &params, Job { config, progress })?
        .map_err(|error| budget_reached(error, budget))
}

/// The engine stops an exact join that finds more similar pairs than the candidate budget
/// allows with an error on `candidate_budget`; the value itself was valid ([`run`] checked
/// it), so the error says that a limit was reached, and which values the option takes.
fn budget_reached(error: Error, budget: usize) -> Error {
    match error {
        Error::Parameter(inner) if inner.parameter() == "candidate_budget" => {
            let detail = inner.message();
            let detail = (detail.strip_prefix(&format!("{budget}: "))).unwrap_or(detail);
            let default = EngineOptions::default().candidate_budget;
            Error::Stopped {
                parameter: "candidate_budget".to_owned(),
                message: format!(
                    "the run reached its candidate budget (`candidate_budget` {budget}: a valid \
                     value, too low for this corpus): {detail} (`candidate_budget` takes a \
                     whole number of at least 1, the similar pairs kept per distinct text; \
                     default {default})"
                ),
            }
        }
        other => other,
    }
}

/// `params` with the value of every file parameter of `method` (a path, see
/// [`registry::ParamKind::File`]) replaced by the file's contents.
///
/// # Errors
/// A file that cannot be read or is not UTF-8, naming the file.
pub fn read_file_params(method: &str, params: &Params) -> Result<Params> {
    let mut resolved = params.clone();
    for (name, path) in registry::file_params(method, params) {
        let bytes = std::fs::read(path).map_err(|error| Error::Io {
            path: path.to_owned(),
            error,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::format(
                path,
                format!(
                    "not UTF-8 text (byte offset {}), given as `{name}`",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        resolved.insert(name, text);
    }
    Ok(resolved)
}

/// The run, once the registry has built the method.
struct Job<'a> {
    config: &'a RunConfig,
    progress: &'a dyn Progress,
}

impl MethodVisitor for Job<'_> {
    type Output = Result<RunReport>;
    fn visit<M: Registered>(self, method: M) -> Result<RunReport> {
        run_with(&method, self.config, self.progress)
    }
}

/// The settings of a method as the stats file's `method.params` object.
pub fn settings_json(settings: Vec<(&'static str, Setting)>) -> Map<String, Value> {
    (settings.into_iter())
        .map(|(name, setting)| {
            let value = match setting {
                Setting::Number(x) => Value::from(x),
                Setting::Count(n) => Value::from(n),
                Setting::Text(text) => Value::from(text),
                Setting::Flag(yes) => Value::from(yes),
            };
            (name.to_owned(), value)
        })
        .collect()
}

/// Every file a run reads, with the option that names it (`None`: a positional input): the
/// inputs, the `--against` corpus and the method's file parameters (lists, tables, lexicons),
/// for [`check_distinct_named`](crate::paths::check_distinct_named).
pub fn files_read(config: &RunConfig) -> Vec<(Option<String>, &str)> {
    let mut read: Vec<(Option<String>, &str)> = config
        .inputs
        .iter()
        .map(|path| (None, path.as_str()))
        .collect();
    read.extend((config.against.iter()).map(|path| (Some("`against`".to_owned()), path.as_str())));
    read.extend(file_params_read(&config.method, &config.params));
    read
}

/// The files the file parameters of `method` name in `params`, each with its option as
/// messages name options (`` `boilerplate_file` ``; front ends show their own spelling).
pub fn file_params_read<'a>(method: &str, params: &'a Params) -> Vec<(Option<String>, &'a str)> {
    (registry::file_params(method, params).into_iter())
        .map(|(name, path)| (Some(format!("`{name}`")), path))
        .collect()
}

fn run_with<M: Registered>(
    method: &M,
    config: &RunConfig,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let started = Instant::now();
    let peaks = StagePeaks::new(progress);
    let progress: &dyn Progress = &peaks;
    let mut outputs = open_outputs(config)?;
    let limit = config.memory_limit.unwrap_or_else(default_memory_limit);
    let mut plan = plan(
        &config.inputs,
        &config.against,
        config.input.format,
        limit,
        config.memory_limit.is_some(),
    );
    let engine = EngineOptions {
        save_lexicon: config.engine.save_lexicon || config.save_lexicon.is_some(),
        ..config.engine
    };
    if let Some(message) = plan.check_floor(limit) {
        return Err(Error::Stopped {
            parameter: "memory_limit".to_owned(),
            message,
        });
    }
    let with_rule = |holds: bool| {
        let mut config = config.clone();
        config.input.memory = Some(MemoryRule {
            limit,
            factor: document_factor(method.name()),
            holds,
            threads: rayon::current_num_threads() as u64,
        });
        config
    };
    let mut read = None;
    if !plan.spill {
        match read_in_memory(method, &with_rule(true), engine, &mut outputs, progress) {
            Ok(done) => read = Some(done),
            Err(Error::Stopped { parameter, message }) if parameter == "memory_limit" => {
                refuse_read_once_switch(config, limit, &message)?;
                plan = Plan {
                    spill: true,
                    reason: format!("{message}: streamed instead"),
                    documents: plan.documents,
                };
            }
            Err(error) => return Err(error),
        }
    }
    if read.is_none() && config.spans.is_some() {
        return Err(Error::Stopped {
            parameter: "memory_limit".to_owned(),
            message: format!(
                "this corpus takes the streamed path ({}), and span removal in the same run \
                 holds the texts in memory: raise --memory-limit, or run dedup, then neardup \
                 spans on its output",
                plan.reason
            ),
        });
    }
    let mut read = match read {
        Some(read) => read,
        None => read_streamed(
            method,
            &with_rule(false),
            engine,
            limit,
            &mut outputs,
            progress,
        )?,
    };
    read.memory = Some((limit, plan));
    peaks.switch("write");
    finish(method, config, outputs, read, started, peaks)
}

/// Standard input, a FIFO or a descriptor cannot be read twice ([`crate::paths::read_once`]):
/// an in-memory read of one that passes the memory limit fails, and says how to stream it
/// from the start.
fn refuse_read_once_switch(config: &RunConfig, limit: u64, message: &str) -> Result<()> {
    let Some(path) =
        (config.inputs.iter().chain(&config.against)).find(|p| crate::paths::read_once(p))
    else {
        return Ok(());
    };
    let path = crate::paths::display_input(path);
    Err(Error::Stopped {
        parameter: "memory_limit".to_owned(),
        message: format!(
            "{message}; {path} cannot be read again on the streamed path: give \
             --memory-limit (for example --memory-limit {limit}) to stream it from the start \
             through --temp-dir"
        ),
    })
}

/// What either path hands to the writing of the reports.
struct Read {
    reference: Ids,
    corpus: Ids,
    /// The inputs' skips and bytes (records not kept here).
    counts: Corpus,
    outcome: Outcome,
    /// Seconds of the stages the pipeline timed itself (before the engine's).
    seconds: Vec<(String, f64)>,
    /// Bytes written to temporary files besides the engine's spill.
    spilled: u64,
    memory: Option<(u64, Plan)>,
    /// What a resumable run took up.
    resume: Option<ResumeStats>,
    /// The texts of the documents the stats file's templates section lists (by engine
    /// document), taken where the path had them at hand; the others are read again there.
    texts: std::collections::HashMap<usize, String>,
    /// What span removal did (`dedup --spans`).
    spans: Option<crate::spans::SpansReport>,
}

/// What a resumable run took up from an earlier one.
struct ResumeStats {
    /// The last stage whose checkpoint was taken up (`None`: started from the beginning).
    from: Option<&'static str>,
    /// Why checkpoints found were not taken up.
    discarded: Option<String>,
}

/// The ids of one side of a run, in engine order.
enum Ids {
    Records(Vec<Value>),
    Meta(Meta),
}

impl Ids {
    fn len(&self) -> usize {
        match self {
            Ids::Records(ids) => ids.len(),
            Ids::Meta(meta) => meta.len(),
        }
    }
    fn get(&self, index: usize) -> Value {
        match self {
            Ids::Records(ids) => ids[index].clone(),
            Ids::Meta(meta) => meta.id(index),
        }
    }
}

/// The documents of a run: the reference corpus (`--against`; empty without one) first, then
/// the inputs, numbered in that order as the engine numbers them.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    reference: &'a Ids,
    corpus: &'a Ids,
    within: bool,
}

impl View<'_> {
    /// Where the inputs start.
    pub(crate) fn first(&self) -> usize {
        self.reference.len()
    }
    pub(crate) fn id(&self, document: usize) -> Value {
        match document.checked_sub(self.first()) {
            Some(input) => self.corpus.get(input),
            None => self.reference.get(document),
        }
    }
}

/// A run whose every record was skipped has nothing to deduplicate: almost surely the wrong
/// `--text-field`, `--format` or file. It fails instead of writing empty outputs.
fn refuse_all_skipped(corpus: &Corpus) -> Result<()> {
    let skipped = &corpus.skipped;
    if !corpus.records.is_empty() || skipped.count == 0 {
        return Ok(());
    }
    let first = skipped.first.first().map_or("", String::as_str);
    let message = format!(
        "every record was skipped ({} bad records; the first: {first})",
        skipped.count
    );
    let path = corpus
        .sources
        .first()
        .map_or("<input>", |s| s.path.as_str());
    Err(Error::format(path, message))
}
