//! Reading the inputs of `neardup eval`: the ground truth and the clusters file of
//! `neardup dedup`, into the dense form that [`crate::eval`] scores.
//!
//! # Overview
//!
//! Both files are JSON lines (gzip or zstd recognised by their first bytes; `-` is standard
//! input); blank lines are skipped. The ground truth comes in one of three shapes
//! ([`TruthFormat`]), told apart by the fields of its first row unless
//! [`EvalOptions::truth_format`] names one:
//!
//! - `clusters`: `{"id": .., "cluster": .., "category": ..}`, one row per document; documents
//!   with the same `cluster` are duplicates of each other. `category` is optional: a string
//!   (such as an edit type) or null.
//! - `pairs`: `{"a": .., "b": .., "label": ..}`, one row per labelled pair. A boolean label is
//!   the answer; a numeric one marks duplicates when it equals
//!   [`EvalOptions::positive_label`].
//! - `sohu`: `{"sentence1": .., "sentence2": .., "label": ..}`, the Sohu text-matching files.
//!   The row carries no ids: the pair on row `i` (0-based, blank lines not counted) is
//!   documents `2i+1` and `2i+2`, as JSON numbers. These are the ids `neardup dedup` gives
//!   (without `--id-field`) when each row's two texts are written one after the other as
//!   records, for example with `jq -c '{text: .sentence1}, {text: .sentence2}'`. Their labels
//!   are 0, 3 and 5, so give a positive label of 5.
//!
//! The prediction is the clusters file of `neardup dedup`: rows `{"id", "cluster", ...}`
//! (other fields are ignored). A truth document missing from it is a predicted singleton; a
//! row whose id is not in the truth is ignored and counted.
//!
//! Ids and cluster labels are JSON strings or numbers compared by their JSON text: the number
//! `3` and the string `"3"` are different ids (and so are `3` and `3.0`). An id found twice in
//! a clusters truth or in the prediction is an error naming both lines.
//!
//! Memory is one hash-map entry per distinct id and a few bytes per document; everything else
//! is counting.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::BufRead;

use serde_json::{Map, Value};

use crate::eval::{
    cluster_metrics, pair_metrics, ClusterTruth, LabelledPair, Metrics, PairTruth, Report,
    TruthFormat,
};
use neardup_pipeline::input::{describe, display_path};
use neardup_pipeline::rows::ClusterRow;
use neardup_pipeline::{Error, Result};
use serde::Deserialize;

/// How many missing ids a [`Report`] lists.
const MISSING_SHOWN: usize = 5;

/// How to read the ground truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalOptions {
    /// The truth's shape; `None` detects it from the first row's fields.
    pub truth_format: Option<TruthFormat>,
    /// The numeric pair label that marks duplicates (default 1).
    pub positive_label: f64,
}

impl Default for EvalOptions {
    fn default() -> EvalOptions {
        EvalOptions {
            truth_format: None,
            positive_label: 1.0,
        }
    }
}

/// Reads the truth at `truth_path` and the clusters file at `predicted_path` and scores the
/// one against the other.
///
/// # Errors
///
/// [`Error::Io`] if a file cannot be read, [`Error::Input`] (naming the line and the field)
/// for a broken row, a missing or mistyped field or a repeated id, [`Error::Format`] if the
/// truth is empty or its format cannot be told.
pub fn evaluate(truth_path: &str, predicted_path: &str, options: &EvalOptions) -> Result<Report> {
    let (truth, ids) = read_truth(truth_path, options)?;
    let prediction = read_prediction(predicted_path, &ids)?;
    let missing: Vec<u32> = (0..prediction.cluster.len() as u32)
        .filter(|&document| prediction.cluster[document as usize].is_none())
        .collect();
    let found = prediction.cluster.len() - missing.len();
    check_coverage(predicted_path, found, prediction.cluster.len(), || {
        ids.values_of(&missing[..missing.len().min(3)])
    })?;
    let (format, metrics) = match &truth {
        Truth::Clusters(truth) => (
            TruthFormat::Clusters,
            Metrics::Clusters(cluster_metrics(truth, &prediction.cluster)),
        ),
        Truth::Pairs(format, truth) => (
            *format,
            Metrics::Pairs(pair_metrics(truth, &prediction.cluster)),
        ),
    };
    Ok(Report {
        truth_path: display_path(truth_path).to_owned(),
        truth_format: format,
        positive_label: (format != TruthFormat::Clusters).then_some(options.positive_label),
        predicted_path: display_path(predicted_path).to_owned(),
        predicted_rows: prediction.rows,
        not_in_truth: prediction.not_in_truth,
        missing_documents: missing.len() as u64,
        missing_first: ids.values_of(&missing[..missing.len().min(MISSING_SHOWN)]),
        metrics,
    })
}

/// Refuses a prediction that holds fewer than half of the truth's ids: its scores would say
/// nothing (typically `dedup` ran without `--id-field`, so its ids are record numbers).
fn check_coverage(
    predicted: &str,
    found: usize,
    truth: usize,
    missing_examples: impl FnOnce() -> Vec<Value>,
) -> Result<()> {
    if truth == 0 || found * 2 >= truth {
        return Ok(());
    }
    let examples: Vec<String> = missing_examples().iter().map(Value::to_string).collect();
    let message = format!(
        "only {found} of the {truth} ids of the truth are among its ids (missing, for example: \
         {}); were the documents read with the truth's ids (`id_field`)? Without it, an id \
         is the record number",
        examples.join(", ")
    );
    Err(Error::format(display_path(predicted), message))
}

/// A ground truth loaded once to score many in-memory predictions (`neardup tune`).
pub struct LoadedTruth {
    truth: Truth,
    ids: Interner,
}

/// Reads the ground truth at `path` for [`LoadedTruth::score`].
///
/// # Errors
///
/// As [`evaluate`] for the truth file.
pub fn load_truth(path: &str, options: &EvalOptions) -> Result<LoadedTruth> {
    let (truth, ids) = read_truth(path, options)?;
    Ok(LoadedTruth { truth, ids })
}

impl LoadedTruth {
    /// Refuses documents whose `ids` hold fewer than half of the truth's ids (`inputs` names
    /// them in the message).
    ///
    /// # Errors
    ///
    /// [`Error::Format`] naming how many ids were found and a few that were not.
    pub fn check_ids(&self, inputs: &str, ids: &[Value]) -> Result<()> {
        let mut found = vec![false; self.ids.len()];
        for id in ids {
            if let Some(index) = self.ids.get(&id.to_string()) {
                found[index as usize] = true;
            }
        }
        let count = found.iter().filter(|&&found| found).count();
        check_coverage(inputs, count, found.len(), || {
            let missing: Vec<u32> = (0..found.len() as u32)
                .filter(|&index| !found[index as usize])
                .take(3)
                .collect();
            self.ids.values_of(&missing)
        })
    }

    /// Scores a prediction held in memory: document `ids[i]` is in predicted cluster
    /// `clusters[i]`. Ids compare by their JSON text, as in the files; ids absent from the
    /// truth are ignored and truth documents absent from `ids` are predicted singletons.
    pub fn score(&self, ids: &[Value], clusters: &[u32]) -> Metrics {
        let mut predicted = vec![None; self.ids.len()];
        for (id, &cluster) in ids.iter().zip(clusters) {
            if let Some(index) = self.ids.get(&id.to_string()) {
                predicted[index as usize] = Some(cluster);
            }
        }
        match &self.truth {
            Truth::Clusters(truth) => Metrics::Clusters(cluster_metrics(truth, &predicted)),
            Truth::Pairs(_, truth) => Metrics::Pairs(pair_metrics(truth, &predicted)),
        }
    }
}

/// The ground truth in either shape.
enum Truth {
    Clusters(ClusterTruth),
    Pairs(TruthFormat, PairTruth),
}

/// Dense indices for JSON texts, in order of first appearance.
#[derive(Default)]
struct Interner {
    index: HashMap<String, u32>,
}

impl Interner {
    /// The index of `key` and whether it is new.
    fn intern(&mut self, key: String) -> std::result::Result<(u32, bool), String> {
        let next = self.index.len();
        match self.index.entry(key) {
            Entry::Occupied(entry) => Ok((*entry.get(), false)),
            Entry::Vacant(entry) => {
                let index = u32::try_from(next)
                    .map_err(|_| format!("more than {} distinct values", u32::MAX))?;
                entry.insert(index);
                Ok((index, true))
            }
        }
    }

    fn get(&self, key: &str) -> Option<u32> {
        self.index.get(key).copied()
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    /// The JSON values of `indices`, in that order (one pass over all keys).
    fn values_of(&self, indices: &[u32]) -> Vec<Value> {
        let mut values = vec![Value::Null; indices.len()];
        for (key, index) in &self.index {
            if let Some(slot) = indices.iter().position(|wanted| wanted == index) {
                // Keys are JSON texts written by `scalar_key`; the fallback cannot happen.
                values[slot] = serde_json::from_str(key).unwrap_or(Value::String(key.clone()));
            }
        }
        values
    }
}

/// One non-blank line of a JSON-lines file.
struct Row {
    /// 1-based line number.
    line: u64,
    fields: Map<String, Value>,
}

impl Row {
    fn field(&self, name: &str) -> std::result::Result<&Value, String> {
        self.fields
            .get(name)
            .ok_or_else(|| format!("field {name:?} is missing"))
    }

    /// The JSON text of field `name`, which must be a string or a number.
    fn scalar_key(&self, name: &str) -> std::result::Result<String, String> {
        match self.field(name)? {
            value @ (Value::String(_) | Value::Number(_)) => Ok(value.to_string()),
            other => Err(format!(
                "field {name:?} must be a string or a number, found {}",
                describe(other)
            )),
        }
    }
}

/// The rows of a JSON-lines file, one at a time.
struct Rows {
    reader: Box<dyn BufRead>,
    /// The path for messages.
    path: String,
    line: u64,
    buffer: Vec<u8>,
}

impl Rows {
    fn open(path: &str) -> Result<Rows> {
        Ok(Rows {
            reader: neardup_pipeline::input::open_stream(path)?,
            path: display_path(path).to_owned(),
            line: 0,
            buffer: Vec::new(),
        })
    }

    /// The next non-blank row; `None` at the end of the file.
    fn next_row(&mut self) -> Result<Option<Row>> {
        loop {
            self.buffer.clear();
            let read = self.reader.read_until(b'\n', &mut self.buffer);
            if read.map_err(|e| Error::io(&self.path, e))? == 0 {
                return Ok(None);
            }
            self.line += 1;
            if !self.buffer.iter().all(u8::is_ascii_whitespace) {
                let fields = parse_object(&self.buffer).map_err(|m| self.error(m))?;
                let line = self.line;
                return Ok(Some(Row { line, fields }));
            }
        }
    }

    /// An [`Error::Input`] for the current line.
    fn error(&self, message: String) -> Error {
        Error::input(&self.path, self.line, message)
    }
}

/// A line as a JSON object.
fn parse_object(line: &[u8]) -> std::result::Result<Map<String, Value>, String> {
    match serde_json::from_slice(line) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            describe(&other)
        )),
        Err(error) => Err(format!(
            "invalid JSON at column {}: {}",
            error.column(),
            error
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or_default()
        )),
    }
}

/// The truth format the fields of `row` show.
fn detect(path: &str, row: &Row) -> Result<TruthFormat> {
    let has = |name: &str| row.fields.contains_key(name);
    if has("sentence1") && has("sentence2") {
        Ok(TruthFormat::Sohu)
    } else if has("a") && has("b") {
        Ok(TruthFormat::Pairs)
    } else if has("id") && has("cluster") {
        Ok(TruthFormat::Clusters)
    } else {
        let fields: Vec<&str> = row.fields.keys().map(String::as_str).collect();
        Err(Error::format(
            path,
            format!(
                "cannot tell the truth format from the fields of line {} ({}): expected \
                 \"id\" and \"cluster\" (clusters), \"a\" and \"b\" (pairs) or \"sentence1\" \
                 and \"sentence2\" (sohu), or give `truth_format`",
                row.line,
                fields.join(", ")
            ),
        ))
    }
}

fn read_truth(path: &str, options: &EvalOptions) -> Result<(Truth, Interner)> {
    let mut rows = Rows::open(path)?;
    let Some(first) = rows.next_row()? else {
        return Err(Error::format(
            display_path(path),
            "the truth file has no rows",
        ));
    };
    let format = match options.truth_format {
        Some(format) => format,
        None => detect(&rows.path, &first)?,
    };
    if format == TruthFormat::Clusters {
        return read_cluster_truth(rows, first);
    }
    read_pair_truth(rows, first, format, options.positive_label)
}

/// Reads every row of `rows`, `first` included, with `add`.
fn for_each_row(
    rows: &mut Rows,
    first: Row,
    mut add: impl FnMut(&Row) -> std::result::Result<(), String>,
) -> Result<()> {
    let mut row = Some(first);
    while let Some(current) = row {
        add(&current).map_err(|m| Error::input(&rows.path, current.line, m))?;
        row = rows.next_row()?;
    }
    Ok(())
}

/// The clusters truth being read.
#[derive(Default)]
struct ClusterTruthReader {
    ids: Interner,
    /// The line of each document, for messages about repeated ids.
    lines: Vec<u64>,
    clusters: Interner,
    categories: Interner,
    truth: ClusterTruth,
}

impl ClusterTruthReader {
    fn add(&mut self, row: &Row) -> std::result::Result<(), String> {
        let (id, cluster) = (row.scalar_key("id")?, row.scalar_key("cluster")?);
        let category = match row.fields.get("category") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(self.category(name)?),
            Some(other) => {
                let found = describe(other);
                return Err(format!(
                    "field \"category\" must be a string, found {found}"
                ));
            }
        };
        let (document, new) = self.ids.intern(id)?;
        if !new {
            let first = self.lines[document as usize];
            return Err(repeated_id(&row.fields["id"], first));
        }
        self.lines.push(row.line);
        self.truth.cluster.push(self.clusters.intern(cluster)?.0);
        self.truth.category.push(category);
        Ok(())
    }

    fn category(&mut self, name: &str) -> std::result::Result<u32, String> {
        let (index, new) = self.categories.intern(name.to_owned())?;
        if new {
            self.truth.category_names.push(name.to_owned());
        }
        Ok(index)
    }
}

fn repeated_id(id: &Value, first_line: u64) -> String {
    format!("id {id} appears again (first on line {first_line})")
}

fn read_cluster_truth(mut rows: Rows, first: Row) -> Result<(Truth, Interner)> {
    let mut reader = ClusterTruthReader::default();
    for_each_row(&mut rows, first, |row| reader.add(row))?;
    Ok((Truth::Clusters(reader.truth), reader.ids))
}

/// The labelled-pairs truth being read.
struct PairTruthReader {
    format: TruthFormat,
    positive_label: f64,
    ids: Interner,
    labels: Interner,
    truth: PairTruth,
}

impl PairTruthReader {
    fn add(&mut self, row: &Row) -> std::result::Result<(), String> {
        let (a, b) = self.ids_of(row)?;
        let label = row.field("label")?;
        let duplicate = match label {
            Value::Bool(duplicate) => *duplicate,
            Value::Number(number) => number.as_f64() == Some(self.positive_label),
            other => {
                let found = describe(other);
                return Err(format!(
                    "field \"label\" must be a boolean or a number, found {found}"
                ));
            }
        };
        if a == b {
            return Err(format!("fields \"a\" and \"b\" are the same id {a}"));
        }
        let name = label.to_string();
        let (label, new) = self.labels.intern(name.clone())?;
        if new {
            self.truth.label_names.push(name);
        }
        let (a, b) = (self.ids.intern(a)?.0, self.ids.intern(b)?.0);
        (self.truth.pairs).push(LabelledPair {
            a,
            b,
            duplicate,
            label,
        });
        Ok(())
    }

    /// The ids of a pair: its fields `a` and `b`, or for the Sohu format `2i+1` and `2i+2`.
    fn ids_of(&self, row: &Row) -> std::result::Result<(String, String), String> {
        if self.format != TruthFormat::Sohu {
            return Ok((row.scalar_key("a")?, row.scalar_key("b")?));
        }
        row.field("sentence1")?;
        row.field("sentence2")?;
        let first = 2 * self.truth.pairs.len() as u64 + 1;
        Ok((first.to_string(), (first + 1).to_string()))
    }
}

fn read_pair_truth(
    mut rows: Rows,
    first: Row,
    format: TruthFormat,
    positive_label: f64,
) -> Result<(Truth, Interner)> {
    let mut reader = PairTruthReader {
        format,
        positive_label,
        ids: Interner::default(),
        labels: Interner::default(),
        truth: PairTruth::default(),
    };
    for_each_row(&mut rows, first, |row| reader.add(row))?;
    Ok((Truth::Pairs(format, reader.truth), reader.ids))
}

/// The predicted cluster of each truth document.
struct Prediction {
    cluster: Vec<Option<u32>>,
    rows: u64,
    not_in_truth: u64,
}

/// The prediction being read.
struct PredictionReader<'a> {
    truth_ids: &'a Interner,
    prediction: Prediction,
    /// The line of each truth document (0: not seen yet), for messages about repeated ids.
    lines: Vec<u64>,
    /// The line of each id not in the truth.
    other_lines: HashMap<String, u64>,
    clusters: Interner,
}

impl PredictionReader<'_> {
    fn add(&mut self, row: &Row) -> std::result::Result<(), String> {
        // The row as `dedup --clusters` writes it; a row that is not one is told field by
        // field, as the truth's rows are.
        let typed = ClusterRow::deserialize(Value::Object(row.fields.clone()));
        let Ok(ClusterRow { id, cluster, .. }) = typed else {
            row.scalar_key("id")?;
            row.scalar_key("cluster")?;
            return Err(format!("not a clusters row: {}", typed.unwrap_err()));
        };
        let (id, cluster) = (id.to_string(), cluster.to_string());
        self.prediction.rows += 1;
        let Some(document) = self.truth_ids.get(&id) else {
            return self.add_other(id, row);
        };
        let seen = self.lines[document as usize];
        if seen != 0 {
            return Err(repeated_id(&row.fields["id"], seen));
        }
        self.lines[document as usize] = row.line;
        self.prediction.cluster[document as usize] = Some(self.clusters.intern(cluster)?.0);
        Ok(())
    }

    /// Counts a row whose id is not in the truth.
    fn add_other(&mut self, id: String, row: &Row) -> std::result::Result<(), String> {
        match self.other_lines.entry(id) {
            Entry::Occupied(entry) => Err(repeated_id(&row.fields["id"], *entry.get())),
            Entry::Vacant(entry) => {
                entry.insert(row.line);
                self.prediction.not_in_truth += 1;
                Ok(())
            }
        }
    }
}

fn read_prediction(path: &str, truth_ids: &Interner) -> Result<Prediction> {
    let mut rows = Rows::open(path)?;
    let mut reader = PredictionReader {
        truth_ids,
        prediction: Prediction {
            cluster: vec![None; truth_ids.len()],
            rows: 0,
            not_in_truth: 0,
        },
        lines: vec![0; truth_ids.len()],
        other_lines: HashMap::new(),
        clusters: Interner::default(),
    };
    if let Some(first) = rows.next_row()? {
        for_each_row(&mut rows, first, |row| reader.add(row))?;
    }
    Ok(reader.prediction)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;
    use crate::eval::{ClusterMetrics, PairMetrics};

    fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn run(truth: &str, predicted: &str, options: EvalOptions) -> Result<Report> {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", truth);
        let predicted = write(&dir, "clusters.jsonl", predicted);
        evaluate(&truth, &predicted, &options)
    }

    fn clusters(report: &Report) -> &ClusterMetrics {
        match &report.metrics {
            Metrics::Clusters(metrics) => metrics,
            Metrics::Pairs(_) => panic!("cluster metrics expected"),
        }
    }

    fn pairs(report: &Report) -> &PairMetrics {
        match &report.metrics {
            Metrics::Pairs(metrics) => metrics,
            Metrics::Clusters(_) => panic!("pair metrics expected"),
        }
    }

    /// The message of an error, with the temporary directory removed.
    fn message(error: Error) -> String {
        let text = error.to_string();
        text.rsplit_once('/')
            .map_or(text.clone(), |(_, name)| name.to_owned())
    }

    const TRUTH: &str = r#"{"id": "a", "cluster": 1, "category": "cut"}
{"id": "b", "cluster": 1}

{"id": "c", "cluster": 1, "category": null}
{"id": 4, "cluster": "x", "category": "cut"}
{"id": "4", "cluster": "x"}
"#;

    #[test]
    fn cluster_truth_with_missing_and_extra_documents() {
        // Prediction: {a, b | "4"}, the number 4 missing, c missing, "z" not in the truth.
        let predicted = r#"{"id": "a", "cluster": "a", "duplicate_of": null, "similarity": null}
{"id": "b", "cluster": "a"}
{"id": "z", "cluster": "a"}
{"id": "4", "cluster": "4"}
"#;
        let report = run(TRUTH, predicted, EvalOptions::default()).unwrap();
        assert_eq!(report.truth_format, TruthFormat::Clusters);
        assert_eq!(report.positive_label, None);
        assert_eq!((report.predicted_rows, report.not_in_truth), (4, 1));
        assert_eq!(report.missing_documents, 2);
        assert_eq!(report.missing_first, vec![json!("c"), json!(4)]);
        let metrics = clusters(&report);
        assert_eq!(metrics.documents, 5);
        let counts = (
            metrics.pairs.truth,
            metrics.pairs.predicted,
            metrics.pairs.common,
        );
        assert_eq!(counts, (4, 1, 1));
        assert_eq!(metrics.categories[0].name, "cut");
        assert_eq!(metrics.categories[0].documents, 2);
    }

    #[test]
    fn repeated_ids_name_both_lines() {
        let truth = "{\"id\": 1, \"cluster\": 1}\n\n{\"id\": 1, \"cluster\": 2}\n";
        let error = run(truth, "", EvalOptions::default()).unwrap_err();
        assert_eq!(
            message(error),
            "truth.jsonl:3: id 1 appears again (first on line 1)"
        );
        let predicted = "{\"id\": \"b\", \"cluster\": 1}\n{\"id\": \"b\", \"cluster\": 1}\n";
        let error = run(TRUTH, predicted, EvalOptions::default()).unwrap_err();
        assert_eq!(
            message(error),
            "clusters.jsonl:2: id \"b\" appears again (first on line 1)"
        );
        let predicted = "{\"id\": \"q\", \"cluster\": 1}\n{\"id\": \"q\", \"cluster\": 1}\n";
        let error = run(TRUTH, predicted, EvalOptions::default()).unwrap_err();
        assert!(message(error).starts_with("clusters.jsonl:2: id \"q\" appears again"));
    }

    #[test]
    fn bad_rows_name_file_line_and_field() {
        let cases = [
            ("{\"id\": 1, \"cluster\": 1}\n{\"id\": 2,", "truth.jsonl:2: invalid JSON at column 9: EOF while parsing a value"),
            ("{\"id\": 1, \"cluster\": 1}\n{\"id\": 2}\n", "truth.jsonl:2: field \"cluster\" is missing"),
            ("{\"id\": 1, \"cluster\": 1}\n[1]\n", "truth.jsonl:2: expected a JSON object, found array [1]"),
            ("{\"id\": null, \"cluster\": 1}\n", "truth.jsonl:1: field \"id\" must be a string or a number, found null"),
            ("{\"id\": 1, \"cluster\": 1, \"category\": 3}\n", "truth.jsonl:1: field \"category\" must be a string, found number 3"),
            ("{\"a\": 1, \"b\": 2, \"label\": \"yes\"}\n", "truth.jsonl:1: field \"label\" must be a boolean or a number, found string \"yes\""),
            ("{\"a\": 1, \"b\": 1, \"label\": 1}\n", "truth.jsonl:1: fields \"a\" and \"b\" are the same id 1"),
            ("{\"sentence1\": \"x\", \"sentence2\": \"y\"}\n", "truth.jsonl:1: field \"label\" is missing"),
        ];
        for (truth, expected) in cases {
            let error = run(truth, "", EvalOptions::default()).unwrap_err();
            assert!(matches!(error, Error::Input { .. }), "{error}");
            assert_eq!(message(error), expected);
        }
        let error = run(TRUTH, "{\"id\": \"a\"}\n", EvalOptions::default()).unwrap_err();
        assert_eq!(
            message(error),
            "clusters.jsonl:1: field \"cluster\" is missing"
        );
    }

    #[test]
    fn unknown_or_empty_truth_is_a_format_error() {
        for (truth, expected) in [
            (
                "{\"text\": 1}\n",
                "cannot tell the truth format from the fields of line 1 (text)",
            ),
            ("\n\n", "the truth file has no rows"),
        ] {
            let error = run(truth, "", EvalOptions::default()).unwrap_err();
            assert!(matches!(error, Error::Format { .. }), "{error}");
            assert!(error.to_string().contains(expected), "{error}");
        }
    }

    #[test]
    fn unreadable_file_is_an_io_error() {
        let error = evaluate("/nonexistent/truth.jsonl", "-", &EvalOptions::default());
        let error = error.unwrap_err();
        assert!(matches!(error, Error::Io { .. }), "{error}");
        assert!(error.to_string().starts_with("/nonexistent/truth.jsonl: "));
    }

    #[test]
    fn labelled_pairs_with_numbers_and_booleans() {
        let truth = r#"{"a": 1, "b": 2, "label": 5}
{"a": 2, "b": 3, "label": 3}
{"a": 3, "b": 9, "label": true}
"#;
        let predicted = "{\"id\": 1, \"cluster\": 1}\n{\"id\": 2, \"cluster\": 1}\n{\"id\": 3, \"cluster\": 1}\n";
        let options = EvalOptions {
            positive_label: 5.0,
            ..EvalOptions::default()
        };
        let report = run(truth, predicted, options).unwrap();
        assert_eq!(report.truth_format, TruthFormat::Pairs);
        assert_eq!(report.positive_label, Some(5.0));
        assert_eq!(report.missing_first, vec![json!(9)]);
        let metrics = pairs(&report);
        let confusion = metrics.confusion;
        let counts = (confusion.true_positive, confusion.false_positive);
        assert_eq!(counts, (1, 1));
        assert_eq!((confusion.false_negative, metrics.missing_pairs), (1, 1));
        let labels: Vec<&str> = metrics.labels.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["3", "5", "true"]);
    }

    #[test]
    fn sohu_rows_are_documents_two_i_plus_one_and_two() {
        let truth = "{\"sentence1\": \"x\", \"sentence2\": \"y\", \"label\": 5}\n\n{\"sentence1\": \"u\", \"sentence2\": \"v\", \"label\": 0}\n";
        // Records 1 and 2 (the first pair) together; 3 and 4 apart; "3" is not the number 3.
        let predicted = "{\"id\": 1, \"cluster\": 1}\n{\"id\": 2, \"cluster\": 1}\n{\"id\": \"3\", \"cluster\": 1}\n{\"id\": 4, \"cluster\": 4}\n";
        let options = EvalOptions {
            positive_label: 5.0,
            ..EvalOptions::default()
        };
        let report = run(truth, predicted, options).unwrap();
        assert_eq!(report.truth_format, TruthFormat::Sohu);
        assert_eq!(report.missing_first, vec![json!(3)]);
        assert_eq!(report.not_in_truth, 1);
        let confusion = pairs(&report).confusion;
        assert_eq!((confusion.true_positive, confusion.true_negative), (1, 1));
    }

    #[test]
    fn truth_format_option_overrides_detection() {
        // A row with both "a"/"b" and "id"/"cluster" reads as pairs unless told otherwise.
        let truth = "{\"id\": 1, \"cluster\": 1, \"a\": 7, \"b\": 8, \"label\": 1}\n\
                     {\"id\": 2, \"cluster\": 1, \"a\": 7, \"b\": 9, \"label\": 0}\n";
        let options = EvalOptions {
            truth_format: Some(TruthFormat::Clusters),
            ..EvalOptions::default()
        };
        let predicted = "{\"id\": 2, \"cluster\": 2}\n";
        let report = run(truth, predicted, options).unwrap();
        assert_eq!(report.truth_format, TruthFormat::Clusters);
        assert_eq!(report.missing_first, vec![json!(1)]);
        let predicted = "{\"id\": 7, \"cluster\": 7}\n{\"id\": 8, \"cluster\": 7}\n";
        let report = run(truth, predicted, EvalOptions::default()).unwrap();
        assert_eq!(report.truth_format, TruthFormat::Pairs);
    }

    #[test]
    fn regression_a_prediction_with_too_few_truth_ids_is_refused() {
        // `dedup` without `--id-field`: the ids are record numbers.
        let predicted = "{\"id\": 1, \"cluster\": 1}\n{\"id\": 2, \"cluster\": 1}\n";
        let message = run(TRUTH, predicted, EvalOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("only 0 of the 5 ids of the truth"),
            "{message}"
        );
        assert!(message.contains("\"a\", \"b\", \"c\""), "{message}");
    }

    #[test]
    fn reads_gzip_and_zstd() {
        let dir = tempfile::tempdir().unwrap();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(TRUTH.as_bytes()).unwrap();
        let truth = dir.path().join("truth.jsonl.gz");
        std::fs::write(&truth, gzip.finish().unwrap()).unwrap();
        let predicted = dir.path().join("clusters.jsonl.zst");
        let rows = b"{\"id\": \"a\", \"cluster\": 1}\n{\"id\": \"b\", \"cluster\": 1}\n\
                     {\"id\": 4, \"cluster\": 2}\n";
        std::fs::write(&predicted, zstd::encode_all(&rows[..], 3).unwrap()).unwrap();
        let (truth, predicted) = (truth.to_str().unwrap(), predicted.to_str().unwrap());
        let report = evaluate(truth, predicted, &EvalOptions::default()).unwrap();
        assert_eq!(clusters(&report).pairs.common, 1);
        assert_eq!(report.missing_documents, 2);
    }
}
