//! The slow, obviously correct reference of span removal, for tests: every window of
//! `min_length` characters (or every unit) of every document compared as a string with every
//! other. Quadratic; small corpora only.

use std::collections::BTreeMap;

use super::units::units;
use super::{FoundSpans, Removal, SpanCount, SpanLevel, SpanOptions, SpanRemoval};

/// One occurrence of a span: its document, where it starts and ends, the bytes its removal
/// takes.
type Occurrence = (u32, usize, usize, (usize, usize));

/// The removals [`super::find_spans`] must give, found by brute force.
pub fn reference_spans<S: AsRef<str>>(texts: &[S], options: &SpanOptions) -> FoundSpans {
    // Every occurrence of every candidate span: its text -> (doc, start, end, removed bytes).
    let mut occurrences: BTreeMap<String, Vec<Occurrence>> = BTreeMap::new();
    for (doc, text) in texts.iter().enumerate() {
        let text = text.as_ref();
        for (key, remove) in spans_of(text, options) {
            let entry = occurrences
                .entry(text[key.0..key.1].to_owned())
                .or_default();
            entry.push((doc as u32, key.0, key.1, remove));
        }
    }
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    for list in occurrences.values() {
        let mut docs: Vec<u32> = list.iter().map(|occurrence| occurrence.0).collect();
        if options.count == SpanCount::Documents {
            docs.dedup();
        }
        if docs.len() < options.min_count {
            continue;
        }
        let first = list
            .iter()
            .min_by_key(|occurrence| (occurrence.0, occurrence.1));
        for occurrence in list {
            let (doc, (start, end)) = (occurrence.0, occurrence.3);
            let range = Removal {
                doc,
                start: start as u32,
                end: end as u32,
            };
            if Some(occurrence) == first && options.remove == SpanRemoval::Later {
                if options.level == SpanLevel::Substring {
                    kept.push(range);
                }
            } else {
                removed.push(range);
            }
        }
    }
    FoundSpans::new(removed, kept, texts.len())
}

/// The candidate spans of a text: (matched bytes, removed bytes).
fn spans_of(text: &str, options: &SpanOptions) -> Vec<((usize, usize), (usize, usize))> {
    let n = options.min_length;
    if options.level != SpanLevel::Substring {
        return units(text, options.level)
            .filter(|unit| {
                let key = &text[unit.key.0..unit.key.1];
                !key.trim().is_empty() && key.chars().count() >= n
            })
            .map(|unit| (unit.key, unit.remove))
            .collect();
    }
    let mut bounds: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    bounds.push(text.len());
    (0..bounds.len().saturating_sub(n))
        .map(|start| {
            let span = (bounds[start], bounds[start + n]);
            (span, span)
        })
        .collect()
}
