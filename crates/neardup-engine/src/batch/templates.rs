//! The templates a run found: documents joined by the pairs that the template check refused
//! ([`neardup_core::Verdict::Fillings`]: two fillings of one template whose measure reached
//! the threshold), grouped with union-find, for the stats file and the report.
//!
//! A group is a template as the run saw it: its fillings met as candidates and were told
//! apart by their rare elements or their numbers. Fillings that never met (the candidate
//! budget kept other partners) may split one template into several groups; a copy of a
//! filling joins its filling's group through the pairs its partners refused.
//!
//! A join that takes templated texts apart and joins them on their rare elements (`join`,
//! Pass-Join, `ngram`) pairs only what the check can accept, so it refuses few pairs. Its
//! templated texts are also linked by their template samples ([`template_links`]): a text to
//! the first text (by document) of each of its sample's hashes when the two share half of
//! their samples.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use neardup_core::measure::intersection_size;
use neardup_core::method::RareHook;
use neardup_core::methods::shared::template::TEMPLATE_SAMPLE_KEYS;
use neardup_core::{Method, Result};

use super::groups::Groups;
use crate::sketch_store::SketchStore;

/// Members of a group named in [`TemplateGroup::sample`].
pub const TEMPLATE_SAMPLE: usize = 8;

/// Groups described in [`Templates::groups`], the largest first.
pub const TEMPLATES_LISTED: usize = 20;

/// One template found: documents joined by refused pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateGroup {
    /// Its documents, the exact copies of its members included.
    pub documents: u64,
    /// Candidate pairs of its members that the template check refused.
    pub refused_pairs: u64,
    /// Its first [`TEMPLATE_SAMPLE`] members by input order (documents of the run).
    pub sample: Vec<u32>,
}

/// What a run found of templates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Templates {
    /// Candidate pairs the template check refused.
    pub refused_pairs: u64,
    /// Groups of documents those pairs join.
    pub found: u64,
    /// Documents in those groups, exact copies included.
    pub documents: u64,
    /// The [`TEMPLATES_LISTED`] largest groups, most documents first (then by first member).
    pub groups: Vec<TemplateGroup>,
}

impl Templates {
    /// The templates of the refused pairs `fillings` (between leaders), whose members' exact
    /// copies are in `groups` (leader first). Work and memory are linear in the pairs.
    pub fn find(fillings: &[(u32, u32)], groups: &Groups) -> Templates {
        Templates::linked(fillings, &[], groups)
    }

    /// As [`Templates::find`], with the documents `links` joins too ([`template_links`]; not
    /// counted as refused pairs).
    pub(crate) fn linked(
        fillings: &[(u32, u32)],
        links: &[(u32, u32)],
        groups: &Groups,
    ) -> Templates {
        let counted: Vec<(u32, u64)> = fillings.iter().map(|&(a, _)| (a, 1)).collect();
        let mut all = fillings.to_vec();
        all.extend_from_slice(links);
        Templates::joined(&all, &counted, groups)
    }

    /// The templates of the documents `links` join, with the refused pairs `counted` by
    /// document (each pair counted once, under either of its documents).
    fn joined(links: &[(u32, u32)], counted: &[(u32, u64)], groups: &Groups) -> Templates {
        if links.is_empty() {
            return Templates::default();
        }
        // The documents in a refused pair, numbered densely.
        let mut members: Vec<u32> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
        members.sort_unstable();
        members.dedup();
        let at = |document: u32| members.binary_search(&document).unwrap_or(0);
        let mut parent: Vec<usize> = (0..members.len()).collect();
        for &(a, b) in links {
            let (x, y) = (root(&mut parent, at(a)), root(&mut parent, at(b)));
            // The smaller index is the root: the group is named by its first member.
            let (low, high) = (x.min(y), x.max(y));
            parent[high] = low;
        }
        let copies = exact_copies(&members, groups);
        // Per root: documents, refused pairs, sample.
        let mut by_root: Vec<Option<TemplateGroup>> = vec![None; members.len()];
        for (index, &document) in members.iter().enumerate() {
            let group = by_root[root(&mut parent, index)].get_or_insert_with(|| TemplateGroup {
                documents: 0,
                refused_pairs: 0,
                sample: Vec::new(),
            });
            group.documents += 1 + copies[index];
            if group.sample.len() < TEMPLATE_SAMPLE {
                group.sample.push(document);
            }
        }
        for &(document, count) in counted {
            if let Ok(index) = members.binary_search(&document) {
                if let Some(group) = by_root[root(&mut parent, index)].as_mut() {
                    group.refused_pairs += count;
                }
            }
        }
        let mut found: Vec<TemplateGroup> = by_root.into_iter().flatten().collect();
        let documents = found.iter().map(|group| group.documents).sum();
        let count = found.len() as u64;
        found.sort_by_key(|group| (std::cmp::Reverse(group.documents), group.sample[0]));
        found.truncate(TEMPLATES_LISTED);
        Templates {
            refused_pairs: counted.iter().map(|c| c.1).sum(),
            found: count,
            documents,
            groups: found,
        }
    }
}

/// The pairs the template check refused while a generator verified (the n-gram index, from
/// every thread at once), kept in bounded memory: the index compares a flood's fillings in
/// every bucket they share, and recording every comparison took 5 s and 30 MB more on a flood
/// of 12,589 notices. A union-find over the documents keeps the pairs that joined two groups
/// (at most one a document), and each document counts the comparisons refused with a
/// partner ranked after it. Both are the same whatever the thread count: the components of
/// a graph do not depend on the order of its edges, nor sums on the order of their terms.
pub(crate) struct RefusedPairs {
    parent: Vec<AtomicU32>,
    counts: Vec<AtomicU64>,
    links: std::sync::Mutex<Vec<(u32, u32)>>,
}

impl RefusedPairs {
    /// For `documents` documents.
    pub(crate) fn new(documents: usize) -> RefusedPairs {
        RefusedPairs {
            parent: (0..documents as u32).map(AtomicU32::new).collect(),
            counts: (0..documents).map(|_| AtomicU64::new(0)).collect(),
            links: std::sync::Mutex::default(),
        }
    }

    /// Records that the template check refused documents `a` and `b`.
    pub(crate) fn add(&self, a: u32, b: u32) {
        let (a, b) = (a.min(b), a.max(b));
        self.counts[a as usize].fetch_add(1, Ordering::Relaxed);
        loop {
            let (x, y) = (self.root(a), self.root(b));
            if x == y {
                return;
            }
            // The larger root goes under the smaller, if no one moved it meanwhile.
            let (low, high) = (x.min(y), x.max(y));
            let moved = self.parent[high as usize].compare_exchange(
                high,
                low,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if moved.is_ok() {
                let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
                links.push((a, b));
                return;
            }
        }
    }

    /// The root of `document`; parents only ever move towards a root.
    fn root(&self, mut document: u32) -> u32 {
        loop {
            let parent = self.parent[document as usize].load(Ordering::Acquire);
            if parent == document {
                return document;
            }
            document = parent;
        }
    }

    /// The templates these pairs join, with the pairs `fillings` (sorted; each counted once)
    /// of the verify stage and the documents `keyed` links ([`template_links`]), whose
    /// members' exact copies are in `groups`.
    pub(crate) fn templates(
        self,
        fillings: &[(u32, u32)],
        keyed: &[(u32, u32)],
        groups: &Groups,
    ) -> Templates {
        let mut links = self.links.into_inner().unwrap_or_else(|e| e.into_inner());
        links.extend_from_slice(fillings);
        links.extend_from_slice(keyed);
        links.sort_unstable();
        links.dedup();
        let mut counted: Vec<(u32, u64)> = (self.counts.into_iter().enumerate())
            .map(|(document, count)| (document as u32, count.into_inner()))
            .filter(|&(_, count)| count > 0)
            .collect();
        counted.extend(fillings.iter().map(|&(a, _)| (a, 1)));
        Templates::joined(&links, &counted, groups)
    }
}

/// The fewest hashes of their template samples
/// ([`neardup_core::methods::shared::template::TemplatePart::template_sample`]) two templated
/// texts share for [`template_links`] to link them: half of the sample. Two fillings of one
/// template share about the Jaccard of their template's text, most of it; a text of another
/// template shares a hash now and then, so one shared hash would chain templates together.
pub(crate) const LINK_KEYS: usize = TEMPLATE_SAMPLE_KEYS / 2;

/// The least hashes of a text's template sample under which [`template_links`] files it: the
/// first text filed under one of them is its anchor. The smallest hashes of a template's text
/// are in most of its fillings' samples.
const FILED_KEYS: usize = 3;

/// A template sample: its hashes, ascending, and how many there are.
type Sample = ([u64; TEMPLATE_SAMPLE_KEYS], usize);

/// The links of the templated `leaders` by their template samples (`keys`, a
/// [`neardup_core::RareJoin::templates`] hook): each text to the first leader (by document)
/// filed under one of its [`FILED_KEYS`] least hashes, when the two share at least
/// [`LINK_KEYS`] hashes. At most [`FILED_KEYS`] links a text; sorted, without repeats. Work
/// is linear in the texts (a sort of their filed hashes), memory a sample a templated text.
pub(crate) fn template_links<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    leaders: &[u32],
    keys: RareHook<M>,
) -> Result<Vec<(u32, u32)>> {
    let sampled: Vec<Option<Sample>> = sketches.map_sorted(method, leaders, |_, sketch| {
        let mut out = Vec::new();
        if !keys(method, sketch, &mut out) {
            return None;
        }
        out.sort_unstable();
        out.dedup();
        let mut sample = [0; TEMPLATE_SAMPLE_KEYS];
        let len = out.len().min(TEMPLATE_SAMPLE_KEYS);
        sample[..len].copy_from_slice(&out[..len]);
        Some((sample, len))
    })?;
    // The templated leaders (ascending) and their samples.
    let texts: Vec<(u32, Sample)> = (leaders.iter().zip(sampled))
        .filter_map(|(&leader, sample)| Some((leader, sample?)))
        .collect();
    let mut entries: Vec<(u64, u32)> = (texts.iter().enumerate())
        .flat_map(|(at, (_, (keys, len)))| {
            keys[..(*len).min(FILED_KEYS)]
                .iter()
                .map(move |&key| (key, at as u32))
        })
        .collect();
    entries.par_sort_unstable();
    let mut links = Vec::new();
    for run in entries.chunk_by(|a, b| a.0 == b.0) {
        let (first, (first_keys, first_len)) = &texts[run[0].1 as usize];
        for &(_, at) in &run[1..] {
            let (text, (text_keys, text_len)) = &texts[at as usize];
            if intersection_size(&first_keys[..*first_len], &text_keys[..*text_len]) >= LINK_KEYS {
                links.push((*first, *text));
            }
        }
    }
    links.sort_unstable();
    links.dedup();
    Ok(links)
}

/// The root of `index`, halving the path on the way.
fn root(parent: &mut [usize], mut index: usize) -> usize {
    while parent[index] != index {
        parent[index] = parent[parent[index]];
        index = parent[index];
    }
    index
}

/// Per member of `members` (sorted documents), how many exact copies follow it in `groups`.
fn exact_copies(members: &[u32], groups: &Groups) -> Vec<u64> {
    let mut copies = vec![0u64; members.len()];
    for group in groups.iter() {
        if let Some((&leader, rest)) = group.split_first() {
            if let Ok(index) = members.binary_search(&leader) {
                copies[index] = rest.len() as u64;
            }
        }
    }
    copies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_pairs_join_their_documents_and_exact_copies_count() {
        let mut groups = Groups::default();
        groups.push([4, 9, 11]);
        // Two templates: {1, 4, 7} (4 has two exact copies) and {20, 30}.
        let fillings = [(1, 4), (4, 7), (1, 7), (20, 30)];
        let found = Templates::find(&fillings, &groups);
        assert_eq!(found.refused_pairs, 4);
        assert_eq!(found.found, 2);
        assert_eq!(found.documents, 7);
        assert_eq!(
            found.groups,
            [
                TemplateGroup {
                    documents: 5,
                    refused_pairs: 3,
                    sample: vec![1, 4, 7],
                },
                TemplateGroup {
                    documents: 2,
                    refused_pairs: 1,
                    sample: vec![20, 30],
                },
            ]
        );
        assert_eq!(Templates::find(&[], &groups), Templates::default());
    }

    #[test]
    fn pairs_refused_from_many_threads_give_the_templates_of_one_thread() {
        // Two templates, every pair of each refused three times (once per bucket).
        let pairs: Vec<(u32, u32)> = (0..40u32)
            .flat_map(|a| (a + 1..40).map(move |b| (a, b)))
            .filter(|&(a, b)| a % 2 == b % 2)
            .flat_map(|pair| [pair; 3])
            .collect();
        let groups = Groups::default();
        let alone = RefusedPairs::new(40);
        for &(a, b) in &pairs {
            alone.add(b, a);
        }
        let expected = alone.templates(&[(50, 51)], &[], &groups);
        assert_eq!(expected.found, 3);
        assert_eq!(expected.refused_pairs, pairs.len() as u64 + 1);
        assert_eq!(expected.groups[0].documents, 20);
        assert_eq!(expected.groups[0].refused_pairs, 3 * 190);
        for threads in [2, 4, 8] {
            let shared = RefusedPairs::new(40);
            std::thread::scope(|scope| {
                for chunk in pairs.chunks(pairs.len().div_ceil(threads)) {
                    let shared = &shared;
                    scope.spawn(move || chunk.iter().for_each(|&(a, b)| shared.add(a, b)));
                }
            });
            assert_eq!(
                shared.templates(&[(50, 51)], &[], &groups),
                expected,
                "{threads}"
            );
        }
    }

    #[test]
    fn links_join_groups_and_count_no_refused_pair() {
        let groups = Groups::default();
        // A refused pair, and links that join a third document to it and pair two others.
        let found = Templates::linked(&[(1, 2)], &[(2, 3), (7, 9)], &groups);
        assert_eq!(found.found, 2);
        assert_eq!(found.refused_pairs, 1);
        assert_eq!(found.groups[0].sample, vec![1, 2, 3]);
        assert_eq!(found.groups[0].refused_pairs, 1);
        assert_eq!(found.groups[1].sample, vec![7, 9]);
        assert_eq!(found.groups[1].refused_pairs, 0);
    }

    #[test]
    fn samples_share_their_common_hashes() {
        assert_eq!(intersection_size(&[1u64, 3, 5, 7], &[2, 3, 4, 7, 9]), 2);
        assert_eq!(intersection_size::<u64>(&[], &[1]), 0);
    }

    #[test]
    fn a_chain_is_one_group_whatever_the_order_of_its_pairs() {
        let groups = Groups::default();
        let pairs: Vec<(u32, u32)> = (0..100).map(|i| (i, i + 1)).rev().collect();
        let found = Templates::find(&pairs, &groups);
        assert_eq!(found.found, 1);
        assert_eq!(found.groups[0].documents, 101);
        assert_eq!(found.groups[0].sample, (0..8).collect::<Vec<u32>>());
    }
}
