//! `neardup._neardup`: the Rust side of the Python package (issue 12 groundwork). The engine
//! runs with the GIL released; the Python wrapper (`neardup/__init__.py`) turns inputs into a
//! list of strings and the columns into a pyarrow Table.

use neardup_core::registry::{self, MethodVisitor, Params, Registered};
use neardup_engine::{EngineOptions, NoProgress};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The columns of a dedup result, by document: cluster representative, duplicate_of (index
/// or -1) and similarity (NaN when kept).
type Columns = (Vec<u32>, Vec<i64>, Vec<f64>);

struct Run {
    texts: Vec<String>,
    options: EngineOptions,
}

impl MethodVisitor for Run {
    type Output = neardup_core::Result<Columns>;
    fn visit<M: Registered>(self, method: M) -> Self::Output {
        let outcome = neardup_engine::dedup_owned(&method, self.texts, self.options, &NoProgress)?;
        let assignment = &outcome.assignment;
        let n = assignment.duplicate_of.len();
        let cluster = (0..n as u32).map(|d| assignment.cluster_of(d)).collect();
        let duplicate_of = (assignment.duplicate_of.iter())
            .map(|d| d.map_or(-1, i64::from))
            .collect();
        let similarity = (assignment.similarity.iter())
            .map(|s| s.unwrap_or(f64::NAN))
            .collect();
        Ok((cluster, duplicate_of, similarity))
    }
}

/// Deduplicates `texts` with `method` and its parameters (`options`: any parameter of the
/// method by name, values as Python numbers, strings or booleans). Returns the columns
/// `(cluster, duplicate_of, similarity)` as lists indexed like `texts`.
#[pyfunction]
#[pyo3(signature = (texts, method = "minhash", options = None))]
fn dedup_columns(
    py: Python<'_>,
    texts: Vec<String>,
    method: &str,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Columns> {
    let mut params = Params::new();
    let mut engine = EngineOptions::default();
    let invalid =
        |name: &str, error: String| PyValueError::new_err(format!("invalid `{name}`: {error}"));
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key: String = key.extract()?;
            match key.as_str() {
                "cluster" => {
                    let text: String = value.extract()?;
                    engine.cluster = text
                        .parse()
                        .map_err(|e: neardup_core::Error| invalid("cluster", e.to_string()))?;
                    continue;
                }
                "keep" => {
                    let text: String = value.extract()?;
                    engine.keep = text
                        .parse()
                        .map_err(|e: neardup_core::Error| invalid("keep", e.to_string()))?;
                    continue;
                }
                "bucket_cap" => {
                    engine.bucket_cap = value.extract()?;
                    continue;
                }
                "candidate_budget" => {
                    engine.candidate_budget = value.extract()?;
                    continue;
                }
                _ => {}
            }
            let text = if let Ok(flag) = value.extract::<bool>() {
                flag.to_string()
            } else {
                value.str()?.to_string()
            };
            params.insert(key, text);
        }
    }
    let method = method.to_owned();
    engine
        .validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let run = Run {
        texts,
        options: engine,
    };
    py.detach(move || registry::with_method(&method, &params, run))
        .and_then(|r| r)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The registered methods' names.
#[pyfunction]
fn methods() -> Vec<&'static str> {
    registry::methods().iter().map(|m| m.name).collect()
}

#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dedup_columns, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    Ok(())
}
