//! `Index`: an online index of one method (LSH buckets for `minhash`, permuted Hamming
//! tables for `simhash`, identities for `exact`, prefix keys for `join`) with insert, query,
//! save and load. The service's partition index, without the service.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{Float64Array, Int64Array, UInt32Array};
use neardup_core::registry::{self, Params};
use neardup_engine::online_rules::{self, Holder};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::arrow_io::{self, Texts};
use crate::dynamic::{self, DynIndex};

/// The first bytes of a saved index.
const MAGIC: &[u8; 14] = b"NEARDUP-INDEX\n";
/// The format of a saved index.
const FORMAT: u64 = 1;

/// An online near-duplicate index of one method.
#[pyclass(module = "neardup._neardup")]
pub struct Index {
    method: String,
    params: Params,
    inner: Box<dyn DynIndex>,
}

fn index_params(py: Python<'_>, method: &str, given: Params) -> PyResult<Params> {
    let spec = registry::method(method).ok_or_else(|| {
        let names: Vec<&str> = registry::methods().iter().map(|m| m.name).collect();
        crate::invalid(
            py,
            "method",
            format!("{method:?} (expected one of: {})", names.join(", ")),
        )
    })?;
    // Parameters learned from a corpus are off unless given, and refused when given another
    // value (as in the service).
    let mut params = online_rules::corpus_params_off(&spec);
    for (name, value) in given.iter() {
        online_rules::check_corpus_param(name, value, Holder::Index)
            .map_err(|refused| crate::invalid(py, &refused.parameter, refused.message))?;
        params.insert(name, value);
    }
    Ok(params)
}

fn build(py: Python<'_>, method: &str, params: &Params) -> PyResult<Box<dyn DynIndex>> {
    let built = dynamic::method(method, params).map_err(|e| crate::error(py, e))?;
    online_rules::refuse_learning(built.learns_from_corpus(), method, params, Holder::Index)
        .map_err(|refused| crate::invalid(py, &refused.parameter, refused.message))?;
    built.new_index().map_err(|e| crate::error(py, e))
}

fn io_error(path: &str, error: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(format!("{path}: {error}"))
}

#[pymethods]
impl Index {
    /// An empty index of `method` with `params` (any parameter of the method by name).
    #[new]
    #[pyo3(signature = (method="minhash", params=None))]
    fn new(py: Python<'_>, method: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Index> {
        let params = index_params(py, method, crate::params(params)?)?;
        let inner = build(py, method, &params)?;
        Ok(Index {
            method: method.to_owned(),
            params,
            inner,
        })
    }

    /// Adds the texts; returns the number of the first one (documents are numbered in
    /// insertion order from 0).
    #[pyo3(signature = (chunks, threads=0))]
    fn insert(
        &mut self,
        py: Python<'_>,
        chunks: Vec<Bound<'_, PyAny>>,
        threads: usize,
    ) -> PyResult<usize> {
        let texts = Texts::import(&chunks, "texts")?;
        let first = self.inner.len();
        let inner = &mut self.inner;
        crate::detached(py, threads, || texts.strs().map(|t| inner.insert(&t)))?
            .map_err(|e| crate::invalid(py, "texts", e))?;
        Ok(first)
    }

    /// The stored documents each text matches, best first (similarity, then Hamming
    /// distance, then the older document), at most `limit` per text: a record batch of
    /// `query` (the text's position), `number` (the stored document), `similarity` and
    /// `distance` (null without fingerprints).
    #[pyo3(signature = (chunks, limit=10, threads=0))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<Bound<'py, PyAny>>,
        limit: usize,
        threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = Texts::import(&chunks, "texts")?;
        let inner = &self.inner;
        let found = crate::detached(py, threads, || texts.strs().map(|t| inner.query(&t, limit)))?
            .map_err(|e| crate::invalid(py, "texts", e))?;
        let (mut query, mut number, mut similarity, mut distance) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (at, matches) in found.iter().enumerate() {
            for m in matches {
                query.push(at as i64);
                number.push(m.seq as i64);
                similarity.push(m.similarity);
                distance.push(m.distance);
            }
        }
        let batch = arrow_io::batch(vec![
            ("query", Arc::new(Int64Array::from(query))),
            ("number", Arc::new(Int64Array::from(number))),
            ("similarity", Arc::new(Float64Array::from(similarity))),
            ("distance", Arc::new(UInt32Array::from(distance))),
        ]);
        arrow_io::batch_to_py(py, batch)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The method's name.
    #[getter]
    fn method(&self) -> &str {
        &self.method
    }

    /// The parameters the index was built with (as strings).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in self.params.iter() {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// Writes the index to `path` (a temporary file beside it, renamed into place once
    /// complete), with `extra` (the ids, serialized by the Python side) stored alongside.
    fn save(&self, py: Python<'_>, path: &str, extra: &[u8]) -> PyResult<()> {
        let params: serde_json::Map<String, serde_json::Value> = (self.params.iter())
            .map(|(k, v)| (k.to_owned(), serde_json::Value::from(v)))
            .collect();
        let header = serde_json::json!({
            "format": FORMAT,
            "method": self.method,
            "params": params,
            "documents": self.inner.len(),
            "extra_bytes": extra.len(),
        })
        .to_string();
        let inner = &self.inner;
        let written = py.detach(|| -> Result<(), String> {
            let mut out =
                neardup_pipeline::output::AtomicOutput::create(path).map_err(|e| e.to_string())?;
            let writer = out.writer();
            let mut put =
                |bytes: &[u8]| writer.write_all(bytes).map_err(|e| format!("{path}: {e}"));
            put(MAGIC)?;
            put(&(header.len() as u64).to_le_bytes())?;
            put(header.as_bytes())?;
            put(extra)?;
            let mut encoded = Vec::new();
            for number in 0..inner.len() {
                encoded.clear();
                inner.encoded(number, &mut encoded);
                put(&(encoded.len() as u64).to_le_bytes())?;
                put(&xxhash_rust::xxh3::xxh3_64(&encoded).to_le_bytes())?;
                put(&encoded)?;
            }
            out.commit().map_err(|e| e.to_string())
        });
        written.map_err(PyOSError::new_err)
    }

    /// Reads an index written by [`Index::save`]: returns it and the stored `extra` bytes.
    #[staticmethod]
    fn load<'py>(py: Python<'py>, path: &str) -> PyResult<(Index, Bound<'py, PyBytes>)> {
        let bytes = std::fs::read(path).map_err(|e| io_error(path, e))?;
        let mut reader = &bytes[..];
        let corrupt = |what: &str| io_error(path, format!("not a neardup index ({what})"));
        let mut magic = [0u8; 14];
        reader
            .read_exact(&mut magic)
            .map_err(|_| corrupt("too short"))?;
        if &magic != MAGIC {
            return Err(corrupt("no NEARDUP-INDEX header"));
        }
        let mut take = |n: usize, what: &str| -> PyResult<&[u8]> {
            if reader.len() < n {
                return Err(corrupt(&format!("cut short in {what}")));
            }
            let (head, rest) = reader.split_at(n);
            reader = rest;
            Ok(head)
        };
        let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let header_len = u64_at(take(8, "the header")?) as usize;
        let header: serde_json::Value = serde_json::from_slice(take(header_len, "the header")?)
            .map_err(|e| corrupt(&format!("header: {e}")))?;
        if header["format"].as_u64() != Some(FORMAT) {
            return Err(corrupt(&format!(
                "format {} (expected {FORMAT})",
                header["format"]
            )));
        }
        let method = header["method"]
            .as_str()
            .ok_or_else(|| corrupt("no method"))?
            .to_owned();
        let mut params = Params::new();
        for (name, value) in header["params"].as_object().into_iter().flatten() {
            params.insert(name.clone(), value.as_str().unwrap_or_default());
        }
        let documents = header["documents"]
            .as_u64()
            .ok_or_else(|| corrupt("no count"))?;
        let extra_len = header["extra_bytes"].as_u64().unwrap_or(0) as usize;
        let extra = take(extra_len, "the ids")?.to_vec();
        let mut inner = build(py, &method, &params)?;
        for number in 0..documents {
            let what = format!("document {number}");
            let len = u64_at(take(8, &what)?) as usize;
            let checksum = u64_at(take(8, &what)?);
            let encoded = take(len, &what)?;
            if xxhash_rust::xxh3::xxh3_64(encoded) != checksum {
                return Err(corrupt(&format!("{what}: checksum mismatch")));
            }
            inner
                .insert_encoded(encoded)
                .map_err(|e| corrupt(&format!("{what}: {e}")))?;
        }
        if !reader.is_empty() {
            return Err(corrupt("bytes after the last document"));
        }
        let index = Index {
            method,
            params,
            inner,
        };
        Ok((index, PyBytes::new(py, &extra)))
    }
}
