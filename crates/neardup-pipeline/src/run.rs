//! One `dedup` run: read the inputs, run the engine, write the outputs atomically.
//!
//! Every output file is created (as a temporary file beside its final path) before any work
//! starts, so an unwritable path fails at once; all of them are renamed into place only after
//! everything was written, so a failed or killed run leaves no complete-looking file.

use std::time::Instant;

use neardup_core::methods::exact::Exact;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::normalize::NormalizeOptions;
use neardup_core::tokenize::Tokenizer;
use neardup_core::Method;
use serde_json::{json, Map, Value};

use crate::engine::{self, EngineOptions, Outcome, Progress};
use crate::error::{Error, Result};
use crate::input::{read_inputs, Corpus, InputOptions};
use crate::output::{commit_all, write_json_lines, write_kept, AtomicOutput};
use crate::paths::check_distinct;
use crate::stats::{cluster_size_histogram, peak_rss_bytes};

/// Which method to run, with its parameters. Adding a method adds one variant here and one
/// arm in [`run`].
#[derive(Debug, Clone)]
pub enum MethodConfig {
    /// Exact hashing of the normalised text.
    Exact(NormalizeOptions),
    /// MinHash-LSH with verification.
    MinHash(MinHashBuilder),
}

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
    /// Optional statistics file (JSON).
    pub stats: Option<String>,
    /// The method.
    pub method: MethodConfig,
    /// Clustering and keep policy.
    pub engine: EngineOptions,
}

/// What a run reports back (also written to the stats file).
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The statistics object.
    pub stats: Value,
}

/// Runs one dedup job.
///
/// # Errors
/// Invalid parameters, unreadable or malformed input (unless skipped), unwritable outputs.
pub fn run(config: &RunConfig, progress: &dyn Progress) -> Result<RunReport> {
    config.engine.validate()?;
    match &config.method {
        MethodConfig::Exact(options) => {
            run_with(&Exact::new(options.clone()), json!({}), config, progress)
        }
        MethodConfig::MinHash(builder) => {
            let method = builder.clone().build()?;
            let lsh = method.lsh();
            let shingler = method.shingler();
            let mut params = json!({
                "bands": lsh.bands,
                "rows": lsh.rows,
                "measure": format!("{:?}", method.measure()).to_lowercase(),
                "tokenizer": shingler.tokenizer().name(),
                "ngram": shingler.ngram(),
            });
            if shingler.tokenizer() == Tokenizer::Auto {
                params["latin_ngram"] = json!(shingler.latin_ngram());
            }
            run_with(&method, params, config, progress)
        }
    }
}

struct Outputs {
    kept: AtomicOutput,
    clusters: Option<AtomicOutput>,
    pairs: Option<AtomicOutput>,
    stats: Option<AtomicOutput>,
}

/// Refuses outputs that are inputs or each other, then creates them all.
fn open_outputs(config: &RunConfig) -> Result<Outputs> {
    let inputs: Vec<&str> = config.inputs.iter().map(String::as_str).collect();
    let named = [
        ("--output", Some(&config.output)),
        ("--clusters", config.clusters.as_ref()),
        ("--pairs", config.pairs.as_ref()),
        ("--stats", config.stats.as_ref()),
    ];
    let outputs: Vec<(&str, &str)> = (named.iter())
        .filter_map(|(option, path)| path.map(|path| (*option, path.as_str())))
        .collect();
    check_distinct(&inputs, &outputs)?;
    let optional = |path: &Option<String>| path.as_deref().map(AtomicOutput::create).transpose();
    Ok(Outputs {
        kept: AtomicOutput::create(&config.output)?,
        clusters: optional(&config.clusters)?,
        pairs: optional(&config.pairs)?,
        stats: optional(&config.stats)?,
    })
}

fn run_with<M: Method>(
    method: &M,
    params: Value,
    config: &RunConfig,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let started = Instant::now();
    let mut outputs = open_outputs(config)?;
    let mut corpus = read_inputs(&config.inputs, &config.input)?;
    refuse_all_skipped(&corpus)?;
    let read_seconds = started.elapsed().as_secs_f64();
    // The texts move into the engine, which drops each once it is sketched.
    let texts: Vec<String> = (corpus.records.iter_mut())
        .map(|r| std::mem::take(&mut r.text))
        .collect();
    let outcome = engine::dedup_owned(method, texts, config.engine, progress);

    let writing = Instant::now();
    let keep: Vec<bool> = (outcome.assignment.duplicate_of.iter())
        .map(Option::is_none)
        .collect();
    write_kept(&corpus, &keep, &mut outputs.kept)?;
    if let Some(out) = outputs.clusters.as_mut() {
        write_json_lines(out, cluster_rows(&corpus, &outcome))?;
    }
    if let Some(out) = outputs.pairs.as_mut() {
        write_json_lines(out, pair_rows(&corpus, &outcome))?;
    }
    let mut seconds: Map<String, Value> = Map::new();
    seconds.insert("read".into(), json!(read_seconds));
    for (stage, value) in &outcome.stats.seconds {
        seconds.insert((*stage).into(), json!(value));
    }
    seconds.insert("write".into(), json!(writing.elapsed().as_secs_f64()));
    seconds.insert("total".into(), json!(started.elapsed().as_secs_f64()));
    let stats = stats_json(method, params, config, &corpus, &outcome, seconds);
    if let Some(out) = outputs.stats.as_mut() {
        write_stats(out, &stats)?;
    }
    // Renamed into place only now that everything is written, all together.
    let reports = [outputs.clusters, outputs.pairs, outputs.stats];
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

fn write_stats(out: &mut AtomicOutput, stats: &Value) -> Result<()> {
    // A `Value` always serialises; the fallback is unreachable.
    let text = serde_json::to_string_pretty(stats).unwrap_or_default() + "\n";
    let path = out.path().to_owned();
    (out.writer().write_all(text.as_bytes())).map_err(|e| Error::Output {
        path,
        message: e.to_string(),
    })
}

fn cluster_rows<'a>(corpus: &'a Corpus, outcome: &'a Outcome) -> impl Iterator<Item = Value> + 'a {
    let assignment = &outcome.assignment;
    corpus
        .records
        .iter()
        .enumerate()
        .map(move |(index, record)| {
            let cluster = assignment.cluster_of(index as u32) as usize;
            let duplicate_of =
                assignment.duplicate_of[index].map(|d| corpus.records[d as usize].id.clone());
            json!({
                "id": record.id,
                "cluster": corpus.records[cluster].id,
                "duplicate_of": duplicate_of,
                "similarity": assignment.similarity[index],
            })
        })
}

fn pair_rows<'a>(corpus: &'a Corpus, outcome: &'a Outcome) -> impl Iterator<Item = Value> + 'a {
    outcome.all_pairs().map(move |pair| {
        json!({
            "a": corpus.records[pair.a as usize].id,
            "b": corpus.records[pair.b as usize].id,
            "similarity": pair.similarity,
        })
    })
}

fn stats_json<M: Method>(
    method: &M,
    params: Value,
    config: &RunConfig,
    corpus: &Corpus,
    outcome: &Outcome,
    seconds: Map<String, Value>,
) -> Value {
    let documents = corpus.records.len() as u64;
    let kept = outcome
        .assignment
        .duplicate_of
        .iter()
        .filter(|d| d.is_none())
        .count() as u64;
    let histogram = cluster_size_histogram(&outcome.assignment);
    let clusters: u64 = histogram
        .iter()
        .filter(|(size, _)| *size > 1)
        .map(|(_, count)| count)
        .sum();
    let engine = &outcome.stats;
    json!({
        "inputs": config.inputs,
        "method": {"name": method.name(), "threshold": method.threshold(), "params": params},
        "cluster_mode": format!("{:?}", config.engine.cluster).to_lowercase(),
        "keep": format!("{:?}", config.engine.keep).to_lowercase(),
        "documents_in": documents,
        "kept": kept,
        "removed": documents - kept,
        "skipped": corpus.skipped.count,
        "skipped_first": corpus.skipped.first,
        "empty_documents": engine.empty_documents,
        "exact_copies": engine.exact_copies,
        "clusters": clusters,
        "cluster_sizes": histogram.iter().map(|(size, count)| (size.to_string(), json!(count))).collect::<Map<_, _>>(),
        "candidate_pairs": engine.candidate_pairs,
        "verified_pairs": engine.verified_pairs,
        "largest_bucket": engine.largest_bucket,
        "capped_buckets": engine.capped_buckets,
        "budget_hits": engine.budget_hits,
        "partner_limit": engine.partner_limit,
        "bytes_in": corpus.bytes_read,
        "threads": rayon::current_num_threads(),
        "seconds": seconds,
        "peak_rss_bytes": peak_rss_bytes(),
    })
}
