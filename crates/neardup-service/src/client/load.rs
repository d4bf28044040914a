//! The bulk loader behind `neardup client load`: a JSONL file streamed into a collection
//! through the batch route, several requests in flight, every answer checked against the
//! documents sent.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::answers::{self, BatchResult, Expected};
use super::{Client, ClientError, Method};
use crate::api::{routes, InsertBatchRequest, InsertRequest};

/// What the bulk loader reads from each JSONL line.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The collection.
    pub collection: String,
    /// The JSONL file (`-`: standard input).
    pub input: PathBuf,
    /// The id field.
    pub id_field: String,
    /// The text field.
    pub text_field: String,
    /// The time field, when documents carry their own time.
    pub time_field: Option<String>,
    /// Documents per request.
    pub batch: usize,
    /// Requests in flight.
    pub concurrency: usize,
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadSummary {
    /// Documents sent.
    pub sent: u64,
    /// Stored.
    pub stored: u64,
    /// Answered as duplicates.
    pub duplicates: u64,
    /// Refused, by error code.
    pub refused: BTreeMap<String, u64>,
    /// The first few refusals (id and message).
    pub examples: Vec<String>,
    /// Seconds taken.
    pub seconds: f64,
}

/// A load's summary as `neardup client load` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport<'a> {
    /// Documents sent.
    pub sent: u64,
    /// Stored.
    pub stored: u64,
    /// Answered as duplicates.
    pub duplicates: u64,
    /// Refused, by error code.
    pub refused: &'a BTreeMap<String, u64>,
    /// The first few refusals (id and message).
    pub refused_examples: &'a [String],
    /// Seconds taken.
    pub seconds: f64,
    /// Documents sent per second.
    pub documents_per_second: f64,
}

impl LoadSummary {
    /// The summary as printed.
    pub fn report(&self) -> LoadReport<'_> {
        LoadReport {
            sent: self.sent,
            stored: self.stored,
            duplicates: self.duplicates,
            refused: &self.refused,
            refused_examples: &self.examples,
            seconds: self.seconds,
            documents_per_second: self.sent as f64 / self.seconds.max(1e-9),
        }
    }

    /// Documents refused, whatever the code.
    pub fn refused_count(&self) -> u64 {
        self.refused.values().sum()
    }

    /// Why a load that had documents refused failed (`neardup client load` exits non-zero
    /// then): the count, and the count of each code; `None` when nothing was refused.
    pub fn refusals(&self) -> Option<String> {
        let refused = self.refused_count();
        if refused == 0 {
            return None;
        }
        let codes: Vec<String> = (self.refused.iter())
            .map(|(code, count)| format!("{count} {code}"))
            .collect();
        Some(format!(
            "{refused} of {} documents were refused ({}); the summary above names the first",
            self.sent,
            codes.join(", ")
        ))
    }

    /// The JSON form.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.report()).unwrap_or_default()
    }

    /// Counts a checked batch and writes its answers, in order, to `out` when given.
    fn record(
        &mut self,
        answered: Answered,
        out: &mut Option<&mut dyn Write>,
    ) -> Result<(), ClientError> {
        let raw = answered.answer["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (result, raw) in answered.results.into_iter().zip(&raw) {
            self.sent += 1;
            match result {
                BatchResult::Refused(refused) => {
                    *self.refused.entry(refused.error.code).or_default() += 1;
                    if self.examples.len() < 5 {
                        self.examples
                            .push(format!("{}: {}", refused.id, refused.error.message));
                    }
                }
                BatchResult::Inserted(inserted) if inserted.stored => self.stored += 1,
                BatchResult::Inserted(_) => self.duplicates += 1,
            }
            if let Some(out) = out.as_mut() {
                serde_json::to_writer(&mut **out, raw)
                    .and_then(|()| out.write_all(b"\n").map_err(serde_json::Error::io))
                    .map_err(|e| ClientError(format!("writing the answers: {e}")))?;
            }
        }
        Ok(())
    }
}

/// A batch's answer and its results, checked against the ids sent.
struct Answered {
    answer: Value,
    results: Vec<BatchResult>,
}

/// Documents waiting to be sent, with the input line of each (to name it when the batch is
/// refused).
#[derive(Default)]
struct Batch {
    documents: Vec<InsertRequest>,
    lines: Vec<u64>,
}

/// Streams a JSONL file into a collection through the batch route, `concurrency` requests in
/// flight; every answer is written to `answers`, in input order, when given (the caller makes
/// it an atomic output and commits it on success).
///
/// # Errors
/// An unreadable file or a line without the id or text (named by file, line and field), a
/// failed connection, a request the service refused as a whole, or an answer that does not
/// answer each document sent, in order (then the load stops: it is not a neardup service, or
/// something in between changed the answer); the summary of what was answered before is in
/// the message.
pub async fn load(
    client: &Client,
    options: &LoadOptions,
    answers: Option<&mut dyn Write>,
) -> Result<LoadSummary, ClientError> {
    let mut answers = answers;
    let start = Instant::now();
    let name = options.input.display().to_string();
    let reader = open_input(&options.input, &name)?;
    let path = routes::fill(routes::DOCUMENTS_BATCH, &options.collection, None);
    let mut summary = LoadSummary::default();
    let mut in_flight: VecDeque<tokio::task::JoinHandle<Result<Answered, ClientError>>> =
        VecDeque::new();
    let mut batch = Batch::default();
    let mut lines = reader.lines();
    let mut line_number = 0u64;
    loop {
        let line = lines.next();
        let end = line.is_none();
        if let Some(line) = line {
            line_number += 1;
            let line = line.map_err(|e| ClientError(format!("{name}:{line_number}: {e}")))?;
            let Some(document) = read_document(&line, options, &name, line_number)? else {
                continue;
            };
            batch.documents.push(document);
            batch.lines.push(line_number);
        }
        if batch.documents.len() >= options.batch || (end && !batch.documents.is_empty()) {
            let sending = send_batch(
                client.clone(),
                path.clone(),
                name.clone(),
                std::mem::take(&mut batch),
            );
            in_flight.push_back(tokio::spawn(sending));
        }
        while in_flight.len() >= options.concurrency.max(1) || (end && !in_flight.is_empty()) {
            let Some(handle) = in_flight.pop_front() else {
                break;
            };
            let answered = handle
                .await
                .map_err(|e| ClientError(format!("a request task failed: {e}")))?
                .map_err(|e| {
                    ClientError(format!(
                        "{e} (after {} documents were answered: {} stored, {} duplicates)",
                        summary.sent, summary.stored, summary.duplicates
                    ))
                })?;
            summary.record(answered, &mut answers)?;
        }
        if end {
            break;
        }
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

fn open_input(input: &Path, name: &str) -> Result<Box<dyn BufRead>, ClientError> {
    Ok(if input == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            File::open(input).map_err(|e| ClientError(format!("{name}: cannot open: {e}")))?,
        ))
    })
}

/// The document of one input line; `None` for a blank line.
fn read_document(
    line: &str,
    options: &LoadOptions,
    name: &str,
    line_number: u64,
) -> Result<Option<InsertRequest>, ClientError> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let record: Value = serde_json::from_str(line)
        .map_err(|e| ClientError(format!("{name}:{line_number}: not a JSON object: {e}")))?;
    let field = |f: &str, flag: &str| -> Result<&Value, ClientError> {
        record.get(f).ok_or_else(|| {
            let present = match record.as_object() {
                Some(object) if !object.is_empty() => {
                    let names: Vec<String> = object.keys().map(|k| format!("{k:?}")).collect();
                    format!(
                        "the object has {}: give the one to read with {flag}",
                        names.join(", ")
                    )
                }
                Some(_) => "the object has no fields".to_owned(),
                None => format!("the line holds {record}, not a JSON object"),
            };
            ClientError(format!("{name}:{line_number}: no field {f:?}; {present}"))
        })
    };
    let id = match field(&options.id_field, "--id-field")? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(ClientError(format!(
                "{name}:{line_number}: field {:?} is {other}, not a string or a number",
                options.id_field
            )))
        }
    };
    let text = field(&options.text_field, "--text-field")?
        .as_str()
        .ok_or_else(|| {
            ClientError(format!(
                "{name}:{line_number}: field {:?} is not a string",
                options.text_field
            ))
        })?;
    let time = options
        .time_field
        .as_ref()
        .and_then(|time_field| record.get(time_field).cloned());
    Ok(Some(InsertRequest {
        id,
        text: text.to_owned(),
        time,
    }))
}

/// Sends one batch and checks its answer against the documents sent; a refusal of the whole
/// batch names the input line of the document concerned when it can.
async fn send_batch(
    client: Client,
    path: String,
    name: String,
    batch: Batch,
) -> Result<Answered, ClientError> {
    let ids: Vec<String> = batch.documents.iter().map(|d| d.id.clone()).collect();
    let lines = batch.lines;
    let body = InsertBatchRequest {
        documents: batch.documents,
    };
    let (status, answer) = client.send_json(Method::POST, &path, &body).await?;
    let span = match (lines.first(), lines.last()) {
        (Some(first), Some(last)) => format!("{name}:{first}-{last}"),
        _ => name.clone(),
    };
    if status == 200 {
        let results = answers::batch_results(&answer, &ids).map_err(|why| {
            ClientError(format!(
                "{span}: POST {path}: {why}; the load stops (is --url a neardup service?)"
            ))
        })?;
        return Ok(Answered { answer, results });
    }
    let refusal = match status {
        400..=599 => answers::check(Expected::Inserted, status, &answer),
        _ => Err(format!("unexpected status {status}")),
    };
    refusal.map_err(|why| {
        ClientError(format!(
            "{span}: POST {path}: status {status}: {why} (is --url a neardup service?)"
        ))
    })?;
    // A field such as `documents[3].text` names the document: give its line.
    let error = &answer["error"];
    let field = error["field"].as_str().unwrap_or_default();
    let at = field
        .strip_prefix("documents[")
        .and_then(|rest| rest.split(']').next())
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| lines.get(i));
    let message = error["message"].as_str().unwrap_or_default();
    Err(ClientError(match at {
        Some(line) => format!(
            "{name}:{line}: the service refused the batch holding this line ({status}, field \
             {field}): {message}"
        ),
        None => format!(
            "{span}: the service refused the batch ({status}, {}): {message}",
            error["code"].as_str().unwrap_or_default()
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_with_refusals_says_how_many_and_why() {
        // Issue 44, item 13: `client load` exited 0 after 190 refusals.
        let mut summary = LoadSummary {
            sent: 250,
            stored: 60,
            ..LoadSummary::default()
        };
        assert_eq!(summary.refusals(), None);
        summary.refused.insert("id_exists".into(), 180);
        summary.refused.insert("invalid_value".into(), 10);
        assert_eq!(summary.refused_count(), 190);
        assert_eq!(
            summary.refusals().unwrap(),
            "190 of 250 documents were refused (180 id_exists, 10 invalid_value); the summary \
             above names the first"
        );
    }
}
