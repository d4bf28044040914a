//! What a batch run returns: the assignment, the verified pairs, the exact-copy groups and
//! the run's statistics.

use neardup_core::cluster::{Assignment, Pair};

use super::groups::Groups;
use super::templates::Templates;

/// Counters and timings of one run of the engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineStats {
    /// Documents with no feature after normalisation (always kept alone).
    pub empty_documents: u64,
    /// Documents with too few features to compare approximately
    /// ([`Sketch::exact_only`](neardup_core::Sketch::exact_only)): matched as exact copies only.
    pub exact_only_documents: u64,
    /// Documents removed as exact copies of their group's leader.
    pub exact_copies: u64,
    /// Candidate pairs from the index (leaders only, deduplicated).
    pub candidate_pairs: u64,
    /// Candidate pairs confirmed by the true measure.
    pub verified_pairs: u64,
    /// Documents in the largest index bucket.
    pub largest_bucket: u64,
    /// Buckets over the cap, paired with their anchors only.
    pub capped_buckets: u64,
    /// Documents left out of capped buckets, summed over those buckets (`ngram`, whose
    /// greedy pass sees a bucket's first `bucket_cap` members only; 0 for other methods).
    pub capped_out: u64,
    /// Work done while finding candidates: `ngram`'s similarity computations, the
    /// fingerprints `simhash`'s join compared, the members and search steps of the
    /// shared-key merge (`segments`, `sentences`); 0 for the key tables.
    pub candidate_comparisons: u64,
    /// The pair limit an exact join passed (0: none): [`dedup`](super::dedup) then fails.
    pub pair_limit_passed: u64,
    /// Documents with more candidate partners than the partner limit, compared with their
    /// best-ranked ones only (0 unless a flood hit the candidate budget: then, and only then,
    /// the result may differ from comparing every candidate).
    pub budget_hits: u64,
    /// Most candidate partners a document could keep, `None` when the budget did not cut in
    /// (see [`CandidateLimits`](neardup_index::CandidateLimits)).
    pub partner_limit: Option<u64>,
    /// Seconds per stage: (corpus, when the method learns from it), sketch, candidates,
    /// verify, cluster.
    pub seconds: Vec<(&'static str, f64)>,
    /// What boilerplate handling found and removed (see [`neardup_core::boilerplate`]).
    pub boilerplate: BoilerplateStats,
    /// The templates the template check told apart ([`Templates`]).
    pub templates: Templates,
    /// The method's lexicon as a file (with
    /// [`EngineOptions::save_lexicon`](super::EngineOptions::save_lexicon)).
    pub lexicon: Option<String>,
    /// Bytes of sketches written to the spill (0 when they were held in memory).
    pub spilled_bytes: u64,
}

/// What boilerplate handling found and removed in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoilerplateStats {
    /// The document-frequency table of the corpus pass (`exact` or `count-min`) and its
    /// bytes, when the method learned from the corpus.
    pub table: Option<(&'static str, usize)>,
    /// Distinct documents the corpus pass counted (exact copies after normalisation count
    /// once).
    pub counted_documents: u64,
    /// The limits learned, in documents
    /// ([`Method::learned_limits`](neardup_core::Method::learned_limits)).
    pub limits: Vec<(&'static str, u64)>,
    /// Documents with at least one boilerplate line removed.
    pub documents: u64,
    /// Boilerplate line occurrences removed.
    pub removed_lines: u64,
    /// Shingles (or features) dropped as common, summed over documents.
    pub discounted_features: u64,
    /// The distinct boilerplate lines removed, most documents first (then first seen).
    pub lines: Vec<BoilerplateLine>,
}

/// A boilerplate line and how many documents had it removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoilerplateLine {
    /// The line as its first document has it.
    pub text: String,
    /// Documents it was removed from.
    pub documents: u64,
    /// The first document (input order) it was removed from.
    pub first: u32,
}

/// The outcome of [`dedup`](super::dedup).
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Kept or duplicate, per document.
    pub assignment: Assignment,
    /// Verified pairs between group leaders.
    pub leader_pairs: Vec<Pair>,
    /// Exact-copy groups with two members or more, leader first, then members by rank.
    pub groups: Groups,
    /// Counters and timings.
    pub stats: EngineStats,
    /// Whether pairs carry a Hamming distance
    /// ([`Method::distance`](neardup_core::Method::distance)).
    pub distances: bool,
}

impl Outcome {
    /// Every verified pair between documents: leader pairs expanded to all members of both
    /// groups, plus all pairs inside exact groups (similarity 1). Each pair has `a < b`.
    pub fn all_pairs(&self) -> impl Iterator<Item = Pair> + '_ {
        let documents = self.assignment.duplicate_of.len();
        let mut group_of: Vec<u32> = vec![u32::MAX; documents];
        for (index, group) in self.groups.iter().enumerate() {
            for &member in group {
                group_of[member as usize] = index as u32;
            }
        }
        let members = move |document: u32| -> Vec<u32> {
            match group_of[document as usize] {
                u32::MAX => vec![document],
                group => self.groups.get(group as usize).to_vec(),
            }
        };
        let between = self.leader_pairs.iter().flat_map(move |pair| {
            let right = members(pair.b);
            members(pair.a).into_iter().flat_map(move |a| {
                right.clone().into_iter().map(move |b| Pair {
                    distance: pair.distance,
                    ..ordered(a, b, pair.similarity)
                })
            })
        });
        let distance = self.distances.then_some(0);
        let within = self.groups.iter().flat_map(move |group| {
            group.iter().enumerate().flat_map(move |(i, &a)| {
                (group[i + 1..].iter()).map(move |&b| Pair {
                    distance,
                    ..ordered(a, b, 1.0)
                })
            })
        });
        between.chain(within)
    }
}

fn ordered(a: u32, b: u32, similarity: f64) -> Pair {
    Pair {
        a: a.min(b),
        b: a.max(b),
        similarity,
        distance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_hold_their_members_end_to_end() {
        let groups = Groups::from(vec![vec![3, 1], vec![], vec![7, 8, 9]]);
        assert_eq!(groups.len(), 3);
        assert!(!groups.is_empty());
        assert_eq!(groups.get(0), &[3, 1]);
        assert_eq!(groups.get(1), &[] as &[u32]);
        assert_eq!(groups.get(2), &[7, 8, 9]);
        let all: Vec<&[u32]> = groups.iter().collect();
        assert_eq!(all, vec![&[3, 1][..], &[][..], &[7, 8, 9][..]]);
        assert!(Groups::default().is_empty());
    }

    fn outcome(duplicate_of: Vec<Option<u32>>, leader_pairs: Vec<Pair>, groups: Groups) -> Outcome {
        let mut assignment = Assignment::all_kept(duplicate_of.len());
        assignment.duplicate_of = duplicate_of;
        Outcome {
            assignment,
            leader_pairs,
            groups,
            stats: EngineStats::default(),
            distances: false,
        }
    }

    #[test]
    fn all_pairs_expand_leader_pairs_to_their_groups() {
        // Documents 0 and 2 are copies (group led by 0); 0 and 1 are near duplicates.
        let pair = Pair {
            a: 0,
            b: 1,
            similarity: 0.8,
            distance: None,
        };
        let outcome = outcome(
            vec![None, Some(0), Some(0)],
            vec![pair],
            Groups::from(vec![vec![0, 2]]),
        );
        let mut pairs: Vec<(u32, u32, f64)> = (outcome.all_pairs())
            .map(|p| (p.a, p.b, p.similarity))
            .collect();
        pairs.sort_by_key(|p| (p.0, p.1));
        assert_eq!(pairs, vec![(0, 1, 0.8), (0, 2, 1.0), (1, 2, 0.8)]);
        assert!(outcome.all_pairs().all(|p| p.distance.is_none()));
    }

    #[test]
    fn pairs_inside_a_group_carry_distance_zero_when_the_method_has_distances() {
        let mut outcome = outcome(vec![None, Some(0)], vec![], Groups::from(vec![vec![1, 0]]));
        outcome.distances = true;
        let pairs: Vec<Pair> = outcome.all_pairs().collect();
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].a, pairs[0].b, pairs[0].distance), (0, 1, Some(0)));
    }
}
