//! Arrow in and out: text columns read in place through the C data interface, results built
//! as Arrow arrays.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayData, ArrayRef, AsArray, BooleanArray, FixedSizeBinaryArray, FixedSizeListArray,
    Float64Array, Int64Array, RecordBatch, UInt32Array,
};
use arrow::datatypes::{DataType, Field};
use arrow::pyarrow::{FromPyArrow, ToPyArrow};
use neardup_core::cluster::Assignment;
use neardup_engine::EngineStats;
use pyo3::prelude::*;

/// Text columns imported from pyarrow: the arrays keep the Python buffers alive, and
/// [`Texts::strs`] borrows every text from them without a copy.
pub struct Texts {
    arrays: Vec<ArrayRef>,
    what: &'static str,
}

impl Texts {
    /// Imports `chunks` (pyarrow arrays of `string`, `large_string` or `string_view`).
    ///
    /// # Errors
    /// A chunk that is not a pyarrow array, or not of a string type (naming `what`).
    pub fn import(chunks: &[Bound<'_, PyAny>], what: &'static str) -> PyResult<Texts> {
        let py = chunks.first().map(|c| c.py());
        let mut arrays = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let data = ArrayData::from_pyarrow_bound(chunk)?;
            let array = arrow::array::make_array(data);
            match array.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {}
                other => {
                    let py = py.expect("a chunk was given");
                    return Err(crate::invalid(
                        py,
                        what,
                        format!("an array of {other}: expected strings (string, large_string)"),
                    ));
                }
            }
            arrays.push(array);
        }
        Ok(Texts { arrays, what })
    }

    /// Texts in all chunks.
    pub fn len(&self) -> usize {
        self.arrays.iter().map(|a| a.len()).sum()
    }

    /// Every text, borrowed.
    ///
    /// # Errors
    /// A null text, naming its position: a null is not an empty text, and dropping it would
    /// lose a row.
    pub fn strs(&self) -> Result<Vec<&str>, String> {
        let mut out = Vec::with_capacity(self.len());
        for array in &self.arrays {
            if array.null_count() > 0 {
                let at = (0..array.len()).find(|&i| array.is_null(i)).unwrap_or(0);
                return Err(format!(
                    "{}[{}] is null (fill or drop nulls first: a null is not an empty text)",
                    self.what,
                    out.len() + at
                ));
            }
            match array.data_type() {
                DataType::Utf8 => out.extend(array.as_string::<i32>().iter().flatten()),
                DataType::LargeUtf8 => out.extend(array.as_string::<i64>().iter().flatten()),
                _ => out.extend(array.as_string_view().iter().flatten()),
            }
        }
        Ok(out)
    }
}

/// A pyarrow array of `array`.
pub fn array_to_py<'py>(py: Python<'py>, array: ArrayRef) -> PyResult<Bound<'py, PyAny>> {
    array.to_data().to_pyarrow(py)
}

/// A pyarrow record batch of `batch`.
pub fn batch_to_py<'py>(py: Python<'py>, batch: RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    batch.to_pyarrow(py)
}

/// A record batch from named columns (all nullable).
pub fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = (columns.iter())
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(schema, arrays).expect("columns of equal length")
}

/// `cluster` (uint32), `duplicate_of` (int64, null when kept) and `similarity` (float64,
/// null when kept), indexed like the documents.
pub fn assignment_batch(assignment: &Assignment) -> RecordBatch {
    let n = assignment.duplicate_of.len();
    let cluster: UInt32Array = (0..n as u32).map(|d| assignment.cluster_of(d)).collect();
    let duplicate_of: Int64Array = (assignment.duplicate_of.iter())
        .map(|d| d.map(i64::from))
        .collect();
    let similarity: Float64Array = assignment.similarity.iter().collect();
    batch(vec![
        ("cluster", Arc::new(cluster)),
        ("duplicate_of", Arc::new(duplicate_of)),
        ("similarity", Arc::new(similarity)),
    ])
}

/// The engine's counters and stage times as a JSON object.
pub fn stats_json(stats: &EngineStats) -> String {
    let seconds: serde_json::Map<String, serde_json::Value> = (stats.seconds.iter())
        .map(|(stage, s)| ((*stage).to_owned(), serde_json::json!(s)))
        .collect();
    serde_json::json!({
        "empty_documents": stats.empty_documents,
        "exact_only_documents": stats.exact_only_documents,
        "exact_copies": stats.exact_copies,
        "candidate_pairs": stats.candidate_pairs,
        "verified_pairs": stats.verified_pairs,
        "largest_bucket": stats.largest_bucket,
        "capped_buckets": stats.capped_buckets,
        "capped_out": stats.capped_out,
        "budget_hits": stats.budget_hits,
        "partner_limit": stats.partner_limit,
        "boilerplate_documents": stats.boilerplate.documents,
        "boilerplate_removed_lines": stats.boilerplate.removed_lines,
        "seconds": seconds,
    })
    .to_string()
}

/// Signatures as a fixed-size list of uint32 (an empty text's signature, all zeros, for a
/// text without one).
pub fn signature_array(signatures: Vec<Vec<u32>>) -> ArrayRef {
    let width = signatures.iter().map(Vec::len).max().unwrap_or(0);
    let mut values = Vec::with_capacity(width * signatures.len());
    for signature in &signatures {
        values.extend_from_slice(signature);
        values.resize(values.len() + width - signature.len(), 0);
    }
    let field = Arc::new(Field::new("item", DataType::UInt32, false));
    let values: ArrayRef = Arc::new(UInt32Array::from(values));
    Arc::new(FixedSizeListArray::new(field, width as i32, values, None))
}

/// 16-byte big-endian identities.
pub fn identity_array(identities: impl Iterator<Item = u128>) -> ArrayRef {
    let bytes: Vec<[u8; 16]> = identities.map(u128::to_be_bytes).collect();
    Arc::new(
        FixedSizeBinaryArray::try_from_iter(bytes.iter()).unwrap_or_else(|_| {
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                std::iter::empty::<Option<&[u8]>>(),
                16,
            )
            .expect("an empty array")
        }),
    )
}

/// A boolean column.
pub fn bools(values: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(values.map(Some).collect::<BooleanArray>())
}
