//! The records written back with their text shortened: the others byte for byte, an edited
//! JSONL record as its JSON with the text field replaced, an edited text line as its text,
//! an edited CSV or TSV row with its text column replaced.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::input::{lookup_mut, Corpus, Format, InputOptions, Raw};
use crate::output::{csv_writer, AtomicOutput, LinesAgain};

/// Writes the records with `keep[i]`, in input order; `edit(i)` gives record i's new text,
/// or `None` to write it as it was read.
///
/// # Errors
/// Inputs of different formats or a Parquet input (whose rows are not rewritten), a line
/// that changed since it was read, a write that fails.
pub(crate) fn write_edited(
    corpus: &Corpus,
    keep: &[bool],
    input: &InputOptions,
    edit: &dyn Fn(usize) -> Option<String>,
    out: &mut AtomicOutput,
) -> Result<()> {
    let Some(first) = corpus.sources.first() else {
        return Ok(());
    };
    if let Some(other) = corpus
        .sources
        .iter()
        .find(|source| source.format != first.format)
    {
        let message = format!(
            "cannot write one output from inputs of different formats: it is {} and {} is {}",
            other.format, first.path, first.format
        );
        return Err(Error::format(&other.path, message));
    }
    let kept = (0..corpus.records.len()).filter(|&i| keep[i]);
    let edits = Edits {
        corpus,
        input,
        edit,
    };
    match first.format {
        Format::Jsonl | Format::Text => write_lines(&edits, kept, out),
        Format::Csv | Format::Tsv => write_rows(&edits, kept, out),
        Format::Parquet => Err(Error::format(
            &first.path,
            "span removal writes JSONL, text, CSV and TSV records; a Parquet input's rows are \
             not rewritten yet (convert it to JSONL, or use the Python module's \
             neardup.spans on an Arrow table)",
        )),
    }
}

/// The records, how they were read, and their new texts (`None`: unchanged).
struct Edits<'a> {
    corpus: &'a Corpus,
    input: &'a InputOptions,
    edit: &'a dyn Fn(usize) -> Option<String>,
}

fn write_lines(
    edits: &Edits<'_>,
    kept: impl Iterator<Item = usize>,
    out: &mut AtomicOutput,
) -> Result<()> {
    let (corpus, input, edit) = (edits.corpus, edits.input, edits.edit);
    let mut again = LinesAgain::new(&corpus.sources);
    let mut json = Vec::new();
    for index in kept {
        let record = &corpus.records[index];
        let bytes = match &record.raw {
            Raw::Line(bytes) => bytes.as_slice(),
            &Raw::At { offset, len, check } => again.line(record, offset, len, check)?,
            _ => continue,
        };
        let source = &corpus.sources[record.source as usize];
        let line: &[u8] = match edit(index) {
            None => bytes,
            Some(text) if source.format == Format::Text => {
                json.clear();
                json.extend_from_slice(text.as_bytes());
                &json
            }
            Some(text) => {
                let mut value: Value = serde_json::from_slice(bytes).map_err(|e| {
                    Error::format(
                        &source.path,
                        format!("line {} is no longer JSON: {e}", record.line),
                    )
                })?;
                if let Some(field) = lookup_mut(&mut value, &input.text_field) {
                    *field = Value::String(text);
                }
                json.clear();
                serde_json::to_writer(&mut json, &value).map_err(|e| out.error(e))?;
                &json
            }
        };
        let writer = out.writer();
        if let Err(e) = writer
            .write_all(line)
            .and_then(|()| writer.write_all(b"\n"))
        {
            return Err(out.error(e));
        }
    }
    Ok(())
}

fn write_rows(
    edits: &Edits<'_>,
    kept: impl Iterator<Item = usize>,
    out: &mut AtomicOutput,
) -> Result<()> {
    let (corpus, input, edit) = (edits.corpus, edits.input, edits.edit);
    let first = &corpus.sources[0];
    let headers = first.csv_headers.as_ref();
    let column = headers.and_then(|headers| {
        headers
            .iter()
            .position(|name| name == input.text_field.as_bytes())
    });
    let mut writer = csv_writer(first, out.writer());
    let mut result = headers.map_or(Ok(()), |headers| writer.write_byte_record(headers));
    for index in kept {
        if result.is_err() {
            break;
        }
        let Raw::Csv(row) = &corpus.records[index].raw else {
            continue;
        };
        result = match (edit(index), column) {
            (Some(text), Some(column)) => {
                let edited: csv::ByteRecord = (row.iter().enumerate())
                    .map(|(at, field)| if at == column { text.as_bytes() } else { field })
                    .collect();
                writer.write_byte_record(&edited)
            }
            _ => writer.write_byte_record(row),
        };
    }
    let result = result.and_then(|()| writer.flush().map_err(csv::Error::from));
    drop(writer);
    result.map_err(|e| out.error(e))
}
