//! Span removal from Python ([`neardup_engine::spans`]): the whole run over Arrow texts
//! (`neardup.spans`), and the distributed steps of the Spark path (`neardup.spark.spans`),
//! each over Arrow batches as `mapInArrow` hands them over.
//!
//! The Spark steps, at the substring level: each document's anchors with their contexts
//! ([`span_context_anchors`]), the anchors of one key walked together ([`span_group_marks`]),
//! each document's marks turned into its removed ranges ([`span_document_ranges`]) and cut
//! out of its text ([`span_cut`]). At the line and sentence levels, the units of each
//! document ([`span_units`]) are counted by a shuffle, and their removals go through the
//! same last two steps.

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int32Array, Int64Array, Int64Builder, LargeStringArray,
    ListBuilder, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Int64Type};
use arrow::pyarrow::FromPyArrow;
use neardup_core::cluster::KeepPolicy;
use neardup_engine::spans::distributed::{
    context_anchors, document_ranges, group_marks, ContextAnchor, GroupMember,
};
use neardup_engine::spans::{
    candidate_units, find_spans, keep_order, Removal, SpanError, SpanLevel, SpanOptions,
    SpanSummary,
};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::arrow_io::{self, Texts};

/// The options of a span run from their Python spellings, checked (the first wrong one is
/// refused by name, as the command line refuses it).
fn span_options(
    py: Python<'_>,
    level: &str,
    min_length: Option<usize>,
    (min_count, count, remove): (usize, &str, &str),
) -> PyResult<SpanOptions> {
    let level: SpanLevel = level.parse().map_err(|e| crate::error(py, e))?;
    let options = SpanOptions {
        level,
        min_length: min_length.unwrap_or(SpanOptions::default_length(level)),
        min_count,
        count: count.parse().map_err(|e| crate::error(py, e))?,
        remove: remove.parse().map_err(|e| crate::error(py, e))?,
    };
    options.check().map_err(|e| span_error(py, e, &|i| i))?;
    Ok(options)
}

/// A span error as a `NeardupError`: an option names itself; a document names its position
/// (`position` maps a keep-order index to it).
fn span_error(py: Python<'_>, error: SpanError, position: &dyn Fn(usize) -> usize) -> PyErr {
    match error {
        SpanError::Option { parameter, message } => crate::invalid(py, parameter, message),
        SpanError::DocumentTooLong { index, bytes } => crate::invalid(
            py,
            "texts",
            format!(
                "texts[{}] has {bytes} bytes; span removal takes texts of at most 4 GiB \
                 (split it)",
                position(index)
            ),
        ),
        other => crate::invalid(py, "texts", other.to_string()),
    }
}

/// Why a run without the GIL stopped.
enum Failure {
    /// A null text, or another fault of the input: the message.
    Texts(String),
    /// The engine refused.
    Span(SpanError),
}

impl Failure {
    fn into_py(self, py: Python<'_>, position: &dyn Fn(usize) -> usize) -> PyErr {
        match self {
            Failure::Texts(message) => crate::invalid(py, "texts", message),
            Failure::Span(error) => span_error(py, error, position),
        }
    }
}

/// A string array of `texts`: `string` when its bytes fit 32-bit offsets, else
/// `large_string`.
fn string_array<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> ArrayRef {
    let bytes: usize = texts.clone().map(str::len).sum();
    if bytes <= i32::MAX as usize {
        Arc::new(StringArray::from_iter_values(texts))
    } else {
        Arc::new(LargeStringArray::from_iter_values(texts))
    }
}

/// An int64 array.
fn int64s(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Int64Array>())
}

/// What [`spans`] found, by input position.
struct SpanRun<'a> {
    texts: ArrayRef,
    ranges: RecordBatch,
    summaries: Vec<SpanSummary<'a>>,
}

/// The spans of `texts` (input order) kept in the order of `keep`: the new texts, the
/// removed ranges by input position, and the summaries with input positions.
fn run_spans<'a>(
    texts: &[&'a str],
    options: &SpanOptions,
    keep: KeepPolicy,
) -> Result<SpanRun<'a>, (Failure, Vec<u32>)> {
    let order = keep_order(texts, keep);
    let ordered: Vec<&str> = order.iter().map(|&doc| texts[doc as usize]).collect();
    let found = match find_spans(&ordered, options) {
        Ok(found) => found,
        Err(error) => return Err((Failure::Span(error), order)),
    };
    let mut rank = vec![0usize; texts.len()];
    for (position, &doc) in order.iter().enumerate() {
        rank[doc as usize] = position;
    }
    let edited: Vec<Cow<'_, str>> = (0..texts.len())
        .into_par_iter()
        .map(|doc| found.apply(rank[doc], texts[doc]))
        .collect();
    let (mut rows, mut starts, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    for (doc, &position) in rank.iter().enumerate() {
        for range in found.ranges(position) {
            rows.push(doc as i64);
            starts.push(i64::from(range.start));
            ends.push(i64::from(range.end));
        }
    }
    let mut summaries = found.summaries(|p| ordered[p], neardup_pipeline::spans::DOCUMENTS_LISTED);
    for summary in &mut summaries {
        for doc in &mut summary.document_indexes {
            *doc = order[*doc as usize];
        }
    }
    Ok(SpanRun {
        texts: string_array(edited.iter().map(|text| text.as_ref())),
        ranges: arrow_io::batch(vec![
            ("row", int64s(rows)),
            ("start", int64s(starts)),
            ("end", int64s(ends)),
        ]),
        summaries,
    })
}

/// The summaries as a record batch: `text`, `count` (documents), `occurrences`,
/// `bytes_removed`, `documents` (input positions, the first ones in keep order, at most
/// 100) and `more_documents`, most bytes first: the command line's report rows.
fn summary_batch(summaries: &[SpanSummary<'_>]) -> RecordBatch {
    let mut documents = ListBuilder::new(Int64Builder::new());
    for summary in summaries {
        let listed = summary.document_indexes.iter().map(|&doc| i64::from(doc));
        documents.values().append_slice(&listed.collect::<Vec<_>>());
        documents.append(true);
    }
    let number = |value: &dyn Fn(&SpanSummary<'_>) -> usize| {
        int64s(summaries.iter().map(|s| value(s) as i64))
    };
    arrow_io::batch(vec![
        ("text", string_array(summaries.iter().map(|s| s.text))),
        ("count", number(&|s| s.documents)),
        ("occurrences", number(&|s| s.occurrences)),
        ("bytes_removed", number(&|s| s.bytes_removed as usize)),
        ("documents", Arc::new(documents.finish())),
        (
            "more_documents",
            number(&|s| s.documents - s.document_indexes.len()),
        ),
    ])
}

/// Removes the repeated spans of the texts of `chunks` (Arrow string arrays, read in order
/// as one column), the first copy kept in the order of `keep`. Returns the new texts (a
/// string array indexed like the input), the removed ranges (a record batch of `row`,
/// `start`, `end`: byte offsets of the original text, by row then start) and the spans (a
/// record batch of the command line's report rows, documents by input position).
#[pyfunction]
#[pyo3(signature = (chunks, level="substring", min_length=None, min_count=2,
    count="documents", remove="later", keep="first", threads=0))]
#[allow(clippy::too_many_arguments)]
fn spans<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    level: &str,
    min_length: Option<usize>,
    min_count: usize,
    count: &str,
    remove: &str,
    keep: &str,
    threads: usize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let options = span_options(py, level, min_length, (min_count, count, remove))?;
    let keep: KeepPolicy = keep.parse().map_err(|e| crate::error(py, e))?;
    let texts = Texts::import(&chunks, "texts")?;
    let run = crate::detached(py, threads, || {
        let strs = texts.strs().map_err(|e| (Failure::Texts(e), Vec::new()))?;
        run_spans(&strs, &options, keep)
    })?;
    let run = run.map_err(|(failure, order)| {
        failure.into_py(py, &|index| {
            order.get(index).map_or(index, |&doc| doc as usize)
        })
    })?;
    Ok((
        arrow_io::array_to_py(py, run.texts)?,
        arrow_io::batch_to_py(py, run.ranges)?,
        arrow_io::batch_to_py(py, summary_batch(&run.summaries))?,
    ))
}

/// Int64 values of a pyarrow array (`what` names it in errors), sorted and distinct.
fn sorted_keys(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let mut keys: Vec<i64> = crate::spark::int64s(py, keys, "keys")?
        .into_iter()
        .flatten()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// The anchors of each text at the substring level with `min_length` (the Spark path's first
/// step): a record batch of `row` (the text's position in `chunks`), `key` (the shuffle key,
/// its bits as int64), `start`, `end` (the context's bytes in the text), `anchor` (the
/// anchor's byte), `r_low`, `r_high` (int32) and, with `contexts`, `context` (the text's
/// bytes `start..end`). With `keys` (int64), only the anchors of those keys.
#[pyfunction]
#[pyo3(signature = (chunks, min_length=None, min_count=2, count="documents",
    remove="later", contexts=true, keys=None, threads=1))]
#[allow(clippy::too_many_arguments)]
fn span_context_anchors<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    min_length: Option<usize>,
    min_count: usize,
    count: &str,
    remove: &str,
    contexts: bool,
    keys: Option<Bound<'py, PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let options = span_options(py, "substring", min_length, (min_count, count, remove))?;
    let keys = keys.map(|keys| sorted_keys(py, &keys)).transpose()?;
    let texts = Texts::import(&chunks, "texts")?;
    let batch = crate::detached(py, threads, || {
        let strs = texts.strs().map_err(Failure::Texts)?;
        let found: Vec<Vec<ContextAnchor>> = strs
            .par_iter()
            .map(|text| {
                let mut anchors = context_anchors(text, &options)?;
                if let Some(keys) = &keys {
                    anchors.retain(|a| keys.binary_search(&(a.key as i64)).is_ok());
                }
                Ok(anchors)
            })
            .collect::<Result<_, SpanError>>()
            .map_err(Failure::Span)?;
        Ok(anchor_batch(&strs, &found, contexts))
    })?
    .map_err(|failure: Failure| failure.into_py(py, &|i| i))?;
    arrow_io::batch_to_py(py, batch)
}

/// The anchors of the texts as [`span_context_anchors`] returns them.
fn anchor_batch(texts: &[&str], anchors: &[Vec<ContextAnchor>], contexts: bool) -> RecordBatch {
    let all = || {
        anchors
            .iter()
            .enumerate()
            .flat_map(|(row, found)| found.iter().map(move |anchor| (row, anchor)))
    };
    let int32 = |value: fn(&ContextAnchor) -> i32| -> ArrayRef {
        Arc::new(all().map(|(_, a)| value(a)).collect::<Int32Array>())
    };
    let mut columns = vec![
        ("row", int64s(all().map(|(row, _)| row as i64))),
        ("key", int64s(all().map(|(_, a)| a.key as i64))),
        ("start", int64s(all().map(|(_, a)| i64::from(a.start)))),
        ("end", int64s(all().map(|(_, a)| i64::from(a.end)))),
        ("anchor", int64s(all().map(|(_, a)| i64::from(a.anchor)))),
        ("r_low", int32(|a| i32::from(a.r_low))),
        ("r_high", int32(|a| i32::from(a.r_high))),
    ];
    if contexts {
        let context = all().map(|(row, a)| &texts[row][a.start as usize..a.end as usize]);
        columns.push(("context", string_array(context)));
    }
    arrow_io::batch(columns)
}

/// A column of `batch` by name, or an error naming `what` and the columns it has.
fn column<'a>(
    py: Python<'_>,
    batch: &'a RecordBatch,
    name: &str,
    what: &str,
) -> PyResult<&'a ArrayRef> {
    batch.column_by_name(name).ok_or_else(|| {
        let names: Vec<String> = (batch.schema().fields().iter())
            .map(|f| f.name().clone())
            .collect();
        crate::invalid(
            py,
            what,
            format!("no column {name:?} (the batch has {names:?})"),
        )
    })
}

/// A column of whole numbers as int64, without nulls.
fn int64_column(py: Python<'_>, batch: &RecordBatch, name: &str, what: &str) -> PyResult<Vec<i64>> {
    let array = column(py, batch, name, what)?;
    let cast = arrow::compute::cast(array, &DataType::Int64)
        .ok()
        .filter(|_| array.data_type().is_integer())
        .ok_or_else(|| {
            let found = array.data_type();
            crate::invalid(py, what, format!("{name:?} is {found}: expected integers"))
        })?;
    if cast.null_count() > 0 {
        return Err(crate::invalid(py, what, format!("{name:?} has nulls")));
    }
    Ok(cast.as_primitive::<Int64Type>().values().to_vec())
}

/// A column of booleans, without nulls.
fn bool_column(py: Python<'_>, batch: &RecordBatch, name: &str, what: &str) -> PyResult<Vec<bool>> {
    let array = column(py, batch, name, what)?;
    match array.as_boolean_opt() {
        Some(values) if values.null_count() == 0 => Ok(values.iter().flatten().collect()),
        Some(_) => Err(crate::invalid(py, what, format!("{name:?} has nulls"))),
        None => Err(crate::invalid(
            py,
            what,
            format!("{name:?} is {}: expected booleans", array.data_type()),
        )),
    }
}

/// A column of strings as `large_string`, without nulls.
fn string_column(
    py: Python<'_>,
    batch: &RecordBatch,
    name: &str,
    what: &str,
) -> PyResult<LargeStringArray> {
    let array = column(py, batch, name, what)?;
    let strings = matches!(
        array.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    let cast = arrow::compute::cast(array, &DataType::LargeUtf8)
        .ok()
        .filter(|_| strings)
        .ok_or_else(|| {
            let found = array.data_type();
            crate::invalid(py, what, format!("{name:?} is {found}: expected strings"))
        })?;
    if cast.null_count() > 0 {
        return Err(crate::invalid(py, what, format!("{name:?} has nulls")));
    }
    Ok(cast.as_string::<i64>().clone())
}

/// The members of groups as [`span_group_marks`] takes them, column by column.
struct Members {
    keys: Vec<i64>,
    ranks: Vec<i64>,
    contexts: LargeStringArray,
    anchors: Vec<ContextAnchor>,
}

impl Members {
    /// The columns of `batch`, each member checked: its anchor inside its context, on a
    /// character boundary, its offsets in range.
    fn read(py: Python<'_>, batch: &RecordBatch) -> PyResult<Members> {
        let what = "members";
        let keys = int64_column(py, batch, "key", what)?;
        let ranks = int64_column(py, batch, "rank", what)?;
        let contexts = string_column(py, batch, "context", what)?;
        let starts = int64_column(py, batch, "start", what)?;
        let at = int64_column(py, batch, "anchor", what)?;
        let lows = int64_column(py, batch, "r_low", what)?;
        let highs = int64_column(py, batch, "r_high", what)?;
        let mut anchors = Vec::with_capacity(keys.len());
        for i in 0..keys.len() {
            let context = contexts.value(i);
            let offset = at[i] - starts[i];
            let fits = |value: i64, most: i64| (0..=most).contains(&value);
            let ok = fits(starts[i], i64::from(u32::MAX) - context.len() as i64)
                && fits(offset, context.len() as i64)
                && context.is_char_boundary(offset.max(0) as usize)
                && fits(highs[i], i64::from(u16::MAX))
                && fits(lows[i], highs[i])
                && ranks[i] >= 0;
            if !ok {
                return Err(crate::invalid(
                    py,
                    what,
                    format!(
                        "row {i}: rank {}, start {}, anchor {}, r_low {}, r_high {} do not fit \
                         its context of {} bytes (expected the rows of span_context_anchors)",
                        ranks[i],
                        starts[i],
                        at[i],
                        lows[i],
                        highs[i],
                        context.len()
                    ),
                ));
            }
            anchors.push(ContextAnchor {
                key: keys[i] as u64,
                start: starts[i] as u32,
                end: (starts[i] as usize + context.len()) as u32,
                anchor: at[i] as u32,
                r_low: lows[i] as u16,
                r_high: highs[i] as u16,
            });
        }
        Ok(Members {
            keys,
            ranks,
            contexts,
            anchors,
        })
    }

    /// The marks of one group (members of one key): `(rank, start, end, kept)`. Ranks are
    /// numbered densely within the group, in their order, for the engine's 32-bit ranks.
    fn marks(&self, group: &[usize], options: &SpanOptions) -> Vec<(i64, i64, i64, bool)> {
        let mut ranks: Vec<i64> = group.iter().map(|&i| self.ranks[i]).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let local = |rank: i64| ranks.binary_search(&rank).unwrap_or_default() as u32;
        let members: Vec<GroupMember<'_>> = group
            .iter()
            .map(|&i| GroupMember {
                doc: local(self.ranks[i]),
                context: self.contexts.value(i),
                anchor: self.anchors[i],
            })
            .collect();
        let (removed, kept) = group_marks(&members, options);
        let mark = |kept: bool| {
            let ranks = &ranks;
            move |m: Removal| {
                let rank = ranks[m.doc as usize];
                (rank, i64::from(m.start), i64::from(m.end), kept)
            }
        };
        let mut out: Vec<_> = removed.into_iter().map(mark(false)).collect();
        out.extend(kept.into_iter().map(mark(true)));
        out
    }
}

/// `values` cut into runs of equal `key`, as index lists (any input order).
fn runs_by(values: &[i64]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by_key(|&i| (values[i], i));
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match runs.last_mut() {
            Some(run) if values[run[0]] == values[i] => run.push(i),
            _ => runs.push(vec![i]),
        }
    }
    runs
}

/// Marks as a record batch of `rank`, `start`, `end` (int64) and `kept` (bool).
fn mark_batch(marks: impl Iterator<Item = (i64, i64, i64, bool)>) -> RecordBatch {
    let marks: Vec<_> = marks.collect();
    arrow_io::batch(vec![
        ("rank", int64s(marks.iter().map(|m| m.0))),
        ("start", int64s(marks.iter().map(|m| m.1))),
        ("end", int64s(marks.iter().map(|m| m.2))),
        (
            "kept",
            Arc::new(marks.iter().map(|m| Some(m.3)).collect::<BooleanArray>()),
        ),
    ])
}

/// The marks of groups of anchors (the Spark path's second step): `members`, a pyarrow
/// record batch of `key`, `rank` (the document's rank in keep order), `context`, `start`,
/// `anchor`, `r_low` and `r_high` as [`span_context_anchors`] gives them, holding every
/// member of each of its keys (any order, any number of keys). Returns a record batch of
/// `rank`, `start`, `end` (document bytes) and `kept` (a first copy that stays whole).
#[pyfunction]
#[pyo3(signature = (members, min_length=None, min_count=2, count="documents",
    remove="later", threads=1))]
fn span_group_marks<'py>(
    py: Python<'py>,
    members: Bound<'py, PyAny>,
    min_length: Option<usize>,
    min_count: usize,
    count: &str,
    remove: &str,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let options = span_options(py, "substring", min_length, (min_count, count, remove))?;
    let batch = RecordBatch::from_pyarrow_bound(&members)?;
    let members = Members::read(py, &batch)?;
    let marks = crate::detached(py, threads, || {
        let groups = runs_by(&members.keys);
        let marks: Vec<Vec<_>> = groups
            .par_iter()
            .map(|group| members.marks(group, &options))
            .collect();
        mark_batch(marks.into_iter().flatten())
    })?;
    arrow_io::batch_to_py(py, marks)
}

/// Each document's removed ranges from its marks (the Spark path's third step): `marks`, a
/// pyarrow record batch of `rank`, `start`, `end` and `kept` (bool) holding every mark of
/// each of its documents, any order. Returns a record batch of `rank`, `start`, `end`: the
/// removed byte ranges, by rank then start, merged, first copies taken out.
#[pyfunction]
#[pyo3(signature = (marks, threads=1))]
fn span_document_ranges<'py>(
    py: Python<'py>,
    marks: Bound<'py, PyAny>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let what = "marks";
    let batch = RecordBatch::from_pyarrow_bound(&marks)?;
    let ranks = int64_column(py, &batch, "rank", what)?;
    let starts = int64_column(py, &batch, "start", what)?;
    let ends = int64_column(py, &batch, "end", what)?;
    let kept = bool_column(py, &batch, "kept", what)?;
    let bytes = 0..=i64::from(u32::MAX);
    if let Some(i) = (0..ranks.len())
        .find(|&i| !bytes.contains(&starts[i]) || !bytes.contains(&ends[i]) || starts[i] > ends[i])
    {
        let (start, end) = (starts[i], ends[i]);
        return Err(crate::invalid(
            py,
            what,
            format!("row {i}: the range {start}..{end} is not a range of bytes"),
        ));
    }
    let ranges = crate::detached(py, threads, || {
        let documents: Vec<(i64, Vec<(u32, u32)>)> = runs_by(&ranks)
            .par_iter()
            .map(|run| {
                let removal = |&i: &usize| Removal {
                    doc: 0,
                    start: starts[i] as u32,
                    end: ends[i] as u32,
                };
                let (k, r): (Vec<usize>, Vec<usize>) = run.iter().partition(|&&i| kept[i]);
                let removed = r.iter().map(removal).collect();
                let kept = k.iter().map(removal).collect();
                (ranks[run[0]], document_ranges(removed, kept))
            })
            .collect();
        let rows = documents
            .iter()
            .flat_map(|(rank, ranges)| ranges.iter().map(move |&(s, e)| (*rank, s, e)));
        let rows: Vec<(i64, u32, u32)> = rows.collect();
        arrow_io::batch(vec![
            ("rank", int64s(rows.iter().map(|r| r.0))),
            ("start", int64s(rows.iter().map(|r| i64::from(r.1)))),
            ("end", int64s(rows.iter().map(|r| i64::from(r.2)))),
        ])
    })?;
    arrow_io::batch_to_py(py, ranges)
}

/// The lines or sentences of each text that may be spans (`level` `line` or `sentence`; not
/// blank, at least `min_length` characters): a record batch of `row` (the text's position),
/// `key` (the unit's text, matched exactly), `key_start`, `key_end` and `remove_start`,
/// `remove_end` (the bytes its removal takes: its line break, or the spaces after it).
#[pyfunction]
#[pyo3(signature = (chunks, level="line", min_length=None, threads=1))]
fn span_units<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    level: &str,
    min_length: Option<usize>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let options = span_options(py, level, min_length, (2, "documents", "later"))?;
    if options.level == SpanLevel::Substring {
        let message = "\"substring\" has no units (expected line or sentence)".to_owned();
        return Err(crate::invalid(py, "level", message));
    }
    let texts = Texts::import(&chunks, "texts")?;
    let batch = crate::detached(py, threads, || {
        let strs = texts.strs()?;
        let units: Vec<Vec<_>> = strs
            .par_iter()
            .map(|text| candidate_units(text, options.level, options.min_length))
            .collect();
        let all: Vec<(usize, _)> = (units.iter().enumerate())
            .flat_map(|(row, found)| found.iter().map(move |unit| (row, *unit)))
            .collect();
        let number = |value: &dyn Fn(usize, &neardup_engine::spans::Unit) -> usize| {
            int64s(all.iter().map(|(row, unit)| value(*row, unit) as i64))
        };
        let keys = all.iter().map(|(row, u)| &strs[*row][u.key.0..u.key.1]);
        Ok::<_, String>(arrow_io::batch(vec![
            ("row", number(&|row, _| row)),
            ("key", string_array(keys)),
            ("key_start", number(&|_, u| u.key.0)),
            ("key_end", number(&|_, u| u.key.1)),
            ("remove_start", number(&|_, u| u.remove.0)),
            ("remove_end", number(&|_, u| u.remove.1)),
        ]))
    })?
    .map_err(|e| crate::invalid(py, "texts", e))?;
    arrow_io::batch_to_py(py, batch)
}

/// `text` without `ranges` (sorted by start; overlapping ones are merged), or why not: a
/// range past the text or cutting a character.
fn cut(text: &str, ranges: &mut [(i64, i64)]) -> Result<String, String> {
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0usize;
    for &(start, end) in ranges.iter() {
        let inside = |byte: i64| {
            usize::try_from(byte).is_ok_and(|b| b <= text.len() && text.is_char_boundary(b))
        };
        if !inside(start) || !inside(end) || start > end {
            return Err(format!(
                "{start}..{end} is not a range of the text's {} bytes on character \
                 boundaries",
                text.len()
            ));
        }
        let (start, end) = (start as usize, end as usize);
        if start > at {
            out.push_str(&text[at..start]);
        }
        at = at.max(end);
    }
    out.push_str(&text[at.min(text.len())..]);
    Ok(out)
}

/// The texts with byte ranges removed (the Spark path's last step): `rows`, `starts`, `ends`
/// (int64 arrays of equal length) give each range by the text's position in `chunks`.
/// Returns a string array indexed like the texts.
#[pyfunction]
#[pyo3(signature = (chunks, rows, starts, ends, threads=1))]
fn span_cut<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    rows: Bound<'py, PyAny>,
    starts: Bound<'py, PyAny>,
    ends: Bound<'py, PyAny>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let column = |array: &Bound<'py, PyAny>, what: &str| -> PyResult<Vec<i64>> {
        let values = crate::spark::int64s(py, array, what)?;
        values
            .into_iter()
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| crate::invalid(py, "ranges", format!("{what} has nulls")))
    };
    let (rows, starts, ends) = (
        column(&rows, "rows")?,
        column(&starts, "starts")?,
        column(&ends, "ends")?,
    );
    if rows.len() != starts.len() || rows.len() != ends.len() {
        let lengths = format!("{}, {} and {}", rows.len(), starts.len(), ends.len());
        return Err(crate::invalid(
            py,
            "ranges",
            format!("{lengths} rows, starts and ends"),
        ));
    }
    let texts = Texts::import(&chunks, "texts")?;
    let cut_texts = crate::detached(py, threads, || {
        let strs = texts.strs().map_err(|e| ("texts", e))?;
        let mut by_row: Vec<Vec<(i64, i64)>> = vec![Vec::new(); strs.len()];
        for (i, &row) in rows.iter().enumerate() {
            let slot = usize::try_from(row).ok().and_then(|r| by_row.get_mut(r));
            let slot =
                slot.ok_or_else(|| ("ranges", format!("row {row} of {} texts", strs.len())))?;
            slot.push((starts[i], ends[i]));
        }
        let edited: Vec<Cow<'_, str>> = (by_row.par_iter_mut().zip(strs.par_iter()))
            .enumerate()
            .map(|(row, (ranges, text))| match ranges.is_empty() {
                true => Ok(Cow::Borrowed(*text)),
                false => (cut(text, ranges).map(Cow::Owned))
                    .map_err(|e| ("ranges", format!("row {row}: {e}"))),
            })
            .collect::<Result<_, _>>()?;
        Ok(string_array(edited.iter().map(|text| text.as_ref())))
    })?
    .map_err(|(what, e): (&str, String)| crate::invalid(py, what, e))?;
    arrow_io::array_to_py(py, cut_texts)
}

/// Adds the span functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spans, m)?)?;
    m.add_function(wrap_pyfunction!(span_context_anchors, m)?)?;
    m.add_function(wrap_pyfunction!(span_group_marks, m)?)?;
    m.add_function(wrap_pyfunction!(span_document_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(span_units, m)?)?;
    m.add_function(wrap_pyfunction!(span_cut, m)?)?;
    Ok(())
}
