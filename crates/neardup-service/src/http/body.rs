//! Reading request bodies into the types of [`crate::api`].
//!
//! A body is read as strict JSON (no repeated key, [`super::strict_json`]), then checked
//! field by field so that each refusal has its stable status, message and field (`missing`,
//! `expected a string, got a number`, `unknown field (expected: id, text, time)`, a text
//! over `--max-text-bytes`, ...), and only then given to the type's `Deserialize`, which
//! therefore never refuses.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::connections::BodyStalled;
use super::{strict_json, HttpConfig};
use crate::api::{CheckBatchRequest, CheckRequest, InsertBatchRequest, InsertRequest};
use crate::collection::NewDocument;
use crate::error::ServiceError;
use crate::settings::parse_time;

/// The fields of each request, in the order the messages list them.
const INSERT_FIELDS: &[&str] = &["id", "text", "time"];
const INSERT_BATCH_FIELDS: &[&str] = &["documents"];
const CHECK_FIELDS: &[&str] = &["text", "limit"];
const CHECK_BATCH_FIELDS: &[&str] = &["texts", "limit"];

/// The fields each request type takes, for the test that compares them with the types and
/// the OpenAPI document.
#[cfg(test)]
pub(crate) const FIELDS: [(&str, &[&str]); 4] = [
    ("InsertRequest", INSERT_FIELDS),
    ("InsertBatchRequest", INSERT_BATCH_FIELDS),
    ("CheckRequest", CHECK_FIELDS),
    ("CheckBatchRequest", CHECK_BATCH_FIELDS),
];

/// Reads a JSON body: an empty body is `null`; bad JSON, a repeated key, oversized and stalled
/// bodies are JSON errors.
pub(super) fn json_body(body: Result<Bytes, BytesRejection>) -> Result<Value, ServiceError> {
    let bytes = body.map_err(|rejection| {
        if let Some(stalled) = stalled(&rejection) {
            return ServiceError::new(408, "body_timeout", stalled.to_string());
        }
        let status = rejection.status().as_u16();
        let code = if status == 413 {
            "body_too_large"
        } else {
            "bad_request"
        };
        ServiceError::new(status, code, rejection.body_text())
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    strict_json::parse(&bytes)
}

/// The stall behind a body that could not be read, if that is why.
fn stalled(rejection: &BytesRejection) -> Option<&BodyStalled> {
    let mut error: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(current) = error {
        if let Some(stalled) = current.downcast_ref::<BodyStalled>() {
            return Some(stalled);
        }
        error = current.source();
    }
    None
}

/// The body of `POST .../documents`.
///
/// # Errors
/// A wrong type, an unknown or missing field, an id or text out of bounds, a bad time.
pub(super) fn insert_request(
    body: Value,
    config: &HttpConfig,
) -> Result<InsertRequest, ServiceError> {
    check_document(&body, config)?;
    typed(body)
}

/// The body of `POST .../documents/batch`; errors inside a document name it
/// (`documents[3].text`).
///
/// # Errors
/// As [`insert_request`] for each document, and a batch over `--max-batch`.
pub(super) fn insert_batch_request(
    body: Value,
    config: &HttpConfig,
) -> Result<InsertBatchRequest, ServiceError> {
    let object = known_object(&body, INSERT_BATCH_FIELDS)?;
    let items = batch(object, "documents", config)?;
    for (i, item) in items.iter().enumerate() {
        check_document(item, config).map_err(|e| e.within(&format!("documents[{i}]")))?;
    }
    typed(body)
}

/// The body of `POST .../check`.
///
/// # Errors
/// A wrong type, an unknown or missing field, a text too long, a limit out of bounds.
pub(super) fn check_request(
    body: Value,
    config: &HttpConfig,
) -> Result<CheckRequest, ServiceError> {
    let object = known_object(&body, CHECK_FIELDS)?;
    text_value(object.get("text"), "text", config)?;
    check_limit(object, config)?;
    typed(body)
}

/// The body of `POST .../check/batch`; errors name the text (`texts[3]`).
///
/// # Errors
/// As [`check_request`] for each text, and a batch over `--max-batch`.
pub(super) fn check_batch_request(
    body: Value,
    config: &HttpConfig,
) -> Result<CheckBatchRequest, ServiceError> {
    let object = known_object(&body, CHECK_BATCH_FIELDS)?;
    let items = batch(object, "texts", config)?;
    for (i, item) in items.iter().enumerate() {
        text_value(Some(item), &format!("texts[{i}]"), config)?;
    }
    check_limit(object, config)?;
    typed(body)
}

/// The most matches a check returns: its `limit`, else 10 (at most `--max-matches`).
pub(super) fn limit(limit: Option<u64>, config: &HttpConfig) -> usize {
    limit.map_or(10.min(config.max_matches), |n| n as usize)
}

/// A checked document as the collection takes it.
///
/// # Errors
/// A bad time (never after [`insert_request`] passed).
pub(super) fn new_document(request: InsertRequest) -> Result<NewDocument, ServiceError> {
    Ok(NewDocument {
        time_ms: document_time(request.time.as_ref())?,
        id: request.id,
        text: request.text,
    })
}

/// A body that passed its checks as its type.
fn typed<T: DeserializeOwned>(body: Value) -> Result<T, ServiceError> {
    T::deserialize(body).map_err(|e| ServiceError::bad_request(format!("the body: {e}")))
}

fn known_object<'a>(
    value: &'a Value,
    known: &[&str],
) -> Result<&'a Map<String, Value>, ServiceError> {
    let object = value
        .as_object()
        .ok_or_else(|| ServiceError::bad_request("the body must be a JSON object"))?;
    refuse_unknown(object, known)?;
    Ok(object)
}

fn refuse_unknown(object: &Map<String, Value>, known: &[&str]) -> Result<(), ServiceError> {
    match object.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(ServiceError::bad_request(format!(
            "unknown field (expected: {})",
            known.join(", ")
        ))
        .field(key.clone())),
        None => Ok(()),
    }
}

/// Checks a text under the length limit; errors name `name`.
fn text_value(value: Option<&Value>, name: &str, config: &HttpConfig) -> Result<(), ServiceError> {
    match value {
        Some(Value::String(text)) => {
            if text.len() > config.max_text_bytes {
                return Err(ServiceError::new(
                    413,
                    "text_too_long",
                    format!(
                        "the text has {} bytes; the limit is {} (--max-text-bytes)",
                        text.len(),
                        config.max_text_bytes
                    ),
                )
                .field(name));
            }
            Ok(())
        }
        Some(other) => Err(ServiceError::bad_request(format!(
            "expected a string, got {}",
            kind(other)
        ))
        .field(name)),
        None => Err(ServiceError::bad_request("missing").field(name)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_document(value: &Value, config: &HttpConfig) -> Result<(), ServiceError> {
    let object = value.as_object().ok_or_else(|| {
        ServiceError::bad_request(format!("expected an object, got {}", kind(value)))
    })?;
    refuse_unknown(object, INSERT_FIELDS)?;
    let id = match object.get("id") {
        Some(Value::String(id)) => id,
        Some(other) => {
            return Err(ServiceError::bad_request(format!(
                "expected a string, got {}",
                kind(other)
            ))
            .field("id"))
        }
        None => return Err(ServiceError::bad_request("missing").field("id")),
    };
    if id.is_empty() || id.len() > config.max_id_bytes {
        return Err(ServiceError::invalid(
            "id",
            format!(
                "an id has 1 to {} bytes; this one has {}",
                config.max_id_bytes,
                id.len()
            ),
        ));
    }
    text_value(object.get("text"), "text", config)?;
    document_time(object.get("time")).map(drop)
}

/// A document's own time in milliseconds; absent or null: none.
fn document_time(value: Option<&Value>) -> Result<Option<i64>, ServiceError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => parse_time(value).map(Some).map_err(|m| {
            let status = if value.is_number() || value.is_string() {
                422
            } else {
                400
            };
            ServiceError::new(status, "invalid_value", m).field("time")
        }),
    }
}

fn check_limit(object: &Map<String, Value>, config: &HttpConfig) -> Result<(), ServiceError> {
    match object.get("limit") {
        None | Some(Value::Null) => Ok(()),
        Some(value) => value
            .as_u64()
            .filter(|&n| n >= 1 && n as usize <= config.max_matches)
            .map(drop)
            .ok_or_else(|| {
                ServiceError::invalid(
                    "limit",
                    format!(
                        "{value}: expected a whole number from 1 to {}",
                        config.max_matches
                    ),
                )
            }),
    }
}

fn batch<'a>(
    object: &'a Map<String, Value>,
    name: &str,
    config: &HttpConfig,
) -> Result<&'a [Value], ServiceError> {
    let items = match object.get(name) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ServiceError::bad_request(format!(
                "expected an array, got {}",
                kind(other)
            ))
            .field(name))
        }
        None => return Err(ServiceError::bad_request("missing").field(name)),
    };
    if items.len() > config.max_batch {
        return Err(ServiceError::new(
            413,
            "batch_too_large",
            format!(
                "{} items; a batch holds at most {} (--max-batch)",
                items.len(),
                config.max_batch
            ),
        )
        .field(name));
    }
    Ok(items)
}
