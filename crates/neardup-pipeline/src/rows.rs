//! The rows of the JSON-lines files a run writes for other tools, one type per file: every
//! writer serialises them and every reader deserialises them, so that the field names,
//! their order and which fields may be absent are written down once.
//!
//! - [`ClusterRow`] for `dedup --clusters`, one row per input document;
//! - [`PairRow`] for `dedup --pairs` (with `similarity`, and `distance` for methods with
//!   fingerprints) and `hamming` (with `distance` only);
//! - [`FingerprintRow`] for `fingerprint`;
//! - [`GroupRow`] for `hamming --groups`.
//!
//! Ids are JSON values as read from the input (a string or a number, `"7"` is not `7`);
//! fields are written in the order they are declared, `null` for an absent value unless a
//! field says it is left out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One row of a clusters file (`dedup --clusters`): `{"id", "cluster", "duplicate_of",
/// "similarity"}`, one per input document, in input order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRow {
    /// The document's id.
    pub id: Value,
    /// The id of its cluster's representative (the document itself when it is kept).
    pub cluster: Value,
    /// The id of the kept document it duplicates; `null` when it is kept. May be absent
    /// when read.
    #[serde(default)]
    pub duplicate_of: Option<Value>,
    /// Its similarity to `duplicate_of`; `null` when it is kept. May be absent when read.
    #[serde(default)]
    pub similarity: Option<f64>,
}

/// One row of a pairs file: `{"a", "b", "similarity", "distance"}`. `dedup --pairs` writes
/// every verified pair with its similarity, and its Hamming distance for methods with
/// fingerprints; `hamming` writes the distance only. An absent value is left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    /// One document's id.
    pub a: Value,
    /// The other's.
    pub b: Value,
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
    pub id: Value,
    /// The fingerprint in hex.
    pub fingerprint: String,
}

/// One row of a groups file (`hamming --groups`): `{"id", "group"}`, the group named by the
/// id of its first fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRow {
    /// The fingerprint's id.
    pub id: Value,
    /// The id of the first fingerprint equal to it.
    pub group: Value,
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
                    id: id.clone(),
                    cluster: json!("k"),
                    duplicate_of: duplicate_of.clone(),
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
            id: json!(1),
            cluster: json!(1),
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
                        a: id.clone(),
                        b: json!("b"),
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
                a: id.clone(),
                b: json!(2),
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
                id: id.clone(),
                fingerprint: "00ff".into(),
            };
            assert_eq!(text(&row), text(&json!({"id": id, "fingerprint": "00ff"})));
            let row = GroupRow {
                id: id.clone(),
                group: json!("g"),
            };
            assert_eq!(text(&row), text(&json!({"id": id, "group": "g"})));
        }
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
            (Some(json!(1)), Some(0.5))
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
