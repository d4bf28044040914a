//! The Spark path's candidate joins besides shared keys (`neardup/spark/`): SimHash's
//! Hamming join in distributed passes, and the exact set join by prefix filtering, each over
//! Arrow batches as `mapInArrow` hands them over.

use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, AsArray, Int64Array, Int64Builder, ListBuilder};
use arrow::datatypes::Int64Type;
use arrow::pyarrow::FromPyArrow;
use neardup_engine::HammingPass;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_io;
use crate::dynamic::DynMethod;
use crate::spark::{built, bytemuck_keys, encoded_sketches, int64s, lists_per_sketch};

/// The fingerprint and search radius of each encoded sketch, for a Hamming join (SimHash): a
/// record batch of `fingerprint` (its bits as int64) and `radius` (int64), both null for a
/// document that enters no candidate generation (empty, too few features).
#[pyfunction]
#[pyo3(signature = (sketches, method, params=None))]
fn spark_hamming_keys<'py>(
    py: Python<'py>,
    sketches: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let encoded = encoded_sketches(py, &sketches)?;
    let method = built(py, method, params)?;
    let (mut fingerprints, mut radii) = (Int64Builder::new(), Int64Builder::new());
    for sketch in &encoded {
        let key = match sketch {
            Some(bytes) => method.hamming_key(bytes).map_err(|e| crate::error(py, e))?,
            None => None,
        };
        fingerprints.append_option(key.map(|(f, _)| f as i64));
        radii.append_option(key.map(|(_, r)| i64::from(r)));
    }
    let batch = arrow_io::batch(vec![
        ("fingerprint", Arc::new(fingerprints.finish()) as ArrayRef),
        ("radius", Arc::new(radii.finish())),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// Per encoded sketch, its template keys (templates duplicate; as int64): the keys under
/// which a templated document meets its template's first ones.
#[pyfunction]
#[pyo3(signature = (sketches, method, params=None))]
fn spark_template_keys<'py>(
    py: Python<'py>,
    sketches: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    lists_per_sketch(py, (sketches, method, params), template_keys)
}

/// The template keys of an encoded sketch, as int64.
fn template_keys(method: &dyn DynMethod, sketch: &[u8]) -> neardup_core::Result<Vec<i64>> {
    let keys = method.template_keys(sketch)?;
    Ok(keys.into_iter().map(|key| key as i64).collect())
}

/// The passes of a distributed Hamming join of documents counted by radius (`(radius,
/// documents)` pairs): `(k, blocks, radius)` per pass, largest `k` first.
#[pyfunction]
fn hamming_plan(radii: Vec<(u32, u64)>) -> Vec<(u32, u32, u32)> {
    (neardup_engine::distributed_passes(&radii).into_iter())
        .map(|p| (p.k, p.blocks, p.radius))
        .collect()
}

/// The pass `(k, blocks, radius)` as the engine's type, checked.
fn hamming_pass(py: Python<'_>, (k, blocks, radius): (u32, u32, u32)) -> PyResult<HammingPass> {
    if blocks == 0 || blocks > 64 || radius != k / blocks {
        return Err(crate::invalid(
            py,
            "hamming_pass",
            format!("({k}, {blocks}, {radius}): not a pass of hamming_plan"),
        ));
    }
    Ok(HammingPass { k, blocks, radius })
}

/// The `(rank, encoded sketch)` pairs of two columns of equal length, rows with a null left
/// out.
fn ranked_sketches(
    py: Python<'_>,
    ranks: &Bound<'_, PyAny>,
    sketches: &Bound<'_, PyAny>,
) -> PyResult<Vec<(i64, Vec<u8>)>> {
    let ranks = int64s(py, ranks, "ranks")?;
    let encoded = encoded_sketches(py, sketches)?;
    if ranks.len() != encoded.len() {
        let message = format!("{} ranks for {} sketches", ranks.len(), encoded.len());
        return Err(crate::invalid(py, "ranks", message));
    }
    Ok((ranks.into_iter().zip(encoded))
        .filter_map(|(rank, sketch)| Some((rank?, sketch?)))
        .collect())
}

/// The rows of a pass of the distributed Hamming join for documents `(rank, fingerprint,
/// radius)`: a record batch of `block`, `value` (the group key), `rank`, `fingerprint`,
/// `radius` and `stored` (the row of the document's own block value).
#[pyfunction]
fn hamming_rows<'py>(
    py: Python<'py>,
    ranks: Bound<'py, PyAny>,
    fingerprints: Bound<'py, PyAny>,
    radii: Bound<'py, PyAny>,
    pass: (u32, u32, u32),
) -> PyResult<Bound<'py, PyAny>> {
    let pass = hamming_pass(py, pass)?;
    let ranks = int64s(py, &ranks, "ranks")?;
    let fingerprints = int64s(py, &fingerprints, "fingerprints")?;
    let radii = int64s(py, &radii, "radii")?;
    if ranks.len() != fingerprints.len() || ranks.len() != radii.len() {
        return Err(crate::invalid(
            py,
            "ranks",
            "columns of different lengths".into(),
        ));
    }
    let mut out: [Vec<i64>; 5] = Default::default();
    let mut stored = Vec::new();
    for i in 0..ranks.len() {
        let (Some(rank), Some(fingerprint), Some(radius)) = (ranks[i], fingerprints[i], radii[i])
        else {
            continue;
        };
        pass.rows(fingerprint as u64, |block, value, is_stored| {
            out[0].push(i64::from(block));
            out[1].push(value as i64);
            out[2].push(rank);
            out[3].push(fingerprint);
            out[4].push(radius);
            stored.push(is_stored);
        });
    }
    let [block, value, rank, fingerprint, radius] = out;
    let batch = arrow_io::batch(vec![
        ("block", Arc::new(Int64Array::from(block)) as ArrayRef),
        ("value", Arc::new(Int64Array::from(value))),
        ("rank", Arc::new(Int64Array::from(rank))),
        ("fingerprint", Arc::new(Int64Array::from(fingerprint))),
        ("radius", Arc::new(Int64Array::from(radius))),
        ("stored", arrow_io::bools(stored.into_iter())),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// The pairs `(a, b)` of ranks that groups of a pass report: `blocks` (int64) is each group's
/// block, `members` lists of structs `(rank, fingerprint, radius, stored)` (the rows of
/// [`hamming_rows`] grouped by block and value); see [`HammingPass::group_pairs`].
#[pyfunction]
fn hamming_group_pairs<'py>(
    py: Python<'py>,
    blocks: Bound<'py, PyAny>,
    members: Bound<'py, PyAny>,
    pass: (u32, u32, u32),
    cap: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let pass = hamming_pass(py, pass)?;
    let blocks = int64s(py, &blocks, "blocks")?;
    let members = arrow::array::make_array(ArrayData::from_pyarrow_bound(&members)?);
    let groups = group_members(&members).map_err(|e| crate::invalid(py, "members", e))?;
    if groups.len() != blocks.len() {
        return Err(crate::invalid(
            py,
            "members",
            "columns of different lengths".into(),
        ));
    }
    let (a, b) = py.detach(|| {
        let mut pairs = Vec::new();
        for (block, mut group) in blocks.into_iter().zip(groups) {
            let block = block
                .and_then(|b| u32::try_from(b).ok())
                .unwrap_or(u32::MAX);
            pass.group_pairs(block, &mut group, cap, &mut pairs);
        }
        (
            pairs.iter().map(|p| p.0 as i64).collect::<Vec<_>>(),
            pairs.iter().map(|p| p.1 as i64).collect::<Vec<_>>(),
        )
    });
    let batch = arrow_io::batch(vec![
        ("a", Arc::new(Int64Array::from(a)) as ArrayRef),
        ("b", Arc::new(Int64Array::from(b))),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// A group's members of a list of structs `(rank, fingerprint, radius, stored)`.
type Members = Vec<(u64, u64, u32, bool)>;

fn group_members(array: &ArrayRef) -> Result<Vec<Members>, String> {
    let lists = array.as_list_opt::<i32>().ok_or_else(|| {
        format!(
            "an array of {}: expected lists of structs",
            array.data_type()
        )
    })?;
    let mut out = Vec::with_capacity(lists.len());
    for list in lists.iter() {
        let list = list.ok_or("a null list")?;
        let rows = list.as_struct_opt().ok_or("lists of non-structs")?;
        let field = |name: &str| {
            rows.column_by_name(name)
                .ok_or_else(|| format!("no field {name:?} in the members"))
        };
        let int = |name: &str| -> Result<Vec<i64>, String> {
            let column = field(name)?;
            let values = column
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(|| format!("{name}: {} (expected int64)", column.data_type()))?;
            Ok(values.iter().map(|v| v.unwrap_or(0)).collect())
        };
        let (rank, fingerprint, radius) = (int("rank")?, int("fingerprint")?, int("radius")?);
        let stored = field("stored")?;
        let stored = stored
            .as_boolean_opt()
            .ok_or_else(|| format!("stored: {} (expected booleans)", stored.data_type()))?;
        out.push(
            (0..rows.len())
                .map(|i| {
                    let radius = u32::try_from(radius[i]).unwrap_or(0);
                    (
                        rank[i] as u64,
                        fingerprint[i] as u64,
                        radius,
                        stored.value(i),
                    )
                })
                .collect(),
        );
    }
    Ok(out)
}

/// The join tokens of each encoded sketch (lists of int64; sorted, distinct), for counting
/// their document frequencies.
#[pyfunction]
#[pyo3(signature = (sketches, method, params=None))]
fn spark_join_tokens<'py>(
    py: Python<'py>,
    sketches: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (encoded, method) = (encoded_sketches(py, &sketches)?, built(py, method, params)?);
    let mut out = ListBuilder::new(Int64Builder::new());
    for sketch in &encoded {
        if let Some(bytes) = sketch {
            let tokens = method.join_tokens(bytes).map_err(|e| crate::error(py, e))?;
            out.values().append_slice(&bytemuck_keys(&tokens));
        }
        out.append(true);
    }
    arrow_io::array_to_py(py, Arc::new(out.finish()))
}

/// The prefix rows of the exact set join for documents `(rank, sketch)`: a record batch of
/// `key` (a token of the document's prefix under the order "rarer first", with `frequent`
/// giving the counts of the frequent tokens: little-endian `(token i64, count u32)` records,
/// absent tokens counting 0) and `rank`.
#[pyfunction]
#[pyo3(signature = (ranks, sketches, method, params=None, frequent=None))]
fn spark_join_prefixes<'py>(
    py: Python<'py>,
    ranks: Bound<'py, PyAny>,
    sketches: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    frequent: Option<&[u8]>,
) -> PyResult<Bound<'py, PyAny>> {
    let method = built(py, method, params)?;
    let ranked = ranked_sketches(py, &ranks, &sketches)?;
    let frequent = frequent.unwrap_or_default();
    if !frequent.len().is_multiple_of(12) {
        return Err(crate::invalid(
            py,
            "frequent",
            format!("{} bytes: expected records of 12", frequent.len()),
        ));
    }
    let counts: std::collections::HashMap<u64, u32> = (frequent.chunks_exact(12))
        .map(|r| {
            let token = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
            (
                token,
                u32::from_le_bytes(r[8..].try_into().expect("4 bytes")),
            )
        })
        .collect();
    let (mut keys, mut out_ranks) = (Vec::new(), Vec::new());
    for (rank, bytes) in &ranked {
        let prefix = method
            .join_prefix(bytes, &counts)
            .map_err(|e| crate::error(py, e))?;
        for token in prefix {
            keys.push(token as i64);
            out_ranks.push(*rank);
        }
    }
    let batch = arrow_io::batch(vec![
        ("key", Arc::new(Int64Array::from(keys)) as ArrayRef),
        ("rank", Arc::new(Int64Array::from(out_ranks))),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// Adds these steps to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spark_hamming_keys, m)?)?;
    m.add_function(wrap_pyfunction!(spark_template_keys, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_plan, m)?)?;
    m.add_function(wrap_pyfunction!(spark_join_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(spark_join_prefixes, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_rows, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_group_pairs, m)?)?;
    Ok(())
}
