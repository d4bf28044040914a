//! The templates section of the stats file: the engine's template groups
//! ([`neardup_engine::Templates`]), named by their documents' ids, with the fixed text and the
//! slots told from those documents' texts ([`neardup_core::template_text`]). The texts were
//! dropped once sketched: the in-memory path takes them again from the records' lines (held,
//! or read at their places in a plain file), the streamed path as it reads the inputs again
//! to write the kept records; only the texts neither had (CSV and Parquet in memory, a
//! reference corpus streamed) are read from the whole inputs once more. Without a template
//! found nothing is read.

use std::collections::HashMap;

use neardup_core::registry::Registered;
use neardup_core::template_text::describe;
use neardup_engine::Templates;
use rayon::prelude::*;

use super::{RunConfig, View};
use crate::error::{Error, Result};

/// What [`texts_of`]'s reader is stopped with once it has read the last record wanted.
const ENOUGH: &str = "the texts of the templates listed were read";
use crate::input::{read_inputs_streamed, InputOptions};
use crate::stats::{TemplateReport, TemplatesReport};

/// The documents the templates section lists (engine numbering), sorted.
pub(super) fn listed(found: &Templates) -> Vec<usize> {
    let mut documents: Vec<usize> = (found.groups.iter())
        .flat_map(|group| group.sample.iter().map(|&d| d as usize))
        .collect();
    documents.sort_unstable();
    documents.dedup();
    documents
}

/// The inputs' documents (numbered from 0 after the `first` of a reference corpus) that the
/// templates section lists, sorted; none without a stats file.
pub(super) fn listed_inputs<T>(found: &Templates, first: usize, stats: &Option<T>) -> Vec<usize> {
    match stats {
        Some(_) => (listed(found).into_iter())
            .filter_map(|document| document.checked_sub(first))
            .collect(),
        None => Vec::new(),
    }
}

/// The templates section for `method` (`None` for a method without a template check), with
/// the texts the path took (`texts`, by engine document); the inputs are read again for the
/// documents listed whose text it did not take.
///
/// # Errors
/// An input that cannot be read again.
pub(super) fn templates_report<M: Registered>(
    _method: &M,
    config: &RunConfig,
    view: View<'_>,
    found: &Templates,
    texts: &HashMap<usize, String>,
) -> Result<Option<TemplatesReport>> {
    if !M::params().iter().any(|p| p.name == "templates") {
        return Ok(None);
    }
    let first = view.first();
    let missing: Vec<usize> = (listed(found).into_iter())
        .filter(|document| !texts.contains_key(document))
        .collect();
    let wanted = |reference: bool| -> Vec<usize> {
        (missing.iter().copied())
            .filter(|&d| (d < first) == reference)
            .map(|d| if reference { d } else { d - first })
            .collect()
    };
    let reference = texts_of(&config.against, &config.input, &wanted(true))?;
    let corpus = texts_of(&config.inputs, &config.input, &wanted(false))?;
    let text = |document: usize| -> Option<&str> {
        if let Some(text) = texts.get(&document) {
            return Some(text);
        }
        match document.checked_sub(first) {
            Some(input) => corpus.as_ref()?.get(&input).map(String::as_str),
            None => reference.as_ref()?.get(&document).map(String::as_str),
        }
    };
    let top = (found.groups.par_iter())
        .map(|group| {
            let texts: Option<Vec<&str>> =
                (group.sample.iter()).map(|&d| text(d as usize)).collect();
            let described = texts.and_then(|texts| describe(&texts));
            TemplateReport {
                documents: group.documents,
                refused_pairs: group.refused_pairs,
                ids: (group.sample.iter())
                    .map(|&d| view.id(d as usize))
                    .collect(),
                fixed: described.as_ref().map(|d| d.fixed.clone()),
                slots: described.map(|d| d.slots).unwrap_or_default(),
            }
        })
        .collect();
    Ok(Some(TemplatesReport {
        refused_pairs: found.refused_pairs,
        found: found.found,
        documents: found.documents,
        top,
    }))
}

/// The texts of the records numbered `wanted` (sorted, 0-based across `paths`), read once
/// more up to the last of them; `None` when an input cannot be read again (standard input, a
/// FIFO, see [`crate::paths::read_once`]). Nothing is read when nothing is wanted.
fn texts_of(
    paths: &[String],
    options: &InputOptions,
    wanted: &[usize],
) -> Result<Option<HashMap<usize, String>>> {
    if wanted.is_empty() {
        return Ok(Some(HashMap::new()));
    }
    if paths.iter().any(|path| crate::paths::read_once(path)) {
        return Ok(None);
    }
    let mut texts = HashMap::new();
    let mut index = 0usize;
    let last = wanted.last().copied().unwrap_or(0);
    let read = read_inputs_streamed(paths, paths, options, (0, 0), &mut |record| {
        if wanted.binary_search(&index).is_ok() {
            texts.insert(index, record.text);
        }
        index += 1;
        // Past the last record wanted, the read stops.
        match index > last {
            true => Err(Error::Stopped {
                parameter: ENOUGH.to_owned(),
                message: String::new(),
            }),
            false => Ok(()),
        }
    });
    match read {
        Err(Error::Stopped { parameter, .. }) if parameter == ENOUGH => {}
        other => {
            other?;
        }
    }
    Ok(Some(texts))
}
