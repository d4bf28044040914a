//! Property-based fuzzing of the readers (JSONL, CSV, TSV, text; plain, gzip, zstd, truncated)
//! and of the normaliser with its HTML stripper: whatever the bytes, no panic; bad records are
//! errors (or counted skips), never a crash or an unbounded record.
//!
//! Each property runs a fixed number of cases, so the suite stays fast enough for every CI
//! run. That the HTML stripper's work is linear is pinned by a byte counter in
//! `neardup-core`'s `html` tests, not by timing here; the cases below include the inputs that
//! used to be quadratic, at sizes where a quadratic pass would still finish.

use std::io::Write;

use neardup_core::normalize::{NormalizeOptions, Normalizer};
use neardup_pipeline::input::{read_inputs, Corpus, Format, InputOptions, OnError, Raw};
use neardup_pipeline::Error;
use proptest::prelude::*;

/// Cases per property.
const CASES: u32 = 512;
/// The `--max-doc-bytes` of the fuzzed reads: small, so that long lines are common.
const LIMIT: usize = 200;

/// How a generated input is stored.
#[derive(Debug, Clone, Copy)]
enum Packing {
    Plain,
    Gzip,
    Zstd,
    /// Compressed, then cut: the reader sees a damaged stream.
    TruncatedGzip(usize),
    TruncatedZstd(usize),
}

fn packing() -> impl Strategy<Value = Packing> {
    prop_oneof![
        3 => Just(Packing::Plain),
        1 => Just(Packing::Gzip),
        1 => Just(Packing::Zstd),
        1 => any::<usize>().prop_map(Packing::TruncatedGzip),
        1 => any::<usize>().prop_map(Packing::TruncatedZstd),
    ]
}

fn pack(data: &[u8], packing: Packing) -> Vec<u8> {
    let gzip = || {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    };
    let zstd = || zstd::encode_all(data, 1).unwrap();
    let cut = |mut bytes: Vec<u8>, at: usize| {
        bytes.truncate(at % (bytes.len() + 1));
        bytes
    };
    match packing {
        Packing::Plain => data.to_vec(),
        Packing::Gzip => gzip(),
        Packing::Zstd => zstd(),
        Packing::TruncatedGzip(at) => cut(gzip(), at),
        Packing::TruncatedZstd(at) => cut(zstd(), at),
    }
}

/// Bytes made of pieces that trouble line, JSON and CSV parsers.
fn adversarial_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\"".to_vec()),
        Just(b"\"\"".to_vec()),
        Just(b",".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\xef\xbb\xbf".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"\xe4\xb8".to_vec()),
        Just("中文".as_bytes().to_vec()),
        Just(b"{\"text\":\"".to_vec()),
        Just(b"{\"id\":".to_vec()),
        Just(b"\"}".to_vec()),
        Just(b"\\ud800".to_vec()),
        Just(b"\\udc00".to_vec()),
        Just(b"\\u".to_vec()),
        Just(b"12345678901234567890123".to_vec()),
        Just(b"1e2".to_vec()),
        Just(b"-0".to_vec()),
        Just(b"null".to_vec()),
        Just(b"id,text\n".to_vec()),
        Just(b"id\ttext\n".to_vec()),
        (1usize..64).prop_map(|depth| b"[".repeat(depth)),
        (1usize..200).prop_map(|depth| b"{\"a\":".repeat(depth)),
        (LIMIT - 2..LIMIT * 3).prop_map(|n| vec![b'x'; n]),
        "[a-z <>&;]{0,12}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..16),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// Raw bytes of any kind: arbitrary, or adversarial pieces.
fn input_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2048),
        adversarial_bytes(),
    ]
}

fn format() -> impl Strategy<Value = Format> {
    prop_oneof![
        Just(Format::Jsonl),
        Just(Format::Text),
        Just(Format::Csv),
        Just(Format::Tsv),
    ]
}

/// Reads `bytes` stored as `packing` in `format`.
fn read(
    bytes: &[u8],
    packing: Packing,
    format: Format,
    on_error: OnError,
    id_field: Option<&str>,
) -> neardup_pipeline::Result<Corpus> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input");
    std::fs::write(&path, pack(bytes, packing)).unwrap();
    let options = InputOptions {
        format: Some(format),
        id_field: id_field.map(str::to_owned),
        on_error,
        max_doc_bytes: LIMIT,
        ..InputOptions::default()
    };
    read_inputs(&[path.to_string_lossy().into_owned()], &options)
}

/// What every successful read promises.
fn check_corpus(corpus: &Corpus) {
    for record in &corpus.records {
        assert!(record.text.len() <= LIMIT, "a record passed the limit");
        assert!(record.line >= 1);
        if let Raw::Line(bytes) = &record.raw {
            assert!(bytes.len() <= LIMIT + 1, "a raw line passed the limit");
            assert!(!bytes.contains(&b'\n'));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn readers_never_panic(
        bytes in input_bytes(),
        packing in packing(),
        format in format(),
        skip in any::<bool>(),
        with_ids in any::<bool>(),
    ) {
        let on_error = if skip { OnError::Skip } else { OnError::Fail };
        let id_field = with_ids.then_some("id");
        match read(&bytes, packing, format, on_error, id_field) {
            Ok(corpus) => check_corpus(&corpus),
            Err(Error::Input { .. }) => prop_assert_eq!(on_error, OnError::Fail),
            Err(_) => {}
        }
    }

    #[test]
    fn text_lines_come_back_byte_for_byte(
        lines in proptest::collection::vec(("[a-z <>\"中\r]{0,30}", any::<bool>()), 0..20),
    ) {
        let mut data = String::new();
        for (line, crlf) in &lines {
            // A line's own last `\r` would merge with its `\n` into a CRLF.
            data.push_str(line.trim_end_matches('\r'));
            data.push_str(if *crlf { "\r\n" } else { "\n" });
        }
        let corpus = read(data.as_bytes(), Packing::Plain, Format::Text, OnError::Fail, None)
            .unwrap();
        let mut written = Vec::new();
        for record in &corpus.records {
            if let Raw::Line(bytes) = &record.raw {
                written.extend_from_slice(bytes);
                written.push(b'\n');
            }
        }
        prop_assert_eq!(written, data.as_bytes());
    }

    #[test]
    fn unterminated_csv_quotes_are_reported_or_skipped(
        rows in proptest::collection::vec("[a-z\",]{0,8}", 1..10),
    ) {
        let data = format!("text\n{}\n", rows.join("\n"));
        let failed = read(data.as_bytes(), Packing::Plain, Format::Csv, OnError::Fail, None);
        let skipped = read(data.as_bytes(), Packing::Plain, Format::Csv, OnError::Skip, None);
        match (failed, skipped) {
            (Ok(all), Ok(some)) => {
                prop_assert_eq!(all.records.len(), some.records.len());
                prop_assert_eq!(some.skipped.count, 0);
            }
            (Err(Error::Input { .. }), Ok(some)) => prop_assert!(some.skipped.count > 0),
            (Err(_), Err(_)) => {}
            (failed, skipped) => prop_assert!(false, "{:?} / {:?}", failed.err(), skipped.err()),
        }
    }

    #[test]
    fn normaliser_never_panics(text in any::<String>(), flags in any::<[bool; 3]>()) {
        let normalizer = Normalizer::new(NormalizeOptions {
            lowercase: flags[0],
            strip_punctuation: flags[1],
            strip_html: flags[2],
            ..NormalizeOptions::default()
        });
        let out = normalizer.normalize(&text);
        if flags[1] {
            prop_assert!(!out.starts_with(' ') && !out.ends_with(' ') && !out.contains("  "));
        }
    }

    #[test]
    fn html_stripping_never_panics_and_keeps_plain_text(html in html_like()) {
        let options = |strip_html| NormalizeOptions {
            strip_html,
            ..NormalizeOptions::default()
        };
        let stripped = Normalizer::new(options(true)).normalize(&html);
        if !html.contains(['<', '&']) {
            prop_assert_eq!(stripped, Normalizer::new(options(false)).normalize(&html));
        }
    }
}

/// Strings made of markup pieces, closed and unclosed, nested and not.
fn html_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<".to_owned()),
        Just(">".to_owned()),
        Just("<a href='x'>".to_owned()),
        Just("</a>".to_owned()),
        Just("<!--".to_owned()),
        Just("-->".to_owned()),
        Just("<script>".to_owned()),
        Just("</SCRIPT>".to_owned()),
        Just("<style".to_owned()),
        Just("<!doctype html>".to_owned()),
        Just("<?xml".to_owned()),
        Just("&amp;".to_owned()),
        Just("&#x4e2d;".to_owned()),
        Just("&#1114112;".to_owned()),
        Just("&".to_owned()),
        Just(" x < 5 and y > 3 ".to_owned()),
        (1usize..2000).prop_map(|n| "<".repeat(n)),
        (1usize..500).prop_map(|n| "<a".repeat(n)),
        (1usize..500).prop_map(|n| "<div>".repeat(n)),
        "[a-zA-Z0-9 中文]{0,10}",
        any::<String>(),
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
}
