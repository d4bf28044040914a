//! The answers the client expects, as serde structs. Every answer is checked against its
//! route's shape, and a batch's against what was sent (one result per document, in order,
//! with the same ids), so that a wrong server, a proxy's error page or a truncated answer is
//! an error with a message, never a success.

use serde::Deserialize;
use serde_json::Value;

use crate::api::{CollectionAnswer, Collections, Deleted, Dropped, Matches, StoredDocument};
pub use crate::api::{ErrorAnswer, ErrorDetail, Inserted, Refused};

/// One result of a batch insert.
#[derive(Debug, Clone)]
pub enum BatchResult {
    /// Stored or answered as a duplicate.
    Inserted(Inserted),
    /// Refused.
    Refused(Refused),
}

#[derive(Deserialize)]
struct Results {
    results: Vec<Value>,
}

/// The kind of answer a route gives on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A collection: `{"name", "settings", "stats"}`.
    Collection,
    /// `{"collections": [{"name", ...}]}`.
    Collections,
    /// `{"name", "dropped": true}`.
    Dropped,
    /// `{"id", "stored", ...}`.
    Inserted,
    /// `{"matches": [{"id", "similarity", ...}]}`.
    Matches,
    /// A stored document: `{"id", ...}`.
    Document,
    /// `{"id", "deleted": true}`.
    Deleted,
}

impl Expected {
    fn what(self) -> &'static str {
        match self {
            Expected::Collection => "a collection",
            Expected::Collections => "a list of collections",
            Expected::Dropped => "a dropped collection",
            Expected::Inserted => "an insert's answer",
            Expected::Matches => "a check's matches",
            Expected::Document => "a stored document",
            Expected::Deleted => "a deleted document",
        }
    }
}

fn shape<'a, T: Deserialize<'a>>(answer: &'a Value, what: &str) -> Result<T, String> {
    T::deserialize(answer).map_err(|e| format!("the answer is not {what}: {e}"))
}

/// Checks an answer against what its route promises: an error body for a 4xx or 5xx, the
/// `expected` shape for a 2xx, nothing else.
///
/// # Errors
/// What is wrong with the answer.
pub fn check(expected: Expected, status: u16, answer: &Value) -> Result<(), String> {
    match status {
        200..=299 => check_success(expected, answer),
        400..=599 => {
            shape::<ErrorAnswer>(answer, "an error ({\"error\": {\"code\", \"message\"}})")
                .map(drop)
        }
        _ => Err(format!("unexpected status {status}")),
    }
}

fn check_success(expected: Expected, answer: &Value) -> Result<(), String> {
    let what = expected.what();
    match expected {
        Expected::Collection => shape::<CollectionAnswer>(answer, what).map(drop),
        Expected::Collections => shape::<Collections>(answer, what).map(drop),
        Expected::Dropped => match shape::<Dropped>(answer, what)?.dropped {
            true => Ok(()),
            false => Err("the answer says the collection was not dropped".to_owned()),
        },
        Expected::Inserted => shape::<Inserted>(answer, what).map(drop),
        Expected::Matches => shape::<Matches>(answer, what).map(drop),
        Expected::Document => shape::<StoredDocument>(answer, what).map(drop),
        Expected::Deleted => match shape::<Deleted>(answer, what)?.deleted {
            true => Ok(()),
            false => Err("the answer says the document was not deleted".to_owned()),
        },
    }
}

/// The results of a batch insert, checked against the ids sent, in order.
///
/// # Errors
/// Not `{"results": [...]}`, not one result per document sent, a result for another id, or a
/// result that is neither an insert's answer nor a refusal.
pub fn batch_results(answer: &Value, ids: &[String]) -> Result<Vec<BatchResult>, String> {
    let results = shape::<Results>(answer, "a batch's results ({\"results\": [...]})")?.results;
    if results.len() != ids.len() {
        return Err(format!(
            "the answer holds {} results for {} documents sent",
            results.len(),
            ids.len()
        ));
    }
    results
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(i, (result, id))| {
            let checked = if result.get("error").is_some() {
                shape::<Refused>(result, "a refusal").map(BatchResult::Refused)
            } else {
                shape::<Inserted>(result, "an insert's answer").map(BatchResult::Inserted)
            };
            let checked = checked.map_err(|e| format!("result {i}: {e}"))?;
            let answered = match &checked {
                BatchResult::Inserted(inserted) => &inserted.id,
                BatchResult::Refused(refused) => &refused.id,
            };
            if answered != id {
                return Err(format!(
                    "result {i} is for id {answered:?}, but document {i} sent was {id:?}"
                ));
            }
            Ok(checked)
        })
        .collect()
}

/// The number of results of a batch check, checked against the texts sent.
///
/// # Errors
/// Not one `{"matches": [...]}` per text.
pub fn check_results(answer: &Value, texts: usize) -> Result<(), String> {
    let results = shape::<Results>(answer, "a batch's results ({\"results\": [...]})")?.results;
    if results.len() != texts {
        return Err(format!(
            "the answer holds {} results for {texts} texts sent",
            results.len()
        ));
    }
    for (i, result) in results.iter().enumerate() {
        shape::<Matches>(result, "a check's matches").map_err(|e| format!("result {i}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_of_the_wrong_shape_or_count_are_refused() {
        let ids = vec!["a".to_owned(), "b".to_owned()];
        let good = json!({"results": [
            {"id": "a", "stored": true, "duplicate_of": null},
            {"id": "b", "status": 409, "error": {"code": "id_exists", "message": "m", "field": null}},
        ]});
        assert_eq!(batch_results(&good, &ids).unwrap().len(), 2);
        for (answer, expected) in [
            (json!({"results": []}), "holds 0 results for 2 documents"),
            (
                json!({"results": [{"id": "a", "stored": true}]}),
                "holds 1 results for 2",
            ),
            (json!({"ok": true}), "not a batch's results"),
            (
                json!({"results": [{"id": "a", "stored": true}, {"id": "c", "stored": true}]}),
                "result 1 is for id \"c\"",
            ),
            (
                json!({"results": [{"id": "a", "stored": "yes"}, {"id": "b", "stored": true}]}),
                "result 0: the answer is not an insert's answer",
            ),
        ] {
            let error = batch_results(&answer, &ids).unwrap_err();
            assert!(error.contains(expected), "{answer}: {error}");
        }
        assert!(check(
            Expected::Inserted,
            200,
            &json!({"id": "a", "stored": false})
        )
        .is_ok());
        assert!(check(Expected::Inserted, 200, &json!({"ok": 1})).is_err());
        assert!(check(
            Expected::Inserted,
            409,
            &json!({"error": {"code": "c", "message": "m"}})
        )
        .is_ok());
        assert!(check(Expected::Inserted, 502, &json!("Bad Gateway")).is_err());
        assert!(check(
            Expected::Deleted,
            200,
            &json!({"id": "a", "deleted": false})
        )
        .is_err());
        assert!(check(Expected::Matches, 302, &json!({})).is_err());
    }
}
