//! Following a CSV or TSV stream as the csv crate parses it, for what the crate does not report.
//!
//! The csv crate ends a quoted field that is never closed at the end of the input, silently:
//! one stray `"` turns the rest of the file into one field. And it buffers a whole row before
//! handing it over, so a row without end (`/dev/zero`) is read for ever. [`RowTracker`] sits
//! between the stream and the csv reader and runs the same state machine as csv-core (RFC 4180
//! quoting with doubled quotes, `\r`, `\n` or `\r\n` ending rows, a leading UTF-8 byte order
//! mark ignored) to tell where an unclosed quote opened, and to stop reading as soon as a row's
//! fields pass the size limit.

use std::fmt;
use std::io::{self, Read};

/// The UTF-8 byte order mark, which the csv crate drops from the start of the input.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Where the parser is, as in csv-core's state machine (states that only pass through merged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between rows (blank lines are skipped).
    StartRecord,
    /// At the start of a field after a delimiter.
    StartField,
    /// In a field that did not start with a quote.
    Unquoted,
    /// In a quoted field.
    Quoted,
    /// Just after a quote in a quoted field: the field's end, or the first half of `""`.
    QuoteInQuoted,
}

/// A row whose fields passed the size limit, carried through the csv crate as an I/O error.
#[derive(Debug)]
pub(super) struct RowTooLong {
    /// The line where the row starts.
    pub(super) line: u64,
    /// The bytes of its fields read before reading stopped.
    pub(super) read: u64,
}

impl fmt::Display for RowTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "row at line {} is too long", self.line)
    }
}

impl std::error::Error for RowTooLong {}

/// A reader that passes a CSV or TSV stream through unchanged while following its quoting.
pub(super) struct RowTracker<R> {
    inner: R,
    delimiter: u8,
    quoting: bool,
    /// Field bytes a row may have before reading stops; `u64::MAX` for no limit.
    limit: u64,
    state: State,
    /// The current 1-based line.
    line: u64,
    /// The line where the current row starts.
    row_line: u64,
    /// The field bytes of the current row so far.
    row_bytes: u64,
    /// The line of the quote that opened the current quoted field.
    quote_line: u64,
    /// How many bytes of a byte order mark the stream started with; `None` once past them.
    bom: Option<usize>,
    /// Whether the inner stream has ended.
    ended: bool,
    /// An error to return from the next read.
    pending: Option<io::Error>,
}

impl<R: Read> RowTracker<R> {
    /// Tracks `inner`, a stream of rows separated by `delimiter`, quoted if `quoting`; reading
    /// fails with a [`RowTooLong`] as soon as a row's fields pass `limit` bytes, if given.
    pub(super) fn new(inner: R, delimiter: u8, quoting: bool, limit: Option<usize>) -> Self {
        RowTracker {
            inner,
            delimiter,
            quoting,
            limit: limit.map_or(u64::MAX, |limit| limit as u64),
            state: State::StartRecord,
            line: 1,
            row_line: 1,
            row_bytes: 0,
            quote_line: 1,
            bom: Some(0),
            ended: false,
            pending: None,
        }
    }

    /// The line of a quote still open at the end of the input, once the input has ended.
    pub(super) fn unclosed_quote(&self) -> Option<u64> {
        (self.ended && self.state == State::Quoted).then_some(self.quote_line)
    }

    /// Follows one byte, holding back a leading byte order mark; `true` when the row has
    /// passed the limit.
    fn feed(&mut self, byte: u8) -> bool {
        let Some(matched) = self.bom else {
            return self.step(byte);
        };
        if BOM[matched] == byte {
            self.bom = (matched + 1 < BOM.len()).then_some(matched + 1);
            return false;
        }
        self.bom = None;
        let held = BOM[..matched]
            .iter()
            .fold(false, |passed, &b| self.step(b) | passed);
        self.step(byte) | held
    }

    /// Follows one byte; `true` when the row has passed the limit.
    fn step(&mut self, byte: u8) -> bool {
        let ends_row = byte == b'\r' || byte == b'\n';
        let quote = self.quoting && byte == b'"';
        let (state, copied) = match self.state {
            State::StartRecord if ends_row => (State::StartRecord, false),
            State::StartRecord | State::StartField => {
                if self.state == State::StartRecord {
                    (self.row_line, self.row_bytes) = (self.line, 0);
                }
                if quote {
                    self.quote_line = self.line;
                    (State::Quoted, false)
                } else {
                    self.after_field(byte, ends_row)
                }
            }
            State::Unquoted => self.after_field(byte, ends_row),
            State::Quoted if quote => (State::QuoteInQuoted, false),
            State::Quoted => (State::Quoted, true),
            State::QuoteInQuoted if quote => (State::Quoted, true),
            State::QuoteInQuoted => self.after_field(byte, ends_row),
        };
        self.state = state;
        self.line += u64::from(byte == b'\n');
        self.row_bytes += u64::from(copied);
        self.row_bytes > self.limit
    }

    /// The state after `byte` read outside quotes, and whether it is field content.
    fn after_field(&self, byte: u8, ends_row: bool) -> (State, bool) {
        if byte == self.delimiter {
            (State::StartField, false)
        } else if ends_row {
            (State::StartRecord, false)
        } else {
            (State::Unquoted, true)
        }
    }
}

impl<R: Read> Read for RowTracker<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        let read = self.inner.read(buffer)?;
        self.ended = read == 0;
        for (index, &byte) in buffer[..read].iter().enumerate() {
            if self.feed(byte) {
                // Hand over the bytes before this one, so that earlier rows are parsed first.
                let error = io::Error::other(RowTooLong {
                    line: self.row_line,
                    read: self.row_bytes,
                });
                if index == 0 {
                    return Err(error);
                }
                self.pending = Some(error);
                return Ok(index);
            }
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `data` through a tracker (quoted CSV); the tracker and what came through.
    fn track(data: &[u8], limit: Option<usize>) -> (RowTracker<&[u8]>, io::Result<Vec<u8>>) {
        let mut tracker = RowTracker::new(data, b',', true, limit);
        let mut out = Vec::new();
        let result = io::copy(&mut tracker, &mut out).map(|_| out);
        (tracker, result)
    }

    #[test]
    fn unclosed_quote_is_found_with_its_line() {
        let cases: [(&[u8], Option<u64>); 8] = [
            (b"a,b\n1,\"x\"\n", None),
            (b"a,b\n1,\"x\"\"y\"\n2,z", None),
            (b"a,b\n1,\"x\n\n2,z\n", Some(2)),
            (b"a,b\n1,x\"y\n2,\"", Some(3)),
            (b"a,b\n\"1\",\"two\nlines\"\"\n", Some(2)),
            (b"\xef\xbb\xbf\"a,b\n", Some(1)),
            (b"\xef\xbb\"a,b\n", None),
            (b"a\r\r\n\"b", Some(2)),
        ];
        for (data, expected) in cases {
            let (tracker, result) = track(data, None);
            assert_eq!(result.unwrap(), data);
            assert_eq!(tracker.unclosed_quote(), expected, "{data:?}");
        }
    }

    #[test]
    fn tsv_quotes_are_text() {
        let mut tracker = RowTracker::new(&b"a\tb\n\"x\ty\n"[..], b'\t', false, None);
        io::copy(&mut tracker, &mut io::sink()).unwrap();
        assert_eq!(tracker.unclosed_quote(), None);
    }

    #[test]
    fn reading_stops_when_a_row_passes_the_limit() {
        let (_, result) = track(b"id,text\n1,\"abc\"\"\"\n2,abcdefg\n", Some(6));
        let error = result.unwrap_err();
        let too_long = error.get_ref().unwrap().downcast_ref::<RowTooLong>();
        let too_long = too_long.unwrap();
        assert_eq!((too_long.line, too_long.read), (3, 7));
    }
}
