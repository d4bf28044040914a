//! The rows of the JSON-lines files a run writes for other tools, one type per file: every
//! writer serialises them and every reader deserialises them, so that the field names,
//! their order and which fields may be absent are written down once.
//!
//! - [`ClusterRow`] for `dedup --clusters`, one row per input document;
//! - [`PairRow`] for `dedup --pairs` (with `similarity`, and `distance` for methods with
//!   fingerprints) and `hamming` (with `distance` only);
//! - [`FingerprintRow`] for `fingerprint`;
//! - [`GroupRow`] for `hamming --groups`;
//! - [`SpanRow`] for `spans --report` and [`RangesRow`] for `spans --ranges`.
//!
//! Ids are [`DocId`]s, as read from the input (a string or a number, `"7"` is not `7`);
//! fields are written in the order they are declared, `null` for an absent value unless a
//! field says it is left out.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

/// A document's id as its input gave it: a number stays a number and a string a string, so
/// that `"7"` and `7` are two ids, written back as they were read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DocId {
    /// A JSON number (`7`, `7.5`), or a record number when the input has no id field.
    Number(Number),
    /// A string.
    Text(String),
}

impl DocId {
    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            DocId::Number(number) => Value::Number(number.clone()),
            DocId::Text(text) => Value::String(text.clone()),
        }
    }
}

/// The ids the pipeline reads are strings or numbers; any other JSON value (which no reader
/// gives) becomes the text of its JSON, so that no id is lost.
impl From<Value> for DocId {
    fn from(value: Value) -> DocId {
        match value {
            Value::Number(number) => DocId::Number(number),
            Value::String(text) => DocId::Text(text),
            other => DocId::Text(other.to_string()),
        }
    }
}

impl From<&Value> for DocId {
    fn from(value: &Value) -> DocId {
        DocId::from(value.clone())
    }
}

/// Its JSON text: `"k"` for a string, `7` for a number (as messages quote ids).
impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocId::Number(number) => write!(f, "{number}"),
            DocId::Text(text) => write!(f, "{}", Value::String(text.clone())),
        }
    }
}

impl Serialize for DocId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DocId::Number(number) => number.serialize(serializer),
            DocId::Text(text) => serializer.serialize_str(text),
        }
    }
}

impl<'de> Deserialize<'de> for DocId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DocId, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => Ok(DocId::Number(number)),
            Value::String(text) => Ok(DocId::Text(text)),
            other => Err(serde::de::Error::custom(format!(
                "an id is a string or a number, found {}",
                crate::input::describe(&other)
            ))),
        }
    }
}

/// One row of a clusters file (`dedup --clusters`): `{"id", "cluster", "duplicate_of",
/// "similarity"}`, one per input document, in input order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRow {
    /// The document's id.
    pub id: DocId,
    /// The id of its cluster's representative (the document itself when it is kept).
    pub cluster: DocId,
    /// The id of the kept document it duplicates; `null` when it is kept. May be absent
    /// when read.
    #[serde(default)]
    pub duplicate_of: Option<DocId>,
    /// Its similarity to `duplicate_of`; `null` when it is kept. May be absent when read.
    #[serde(default)]
    pub similarity: Option<f64>,
}

/// One row of a span report (`spans --report`, `dedup --span-report`): a removed text, how
/// many documents it was removed from (`count`) and how often (`occurrences`), the bytes its
/// removal took, and the first documents it was removed from (at most 100, in keep order;
/// `more_documents` says how many are not listed). Rows come by bytes removed, most first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanRow {
    /// The removed text.
    pub text: String,
    /// Documents it was removed from.
    pub count: u64,
    /// Times it was removed.
    pub occurrences: u64,
    /// Bytes removed, over all its occurrences.
    pub bytes_removed: u64,
    /// The first documents it was removed from.
    pub documents: Vec<DocId>,
    /// Documents it was removed from that `documents` does not list.
    pub more_documents: u64,
}

impl SpanRow {
    /// The row of a summary, with documents named by `id(index in keep order)`.
    pub fn new(
        summary: &neardup_engine::spans::SpanSummary<'_>,
        id: impl Fn(usize) -> DocId,
    ) -> SpanRow {
        let documents: Vec<DocId> = summary
            .document_indexes
            .iter()
            .map(|&doc| id(doc as usize))
            .collect();
        SpanRow {
            text: summary.text.to_owned(),
            count: summary.documents as u64,
            occurrences: summary.occurrences as u64,
            bytes_removed: summary.bytes_removed,
            more_documents: (summary.documents - documents.len()) as u64,
            documents,
        }
    }
}

/// One row of a ranges file (`spans --ranges`): a changed document by its 0-based index in
/// input order (`doc`) and its id, and its removed byte ranges `[start, end)` of the
/// original UTF-8 text, sorted, never touching, never cutting a character.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangesRow {
    /// The document's 0-based index in input order.
    pub doc: u64,
    /// Its id.
    pub id: DocId,
    /// The removed byte ranges.
    pub ranges: Vec<[u32; 2]>,
}

/// One row of a pairs file: `{"a", "b", "similarity", "distance"}`. `dedup --pairs` writes
/// every verified pair with its similarity, and its Hamming distance for methods with
/// fingerprints; `hamming` writes the distance only. An absent value is left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    /// One document's id.
    pub a: DocId,
    /// The other's.
    pub b: DocId,
    /// Their verified similarity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The Hamming distance of their fingerprints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
}

/// One row of a fingerprint file (`fingerprint`): `{"id", "fingerprint"}`, the fingerprint
/// in lowercase hex (16 digits for 64 bits, 32 for 128).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FingerprintRow {
    /// The document's id.
    pub id: DocId,
    /// The fingerprint in hex.
    pub fingerprint: String,
}

/// One row of a groups file (`hamming --groups`): `{"id", "group"}`, the group named by the
/// id of its first fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRow {
    /// The fingerprint's id.
    pub id: DocId,
    /// The id of the first fingerprint equal to it.
    pub group: DocId,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text<T: Serialize>(row: &T) -> String {
        serde_json::to_string(row).unwrap()
    }

    /// Ids of every kind a reader accepts, with numbers kept as written.
    fn ids() -> Vec<Value> {
        [
            "7",
            "\"doc-1\"",
            "1.50",
            "12345678901234567890123",
            "-3",
            "\"長い id\"",
            "1e3",
        ]
        .iter()
        .map(|text| serde_json::from_str(text).unwrap())
        .collect()
    }

    #[test]
    fn cluster_rows_are_written_as_the_json_rows_they_replace() {
        for id in ids() {
            for (duplicate_of, similarity) in [
                (None, None),
                (Some(json!("k")), Some(0.625)),
                (Some(json!(3)), Some(1.0)),
            ] {
                let row = ClusterRow {
                    id: id.clone().into(),
                    cluster: json!("k").into(),
                    duplicate_of: duplicate_of.clone().map(DocId::from),
                    similarity,
                };
                let old = json!({
                    "id": id,
                    "cluster": json!("k"),
                    "duplicate_of": duplicate_of,
                    "similarity": similarity,
                });
                assert_eq!(text(&row), text(&old));
            }
        }
        let kept = ClusterRow {
            id: json!(1).into(),
            cluster: json!(1).into(),
            duplicate_of: None,
            similarity: None,
        };
        assert_eq!(
            text(&kept),
            r#"{"id":1,"cluster":1,"duplicate_of":null,"similarity":null}"#
        );
    }

    #[test]
    fn pair_rows_are_written_as_the_json_rows_they_replace() {
        for id in ids() {
            for similarity in [0.4, 1.0, 0.1 + 0.2, 1e-7, f64::NAN] {
                for distance in [None, Some(0), Some(11)] {
                    let row = PairRow {
                        a: id.clone().into(),
                        b: json!("b").into(),
                        similarity: Some(similarity),
                        distance,
                    };
                    let mut old = json!({"a": id, "b": "b", "similarity": similarity});
                    if let Some(distance) = distance {
                        old["distance"] = json!(distance);
                    }
                    assert_eq!(text(&row), text(&old));
                }
            }
            let hamming = PairRow {
                a: id.clone().into(),
                b: json!(2).into(),
                similarity: None,
                distance: Some(5),
            };
            let old = json!({"a": id, "b": 2, "distance": 5});
            assert_eq!(text(&hamming), text(&old));
        }
    }

    #[test]
    fn fingerprint_and_group_rows_are_written_as_the_json_rows_they_replace() {
        for id in ids() {
            let row = FingerprintRow {
                id: id.clone().into(),
                fingerprint: "00ff".into(),
            };
            assert_eq!(text(&row), text(&json!({"id": id, "fingerprint": "00ff"})));
            let row = GroupRow {
                id: id.clone().into(),
                group: json!("g").into(),
            };
            assert_eq!(text(&row), text(&json!({"id": id, "group": "g"})));
        }
    }

    #[test]
    fn ids_read_back_as_they_were_written_and_refuse_other_values() {
        for id in ids() {
            let read: DocId = serde_json::from_str(&text(&id)).unwrap();
            assert_eq!((text(&read), read.to_value()), (text(&id), id.clone()));
            assert_eq!(read.to_string(), id.to_string(), "Display is the JSON text");
        }
        assert_ne!(DocId::from(json!("7")), DocId::from(json!(7)));
        let refused = serde_json::from_str::<ClusterRow>(r#"{"id": [1], "cluster": 1}"#);
        let message = refused.unwrap_err().to_string();
        assert!(
            message.contains("an id is a string or a number"),
            "{message}"
        );
    }

    #[test]
    fn rows_read_back_with_absent_optional_fields() {
        let row: ClusterRow =
            serde_json::from_str(r#"{"id": "b", "cluster": "a", "extra": [1]}"#).unwrap();
        assert_eq!((row.duplicate_of, row.similarity), (None, None));
        let row: ClusterRow = serde_json::from_str(
            r#"{"id": 2, "cluster": 1, "duplicate_of": 1, "similarity": 0.5}"#,
        )
        .unwrap();
        assert_eq!(
            (row.duplicate_of, row.similarity),
            (Some(DocId::from(json!(1))), Some(0.5))
        );
        let row: PairRow = serde_json::from_str(r#"{"a": 1, "b": 2, "distance": 3}"#).unwrap();
        assert_eq!((row.similarity, row.distance), (None, Some(3)));
        let error = serde_json::from_str::<ClusterRow>(r#"{"id": 1}"#).unwrap_err();
        assert!(
            error.to_string().starts_with("missing field `cluster`"),
            "{error}"
        );
    }
}
