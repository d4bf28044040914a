//! The substring level in distributed steps (the Spark path): each document's anchors with
//! the context their windows need ([`context_anchors`], on the executors), the anchors of one
//! k-gram brought together by a shuffle and walked as one group ([`group_marks`]), and each
//! document's marks brought back to it and turned into its removed ranges
//! ([`document_ranges`]). The answer is the one [`super::find_spans`] gives on one machine.

use super::windows::{doc_anchors, kgram_length, Anchor, Group};
use super::{FoundSpans, Removal, SpanCount, SpanOptions};

/// One anchor of a document and the bytes of the document its windows span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextAnchor {
    /// The k-gram's hash: the shuffle key.
    pub key: u64,
    /// The first byte of the context (the start of the anchor's first window).
    pub start: u32,
    /// One past the context's last byte (the end of its last window).
    pub end: u32,
    /// The anchor's byte, in the document.
    pub anchor: u32,
    /// The lowest offset r charged to the anchor (its last window starts r characters before
    /// it).
    pub r_low: u16,
    /// The highest.
    pub r_high: u16,
}

/// The anchors of one document with their contexts.
///
/// # Errors
/// Options out of range ([`SpanOptions::check`]).
pub fn context_anchors(
    text: &str,
    options: &SpanOptions,
) -> Result<Vec<ContextAnchor>, super::SpanError> {
    options.check()?;
    let n = options.min_length;
    let mut anchors = Vec::new();
    doc_anchors(text, 0, n, kgram_length(n).min(n), &mut anchors);
    let contexts = anchors.iter().map(|anchor| {
        let at = anchor.byte as usize;
        let r_high = usize::from(anchor.r_high);
        let start = if r_high == 0 {
            at
        } else {
            text[..at]
                .char_indices()
                .rev()
                .nth(r_high - 1)
                .map_or(0, |(byte, _)| byte)
        };
        let right = n - usize::from(anchor.r_low);
        let end = text[at..]
            .char_indices()
            .nth(right)
            .map_or(text.len(), |(byte, _)| at + byte);
        ContextAnchor {
            key: anchor.key(),
            start: start as u32,
            end: end as u32,
            anchor: anchor.byte,
            r_low: anchor.r_low,
            r_high: anchor.r_high,
        }
    });
    Ok(contexts.collect())
}

/// One anchor as its group receives it: its document's rank in keep order, the context
/// text and the anchor's [`ContextAnchor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupMember<'a> {
    /// The document's rank in keep order (the first kept is 0).
    pub doc: u32,
    /// The context: the document's bytes `anchor.start..anchor.end`.
    pub context: &'a str,
    /// The anchor.
    pub anchor: ContextAnchor,
}

/// The removed and kept ranges the windows of one group give, in document bytes, as
/// (document rank, start, end). Members may come in any order; they all share one key.
pub fn group_marks(
    members: &[GroupMember<'_>],
    options: &SpanOptions,
) -> (Vec<Removal>, Vec<Removal>) {
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|&i| (members[i].doc, members[i].anchor.anchor));
    let mut documents = 0;
    let mut last_doc = None;
    for &i in &order {
        if options.count == SpanCount::Occurrences || last_doc != Some(members[i].doc) {
            documents += 1;
            last_doc = Some(members[i].doc);
        }
    }
    if documents < options.min_count {
        return (Vec::new(), Vec::new());
    }
    let anchors: Vec<Anchor> = order
        .iter()
        .map(|&i| {
            let member = members[i];
            Anchor {
                key_high: (member.anchor.key >> 32) as u32,
                key_low: member.anchor.key as u32,
                doc: member.doc,
                byte: member.anchor.anchor - member.anchor.start,
                r_low: member.anchor.r_low,
                r_high: member.anchor.r_high,
            }
        })
        .collect();
    let text = |member: usize| members[order[member]].context;
    let (removed, kept) = Group::new(&text, &anchors, options).walk();
    // Context bytes to document bytes: the walk marks members in `order`'s sequence, and a
    // mark names its member's document only, so each is shifted by the member it came from.
    let shift = |marks: Vec<(usize, Removal)>| -> Vec<Removal> {
        marks
            .into_iter()
            .map(|(member, mark)| {
                let base = members[order[member]].anchor.start;
                Removal {
                    doc: mark.doc,
                    start: mark.start + base,
                    end: mark.end + base,
                }
            })
            .collect()
    };
    (shift(removed), shift(kept))
}

/// One document's removed ranges from the marks its groups gave it (all with its rank).
pub fn document_ranges(removed: Vec<Removal>, kept: Vec<Removal>) -> Vec<(u32, u32)> {
    let found = FoundSpans::new(removed, kept, 1);
    found
        .removals()
        .iter()
        .map(|removal| (removal.start, removal.end))
        .collect()
}
