//! `neardup._neardup`: the Rust side of the Python package.
//!
//! Texts come in as Arrow arrays through the C data interface (no copy, no Python object per
//! document) and results go out as Arrow arrays; the work runs with the GIL released. The
//! Python wrapper (`neardup/__init__.py`, `neardup/spark/`) turns lists, pandas and polars
//! Series into Arrow and maps document numbers back to ids.

mod arrow_io;
mod dynamic;
mod index;
mod spans;
mod spark;
mod spark_joins;

use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::registry::{self, Params};
use neardup_engine::EngineOptions;
use pyo3::prelude::*;
use pyo3::types::PyDict;

// Named `neardup.NeardupError`, where the package exports it: a traceback shows that name and
// pickle finds the class there (`_neardup` alone is no importable module).
pyo3::create_exception!(
    neardup,
    NeardupError,
    pyo3::exceptions::PyValueError,
    "An invalid parameter or input; the message names it (as the command line does)."
);

/// A core error as a [`NeardupError`] whose `parameter` attribute names what was refused.
pub(crate) fn error(py: Python<'_>, error: neardup_core::Error) -> PyErr {
    let err = NeardupError::new_err(error.to_string());
    let _ = err.value(py).setattr("parameter", error.parameter());
    err
}

/// An error about `parameter` with `message`.
pub(crate) fn invalid(py: Python<'_>, parameter: &str, message: String) -> PyErr {
    error(
        py,
        neardup_core::Error::invalid_owned(parameter.into(), message),
    )
}

/// Runs `work` without the GIL on `threads` worker threads (0: one per core).
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    threads: usize,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    if threads == 0 {
        return Ok(py.detach(work));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(py, "threads", format!("{threads}: {e}")))?;
    Ok(py.detach(|| pool.install(work)))
}

/// A method's parameters from a dict of names to Python values (str, int, float, bool).
pub(crate) fn params(params: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut out = Params::new();
    if let Some(params) = params {
        for (key, value) in params.iter() {
            let key: String = key.extract()?;
            let text = if let Ok(flag) = value.extract::<bool>() {
                flag.to_string()
            } else {
                value.str()?.to_string()
            };
            out.insert(key, text);
        }
    }
    Ok(out)
}

/// Deduplicates the texts of `chunks` (Arrow string arrays, read in order as one column) with
/// `method` and `params`. The first `reference` texts are a reference corpus (`--against`).
/// Returns a record batch indexed like the texts: `cluster` (the kept document's number),
/// `duplicate_of` (a number, or null when kept), `similarity` (null when kept), and the
/// run's statistics as JSON.
#[pyfunction]
#[pyo3(signature = (chunks, method, params=None, cluster="representative", keep="first",
    bucket_cap=None, candidate_budget=None, corpus_memory=None, reference=0, within=true,
    threads=0))]
#[allow(clippy::too_many_arguments)]
fn dedup_arrow<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    method: &str,
    params: Option<&Bound<'py, PyDict>>,
    cluster: &str,
    keep: &str,
    bucket_cap: Option<usize>,
    candidate_budget: Option<usize>,
    corpus_memory: Option<usize>,
    reference: u32,
    within: bool,
    threads: usize,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let params = self::params(params)?;
    let mut options = EngineOptions {
        cluster: (cluster.parse::<ClusterMode>()).map_err(|e| error(py, e))?,
        keep: (keep.parse::<KeepPolicy>()).map_err(|e| error(py, e))?,
        ..EngineOptions::default()
    };
    if let Some(cap) = bucket_cap {
        options.bucket_cap = cap;
    }
    if let Some(budget) = candidate_budget {
        options.candidate_budget = budget;
    }
    if let Some(memory) = corpus_memory {
        options.corpus_memory = memory;
    }
    options.reference = reference;
    options.within = reference == 0 || within;
    options.validate().map_err(|e| error(py, e))?;
    let method = dynamic::method(method, &params).map_err(|e| error(py, e))?;
    let texts = arrow_io::Texts::import(&chunks, "texts")?;
    let outcome = detached(py, threads, || {
        let texts = texts.strs();
        texts.map(|texts| method.dedup(&texts, options))
    })?
    .map_err(|e| invalid(py, "texts", e))?
    .map_err(|e| error(py, e))?;
    let stats = arrow_io::stats_json(&outcome.stats);
    let batch = arrow_io::assignment_batch(&outcome.assignment);
    Ok((arrow_io::batch_to_py(py, batch)?, stats))
}

/// The registered methods: `(name, about, [(parameter, kind, default, help)])`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn methods() -> Vec<(
    &'static str,
    &'static str,
    Vec<(&'static str, String, Option<&'static str>, &'static str)>,
)> {
    registry::methods()
        .iter()
        .map(|m| {
            let params = (m.params.iter())
                .map(|p| (p.name, format!("{:?}", p.kind), p.default, p.help))
                .collect();
            (m.name, m.about, params)
        })
        .collect()
}

/// `read` over the texts with the method `name` built from `params`, without the GIL.
fn read_texts<'py, T: Send + Default>(
    py: Python<'py>,
    chunks: &[Bound<'py, PyAny>],
    name: &str,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
    read: impl Fn(&dyn dynamic::DynMethod, &[&str]) -> Option<T> + Sync,
) -> PyResult<T> {
    let method = dynamic::method(name, &self::params(params)?).map_err(|e| error(py, e))?;
    let texts = arrow_io::Texts::import(chunks, "texts")?;
    let read = || texts.strs().map(|t| read(&*method, &t).unwrap_or_default());
    detached(py, threads, read)?.map_err(|e| invalid(py, "texts", e))
}

/// MinHash signatures of the texts (a `minhash` method's parameters): a fixed-size list of
/// `permutations` uint32 per text.
#[pyfunction]
#[pyo3(signature = (chunks, params=None, threads=0))]
fn minhash_signatures<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let signatures = read_texts(py, &chunks, "minhash", params, threads, |m, t| {
        m.signatures(t)
    })?;
    arrow_io::array_to_py(py, arrow_io::signature_array(signatures))
}

/// SimHash fingerprints of the texts (a `simhash` method's parameters), as uint64.
#[pyfunction]
#[pyo3(signature = (chunks, params=None, threads=0))]
fn simhash_fingerprints<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    params: Option<&Bound<'py, PyDict>>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let fingerprints = read_texts(py, &chunks, "simhash", params, threads, |m, t| {
        m.fingerprints(t)
    })?;
    arrow_io::array_to_py(
        py,
        std::sync::Arc::new(arrow::array::UInt64Array::from(fingerprints)),
    )
}

#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NeardupError", m.py().get_type::<NeardupError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(dedup_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_signatures, m)?)?;
    m.add_function(wrap_pyfunction!(simhash_fingerprints, m)?)?;
    m.add_class::<index::Index>()?;
    spark::register(m)?;
    spark_joins::register(m)?;
    spans::register(m)?;
    Ok(())
}
