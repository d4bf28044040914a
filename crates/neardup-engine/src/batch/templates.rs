//! The templates a run found: documents joined by the pairs that the template check refused
//! ([`neardup_core::Verdict::Fillings`]: two fillings of one template whose measure reached
//! the threshold), grouped with union-find, for the stats file and the report.
//!
//! A group is a template as the run saw it: its fillings met as candidates and were told
//! apart by their rare elements or their numbers. Fillings that never met (the candidate
//! budget kept other partners) may split one template into several groups; a copy of a
//! filling joins its filling's group through the pairs its partners refused.

use super::outcome::Groups;

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
        if fillings.is_empty() {
            return Templates::default();
        }
        // The documents in a refused pair, numbered densely.
        let mut members: Vec<u32> = fillings.iter().flat_map(|&(a, b)| [a, b]).collect();
        members.sort_unstable();
        members.dedup();
        let at = |document: u32| members.binary_search(&document).unwrap_or(0);
        let mut parent: Vec<usize> = (0..members.len()).collect();
        for &(a, b) in fillings {
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
        for &(a, _) in fillings {
            let found = root(&mut parent, at(a));
            if let Some(group) = by_root[found].as_mut() {
                group.refused_pairs += 1;
            }
        }
        let mut found: Vec<TemplateGroup> = by_root.into_iter().flatten().collect();
        let documents = found.iter().map(|group| group.documents).sum();
        let count = found.len() as u64;
        found.sort_by_key(|group| (std::cmp::Reverse(group.documents), group.sample[0]));
        found.truncate(TEMPLATES_LISTED);
        Templates {
            refused_pairs: fillings.len() as u64,
            found: count,
            documents,
            groups: found,
        }
    }
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
    fn a_chain_is_one_group_whatever_the_order_of_its_pairs() {
        let groups = Groups::default();
        let pairs: Vec<(u32, u32)> = (0..100).map(|i| (i, i + 1)).rev().collect();
        let found = Templates::find(&pairs, &groups);
        assert_eq!(found.found, 1);
        assert_eq!(found.groups[0].documents, 101);
        assert_eq!(found.groups[0].sample, (0..8).collect::<Vec<u32>>());
    }
}
