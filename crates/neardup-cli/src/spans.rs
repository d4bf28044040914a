//! `neardup spans`: remove repeated passages from inside documents.

use clap::Args;
use neardup_core::cluster::KeepPolicy;
use neardup_engine::spans::{SpanCount, SpanLevel, SpanOptions, SpanRemoval};
use neardup_pipeline::spans::{run_spans, SpanRun, SpansConfig, SpansReport};

use crate::args::{parse_size, InputArgs, RunArgs};
use crate::threads;

#[derive(Args)]
pub struct SpansArgs {
    /// Input files (JSONL, text, CSV, TSV; .gz/.zst read transparently; `-` = stdin).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output file: every document, in the input's format, with its repeated spans removed
    /// (`-` = stdout). A record that loses nothing is written byte for byte; a JSONL record
    /// that loses a span is written as its JSON with the text field replaced. Written to a
    /// temporary file beside it and renamed into place at the end.
    #[arg(short, long)]
    output: String,
    /// The shortest span, in characters (Unicode scalar values; 中 and 😀 are one each).
    /// Default: 50 at the substring level, 10 at the line and sentence levels.
    #[arg(long, value_name = "N")]
    min_length: Option<usize>,
    /// The fewest documents a span must be found in (each document counted once; with
    /// `--count occurrences`, every occurrence). At least 2.
    #[arg(long, value_name = "K", default_value_t = 2)]
    min_count: usize,
    /// What a span is: `substring` (any run of at least --min-length characters, matched
    /// exactly), `line` (a whole line) or `sentence` (a whole sentence, ended by 。！？!? or a
    /// period before a space).
    #[arg(long, default_value = "substring")]
    level: SpanLevel,
    /// Write the spans removed, one JSON row per removed text, most bytes first: text,
    /// count (documents), occurrences, bytes_removed, documents (ids, the first 100),
    /// more_documents.
    #[arg(long, value_name = "SPANS.jsonl")]
    report: Option<String>,
    /// Write the removed byte ranges of every changed document, one JSON row each: doc
    /// (0-based input index), id, ranges ([start, end) byte offsets of the original text).
    #[arg(long, value_name = "FILE")]
    ranges: Option<String>,
    /// What --min-count counts: `documents` (default) or `occurrences` (two in one
    /// document count two, as ExactSubstr counts).
    #[arg(long, default_value = "documents")]
    count: SpanCount,
    /// Which copies are removed: `later` (all but the first in --keep order, which stays
    /// whole) or `all` (every copy, as ExactSubstr removes them).
    #[arg(long, default_value = "later")]
    remove: SpanRemoval,
    /// Which copy of a span stays: the one in the `first` document, the `longest` or the
    /// `shortest` (in characters; ties by input order).
    #[arg(long, default_value = "first")]
    keep: KeepPolicy,
    /// Memory the run may take (K, M, G suffixes). Span removal holds the texts and, at
    /// the substring level, their anchors (about 1 to 2.5 bytes per byte of text): past the
    /// limit the anchors spill to --temp-dir in sorted runs, merged back (the same output).
    /// A corpus whose texts and records alone pass the limit is refused before any work.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    memory_limit: Option<usize>,
    /// Where a run that spills makes its temporary directory (default: beside the output),
    /// removed when the run ends.
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<String>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    input: InputArgs,
}

impl SpansArgs {
    /// `--quiet`.
    pub fn quiet(&self) -> bool {
        self.run.quiet
    }

    fn config(&self) -> SpansConfig {
        SpansConfig {
            inputs: self.inputs.clone(),
            input: self.run.input_options(&self.input),
            output: self.output.clone(),
            spans: SpanRun {
                options: SpanOptions {
                    level: self.level,
                    min_length: self
                        .min_length
                        .unwrap_or(SpanOptions::default_length(self.level)),
                    min_count: self.min_count,
                    count: self.count,
                    remove: self.remove,
                },
                report: self.report.clone(),
                ranges: self.ranges.clone(),
            },
            keep: self.keep,
            memory_limit: self.memory_limit.map(|bytes| bytes as u64),
            temp_dir: self.temp_dir.clone(),
        }
    }
}

pub fn spans(args: &SpansArgs) -> anyhow::Result<()> {
    args.input.note_unused_id(&args.inputs, args.run.quiet);
    let pool = threads::pool(args.run.threads)?;
    let report = pool.install(|| run_spans(&args.config()))?;
    if !args.run.quiet {
        print_summary(&report);
    }
    if report.skipped.count > 0 {
        eprintln!(
            "neardup: skipped {} bad records; first:",
            report.skipped.count
        );
        for message in &report.skipped.first {
            eprintln!("  {message}");
        }
    }
    Ok(())
}

/// The summary on stderr: documents changed, bytes removed, the most removed spans.
pub fn print_summary(report: &SpansReport) {
    let total: f64 = report.seconds.iter().map(|(_, seconds)| seconds).sum();
    let share = if report.text_bytes == 0 {
        0.0
    } else {
        100.0 * report.removed_bytes as f64 / report.text_bytes as f64
    };
    eprintln!(
        "neardup: {} documents, {} changed; {} of {} bytes removed ({share:.1}%), {} distinct \
         spans, in {total:.2} s",
        report.documents,
        report.changed_documents,
        report.removed_bytes,
        report.text_bytes,
        report.distinct_spans,
    );
    if report.spilled_bytes > 0 {
        eprintln!(
            "neardup: {} MiB of anchors spilled to the temporary directory (--memory-limit)",
            report.spilled_bytes.div_ceil(1 << 20)
        );
    }
    for (text, documents) in &report.top {
        eprintln!("  {documents:>8} documents: {}", preview(text));
    }
}

/// At most 60 characters of a span, on one line.
fn preview(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(60) {
        Some((end, _)) => format!("{:?}...", &flat[..end]),
        None => format!("{flat:?}"),
    }
}
