//! `fingerprint` and `hamming` runs: SimHash fingerprints of documents to a file, and every
//! pair of fingerprints in a file within a Hamming distance.
//!
//! Contracts (relied on by outside tooling):
//! - fingerprint rows: `{"id": <id>, "fingerprint": "<hex>"}`, 16 lowercase hex digits for
//!   64 bits, 32 for 128, in input order;
//! - pair rows: `{"a": <id>, "b": <id>, "distance": <d>}`, every pair within the distance
//!   once, `a` before `b` in input order, sorted by `a` then `b`, identical fingerprints
//!   included.

use std::io::BufRead;

use neardup_core::methods::simhash::SimHash;
use neardup_core::registry::{Params, Registered};
use neardup_core::Method;
use neardup_engine::Progress;
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::compression::open_stream;
use crate::error::{Error, Result};
use crate::input::{read_inputs, InputOptions};
use crate::output::{commit_all, write_json_lines, AtomicOutput};
use crate::paths::{check_distinct, check_distinct_named, display_input};
use crate::run::{file_params_read, read_file_params};

/// Fingerprint width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bits {
    /// 64 bits (16 hex digits).
    #[default]
    B64,
    /// 128 bits (32 hex digits); the low half is the 64-bit fingerprint.
    B128,
}

impl Bits {
    /// 64 or 128.
    pub fn count(self) -> u32 {
        match self {
            Bits::B64 => 64,
            Bits::B128 => 128,
        }
    }
}

/// What a `fingerprint` run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FingerprintReport {
    /// Documents fingerprinted.
    pub documents: u64,
    /// Documents with no feature (fingerprint 0).
    pub empty_documents: u64,
    /// Documents with fewer than `min_features` features (their fingerprint is written but
    /// is dominated by chance; `dedup` matches them as exact copies only).
    pub few_features: u64,
    /// Bad records skipped under `on_error = skip`.
    pub skipped: u64,
}

/// Writes the SimHash fingerprint of every document of `inputs` to `output`, with the
/// SimHash parameters `params` (feature and weight options; file parameters are paths).
///
/// # Errors
/// Invalid parameters, unreadable or malformed input, an unwritable output.
pub fn fingerprint(
    inputs: &[String],
    input: &InputOptions,
    output: &str,
    bits: Bits,
    params: &Params,
    progress: &dyn Progress,
) -> Result<FingerprintReport> {
    let mut read: Vec<(Option<String>, &str)> =
        inputs.iter().map(|path| (None, path.as_str())).collect();
    read.extend(file_params_read(SimHash::NAME, params));
    check_distinct_named(&read, &[("`output`", output)])?;
    let params = read_file_params(SimHash::NAME, params)?;
    let mut method = SimHash::from_params(&params)?;
    let mut out = AtomicOutput::create(output)?;
    let corpus = read_inputs(inputs, input)?;
    let texts: Vec<&str> = corpus.records.iter().map(|r| r.text.as_str()).collect();
    if method.learns_from_corpus() {
        let stats = neardup_engine::learn_corpus(
            &method,
            &texts,
            neardup_core::corpus::DEFAULT_CORPUS_MEMORY,
            progress,
        );
        method.learn(&std::sync::Arc::new(stats));
    }
    progress.stage("fingerprint", texts.len() as u64);
    let computed: Vec<(String, usize)> = texts
        .par_iter()
        .map(|text| {
            let (features, _) = method.weighted_features(text);
            let hex = match bits {
                Bits::B64 => format!("{:016x}", neardup_core::simhash::simhash64(&features)),
                Bits::B128 => format!("{:032x}", neardup_core::simhash::simhash128(&features)),
            };
            progress.advance(1);
            (hex, features.len())
        })
        .collect();
    let rows = (corpus.records.iter().zip(&computed))
        .map(|(record, (hex, _))| json!({"id": record.id, "fingerprint": hex}));
    write_json_lines(&mut out, rows)?;
    commit_all(vec![out])?;
    let few = |n: usize| n > 0 && n < method.min_features();
    Ok(FingerprintReport {
        documents: computed.len() as u64,
        empty_documents: computed.iter().filter(|c| c.1 == 0).count() as u64,
        few_features: computed.iter().filter(|c| few(c.1)).count() as u64,
        skipped: corpus.skipped.count,
    })
}

/// Fingerprints read from a file, with their ids.
#[derive(Debug, Clone, PartialEq)]
pub struct FingerprintFile {
    /// The id of each fingerprint: the `id` of a JSON row, or the 1-based line number of a
    /// plain hex line.
    pub ids: Vec<Value>,
    /// The fingerprints (64-bit ones in the low half).
    pub fingerprints: Vec<u128>,
    /// Their width.
    pub bits: Bits,
}

/// Reads a fingerprint file: JSON lines `{"id": ..., "fingerprint": "<hex>"}` (what
/// [`fingerprint`] writes), or plain text with one hex fingerprint per line (id = line
/// number). The format is the first non-blank line's; every fingerprint must have the
/// first one's width (16 or 32 hex digits, an optional `0x` prefix).
///
/// # Errors
/// An unreadable file; a blank line, bad JSON, a missing field, bad hex or a width that
/// differs, naming the line.
pub fn read_fingerprints(path: &str) -> Result<FingerprintFile> {
    let name = display_input(path).to_owned();
    let reader = open_stream(path)?;
    let mut file = FingerprintFile {
        ids: Vec::new(),
        fingerprints: Vec::new(),
        bits: Bits::B64,
    };
    let mut json_rows: Option<bool> = None;
    let mut width: Option<usize> = None;
    for (index, line) in reader.lines().enumerate() {
        let number = index as u64 + 1;
        let line = line.map_err(|e| Error::io(&name, e))?;
        let line = line
            .strip_prefix('\u{feff}')
            .unwrap_or(&line)
            .trim_end_matches('\r');
        let bad = |message: String| Error::input(&name, number, message);
        if line.trim().is_empty() {
            return Err(bad("blank line (expected a fingerprint)".into()));
        }
        let is_json = *json_rows.get_or_insert(line.trim_start().starts_with('{'));
        let (id, hex) = if is_json {
            let row: Value =
                serde_json::from_str(line).map_err(|e| bad(format!("invalid JSON: {e}")))?;
            let id = row
                .get("id")
                .cloned()
                .ok_or_else(|| bad("field \"id\" is missing".into()))?;
            let hex = match row.get("fingerprint") {
                Some(Value::String(hex)) => hex.clone(),
                Some(other) => {
                    return Err(bad(format!(
                        "field \"fingerprint\" is {other}, not a hex string"
                    )))
                }
                None => return Err(bad("field \"fingerprint\" is missing".into())),
            };
            (id, hex)
        } else {
            (json!(number), line.trim().to_owned())
        };
        let digits = hex.strip_prefix("0x").unwrap_or(&hex);
        let expected = *width.get_or_insert(digits.len());
        if digits.len() != expected || !(expected == 16 || expected == 32) {
            return Err(bad(format!(
                "fingerprint {hex:?} has {} hex digits (expected {})",
                digits.len(),
                if expected == 16 || expected == 32 {
                    format!("{expected}, as the first fingerprint")
                } else {
                    "16 for 64 bits or 32 for 128 bits".to_owned()
                }
            )));
        }
        let value = u128::from_str_radix(digits, 16)
            .ok()
            .filter(|_| digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| bad(format!("fingerprint {hex:?} is not hexadecimal")))?;
        file.ids.push(id);
        file.fingerprints.push(value);
    }
    if width == Some(32) {
        file.bits = Bits::B128;
    }
    Ok(file)
}

/// Every pair of `file`'s fingerprints within `max_distance`, as positions `(a, b,
/// distance)`, `a < b`, sorted.
///
/// # Errors
/// A distance beyond the fingerprint width (parameter `max_distance`).
pub fn hamming_pairs(file: &FingerprintFile, max_distance: u32) -> Result<Vec<(u32, u32, u32)>> {
    let bits = file.bits.count();
    if max_distance >= bits {
        return Err(neardup_core::Error::invalid_owned(
            "max_distance".into(),
            format!(
                "{max_distance} (expected 0 to {} for {bits}-bit fingerprints)",
                bits - 1
            ),
        )
        .into());
    }
    let pairs = match file.bits {
        Bits::B64 => {
            let fingerprints: Vec<u64> = file.fingerprints.iter().map(|&fp| fp as u64).collect();
            neardup_index::self_join_64(&fingerprints, max_distance)
        }
        Bits::B128 => {
            neardup_index::self_join_128(&file.fingerprints, max_distance).map_err(|e| {
                neardup_core::Error::invalid_owned("max_distance".into(), e.to_string())
            })?
        }
    };
    Ok(pairs)
}

/// What a `hamming` run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HammingReport {
    /// Fingerprints read.
    pub fingerprints: u64,
    /// Their width.
    pub bits: u32,
    /// Pairs written.
    pub pairs: u64,
}

/// Reads `input` (see [`read_fingerprints`]) and writes every pair within `max_distance` to
/// `output` as `{"a", "b", "distance"}` rows.
///
/// # Errors
/// See [`read_fingerprints`] and [`hamming_pairs`]; an unwritable output.
pub fn hamming(input: &str, output: &str, max_distance: u32) -> Result<HammingReport> {
    check_distinct(&[input], &[("`output`", output)])?;
    let mut out = AtomicOutput::create(output)?;
    let file = read_fingerprints(input)?;
    let pairs = hamming_pairs(&file, max_distance)?;
    let rows = pairs.iter().map(|&(a, b, distance)| {
        json!({"a": file.ids[a as usize], "b": file.ids[b as usize], "distance": distance})
    });
    write_json_lines(&mut out, rows)?;
    commit_all(vec![out])?;
    Ok(HammingReport {
        fingerprints: file.fingerprints.len() as u64,
        bits: file.bits.count(),
        pairs: pairs.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn plain_and_json_files_read_and_join() {
        let dir = tempfile::tempdir().unwrap();
        let plain = write(
            &dir,
            "fp.txt",
            "00000000000000ff\n00000000000000fe\nffffffffffffffff\n00000000000000ff\n",
        );
        let file = read_fingerprints(&plain).unwrap();
        assert_eq!(file.bits, Bits::B64);
        assert_eq!(file.ids, vec![json!(1), json!(2), json!(3), json!(4)]);
        let pairs = hamming_pairs(&file, 1).unwrap();
        assert_eq!(pairs, vec![(0, 1, 1), (0, 3, 0), (1, 3, 1)]);

        let rows = "{\"id\":\"a\",\"fingerprint\":\"000000000000000000000000000000ff\"}\n\
                    {\"id\":\"b\",\"fingerprint\":\"100000000000000000000000000000ff\"}\n";
        let json = write(&dir, "fp.jsonl", rows);
        let file = read_fingerprints(&json).unwrap();
        assert_eq!(file.bits, Bits::B128);
        assert_eq!(hamming_pairs(&file, 1).unwrap(), vec![(0, 1, 1)]);
        assert!(hamming_pairs(&file, 0).unwrap().is_empty());
        assert!(hamming_pairs(&file, 128).is_err());
    }

    #[test]
    fn bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        for (text, line, what) in [
            ("00000000000000ff\n0000000000000zff\n", 2, "not hexadecimal"),
            ("00000000000000ff\n00000000000000fff\n", 2, "17 hex digits"),
            ("00ff\n", 1, "4 hex digits"),
            ("00000000000000ff\n\n00000000000000ff\n", 2, "blank line"),
            (
                "{\"id\":1,\"fingerprint\":\"00000000000000ff\"}\n{\"id\":2}\n",
                2,
                "missing",
            ),
            ("{\"id\":1,\"fingerprint\":5}\n", 1, "not a hex string"),
        ] {
            let path = write(&dir, "bad.txt", text);
            let error = read_fingerprints(&path).unwrap_err().to_string();
            assert!(error.contains(&format!(":{line}:")), "{error}");
            assert!(error.contains(what), "{error}");
        }
    }
}
