//! Ranks and exact copies: every document's rank under the keep policy (a reference corpus first),
//! and the groups of documents with equal [`Sketch::identity`](neardup_core::Sketch::identity), one
//! *leader* per group entering candidate generation.

use neardup_core::cluster;
use rayon::prelude::*;

use super::options::EngineOptions;

/// Groups of documents, end to end in one list: 4 bytes a member and 4 a group, where a
/// `Vec` per group took 24 bytes and an allocation (about 100 MB for 2 million groups).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    members: Vec<u32>,
    /// Where each group ends in `members`.
    ends: Vec<u32>,
}

impl Groups {
    /// Adds a group.
    pub fn push(&mut self, group: impl IntoIterator<Item = u32>) {
        self.members.extend(group);
        self.ends.push(self.members.len() as u32);
    }

    /// Group `index`.
    pub fn get(&self, index: usize) -> &[u32] {
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] as usize,
        };
        &self.members[start..self.ends[index] as usize]
    }

    /// Groups held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no group is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The groups in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }
}

impl From<Vec<Vec<u32>>> for Groups {
    fn from(groups: Vec<Vec<u32>>) -> Groups {
        let mut flat = Groups::default();
        for group in groups {
            flat.push(group);
        }
        flat
    }
}

/// What the grouping stage hands on: ranks, leaders and exact-copy groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Leaders {
    /// Per document, its rank under the keep policy (0: kept first), the reference corpus
    /// first.
    pub(crate) rank: Vec<u32>,
    /// One non-empty document per distinct identity, in input order: the best ranked of its
    /// group.
    pub(crate) leaders: Vec<u32>,
    /// Exact-copy groups of two or more, leader first, then by rank.
    pub(crate) groups: Groups,
}

impl Leaders {
    /// The ranks of documents of `lengths` characters, and their exact-copy groups by
    /// `identity` (`empty` documents in none); each list is dropped once it has served.
    pub(crate) fn find(
        lengths: Vec<u32>,
        identity: Vec<u128>,
        empty: Vec<bool>,
        options: &EngineOptions,
    ) -> Leaders {
        let rank = reference_first(cluster::ranks(&lengths, options.keep), options.reference);
        drop(lengths);
        let (leaders, groups) = exact_groups(&identity, &empty, &rank);
        drop((identity, empty));
        Leaders {
            rank,
            leaders,
            groups,
        }
    }
}

/// Slices of [`exact_groups`]' first pass (by the top 4 bits of the identities).
const UPPER_SLICES: u64 = 16;

/// Groups non-empty documents by identity. Returns the leaders (one per distinct identity,
/// in input order) and the groups of two or more (leader first, then by rank).
///
/// A first pass sorts only the identities' upper 64 bits to find the ones that repeat, a
/// sixteenth of them at a time (by their top 4 bits: `repeated` comes out sorted); only the
/// documents whose upper bits repeat are then sorted by full identity and rank, so a corpus
/// with few exact copies takes half a byte a document here, not the 24 of sorting every
/// `(identity, rank, document)`.
fn exact_groups(identity: &[u128], empty: &[bool], rank: &[u32]) -> (Vec<u32>, Groups) {
    let upper = |id: u128| (id >> 64) as u64;
    // In slices by the top bits of the upper half, so that one slice's 8 bytes a document
    // are held at a time (a sixteenth of the corpus's), not the whole corpus's.
    let mut repeated: Vec<u64> = Vec::new();
    for slice in 0..UPPER_SLICES {
        let mut uppers: Vec<u64> = (identity.par_iter().zip(empty.par_iter()))
            .filter(|(&id, &empty)| !empty && upper(id) >> 60 == slice)
            .map(|(&id, _)| upper(id))
            .collect();
        uppers.par_sort_unstable();
        repeated.extend(
            (uppers.chunk_by(|x, y| x == y))
                .filter(|run| run.len() > 1)
                .map(|run| run[0]),
        );
    }
    let mut by_identity: Vec<(u128, u32, u32)> = (identity.par_iter().zip(empty.par_iter()))
        .enumerate()
        .filter(|(_, (&id, &empty))| !empty && repeated.binary_search(&upper(id)).is_ok())
        .map(|(document, (&id, _))| (id, rank[document], document as u32))
        .collect();
    drop(repeated);
    by_identity.par_sort_unstable();
    let mut groups = Groups::default();
    let mut followers: Vec<u32> = Vec::new();
    for group in by_identity.chunk_by(|x, y| x.0 == y.0) {
        if group.len() > 1 {
            groups.push(group.iter().map(|entry| entry.2));
            followers.extend(group[1..].iter().map(|entry| entry.2));
        }
    }
    drop(by_identity);
    followers.par_sort_unstable();
    let mut next = followers.iter().peekable();
    let leaders = (0..identity.len() as u32)
        .filter(|&document| {
            if next.next_if_eq(&&document).is_some() {
                return false;
            }
            !empty[document as usize]
        })
        .collect();
    (leaders, groups)
}

/// `rank` with the first `reference` documents moved before all others, each side in its
/// own order.
fn reference_first(rank: Vec<u32>, reference: u32) -> Vec<u32> {
    if reference == 0 {
        return rank;
    }
    let mut order: Vec<u32> = (0..rank.len() as u32).collect();
    order.sort_unstable_by_key(|&d| (d >= reference, rank[d as usize]));
    let mut reranked = vec![0u32; rank.len()];
    for (position, &document) in order.iter().enumerate() {
        reranked[document as usize] = position as u32;
    }
    reranked
}

#[cfg(test)]
mod tests {
    use neardup_core::cluster::KeepPolicy;

    use super::*;

    #[test]
    fn copies_follow_the_best_ranked_leader() {
        // Documents 1 and 3 are copies, 2 is empty; the longest is kept first.
        let options = EngineOptions {
            keep: KeepPolicy::Longest,
            ..EngineOptions::default()
        };
        let found = Leaders::find(
            vec![5, 9, 0, 12],
            vec![10, 20, 30, 20],
            vec![false, false, true, false],
            &options,
        );
        assert_eq!(found.rank, vec![2, 1, 3, 0]);
        assert_eq!(found.leaders, vec![0, 3]);
        assert_eq!(found.groups, Groups::from(vec![vec![3, 1]]));
    }

    #[test]
    fn empty_documents_are_never_grouped_or_leaders() {
        let found = Leaders::find(
            vec![0; 3],
            vec![7; 3],
            vec![true; 3],
            &EngineOptions::default(),
        );
        assert!(found.leaders.is_empty());
        assert!(found.groups.is_empty());
    }

    #[test]
    fn groups_are_found_across_upper_slices() {
        // Identities repeated in several of the sixteen slices.
        let identity: Vec<u128> = (0..64u128)
            .map(|d| ((d % 16) << 124) | ((d % 32) << 64) | (d % 2))
            .collect();
        let rank: Vec<u32> = (0..64).collect();
        let (leaders, groups) = exact_groups(&identity, &[false; 64], &rank);
        // d and d + 32 are equal: 32 groups of two, led by the first.
        assert_eq!(leaders, (0..32).collect::<Vec<u32>>());
        assert_eq!(groups.len(), 32);
        assert!(groups.iter().all(|group| group[1] == group[0] + 32));
        // Equal upper halves are only a hint: the whole identities decide.
        let (leaders, groups) = exact_groups(&[1 << 64 | 1, 1 << 64 | 2], &[false; 2], &[0, 1]);
        assert_eq!((leaders, groups.len()), (vec![0, 1], 0));
    }

    #[test]
    fn the_reference_corpus_ranks_first() {
        assert_eq!(reference_first(vec![3, 0, 1, 2], 0), vec![3, 0, 1, 2]);
        // Documents 0 and 1 are the reference corpus.
        assert_eq!(reference_first(vec![3, 0, 1, 2], 2), vec![1, 0, 2, 3]);
    }
}
