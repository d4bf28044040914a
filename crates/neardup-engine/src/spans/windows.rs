//! The substring level: repeated windows of exactly `min_length` characters, found through
//! their minimizers and confirmed character by character.
//!
//! A window of N characters holds w = N - k + 1 k-grams; its minimizer is the leftmost of
//! those with the smallest hash. Every copy of a window has the same minimizer at the same
//! offset r, so all copies are charged to anchors of one k-gram at one r. Consecutive windows
//! share their minimizer, so each anchor carries the range of r it is charged with, and a
//! document of L characters yields about 2 L / (w + 1) anchors ([`anchors`]). Anchors are
//! sorted by k-gram hash; a group of anchors of one k-gram in enough documents is walked r
//! by r: the windows are hashed by a rolling polynomial, equal hashes are compared with the
//! group's first copy (the agreement to the left and right of the two anchors, computed once
//! a pair), and every window found in enough documents is removed from all its copies but
//! the first ([`Group`]). Hash collisions cost time, never a wrong answer.

use rayon::prelude::*;

use super::{Removal, SpanCount, SpanOptions, SpanRemoval};
use neardup_core::hash::mix64;

/// The rolling hashes' base (odd, so that multiplication is a bijection modulo 2^64).
const BASE: u64 = 0x9e37_79b9_7f4a_7c15;

/// Documents sketched in one parallel batch, by bytes: bounds the anchors held twice.
const BATCH_BYTES: usize = 64 << 20;

/// The k-gram length for windows of `n` characters: 16, or a third of a shorter window.
pub(crate) fn kgram_length(n: usize) -> usize {
    if n >= 48 {
        16
    } else {
        n.div_ceil(3).max(1)
    }
}

/// One minimizer: its k-gram's hash, where it stands, and the offsets r of the windows
/// charged to it (`r_low..=r_high`, the window starting r characters before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub(crate) key_high: u32,
    pub(crate) key_low: u32,
    pub(crate) doc: u32,
    pub(crate) byte: u32,
    pub(crate) r_low: u16,
    pub(crate) r_high: u16,
}

impl Anchor {
    pub(crate) fn key(&self) -> u64 {
        (u64::from(self.key_high) << 32) | u64::from(self.key_low)
    }

    pub(crate) fn order(&self) -> (u64, u32, u32) {
        (self.key(), self.doc, self.byte)
    }
}

/// `base` to the power `exponent`, modulo 2^64.
pub(crate) fn power(exponent: usize) -> u64 {
    (0..exponent).fold(1u64, |product, _| product.wrapping_mul(BASE))
}

/// The anchors of one document, in order.
pub(crate) fn doc_anchors(text: &str, doc: u32, n: usize, k: usize, out: &mut Vec<Anchor>) {
    let w = n - k + 1;
    let top = power(k - 1);
    let mut kgram: std::collections::VecDeque<u32> = std::collections::VecDeque::with_capacity(k);
    let mut hash = 0u64;
    // (k-gram index, value, byte of its first character), values increasing from the front.
    let mut minima: std::collections::VecDeque<(usize, u64, u32)> =
        std::collections::VecDeque::new();
    let mut starts: std::collections::VecDeque<u32> = std::collections::VecDeque::with_capacity(k);
    // The anchor being extended: (k-gram index, value, byte, first window, last window).
    let mut current: Option<(usize, u64, u32, usize, usize)> = None;
    let mut index = 0usize;
    for (byte, c) in text.char_indices() {
        if kgram.len() == k {
            let old = kgram.pop_front().unwrap_or_default();
            hash = hash.wrapping_sub(u64::from(old).wrapping_mul(top));
            starts.pop_front();
        }
        kgram.push_back(c as u32);
        starts.push_back(byte as u32);
        hash = hash.wrapping_mul(BASE).wrapping_add(u64::from(c as u32));
        if kgram.len() < k {
            continue;
        }
        let value = mix64(hash);
        let start = starts.front().copied().unwrap_or_default();
        while minima.back().is_some_and(|&(_, back, _)| back > value) {
            minima.pop_back();
        }
        minima.push_back((index, value, start));
        if index + 1 >= w {
            let window = index + 1 - w;
            while minima.front().is_some_and(|&(at, _, _)| at < window) {
                minima.pop_front();
            }
            let &(at, value, byte) = minima.front().expect("the newest k-gram is in the window");
            match &mut current {
                Some(anchor) if anchor.0 == at => anchor.4 = window,
                _ => {
                    if let Some(done) = current.replace((at, value, byte, window, window)) {
                        out.push(finish(done, doc));
                    }
                }
            }
        }
        index += 1;
    }
    if let Some(done) = current {
        out.push(finish(done, doc));
    }
}

fn finish((at, value, byte, first, last): (usize, u64, u32, usize, usize), doc: u32) -> Anchor {
    Anchor {
        key_high: (value >> 32) as u32,
        key_low: value as u32,
        doc,
        byte,
        r_low: (at - last) as u16,
        r_high: (at - first) as u16,
    }
}

/// Calls `each` with the anchors of every document, in order, the documents sketched in
/// parallel batches of about `batch_bytes` bytes of text.
pub(crate) fn for_each_anchors<S: AsRef<str> + Sync, E>(
    texts: &[S],
    n: usize,
    k: usize,
    batch_bytes: usize,
    mut each: impl FnMut(Vec<Anchor>) -> Result<(), E>,
) -> Result<(), E> {
    let mut first = 0;
    while first < texts.len() {
        let mut last = first;
        let mut bytes = 0;
        while last < texts.len() && (last == first || bytes < batch_bytes) {
            bytes += texts[last].as_ref().len();
            last += 1;
        }
        let batch: Vec<Vec<Anchor>> = (first..last)
            .into_par_iter()
            .map(|doc| {
                let mut out = Vec::new();
                doc_anchors(texts[doc].as_ref(), doc as u32, n, k, &mut out);
                out
            })
            .collect();
        for part in batch {
            each(part)?;
        }
        first = last;
    }
    Ok(())
}

/// Every anchor of the corpus, sorted by k-gram hash, then document, then position.
fn all_anchors<S: AsRef<str> + Sync>(texts: &[S], n: usize, k: usize) -> Vec<Anchor> {
    let total: usize = texts.iter().map(|text| text.as_ref().len()).sum();
    let w = n - k + 1;
    let mut anchors: Vec<Anchor> = Vec::with_capacity(total / (w + 1) * 2 + 16);
    let never: Result<(), ()> = for_each_anchors(texts, n, k, BATCH_BYTES, |part| {
        anchors.extend_from_slice(&part);
        Ok(())
    });
    debug_assert!(never.is_ok());
    anchors.par_sort_unstable_by_key(Anchor::order);
    anchors
}

/// The groups of anchors sharing a k-gram hash that may hold a window in enough documents.
fn groups(anchors: &[Anchor], options: &SpanOptions) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    while start < anchors.len() {
        let key = anchors[start].key();
        let mut end = start;
        let mut documents = 0;
        let mut last_doc = u32::MAX;
        while end < anchors.len() && anchors[end].key() == key {
            if options.count == SpanCount::Occurrences || anchors[end].doc != last_doc {
                documents += 1;
                last_doc = anchors[end].doc;
            }
            end += 1;
        }
        if documents >= options.min_count {
            groups.push(start..end);
        }
        start = end;
    }
    groups
}

/// The removals and kept first copies of the substring level.
pub(crate) fn removals<S: AsRef<str> + Sync>(
    texts: &[S],
    options: &SpanOptions,
) -> (Vec<Removal>, Vec<Removal>) {
    let n = options.min_length;
    let k = kgram_length(n).min(n);
    let anchors = all_anchors(texts, n, k);
    let groups = groups(&anchors, options);
    let found: Vec<(Vec<Removal>, Vec<Removal>)> = groups
        .into_par_iter()
        .map(|range| {
            let members = &anchors[range];
            let text = |member: usize| texts[members[member].doc as usize].as_ref();
            let (removed, kept) = Group::new(&text, members, options).walk();
            let ranges = |marks: Vec<(usize, Removal)>| marks.into_iter().map(|(_, r)| r).collect();
            (ranges(removed), ranges(kept))
        })
        .collect();
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    for (group_removed, group_kept) in found {
        removed.extend(group_removed);
        kept.extend(group_kept);
    }
    (removed, kept)
}

/// The removed and kept window ranges of a group, each with the member it was marked on.
pub(crate) type Marks = (Vec<(usize, Removal)>, Vec<(usize, Removal)>);

/// No member, no range: the empty value of [`Walker`]'s fields.
const NONE: u32 = u32::MAX;

/// A member's window at the current r, and its agreement with a first copy: 40 bytes, as a
/// flood's group holds one per copy of a notice.
#[derive(Debug, Clone, Copy)]
struct Walker {
    /// The window's bytes `start..end` in the member's text.
    start: u32,
    end: u32,
    hash: u64,
    /// The member compared with (`NONE`: none yet), and the characters agreeing left of
    /// the two anchors (at most the r range, under 2^16) and from them rightwards (at most
    /// the window's length, under 2^16).
    agreement_with: u32,
    left: u16,
    right: u16,
    /// The window range being marked: removed (`[0]`) or kept as a first copy (`[1]`);
    /// `start == NONE`: none open.
    open: [(u32, u32); 2],
}

impl Default for Walker {
    fn default() -> Self {
        Walker {
            start: 0,
            end: 0,
            hash: 0,
            agreement_with: NONE,
            left: 0,
            right: 0,
            open: [(NONE, 0); 2],
        }
    }
}

/// One k-gram's anchors, walked r by r. `text(member)` is the text a member's anchor byte
/// is in: its document, or (on Spark) the context shipped with it.
pub(crate) struct Group<'a> {
    text: &'a dyn Fn(usize) -> &'a str,
    members: &'a [Anchor],
    walkers: Vec<Walker>,
    options: &'a SpanOptions,
    top: u64,
    marks: [Vec<(usize, Removal)>; 2],
}

impl<'a> Group<'a> {
    pub(crate) fn new(
        text: &'a dyn Fn(usize) -> &'a str,
        members: &'a [Anchor],
        options: &'a SpanOptions,
    ) -> Self {
        Group {
            text,
            members,
            walkers: vec![Walker::default(); members.len()],
            options,
            top: power(options.min_length - 1),
            marks: [Vec::new(), Vec::new()],
        }
    }

    fn text(&self, member: usize) -> &'a str {
        (self.text)(member)
    }

    /// Walks every r from the highest down, returning the removed and kept ranges (in the
    /// members' texts' bytes).
    pub(crate) fn walk(mut self) -> Marks {
        let high = self
            .members
            .iter()
            .map(|member| member.r_high)
            .max()
            .unwrap_or(0);
        let low = self
            .members
            .iter()
            .map(|member| member.r_low)
            .min()
            .unwrap_or(0);
        let mut active: Vec<(u64, u32)> = Vec::new();
        for r in (low..=high).rev() {
            active.clear();
            for member in 0..self.members.len() {
                let anchor = self.members[member];
                if (anchor.r_low..=anchor.r_high).contains(&r) {
                    self.advance(member, usize::from(r));
                    active.push((self.walkers[member].hash, member as u32));
                }
            }
            active.sort_unstable();
            let mut start = 0;
            while start < active.len() {
                let end =
                    start + active[start..].partition_point(|&(hash, _)| hash == active[start].0);
                if self.count(
                    active[start..end]
                        .iter()
                        .map(|&(_, member)| member as usize),
                ) >= self.options.min_count
                {
                    let run: Vec<u32> = active[start..end].iter().map(|&(_, m)| m).collect();
                    self.classes(run, usize::from(r));
                }
                start = end;
            }
        }
        for member in 0..self.members.len() {
            for side in 0..2 {
                self.flush(member, side);
            }
        }
        let [removed, kept] = self.marks;
        (removed, kept)
    }

    /// Moves a member's window to offset `r`: computed afresh at its highest r, slid by one
    /// character after.
    fn advance(&mut self, member: usize, r: usize) {
        let anchor = self.members[member];
        let text = self.text(member);
        let n = self.options.min_length;
        let walker = &mut self.walkers[member];
        if r == usize::from(anchor.r_high) {
            let anchor_byte = anchor.byte as usize;
            let start = if r == 0 {
                anchor_byte
            } else {
                text[..anchor_byte]
                    .char_indices()
                    .rev()
                    .nth(r - 1)
                    .map_or(0, |(at, _)| at)
            };
            let mut hash = 0u64;
            let mut end = start;
            for c in text[start..].chars().take(n) {
                hash = hash.wrapping_mul(BASE).wrapping_add(u64::from(c as u32));
                end += c.len_utf8();
            }
            walker.start = start as u32;
            walker.end = end as u32;
            walker.hash = hash;
        } else {
            let out = text[walker.start as usize..]
                .chars()
                .next()
                .unwrap_or_default();
            let into = text[walker.end as usize..]
                .chars()
                .next()
                .unwrap_or_default();
            walker.hash = walker
                .hash
                .wrapping_sub(u64::from(out as u32).wrapping_mul(self.top))
                .wrapping_mul(BASE)
                .wrapping_add(u64::from(into as u32));
            walker.start += out.len_utf8() as u32;
            walker.end += into.len_utf8() as u32;
        }
    }

    /// Documents or occurrences among members (in keep order).
    fn count(&self, members: impl Iterator<Item = usize>) -> usize {
        let mut count = 0;
        let mut last_doc = u32::MAX;
        for member in members {
            let doc = self.members[member].doc;
            if self.options.count == SpanCount::Occurrences || doc != last_doc {
                count += 1;
                last_doc = doc;
            }
        }
        count
    }

    /// Splits members of equal hash into classes of equal windows, marking each class found
    /// in enough documents.
    fn classes(&mut self, mut run: Vec<u32>, r: usize) {
        while !run.is_empty() {
            let first = run[0] as usize;
            let (class, rest): (Vec<u32>, Vec<u32>) = run.iter().partition(|&&member| {
                member as usize == first || self.equal(member as usize, first, r)
            });
            if self.count(class.iter().map(|&member| member as usize)) >= self.options.min_count {
                for &member in &class {
                    let member = member as usize;
                    let side =
                        usize::from(member == first && self.options.remove == SpanRemoval::Later);
                    self.mark(member, side);
                }
            }
            run = rest;
        }
    }

    /// Whether `member`'s window at offset `r` equals `first`'s, character by character.
    fn equal(&mut self, member: usize, first: usize, r: usize) -> bool {
        let walker = self.walkers[member];
        let (left, right) = if walker.agreement_with == first as u32 {
            (usize::from(walker.left), usize::from(walker.right))
        } else {
            let (left, right) = self.agreement(member, first);
            let walker = &mut self.walkers[member];
            walker.agreement_with = first as u32;
            // Capped at the r range and the window's length, both under 2^16.
            (walker.left, walker.right) = (left as u16, right as u16);
            (left, right)
        };
        left >= r && right >= self.options.min_length - r
    }

    /// Characters agreeing left of the two anchors (up to `member`'s highest r) and from them
    /// rightwards (up to the window's length).
    fn agreement(&self, member: usize, first: usize) -> (usize, usize) {
        let (a, b) = (self.members[member], self.members[first]);
        let (text_a, text_b) = (self.text(member), self.text(first));
        let left = text_a[..a.byte as usize]
            .chars()
            .rev()
            .zip(text_b[..b.byte as usize].chars().rev())
            .take(usize::from(a.r_high))
            .take_while(|(x, y)| x == y)
            .count();
        let right = text_a[a.byte as usize..]
            .chars()
            .zip(text_b[b.byte as usize..].chars())
            .take(self.options.min_length)
            .take_while(|(x, y)| x == y)
            .count();
        (left, right)
    }

    /// Marks a member's current window as removed (side 0) or kept (side 1).
    fn mark(&mut self, member: usize, side: usize) {
        let walker = self.walkers[member];
        match walker.open[side] {
            (start, end) if start != NONE && walker.start <= end => {
                self.walkers[member].open[side] = (start, walker.end.max(end));
            }
            _ => {
                self.flush(member, side);
                self.walkers[member].open[side] = (walker.start, walker.end);
            }
        }
    }

    fn flush(&mut self, member: usize, side: usize) {
        let (start, end) = std::mem::replace(&mut self.walkers[member].open[side], (NONE, 0));
        if start != NONE {
            let doc = self.members[member].doc;
            let removal = Removal { doc, start, end };
            self.marks[side].push((member, removal));
        }
    }
}
