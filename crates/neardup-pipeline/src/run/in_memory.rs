//! The in-memory path of a run: every record read, the texts moved into the engine, the
//! kept records written from memory (the lines of plain JSONL and text files read again
//! from them).

use std::collections::HashMap;
use std::time::Instant;

use neardup_core::registry::Registered;
use neardup_engine::{EngineOptions, Progress};
use serde_json::Value;

use super::outputs::Outputs;
use super::templates;
use super::{refuse_all_skipped, Ids, Read, RunConfig};
use crate::error::Result;
use crate::input::{read_inputs, read_inputs_leaving_lines, text_again, Corpus};
use crate::output::write_kept;
use crate::spans::{remove_spans, SpanSource};

/// The in-memory path: every record read, the texts moved into the engine, the kept records
/// written from memory.
pub(super) fn read_in_memory<M: Registered>(
    method: &M,
    config: &RunConfig,
    engine: EngineOptions,
    outputs: &mut Outputs,
    progress: &dyn Progress,
) -> Result<Read> {
    let started = Instant::now();
    let mut reference = read_reference(config)?;
    // The kept lines of plain files are read again when written: no input line is held.
    let mut corpus = read_inputs_leaving_lines(&config.inputs, &config.input)?;
    refuse_all_skipped(&corpus)?;
    let read_seconds = started.elapsed().as_secs_f64();
    let first = reference.records.len();
    let engine = EngineOptions {
        reference: first as u32,
        ..engine
    };
    let outcome = if config.spans.is_some() {
        // Span removal reads the kept texts after the dedup: they are lent, not moved.
        let texts: Vec<&str> = (reference.records.iter())
            .chain(corpus.records.iter())
            .map(|r| r.text.as_str())
            .collect();
        neardup_engine::dedup(method, &texts, engine, progress)?
    } else {
        // The texts move into the engine, which drops each once it is sketched.
        let texts: Vec<String> = (reference.records.iter_mut())
            .chain(corpus.records.iter_mut())
            .map(|r| std::mem::take(&mut r.text))
            .collect();
        neardup_engine::dedup_owned(method, texts, engine, progress)?
    };
    let writing = Instant::now();
    let keep: Vec<bool> = (outcome.assignment.duplicate_of[first..].iter())
        .map(Option::is_none)
        .collect();
    let spans = match (&config.spans, outputs.spans.as_mut()) {
        (Some(run), Some(reports)) => Some(remove_spans(
            SpanSource {
                corpus: &corpus,
                keep: &keep,
                input: &config.input,
                policy: config.engine.keep,
            },
            run,
            Some(&mut outputs.kept),
            reports,
            None,
        )?),
        _ => {
            write_kept(&corpus, &keep, &mut outputs.kept)?;
            None
        }
    };
    // The texts the templates section lists, from the records' lines (held, or read at
    // their places): the whole inputs are read again only for the others.
    let mut texts = HashMap::new();
    if outputs.stats.is_some() {
        let found = &outcome.stats.templates;
        for document in templates::listed(found) {
            let (side, at) = match document.checked_sub(first) {
                Some(input) => (&corpus, input),
                None => (&reference, document),
            };
            if let Some(text) =
                (side.records.get(at)).and_then(|record| text_again(side, record, &config.input))
            {
                texts.insert(document, text);
            }
        }
    }
    let ids = |corpus: &mut Corpus| -> Vec<Value> {
        (corpus.records.drain(..)).map(|record| record.id).collect()
    };
    let reference_ids = ids(&mut reference);
    let corpus_ids = ids(&mut corpus);
    Ok(Read {
        reference: Ids::Records(reference_ids),
        corpus: Ids::Records(corpus_ids),
        counts: corpus,
        outcome,
        seconds: vec![
            ("read".to_owned(), read_seconds),
            ("write_kept".to_owned(), writing.elapsed().as_secs_f64()),
        ],
        spilled: 0,
        memory: None,
        resume: None,
        texts,
        spans,
    })
}

/// The reference corpus (`--against`; empty without one). Without an id field its
/// documents are named by file and line: ordinals would repeat the inputs' own.
fn read_reference(config: &RunConfig) -> Result<Corpus> {
    let mut reference = Corpus::default();
    if !config.against.is_empty() {
        reference = read_inputs(&config.against, &config.input)?;
        refuse_all_skipped(&reference)?;
        if config.input.id_field.is_none() {
            for record in &mut reference.records {
                let path = &reference.sources[record.source as usize].path;
                record.id = Value::String(format!("{path}:{}", record.line));
            }
        }
    }
    Ok(reference)
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::registry::Params;

    fn config(dir: &std::path::Path, against: &str) -> RunConfig {
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        let input = write("in.txt", "one\ntwo\n");
        let mut config = RunConfig::new(vec![input], "-".into(), "exact", Params::new());
        config.input.format = Some(crate::input::Format::Text);
        config.against = vec![write("against.txt", against)];
        config
    }

    #[test]
    fn reference_documents_are_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), "first\nsecond\n");
        let reference = read_reference(&config).unwrap();
        let path = &config.against[0];
        let ids: Vec<Value> = reference.records.iter().map(|r| r.id.clone()).collect();
        assert_eq!(
            ids,
            [
                Value::from(format!("{path}:1")),
                Value::from(format!("{path}:2"))
            ]
        );
    }

    #[test]
    fn no_reference_reads_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(dir.path(), "x\n");
        config.against.clear();
        assert!(read_reference(&config).unwrap().records.is_empty());
    }
}
