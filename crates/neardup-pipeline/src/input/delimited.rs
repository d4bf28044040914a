//! CSV and TSV inputs.

use std::io::BufRead;

use serde_json::Value;

use super::row_tracker::{RowTooLong, RowTracker};
use super::{
    display_path, quoted_list, too_long, too_long_unfinished, Columns, CorpusReader, Format,
    OnError, Raw, ReadLimit, Record,
};
use crate::compression::open_stream;
use crate::error::{Error, Result};

/// The csv reader over a tracked input stream.
type Reader = csv::Reader<RowTracker<Box<dyn BufRead>>>;

/// The error for a CSV failure that is not about one record, or for a row that passed the
/// size limit (reported by the [`RowTracker`] through the csv reader as an I/O error).
fn csv_error(name: &str, error: csv::Error, limit: ReadLimit) -> Error {
    let message = error.to_string();
    match error.into_kind() {
        csv::ErrorKind::Io(source) => {
            match source
                .get_ref()
                .and_then(|e| e.downcast_ref::<RowTooLong>())
            {
                Some(row) => Error::input(name, row.line, too_long_unfinished(row.read, limit)),
                None => Error::io(name, source),
            }
        }
        _ => Error::format(name, format!("cannot read CSV: {message}")),
    }
}

/// The message for a quoted field that the end of the input closed.
fn unclosed_quote(quote_line: u64) -> String {
    format!(
        "the quoted field opened at line {quote_line} is never closed: it runs to the end of \
         the input (a quote inside a quoted field must be doubled)"
    )
}

/// Reads the next CSV row into `row`: `None` at the end, an inner error for a malformed row
/// (reading can go on after it), an outer error when reading cannot go on.
fn next_row(
    reader: &mut Reader,
    row: &mut csv::ByteRecord,
    name: &str,
    limit: ReadLimit,
) -> Result<Option<Result<()>>> {
    let error = match reader.read_byte_record(row) {
        Ok(false) => return Ok(None),
        Ok(true) => {
            let line = row.position().map_or(0, csv::Position::line);
            let outcome = match reader.get_ref().unclosed_quote() {
                Some(quote_line) => Err(Error::input(name, line, unclosed_quote(quote_line))),
                None => Ok(()),
            };
            return Ok(Some(outcome));
        }
        Err(error) => error,
    };
    if let csv::ErrorKind::UnequalLengths {
        pos,
        expected_len,
        len,
    } = error.kind()
    {
        let line = pos.as_ref().map_or(0, csv::Position::line);
        let message = format!("expected {expected_len} fields, found {len}");
        return Ok(Some(Err(Error::input(name, line, message))));
    }
    Err(csv_error(name, error, limit))
}

/// The index of the column named `field` in a CSV header row.
fn header_column(name: &str, headers: &csv::ByteRecord, field: &str) -> Result<usize> {
    headers
        .iter()
        .position(|header| header == field.as_bytes())
        .ok_or_else(|| {
            let names = quoted_list(headers.iter().map(String::from_utf8_lossy));
            Error::format(
                name,
                format!("column {field:?} not found; the header has {names}"),
            )
        })
}

impl Columns<'_> {
    /// Makes a record of a CSV row.
    fn row_record(&self, row: &csv::ByteRecord, ordinal: u64) -> Result<Record> {
        let line = row.position().map_or(0, csv::Position::line);
        let size = row.as_slice().len();
        if size > self.limit.bytes {
            return Err(Error::input(
                self.name,
                line,
                too_long(size as u64, self.limit),
            ));
        }
        let text = self.row_field(row, self.text, line)?.to_owned();
        let id = match self.id {
            Some(column) => Value::from(self.row_field(row, column, line)?),
            None => Value::from(ordinal),
        };
        let raw = Raw::Csv(row.clone());
        Ok(self.record(id, text, raw, line))
    }

    /// A field of a CSV row as UTF-8.
    fn row_field<'r>(
        &self,
        row: &'r csv::ByteRecord,
        (field, index): (&str, usize),
        line: u64,
    ) -> Result<&'r str> {
        // Every row has as many fields as the header (the reader is not flexible).
        let bytes = row.get(index).unwrap_or_default();
        std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            let message = format!("column {field:?} is not valid UTF-8 (byte offset {offset})");
            Error::input(self.name, line, message)
        })
    }
}

impl CorpusReader<'_> {
    /// Reads a CSV or TSV input and returns its header row.
    pub(super) fn read_delimited(
        &mut self,
        source: u32,
        path: &str,
        format: Format,
    ) -> Result<csv::ByteRecord> {
        let (name, options) = (display_path(path), self.options);
        let limit = options.read_limit();
        let (delimiter, quoting) = match format {
            Format::Tsv => (b'\t', false),
            _ => (b',', true),
        };
        let stop_past_limit = (options.on_error == OnError::Fail).then_some(limit.bytes);
        let opened = open_stream(self.opened(source, path))?;
        let stream = RowTracker::new(opened, delimiter, quoting, stop_past_limit);
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .quoting(quoting)
            .flexible(false)
            .from_reader(stream);
        let headers = reader
            .byte_headers()
            .map_err(|e| csv_error(name, e, limit))?
            .clone();
        if let Some(quote_line) = reader.get_ref().unclosed_quote() {
            return Err(Error::format(
                name,
                format!("header row: {}", unclosed_quote(quote_line)),
            ));
        }
        let text = header_column(name, &headers, &options.text_field)?;
        let id = options.id_field.as_deref();
        let id = id
            .map(|field| header_column(name, &headers, field))
            .transpose()?;
        let columns = Columns::new(name, source, options, text, id);
        let mut row = csv::ByteRecord::new();
        while let Some(outcome) = next_row(&mut reader, &mut row, name, limit)? {
            let ordinal = self.next_ordinal();
            self.accept(outcome.and_then(|()| columns.row_record(&row, ordinal)))?;
        }
        self.corpus.bytes_read += reader.position().byte();
        Ok(headers)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::input::tests::{error_of, ids, read_one, skip, texts, write_file};
    use crate::input::InputOptions;

    #[test]
    fn csv_reads_quoted_fields_and_id_column() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"\xef\xbb\xbfid,text,extra\nx1,\"two\nlines, quoted\",1\nx2,plain,2\n";
        let path = write_file(&dir, "in.csv", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["two\nlines, quoted", "plain"]);
        assert_eq!(ids(&corpus), [json!("x1"), json!("x2")]);
        let lines: Vec<u64> = corpus.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 4]);
        let headers = corpus.sources[0].csv_headers.as_ref().unwrap();
        assert_eq!(headers, &csv::ByteRecord::from(vec!["id", "text", "extra"]));
        assert_eq!(corpus.bytes_read, data.len() as u64);
    }

    #[test]
    fn tsv_treats_quotes_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.tsv", b"text\tn\n\"quoted\" word\t1\n");
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["\"quoted\" word"]);
    }

    #[test]
    fn csv_row_with_wrong_field_count_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "rows.csv", b"id,text\n1,a\n2,b,extra\n3,c\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("rows.csv:3: expected 2 fields, found 3"),
            "{message}"
        );
        let corpus = read_one(&path, &skip()).unwrap();
        assert_eq!(texts(&corpus), ["a", "c"]);
        assert_eq!(ids(&corpus), [json!(1), json!(3)]);
        assert_eq!(corpus.skipped.count, 1);
    }

    #[test]
    fn csv_missing_column_lists_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "cols.csv", b"id,body\n1,a\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message
                .ends_with("cols.csv: column \"text\" not found; the header has \"id\", \"body\""),
            "{message}"
        );
        let path = write_file(&dir, "empty.csv", b"");
        let message = error_of(&path, &InputOptions::default());
        assert!(message.ends_with("the header has no columns"), "{message}");
    }

    #[test]
    fn csv_invalid_utf8_names_the_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "bad.csv", b"text\nok\nno\xff\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("bad.csv:3: column \"text\" is not valid UTF-8 (byte offset 2)"),
            "{message}"
        );
    }

    #[test]
    fn csv_unterminated_quote_is_an_error_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "quote.csv", b"id,text\n1,a\n2,\"b\n\"\"c\n3,d\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with(
                "quote.csv:3: the quoted field opened at line 3 is never closed: \
                 it runs to the end of the input (a quote inside a quoted field must be doubled)"
            ),
            "{message}"
        );
        let corpus = read_one(&path, &skip()).unwrap();
        assert_eq!(texts(&corpus), ["a"]);
        assert_eq!(corpus.skipped.count, 1);
        let path = write_file(&dir, "header.csv", b"id,\"text\n1,a\n");
        let message = error_of(&path, &skip());
        assert!(
            message.contains("header.csv: header row: the quoted field opened at line 1"),
            "{message}"
        );
        let path = write_file(&dir, "closed.csv", b"id,text\n1,\"a\"\"\n\"\n");
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a\"\n"]);
    }

    #[test]
    fn csv_row_past_max_doc_bytes_stops_reading() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = b"id,text\n1,a\n2,\"".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100_000));
        data.extend_from_slice(b"\"\n3,c\n");
        let path = write_file(&dir, "long.csv", &data);
        let options = InputOptions {
            max_doc_bytes: 1000,
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(
            message.contains("long.csv:3: record exceeds `max_doc_bytes` 1000 (stopped reading"),
            "{message}"
        );
        let options = InputOptions {
            max_doc_bytes: 1000,
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["a", "c"]);
        assert!(corpus.skipped.first[0]
            .ends_with("long.csv:3: record of 100001 bytes exceeds `max_doc_bytes` 1000"));
    }

    #[cfg(unix)]
    #[test]
    fn csv_max_doc_bytes_fails_on_dev_zero() {
        let options = InputOptions {
            format: Some(crate::input::Format::Csv),
            max_doc_bytes: 1 << 20,
            ..InputOptions::default()
        };
        let message = error_of("/dev/zero", &options);
        assert!(
            message.starts_with("/dev/zero:1: record exceeds `max_doc_bytes` 1048576"),
            "{message}"
        );
    }
}
