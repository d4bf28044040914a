//! A look at the head of an input without reading it: whether its records carry a field
//! (the `id` a user forgot to name with `id_field`).

use std::io::{BufRead, Read};

use serde_json::Value;

use super::{resolve_format, Format, InputOptions};
use crate::compression::open_stream;
use crate::paths::STANDARD as STDIN;

/// The most bytes of a JSON line or a CSV header looked at.
const HEAD_BYTES: u64 = 1 << 20;

/// Whether the first record of input `path`, read as `options` say, has a field (JSONL, the
/// top-level key) or a column (CSV, TSV, Parquet) named `field`. `None` when it cannot be
/// told cheaply: standard input, a FIFO, a device or a descriptor (`/dev/fd/N`), none of
/// which can be read twice (a look would take their first bytes from the run), plain text,
/// a file that does not open, a first line over 1 MiB or not a JSON object. The read that
/// follows reports those problems; this look never fails.
pub fn first_record_has_field(path: &str, options: &InputOptions, field: &str) -> Option<bool> {
    let regular = std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file());
    if path == STDIN || !regular {
        return None;
    }
    match resolve_format(path, options.format).ok()? {
        Format::Jsonl => {
            let mut head = open_stream(path).ok()?.take(HEAD_BYTES);
            let mut line = String::new();
            while line.trim().is_empty() {
                line.clear();
                if head.read_line(&mut line).ok()? == 0 {
                    return None;
                }
            }
            let line = line.trim_start_matches('\u{feff}');
            match serde_json::from_str::<Value>(line).ok()? {
                Value::Object(object) => Some(object.contains_key(field)),
                _ => None,
            }
        }
        format @ (Format::Csv | Format::Tsv) => {
            let delimiter = if format == Format::Tsv { b'\t' } else { b',' };
            let head = open_stream(path).ok()?.take(HEAD_BYTES);
            let mut reader = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .from_reader(head);
            let headers = reader.byte_headers().ok()?;
            let first = headers
                .get(0)
                .map(|h| h.strip_prefix(b"\xef\xbb\xbf").unwrap_or(h));
            Some(
                first == Some(field.as_bytes())
                    || headers.iter().skip(1).any(|h| h == field.as_bytes()),
            )
        }
        #[cfg(feature = "parquet")]
        Format::Parquet => {
            let file = crate::compression::open_seekable(path).ok()?;
            let builder =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                    .ok()?;
            Some(builder.schema().index_of(field).is_ok())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::tests::write_file;

    #[test]
    fn the_first_record_is_looked_at_in_each_format() {
        let dir = tempfile::tempdir().unwrap();
        let options = InputOptions::default();
        let has = |name: &str, data: &[u8]| {
            let path = write_file(&dir, name, data);
            first_record_has_field(&path, &options, "id")
        };
        assert_eq!(
            has("a.jsonl", b"\n{\"id\": 1, \"text\": \"x\"}\n"),
            Some(true)
        );
        assert_eq!(
            has(
                "b.jsonl",
                b"\xef\xbb\xbf{\"text\": \"x\", \"meta\": {\"id\": 1}}\n"
            ),
            Some(false)
        );
        assert_eq!(has("c.jsonl", b"[1]\n"), None);
        assert_eq!(has("d.jsonl", b""), None);
        assert_eq!(has("e.csv", b"\xef\xbb\xbfid,text\n1,x\n"), Some(true));
        assert_eq!(has("f.tsv", b"text\tid\nx\t1\n"), Some(true));
        assert_eq!(has("g.csv", b"text,ident\nx,1\n"), Some(false));
        assert_eq!(has("h.txt", b"id\n"), None);
        assert_eq!(first_record_has_field("-", &options, "id"), None);
        assert_eq!(
            first_record_has_field("/nonexistent.jsonl", &options, "id"),
            None
        );
        // A FIFO or a device is never looked at: its first bytes would be lost to the run.
        assert_eq!(first_record_has_field("/dev/null", &options, "id"), None);
    }
}
