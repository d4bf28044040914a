//! The Rust steps of the Spark path (`neardup/spark/`), each over Arrow batches as
//! `mapInArrow` hands them over: sketch, pair a bucket's members, verify pairs, and the
//! representative rule on the driver. The same code as the batch engine's, step by step, so
//! that a Spark run finds the same clusters as `neardup dedup`.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayData, ArrayRef, AsArray, BinaryBuilder, Float64Array, Int64Array, Int64Builder,
    ListBuilder,
};
use arrow::datatypes::{DataType, Int64Type};
use arrow::pyarrow::FromPyArrow;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_io::{self, Texts};
use crate::dynamic;

/// Sketches the texts: a record batch of `identity` (16 bytes), `length` (characters, for
/// the keep policy), `empty`, `exact_only`, `sketch` (encoded) and `keys` (the bucket keys,
/// as int64; empty for empty and exact-only documents).
///
/// With `corpus` (a table from [`corpus_table`]), the method first learns from it, as a batch
/// run learns from its corpus pass.
#[pyfunction]
#[pyo3(signature = (chunks, method, params=None, threads=1, corpus=None))]
fn spark_sketch<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
    corpus: Option<&[u8]>,
) -> PyResult<Bound<'py, PyAny>> {
    let params = crate::params(params)?;
    let method = match corpus {
        None => dynamic::method(method, &params),
        Some(corpus) => dynamic::learned_method(method, &params, corpus),
    }
    .map_err(|e| crate::error(py, e))?;
    let texts = Texts::import(&chunks, "texts")?;
    let (rows, lengths) = crate::detached(py, threads, || {
        texts.strs().map(|t| {
            let lengths: Vec<i64> = t.iter().map(|s| s.chars().count() as i64).collect();
            (method.sketch_rows(&t), lengths)
        })
    })?
    .map_err(|e| crate::invalid(py, "texts", e))?;
    let mut sketches = BinaryBuilder::new();
    let mut keys = ListBuilder::new(Int64Builder::new());
    for row in &rows {
        sketches.append_value(&row.encoded);
        keys.values()
            .append_slice(bytemuck_keys(&row.keys).as_slice());
        keys.append(true);
    }
    let batch = arrow_io::batch(vec![
        (
            "identity",
            arrow_io::identity_array(rows.iter().map(|r| r.identity)),
        ),
        ("length", Arc::new(Int64Array::from(lengths))),
        ("empty", arrow_io::bools(rows.iter().map(|r| r.empty))),
        (
            "exact_only",
            arrow_io::bools(rows.iter().map(|r| r.exact_only)),
        ),
        ("sketch", Arc::new(sketches.finish())),
        ("keys", Arc::new(keys.finish())),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// The corpus pass's features of the texts: a record batch of `set` (the upper 64 bits of
/// the identity of the document's feature set, as int64: a set counts once) and `features`
/// (sorted, distinct, as int64).
#[pyfunction]
#[pyo3(signature = (chunks, method, params=None, threads=1))]
fn spark_corpus_features<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let method = built(py, method, params)?;
    let texts = Texts::import(&chunks, "texts")?;
    let rows = crate::detached(py, threads, || {
        texts.strs().map(|t| method.corpus_features(&t))
    })?
    .map_err(|e| crate::invalid(py, "texts", e))?;
    let mut features = ListBuilder::new(Int64Builder::new());
    for (_, row) in &rows {
        features
            .values()
            .append_slice(bytemuck_keys(row).as_slice());
        features.append(true);
    }
    let sets: Vec<i64> = rows.iter().map(|(set, _)| *set as i64).collect();
    let batch = arrow_io::batch(vec![
        ("set", Arc::new(Int64Array::from(sets))),
        ("features", Arc::new(features.finish())),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// The limits a method resolves from a corpus of `documents` documents, by name (`max_df`,
/// `boilerplate_df`): a distributed corpus pass needs the counts of the features that reach
/// the least of them only.
#[pyfunction]
#[pyo3(signature = (method, params=None, documents=0))]
fn corpus_limits<'py>(
    py: Python<'py>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    documents: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let method = built(py, method, params)?;
    let limits = PyDict::new(py);
    for (name, limit) in method.corpus_limits(documents) {
        limits.set_item(name, limit)?;
    }
    Ok(limits)
}

/// The document-frequency limit of common features among `leaders` distinct documents
/// (`max_df` resolved as the batch engine resolves it), or `None` when the method marks no
/// common features.
#[pyfunction]
#[pyo3(signature = (method, params=None, leaders=0))]
fn common_limit<'py>(
    py: Python<'py>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    leaders: u64,
) -> PyResult<Option<u64>> {
    let method = built(py, method, params)?;
    Ok(method.common_limit(leaders))
}

/// Per encoded sketch, the features its document is counted by when common features are
/// found (as int64).
#[pyfunction]
#[pyo3(signature = (sketches, method, params=None))]
fn spark_frequency_features<'py>(
    py: Python<'py>,
    sketches: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    lists_per_sketch(py, (sketches, method, params), |method, bytes| {
        let values = method.frequency_features(bytes)?;
        Ok(values.into_iter().map(i64::from).collect())
    })
}

/// Per encoded sketch of `method` with `params`, the int64 list `values` gives for it (an
/// empty list for a missing sketch: an empty document), as an Arrow list array.
pub(crate) fn lists_per_sketch<'py>(
    py: Python<'py>,
    (sketches, method, params): (Bound<'py, PyAny>, &str, Option<&Bound<'py, PyDict>>),
    values: impl Fn(&dyn dynamic::DynMethod, &[u8]) -> neardup_core::Result<Vec<i64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let method = built(py, method, params)?;
    let mut lists = ListBuilder::new(Int64Builder::new());
    for sketch in encoded_sketches(py, &sketches)? {
        if let Some(bytes) = sketch {
            let found = values(method.as_ref(), &bytes).map_err(|e| crate::error(py, e))?;
            lists.values().append_slice(&found);
        }
        lists.append(true);
    }
    arrow_io::array_to_py(py, Arc::new(lists.finish()))
}

/// The encoded sketches with the `common` features (sorted, distinct) marked where `marked`
/// is true, as the batch engine marks its crowded documents; the others unchanged.
#[pyfunction]
#[pyo3(signature = (sketches, marked, method, params=None, common=Vec::new()))]
fn spark_mark_common<'py>(
    py: Python<'py>,
    sketches: Bound<'py, PyAny>,
    marked: Bound<'py, PyAny>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    common: Vec<u32>,
) -> PyResult<Bound<'py, PyAny>> {
    let method = built(py, method, params)?;
    let encoded = encoded_sketches(py, &sketches)?;
    let marked = arrow::array::make_array(ArrayData::from_pyarrow_bound(&marked)?);
    let marked = marked.as_boolean_opt().ok_or_else(|| {
        crate::invalid(
            py,
            "marked",
            format!("{} (expected booleans)", marked.data_type()),
        )
    })?;
    let mut out = BinaryBuilder::new();
    for (i, sketch) in encoded.iter().enumerate() {
        match sketch {
            Some(bytes) if marked.is_valid(i) && marked.value(i) => {
                let bytes = method
                    .mark_common(bytes, &common)
                    .map_err(|e| crate::error(py, e))?;
                out.append_value(bytes);
            }
            Some(bytes) => out.append_value(bytes),
            None => out.append_null(),
        }
    }
    arrow_io::array_to_py(py, Arc::new(out.finish()))
}

/// An encoded exact document-frequency table of `documents` documents from counted
/// features (as int64, their bits kept) and their counts, for [`spark_sketch`]'s `corpus`.
#[pyfunction]
fn corpus_table<'py>(
    py: Python<'py>,
    documents: u64,
    features: Vec<i64>,
    counts: Vec<u64>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    if features.len() != counts.len() {
        return Err(crate::invalid(
            py,
            "counts",
            format!("{} counts for {} features", counts.len(), features.len()),
        ));
    }
    let pairs = (features.iter().zip(&counts))
        .map(|(&feature, &count)| (feature as u64, u32::try_from(count).unwrap_or(u32::MAX)));
    let stats = neardup_core::corpus::CorpusStats::from_counts(documents, pairs);
    let mut out = neardup_core::codec::Encoder::new();
    stats.encode(&mut out);
    Ok(pyo3::types::PyBytes::new(py, &out.finish()))
}

/// The method `name` with `params`, built once per process ([`dynamic::method`]).
pub(crate) fn built(
    py: Python<'_>,
    name: &str,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<Arc<dyn dynamic::DynMethod>> {
    dynamic::method(name, &crate::params(params)?).map_err(|e| crate::error(py, e))
}

/// An Arrow array of encoded sketches (null where missing).
pub(crate) fn encoded_sketches(
    py: Python<'_>,
    sketches: &Bound<'_, PyAny>,
) -> PyResult<Vec<Option<Vec<u8>>>> {
    let array = arrow::array::make_array(ArrayData::from_pyarrow_bound(sketches)?);
    binaries(&array, "sketches").map_err(|e| crate::invalid(py, "sketches", e))
}

/// Keys as int64 (Spark has no unsigned type; the bits are kept).
pub(crate) fn bytemuck_keys(keys: &[u64]) -> Vec<i64> {
    keys.iter().map(|&k| k as i64).collect()
}

/// An int64 array of a pyarrow array.
pub(crate) fn int64s(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Vec<Option<i64>>> {
    let array = arrow::array::make_array(ArrayData::from_pyarrow_bound(array)?);
    let values = array.as_primitive_opt::<Int64Type>().ok_or_else(|| {
        crate::invalid(
            py,
            what,
            format!("an array of {}: expected int64", array.data_type()),
        )
    })?;
    Ok(values.iter().collect())
}

/// The candidate pairs of buckets, as the batch engine pairs one bucket: each list holds a
/// bucket's members (document ranks, any order, no repeats); member `j` (in rank order) is
/// paired with the members before it among the first `cap`. A record batch of `a < b`.
#[pyfunction]
fn bucket_pairs<'py>(
    py: Python<'py>,
    members: Bound<'py, PyAny>,
    cap: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let data = ArrayData::from_pyarrow_bound(&members)?;
    let array = arrow::array::make_array(data);
    let lists: Vec<Vec<i64>> = match array.data_type() {
        DataType::List(_) => list_values(array.as_list::<i32>()),
        DataType::LargeList(_) => list_values(array.as_list::<i64>()),
        other => {
            return Err(crate::invalid(
                py,
                "members",
                format!("an array of {other}: expected lists of int64"),
            ))
        }
    }
    .map_err(|e| crate::invalid(py, "members", e))?;
    let (a, b) = py.detach(|| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for mut bucket in lists {
            bucket.sort_unstable();
            bucket.dedup();
            for j in 1..bucket.len() {
                for &anchor in &bucket[..j.min(cap)] {
                    a.push(anchor);
                    b.push(bucket[j]);
                }
            }
        }
        (a, b)
    });
    let batch = arrow_io::batch(vec![
        ("a", Arc::new(Int64Array::from(a)) as ArrayRef),
        ("b", Arc::new(Int64Array::from(b))),
    ]);
    arrow_io::batch_to_py(py, batch)
}

fn list_values<O: arrow::array::OffsetSizeTrait>(
    lists: &arrow::array::GenericListArray<O>,
) -> Result<Vec<Vec<i64>>, String> {
    let mut out = Vec::with_capacity(lists.len());
    for list in lists.iter() {
        let list = list.ok_or("a null list")?;
        let values = list
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| format!("lists of {}: expected int64", list.data_type()))?;
        out.push(values.iter().flatten().collect());
    }
    Ok(out)
}

/// Encoded sketches of a binary column, borrowed.
fn binaries(array: &ArrayRef, what: &str) -> Result<Vec<Option<Vec<u8>>>, String> {
    Ok(match array.data_type() {
        DataType::Binary => (array.as_binary::<i32>().iter())
            .map(|b| b.map(<[u8]>::to_vec))
            .collect(),
        DataType::LargeBinary => (array.as_binary::<i64>().iter())
            .map(|b| b.map(<[u8]>::to_vec))
            .collect(),
        DataType::BinaryView => (array.as_binary_view().iter())
            .map(|b| b.map(<[u8]>::to_vec))
            .collect(),
        other => return Err(format!("{what}: an array of {other}: expected binary")),
    })
}

/// Two encoded sketches (null when missing).
type SketchPair = (Option<Vec<u8>>, Option<Vec<u8>>);

fn two_binaries(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Vec<SketchPair>> {
    let a = arrow::array::make_array(ArrayData::from_pyarrow_bound(a)?);
    let b = arrow::array::make_array(ArrayData::from_pyarrow_bound(b)?);
    let a = binaries(&a, "a").map_err(|e| crate::invalid(py, "sketches", e))?;
    let b = binaries(&b, "b").map_err(|e| crate::invalid(py, "sketches", e))?;
    if a.len() != b.len() {
        return Err(crate::invalid(
            py,
            "sketches",
            format!("{} and {} sketches: expected pairs", a.len(), b.len()),
        ));
    }
    Ok(a.into_iter().zip(b).collect())
}

/// `each` over the pairs of encoded sketches `a[i]`, `b[i]` with the method `name` built from
/// `params`, in parallel without the GIL; a pair with a null side gives `None`.
fn over_pairs<'py, T: Send>(
    py: Python<'py>,
    (a, b): (&Bound<'py, PyAny>, &Bound<'py, PyAny>),
    name: &str,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
    each: impl Fn(&dyn dynamic::DynMethod, &[u8], &[u8]) -> neardup_core::Result<Option<T>> + Sync,
) -> PyResult<Vec<Option<T>>> {
    use rayon::prelude::*;
    let method = dynamic::method(name, &crate::params(params)?).map_err(|e| crate::error(py, e))?;
    let pairs = two_binaries(py, a, b)?;
    let work = || {
        (pairs.par_iter())
            .map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => each(&*method, a, b),
                _ => Ok(None),
            })
            .collect::<neardup_core::Result<Vec<_>>>()
    };
    crate::detached(py, threads, work)?.map_err(|e| crate::error(py, e))
}

/// Declares a Python function over pairs of encoded sketches with the signature both pair
/// functions share, `(a, b, method, params=None, threads=1)`; `$body` sees the arguments
/// under the names given.
macro_rules! pair_function {
    (
        $(#[doc = $doc:literal])*
        fn $name:ident($py:ident, $a:ident, $b:ident, $method:ident, $params:ident, $threads:ident)
        $body:block
    ) => {
        $(#[doc = $doc])*
        #[pyfunction]
        #[pyo3(signature = ($a, $b, $method, $params = None, $threads = 1))]
        fn $name<'py>(
            $py: Python<'py>,
            $a: Bound<'py, PyAny>,
            $b: Bound<'py, PyAny>,
            $method: &str,
            $params: Option<&Bound<'py, PyDict>>,
            $threads: usize,
        ) -> PyResult<Bound<'py, PyAny>> $body
    };
}

pair_function! {
    /// Verifies pairs of encoded sketches as the batch engine verifies a candidate pair: a
    /// record batch of `similarity` (null when the pair is not similar) and `distance` (the
    /// Hamming distance for methods with fingerprints, else null).
    fn verify_pairs(py, a, b, method, params, threads) {
        let verified = over_pairs(py, (&a, &b), method, params, threads, |m, a, b| {
            m.verify(a, b)
        })?;
        let similarity: Float64Array = verified.iter().map(|v| v.map(|v| v.0)).collect();
        let distance: Int64Array = (verified.iter())
            .map(|v| v.and_then(|v| v.1).map(i64::from))
            .collect();
        let batch = arrow_io::batch(vec![
            ("similarity", Arc::new(similarity) as ArrayRef),
            ("distance", Arc::new(distance)),
        ]);
        arrow_io::batch_to_py(py, batch)
    }
}

pair_function! {
    /// The plain similarities of pairs of encoded sketches (float64).
    fn similarities(py, a, b, method, params, threads) {
        let values = over_pairs(py, (&a, &b), method, params, threads, |m, a, b| {
            m.similarity(a, b).map(Some)
        })?;
        arrow_io::array_to_py(py, Arc::new(Float64Array::from(values)))
    }
}

/// The batch engine's representative rule over verified pairs between documents numbered by
/// rank (`a`, `b`: int64 ranks; `similarity`: float64): a record batch of the removed
/// documents, `document`, `duplicate_of` and `similarity`. Documents in no pair are kept and
/// not listed; memory is linear in the pairs.
#[pyfunction]
fn representative<'py>(
    py: Python<'py>,
    a: Bound<'py, PyAny>,
    b: Bound<'py, PyAny>,
    similarity: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let int64 = |x: &Bound<'py, PyAny>, what: &str| -> PyResult<Vec<i64>> {
        Ok(int64s(py, x, what)?
            .into_iter()
            .map(|v| v.unwrap_or(-1))
            .collect())
    };
    let (a, b) = (int64(&a, "a")?, int64(&b, "b")?);
    let similarity = arrow::array::make_array(ArrayData::from_pyarrow_bound(&similarity)?);
    let similarity: Vec<f64> = (similarity.as_primitive_opt::<arrow::datatypes::Float64Type>())
        .ok_or_else(|| crate::invalid(py, "similarity", "expected float64".into()))?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect();
    if a.len() != b.len() || a.len() != similarity.len() {
        return Err(crate::invalid(
            py,
            "pairs",
            "columns of different lengths".into(),
        ));
    }
    let result = py.detach(|| {
        // Documents in pairs, in rank order, numbered densely (the rule reads ranks only
        // through their order).
        let mut nodes: Vec<i64> = a.iter().chain(&b).copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        let number = |rank: i64| nodes.binary_search(&rank).expect("a node") as u32;
        let pairs: Vec<(u32, u32, f64)> = (0..a.len())
            .map(|i| (number(a[i]), number(b[i]), similarity[i]))
            .collect();
        dynamic::representative(nodes.len(), &pairs).map(|assignment| {
            let mut out = (Vec::new(), Vec::new(), Vec::new());
            for (document, duplicate_of) in assignment.duplicate_of.iter().enumerate() {
                if let Some(kept) = duplicate_of {
                    out.0.push(nodes[document]);
                    out.1.push(nodes[*kept as usize]);
                    out.2
                        .push(assignment.similarity.get(document).unwrap_or(f64::NAN));
                }
            }
            out
        })
    });
    let (document, duplicate_of, similarity) = result.map_err(|e| crate::error(py, e))?;
    let batch = arrow_io::batch(vec![
        ("document", Arc::new(Int64Array::from(document)) as ArrayRef),
        ("duplicate_of", Arc::new(Int64Array::from(duplicate_of))),
        ("similarity", Arc::new(Float64Array::from(similarity))),
    ]);
    arrow_io::batch_to_py(py, batch)
}

/// What the Spark path needs to know of a method: `form`, how it finds candidates
/// ([`neardup_engine::SparkForm::name`]: `identity`, `keys`, `hamming` or `set_join`),
/// `learns_from_corpus`, `checks_common` (`max_df`) and the template hooks. A method the
/// Spark path cannot run is refused here, naming the parameter to change
/// ([`neardup_engine::spark_rules`]).
#[pyfunction]
#[pyo3(signature = (method, params=None))]
fn method_info<'py>(
    py: Python<'py>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let name = method;
    let given = crate::params(params)?;
    let method = built(py, name, params)?;
    let form = neardup_engine::spark_rules::spark_form(name, method.join_shape(), &given)
        .map_err(|refusal| crate::invalid(py, &refusal.parameter, refusal.message))?;
    let info = PyDict::new(py);
    info.set_item("form", form.name())?;
    info.set_item("learns_from_corpus", method.learns_from_corpus())?;
    info.set_item("checks_common", method.checks_common())?;
    info.set_item("marks_crowds_only", method.marks_crowds_only())?;
    info.set_item("template_keys", method.has_template_keys())?;
    info.set_item("template_anchors", neardup_engine::TEMPLATE_ANCHORS)?;
    Ok(info)
}

/// Adds the Spark steps to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spark_sketch, m)?)?;
    m.add_function(wrap_pyfunction!(method_info, m)?)?;
    m.add_function(wrap_pyfunction!(spark_corpus_features, m)?)?;
    m.add_function(wrap_pyfunction!(corpus_limits, m)?)?;
    m.add_function(wrap_pyfunction!(corpus_table, m)?)?;
    m.add_function(wrap_pyfunction!(common_limit, m)?)?;
    m.add_function(wrap_pyfunction!(spark_frequency_features, m)?)?;
    m.add_function(wrap_pyfunction!(spark_mark_common, m)?)?;
    m.add_function(wrap_pyfunction!(bucket_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(verify_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(similarities, m)?)?;
    m.add_function(wrap_pyfunction!(representative, m)?)?;
    Ok(())
}
