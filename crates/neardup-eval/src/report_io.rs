//! The I/O of `neardup report`: read the run's inputs, clusters file and statistics, build the
//! page with [`crate::report`] and write it atomically.
//!
//! The clusters file has one row `{"id", "cluster", "duplicate_of", "similarity"}` per input
//! document. Its ids are matched to the inputs' ids by JSON value (`"7"` is not `7`), so the
//! report must read the inputs with the same `--text-field`, `--id-field` and format as the
//! dedup run; a row's id is first compared with the record at the same position, which is where
//! the dedup run put it. A document belongs to the cluster of the document named by `cluster`,
//! its representative. The clusters file may be gzip- or zstd-compressed.

use std::collections::HashMap;
use std::io::BufRead;

use neardup_core::cluster::Assignment;
use serde_json::Value;

use crate::report::{build_html, Document, PageStats, ReportData, ReportOptions};
use neardup_pipeline::input::{read_inputs, InputOptions, OnError, Record};
use neardup_pipeline::output::AtomicOutput;
use neardup_pipeline::paths::check_distinct_named;
use neardup_pipeline::rows::ClusterRow;
use neardup_pipeline::stats::RunStats;
use neardup_pipeline::{Error, Result};

/// Everything one report needs.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// The dedup run's inputs.
    pub inputs: Vec<String>,
    /// How the dedup run read them. Malformed records are skipped whatever this says: a run
    /// that skipped them left them out of its clusters file too.
    pub input: InputOptions,
    /// The dedup run's clusters file.
    pub clusters: String,
    /// The dedup run's statistics file, if any.
    pub stats: Option<String>,
    /// Where the HTML goes (`-` for standard output).
    pub output: String,
    /// How much the page shows.
    pub options: ReportOptions,
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportSummary {
    /// Documents read.
    pub documents: usize,
    /// Size of the page in bytes.
    pub bytes: usize,
}

/// Writes the report page of one dedup run.
///
/// # Errors
///
/// [`Error::Output`] if the output cannot be written (checked before anything is read);
/// [`Error::Io`] if a file cannot be read; [`Error::Input`] for a malformed clusters row, a
/// row whose id or cluster is not an input id, or a clusters file with another number of rows
/// than the inputs have documents; [`Error::Format`] for a statistics file that is not a JSON
/// object.
pub fn write_report(config: &ReportConfig) -> Result<ReportSummary> {
    let mut inputs: Vec<(Option<&str>, &str)> = config
        .inputs
        .iter()
        .map(|path| (None, path.as_str()))
        .collect();
    inputs.push((Some("`clusters`"), &config.clusters));
    inputs.extend(config.stats.as_deref().map(|path| (Some("`stats`"), path)));
    check_distinct_named(&inputs, &[("`output`", &config.output)])?;
    let mut out = AtomicOutput::create(&config.output)?;
    let stats = config.stats.as_deref().map(read_stats).transpose()?;
    let options = InputOptions {
        on_error: OnError::Skip,
        ..config.input.clone()
    };
    let corpus = read_inputs(&config.inputs, &options)?;
    let assignment = read_clusters(&config.clusters, &corpus.records)?;
    let documents: Vec<Document> = corpus
        .records
        .iter()
        .map(|record| Document {
            id: &record.id,
            text: &record.text,
        })
        .collect();
    let data = ReportData {
        inputs: &config.inputs,
        documents: &documents,
        assignment: &assignment,
        stats: stats.as_ref(),
    };
    let html = build_html(&data, &config.options);
    out.writer()
        .write_all(html.as_bytes())
        .map_err(|e| Error::output(out.path(), e))?;
    out.commit()?;
    Ok(ReportSummary {
        documents: documents.len(),
        bytes: html.len(),
    })
}

/// Reads a `neardup dedup --stats` file through [`RunStats`], its contract.
fn read_stats(path: &str) -> Result<PageStats> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Error::format(path, format!("not a statistics file: {e}")))?;
    if !value.is_object() {
        return Err(Error::format(
            path,
            "not a statistics file: expected a JSON object",
        ));
    }
    let stats = RunStats::from_json(value)
        .map_err(|e| Error::format(path, format!("not a statistics file: {e}")))?;
    Ok(PageStats::from_stats(&stats))
}

/// Reads a clusters file written for `records` into an assignment of those records.
fn read_clusters(path: &str, records: &[Record]) -> Result<Assignment> {
    let mut assignment = Assignment::all_kept(records.len());
    let mut ids = IdIndex::new(records);
    let mut rows = 0usize;
    for (index, line) in neardup_pipeline::input::open_stream(path)?
        .lines()
        .enumerate()
    {
        let line_number = index as u64 + 1;
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let row: ClusterRow = serde_json::from_str(&line)
            .map_err(|e| Error::input(path, line_number, format!("not a clusters row: {e}")))?;
        let find = |ids: &mut IdIndex, field: &str, id: &Value, position: usize| {
            ids.find(id, position).ok_or_else(|| {
                let message = format!(
                    "{field} {id} is not the id of any input document; {}",
                    id_hint(records, id)
                );
                Error::input(path, line_number, message)
            })
        };
        let document = find(&mut ids, "id", &row.id.to_value(), rows)?;
        let cluster = find(&mut ids, "cluster", &row.cluster.to_value(), rows)?;
        if cluster != document {
            assignment.duplicate_of[document as usize] = Some(cluster);
            assignment.similarity.set(document as usize, row.similarity);
        }
        rows += 1;
    }
    if rows != records.len() {
        let message = format!(
            "{rows} rows for {} input documents; give the report the inputs and the \
             --text-field, --id-field and --format of the dedup run",
            records.len()
        );
        return Err(Error::format(path, message));
    }
    Ok(assignment)
}

/// What to do when the clusters file names an id the inputs lack: most often the dedup run
/// read its ids from a field (`--id-field id`) and the report was not told.
fn id_hint(records: &[Record], id: &Value) -> String {
    let numbered = records
        .iter()
        .enumerate()
        .take(3)
        .all(|(at, record)| record.id.as_u64() == Some(at as u64 + 1));
    if numbered && !records.is_empty() && id.is_string() {
        format!(
            "the inputs were read without `id_field`, so their ids are the record numbers 1 \
             to {}: give the report the `id_field` the dedup run was given",
            records.len()
        )
    } else {
        "give the report the inputs of the dedup run, read with its `id_field`, `text_field` \
         and `format`"
            .to_owned()
    }
}

/// Finds records by id: first at the expected position, then through a map built on first
/// need (ids are keyed by their JSON text, so `"7"` and `7` differ).
struct IdIndex<'a> {
    records: &'a [Record],
    by_id: Option<HashMap<String, u32>>,
}

impl<'a> IdIndex<'a> {
    fn new(records: &'a [Record]) -> IdIndex<'a> {
        IdIndex {
            records,
            by_id: None,
        }
    }

    /// The position of the record with `id`, trying `expected` first; the first such record
    /// when ids repeat.
    fn find(&mut self, id: &Value, expected: usize) -> Option<u32> {
        if self.records.get(expected).is_some_and(|r| r.id == *id) {
            return u32::try_from(expected).ok();
        }
        let records = self.records;
        let by_id = self.by_id.get_or_insert_with(|| {
            let mut map = HashMap::with_capacity(records.len());
            for (position, record) in records.iter().enumerate().rev() {
                map.insert(record.id.to_string(), position as u32);
            }
            map
        });
        by_id.get(&id.to_string()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::write_file;

    fn records(dir: &tempfile::TempDir) -> Vec<Record> {
        let input = write_file(
            dir,
            "in.jsonl",
            b"{\"id\": \"a\", \"text\": \"one\"}\n{\"id\": 7, \"text\": \"two\"}\n\
              {\"id\": \"7\", \"text\": \"three\"}\n",
        );
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        };
        read_inputs(&[input], &options).unwrap().records
    }

    #[test]
    fn ids_are_matched_by_json_value_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let records = records(&dir);
        let clusters = write_file(
            &dir,
            "clusters.jsonl",
            b"{\"id\": \"7\", \"cluster\": 7, \"duplicate_of\": 7, \"similarity\": 0.8}\n\
              {\"id\": \"a\", \"cluster\": \"a\", \"duplicate_of\": null, \"similarity\": null}\n\
              {\"id\": 7, \"cluster\": 7, \"duplicate_of\": null, \"similarity\": null}\n",
        );
        let assignment = read_clusters(&clusters, &records).unwrap();
        assert_eq!(assignment.duplicate_of, [None, None, Some(1)]);
        assert_eq!(assignment.similarity.to_vec(), [None, None, Some(0.8)]);
    }

    #[test]
    fn unknown_ids_and_bad_rows_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let records = records(&dir);
        let unknown = write_file(
            &dir,
            "unknown.jsonl",
            b"{\"id\": \"a\", \"cluster\": \"b\"}\n",
        );
        let message = read_clusters(&unknown, &records).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "{unknown}:1: cluster \"b\" is not the id of any input document; give the \
                 report the inputs of the dedup run, read with its `id_field`, `text_field` and \
                 `format`"
            )
        );
        // Issue 46: the README's next step failed here with no hint; inputs read without
        // an id field have record numbers for ids.
        let numbered = read_inputs(
            &[dir.path().join("in.jsonl").display().to_string()],
            &InputOptions::default(),
        );
        let message = read_clusters(&unknown, &numbered.unwrap().records)
            .unwrap_err()
            .to_string();
        assert!(
            message.ends_with(
                "the inputs were read without `id_field`, so their ids are the record numbers \
                 1 to 3: give the report the `id_field` the dedup run was given"
            ),
            "{message}"
        );
        let bad = write_file(
            &dir,
            "bad.jsonl",
            b"{\"id\": \"a\", \"cluster\": \"a\"}\n[1]\n",
        );
        let message = read_clusters(&bad, &records).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{bad}:2: not a clusters row")),
            "{message}"
        );
    }

    #[test]
    fn row_count_must_match_the_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let records = records(&dir);
        let short = write_file(
            &dir,
            "short.jsonl",
            b"{\"id\": \"a\", \"cluster\": \"a\"}\n",
        );
        let message = read_clusters(&short, &records).unwrap_err().to_string();
        assert!(
            message.contains("1 rows for 3 input documents"),
            "{message}"
        );
    }

    #[test]
    fn stats_must_be_an_object() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "stats.json", b"[1]");
        assert!(matches!(read_stats(&path), Err(Error::Format { .. })));
    }
}
