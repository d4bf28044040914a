//! What span removal found: byte ranges by document, applied to texts and summarised.

use std::borrow::Cow;

use hashbrown::HashMap;

/// One removed byte range `[start, end)` of a document's original text, on character
/// boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Removal {
    /// The document's index in keep order.
    pub doc: u32,
    /// The first byte removed.
    pub start: u32,
    /// One past the last byte removed.
    pub end: u32,
}

impl Removal {
    /// The removed length in bytes.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether nothing is removed.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A repeated text as the report shows it: where it was removed and how much it took. The
/// text is borrowed from the documents: a corpus's summaries copy none of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSummary<'a> {
    /// The removed text.
    pub text: &'a str,
    /// How many documents it was removed from.
    pub documents: usize,
    /// How many times it was removed.
    pub occurrences: usize,
    /// The bytes its removal took, over all documents.
    pub bytes_removed: u64,
    /// The documents it was removed from, by index in keep order, first ones first (at most
    /// the summaries' `documents_listed`).
    pub document_indexes: Vec<u32>,
}

/// `ranges` sorted by document then start, empty ones dropped, touching ones merged.
fn merged(mut ranges: Vec<Removal>) -> Vec<Removal> {
    ranges.retain(|range| !range.is_empty());
    ranges.sort_unstable();
    let mut merged: Vec<Removal> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if last.doc == range.doc && range.start <= last.end => {
                last.end = last.end.max(range.end);
            }
            _ => merged.push(range),
        }
    }
    merged
}

/// Every removal of a run, sorted by document then start, merged so that no two touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoundSpans {
    removals: Vec<Removal>,
    documents: usize,
    spilled_bytes: u64,
}

impl FoundSpans {
    /// Sorts and merges `removals` of a corpus of `documents` documents, then takes out of
    /// them the bytes of `kept` (the first copies that stay whole).
    pub fn new(removals: Vec<Removal>, kept: Vec<Removal>, documents: usize) -> FoundSpans {
        let removals = merged(removals);
        let kept = merged(kept);
        let mut left = Vec::with_capacity(removals.len());
        let mut keep = kept.iter().peekable();
        for mut removal in removals {
            while keep
                .peek()
                .is_some_and(|k| (k.doc, k.end) <= (removal.doc, removal.start))
            {
                keep.next();
            }
            let mut ahead = keep.clone();
            while let Some(k) = ahead
                .peek()
                .filter(|k| k.doc == removal.doc && k.start < removal.end)
            {
                if k.start > removal.start {
                    left.push(Removal {
                        end: k.start,
                        ..removal
                    });
                }
                removal.start = removal.start.max(k.end);
                ahead.next();
            }
            if removal.start < removal.end {
                left.push(removal);
            }
        }
        left.shrink_to_fit();
        FoundSpans {
            removals: left,
            documents,
            spilled_bytes: 0,
        }
    }

    /// The bytes of anchors written to a spill ([`super::find_spans_spilling`]).
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// Notes the bytes of anchors spilled.
    pub(crate) fn with_spilled(mut self, bytes: u64) -> FoundSpans {
        self.spilled_bytes = bytes;
        self
    }

    /// Every removal, by document then start.
    pub fn removals(&self) -> &[Removal] {
        &self.removals
    }

    /// The documents of the corpus.
    pub fn documents(&self) -> usize {
        self.documents
    }

    /// The removals of document `doc`, by start.
    pub fn ranges(&self, doc: usize) -> &[Removal] {
        let doc = doc as u64;
        let first = self
            .removals
            .partition_point(|removal| u64::from(removal.doc) < doc);
        let last = self
            .removals
            .partition_point(|removal| u64::from(removal.doc) <= doc);
        &self.removals[first..last]
    }

    /// The bytes removed from all documents.
    pub fn removed_bytes(&self) -> u64 {
        self.removals
            .iter()
            .map(|removal| removal.len() as u64)
            .sum()
    }

    /// The documents that lose at least one span.
    pub fn changed_documents(&self) -> usize {
        let mut count = 0;
        let mut last = None;
        for removal in &self.removals {
            if last != Some(removal.doc) {
                count += 1;
                last = Some(removal.doc);
            }
        }
        count
    }

    /// Document `doc`'s text with its spans removed (`text` must be the text the spans were
    /// found in).
    pub fn apply<'a>(&self, doc: usize, text: &'a str) -> Cow<'a, str> {
        let ranges = self.ranges(doc);
        if ranges.is_empty() {
            return Cow::Borrowed(text);
        }
        let removed: usize = ranges.iter().map(Removal::len).sum();
        let mut kept = String::with_capacity(text.len().saturating_sub(removed));
        let mut at = 0;
        for range in ranges {
            kept.push_str(&text[at..range.start as usize]);
            at = range.end as usize;
        }
        kept.push_str(&text[at..]);
        Cow::Owned(kept)
    }

    /// The removed texts grouped by content, most bytes removed first (ties by first
    /// document), listing at most `documents_listed` documents each. `text(doc)` gives a
    /// document's original text.
    pub fn summaries<'a>(
        &self,
        text: impl Fn(usize) -> &'a str,
        documents_listed: usize,
    ) -> Vec<SpanSummary<'a>> {
        // Each summary with the last document it was counted in.
        let mut by_text: HashMap<&'a str, (SpanSummary<'a>, u32)> = HashMap::new();
        for removal in &self.removals {
            let removed = &text(removal.doc as usize)[removal.start as usize..removal.end as usize];
            let (summary, last_doc) = by_text.entry(removed).or_insert_with(|| {
                let summary = SpanSummary {
                    text: removed,
                    documents: 0,
                    occurrences: 0,
                    bytes_removed: 0,
                    document_indexes: Vec::new(),
                };
                (summary, u32::MAX)
            });
            summary.occurrences += 1;
            summary.bytes_removed += removal.len() as u64;
            // Removals come by document, so a document repeats only right after itself.
            if summary.occurrences == 1 || *last_doc != removal.doc {
                *last_doc = removal.doc;
                summary.documents += 1;
                if summary.document_indexes.len() < documents_listed {
                    summary.document_indexes.push(removal.doc);
                }
            }
        }
        let mut summaries: Vec<SpanSummary<'a>> =
            by_text.into_values().map(|(summary, _)| summary).collect();
        summaries.sort_by(|a, b| {
            b.bytes_removed
                .cmp(&a.bytes_removed)
                .then_with(|| a.document_indexes.first().cmp(&b.document_indexes.first()))
                .then_with(|| a.text.cmp(b.text))
        });
        summaries
    }
}
