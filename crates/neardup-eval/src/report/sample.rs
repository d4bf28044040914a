//! Which clusters the page shows.
//!
//! A page for a million documents must not embed a million documents, so the browser shows two
//! short lists: the largest clusters, and the borderline ones, whose least similar duplicate is
//! the closest to the threshold (the decisions a reviewer most wants to check). Within a
//! cluster the least similar duplicates come first. Everything here is a few passes over the
//! assignment and a sort of the clusters, so it stays fast for millions of documents.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, HashMap};

use neardup_core::cluster::Assignment;

/// A cluster chosen for the page.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledCluster {
    /// The kept document.
    pub representative: u32,
    /// Documents in the cluster, the representative included.
    pub size: usize,
    /// The duplicates shown, least similar first; at most the requested number.
    pub members: Vec<u32>,
    /// The lowest and highest similarity of any duplicate to the representative.
    pub similarity_range: Option<(f64, f64)>,
}

/// The clusters of a run, counted, and the two lists the page shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// Cluster size -> number of clusters of that size; documents without duplicates count as
    /// clusters of size 1.
    pub size_counts: BTreeMap<u64, u64>,
    /// The largest clusters, largest first (ties: earlier representative first).
    pub largest: Vec<SampledCluster>,
    /// The clusters with the least similar duplicates, least similar first.
    pub borderline: Vec<SampledCluster>,
}

impl Sample {
    /// Clusters of two documents or more.
    pub fn clusters(&self) -> u64 {
        self.size_counts.range(2..).map(|(_, count)| count).sum()
    }

    /// The size of the largest cluster (1 when nothing was removed, 0 without documents).
    pub fn largest_size(&self) -> u64 {
        self.size_counts.keys().next_back().copied().unwrap_or(0)
    }
}

/// Picks at most `max_clusters` largest and `max_clusters` borderline clusters from
/// `assignment`, each with at most `max_members` duplicates.
///
/// `assignment` must point every duplicate at a document of the assignment, as the report's
/// reader guarantees; a duplicate pointing elsewhere is ignored.
pub fn sample(assignment: &Assignment, max_clusters: usize, max_members: usize) -> Sample {
    let counts = Counts::new(assignment);
    let by_size = counts.largest(max_clusters);
    let by_similarity = counts.least_similar(max_clusters);
    let members = gather_members(assignment, by_size.iter().chain(&by_similarity));
    let sampled = |representative: &u32| {
        let all = members.get(representative).cloned().unwrap_or_default();
        describe(assignment, *representative, all, max_members)
    };
    Sample {
        size_counts: counts.size_counts(),
        largest: by_size.iter().map(sampled).collect(),
        borderline: by_similarity.iter().map(sampled).collect(),
    }
}

/// Per document: how many duplicates point at it and the lowest of their similarities.
struct Counts {
    /// The kept documents, in input order.
    representatives: Vec<u32>,
    /// Duplicates of each document (0 for a duplicate itself).
    duplicates: Vec<u32>,
    /// The lowest similarity of the duplicates of each document (infinite when unknown).
    lowest: Vec<f64>,
}

impl Counts {
    fn new(assignment: &Assignment) -> Counts {
        let documents = assignment.duplicate_of.len();
        let mut duplicates = vec![0u32; documents];
        let mut lowest = vec![f64::INFINITY; documents];
        for (duplicate, similarity) in self::duplicates(assignment) {
            if let Some(count) = duplicates.get_mut(duplicate.representative) {
                *count += 1;
                let similarity = similarity.unwrap_or(f64::INFINITY);
                let low = &mut lowest[duplicate.representative];
                *low = low.min(similarity);
            }
        }
        let representatives = (0..documents as u32)
            .filter(|&document| assignment.duplicate_of[document as usize].is_none())
            .collect();
        Counts {
            representatives,
            duplicates,
            lowest,
        }
    }

    /// The `max` representatives with the most duplicates, most first.
    fn largest(&self, max: usize) -> Vec<u32> {
        let count = |r: u32| self.duplicates[r as usize];
        let mut chosen: Vec<u32> = self.with(|r| count(r) > 0);
        chosen.sort_by_key(|&r| (Reverse(count(r)), r));
        chosen.truncate(max);
        chosen
    }

    /// The `max` representatives with the least similar duplicates, least similar first.
    fn least_similar(&self, max: usize) -> Vec<u32> {
        let low = |r: u32| self.lowest[r as usize];
        let mut chosen: Vec<u32> = self.with(|r| low(r).is_finite());
        chosen.sort_by(|&a, &b| low(a).total_cmp(&low(b)).then(a.cmp(&b)));
        chosen.truncate(max);
        chosen
    }

    /// The representatives for which `keep` holds.
    fn with(&self, keep: impl Fn(u32) -> bool) -> Vec<u32> {
        self.representatives
            .iter()
            .copied()
            .filter(|&r| keep(r))
            .collect()
    }

    /// Cluster size -> number of clusters.
    fn size_counts(&self) -> BTreeMap<u64, u64> {
        let mut counts = BTreeMap::new();
        for &representative in &self.representatives {
            let size = u64::from(self.duplicates[representative as usize]) + 1;
            *counts.entry(size).or_insert(0) += 1;
        }
        counts
    }
}

/// A duplicate and the representative it points at.
struct Duplicate {
    index: usize,
    representative: usize,
}

/// Every duplicate of `assignment` with its similarity.
fn duplicates(assignment: &Assignment) -> impl Iterator<Item = (Duplicate, Option<f64>)> + '_ {
    assignment
        .duplicate_of
        .iter()
        .zip(assignment.similarity.iter())
        .enumerate()
        .filter_map(|(index, (duplicate_of, similarity))| {
            let representative = (*duplicate_of)? as usize;
            Some((
                Duplicate {
                    index,
                    representative,
                },
                similarity,
            ))
        })
}

/// All duplicates of each of `representatives`, in input order.
fn gather_members<'a>(
    assignment: &Assignment,
    representatives: impl Iterator<Item = &'a u32>,
) -> HashMap<u32, Vec<u32>> {
    let mut members: HashMap<u32, Vec<u32>> = representatives.map(|&r| (r, Vec::new())).collect();
    for (duplicate, _) in duplicates(assignment) {
        if let Some(list) = members.get_mut(&(duplicate.representative as u32)) {
            list.push(duplicate.index as u32);
        }
    }
    members
}

/// The cluster of `representative` with `members` (all its duplicates) cut to the
/// `max_members` least similar.
fn describe(
    assignment: &Assignment,
    representative: u32,
    mut members: Vec<u32>,
    max_members: usize,
) -> SampledCluster {
    let similarity = |document: u32| assignment.similarity.get(document as usize);
    let known = members.iter().filter_map(|&d| similarity(d));
    let similarity_range = known.fold(None, |range: Option<(f64, f64)>, s| match range {
        None => Some((s, s)),
        Some((low, high)) => Some((low.min(s), high.max(s))),
    });
    let size = members.len() + 1;
    members.sort_by(|&a, &b| least_similar_first(similarity(a), similarity(b)).then(a.cmp(&b)));
    members.truncate(max_members);
    SampledCluster {
        representative,
        size,
        members,
        similarity_range,
    }
}

/// Orders known similarities upwards, unknown ones last.
fn least_similar_first(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents 0..10: clusters {0: 1, 2, 3}, {4: 5}, {6: 7, 8}; 9 alone.
    fn assignment() -> Assignment {
        let mut duplicate_of = vec![None; 10];
        let mut similarity = vec![None; 10];
        for (document, representative, s) in [
            (1, 0, 0.95),
            (2, 0, 0.90),
            (3, 0, 1.0),
            (5, 4, 0.71),
            (7, 6, 0.80),
            (8, 6, 0.75),
        ] {
            duplicate_of[document] = Some(representative);
            similarity[document] = Some(s);
        }
        Assignment {
            duplicate_of,
            similarity: similarity.into(),
        }
    }

    fn representatives(clusters: &[SampledCluster]) -> Vec<u32> {
        clusters.iter().map(|c| c.representative).collect()
    }

    #[test]
    fn largest_clusters_come_first() {
        let sample = sample(&assignment(), 2, 8);
        assert_eq!(representatives(&sample.largest), [0, 6]);
        assert_eq!(sample.largest[0].size, 4);
        assert_eq!(sample.largest[0].similarity_range, Some((0.90, 1.0)));
    }

    #[test]
    fn borderline_clusters_have_the_least_similar_duplicates() {
        let sample = sample(&assignment(), 2, 8);
        assert_eq!(representatives(&sample.borderline), [4, 6]);
        assert_eq!(sample.borderline[1].members, [8, 7], "least similar first");
    }

    #[test]
    fn members_are_cut_to_the_least_similar() {
        let sample = sample(&assignment(), 1, 2);
        assert_eq!(sample.largest[0].members, [2, 1]);
        assert_eq!(sample.largest[0].size, 4, "the size counts every member");
    }

    #[test]
    fn sizes_are_counted_with_singletons() {
        let sample = sample(&assignment(), 50, 8);
        let counts: Vec<(u64, u64)> = sample.size_counts.clone().into_iter().collect();
        assert_eq!(counts, [(1, 1), (2, 1), (3, 1), (4, 1)]);
        assert_eq!((sample.clusters(), sample.largest_size()), (3, 4));
        assert_eq!(sample.largest.len(), 3);
    }

    #[test]
    fn nothing_removed_gives_empty_lists() {
        let sample = sample(&Assignment::all_kept(3), 50, 8);
        assert!(sample.largest.is_empty() && sample.borderline.is_empty());
        assert_eq!(sample.clusters(), 0);
        assert_eq!(sample.largest_size(), 1);
    }
}
