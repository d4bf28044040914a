//! `fingerprint` and `hamming` runs: SimHash fingerprints of documents to a file, and every
//! pair of fingerprints in a file within a Hamming distance.
//!
//! Contracts (relied on by outside tooling):
//! - fingerprint rows: `{"id": <id>, "fingerprint": "<hex>"}`, 16 lowercase hex digits for
//!   64 bits, 32 for 128, in input order;
//! - pair rows: `{"a": <id>, "b": <id>, "distance": <d>}`, every pair within the distance
//!   once, `a` before `b` in input order, sorted by `a` then `b`, identical fingerprints
//!   included;
//! - with a groups file (`hamming --groups`), identical fingerprints are written compactly:
//!   one row `{"id": <id>, "group": <id of the first fingerprint equal to it>}` per
//!   fingerprint, in input order, and the pair rows name each group once, by that first id
//!   (pairs of distinct fingerprints only).
//!
//! A `hamming` run holds the pairs of distinct fingerprints (at most its pair budget,
//! `max_pairs`) and streams the rest: identical fingerprints are grouped first, so 100,000
//! copies of one fingerprint cost a group, not 5 x 10^9 pairs in memory. A run whose answer
//! exceeds the budget is refused before anything is written, naming the count and the way
//! out (`groups`, or a larger `max_pairs`).

use std::io::BufRead;

use neardup_core::methods::simhash::SimHash;
use neardup_core::registry::{Params, Registered};
use neardup_core::Method;
use neardup_engine::Progress;
use rayon::prelude::*;
use serde_json::Value;

use crate::compression::open_stream;
use crate::error::{Error, Result};
use crate::input::{read_inputs, InputOptions};
use crate::output::{commit_all, write_json_lines, AtomicOutput};
use crate::paths::{check_distinct, check_distinct_named, display_input};
use crate::rows::{FingerprintRow, GroupRow, PairRow};
use crate::run::{file_params_read, read_file_params};

mod groups;
use groups::{Expanded, Identical};

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
    let rows = (corpus.records.iter().zip(&computed)).map(|(record, (hex, _))| FingerprintRow {
        id: record.id.clone().into(),
        fingerprint: hex.clone(),
    });
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
            (Value::from(number), line.trim().to_owned())
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
    if json_rows == Some(true) {
        check_unique_ids(&name, &file.ids)?;
    }
    Ok(file)
}

/// Refuses an id given twice (line `i + 1` holds `ids[i]`), naming the first repeat in file
/// order and the line it repeats. Ids are compared as JSON values (`1` and `"1"` differ).
fn check_unique_ids(name: &str, ids: &[Value]) -> Result<()> {
    let text = |id: &Value| id.to_string();
    let mut hashed: Vec<(u64, u32)> = (ids.par_iter().enumerate())
        .map(|(line, id)| (neardup_core::hash::hash64(text(id).as_bytes()), line as u32))
        .collect();
    hashed.par_sort_unstable();
    // (repeat, first) with the earliest repeat; equal hashes are compared by their ids.
    let mut found: Option<(u32, u32)> = None;
    for run in hashed
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|run| run.len() > 1)
    {
        for (at, &(_, line)) in run.iter().enumerate().skip(1) {
            let same = run[..at]
                .iter()
                .find(|e| ids[e.1 as usize] == ids[line as usize]);
            if let Some(&(_, first)) = same {
                if found.is_none_or(|(repeat, _)| line < repeat) {
                    found = Some((line, first));
                }
                break;
            }
        }
    }
    match found {
        Some((repeat, first)) => Err(Error::input(
            name,
            u64::from(repeat) + 1,
            format!(
                "id {} repeats the id of line {} (ids must be unique: pairs name fingerprints \
                 by id)",
                ids[repeat as usize],
                first + 1
            ),
        )),
        None => Ok(()),
    }
}

/// Every pair of `file`'s fingerprints within `max_distance`, as positions `(a, b,
/// distance)`, `a < b`, sorted, all held in memory: the reference for small files. A
/// [`hamming`] run groups identical fingerprints and keeps a pair budget instead.
///
/// # Errors
/// A distance beyond the fingerprint width (parameter `max_distance`).
pub fn hamming_pairs(file: &FingerprintFile, max_distance: u32) -> Result<Vec<(u32, u32, u32)>> {
    let bits = file.bits.count();
    if max_distance >= bits {
        return Err(max_distance_error(max_distance, bits));
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

/// Pairs a `hamming` run writes at most by default, whatever the number of fingerprints
/// (see [`default_max_pairs`]).
pub const MIN_PAIR_BUDGET: u64 = 10_000_000;

/// The default pair budget of a `hamming` run over `fingerprints` fingerprints: `dedup`'s
/// candidate budget (32 a document), and at least [`MIN_PAIR_BUDGET`].
pub fn default_max_pairs(fingerprints: usize) -> u64 {
    let per_fingerprint = neardup_index::DEFAULT_CANDIDATE_BUDGET as u64;
    (fingerprints as u64)
        .saturating_mul(per_fingerprint)
        .max(MIN_PAIR_BUDGET)
}

/// What a `hamming` run is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HammingJob {
    /// The fingerprint file (see [`read_fingerprints`]).
    pub input: String,
    /// The pairs file.
    pub output: String,
    /// The largest distance of a pair.
    pub max_distance: u32,
    /// Where to write identical fingerprints as groups (see the module docs); the pairs
    /// file then names each group once.
    pub groups: Option<String>,
    /// The most pairs the run may write (and hold: the pairs of distinct fingerprints);
    /// `None`: [`default_max_pairs`].
    pub max_pairs: Option<u64>,
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
    /// Groups of identical fingerprints (two or more).
    pub groups: u64,
}

/// Reads `job.input` (see [`read_fingerprints`]) and writes every pair within
/// `job.max_distance` to `job.output` as `{"a", "b", "distance"}` rows, in bounded memory:
/// identical fingerprints are grouped, the distinct ones joined (holding at most the pair
/// budget), and the pairs of the groups streamed in order (or, with `job.groups`, the
/// groups written one row a fingerprint and the pairs named by group).
///
/// # Errors
/// See [`read_fingerprints`]; a distance beyond the fingerprint width (parameter
/// `max_distance`); more pairs than the budget (parameter `max_pairs`), before anything is
/// written; an unwritable output.
pub fn hamming(job: &HammingJob) -> Result<HammingReport> {
    let mut outputs = vec![("`output`", job.output.as_str())];
    outputs.extend(job.groups.as_deref().map(|path| ("`groups`", path)));
    check_distinct(&[job.input.as_str()], &outputs)?;
    let mut out = AtomicOutput::create(&job.output)?;
    let mut groups_out = job
        .groups
        .as_deref()
        .map(AtomicOutput::create)
        .transpose()?;
    let file = read_fingerprints(&job.input)?;
    let n = file.fingerprints.len();
    let max_pairs = job.max_pairs.unwrap_or_else(|| default_max_pairs(n));
    let identical = Identical::of(&file.fingerprints);
    let leader_pairs = leader_pairs(&file, &identical, job.max_distance, max_pairs)?;
    let ids = &file.ids;
    let pairs = match groups_out.as_mut() {
        Some(groups) => {
            let rows = (leader_pairs.iter()).map(|&(a, b, distance)| {
                let (a, b) = (identical.leader_of_group(a), identical.leader_of_group(b));
                distance_row(&ids[a as usize], &ids[b as usize], distance)
            });
            write_json_lines(&mut out, rows)?;
            let rows = (0..n).map(|x| {
                let leader = identical.leader_of(x as u32) as usize;
                GroupRow {
                    id: ids[x].clone().into(),
                    group: ids[leader].clone().into(),
                }
            });
            write_json_lines(groups, rows)?;
            leader_pairs.len() as u64
        }
        None => {
            let total = identical.expanded_pairs(&leader_pairs);
            if total > u128::from(max_pairs) {
                return Err(over_budget(total, job.max_distance, max_pairs, &identical));
            }
            let expanded = Expanded::new(&identical, &leader_pairs);
            let rows = (0..n as u32).flat_map(|x| {
                let partners = expanded.partners(x);
                partners.into_iter().map(move |(y, distance)| {
                    distance_row(&ids[x as usize], &ids[y as usize], distance)
                })
            });
            write_json_lines(&mut out, rows)?;
            total as u64
        }
    };
    let mut finished = vec![out];
    finished.extend(groups_out);
    commit_all(finished)?;
    Ok(HammingReport {
        fingerprints: n as u64,
        bits: file.bits.count(),
        pairs,
        groups: identical.repeated_groups(),
    })
}

/// The pair row of `hamming`: two ids and their distance.
fn distance_row(a: &Value, b: &Value, distance: u32) -> PairRow {
    PairRow {
        a: a.into(),
        b: b.into(),
        similarity: None,
        distance: Some(distance),
    }
}

/// The pairs of distinct fingerprints within `max_distance`, as `(group, group,
/// distance)` (groups numbered by their first position), at most `max_pairs` of them.
fn leader_pairs(
    file: &FingerprintFile,
    identical: &Identical,
    max_distance: u32,
    max_pairs: u64,
) -> Result<Vec<(u32, u32, u32)>> {
    let bits = file.bits.count();
    if max_distance >= bits {
        return Err(max_distance_error(max_distance, bits));
    }
    let distinct: Vec<u128> = (identical.leaders.iter())
        .map(|&leader| file.fingerprints[leader as usize])
        .collect();
    let joined = match file.bits {
        Bits::B64 => {
            let distinct: Vec<u64> = distinct.iter().map(|&fp| fp as u64).collect();
            neardup_index::self_join_64_within(&distinct, max_distance, max_pairs)
        }
        Bits::B128 => neardup_index::self_join_128_within(&distinct, max_distance, max_pairs)
            .map_err(|e| {
                neardup_core::Error::invalid_owned("max_distance".into(), e.to_string())
            })?,
    };
    joined.ok_or_else(|| {
        neardup_core::Error::invalid_owned(
            "max_pairs".into(),
            format!(
                "{max_pairs}: more than {max_pairs} pairs of distinct fingerprints are within \
                 distance {max_distance} (the pair budget; the run stopped before writing \
                 anything): lower `max_distance`, or raise `max_pairs`"
            ),
        )
        .into()
    })
}

fn max_distance_error(max_distance: u32, bits: u32) -> Error {
    neardup_core::Error::invalid_owned(
        "max_distance".into(),
        format!(
            "{max_distance} (expected 0 to {} for {bits}-bit fingerprints)",
            bits - 1
        ),
    )
    .into()
}

/// The refusal of a run whose pairs, identical fingerprints included, exceed the budget.
fn over_budget(total: u128, max_distance: u32, max_pairs: u64, identical: &Identical) -> Error {
    neardup_core::Error::invalid_owned(
        "max_pairs".into(),
        format!(
            "{max_pairs}: {total} pairs are within distance {max_distance}, more than the pair \
             budget (the largest group of identical fingerprints has {} members; the run \
             stopped before writing anything): write identical fingerprints as groups with \
             `groups` FILE (one row a fingerprint; the pairs then name each group once), or \
             raise `max_pairs`",
            identical.largest_group()
        ),
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    fn job(dir: &tempfile::TempDir, input: &str, max_distance: u32) -> HammingJob {
        HammingJob {
            input: input.to_owned(),
            output: dir.path().join("pairs.jsonl").to_str().unwrap().to_owned(),
            max_distance,
            groups: None,
            max_pairs: None,
        }
    }

    fn rows(path: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Fingerprints with many repeats and near ones: `copies` of each of a few values.
    fn repeated(copies: usize) -> String {
        let values = [0x00ffu64, 0x00fe, 0x0ff0, 0xffff_0000, 0x00ff];
        let mut text = String::new();
        for i in 0..copies * values.len() {
            let value = values[(i * 7) % values.len()] ^ u64::from(i % 3 == 0) << 40;
            text.push_str(&format!("{value:016x}\n"));
        }
        text
    }

    #[test]
    fn streamed_pairs_equal_the_held_ones() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(&dir, "fp.txt", &repeated(20));
        let file = read_fingerprints(&input).unwrap();
        for k in [0, 1, 2, 9, 40] {
            let job = job(&dir, &input, k);
            let report = hamming(&job).unwrap();
            let expected: Vec<Value> = (hamming_pairs(&file, k).unwrap().iter())
                .map(|&(a, b, d)| json!({"a": file.ids[a as usize], "b": file.ids[b as usize], "distance": d}))
                .collect();
            assert_eq!(rows(&job.output), expected, "k {k}");
            assert_eq!(report.pairs, expected.len() as u64);
        }
    }

    #[test]
    fn groups_name_identical_fingerprints_once() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(&dir, "fp.txt", &repeated(20));
        let file = read_fingerprints(&input).unwrap();
        let groups = dir.path().join("groups.jsonl").to_str().unwrap().to_owned();
        let job = HammingJob {
            groups: Some(groups.clone()),
            ..job(&dir, &input, 2)
        };
        let report = hamming(&job).unwrap();
        // One row a fingerprint, naming the first equal one.
        let group_rows = rows(&groups);
        assert_eq!(group_rows.len(), file.ids.len());
        for (x, row) in group_rows.iter().enumerate() {
            let first = (0..=x)
                .find(|&y| file.fingerprints[y] == file.fingerprints[x])
                .unwrap();
            assert_eq!(row, &json!({"id": file.ids[x], "group": file.ids[first]}));
        }
        // Pairs of distinct fingerprints only, by their groups' first ids: expanding them
        // with the groups gives every pair.
        let pairs = rows(&job.output);
        assert_eq!(report.pairs, pairs.len() as u64);
        assert!(pairs.iter().all(|p| p["distance"].as_u64() != Some(0)));
        let size = |id: &Value| group_rows.iter().filter(|r| &r["group"] == id).count();
        let within: usize = (group_rows.iter().filter(|r| r["id"] == r["group"]))
            .map(|r| size(&r["id"]) * (size(&r["id"]) - 1) / 2)
            .sum();
        let between: usize = pairs.iter().map(|p| size(&p["a"]) * size(&p["b"])).sum();
        assert_eq!(within + between, hamming_pairs(&file, 2).unwrap().len());
        let mut distinct = file.fingerprints.clone();
        distinct.sort_unstable();
        let repeated = distinct.chunk_by(|x, y| x == y).filter(|run| run.len() > 1);
        assert_eq!(report.groups, repeated.count() as u64);
    }

    /// Issue 28, item 5: 100,000 identical fingerprints at distance 0 gathered 5 x 10^9
    /// pairs (a 6 GB allocation) and aborted, leaving the temporary output.
    #[test]
    fn identical_fingerprints_over_the_pair_budget_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(&dir, "fp.txt", &"00000000000000ff\n".repeat(2000));
        let identical = HammingJob {
            max_pairs: Some(100_000),
            ..job(&dir, &input, 0)
        };
        let error = hamming(&identical).unwrap_err().to_string();
        assert!(error.contains("1999000 pairs"), "{error}");
        assert!(
            error.contains("`groups`") && error.contains("`max_pairs`"),
            "{error}"
        );
        // Nothing written, nothing left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        // As groups: one row a fingerprint, no pair.
        let groups = dir.path().join("groups.jsonl").to_str().unwrap().to_owned();
        let report = hamming(&HammingJob {
            groups: Some(groups.clone()),
            ..identical
        })
        .unwrap();
        assert_eq!((report.pairs, report.groups), (0, 1));
        assert_eq!(rows(&groups).len(), 2000);
        // Distinct fingerprints over the budget stop the join itself.
        let distinct: String = (0..2000u64)
            .map(|i| format!("{:016x}\n", i << 50 | 1))
            .collect();
        let input = write(&dir, "near.txt", &distinct);
        let near = HammingJob {
            max_pairs: Some(1000),
            ..job(&dir, &input, 63)
        };
        let error = hamming(&near).unwrap_err().to_string();
        assert!(
            error.contains("more than 1000 pairs of distinct"),
            "{error}"
        );
    }

    #[test]
    fn a_repeated_id_is_refused_naming_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let rows = "{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\"}\n\
                    {\"id\":1,\"fingerprint\":\"00000000000000ff\"}\n\
                    {\"id\":\"1\",\"fingerprint\":\"00000000000000fe\"}\n\
                    {\"id\":\"b\",\"fingerprint\":\"00000000000000fe\"}\n\
                    {\"id\":\"a\",\"fingerprint\":\"00000000000000fe\"}\n\
                    {\"id\":1,\"fingerprint\":\"00000000000000fe\"}\n";
        let path = write(&dir, "fp.jsonl", rows);
        let error = read_fingerprints(&path).unwrap_err().to_string();
        assert!(error.contains("fp.jsonl:5:"), "{error}");
        assert!(
            error.contains("id \"a\" repeats the id of line 1"),
            "{error}"
        );
        // Numbers and strings differ; plain files number their lines.
        let path = write(
            &dir,
            "fp.jsonl",
            &rows.lines().take(4).collect::<Vec<_>>().join("\n"),
        );
        assert!(read_fingerprints(&path).is_ok());
        let plain = write(&dir, "fp.txt", &"00000000000000ff\n".repeat(3));
        assert!(read_fingerprints(&plain).is_ok());
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
