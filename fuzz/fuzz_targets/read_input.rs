//! Reads arbitrary bytes as one input: the first byte picks the format, the compression
//! (none, gzip, zstd, each possibly cut short), the id field and the error mode; the rest is
//! the content. No input may panic, and no record may pass `--max-doc-bytes`.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use neardup_pipeline::input::{read_inputs, Format, InputOptions, OnError};

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, content)) = data.split_first() else {
        return;
    };
    let formats = [Format::Jsonl, Format::Text, Format::Csv, Format::Tsv];
    let format = formats[usize::from(selector & 3)];
    let mut bytes = match (selector >> 2) & 3 {
        1 => gzip(content),
        2 => zstd::encode_all(content, 1).expect("zstd into memory"),
        _ => content.to_vec(),
    };
    if selector & 0x40 != 0 {
        bytes.truncate(bytes.len() / 2);
    }
    let mut file = tempfile::NamedTempFile::new().expect("temporary file");
    file.write_all(&bytes).expect("write the input");
    let options = InputOptions {
        format: Some(format),
        id_field: (selector & 0x10 != 0).then(|| "id".to_owned()),
        on_error: if selector & 0x20 != 0 {
            OnError::Skip
        } else {
            OnError::Fail
        },
        max_doc_bytes: LIMIT,
        ..InputOptions::default()
    };
    let path = file.path().to_string_lossy().into_owned();
    if let Ok(corpus) = read_inputs(&[path], &options) {
        assert!(corpus
            .records
            .iter()
            .all(|record| record.text.len() <= LIMIT));
    }
});

fn gzip(content: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(content).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}
