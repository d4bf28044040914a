//! `neardup dedup`: remove exact and near-duplicate documents.

use std::io::IsTerminal;

use clap::parser::ValueSource;
use clap::Args;
use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::registry;
use neardup_engine::spans::{SpanLevel, SpanOptions};
use neardup_engine::EngineOptions;
use neardup_pipeline::run::{run, RunConfig};
use neardup_pipeline::spans::SpanRun;
use neardup_pipeline::stats::RunStats;

use crate::args::{at_least_one, method_names, parse_size, InputArgs, MethodArgs, RunArgs};
use crate::{progress, threads};

#[derive(Args)]
pub struct DedupArgs {
    /// Input files (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` = stdin).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output file for the kept documents, in the input's format (`-` = stdout). Every
    /// output is written to `NAME.tmp-neardup-PID-XXXXXX` beside it and renamed into place at
    /// the end; such files left by a killed run are removed by the next run writing there
    /// (said on stderr, with the bytes freed, unless --quiet). An output may not be a file
    /// the run reads (an input, --against, --boilerplate-file, --lexicon-file, --idf-file,
    /// --stopwords-file).
    #[arg(short, long)]
    output: String,
    /// Write one JSON row per input document: id, cluster, duplicate_of, similarity.
    #[arg(long)]
    clusters: Option<String>,
    /// Write every verified pair as {"a","b","similarity"} (and "distance" for simhash).
    #[arg(long)]
    pairs: Option<String>,
    /// Write run statistics (JSON).
    #[arg(long)]
    stats: Option<String>,
    /// Write the boilerplate lines found, one per line, most frequent first (read it back
    /// with --boilerplate-file, e.g. in a later run or a service).
    #[arg(long, value_name = "FILE")]
    boilerplate_out: Option<String>,
    /// Write the lexicon the method learned from the corpus (imatch), readable back with
    /// --lexicon-file in a later run.
    #[arg(long, value_name = "FILE")]
    save_lexicon: Option<String>,
    /// Memory of the document-frequency table of the corpus pass (max-df, boilerplate-df,
    /// simhash tfidf): exact counts when they surely fit, else a count-min sketch of this
    /// size. K, M, G suffixes (powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    corpus_memory: usize,
    /// Memory the run plans for (K, M, G suffixes, powers of 1024; default: three quarters
    /// of the memory available when the run starts). A run expected to need more (about 10
    /// bytes per byte of input) streams its inputs instead of holding them, spills its
    /// sketches to --temp-dir and writes the kept records by reading the inputs again; the
    /// outputs are the same. What the spilling path holds grows with the documents, not
    /// their size, besides buffers sized from the limit and --corpus-memory, so the limit
    /// holds while documents x 72 bytes stays under it (checked before the run reads; for
    /// measured time and memory, see BENCHMARKS.md, "Bounded memory"). Parquet inputs are
    /// always held in memory.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    memory_limit: Option<usize>,
    /// Where a run that spills makes its temporary directory `.neardup-tmp-PID-XXXXXX`
    /// (default: beside the output); removed when the run ends, fails or is interrupted
    /// (with --resume: kept until the run succeeds). One left by a killed run (SIGKILL, a
    /// crash) is removed by the next run using this directory, which says so on stderr
    /// with the bytes freed (unless --quiet); a live run's directory is locked and never
    /// touched.
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<String>,
    /// Make a run that spills resumable: it checkpoints its finished stages (the corpus
    /// pass, the sketch stage) in `.neardup-resume-*` in the temporary directory's place,
    /// and the same command run again after a kill, a full disk or Ctrl-C starts from the
    /// last of them. The checkpoints are taken up only when neardup's version, the options
    /// and every input (size, modification time and a hash of its whole content, one more
    /// read of the inputs when the run starts) are unchanged; otherwise the run starts over
    /// and `--stats` says why. Not for standard input. Two runs of one output at once: the
    /// second is refused.
    #[arg(long)]
    resume: bool,
    /// Method: `exact` (hash of the normalised text), `minhash` (MinHash-LSH, verified),
    /// `simhash` (SimHash fingerprints, exact Hamming join, length-aware distances), `join`
    /// (exact similarity join for short texts: every pair at the threshold), `ngram` (the
    /// all-m-gram index for short texts, the join's reference), or the classic
    /// fingerprints `supershingle` (Broder), `imatch` (I-Match, multi-lexicon), `topn`
    /// (top-N TF-IDF words), `segments` (M of N pieces), `sentences` (punctuation contexts or
    /// longest sentences); see docs/methods.md.
    #[arg(long, default_value = "minhash", value_parser = method_names())]
    method: String,
    /// Clustering: `representative` (every removed document is similar to the kept one) or
    /// `connected` (union-find over verified pairs).
    #[arg(long, default_value = "representative")]
    cluster: ClusterMode,
    /// Which document of a cluster is kept: `first`, `longest`, `shortest`.
    #[arg(long, default_value = "first")]
    keep: KeepPolicy,
    /// Index buckets with more documents than this pair each member with their N best-ranked
    /// members under --keep only (keeps template floods from going quadratic; counted as
    /// `capped_buckets` in stats). At least 1.
    #[arg(long, value_name = "N", default_value_t = EngineOptions::default().bucket_cap,
          value_parser = at_least_one)]
    bucket_cap: usize,
    /// At most documents x N candidate pairs: when the buckets hold more (a template flood),
    /// the documents with the most candidates keep their best-ranked ones under --keep only,
    /// up to a common limit (`budget_hits` and `partner_limit` in stats). At least 1.
    #[arg(long, value_name = "N", default_value_t = EngineOptions::default().candidate_budget,
          value_parser = at_least_one)]
    candidate_budget: usize,
    /// Check the inputs against this indexed corpus (files read like the inputs): an input
    /// similar to one of its documents is removed as its duplicate; the corpus itself is
    /// neither deduplicated nor written. Without --id-field its documents are named
    /// `FILE:LINE` in the clusters and pairs files.
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append)]
    against: Vec<String>,
    /// With --against: also deduplicate the inputs among themselves.
    #[arg(long, requires = "against")]
    within: bool,
    /// Also remove repeated spans from the kept documents, in the same run: `substring`,
    /// `line` or `sentence` (as `neardup spans --level`). The kept records are written with
    /// their spans removed; the first copy of a span (in --keep order) stays. Holds the
    /// texts in memory: a corpus that needs the streamed path is refused.
    #[arg(long, value_name = "LEVEL")]
    spans: Option<SpanLevel>,
    /// With --spans: the shortest span, in characters (default: 50 for substrings, 10 for
    /// lines and sentences).
    #[arg(long, value_name = "N", requires = "spans")]
    span_min_length: Option<usize>,
    /// With --spans: the fewest kept documents a span must be found in.
    #[arg(long, value_name = "K", default_value_t = 2, requires = "spans")]
    span_min_count: usize,
    /// With --spans: write the spans removed (as `neardup spans --report`).
    #[arg(long, value_name = "SPANS.jsonl", requires = "spans")]
    span_report: Option<String>,
    /// With --spans: write the removed byte ranges of every changed document (as `neardup
    /// spans --ranges`).
    #[arg(long, value_name = "FILE", requires = "spans")]
    span_ranges: Option<String>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    input: InputArgs,
    /// The parameters of the methods, from the registry.
    #[command(flatten)]
    params: MethodArgs,
}

impl DedupArgs {
    /// `--quiet`.
    pub fn quiet(&self) -> bool {
        self.run.quiet
    }

    fn config(&self, params: registry::Params) -> RunConfig {
        RunConfig {
            inputs: self.inputs.clone(),
            input: self.run.input_options(&self.input),
            output: self.output.clone(),
            clusters: self.clusters.clone(),
            pairs: self.pairs.clone(),
            stats: self.stats.clone(),
            boilerplate_out: self.boilerplate_out.clone(),
            save_lexicon: self.save_lexicon.clone(),
            method: self.method.clone(),
            params,
            engine: EngineOptions {
                cluster: self.cluster,
                keep: self.keep,
                bucket_cap: self.bucket_cap,
                candidate_budget: self.candidate_budget,
                corpus_memory: self.corpus_memory,
                reference: 0,
                within: self.against.is_empty() || self.within,
                save_lexicon: self.save_lexicon.is_some(),
            },
            against: self.against.clone(),
            memory_limit: self.memory_limit.map(|bytes| bytes as u64),
            temp_dir: self.temp_dir.clone(),
            resume: self.resume,
            spans: self.spans.map(|level| SpanRun {
                options: SpanOptions {
                    level,
                    min_length: (self.span_min_length)
                        .unwrap_or(SpanOptions::default_length(level)),
                    min_count: self.span_min_count,
                    ..SpanOptions::default()
                },
                report: self.span_report.clone(),
                ranges: self.span_ranges.clone(),
            }),
        }
    }
}

/// The options given on the command line (not defaulted), by argument id.
pub fn given_options(matches: &clap::ArgMatches) -> Vec<String> {
    (matches.ids())
        .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.as_str().to_owned())
        .collect()
}

pub fn dedup(args: &DedupArgs, given: Vec<String>) -> anyhow::Result<()> {
    args.input.note_unused_id(&args.inputs, args.run.quiet);
    let params = method_params(args, &given);
    let pool = threads::pool(args.run.threads)?;
    let show = !args.run.quiet && std::io::stderr().is_terminal();
    let progress = progress::Bar::new(show);
    let report = pool.install(|| run(&args.config(params), &progress))?;
    progress.finish();
    if !args.run.quiet {
        print_summary(&report.stats);
        if let Some(spans) = &report.spans {
            crate::spans::print_summary(spans);
        }
    }
    print_skipped(&report.stats);
    print_capped(&report.stats);
    Ok(())
}

/// The given parameters the chosen method has; a warning names the options given that it
/// does not read (they are ignored).
fn method_params(args: &DedupArgs, given: &[String]) -> registry::Params {
    let Some(spec) = registry::method(&args.method) else {
        // Unknown names are refused by the parser; the registry reports it again in `run`.
        return args.params.given.clone();
    };
    let (params, mut unused) = args.params.for_method(&spec);
    if !spec.finds_candidates {
        for option in ["bucket_cap", "candidate_budget"] {
            if given.iter().any(|id| id == option) {
                unused.push(format!("--{}", option.replace('_', "-")));
            }
        }
    }
    if !unused.is_empty() {
        eprintln!(
            "neardup: warning: {} not used by --method {} (ignored)",
            unused.join(", "),
            spec.name
        );
    }
    params
}

fn print_summary(stats: &RunStats) {
    eprintln!(
        "neardup: {} documents, {} kept, {} removed ({} duplicate clusters) in {:.2} s",
        stats.documents_in,
        stats.kept,
        stats.removed,
        stats.clusters,
        stats.seconds_of("total").unwrap_or(0.0),
    );
}

/// Reports documents a capped bucket left out of the `ngram` method's greedy pass, also under
/// `--quiet`: pairs may be missing because of them.
fn print_capped(stats: &RunStats) {
    if stats.capped_out > 0 {
        eprintln!(
            "neardup: warning: {} buckets over --bucket-cap left out {} documents from their \
             greedy pass (pairs through them may be missed; `capped_out` in stats)",
            stats.capped_buckets, stats.capped_out
        );
    }
}

/// Reports skipped records, also under `--quiet`: a skip is data the user gave and did not get
/// back.
fn print_skipped(stats: &RunStats) {
    if stats.skipped > 0 {
        eprintln!("neardup: skipped {} bad records; first:", stats.skipped);
        for message in &stats.skipped_first {
            eprintln!("  {message}");
        }
    }
}
