//! JSON lines and plain text: the bounded line reader and the parallel line parser.

use std::io::{self, BufRead};

use rayon::prelude::*;
use serde_json::Value;

use super::compression::open_stream;
use super::{display_path, too_long, CorpusReader, Format, Raw, Record};
use crate::error::{Error, Result};

/// Lines of JSONL or text parsed together in one parallel batch.
const BATCH_LINES: usize = 16_384;
/// Bytes of JSONL or text parsed together in one parallel batch.
const BATCH_BYTES: usize = 32 << 20;

/// The size of a line read by [`read_line`].
struct LineSize {
    /// Bytes consumed from the stream, line break included.
    consumed: u64,
    /// Bytes of the line without its `\n` or `\r\n`.
    content: u64,
}

/// Reads the next line into `line` without its `\n` or `\r\n`; `None` at the end of the stream.
///
/// At most `limit + 1` bytes are stored: when [`LineSize::content`] exceeds `limit`, `line`
/// holds only a prefix, and the rest of the line has been skipped.
fn read_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<LineSize>> {
    line.clear();
    let room = limit.saturating_add(1);
    let (mut consumed, mut content, mut last) = (0u64, 0u64, None);
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((consumed > 0).then_some(LineSize { consumed, content }));
        }
        let newline = chunk.iter().position(|&byte| byte == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let stored = part.len().min(room - line.len().min(room));
        line.extend_from_slice(&part[..stored]);
        content += part.len() as u64;
        last = part.last().copied().or(last);
        let used = newline.map_or(part.len(), |at| at + 1);
        consumed += used as u64;
        reader.consume(used);
        if newline.is_some() {
            if last == Some(b'\r') {
                content -= 1;
                if line.len() as u64 == content + 1 {
                    line.pop();
                }
            }
            return Ok(Some(LineSize { consumed, content }));
        }
    }
}

/// A line waiting to be parsed.
struct PendingLine {
    line: u64,
    ordinal: u64,
    bytes: Vec<u8>,
}

/// Lines waiting to be parsed together.
#[derive(Default)]
struct LineBatch {
    lines: Vec<PendingLine>,
    bytes: usize,
}

impl LineBatch {
    /// Adds a line; `true` when the batch is full.
    fn push(&mut self, pending: PendingLine) -> bool {
        self.bytes += pending.bytes.len();
        self.lines.push(pending);
        self.lines.len() >= BATCH_LINES || self.bytes >= BATCH_BYTES
    }

    /// Takes the lines out, leaving the batch empty.
    fn take(&mut self) -> Vec<PendingLine> {
        self.bytes = 0;
        std::mem::take(&mut self.lines)
    }
}

/// What turns lines of one JSONL or text source into records; shared by the parsing threads.
struct LineParser<'a> {
    name: &'a str,
    source: u32,
    format: Format,
    text_field: &'a str,
    id_field: Option<&'a str>,
}

impl LineParser<'_> {
    /// Parses one line into a record.
    fn parse(&self, pending: PendingLine) -> Result<Record> {
        let PendingLine {
            line,
            ordinal,
            bytes,
        } = pending;
        let body = self.utf8(line, &bytes)?;
        let (id, text) = match self.format {
            Format::Jsonl => self.json_fields(line, body)?,
            _ => (None, body.to_owned()),
        };
        Ok(Record {
            id: id.unwrap_or_else(|| Value::from(ordinal)),
            text,
            raw: Raw::Line(bytes),
            source: self.source,
            line,
        })
    }

    /// The line as UTF-8, without the byte order mark of a first line.
    fn utf8<'b>(&self, line: u64, bytes: &'b [u8]) -> Result<&'b str> {
        let body = std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            Error::input(
                self.name,
                line,
                format!("invalid UTF-8 at byte offset {offset}"),
            )
        })?;
        Ok(match line {
            1 => body.strip_prefix('\u{feff}').unwrap_or(body),
            _ => body,
        })
    }

    /// The id (if there is an id field) and the text of a JSON object.
    fn json_fields(&self, line: u64, body: &str) -> Result<(Option<Value>, String)> {
        let error = |message: String| Error::input(self.name, line, message);
        let mut value: Value = serde_json::from_str(body).map_err(|e| error(json_error(&e)))?;
        if !value.is_object() {
            return Err(error(format!(
                "expected a JSON object, found {}",
                describe(&value)
            )));
        }
        let id = match self.id_field {
            Some(field) => Some(json_id(&value, field).map_err(error)?),
            None => None,
        };
        let text = match lookup_mut(&mut value, self.text_field) {
            Some(Value::String(text)) => std::mem::take(text),
            Some(other) => {
                let found = describe(other);
                return Err(error(format!(
                    "field {:?} must be a string, found {found}",
                    self.text_field
                )));
            }
            None => return Err(error(format!("field {:?} is missing", self.text_field))),
        };
        Ok((id, text))
    }
}

/// A serde_json message without its position, which is always line 1 of a one-line document.
fn json_error(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    format!("invalid JSON at column {}: {message}", error.column())
}

/// The id at `field`: a JSON string or number.
fn json_id(value: &Value, field: &str) -> std::result::Result<Value, String> {
    match lookup(value, field) {
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(id.clone()),
        Some(other) => Err(format!(
            "field {field:?} must be a string or a number, found {}",
            describe(other)
        )),
        None => Err(format!("field {field:?} is missing")),
    }
}

/// The value at a dotted path; a top-level key equal to the whole path wins.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    if let Some(found) = value.get(path) {
        return Some(found);
    }
    path.split('.').try_fold(value, |value, key| value.get(key))
}

/// [`lookup`], mutably.
fn lookup_mut<'v>(value: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    if value.get(path).is_some() {
        return value.get_mut(path);
    }
    path.split('.')
        .try_fold(value, |value, key| value.get_mut(key))
}

/// The JSON type of a value and a short preview of it, as in `number 42`.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {}", preview(&value.to_string()))
}

/// At most 40 characters of `text`, with `...` when cut.
fn preview(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

impl CorpusReader<'_> {
    /// Reads a JSONL or text input, parsing its lines in parallel batches.
    pub(super) fn read_lines(&mut self, source: u32, path: &str, format: Format) -> Result<()> {
        let name = display_path(path);
        let parser = LineParser {
            name,
            source,
            format,
            text_field: &self.options.text_field,
            id_field: self.options.id_field.as_deref(),
        };
        let limit = self.options.max_doc_bytes;
        let mut stream = open_stream(path)?;
        let (mut batch, mut line, mut bytes) = (LineBatch::default(), 0, Vec::new());
        while let Some(size) =
            read_line(&mut stream, &mut bytes, limit).map_err(|e| Error::io(name, e))?
        {
            line += 1;
            self.corpus.bytes_read += size.consumed;
            if format == Format::Jsonl && bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let ordinal = self.next_ordinal();
            let bytes = std::mem::take(&mut bytes);
            if size.content > limit as u64 {
                self.parse_batch(&parser, batch.take())?;
                let error = Error::input(name, line, too_long(size.content, limit));
                self.accept(Err(error))?;
            } else if batch.push(PendingLine {
                line,
                ordinal,
                bytes,
            }) {
                self.parse_batch(&parser, batch.take())?;
            }
        }
        self.parse_batch(&parser, batch.take())
    }

    /// Parses a batch of lines in parallel and accepts the results in order.
    fn parse_batch(&mut self, parser: &LineParser<'_>, batch: Vec<PendingLine>) -> Result<()> {
        let parsed: Vec<Result<Record>> = batch
            .into_par_iter()
            .map(|pending| parser.parse(pending))
            .collect();
        parsed
            .into_iter()
            .try_for_each(|outcome| self.accept(outcome))
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use serde_json::json;

    use super::*;
    use crate::input::tests::{error_of, ids, read_one, skip, texts, write_file};
    use crate::input::{InputOptions, OnError};

    #[test]
    fn jsonl_keeps_raw_lines_and_ignores_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\", \"x\": 1}\r\n\n  \n{\"text\":\"b\"}\n{\"text\":\"c\"}";
        let path = write_file(&dir, "in.jsonl", data);
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b", "c"]);
        assert_eq!(ids(&corpus), [json!(1), json!(2), json!(3)]);
        let lines: Vec<u64> = corpus.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 4, 5]);
        assert_eq!(
            corpus.records[0].raw,
            Raw::Line(b"{\"text\": \"a\", \"x\": 1}".to_vec())
        );
        assert_eq!(corpus.bytes_read, data.len() as u64);
        assert_eq!(corpus.sources[0].format, Format::Jsonl);
    }

    #[test]
    fn jsonl_nested_dotted_text_field() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"meta\": {\"body\": \"deep\"}}\n{\"meta.body\": \"literal\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            text_field: "meta.body".to_owned(),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["deep", "literal"]);
    }

    #[test]
    fn jsonl_id_field_numeric_and_string() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"id\": 7, \"text\": \"a\"}\n{\"id\": \"doc-2\", \"text\": \"b\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(ids(&corpus), [json!(7), json!("doc-2")]);
    }

    #[test]
    fn jsonl_id_field_missing_or_wrong_type_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let data =
            b"{\"id\": 1, \"text\": \"a\"}\n{\"text\": \"b\"}\n{\"id\": [1], \"text\": \"c\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            on_error: OnError::Skip,
            ..InputOptions::default()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(corpus.skipped.count, 2);
        assert!(corpus.skipped.first[0].ends_with(":2: field \"id\" is missing"));
        assert!(corpus.skipped.first[1]
            .ends_with(":3: field \"id\" must be a string or a number, found array [1]"));
    }

    #[test]
    fn broken_json_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"\n";
        let path = write_file(&dir, "broken.jsonl", data);
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message
                .contains("broken.jsonl:3: invalid JSON at column 12: EOF while parsing an object"),
            "{message}"
        );
    }

    #[test]
    fn missing_text_field_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", b"{\"text\": \"a\"}\n{\"body\": \"b\"}\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:2: field \"text\" is missing"),
            "{message}"
        );
    }

    #[test]
    fn text_field_of_another_type_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", b"{\"text\": 42}\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:1: field \"text\" must be a string, found number 42"),
            "{message}"
        );
        let path = write_file(&dir, "array.jsonl", b"[1, 2]\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(message.ends_with("array.jsonl:1: expected a JSON object, found array [1,2]"));
    }

    #[test]
    fn invalid_utf8_names_line_and_byte_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(
            &dir,
            "in.jsonl",
            b"{\"text\": \"a\"}\n{\"text\": \"\xff\"}\n",
        );
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.jsonl:2: invalid UTF-8 at byte offset 10"),
            "{message}"
        );
        let path = write_file(&dir, "in.txt", b"fine\nbad \xc3\n");
        let message = error_of(&path, &InputOptions::default());
        assert!(
            message.ends_with("in.txt:2: invalid UTF-8 at byte offset 4"),
            "{message}"
        );
    }

    #[test]
    fn long_line_is_refused_and_the_next_line_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = "x".repeat(10_240).into_bytes();
        data.extend_from_slice(b"\nshort\n");
        let path = write_file(&dir, "in.txt", &data);
        let options = InputOptions {
            max_doc_bytes: 100,
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["short"]);
        assert_eq!(corpus.records[0].id, json!(2));
        assert_eq!(
            corpus.skipped.first,
            [format!(
                "{path}:1: record of 10240 bytes exceeds --max-doc-bytes 100"
            )]
        );
        let options = InputOptions {
            max_doc_bytes: 100,
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(message.ends_with(":1: record of 10240 bytes exceeds --max-doc-bytes 100"));
    }

    #[test]
    fn read_line_stores_at_most_limit_plus_one_bytes() {
        let mut data = vec![b'x'; 10_000];
        data.extend_from_slice(b"\r\nab\r\n\r\nlast\r");
        let mut reader = BufReader::with_capacity(64, &data[..]);
        let mut line = Vec::new();
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!(
            (size.content, size.consumed, line.len()),
            (10_000, 10_002, 101)
        );
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (2, &b"ab"[..]));
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (0, &b""[..]));
        let size = read_line(&mut reader, &mut line, 100).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (5, &b"last\r"[..]));
        assert!(read_line(&mut reader, &mut line, 100).unwrap().is_none());
        let mut exact = BufReader::new(&b"abcd\r\n"[..]);
        let size = read_line(&mut exact, &mut line, 4).unwrap().unwrap();
        assert_eq!((size.content, line.as_slice()), (4, &b"abcd"[..]));
    }

    #[test]
    fn text_lines_are_documents_even_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.txt", "\u{feff}first\n\nthird\r\n".as_bytes());
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["first", "", "third"]);
        assert_eq!(ids(&corpus), [json!(1), json!(2), json!(3)]);
    }
}
