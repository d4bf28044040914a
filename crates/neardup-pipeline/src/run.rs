//! One `dedup` run: read the inputs, run the engine, write the outputs atomically.
//!
//! Every output file is created (as a temporary file beside its final path) before any work
//! starts, so an unwritable path fails at once; all of them are renamed into place only after
//! everything was written, so a failed or killed run leaves no complete-looking file.

use std::path::{Path, PathBuf};
use std::time::Instant;

use neardup_core::codec::{self, Decoder, Encoder};
use neardup_core::corpus::CorpusStats;
use neardup_core::registry::{self, MethodVisitor, Params, Registered, Setting};
use neardup_engine::spill::Spilling;
use neardup_engine::{
    BoilerplateStats, CorpusLearner, EngineOptions, Learned, NoProgress, Outcome, Progress,
    Sketcher,
};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::input::{
    read_inputs, read_inputs_replayed, read_inputs_streamed, Corpus, Format, IdArena, InputOptions,
    Meta, ParkedIds, Raw, Record, Runs, Skipped, Source,
};
use crate::output::{commit_all, write_json_lines, write_kept, write_kept_streamed, AtomicOutput};
use crate::paths::{check_distinct_named, STANDARD};
use crate::resume::{ResumeDir, Stage};
use crate::spill::{default_memory_limit, plan, temp_parent, FileSpillDir, Plan, TempArea};
use crate::stats::{
    cluster_size_histogram_from, peak_rss_bytes, BoilerplateLineReport, BoilerplateReport,
    MethodStats, RunStats,
};

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
    /// available (see [`crate::spill`]). A run expected to pass it streams its inputs and
    /// spills its sketches.
    pub memory_limit: Option<u64>,
    /// Where the temporary directory of a spilling run is made (`--temp-dir`); `None`: beside
    /// the output.
    pub temp_dir: Option<String>,
    /// Whether a spilling run checkpoints its stages and takes up the checkpoints an earlier
    /// run of the same inputs and options left (`--resume`; see [`crate::resume`]).
    pub resume: bool,
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
        }
    }
}

/// What a run reports back (also written to the stats file).
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The statistics.
    pub stats: RunStats,
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
                Setting::Number(x) => json!(x),
                Setting::Count(n) => json!(n),
                Setting::Text(text) => json!(text),
                Setting::Flag(yes) => json!(yes),
            };
            (name.to_owned(), value)
        })
        .collect()
}

struct Outputs {
    kept: AtomicOutput,
    clusters: Option<AtomicOutput>,
    pairs: Option<AtomicOutput>,
    stats: Option<AtomicOutput>,
    boilerplate: Option<AtomicOutput>,
    lexicon: Option<AtomicOutput>,
}

/// Every file a run reads, with the option that names it (`None`: a positional input): the
/// inputs, the `--against` corpus and the method's file parameters (lists, tables, lexicons),
/// for [`check_distinct_named`].
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

/// The outputs of a run, each with its option, in the order they are created.
fn named_outputs(config: &RunConfig) -> Vec<(&'static str, &str)> {
    let named = [
        ("`output`", Some(&config.output)),
        ("`clusters`", config.clusters.as_ref()),
        ("`pairs`", config.pairs.as_ref()),
        ("`stats`", config.stats.as_ref()),
        ("`boilerplate_out`", config.boilerplate_out.as_ref()),
        ("`save_lexicon`", config.save_lexicon.as_ref()),
    ];
    (named.into_iter())
        .filter_map(|(option, path)| path.map(|path| (option, path.as_str())))
        .collect()
}

/// Refuses outputs that are files the run reads ([`files_read`]) or each other, before
/// anything is read or created.
fn check_outputs(config: &RunConfig) -> Result<()> {
    check_distinct_named(&files_read(config), &named_outputs(config))
}

/// Creates every output (checked by [`check_outputs`] when the run started).
fn open_outputs(config: &RunConfig) -> Result<Outputs> {
    let optional = |path: &Option<String>| path.as_deref().map(AtomicOutput::create).transpose();
    Ok(Outputs {
        kept: AtomicOutput::create(&config.output)?,
        clusters: optional(&config.clusters)?,
        pairs: optional(&config.pairs)?,
        stats: optional(&config.stats)?,
        boilerplate: optional(&config.boilerplate_out)?,
        lexicon: optional(&config.save_lexicon)?,
    })
}

/// Passes progress on and notes the peak resident memory of each stage, sampled every
/// [`SAMPLE_MS`] milliseconds by a thread (`VmRSS` of `/proc/self/status`; Linux only). The
/// kernel's own high-water mark is left alone, so that tools measuring the process from
/// outside see its true peak.
struct StagePeaks<'a> {
    inner: &'a dyn Progress,
    state: std::sync::Arc<std::sync::Mutex<PeakState>>,
    sampler: Option<std::thread::JoinHandle<()>>,
}

/// Milliseconds between two samples of [`StagePeaks`].
const SAMPLE_MS: u64 = 20;

#[derive(Default)]
struct PeakState {
    stages: Vec<(String, u64)>,
    done: bool,
}

impl PeakState {
    fn note(&mut self, resident: u64) {
        if let Some(last) = self.stages.last_mut() {
            last.1 = last.1.max(resident);
        }
    }
}

/// `VmRSS` of this process in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

impl<'a> StagePeaks<'a> {
    fn new(inner: &'a dyn Progress) -> StagePeaks<'a> {
        let state = std::sync::Arc::new(std::sync::Mutex::new(PeakState {
            stages: vec![("read".to_owned(), 0)],
            done: false,
        }));
        let sampler = resident_bytes().is_some().then(|| {
            let state = state.clone();
            std::thread::spawn(move || loop {
                let resident = resident_bytes().unwrap_or(0);
                {
                    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                    if state.done {
                        return;
                    }
                    state.note(resident);
                }
                std::thread::sleep(std::time::Duration::from_millis(SAMPLE_MS));
            })
        });
        StagePeaks {
            inner,
            state,
            sampler,
        }
    }

    /// Starts the stage `next`.
    fn switch(&self, next: &str) {
        let resident = resident_bytes().unwrap_or(0);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.note(resident);
        state.stages.push((next.to_owned(), resident));
    }

    /// The peak of each stage that ran, in order (empty where memory cannot be read).
    fn finish(mut self) -> Vec<(String, u64)> {
        let resident = resident_bytes().unwrap_or(0);
        let stages = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.note(resident);
            state.done = true;
            std::mem::take(&mut state.stages)
        };
        match self.sampler.take() {
            Some(sampler) => {
                let _ = sampler.join();
                stages
            }
            None => Vec::new(),
        }
    }
}

impl Progress for StagePeaks<'_> {
    fn stage(&self, name: &'static str, total: u64) {
        self.switch(name);
        self.inner.stage(name, total);
    }
    fn stage_bytes(&self, name: &'static str, total: u64) {
        self.switch(name);
        self.inner.stage_bytes(name, total);
    }
    fn advance(&self, done: u64) {
        self.inner.advance(done);
    }
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
    let plan = plan(
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
    let mut read = if plan.spill {
        read_streamed(method, config, engine, limit, &mut outputs, progress)?
    } else {
        read_in_memory(method, config, engine, &mut outputs, progress)?
    };
    read.memory = Some((limit, plan));
    peaks.switch("write");
    finish(method, config, outputs, read, started, peaks)
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

/// The in-memory path: every record read, the texts moved into the engine, the kept records
/// written from memory.
fn read_in_memory<M: Registered>(
    method: &M,
    config: &RunConfig,
    engine: EngineOptions,
    outputs: &mut Outputs,
    progress: &dyn Progress,
) -> Result<Read> {
    let started = Instant::now();
    let mut reference = Corpus::default();
    if !config.against.is_empty() {
        reference = read_inputs(&config.against, &config.input)?;
        refuse_all_skipped(&reference)?;
        if config.input.id_field.is_none() {
            // Ordinals would repeat the inputs' own: a reference document is named by its
            // file and line instead.
            for record in &mut reference.records {
                let path = &reference.sources[record.source as usize].path;
                record.id = Value::String(format!("{path}:{}", record.line));
            }
        }
    }
    let mut corpus = read_inputs(&config.inputs, &config.input)?;
    refuse_all_skipped(&corpus)?;
    let read_seconds = started.elapsed().as_secs_f64();
    let first = reference.records.len();
    // The texts move into the engine, which drops each once it is sketched.
    let texts: Vec<String> = (reference.records.iter_mut())
        .chain(corpus.records.iter_mut())
        .map(|r| std::mem::take(&mut r.text))
        .collect();
    let engine = EngineOptions {
        reference: first as u32,
        ..engine
    };
    let outcome = neardup_engine::dedup_owned(method, texts, engine, progress)?;
    let writing = Instant::now();
    let keep: Vec<bool> = (outcome.assignment.duplicate_of[first..].iter())
        .map(Option::is_none)
        .collect();
    write_kept(&corpus, &keep, &mut outputs.kept)?;
    let ids = |corpus: &mut Corpus| -> Vec<Value> {
        (corpus.records.drain(..)).map(|record| record.id).collect()
    };
    let reference_ids = ids(&mut reference);
    let corpus_ids = ids(&mut corpus);
    Ok(Read {
        reference: Ids::Records(reference_ids),
        corpus: Ids::Records(corpus_ids),
        counts: corpus,
        outcome,
        seconds: vec![
            ("read".to_owned(), read_seconds),
            ("write_kept".to_owned(), writing.elapsed().as_secs_f64()),
        ],
        spilled: 0,
        memory: None,
        resume: None,
    })
}

/// Texts of a streamed read given to the engine together, in bytes (their sketches, often
/// larger than the texts, are held until the block is encoded into the spill).
const STREAM_BLOCK_BYTES: usize = 4 << 20;

/// The spilling path: the inputs streamed (twice when the method learns from the corpus,
/// once more to write the kept records), sketches spilled to the temporary directory.
fn read_streamed<M: Registered>(
    method: &M,
    config: &RunConfig,
    engine: EngineOptions,
    limit: u64,
    outputs: &mut Outputs,
    progress: &dyn Progress,
) -> Result<Read> {
    let parent = temp_parent(config.temp_dir.as_deref(), &config.output);
    let mut timed: Vec<(String, f64)> = Vec::new();
    let mut resume = match config.resume {
        true => {
            let head = vec![
                format!("neardup {}", env!("CARGO_PKG_VERSION")),
                // Raised whenever a checkpoint's layout changes, so that checkpoints of
                // another layout are discarded, not read.
                format!("checkpoints {CHECKPOINT_LAYOUT}"),
                format!(
                    "method {} {}",
                    method.name(),
                    Value::Object(settings_json(method.settings()))
                ),
                format!("input {:?}", config.input),
                format!("engine {engine:?}"),
            ];
            // The manifest hashes every input in full: seconds of their own in the stats.
            let hashing = Instant::now();
            let manifest = crate::resume::manifest(&head, &config.against, &config.inputs)?;
            timed.push(("resume_hash".to_owned(), hashing.elapsed().as_secs_f64()));
            Some(ResumeDir::open(&parent, &config.output, &manifest)?)
        }
        false => None,
    };
    let area = match &resume {
        Some(_) => None,
        None => Some(TempArea::create(&parent)?),
    };
    let work: PathBuf = match (&resume, &area) {
        (Some(resume), _) => resume.path().to_path_buf(),
        (None, Some(area)) => area.path().to_path_buf(),
        (None, None) => unreachable!("a run has a resume directory or a temporary area"),
    };
    // Standard input cannot be read twice: it is copied first.
    let mut spilled = 0;
    let mut copy_stdin = |paths: &[String], name: &str| -> Result<Vec<String>> {
        let mut opened = Vec::with_capacity(paths.len());
        for path in paths {
            if path != STANDARD {
                opened.push(path.clone());
                continue;
            }
            let copy = work.join(name);
            let mut file = std::fs::File::create(&copy).map_err(|error| Error::Io {
                path: copy.display().to_string(),
                error,
            })?;
            spilled += std::io::copy(&mut std::io::stdin().lock(), &mut file).map_err(|e| {
                Error::Parameter(neardup_core::Error::invalid(
                    "temp_dir",
                    format!("copying standard input to {}: {e}", copy.display()),
                ))
            })?;
            opened.push(copy.display().to_string());
        }
        Ok(opened)
    };
    let against_opened = copy_stdin(&config.against, "stdin-against")?;
    let inputs_opened = copy_stdin(&config.inputs, "stdin")?;
    let sides = Sides {
        config,
        against_opened: &against_opened,
        inputs_opened: &inputs_opened,
    };
    let mut resumed: Option<&'static str> = None;
    let last = resume.as_ref().and_then(ResumeDir::last);
    // The ids, while the stages that do not need them run.
    let mut parked: Option<ParkedSides> = None;

    // The corpus pass, when the method learns from the corpus: what the first read found
    // (ids, places, skips) is kept, and the second read replays it (no table of ids, no
    // second copy of the ids); a corpus pass taken up from a checkpoint has only its
    // summary, and the second read is a full one checked against it.
    let corpus_pass = match method.learns_from_corpus() {
        true => match resume.as_ref().map(|r| r.load(Stage::Corpus)).transpose()? {
            Some(Some(payload)) => {
                resumed = Some(Stage::Corpus.name());
                Some((decode_corpus_checkpoint(&payload)?, None))
            }
            _ if last == Some(Stage::Sketch) => None,
            _ => {
                let started = Instant::now();
                progress.stage_bytes("read+corpus", sides.total_bytes());
                // The table's memory is `--corpus-memory` on either path, so that both
                // count alike (it is not shrunk to fit a small limit).
                let mut learner = CorpusLearner::new(engine.corpus_memory);
                let mut read = sides.read(progress, &mut |texts| {
                    learner.push(method, &texts, &NoProgress);
                    Ok(())
                })?;
                // Kept through the run: without the slack of a read of unknown size.
                read.reference_meta.shrink_to_fit();
                read.corpus_meta.shrink_to_fit();
                let pass = (
                    learner.finish(),
                    started.elapsed().as_secs_f64(),
                    read.summary(),
                );
                if let Some(resume) = &resume {
                    resume.save(Stage::Corpus, &encode_corpus_checkpoint(&pass))?;
                }
                // The replayed read needs places, not ids: they wait on disk (a resumable
                // run's sketch checkpoint holds them, so it parks them after that stage).
                if resume.is_none() {
                    parked = Some(ParkedSides::park(&mut read, &work)?);
                }
                Some((pass, Some(read)))
            }
        },
        false => None,
    };
    let (corpus, first_read, first_full) = match corpus_pass {
        Some(((stats, seconds, summary), full)) => (Some((stats, seconds)), Some(summary), full),
        None => (None, None, None),
    };
    let spilling = Spilling {
        dir: std::sync::Arc::new(FileSpillDir {
            path: work.clone(),
            keep_sketches: resume.is_some(),
        }),
        budget: key_budget(limit),
    };
    let sketched = match resume.as_ref().map(|r| r.load(Stage::Sketch)).transpose()? {
        Some(Some(payload)) => Some(payload),
        _ => None,
    };
    // A resumed sketch stage needs the learned method again: the corpus checkpoint is
    // loaded above whenever the method learns (it is kept beside the sketch checkpoint).
    if sketched.is_some() && method.learns_from_corpus() && corpus.is_none() {
        return Err(Error::Parameter(neardup_core::Error::invalid(
            "checkpoint",
            "the sketch checkpoint has no corpus checkpoint beside it",
        )));
    }
    let learned = Learned::new(method, corpus, engine)?;
    // A replayed read is the first read itself (checked as it went): only the others are
    // compared with the first read's summary.
    let (sketcher, mut read, replayed) = match sketched {
        Some(payload) => {
            resumed = Some(Stage::Sketch.name());
            let (state, read) = split_sketch_checkpoint(&payload)?;
            let sketcher = Sketcher::resume(learned.method(), state, spilling)?;
            (sketcher, read, false)
        }
        None => {
            let documents =
                (first_read.as_ref()).map(|summary| summary.reference.0 + summary.corpus.0);
            progress.stage_bytes("read+sketch", sides.total_bytes());
            let mut sketcher =
                Sketcher::new(learned.method(), documents, Some(spilling), &NoProgress)?;
            let sizes = first_read.map(|summary| (summary.reference, summary.corpus));
            let mut each = |texts| -> Result<()> {
                sketcher.push_owned(texts, &NoProgress)?;
                Ok(())
            };
            let (read, replayed) = match first_full {
                Some(first) => (sides.replay(first, progress, &mut each)?, true),
                None => (sides.read_sized(sizes, progress, &mut each)?, false),
            };
            if let Some(resume) = &resume {
                let state = sketcher.checkpoint()?;
                resume.save(Stage::Sketch, &encode_sketch_checkpoint(&state, &read))?;
            }
            (sketcher, read, replayed)
        }
    };
    if let Some(first) = first_read.as_ref().filter(|_| !replayed) {
        if *first != read.summary() {
            return Err(sides.changed());
        }
    }
    if parked.is_none() {
        parked = Some(ParkedSides::park(&mut read, &work)?);
    }
    let SidesRead {
        reference,
        corpus,
        mut reference_meta,
        mut corpus_meta,
    } = read;
    refuse_all_skipped_meta(&reference, &reference_meta)?;
    refuse_all_skipped_meta(&corpus, &corpus_meta)?;
    let first = reference_meta.len();
    let engine = EngineOptions {
        reference: first as u32,
        ..engine
    };
    let mut outcome = sketcher.finish(engine, progress)?;
    learned.complete(&mut outcome);

    // The kept records, by reading the inputs once more.
    let writing = Instant::now();
    let duplicate_of = &outcome.assignment.duplicate_of[first..];
    let mut index = 0;
    let mut count = Corpus::default();
    write_kept_streamed(&corpus.sources, &mut outputs.kept, |write| {
        let again = read_inputs_replayed(
            &config.inputs,
            &inputs_opened,
            &config.input,
            &corpus_meta,
            &mut |record| {
                let keep = duplicate_of.get(index).is_some_and(Option::is_none);
                index += 1;
                if keep {
                    write(&record)?;
                }
                Ok(())
            },
        )?;
        count = again;
        Ok(())
    })?;
    if index != corpus_meta.len() || count.bytes_read != corpus.bytes_read {
        return Err(changed(&config.inputs));
    }
    // The ids again, for the clusters and pairs files (the only outputs that name
    // documents); without them the parked files go with the temporary directory.
    if let Some(parked) = parked {
        if outputs.clusters.is_some() || outputs.pairs.is_some() {
            parked.restore(&mut reference_meta, &mut corpus_meta)?;
        }
    }
    if !config.against.is_empty() && config.input.id_field.is_none() {
        // As in memory: reference documents are named by file and line.
        reference_meta.ids = (reference_meta
            .sources
            .iter()
            .zip(reference_meta.lines.iter()))
        .map(|(source, line)| {
            let path = &reference.sources[source as usize].path;
            Value::String(format!("{path}:{line}"))
        })
        .collect();
    }
    drop(area);
    let resume_stats = resume.as_mut().map(|resume| {
        resume.complete();
        ResumeStats {
            from: resumed,
            discarded: resume.discarded().map(str::to_owned),
        }
    });
    drop(resume);
    Ok(Read {
        reference: Ids::Meta(reference_meta),
        corpus: Ids::Meta(corpus_meta),
        counts: corpus,
        outcome,
        seconds: {
            timed.push(("write_kept".to_owned(), writing.elapsed().as_secs_f64()));
            timed
        },
        spilled,
        memory: None,
        resume: resume_stats,
    })
}

/// Bytes of candidate-stage entries a spilling run under `limit` holds before sorting them
/// into a run on disk: an eighth of the limit, between 1 MiB and 256 MiB.
fn key_budget(limit: u64) -> usize {
    usize::try_from(limit / 8)
        .unwrap_or(usize::MAX)
        .clamp(1 << 20, 256 << 20)
}

/// The error of an input that changed between two reads of one run.
fn changed(paths: &[String]) -> Error {
    Error::format(
        &paths.join(", "),
        "the input changed while it was being read (a run that does not fit in memory reads \
         its inputs more than once); run it again on a file that does not change",
    )
}

/// The reference corpus and the inputs of a streamed run.
struct Sides<'a> {
    config: &'a RunConfig,
    against_opened: &'a [String],
    inputs_opened: &'a [String],
}

/// The ids of both sides of a [`SidesRead`], parked in the run's temporary directory
/// ([`ParkedIds`]): the stages between the first read and the clusters file need only the
/// records' places.
struct ParkedSides {
    reference: ParkedIds,
    corpus: ParkedIds,
}

impl ParkedSides {
    /// Moves the ids of `read` to files in `dir`.
    fn park(read: &mut SidesRead, dir: &Path) -> Result<ParkedSides> {
        let park = |meta: &mut Meta, name: &str| {
            let path = dir.join(name);
            ParkedIds::park(std::mem::take(&mut meta.ids), &path)
                .map_err(|e| parked_error("writing", &path, &e))
        };
        Ok(ParkedSides {
            reference: park(&mut read.reference_meta, "ids-reference")?,
            corpus: park(&mut read.corpus_meta, "ids")?,
        })
    }

    /// Gives the ids back to the metas they were taken from.
    fn restore(self, reference: &mut Meta, corpus: &mut Meta) -> Result<()> {
        for (parked, meta) in [(self.reference, reference), (self.corpus, corpus)] {
            let path = parked.path().to_path_buf();
            meta.ids = parked
                .restore()
                .map_err(|e| parked_error("reading", &path, &e))?;
        }
        Ok(())
    }
}

/// The error of parking ids, under the parameter `--temp-dir` names.
fn parked_error(doing: &str, path: &Path, error: &std::io::Error) -> Error {
    Error::Parameter(neardup_core::Error::invalid(
        "temp_dir",
        format!(
            "{doing} {}: {error} (the temporary directory holds the ids while the engine runs; \
             give one with room with --temp-dir)",
            path.display()
        ),
    ))
}

/// What one streamed read of both sides found.
struct SidesRead {
    reference: Corpus,
    corpus: Corpus,
    reference_meta: Meta,
    corpus_meta: Meta,
}

impl SidesRead {
    /// What a second read must find again: reference records and bytes, input records
    /// and bytes.
    fn summary(&self) -> ReadSummary {
        ReadSummary {
            reference: (
                self.reference_meta.len(),
                self.reference_meta.ids.text_bytes(),
            ),
            reference_bytes: self.reference.bytes_read,
            corpus: (self.corpus_meta.len(), self.corpus_meta.ids.text_bytes()),
            corpus_bytes: self.corpus.bytes_read,
        }
    }
}

/// The layout of the checkpoints a resumable run writes (a line of its manifest): 2 since
/// the sketch checkpoint sums the boilerplate notes and holds places as runs.
const CHECKPOINT_LAYOUT: u32 = 2;

/// [`SidesRead::summary`]: per side, the records accepted, the bytes of their ids' text and
/// the bytes read. A second read must find them again, and reserves its memory by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ReadSummary {
    reference: (usize, usize),
    reference_bytes: u64,
    corpus: (usize, usize),
    corpus_bytes: u64,
}

/// The corpus pass's checkpoint: its counts, seconds and what it read.
fn encode_corpus_checkpoint(pass: &(CorpusStats, f64, ReadSummary)) -> Vec<u8> {
    let (stats, seconds, summary) = pass;
    let mut out = Encoder::new();
    stats.encode(&mut out);
    out.f64(*seconds);
    for (records, id_bytes) in [summary.reference, summary.corpus] {
        out.u64(records as u64);
        out.u64(id_bytes as u64);
    }
    out.u64(summary.reference_bytes);
    out.u64(summary.corpus_bytes);
    out.finish()
}

fn decode_corpus_checkpoint(bytes: &[u8]) -> Result<(CorpusStats, f64, ReadSummary)> {
    let mut from = Decoder::new(bytes)?;
    let stats = CorpusStats::decode(&mut from)?;
    let seconds = from.f64()?;
    let mut side =
        || -> Result<(usize, usize)> { Ok((from.u64()? as usize, from.u64()? as usize)) };
    let (reference, corpus) = (side()?, side()?);
    let summary = ReadSummary {
        reference,
        corpus,
        reference_bytes: from.u64()?,
        corpus_bytes: from.u64()?,
    };
    from.end()?;
    Ok((stats, seconds, summary))
}

/// The sketch stage's checkpoint: the engine's state ([`Sketcher::checkpoint`]) and what
/// the read found (sources, skips, bytes, and the records' ids and places).
fn encode_sketch_checkpoint(state: &[u8], read: &SidesRead) -> Vec<u8> {
    let mut out = Encoder::new();
    out.bytes(state);
    for (corpus, meta) in [
        (&read.reference, &read.reference_meta),
        (&read.corpus, &read.corpus_meta),
    ] {
        out.seq(&corpus.sources, |out, source| {
            out.str(&source.path);
            out.u8(Format::ALL
                .iter()
                .position(|&f| f == source.format)
                .unwrap_or(0) as u8);
            match &source.csv_headers {
                None => out.bool(false),
                Some(headers) => {
                    out.bool(true);
                    let fields: Vec<&[u8]> = headers.iter().collect();
                    out.seq(&fields, |out, field| out.bytes(field));
                }
            }
        });
        out.u64(corpus.skipped.count);
        out.seq(&corpus.skipped.first, |out, message| out.str(message));
        out.u64(corpus.bytes_read);
        meta.ids.encode(&mut out);
        meta.ordinals.encode(&mut out);
        meta.sources.encode(&mut out);
        meta.lines.encode(&mut out);
    }
    out.finish()
}

/// Reads a sketch checkpoint: the engine's state (borrowed) and what the read found.
fn split_sketch_checkpoint(bytes: &[u8]) -> Result<(&[u8], SidesRead)> {
    let mut from = Decoder::new(bytes)?;
    let state = from.bytes()?;
    let mut sides = Vec::with_capacity(2);
    for _ in 0..2 {
        let sources = from.seq(10, |d| {
            let path = d.str()?.to_owned();
            let format = *Format::ALL
                .get(d.u8()? as usize)
                .ok_or_else(|| codec::corrupt("an input format"))?;
            let csv_headers = match d.bool()? {
                false => None,
                true => Some(csv::ByteRecord::from(
                    d.seq(8, |d| Ok(d.bytes()?.to_vec()))?,
                )),
            };
            Ok(Source {
                path,
                format,
                csv_headers,
                parquet: None,
            })
        })?;
        let skipped = Skipped {
            count: from.u64()?,
            first: from.seq(8, |d| Ok(d.str()?.to_owned()))?,
        };
        let bytes_read = from.u64()?;
        let meta = Meta {
            ids: IdArena::decode(&mut from)?,
            ordinals: Runs::decode(&mut from)?,
            sources: Runs::decode(&mut from)?,
            lines: Runs::decode(&mut from)?,
        };
        let corpus = Corpus {
            records: Vec::new(),
            sources,
            skipped,
            bytes_read,
        };
        sides.push((corpus, meta));
    }
    from.end()?;
    let (corpus, corpus_meta) = sides.pop().unwrap_or_default();
    let (reference, reference_meta) = sides.pop().unwrap_or_default();
    Ok((
        state,
        SidesRead {
            reference,
            corpus,
            reference_meta,
            corpus_meta,
        },
    ))
}

impl Sides<'_> {
    /// The error of inputs (of either side) that changed between two reads.
    fn changed(&self) -> Error {
        let all: Vec<String> = (self.config.against.iter().chain(&self.config.inputs))
            .cloned()
            .collect();
        changed(&all)
    }

    /// Bytes of the inputs on disk, for progress (0 when unknown).
    fn total_bytes(&self) -> u64 {
        (self.against_opened.iter().chain(self.inputs_opened))
            .map(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
            .sum()
    }

    /// Reads the reference corpus, then the inputs, giving their texts to `each` in blocks
    /// of about [`STREAM_BLOCK_BYTES`].
    fn read(
        &self,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        self.read_sized(None, progress, each)
    }

    /// [`Sides::read`] again after a read that found `first`, giving `each` the texts of the
    /// same records ([`read_inputs_replayed`]) and keeping nothing per record: returns
    /// `first`, or fails when this read met other records or bytes (an input that changed).
    fn replay(
        &self,
        first: SidesRead,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        let mut blocks = Blocks::new(progress, each);
        let mut sink = |record: Record| blocks.push(record);
        let options = &self.config.input;
        let reference_bytes = match self.config.against.is_empty() {
            true => 0,
            false => {
                (read_inputs_replayed(
                    &self.config.against,
                    self.against_opened,
                    options,
                    &first.reference_meta,
                    &mut sink,
                )?)
                .bytes_read
            }
        };
        let corpus_bytes = read_inputs_replayed(
            &self.config.inputs,
            self.inputs_opened,
            options,
            &first.corpus_meta,
            &mut sink,
        )?
        .bytes_read;
        let records = blocks.finish()?;
        if records != first.reference_meta.len() + first.corpus_meta.len()
            || reference_bytes != first.reference.bytes_read
            || corpus_bytes != first.corpus.bytes_read
        {
            return Err(self.changed());
        }
        Ok(first)
    }

    /// [`Sides::read`], reserving memory for the ids of the records an earlier read found
    /// on each side (records, bytes of id text), when it is known.
    fn read_sized(
        &self,
        sizes: Option<((usize, usize), (usize, usize))>,
        progress: &dyn Progress,
        each: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<SidesRead> {
        let (reference_size, corpus_size) = sizes.unwrap_or_default();
        let mut blocks = Blocks::new(progress, each);
        let mut sink = |record: Record| blocks.push(record);
        let options = &self.config.input;
        let (reference, reference_meta) = match self.config.against.is_empty() {
            true => (Corpus::default(), Meta::default()),
            false => read_inputs_streamed(
                &self.config.against,
                self.against_opened,
                options,
                reference_size,
                &mut sink,
            )?,
        };
        let (corpus, corpus_meta) = read_inputs_streamed(
            &self.config.inputs,
            self.inputs_opened,
            options,
            corpus_size,
            &mut sink,
        )?;
        blocks.finish()?;
        Ok(SidesRead {
            reference,
            corpus,
            reference_meta,
            corpus_meta,
        })
    }
}

/// The texts of a streamed read, gathered into blocks of about [`STREAM_BLOCK_BYTES`] for
/// `each`, the bytes read counted in `progress`.
struct Blocks<'e> {
    block: Vec<String>,
    bytes: usize,
    records: usize,
    progress: &'e dyn Progress,
    each: &'e mut dyn FnMut(Vec<String>) -> Result<()>,
}

impl<'e> Blocks<'e> {
    fn new(progress: &'e dyn Progress, each: &'e mut dyn FnMut(Vec<String>) -> Result<()>) -> Self {
        Blocks {
            block: Vec::new(),
            bytes: 0,
            records: 0,
            progress,
            each,
        }
    }

    fn push(&mut self, record: Record) -> Result<()> {
        self.records += 1;
        let raw = match &record.raw {
            Raw::Line(line) => line.len() + 1,
            _ => record.text.len(),
        };
        self.progress.advance(raw as u64);
        self.bytes += record.text.len();
        self.block.push(record.text);
        if self.bytes >= STREAM_BLOCK_BYTES {
            self.bytes = 0;
            (self.each)(std::mem::take(&mut self.block))?;
        }
        Ok(())
    }

    /// Hands on the last block; returns the records seen.
    fn finish(mut self) -> Result<usize> {
        if !self.block.is_empty() {
            (self.each)(std::mem::take(&mut self.block))?;
        }
        Ok(self.records)
    }
}

/// [`refuse_all_skipped`] for a streamed read.
fn refuse_all_skipped_meta(corpus: &Corpus, meta: &Meta) -> Result<()> {
    if !meta.is_empty() {
        return Ok(());
    }
    refuse_all_skipped(corpus)
}

/// Writes the reports and commits every output.
fn finish<M: Registered>(
    method: &M,
    config: &RunConfig,
    mut outputs: Outputs,
    read: Read,
    started: Instant,
    peaks: StagePeaks<'_>,
) -> Result<RunReport> {
    let outcome = &read.outcome;
    let view = View {
        reference: &read.reference,
        corpus: &read.corpus,
        within: config.engine.within,
    };
    let writing = Instant::now();
    if let Some(out) = outputs.clusters.as_mut() {
        write_json_lines(out, cluster_rows(view, outcome))?;
    }
    if let Some(out) = outputs.pairs.as_mut() {
        write_json_lines(out, pair_rows(view, outcome))?;
    }
    if let Some(out) = outputs.boilerplate.as_mut() {
        write_boilerplate(out, &outcome.stats.boilerplate)?;
    }
    if let (Some(out), Some(lexicon)) = (outputs.lexicon.as_mut(), &outcome.stats.lexicon) {
        let path = out.path().to_owned();
        (out.writer().write_all(lexicon.as_bytes())).map_err(|e| Error::Output {
            path,
            message: e.to_string(),
        })?;
    }
    let mut seconds: Vec<(String, f64)> = Vec::new();
    let mut write_kept_seconds = 0.0;
    for (stage, value) in &read.seconds {
        match stage.as_str() {
            "write_kept" => write_kept_seconds = *value,
            _ => seconds.push((stage.clone(), *value)),
        }
    }
    for (stage, value) in &outcome.stats.seconds {
        seconds.push(((*stage).to_owned(), *value));
    }
    seconds.push((
        "write".into(),
        write_kept_seconds + writing.elapsed().as_secs_f64(),
    ));
    seconds.push(("total".into(), started.elapsed().as_secs_f64()));
    let mut stats = run_stats(method, config, view, &read.counts, outcome, seconds);
    stats.spilled_bytes = read.spilled + outcome.stats.spilled_bytes;
    if let Some((limit, plan)) = &read.memory {
        stats.memory_limit_bytes = Some(*limit);
        stats.memory_path = Some(if plan.spill { "spill" } else { "memory" }.to_owned());
        stats.memory_reason = Some(plan.reason.clone());
    }
    if let Some(resume) = &read.resume {
        stats.resumed_from = Some(resume.from.map(str::to_owned));
        stats.resume_discarded = resume.discarded.clone();
    }
    stats.peak_rss_by_stage = peaks.finish();
    if let Some(out) = outputs.stats.as_mut() {
        write_stats(out, &stats)?;
    }
    // Renamed into place only now that everything is written, all together.
    let reports = [
        outputs.clusters,
        outputs.pairs,
        outputs.stats,
        outputs.boilerplate,
        outputs.lexicon,
    ];
    commit_all(
        std::iter::once(outputs.kept)
            .chain(reports.into_iter().flatten())
            .collect(),
    )?;
    Ok(RunReport { stats })
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

/// The boilerplate lines, one per line, most frequent first.
fn write_boilerplate(out: &mut AtomicOutput, found: &BoilerplateStats) -> Result<()> {
    let path = out.path().to_owned();
    let writer = out.writer();
    for line in &found.lines {
        writeln!(writer, "{}", line.text).map_err(|e| Error::Output {
            path: path.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// The boilerplate section of the stats file, for methods that have boilerplate settings.
fn boilerplate_report<M: Registered>(
    _method: &M,
    found: &BoilerplateStats,
) -> Option<BoilerplateReport> {
    if !M::params().iter().any(|p| p.name == "max_df") {
        return None;
    }
    let limit = |name: &str| found.limits.iter().find(|(n, _)| *n == name).map(|l| l.1);
    Some(BoilerplateReport {
        table: found.table.map(|t| t.0.to_owned()),
        table_bytes: found.table.map(|t| t.1 as u64),
        counted_documents: found.counted_documents,
        max_df: limit("max_df"),
        boilerplate_df: limit("boilerplate_df"),
        table_saturated: limit("table_saturated").is_some(),
        documents: found.documents,
        removed_lines: found.removed_lines,
        distinct_lines: found.lines.len() as u64,
        discounted_shingles: found.discounted_features,
        top_lines: (found.lines.iter().take(20))
            .map(|line| BoilerplateLineReport {
                text: line.text.clone(),
                documents: line.documents,
            })
            .collect(),
    })
}

fn write_stats(out: &mut AtomicOutput, stats: &RunStats) -> Result<()> {
    let text = stats.to_json_pretty() + "\n";
    let path = out.path().to_owned();
    (out.writer().write_all(text.as_bytes())).map_err(|e| Error::Output {
        path,
        message: e.to_string(),
    })
}

/// The documents of a run: the reference corpus (`--against`; empty without one) first, then
/// the inputs, numbered in that order as the engine numbers them.
#[derive(Clone, Copy)]
struct View<'a> {
    reference: &'a Ids,
    corpus: &'a Ids,
    within: bool,
}

impl View<'_> {
    /// Where the inputs start.
    fn first(&self) -> usize {
        self.reference.len()
    }
    fn id(&self, document: usize) -> Value {
        match document.checked_sub(self.first()) {
            Some(input) => self.corpus.get(input),
            None => self.reference.get(document),
        }
    }
}

/// One row per input document (not per reference document).
fn cluster_rows<'a>(view: View<'a>, outcome: &'a Outcome) -> impl Iterator<Item = Value> + 'a {
    let assignment = &outcome.assignment;
    let first = view.first();
    (0..view.corpus.len()).map(move |input| {
        let index = first + input;
        let cluster = assignment.cluster_of(index as u32) as usize;
        let duplicate_of = assignment.duplicate_of[index].map(|d| view.id(d as usize));
        json!({
            "id": view.corpus.get(input),
            "cluster": view.id(cluster),
            "duplicate_of": duplicate_of,
            "similarity": assignment.similarity.get(index),
        })
    })
}

/// Every verified pair with an input document in it (with `--against`: an input and a
/// reference document, or two inputs when they are deduplicated among themselves).
fn pair_rows<'a>(view: View<'a>, outcome: &'a Outcome) -> impl Iterator<Item = Value> + 'a {
    let first = view.first() as u32;
    (outcome.all_pairs())
        .filter(move |pair| first == 0 || (pair.b >= first && (view.within || pair.a < first)))
        .map(move |pair| {
            let mut row = json!({
                "a": view.id(pair.a as usize),
                "b": view.id(pair.b as usize),
                "similarity": pair.similarity,
            });
            if let Some(distance) = pair.distance {
                row["distance"] = json!(distance);
            }
            row
        })
}

fn run_stats<M: Registered>(
    method: &M,
    config: &RunConfig,
    view: View<'_>,
    corpus: &Corpus,
    outcome: &Outcome,
    seconds: Vec<(String, f64)>,
) -> RunStats {
    let first = view.first();
    let documents = view.corpus.len() as u64;
    let kept = (outcome.assignment.duplicate_of[first..].iter())
        .filter(|d| d.is_none())
        .count() as u64;
    let histogram = cluster_size_histogram_from(&outcome.assignment, first);
    let clusters: u64 = (histogram.iter())
        .filter(|(size, _)| *size > 1)
        .map(|(_, count)| count)
        .sum();
    let engine = &outcome.stats;
    RunStats {
        inputs: config.inputs.clone(),
        method: MethodStats {
            name: method.name().to_owned(),
            threshold: method.threshold(),
            params: settings_json(method.settings()),
            learned: (engine.boilerplate.limits.iter())
                .map(|&(name, value)| (name.to_owned(), json!(value)))
                .collect(),
        },
        cluster_mode: config.engine.cluster.name().to_owned(),
        keep: config.engine.keep.name().to_owned(),
        documents_in: documents,
        kept,
        removed: documents - kept,
        skipped: corpus.skipped.count,
        skipped_first: corpus.skipped.first.clone(),
        empty_documents: engine.empty_documents,
        exact_only_documents: engine.exact_only_documents,
        exact_copies: engine.exact_copies,
        clusters,
        cluster_sizes: histogram
            .iter()
            .map(|&(size, count)| (size as u64, count))
            .collect(),
        candidate_pairs: engine.candidate_pairs,
        verified_pairs: engine.verified_pairs,
        largest_bucket: engine.largest_bucket,
        reference_documents: first as u64,
        capped_buckets: engine.capped_buckets,
        capped_out: engine.capped_out,
        candidate_comparisons: engine.candidate_comparisons,
        budget_hits: engine.budget_hits,
        partner_limit: engine.partner_limit,
        bytes_in: corpus.bytes_read,
        threads: rayon::current_num_threads() as u64,
        seconds,
        peak_rss_bytes: peak_rss_bytes(),
        boilerplate: boilerplate_report(method, &engine.boilerplate),
        ..RunStats::default()
    }
}
