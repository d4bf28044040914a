//! The cluster stage: verified pairs become an assignment (representative or connected
//! clustering), then the members of exact-copy groups follow their leader.

use neardup_core::cluster::{self, Assignment, ClusterMode, Pair};
use neardup_core::{Method, Result};

use super::groups::Groups;
use super::options::EngineOptions;
use super::FirstError;
use crate::sketch_store::SketchStore;

/// What the cluster stage hands on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Clustered {
    /// Kept or duplicate, per document.
    pub(crate) assignment: Assignment,
    /// Members of exact-copy groups that followed their leader.
    pub(crate) exact_copies: u64,
}

/// Clusters the documents ranked `rank` from the verified `pairs` between leaders and the
/// exact-copy `groups`. The sketches are read again by connected clustering only (and
/// dropped at once otherwise).
pub(crate) fn cluster<M: Method>(
    method: &M,
    sketches: SketchStore<M::Sketch>,
    rank: &[u32],
    pairs: &[Pair],
    groups: &Groups,
    options: &EngineOptions,
) -> Result<Clustered> {
    let mut assignment = match options.cluster {
        ClusterMode::Representative => {
            // The sketches are not read again: their offsets need not stay. Held ones are
            // freed on a thread of their own (hundreds of thousands of allocations), while
            // the clusters are found and written.
            match sketches {
                SketchStore::Memory(held) => drop_aside(held),
                spilled => drop(spilled),
            }
            cluster::representative(rank, pairs)
        }
        ClusterMode::Connected => {
            let failed = FirstError::default();
            let assignment = cluster::connected(rank, pairs, |a, b| {
                match (sketches.get(method, a), sketches.get(method, b)) {
                    (Ok(a), Ok(b)) => method.similarity(&*a, &*b),
                    (Err(error), _) | (_, Err(error)) => {
                        failed.keep(error);
                        0.0
                    }
                }
            });
            failed.check()?;
            assignment
        }
    };
    let independent = (options.reference > 0 && !options.within).then_some(options.reference);
    let exact_copies = follow_leaders(&mut assignment, groups, independent);
    Ok(Clustered {
        assignment,
        exact_copies,
    })
}

/// Drops `value` on a thread of its own (when no thread can be started, the closure and
/// `value` with it are dropped here).
fn drop_aside<T: Send + 'static>(value: T) {
    let thread = std::thread::Builder::new().name("neardup-drop".into());
    let _ = thread.spawn(move || drop(value));
}

/// Members of exact groups follow their leader: a duplicate of the leader when the leader is
/// kept, else a duplicate of the leader's kept document. Returns the number of members.
///
/// With `independent = Some(reference)` (new documents checked against a reference corpus
/// only), a group led by a new document (so holding no reference document: those rank
/// first) follows its leader only when the leader is a duplicate of a reference document;
/// otherwise its members are kept, as they would be one by one.
fn follow_leaders(assignment: &mut Assignment, groups: &Groups, independent: Option<u32>) -> u64 {
    let mut members = 0;
    for group in groups.iter() {
        let leader = group[0] as usize;
        if independent.is_some_and(|reference| group[0] >= reference)
            && assignment.duplicate_of[leader].is_none()
        {
            continue;
        }
        let (target, similarity) = match assignment.duplicate_of[leader] {
            None => (group[0], 1.0),
            Some(kept) => (kept, assignment.similarity.get(leader).unwrap_or(1.0)),
        };
        for &member in &group[1..] {
            assignment.duplicate_of[member as usize] = Some(target);
            assignment.similarity.set(member as usize, Some(similarity));
            members += 1;
        }
    }
    members
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::Words;

    fn pair(a: u32, b: u32, similarity: f64) -> Pair {
        Pair {
            a,
            b,
            similarity,
            distance: None,
        }
    }

    #[test]
    fn members_follow_their_leaders_kept_document() {
        let mut assignment = Assignment::all_kept(5);
        assignment.duplicate_of[1] = Some(0);
        assignment.similarity.set(1, Some(0.7));
        let groups = Groups::from(vec![vec![0, 3], vec![1, 2]]);
        assert_eq!(follow_leaders(&mut assignment, &groups, None), 2);
        assert_eq!(
            assignment.duplicate_of,
            vec![None, Some(0), Some(0), Some(0), None]
        );
        assert_eq!(assignment.similarity.get(2), Some(0.7));
        assert_eq!(assignment.similarity.get(3), Some(1.0));
    }

    #[test]
    fn new_copies_stay_kept_when_only_checked_against_a_reference() {
        let mut assignment = Assignment::all_kept(4);
        let groups = Groups::from(vec![vec![2, 3]]);
        assert_eq!(follow_leaders(&mut assignment, &groups, Some(2)), 0);
        assert_eq!(assignment.duplicate_of, vec![None; 4]);
    }

    #[test]
    fn verified_pairs_and_copies_become_one_assignment() {
        let method = Words::default();
        let texts = ["a b", "a b c", "a b"];
        let groups = Groups::from(vec![vec![0, 2]]);
        for mode in [ClusterMode::Representative, ClusterMode::Connected] {
            let options = EngineOptions {
                cluster: mode,
                ..EngineOptions::default()
            };
            let sketches = SketchStore::Memory(texts.iter().map(|t| method.sketch(t)).collect());
            let pairs = [pair(0, 1, 2.0 / 3.0)];
            let clustered =
                cluster(&method, sketches, &[0, 1, 2], &pairs, &groups, &options).unwrap();
            assert_eq!(clustered.exact_copies, 1);
            assert_eq!(
                clustered.assignment.duplicate_of,
                vec![None, Some(0), Some(0)],
                "{mode:?}"
            );
        }
    }
}
