//! JSON lines and plain text: the bounded line reader and the parallel line parser.

use std::io::{self, BufRead};

use rayon::prelude::*;
use serde_json::Value;

use super::{
    display_path, line_check, missing, too_long, too_long_unfinished, Corpus, CorpusReader, Format,
    InputOptions, OnError, Raw, Record, Reread,
};
use crate::compression::open_stream_plain;
use crate::error::{Error, Result};

/// Lines of JSONL or text parsed together in one parallel batch.
const BATCH_LINES: usize = 16_384;
/// Bytes of JSONL or text parsed together in one parallel batch.
const BATCH_BYTES: usize = 32 << 20;

/// The UTF-8 byte order mark, dropped from the start of each input.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// The size of a line read by [`read_line`].
#[derive(Debug, PartialEq, Eq)]
struct LineSize {
    /// Bytes consumed from the stream, line break included.
    consumed: u64,
    /// Bytes of the line without its `\n` or `\r\n` (so far, when not [`complete`]).
    ///
    /// [`complete`]: LineSize::complete
    content: u64,
    /// Whether the line ended with `\r\n`; its `\r` is the last byte stored.
    crlf: bool,
    /// `false` when reading stopped as soon as the line passed the limit, before its end.
    complete: bool,
}

/// Reads the next line into `line` without its `\n` but with the `\r` of a `\r\n`; `None` at
/// the end of the stream.
///
/// At most `limit + 1` bytes are stored: when [`LineSize::content`] exceeds `limit`, `line`
/// holds only a prefix. The rest of such a line is skipped without being stored, or, when
/// `stop_past_limit` is set, not read at all: reading stops within one buffer of the limit,
/// so that an endless line (`/dev/zero`) fails at once.
fn read_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    limit: usize,
    stop_past_limit: bool,
) -> io::Result<Option<LineSize>> {
    line.clear();
    let room = limit.saturating_add(1);
    let (mut consumed, mut length, mut last) = (0u64, 0u64, None);
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            let size = LineSize {
                consumed,
                content: length,
                crlf: false,
                complete: true,
            };
            return Ok((consumed > 0).then_some(size));
        }
        let newline = chunk.iter().position(|&byte| byte == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let stored = part.len().min(room - line.len().min(room));
        line.extend_from_slice(&part[..stored]);
        length += part.len() as u64;
        last = part.last().copied().or(last);
        let used = newline.map_or(part.len(), |at| at + 1);
        consumed += used as u64;
        reader.consume(used);
        if newline.is_some() {
            let crlf = last == Some(b'\r');
            return Ok(Some(LineSize {
                consumed,
                content: length - u64::from(crlf),
                crlf,
                complete: true,
            }));
        }
        if stop_past_limit && length > room as u64 {
            return Ok(Some(LineSize {
                consumed,
                content: length,
                crlf: false,
                complete: false,
            }));
        }
    }
}

/// A line waiting to be parsed.
struct PendingLine {
    line: u64,
    ordinal: u64,
    /// The line as read, with the `\r` of a `\r\n` (written back unchanged).
    bytes: Vec<u8>,
    /// Whether `bytes` ends with the `\r` of a `\r\n`, which is not part of the record.
    crlf: bool,
    /// Where the line starts in its file, when it is left there ([`Raw::At`]).
    offset: Option<u64>,
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
            crlf,
            offset,
        } = pending;
        let body = self.utf8(line, &bytes[..bytes.len() - usize::from(crlf)])?;
        let (id, text) = match self.format {
            Format::Jsonl => self.json_fields(line, body)?,
            _ => (None, body.to_owned()),
        };
        let raw = match offset {
            Some(offset) => Raw::At {
                offset,
                len: bytes.len() as u64,
                check: line_check(&bytes),
            },
            None => Raw::Line(bytes),
        };
        Ok(Record {
            id: id.unwrap_or_else(|| Value::from(ordinal)),
            text,
            raw,
            source: self.source,
            line,
        })
    }

    /// The line as UTF-8.
    fn utf8<'b>(&self, line: u64, bytes: &'b [u8]) -> Result<&'b str> {
        std::str::from_utf8(bytes).map_err(|e| {
            let offset = e.valid_up_to();
            Error::input(
                self.name,
                line,
                format!("invalid UTF-8 at byte offset {offset}"),
            )
        })
    }

    /// The id (if there is an id field) and the text of a JSON object.
    ///
    /// Top-level fields are picked as the object is parsed, the others skipped without
    /// being built, and a repeated top-level key refused ([`picked_fields`]); dotted paths,
    /// and any line the quick parse refuses, take the whole parse below, which also words
    /// every error.
    fn json_fields(&self, line: u64, body: &str) -> Result<(Option<Value>, String)> {
        let error = |message: String| Error::input(self.name, line, message);
        match picked_fields(body, self.text_field, self.id_field) {
            Picked::Fields(id, text) => return Ok((id, text)),
            Picked::Repeated(key) => {
                return Err(error(format!(
                    "the key {key:?} appears twice in the object; give each key once"
                )))
            }
            Picked::Other => {}
        }
        let mut value: Value =
            serde_json::from_str(body).map_err(|e| error(json_error(&e, body)))?;
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
            None => return Err(error(missing(self.text_field, &value, "text_field"))),
        };
        Ok((id, text))
    }
}

/// What [`picked_fields`] found in a line.
#[derive(Debug, PartialEq)]
enum Picked {
    /// The id (with an id field) and the text.
    Fields(Option<Value>, String),
    /// A top-level key the object repeats: the line is malformed (a reader keeping the
    /// first value and one keeping the last would disagree).
    Repeated(String),
    /// Anything else (invalid JSON, not an object, a field missing or of another type, a
    /// dotted field): the caller's full parse says what is wrong, or finds the field.
    Other,
}

/// The text (a string) and the id (a string or a number, when `id_field` is given) of a JSON
/// object's top-level fields `text_field` and `id_field`; the other fields are checked and
/// skipped, not built, and every top-level key is compared with the others.
fn picked_fields(body: &str, text_field: &str, id_field: Option<&str>) -> Picked {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    use std::borrow::Cow;
    use std::cell::RefCell;

    struct Pick<'f, 'r> {
        text_field: &'f str,
        id_field: Option<&'f str>,
        repeated: &'r RefCell<Option<String>>,
    }
    type Found = (Option<Value>, Option<Value>);
    impl<'de> Visitor<'de> for Pick<'_, '_> {
        type Value = Found;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Found, A::Error> {
            let (mut text, mut id) = (None, None);
            let mut keys: Vec<Cow<'de, str>> = Vec::with_capacity(8);
            while let Some(Key(key)) = map.next_key()? {
                if keys.contains(&key) {
                    *self.repeated.borrow_mut() = Some(key.into_owned());
                    return Err(serde::de::Error::custom("a repeated key"));
                }
                let is_text = key == self.text_field;
                let is_id = self.id_field == Some(&*key);
                keys.push(key);
                match (is_text, is_id) {
                    (true, true) => {
                        let value: Value = map.next_value()?;
                        id = Some(value.clone());
                        text = Some(value);
                    }
                    (true, false) => text = Some(map.next_value()?),
                    (false, true) => id = Some(map.next_value()?),
                    (false, false) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok((text, id))
        }
    }
    /// A key, borrowed from the line unless it holds an escape.
    struct Key<'de>(Cow<'de, str>);
    impl<'de> serde::Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Key<'de>, D::Error> {
            struct Text;
            impl<'de> Visitor<'de> for Text {
                type Value = Cow<'de, str>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(
                    self,
                    key: &'de str,
                ) -> std::result::Result<Self::Value, E> {
                    Ok(Cow::Borrowed(key))
                }
                fn visit_str<E>(self, key: &str) -> std::result::Result<Self::Value, E> {
                    Ok(Cow::Owned(key.to_owned()))
                }
            }
            d.deserialize_str(Text).map(Key)
        }
    }
    impl<'de> DeserializeSeed<'de> for Pick<'_, '_> {
        type Value = Found;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Found, D::Error> {
            d.deserialize_map(self)
        }
    }
    let repeated = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(body);
    let picked = Pick {
        text_field,
        id_field,
        repeated: &repeated,
    }
    .deserialize(&mut deserializer)
    .and_then(|found| deserializer.end().map(|()| found));
    if let Some(key) = repeated.into_inner() {
        return Picked::Repeated(key);
    }
    let Ok((Some(Value::String(text)), id)) = picked else {
        return Picked::Other;
    };
    match (id_field, id) {
        (None, _) => Picked::Fields(None, text),
        (Some(_), Some(id @ (Value::String(_) | Value::Number(_)))) => {
            Picked::Fields(Some(id), text)
        }
        (Some(_), _) => Picked::Other,
    }
}

/// A serde_json message without its position, which is always line 1 of a one-line `body`.
///
/// serde_json reports a lone UTF-16 surrogate escape (`"\ud800"`, which no UTF-8 string can
/// hold) as `unexpected end of hex escape` or `lone leading surrogate`, even for a trailing
/// one; such errors are told as what they are, at the column of the escape.
fn json_error(error: &serde_json::Error, body: &str) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    let surrogate_error = message.starts_with("unexpected end of hex escape")
        || message.starts_with("lone leading surrogate");
    if let Some(at) = surrogate_error
        .then(|| lone_surrogate(body, error.column()))
        .flatten()
    {
        let escape = &body[at..at + 6];
        return format!(
            "invalid JSON at column {}: lone surrogate escape {escape}: a \\u escape in \
             d800-dfff must be a high surrogate (d800-dbff) followed by a low one (dc00-dfff)",
            at + 1
        );
    }
    format!("invalid JSON at column {}: {message}", error.column())
}

/// The byte offset of the last unpaired surrogate escape (`\ud800` to `\udfff`) starting
/// before byte column `column` (1-based) of a JSON text.
fn lone_surrogate(body: &str, column: usize) -> Option<usize> {
    let bytes = body.as_bytes();
    let escape_at = |at: usize| -> Option<u32> {
        let hex = bytes.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let (mut at, mut lone) = (0, None);
    while at < column.min(bytes.len()) {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match escape_at(at) {
            Some(0xd800..=0xdbff) if matches!(escape_at(at + 6), Some(0xdc00..=0xdfff)) => {
                at += 12;
            }
            Some(0xd800..=0xdfff) => {
                lone = Some(at);
                at += 6;
            }
            Some(_) => at += 6,
            None => at += 2,
        }
    }
    lone
}

/// The id at `field`: a JSON string or number.
fn json_id(value: &Value, field: &str) -> std::result::Result<Value, String> {
    match lookup(value, field) {
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(id.clone()),
        Some(other) => Err(format!(
            "field {field:?} must be a string or a number, found {}",
            describe(other)
        )),
        None => Err(missing(field, value, "id_field")),
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
pub(crate) fn lookup_mut<'v>(value: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    if value.get(path).is_some() {
        return value.get_mut(path);
    }
    path.split('.')
        .try_fold(value, |value, key| value.get_mut(key))
}

/// The JSON type of a value and a short preview of it, as in `number 42`.
pub fn describe(value: &Value) -> String {
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

/// The text of `record` of `corpus` again, from its line: held ([`Raw::Line`]) or read at its
/// place in its plain file ([`Raw::At`], checked as the writer checks it), parsed as the
/// reader parsed it. `None` for records of other formats (CSV, Parquet), whose text is only
/// read again with the whole input, and for a line that changed since it was read.
pub fn text_again(corpus: &Corpus, record: &Record, options: &InputOptions) -> Option<String> {
    let source = corpus.sources.get(record.source as usize)?;
    let bytes = match &record.raw {
        Raw::Line(bytes) => bytes.clone(),
        Raw::At { offset, len, check } => {
            let reread = source.reread.as_ref()?;
            if Reread::of(&reread.opened).as_ref() != Some(reread) || offset + len > reread.len {
                return None;
            }
            let mut file = std::fs::File::open(&reread.opened).ok()?;
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(*offset)).ok()?;
            let mut bytes = vec![0; usize::try_from(*len).ok()?];
            std::io::Read::read_exact(&mut file, &mut bytes).ok()?;
            (line_check(&bytes) == *check).then_some(bytes)?
        }
        _ => return None,
    };
    let parser = LineParser {
        name: &source.path,
        source: record.source,
        format: source.format,
        text_field: &options.text_field,
        id_field: options.id_field.as_deref(),
    };
    let crlf = bytes.ends_with(b"\r");
    let pending = PendingLine {
        line: record.line,
        ordinal: 0,
        bytes,
        crlf,
        offset: None,
    };
    parser.parse(pending).ok().map(|again| again.text)
}

impl CorpusReader<'_> {
    /// Reads a JSONL or text input, parsing its lines in parallel batches; returns what the
    /// file was when its lines are left in it (see [`Raw::At`]).
    pub(super) fn read_lines(
        &mut self,
        source: u32,
        path: &str,
        format: Format,
    ) -> Result<Option<Reread>> {
        let name = display_path(path);
        let parser = LineParser {
            name,
            source,
            format,
            text_field: &self.options.text_field,
            id_field: self.options.id_field.as_deref(),
        };
        let limit = self.options.read_limit();
        let stop_past_limit = self.options.on_error == OnError::Fail;
        let opened = self.opened(source, path).to_owned();
        // The file as it is before its first byte is read: a change made while it is read
        // shows as a different size or time when it is read again.
        let reread = match self.leave_lines {
            true => Reread::of(&opened),
            false => None,
        };
        let (mut stream, plain) = open_stream_plain(&opened)?;
        let reread = reread.filter(|_| plain);
        let (mut batch, mut line, mut bytes) = (LineBatch::default(), 0, Vec::new());
        let mut at = 0u64;
        while let Some(mut size) = read_line(&mut stream, &mut bytes, limit.bytes, stop_past_limit)
            .map_err(|e| Error::io(name, e))?
        {
            line += 1;
            self.corpus.bytes_read += size.consumed;
            let mut start = at;
            at += size.consumed;
            if line == 1 && bytes.starts_with(BOM) {
                bytes.drain(..BOM.len());
                size.content -= BOM.len() as u64;
                start += BOM.len() as u64;
            }
            if format == Format::Jsonl && bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let ordinal = self.next_ordinal();
            let bytes = std::mem::take(&mut bytes);
            if size.content > limit.bytes as u64 {
                self.parse_batch(&parser, batch.take())?;
                let message = match size.complete {
                    true => too_long(size.content, limit),
                    false => too_long_unfinished(size.content, limit),
                };
                self.accept(Err(Error::input(name, line, message)))?;
            } else if batch.push(PendingLine {
                line,
                ordinal,
                bytes,
                crlf: size.crlf,
                offset: reread.is_some().then_some(start),
            }) {
                self.parse_batch(&parser, batch.take())?;
            }
        }
        self.parse_batch(&parser, batch.take())?;
        Ok(reread)
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
    use crate::input::{read_inputs, InputOptions, OnError};

    /// The quick pick of top-level fields gives what the whole parse gives, or declines.
    #[test]
    fn picked_fields_agree_with_the_whole_parse() {
        let lines = [
            r#"{"id": 7, "text": "plain"}"#,
            r#"{"text": "esc \"q\" \u4e2d\n", "id": "a\u0062", "x": {"text": 1, "id": [1, {"a": null}]}}"#,
            r#"{"id": 12345678901234567890123, "text": "big id", "z": 1.5e300}"#,
            r#"{"id": 1.0, "text": "float id"}"#,
            r#"{"text": "first", "text": "last", "id": 1, "id": "two"}"#,
            r#"{"te\u0078t": "escaped key", "id": 3}"#,
            r#"{"text": "", "id": ""}"#,
            r#"{"text": 5, "id": 1}"#,
            r#"{"text": "t", "id": null}"#,
            r#"{"text": "t", "id": [1]}"#,
            r#"{"text": "t"}"#,
            r#"{"id": 1}"#,
            r#"[1, 2]"#,
            r#""text""#,
            r#"{"text": "t", "id": 1} x"#,
            r#"{"text": "t", "id": 1,}"#,
            r#"{"text": "t\ud800", "id": 1}"#,
            r#"{"text": "t", "text": 1, "id": 1}"#,
        ];
        let parser = LineParser {
            name: "in.jsonl",
            source: 0,
            format: Format::Jsonl,
            text_field: "text",
            id_field: Some("id"),
        };
        let (mut picked, mut repeated) = (0, 0);
        for line in lines {
            let whole = parser.json_fields(1, line);
            match picked_fields(line, "text", Some("id")) {
                Picked::Fields(id, text) => {
                    picked += 1;
                    assert_eq!(
                        Some((id.clone(), text)),
                        whole.as_ref().ok().cloned(),
                        "{line}"
                    );
                    // The same text and id as the Value path, numbers as written.
                    let value: Value = serde_json::from_str(line).unwrap();
                    assert_eq!(id.unwrap().to_string(), value["id"].to_string(), "{line}");
                }
                Picked::Repeated(key) => {
                    repeated += 1;
                    let message = whole.unwrap_err().to_string();
                    let expected = format!("in.jsonl:1: the key {key:?} appears twice");
                    assert!(message.starts_with(&expected), "{message}");
                }
                Picked::Other => assert!(
                    whole.is_err(),
                    "declined a line the whole parse takes: {line}"
                ),
            }
        }
        assert_eq!(picked, 6, "the well-formed lines are picked");
        assert_eq!(repeated, 2, "the lines that repeat a key are refused");
        assert_eq!(
            picked_fields(r#"{"text": "t", "id": 1}"#, "text", None),
            Picked::Fields(None, "t".to_owned())
        );
    }

    #[test]
    fn a_repeated_key_is_refused_wherever_the_text_is() {
        // Issue 44: {"text":"a","text":"b"} was read as "b" and written back as it was.
        for (line, text_field, key) in [
            (r#"{"text": "a", "text": "b"}"#, "text", "text"),
            (r#"{"meta": 1, "text": "a", "meta": 2}"#, "text", "meta"),
            (r#"{"d": {"text": "a"}, "d": {"text": "b"}}"#, "d.text", "d"),
            (r#"{"text": "a", "t\u0065xt": "b"}"#, "text", "text"),
        ] {
            let parser = LineParser {
                name: "in.jsonl",
                source: 0,
                format: Format::Jsonl,
                text_field,
                id_field: None,
            };
            let message = parser.json_fields(3, line).unwrap_err().to_string();
            let expected = format!("in.jsonl:3: the key {key:?} appears twice in the object");
            assert!(message.starts_with(&expected), "{line}: {message}");
        }
    }

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
            Raw::Line(b"{\"text\": \"a\", \"x\": 1}\r".to_vec())
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
        assert!(corpus.skipped.first[0].ends_with(
            ":2: field \"id\" is missing; the object has \"text\": give the one to read with `id_field`"
        ));
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
            message.ends_with(
                "in.jsonl:2: field \"text\" is missing; the object has \"body\": give the one to \
                 read with `text_field`"
            ),
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
                "{path}:1: record of 10240 bytes exceeds `max_doc_bytes` 100"
            )]
        );
        let options = InputOptions {
            max_doc_bytes: 100,
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(message.ends_with(":1: record of 10240 bytes exceeds `max_doc_bytes` 100"));
    }

    /// Reads one line of `reader` with limit 100, not stopping past the limit.
    fn next_line(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> Option<LineSize> {
        read_line(reader, line, 100, false).unwrap()
    }

    #[test]
    fn read_line_stores_at_most_limit_plus_one_bytes() {
        let mut data = vec![b'x'; 10_000];
        data.extend_from_slice(b"\r\nab\r\n\r\nlast\r");
        let mut reader = BufReader::with_capacity(64, &data[..]);
        let mut line = Vec::new();
        let size = next_line(&mut reader, &mut line).unwrap();
        assert_eq!(
            (size.content, size.consumed, line.len(), size.complete),
            (10_000, 10_002, 101, true)
        );
        let size = next_line(&mut reader, &mut line).unwrap();
        assert_eq!(
            (size.content, size.crlf, &line[..]),
            (2, true, &b"ab\r"[..])
        );
        let size = next_line(&mut reader, &mut line).unwrap();
        assert_eq!((size.content, &line[..]), (0, &b"\r"[..]));
        let size = next_line(&mut reader, &mut line).unwrap();
        assert_eq!(
            (size.content, size.crlf, &line[..]),
            (5, false, &b"last\r"[..])
        );
        assert!(next_line(&mut reader, &mut line).is_none());
        let mut exact = BufReader::new(&b"abcd\r\n"[..]);
        let size = read_line(&mut exact, &mut line, 4, true).unwrap().unwrap();
        assert_eq!((size.content, &line[..]), (4, &b"abcd\r"[..]));
    }

    /// An endless stream of `x`.
    struct Endless;

    impl io::Read for Endless {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            buffer.fill(b'x');
            Ok(buffer.len())
        }
    }

    #[test]
    fn max_doc_bytes_stops_reading_an_endless_line() {
        let mut reader = BufReader::with_capacity(64, Endless);
        let mut line = Vec::new();
        let size = read_line(&mut reader, &mut line, 1000, true)
            .unwrap()
            .unwrap();
        assert!(!size.complete && size.content > 1000 && size.content <= 1064);
        assert_eq!(line.len(), 1001);
    }

    #[cfg(unix)]
    #[test]
    fn max_doc_bytes_fails_on_dev_zero() {
        let options = InputOptions {
            format: Some(Format::Text),
            max_doc_bytes: 1 << 20,
            ..InputOptions::default()
        };
        let message = error_of("/dev/zero", &options);
        assert!(
            message.starts_with("/dev/zero:1: record exceeds `max_doc_bytes` 1048576"),
            "{message}"
        );
    }

    #[test]
    fn crlf_lines_keep_their_carriage_return_for_output() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"{\"text\": \"a\"}\r\n{\"text\": \"b\\r\"}\n";
        let path = write_file(&dir, "in.jsonl", data);
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b\r"]);
        let raws: Vec<&Raw> = corpus.records.iter().map(|r| &r.raw).collect();
        assert_eq!(
            raws,
            [
                &Raw::Line(b"{\"text\": \"a\"}\r".to_vec()),
                &Raw::Line(b"{\"text\": \"b\\r\"}".to_vec()),
            ]
        );
        let path = write_file(&dir, "in.txt", b"one\r\ntwo\r\r\n");
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["one", "two\r"]);
    }

    #[test]
    fn bom_is_dropped_from_each_input_for_parsing_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_file(&dir, "a.jsonl", b"\xef\xbb\xbf{\"text\": \"a\"}\n");
        let second = write_file(&dir, "b.jsonl", b"\xef\xbb\xbf{\"text\": \"b\"}\n");
        let blank = write_file(&dir, "c.jsonl", b"\xef\xbb\xbf\n{\"text\": \"c\"}\n");
        let corpus = read_inputs(&[first, second, blank], &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b", "c"]);
        for record in &corpus.records {
            let Raw::Line(bytes) = &record.raw else {
                panic!("not a line")
            };
            assert!(bytes.starts_with(b"{"), "{bytes:?}");
        }
    }

    #[test]
    fn lone_surrogate_escape_is_named_with_its_column() {
        let dir = tempfile::tempdir().unwrap();
        let data = "{\"text\":\"\\ud800\"}\n{\"text\":\"ok \\udc00 x\"}\n{\"text\":\"\\ud83d\\ude00 \\ud800\\u0041\"}\n";
        let path = write_file(&dir, "in.jsonl", data.as_bytes());
        let corpus = read_one(&path, &skip()).unwrap();
        assert!(corpus.records.is_empty());
        let expected = [
            ":1: invalid JSON at column 10: lone surrogate escape \\ud800: ",
            ":2: invalid JSON at column 13: lone surrogate escape \\udc00: ",
            ":3: invalid JSON at column 23: lone surrogate escape \\ud800: ",
        ];
        for (message, expected) in corpus.skipped.first.iter().zip(expected) {
            assert!(message.contains(expected), "{message}");
        }
        let paired = write_file(
            &dir,
            "ok.jsonl",
            "{\"text\":\"\\ud83d\\ude00\"}\n".as_bytes(),
        );
        let corpus = read_one(&paired, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["\u{1f600}"]);
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
