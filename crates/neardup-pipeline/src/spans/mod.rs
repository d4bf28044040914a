//! The `spans` job: repeated passages removed from inside documents (see
//! [`neardup_engine::spans`]), the records written back in their format with the text
//! field shortened, a report of the spans and, for tools, the removed byte ranges.
//!
//! The same step runs after whole-document dedup in one run ([`SpanRun`] in
//! [`crate::run::RunConfig::spans`]): spans then come off the kept documents only.

mod write;

use std::time::Instant;

use neardup_core::cluster::KeepPolicy;
use neardup_engine::spans::{
    find_spans, find_spans_spilling, keep_order, FoundSpans, SpanError, SpanOptions,
};
use neardup_index::spill_dir::SpillDir;

use crate::error::{Error, Result};
use crate::file_spill::{temp_parent, FileSpillDir, TempArea};
use crate::input::{read_inputs_leaving_lines, Corpus, InputOptions, Skipped};
use crate::output::{commit_all, write_json_lines, AtomicOutput};
use crate::paths::check_distinct_named;
use crate::rows::{DocId, RangesRow, SpanRow};

pub(crate) use write::write_edited;

/// The documents a report row lists at most.
pub const DOCUMENTS_LISTED: usize = 100;

/// Bytes held per byte of text at the substring level, besides the texts (anchors, sorting,
/// the groups' walkers), and per record (its id, offsets and order): what
/// [`memory_needed`] counts.
const PER_RECORD_BYTES: u64 = 160;

/// Span removal within a run: what to find, and the optional report files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanRun {
    /// What to find and remove.
    pub options: SpanOptions,
    /// The spans, one JSON row per removed text ([`SpanRow`]).
    pub report: Option<String>,
    /// The removed byte ranges, one JSON row per changed document ([`RangesRow`]).
    pub ranges: Option<String>,
}

/// One `spans` job.
#[derive(Debug, Clone)]
pub struct SpansConfig {
    /// Input paths (`-` for stdin).
    pub inputs: Vec<String>,
    /// How to read them.
    pub input: InputOptions,
    /// Where the documents go, spans removed (`-` for stdout).
    pub output: String,
    /// What to find, and the report files.
    pub spans: SpanRun,
    /// Which copy of a span stays: the first in this order.
    pub keep: KeepPolicy,
    /// The memory the run may take, in bytes (`None`: no check).
    pub memory_limit: Option<u64>,
    /// Where the anchors spill when they would pass `memory_limit` (`None`: beside the
    /// output).
    pub temp_dir: Option<String>,
}

/// What a span step did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpansReport {
    /// Documents read (kept documents, after a dedup).
    pub documents: usize,
    /// Documents that lost at least one span.
    pub changed_documents: usize,
    /// Bytes of text before removal.
    pub text_bytes: u64,
    /// Bytes removed.
    pub removed_bytes: u64,
    /// Distinct removed texts.
    pub distinct_spans: usize,
    /// The most removed texts: (text, documents it was removed from), at most five.
    pub top: Vec<(String, usize)>,
    /// Bytes of anchors spilled to the temporary directory (0: all in memory).
    pub spilled_bytes: u64,
    /// Malformed records skipped (`--on-error skip`).
    pub skipped: Skipped,
    /// Seconds by stage: read, find, write.
    pub seconds: Vec<(String, f64)>,
}

/// The memory a `spans` run is expected to hold in memory for a corpus of `text_bytes` bytes of text
/// in `records` records: the texts, the anchors at the substring level (about 2.5 bytes per
/// byte of text at worst, English at the default length; less for Chinese) and the records.
pub fn memory_needed(text_bytes: u64, records: u64) -> u64 {
    text_bytes + text_bytes * 5 / 2 + records * PER_RECORD_BYTES
}

/// Runs one `spans` job.
///
/// # Errors
/// Options out of range (naming the option), an output that is an input, unreadable or
/// malformed input (unless skipped), a corpus expected to pass `memory_limit`, an output
/// format that cannot be written (Parquet), unwritable outputs. Nothing is written then.
pub fn run_spans(config: &SpansConfig) -> Result<SpansReport> {
    config
        .spans
        .options
        .check()
        .map_err(|e| span_error(e, None))?;
    let named = [
        ("`output`", Some(config.output.as_str())),
        ("`report`", config.spans.report.as_deref()),
        ("`ranges`", config.spans.ranges.as_deref()),
    ];
    let named: Vec<(&str, &str)> = named
        .into_iter()
        .filter_map(|(name, path)| Some((name, path?)))
        .collect();
    let inputs: Vec<(Option<String>, &str)> = config
        .inputs
        .iter()
        .map(|path| (None, path.as_str()))
        .collect();
    check_distinct_named(&inputs, &named)?;
    // Created before any work, so that an unwritable path fails at once.
    let mut kept = AtomicOutput::create(&config.output)?;
    let mut outputs = SpanOutputs::reports(&config.spans)?;
    let started = Instant::now();
    let mut corpus = read_inputs_leaving_lines(&config.inputs, &config.input)?;
    let budget = anchor_budget(&corpus, config.memory_limit)?;
    let read = started.elapsed().as_secs_f64();
    let area = match budget {
        Some(_) => Some(TempArea::create(&temp_parent(
            config.temp_dir.as_deref(),
            &config.output,
        ))?),
        None => None,
    };
    let dir = area.as_ref().map(|area| FileSpillDir {
        path: area.path().to_path_buf(),
        keep_sketches: false,
    });
    let spill = dir
        .as_ref()
        .zip(budget)
        .map(|(dir, budget)| (dir as &dyn SpillDir, budget));
    let keep = vec![true; corpus.records.len()];
    let source = SpanSource {
        corpus: &corpus,
        keep: &keep,
        input: &config.input,
        policy: config.keep,
    };
    let mut report = remove_spans(source, &config.spans, Some(&mut kept), &mut outputs, spill)?;
    commit_all(std::iter::once(kept).chain(outputs.into_files()).collect())?;
    report.skipped = std::mem::take(&mut corpus.skipped);
    report.seconds.insert(0, ("read".to_owned(), read));
    Ok(report)
}

/// Bytes a spilling run keeps for itself besides the texts, records, marks and summaries:
/// read buffers and the groups being walked.
const SPILL_FLOOR_BYTES: u64 = 4 << 20;

/// The anchors' budget under `limit`: `None` when the whole step fits (or no limit was
/// given), else the bytes of anchors to hold at once, the rest spilled. A corpus whose texts
/// and records alone pass the limit is refused, before any work.
fn anchor_budget(corpus: &Corpus, limit: Option<u64>) -> Result<Option<usize>> {
    let Some(limit) = limit else { return Ok(None) };
    let text: u64 = corpus
        .records
        .iter()
        .map(|record| record.text.len() as u64)
        .sum();
    let records = corpus.records.len() as u64;
    if memory_needed(text, records) <= limit {
        return Ok(None);
    }
    // Besides the texts and records: the marks of the groups walked, the summaries of the
    // removed texts and the allocator's share, up to half the text (a gigabyte of web
    // pages: 0.45), and the buffers.
    let floor = text + text / 2 + records * PER_RECORD_BYTES + SPILL_FLOOR_BYTES;
    if floor <= limit {
        return Ok(Some((limit - floor + SPILL_FLOOR_BYTES / 2) as usize));
    }
    let path = corpus
        .sources
        .first()
        .map_or("<input>", |source| source.path.as_str());
    Err(Error::Stopped {
        parameter: "memory_limit".to_owned(),
        message: format!(
            "{path}: span removal holds the texts and records in memory ({} MiB for these {} \
             records of {} MiB of text, with its buffers), above --memory-limit {} MiB; only \
             the anchors spill: raise the limit or split the corpus",
            floor >> 20,
            records,
            text >> 20,
            limit >> 20
        ),
    })
}

/// The report files of a span step, created before the work starts.
pub(crate) struct SpanOutputs {
    report: Option<AtomicOutput>,
    ranges: Option<AtomicOutput>,
}

impl SpanOutputs {
    /// Creates the report files of `spans` (the kept output is the caller's).
    pub(crate) fn reports(spans: &SpanRun) -> Result<SpanOutputs> {
        let optional =
            |path: &Option<String>| path.as_deref().map(AtomicOutput::create).transpose();
        Ok(SpanOutputs {
            report: optional(&spans.report)?,
            ranges: optional(&spans.ranges)?,
        })
    }

    /// The files, to be committed with the run's others.
    pub(crate) fn into_files(self) -> Vec<AtomicOutput> {
        [self.report, self.ranges].into_iter().flatten().collect()
    }
}

/// The documents a span step reads: the records with `keep[i]`, read with `input`, in the
/// order of `policy`.
pub(crate) struct SpanSource<'a> {
    pub(crate) corpus: &'a Corpus,
    pub(crate) keep: &'a [bool],
    pub(crate) input: &'a InputOptions,
    pub(crate) policy: KeepPolicy,
}

/// Finds the spans of the source's records, writes those records with their spans removed
/// to `kept_out` and the report files.
pub(crate) fn remove_spans(
    source: SpanSource<'_>,
    spans: &SpanRun,
    kept_out: Option<&mut AtomicOutput>,
    outputs: &mut SpanOutputs,
    spill: Option<(&dyn SpillDir, usize)>,
) -> Result<SpansReport> {
    let SpanSource {
        corpus,
        keep,
        input,
        policy,
    } = source;
    let started = Instant::now();
    // Kept records by input order, and their texts in keep order.
    let kept: Vec<usize> = (0..corpus.records.len()).filter(|&i| keep[i]).collect();
    let texts: Vec<&str> = kept
        .iter()
        .map(|&i| corpus.records[i].text.as_str())
        .collect();
    let order = keep_order(&texts, policy);
    let ordered: Vec<&str> = order.iter().map(|&doc| texts[doc as usize]).collect();
    let found = match spill {
        Some((dir, budget)) => find_spans_spilling(&ordered, &spans.options, dir, budget),
        None => find_spans(&ordered, &spans.options),
    };
    let found = found.map_err(|e| {
        let record = |index: usize| &corpus.records[kept[order[index] as usize]];
        span_error(
            e,
            Some(&|index| {
                let record = record(index);
                let path = corpus.sources[record.source as usize].path.clone();
                (path, record.line)
            }),
        )
    })?;
    // Where each kept record (by input order) stands in keep order.
    let mut rank = vec![0u32; texts.len()];
    for (position, &doc) in order.iter().enumerate() {
        rank[doc as usize] = position as u32;
    }
    let finding = started.elapsed().as_secs_f64();
    let writing = Instant::now();
    let mut by_record = vec![u32::MAX; corpus.records.len()];
    for (kept_index, &record) in kept.iter().enumerate() {
        by_record[record] = rank[kept_index];
    }
    if let Some(out) = kept_out {
        write_edited(
            corpus,
            keep,
            input,
            &|record| {
                let text = corpus.records[record].text.as_str();
                match found.apply(by_record[record] as usize, text) {
                    std::borrow::Cow::Borrowed(_) => None,
                    std::borrow::Cow::Owned(edited) => Some(edited),
                }
            },
            out,
        )?;
    }
    let text_of = |position: usize| ordered[position];
    let id_of = |position: usize| DocId::from(&corpus.records[kept[order[position] as usize]].id);
    let summaries = found.summaries(text_of, DOCUMENTS_LISTED);
    if let Some(out) = outputs.report.as_mut() {
        let rows = summaries.iter().map(|summary| SpanRow::new(summary, id_of));
        write_json_lines(out, rows)?;
    }
    if let Some(out) = outputs.ranges.as_mut() {
        write_json_lines(out, ranges_rows(&found, &kept, &order, corpus))?;
    }
    Ok(SpansReport {
        documents: texts.len(),
        changed_documents: found.changed_documents(),
        text_bytes: texts.iter().map(|text| text.len() as u64).sum(),
        removed_bytes: found.removed_bytes(),
        distinct_spans: summaries.len(),
        top: summaries
            .iter()
            .take(5)
            .map(|s| (s.text.to_owned(), s.documents))
            .collect(),
        spilled_bytes: found.spilled_bytes(),
        skipped: Skipped::default(),
        seconds: vec![
            ("find_spans".to_owned(), finding),
            ("write".to_owned(), writing.elapsed().as_secs_f64()),
        ],
    })
}

/// The removed ranges of each changed record, in input order.
fn ranges_rows<'a>(
    found: &'a FoundSpans,
    kept: &'a [usize],
    order: &'a [u32],
    corpus: &'a Corpus,
) -> impl Iterator<Item = RangesRow> + 'a {
    let mut changed: Vec<(usize, usize)> = Vec::new();
    let mut last = None;
    for removal in found.removals() {
        if last != Some(removal.doc) {
            last = Some(removal.doc);
            changed.push((
                kept[order[removal.doc as usize] as usize],
                removal.doc as usize,
            ));
        }
    }
    changed.sort_unstable();
    changed
        .into_iter()
        .map(move |(record, position)| RangesRow {
            doc: record as u64,
            id: DocId::from(&corpus.records[record].id),
            ranges: found
                .ranges(position)
                .iter()
                .map(|r| [r.start, r.end])
                .collect(),
        })
}

/// A span error as the pipeline's: an option names itself; a document too long names its
/// file and line (`located` gives them by keep-order index).
fn span_error(error: SpanError, located: Option<&dyn Fn(usize) -> (String, u64)>) -> Error {
    match (error, located) {
        (SpanError::Option { parameter, message }, _) => {
            Error::Parameter(neardup_core::Error::invalid(parameter, message))
        }
        (SpanError::DocumentTooLong { index, bytes }, Some(located)) => {
            let (path, line) = located(index);
            Error::Input {
                path,
                line,
                message: format!(
                    "the text has {bytes} bytes; span removal takes texts of at most 4 GiB \
                     (cap them with --max-doc-bytes, or split the document)"
                ),
            }
        }
        (SpanError::Spill(message), _) => {
            Error::Parameter(neardup_core::Error::invalid("temp_dir", message))
        }
        (other, _) => Error::Stopped {
            parameter: "spans".to_owned(),
            message: other.to_string(),
        },
    }
}
