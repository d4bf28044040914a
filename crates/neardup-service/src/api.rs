//! The HTTP contract as types: the body of every request and every answer of the routes in
//! [`crate::http`], shared by the server, the [`client`](crate::client) and the CLI.
//!
//! Requests refuse unknown fields. The server reads a body in two steps so that every
//! refusal keeps its stable message and field (`documents[3].text`): the checks of
//! `http/body.rs` first (types, lengths, limits, each named), then these types'
//! `Deserialize`, which cannot fail on a body the checks passed. A collection's settings
//! (`PUT /v1/collections/{name}`) are the one open body: any parameter of the method by
//! name, read by [`Settings::from_json`](crate::Settings::from_json).
//!
//! Answers serialise in the order of their fields, which is the order of the keys on the
//! wire. The OpenAPI document (`openapi.json`, served at `GET /v1/openapi.json`) describes
//! the same bodies; a test checks each schema's properties and required keys against these
//! types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ServiceError;
use crate::settings::Settings;

/// The routes, one table: the server mounts these patterns ([`crate::http`]), the token
/// check reads them, and the client fills them ([`routes::fill`]).
pub mod routes {
    /// The console page.
    pub const CONSOLE: &str = "/";
    /// Liveness.
    pub const HEALTH: &str = "/healthz";
    /// Prometheus metrics.
    pub const METRICS: &str = "/metrics";
    /// The OpenAPI document.
    pub const OPENAPI: &str = "/v1/openapi.json";
    /// The list of collections.
    pub const COLLECTIONS: &str = "/v1/collections";
    /// One collection: create, show, drop.
    pub const COLLECTION: &str = "/v1/collections/{name}";
    /// Check-and-insert one document.
    pub const DOCUMENTS: &str = "/v1/collections/{name}/documents";
    /// Check-and-insert many.
    pub const DOCUMENTS_BATCH: &str = "/v1/collections/{name}/documents/batch";
    /// One stored document: read, delete.
    pub const DOCUMENT: &str = "/v1/collections/{name}/documents/{id}";
    /// A collection's recent activity.
    pub const ACTIVITY: &str = "/v1/collections/{name}/activity";
    /// Check one text.
    pub const CHECK: &str = "/v1/collections/{name}/check";
    /// Check many texts.
    pub const CHECK_BATCH: &str = "/v1/collections/{name}/check/batch";

    /// `route` with `{name}` and `{id}` filled, each percent-encoded as a path segment.
    pub fn fill(route: &str, name: &str, id: Option<&str>) -> String {
        let path = route.replace("{name}", &segment(name));
        match id {
            Some(id) => path.replace("{id}", &segment(id)),
            None => path,
        }
    }

    /// Percent-encodes a path segment (collection names and ids).
    pub fn segment(text: &str) -> String {
        let mut out = String::new();
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }
}

/// A document to check and insert: `POST /v1/collections/{name}/documents`, and each
/// document of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertRequest {
    /// The caller's id: 1 to `--max-id-bytes` bytes, never overwritten.
    pub id: String,
    /// The text.
    pub text: String,
    /// Its own time: seconds since the Unix epoch (a number) or an RFC 3339 string; absent
    /// or null: the insertion time. Kept as JSON: the server reads and names a bad one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Value>,
}

/// `POST /v1/collections/{name}/documents/batch`: documents checked and inserted in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertBatchRequest {
    /// The documents, at most `--max-batch`.
    pub documents: Vec<InsertRequest>,
}

/// `POST /v1/collections/{name}/check`: the stored documents a text matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The text.
    pub text: String,
    /// The most matches (1 to `--max-matches`; 10 when absent or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// `POST /v1/collections/{name}/check/batch`: the matches of each text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBatchRequest {
    /// The texts, at most `--max-batch`.
    pub texts: Vec<String>,
    /// The most matches per text (as in [`CheckRequest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// Every error: `{"error": {"code", "message", "field"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorAnswer {
    /// What went wrong.
    pub error: ErrorDetail,
}

impl ServiceError {
    /// The answer's body.
    pub fn body(&self) -> ErrorAnswer {
        ErrorAnswer {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message.clone(),
                field: self.field.clone(),
            },
        }
    }
}

/// The body of an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A stable, machine-readable code (`unknown_collection`, `id_exists`, ...).
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// The request field concerned (`text`, `documents[3].id`), null when none.
    #[serde(default)]
    pub field: Option<String>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// `ok`, or `degraded` when a collection could not be opened at start.
    pub status: String,
    /// What is degraded (never which collection: the route needs no token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A collection: `PUT` and `GET /v1/collections/{name}`, and each open collection of the
/// list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionAnswer {
    /// The name.
    pub name: String,
    /// Its settings as stored (the method's parameters as given).
    pub settings: Settings,
    /// Its counts and sizes.
    pub stats: Stats,
}

/// `GET /v1/collections/{name}/activity`: the latest duplicates and the counters over time
/// (in memory: both restart empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// The latest duplicates answered (at most 50), newest first.
    pub recent_duplicates: Vec<RecentDuplicate>,
    /// Seconds between samples.
    pub sample_seconds: u64,
    /// The counters sampled every `sample_seconds` over the last day, oldest first.
    pub history: Vec<Sample>,
}

/// A duplicate answered by an insert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecentDuplicate {
    /// When it was answered (RFC 3339, UTC).
    pub time: String,
    /// The id sent.
    pub id: String,
    /// The stored document it matched.
    pub duplicate_of: String,
    /// The verified similarity (1 for an exact copy).
    pub similarity: f64,
    /// The Hamming distance, for methods with fingerprints.
    pub distance: Option<u32>,
    /// Its text (the first 500 characters), when the collection keeps texts.
    pub text: Option<String>,
}

/// The counters at one time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// Live documents.
    pub documents: u64,
    /// Documents stored since the collection was created.
    pub stored: u64,
    /// Inserts answered as duplicates.
    pub duplicates: u64,
    /// Texts checked.
    pub checks: u64,
}

/// A collection's counts and sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Live stored documents.
    pub documents: u64,
    /// Partitions (segment files) held.
    pub partitions: u64,
    /// Bytes of the segment files.
    pub disk_bytes: u64,
    /// Approximate bytes of the in-memory indexes and ids.
    pub memory_bytes: u64,
    /// The sequence number of the next stored document.
    pub next_seq: u64,
    /// Why writes stopped (a failed sync), until a restart.
    pub failed: Option<String>,
    /// Candidates left unverified by the per-text cap (template floods).
    pub candidates_capped: u64,
    /// Texts checked.
    pub checks: u64,
    /// Documents deleted.
    pub deleted: u64,
    /// Inserts answered as duplicates.
    pub duplicates: u64,
    /// Documents expired (dropped with their partition).
    pub expired: u64,
    /// Groups written (one sync each).
    pub groups: u64,
    /// Index level merges installed since the collection was created (built off the
    /// request path; absent from older servers' answers).
    #[serde(default)]
    pub merges: u64,
    /// Partitions dropped.
    pub partitions_dropped: u64,
    /// Bytes cut from a torn write at opening.
    pub recovered_bytes: u64,
    /// Inserts refused (existing id, bad time, store failure).
    pub refused: u64,
    /// Documents stored.
    pub stored: u64,
    /// Candidates verified (read and compared), for inserts and checks: at most 128 a text.
    pub verified: u64,
    /// The frequencies learned from the stream, for a collection with `max_df` or
    /// `boilerplate_df` set; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning: Option<Box<StreamLearning>>,
}

/// What a collection learned from its stream of inserts (see `docs/service.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamLearning {
    /// Documents the counts cover at most (`frequency_window`).
    pub window: u64,
    /// Documents counted before anything is learned (`frequency_warmup`).
    pub warmup: u64,
    /// Documents in the window now.
    pub documents: u64,
    /// Documents counted since the window began (kept across restarts in `learning.bin`).
    pub counted: u64,
    /// Whether the warm-up is over.
    pub warm: bool,
    /// Times the method learned from the window since the collection opened.
    pub learned: u64,
    /// The common-shingle limit in documents, as last learned.
    pub max_df: Option<u64>,
    /// The boilerplate-line limit in documents, as last learned.
    pub boilerplate_df: Option<u64>,
    /// True when the line counts were too crowded to tell the limit apart (a count-min
    /// cell holds on average more than a quarter of `boilerplate_df`): no line is removed.
    /// Raise `frequency_memory`, or give `boilerplate_df` as a fraction of the window.
    pub saturated: bool,
    /// Bytes of the window's tables.
    pub memory_bytes: u64,
}

/// A collection that could not be opened at start, in the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnavailableCollection {
    /// The name.
    pub name: String,
    /// Always true.
    pub unavailable: bool,
    /// Why it could not be opened.
    pub error: String,
}

/// One collection of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ListedCollection {
    /// An open collection.
    Open(Box<CollectionAnswer>),
    /// One that could not be opened at start.
    Unavailable(UnavailableCollection),
}

impl ListedCollection {
    /// The collection's name.
    pub fn name(&self) -> &str {
        match self {
            ListedCollection::Open(collection) => &collection.name,
            ListedCollection::Unavailable(collection) => &collection.name,
        }
    }
}

/// `GET /v1/collections`: every collection, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collections {
    /// The collections, sorted by name.
    pub collections: Vec<ListedCollection>,
}

/// `DELETE /v1/collections/{name}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// The name.
    pub name: String,
    /// Always true (an unknown collection is a 404).
    pub dropped: bool,
}

/// The answer to one insert: `POST .../documents`, and each accepted document of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inserted {
    /// The id.
    pub id: String,
    /// Whether it was stored (false: a duplicate).
    pub stored: bool,
    /// The stored document it duplicates.
    pub duplicate_of: Option<String>,
    /// Their similarity.
    pub similarity: Option<f64>,
    /// Their Hamming distance, for fingerprint methods.
    pub distance: Option<u32>,
}

/// A document of a batch that was refused: the error it would have had alone, its id and
/// status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    /// Why.
    pub error: ErrorDetail,
    /// The document's id.
    pub id: String,
    /// The status it would have had alone.
    pub status: u16,
}

/// One result of a batch insert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BatchItem {
    /// Stored or answered as a duplicate.
    Inserted(Inserted),
    /// Refused.
    Refused(Refused),
}

/// `POST .../documents/batch`: one result per document sent, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InsertBatchAnswer {
    /// The results.
    pub results: Vec<BatchItem>,
}

/// A stored document that a text matches (the schema `Match`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// Its id.
    pub id: String,
    /// The verified similarity.
    pub similarity: f64,
    /// The Hamming distance, for fingerprint methods.
    pub distance: Option<u32>,
}

/// `POST .../check`: the matches of a text, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matches {
    /// The matches.
    pub matches: Vec<Found>,
}

/// `POST .../check/batch`: the matches of each text, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckBatchAnswer {
    /// The matches of each text.
    pub results: Vec<Matches>,
}

/// `GET .../documents/{id}`: a stored document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDocument {
    /// Its id.
    pub id: String,
    /// Its retention time (its own time, else when it was inserted), RFC 3339.
    pub time: String,
    /// When it was inserted, RFC 3339.
    pub inserted: String,
    /// Its fingerprint in hex, for fingerprint methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The largest Hamming distance it matches at, for fingerprint methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_distance: Option<u32>,
    /// When it expires, with a retention window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Its text, when the collection keeps texts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `DELETE .../documents/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deleted {
    /// The id.
    pub id: String,
    /// Always true (an unknown document is a 404).
    pub deleted: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::settings::{RetentionBy, Settings};

    fn same_bytes(typed: impl Serialize, reference: Value) {
        let typed = serde_json::to_string(&typed).unwrap();
        assert_eq!(typed, serde_json::to_string(&reference).unwrap());
    }

    fn inserted(stored: bool) -> Inserted {
        Inserted {
            id: "doc-1".into(),
            stored,
            duplicate_of: (!stored).then(|| "doc-0".into()),
            similarity: (!stored).then_some(0.8125),
            distance: (!stored).then_some(3),
        }
    }

    fn stats() -> Stats {
        Stats {
            documents: 10,
            partitions: 2,
            disk_bytes: 4096,
            memory_bytes: 1 << 20,
            next_seq: 12,
            failed: None,
            candidates_capped: 1,
            checks: 2,
            deleted: 3,
            duplicates: 4,
            expired: 5,
            groups: 6,
            partitions_dropped: 7,
            recovered_bytes: 8,
            refused: 9,
            stored: 10,
            verified: 11,
            merges: 13,
            learning: None,
        }
    }

    #[test]
    fn inserts_matches_and_refusals_keep_their_bytes() {
        for stored in [true, false] {
            let answer = inserted(stored);
            let reference = json!({
                "id": answer.id,
                "stored": answer.stored,
                "duplicate_of": answer.duplicate_of,
                "similarity": answer.similarity,
                "distance": answer.distance,
            });
            same_bytes(&answer, reference);
        }
        let found = Found {
            id: "a".into(),
            similarity: 1.0 / 3.0,
            distance: None,
        };
        let reference =
            json!({"id": found.id, "similarity": found.similarity, "distance": found.distance});
        same_bytes(
            Matches {
                matches: vec![found.clone()],
            },
            json!({ "matches": [reference] }),
        );
        let error = crate::error::ServiceError::invalid("time", "too late").within("documents[2]");
        let detail = json!({"code": error.code, "message": error.message, "field": error.field});
        let mut reference = json!({ "error": detail });
        reference["id"] = json!("x");
        reference["status"] = json!(error.status);
        let refused = Refused {
            error: error.body().error,
            id: "x".into(),
            status: error.status,
        };
        same_bytes(BatchItem::Refused(refused), reference);
    }

    #[test]
    fn collections_documents_and_small_answers_keep_their_bytes() {
        let settings = Settings {
            method: "simhash".into(),
            params: [("max_distance".to_owned(), "3".to_owned())].into(),
            retention: Some("48h".into()),
            retention_by: RetentionBy::Time,
            keep_text: true,
            partition_documents: 1000,
            frequency_window: None,
            frequency_warmup: None,
            frequency_memory: None,
        };
        let stats = stats();
        let mut stats_reference = json!({
            "documents": 10, "partitions": 2, "disk_bytes": 4096, "memory_bytes": 1 << 20,
            "next_seq": 12, "failed": null,
        });
        let counters = [
            ("stored", 10),
            ("duplicates", 4),
            ("refused", 9),
            ("checks", 2),
            ("groups", 6),
            ("deleted", 3),
            ("expired", 5),
            ("partitions_dropped", 7),
            ("recovered_bytes", 8),
            ("candidates_capped", 1),
            ("verified", 11),
            ("merges", 13),
        ];
        let sorted: std::collections::BTreeMap<&str, u64> = counters.into_iter().collect();
        for (name, value) in sorted {
            stats_reference[name] = json!(value);
        }
        let collection = CollectionAnswer {
            name: "c".into(),
            settings: settings.clone(),
            stats,
        };
        let reference =
            json!({"name": "c", "settings": settings, "stats": stats_reference.clone()});
        same_bytes(&collection, reference.clone());
        let list = Collections {
            collections: vec![
                ListedCollection::Open(Box::new(collection)),
                ListedCollection::Unavailable(UnavailableCollection {
                    name: "d".into(),
                    unavailable: true,
                    error: "corrupt".into(),
                }),
            ],
        };
        let unavailable = json!({"name": "d", "unavailable": true, "error": "corrupt"});
        same_bytes(list, json!({"collections": [reference, unavailable]}));

        let mut document = json!({"id": "a", "time": "2026-11-23T08:00:00.000Z", "inserted": "2026-11-23T08:00:01.000Z"});
        same_bytes(
            StoredDocument {
                id: "a".into(),
                time: "2026-11-23T08:00:00.000Z".into(),
                inserted: "2026-11-23T08:00:01.000Z".into(),
                fingerprint: None,
                max_distance: None,
                expires: None,
                text: None,
            },
            document.clone(),
        );
        document["fingerprint"] = json!("00000000000000ff");
        document["max_distance"] = json!(3);
        document["expires"] = json!("2026-11-25T08:00:00.000Z");
        document["text"] = json!("今天");
        same_bytes(
            StoredDocument {
                id: "a".into(),
                time: "2026-11-23T08:00:00.000Z".into(),
                inserted: "2026-11-23T08:00:01.000Z".into(),
                fingerprint: Some("00000000000000ff".into()),
                max_distance: Some(3),
                expires: Some("2026-11-25T08:00:00.000Z".into()),
                text: Some("今天".into()),
            },
            document,
        );
        same_bytes(
            Dropped {
                name: "c".into(),
                dropped: true,
            },
            json!({"name": "c", "dropped": true}),
        );
        same_bytes(
            Deleted {
                id: "a".into(),
                deleted: true,
            },
            json!({"id": "a", "deleted": true}),
        );
        same_bytes(
            Health {
                status: "ok".into(),
                message: None,
            },
            json!({"status": "ok"}),
        );
        same_bytes(
            Health {
                status: "degraded".into(),
                message: Some("m".into()),
            },
            json!({"status": "degraded", "message": "m"}),
        );
    }

    #[test]
    fn requests_refuse_unknown_fields_and_take_null_as_absent() {
        let request: InsertRequest =
            serde_json::from_value(json!({"id": "a", "text": "t", "time": null})).unwrap();
        assert_eq!(request.time, None);
        assert!(
            serde_json::from_value::<InsertRequest>(json!({"id": "a", "text": "t", "x": 1}))
                .is_err()
        );
        assert!(serde_json::from_value::<CheckRequest>(json!({"text": "t", "limits": 1})).is_err());
        let check: CheckRequest =
            serde_json::from_value(json!({"text": "t", "limit": null})).unwrap();
        assert_eq!(check.limit, None);
        // The client's bodies: the keys it always sent, in the same order.
        let body = InsertRequest {
            id: "a".into(),
            text: "t".into(),
            time: Some(json!(1.5)),
        };
        same_bytes(body, json!({"id": "a", "text": "t", "time": 1.5}));
    }
}
