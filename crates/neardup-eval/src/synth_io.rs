//! One `neardup synth` run: read a source corpus, generate a benchmark with [`crate::synth`],
//! write the benchmark corpus and its truth.
//!
//! # Overview
//!
//! The corpus is JSON lines `{"id": "s<N>[-v<K>|-hn<K>|-rw<K>]" | "t<K>", "text": ..., "source":
//! <source id>}`, where the source id is the id of the source record
//! ([`InputOptions::id_field`], or its 1-based number), `null` for a template notice `t<K>`. The truth has one row per corpus row, in the same (shuffled) order:
//! `{"id": ..., "cluster": <cluster id>, "category": "original" | "hard_negative" | "rewrap" |
//! "template" | <edits>}`,
//! the cluster format that `neardup eval` reads.
//!
//! Both outputs are created before the input is read, so an unwritable path fails at once,
//! and renamed into place only when both were written ([`AtomicOutput`]).

use serde::Serialize;
use serde_json::Value;

use crate::synth::notices::{notice_flood, FloodOptions};
use crate::synth::{Benchmark, Summary, SynthOptions, Synthesizer};
use neardup_pipeline::input::{read_inputs, InputOptions, Record};
use neardup_pipeline::output::{commit_all, write_json_lines, AtomicOutput};
use neardup_pipeline::paths::check_distinct;
use neardup_pipeline::Result;

/// Everything one `synth` run needs.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// The source corpus (`-` for standard input).
    pub inputs: Vec<String>,
    /// How to read it.
    pub input: InputOptions,
    /// Where the benchmark corpus goes (JSON lines; `-` for standard output).
    pub corpus: String,
    /// Where its truth goes (JSON lines; `-` for standard output).
    pub truth: String,
    /// Use only the first this many source records.
    pub limit: Option<usize>,
    /// The generator's parameters.
    pub options: SynthOptions,
}

/// Runs one synth job and returns what the benchmark holds.
///
/// # Errors
///
/// [`Error::Parameter`](neardup_pipeline::Error::Parameter) for invalid options,
/// [`Error::Output`](neardup_pipeline::Error::Output) if an output cannot be created
/// or written or both outputs are the same file, and the errors of [`read_inputs`] (which
/// name the file, the line and the field).
pub fn run_synth(config: &SynthConfig) -> Result<Summary> {
    let synthesizer = Synthesizer::new(config.options.clone())?;
    let inputs: Vec<&str> = config.inputs.iter().map(String::as_str).collect();
    let outputs = [
        ("`output`", config.corpus.as_str()),
        ("`truth`", &config.truth),
    ];
    check_distinct(&inputs, &outputs)?;
    let mut corpus_out = AtomicOutput::create(&config.corpus)?;
    let mut truth_out = AtomicOutput::create(&config.truth)?;
    let mut corpus = read_inputs(&config.inputs, &config.input)?;
    if let Some(limit) = config.limit {
        corpus.records.truncate(limit);
    }
    let texts: Vec<&str> = corpus.records.iter().map(|r| r.text.as_str()).collect();
    let benchmark = synthesizer.generate(&texts);
    write_json_lines(&mut corpus_out, corpus_rows(&benchmark, &corpus.records))?;
    write_json_lines(&mut truth_out, truth_rows(&benchmark))?;
    commit_all(vec![corpus_out, truth_out])?;
    Ok(benchmark.summary)
}

/// Everything one `neardup synth-notices` run needs.
#[derive(Debug, Clone)]
pub struct NoticesConfig {
    /// Post bodies (`--bodies`; read as a corpus), none for random text.
    pub bodies: Vec<String>,
    /// How to read them.
    pub input: InputOptions,
    /// Where the flood goes (JSON lines `{"id", "text"}`).
    pub corpus: String,
    /// Where the notice truth goes (`{"id", "cluster", "category"}`: the notice, the template).
    pub truth: String,
    /// Where the template truth goes (`{"id", "cluster"}`: the template), if anywhere.
    pub template_truth: Option<String>,
    /// The generator's parameters.
    pub options: FloodOptions,
}

/// Writes a notice flood ([`crate::synth::notices`]) and its truths; returns the number of
/// documents.
///
/// # Errors
/// An output that cannot be created or written, two outputs or an input and an output that
/// are the same file, and the errors of [`read_inputs`] for the bodies.
pub fn run_notices(config: &NoticesConfig) -> Result<usize> {
    let inputs: Vec<&str> = config.bodies.iter().map(String::as_str).collect();
    let mut outputs = vec![
        ("`output`", config.corpus.as_str()),
        ("`truth`", &config.truth),
    ];
    if let Some(path) = &config.template_truth {
        outputs.push(("`template_truth`", path));
    }
    check_distinct(&inputs, &outputs)?;
    let mut corpus_out = AtomicOutput::create(&config.corpus)?;
    let mut truth_out = AtomicOutput::create(&config.truth)?;
    let mut template_out = config
        .template_truth
        .as_deref()
        .map(AtomicOutput::create)
        .transpose()?;
    let bodies = match config.bodies.is_empty() {
        true => Vec::new(),
        false => read_inputs(&config.bodies, &config.input)?.records,
    };
    let bodies: Vec<&str> = bodies.iter().map(|r| r.text.as_str()).collect();
    let flood = notice_flood(&config.options, &bodies);
    let corpus = flood.iter().map(|d| NoticeRow {
        id: &d.id,
        text: &d.text,
    });
    write_json_lines(&mut corpus_out, corpus)?;
    let truth = flood.iter().map(|d| TruthRow {
        id: &d.id,
        cluster: &d.notice,
        category: d.template.clone(),
    });
    write_json_lines(&mut truth_out, truth)?;
    let mut commits = vec![corpus_out, truth_out];
    if let Some(mut out) = template_out.take() {
        let rows = flood.iter().map(|d| TruthRow {
            id: &d.id,
            cluster: &d.template,
            category: d.template.clone(),
        });
        write_json_lines(&mut out, rows)?;
        commits.push(out);
    }
    commit_all(commits)?;
    Ok(flood.len())
}

/// One row of a notice flood: `{"id", "text"}`.
#[derive(Debug, Serialize)]
struct NoticeRow<'a> {
    id: &'a str,
    text: &'a str,
}

/// One row of a benchmark's corpus: `{"id", "text", "source"}`, the source being the id of
/// the input record it was made from (`null` for a template notice).
#[derive(Debug, Serialize)]
struct CorpusRow<'a> {
    id: &'a str,
    text: &'a str,
    source: Option<&'a Value>,
}

/// One row of a benchmark's truth: `{"id", "cluster", "category"}`, as `neardup eval` reads a
/// clusters truth.
#[derive(Debug, Serialize)]
struct TruthRow<'a> {
    id: &'a str,
    cluster: &'a str,
    category: String,
}

/// The corpus rows: id, text and the id of the source record.
fn corpus_rows<'a>(
    benchmark: &'a Benchmark,
    records: &'a [Record],
) -> impl Iterator<Item = CorpusRow<'a>> + 'a {
    benchmark.documents.iter().map(move |document| CorpusRow {
        id: &document.id,
        text: &document.text,
        source: document.source.map(|index| &records[index].id),
    })
}

/// The truth rows: id, cluster and category.
fn truth_rows(benchmark: &Benchmark) -> impl Iterator<Item = TruthRow<'_>> + '_ {
    benchmark.documents.iter().map(|document| TruthRow {
        id: &document.id,
        cluster: &document.cluster,
        category: document.category.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(dir: &tempfile::TempDir, input: &str) -> SynthConfig {
        let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
        SynthConfig {
            inputs: vec![path(input)],
            input: InputOptions {
                id_field: Some("id".to_owned()),
                ..InputOptions::default()
            },
            corpus: path("corpus.jsonl"),
            truth: path("truth.jsonl"),
            limit: None,
            options: SynthOptions {
                duplicate_rate: 1.0,
                ..SynthOptions::default()
            },
        }
    }

    fn lines(path: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn synth_writes_corpus_and_truth_row_by_row() {
        let dir = tempfile::tempdir().unwrap();
        let input = "{\"id\": \"a\", \"text\": \"今天天气很好。我们去公园散步吧。\"}\n\
                     {\"id\": 7, \"text\": \"The cat sat on the mat. Then it slept.\"}\n";
        std::fs::write(dir.path().join("in.jsonl"), input).unwrap();
        let config = config(&dir, "in.jsonl");
        let summary = run_synth(&config).unwrap();
        let (corpus, truth) = (lines(&config.corpus), lines(&config.truth));
        assert_eq!(corpus.len(), 2 + summary.variants + summary.hard_negatives);
        assert_eq!(corpus.len(), truth.len());
        for (document, row) in corpus.iter().zip(&truth) {
            assert_eq!(document["id"], row["id"]);
            let source = if document["id"].as_str().unwrap().starts_with("s1") {
                json!("a")
            } else {
                json!(7)
            };
            assert_eq!(document["source"], source);
        }
    }

    #[test]
    fn rows_are_written_as_the_json_rows_they_replace() {
        let id = Value::from(7);
        let corpus = CorpusRow {
            id: "s1-v1",
            text: "a \"quoted\" 文",
            source: Some(&id),
        };
        let old = json!({"id": "s1-v1", "text": "a \"quoted\" 文", "source": 7});
        assert_eq!(serde_json::to_string(&corpus).unwrap(), old.to_string());
        let notice = CorpusRow {
            source: None,
            ..corpus
        };
        let old = json!({"id": "s1-v1", "text": "a \"quoted\" 文", "source": null});
        assert_eq!(serde_json::to_string(&notice).unwrap(), old.to_string());
        let truth = TruthRow {
            id: "s1-v1",
            cluster: "s1",
            category: "punct+width".into(),
        };
        let old = json!({"id": "s1-v1", "cluster": "s1", "category": "punct+width"});
        assert_eq!(serde_json::to_string(&truth).unwrap(), old.to_string());
    }

    #[test]
    fn input_errors_pass_through_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("in.jsonl"),
            "{\"id\": 1, \"body\": \"x\"}\n",
        )
        .unwrap();
        let config = config(&dir, "in.jsonl");
        let error = run_synth(&config).unwrap_err().to_string();
        assert!(
            error.contains("in.jsonl:1") && error.contains("text"),
            "{error}"
        );
        assert!(!std::path::Path::new(&config.corpus).exists());
        assert!(!std::path::Path::new(&config.truth).exists());
    }

    #[test]
    fn the_same_file_for_both_outputs_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(&dir, "in.jsonl");
        config.truth = config.corpus.clone();
        let error = run_synth(&config).unwrap_err().to_string();
        assert!(error.contains("are the same file"), "{error}");
    }
}
