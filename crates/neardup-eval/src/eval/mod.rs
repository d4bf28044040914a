//! Quality of a dedup result against ground truth: pairwise precision, recall and F1, the
//! adjusted Rand index, per-category and per-label breakdowns, and the report of `neardup eval`.
//!
//! # Overview
//!
//! This module is pure. Documents are dense indices `0..n` into the ground truth, and a
//! prediction is one `Option<u32>` cluster label per document: [`None`] (or a document beyond
//! the end of the slice) means that the prediction does not mention the document, which then
//! counts as a predicted singleton. [`crate::eval_io`] reads the files into this form.
//!
//! # Ground truth as clusters
//!
//! A *duplicate pair* is an unordered pair of documents in the same cluster. [`cluster_metrics`]
//! never enumerates pairs: with `a_i` the sizes of the truth clusters, `b_j` those of the
//! predicted clusters and `n_ij` the number of documents in both truth cluster `i` and
//! predicted cluster `j` (the contingency table), it counts in O(documents)
//!
//! - truth pairs `A = Σ C(a_i, 2)`, predicted pairs `B = Σ C(b_j, 2)`, pairs in both
//!   `T = Σ C(n_ij, 2)`;
//! - precision `T / B`, recall `T / A` and F1, their harmonic mean;
//! - the adjusted Rand index of Hubert and Arabie (1985), `(T - E) / ((A + B) / 2 - E)` with
//!   the expected index `E = A·B / C(n, 2)`, computed in integers.
//!
//! Empty denominators: precision is 1 when no pair is predicted, recall is 1 when the truth has
//! no pair, and F1 is 0 when precision and recall are both 0. The denominator of the adjusted
//! Rand index is 0 only when both partitions are all singletons or both a single cluster (or
//! there are fewer than two documents); the index is then defined as 1 if the partitions are
//! identical and 0 otherwise.
//!
//! Per category `c` the same scores are taken over the *partners* of the documents of `c`
//! (the other documents of their cluster): for each document `d` of category `c`, its truth
//! partners `a_i - 1`, its predicted partners `b_j - 1` and its common partners `n_ij - 1` are
//! summed, and recall is `Σ common / Σ truth`, precision `Σ common / Σ predicted`, with the
//! conventions above. A pair of two documents of `c` thus counts twice, once from each side.
//!
//! # Ground truth as labelled pairs
//!
//! [`pair_metrics`] only looks at the listed pairs: a pair is predicted duplicate when both of
//! its documents are in the same predicted cluster, and the confusion matrix follows. A pair
//! with a document missing from the prediction is counted in
//! [`PairMetrics::missing_pairs`] and, its document being a singleton, predicted distinct.
//!
//! # Example
//!
//! ```
//! use neardup_eval::eval::{cluster_metrics, ClusterTruth};
//!
//! // Truth {a, b, c | d, e}; prediction {a, b | c, d | e}.
//! let truth = ClusterTruth { cluster: vec![0, 0, 0, 1, 1], ..ClusterTruth::default() };
//! let metrics = cluster_metrics(&truth, &[Some(0), Some(0), Some(1), Some(1), Some(2)]);
//! let scores = metrics.pairs.scores();
//! assert_eq!((scores.precision, scores.recall), (0.5, 0.25));
//! assert!((metrics.adjusted_rand_index - 1.0 / 11.0).abs() < 1e-12);
//! ```

mod scorecard;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

pub use self::scorecard::Report;
use neardup_pipeline::Error;

/// The ground truth as clusters of documents `0..n`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterTruth {
    /// The truth cluster of each document: documents with equal labels are duplicates.
    pub cluster: Vec<u32>,
    /// The category of each document, as an index into `category_names`; documents beyond the
    /// end of this vector, and indices beyond the end of `category_names`, have none.
    pub category: Vec<Option<u32>>,
    /// The names of the categories, in the order they are reported.
    pub category_names: Vec<String>,
}

/// One labelled pair of the ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelledPair {
    /// One document.
    pub a: u32,
    /// The other document.
    pub b: u32,
    /// Whether the label marks the pair as duplicates.
    pub duplicate: bool,
    /// The pair's label, as an index into [`PairTruth::label_names`].
    pub label: u32,
}

/// The ground truth as labelled pairs of documents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairTruth {
    /// The pairs.
    pub pairs: Vec<LabelledPair>,
    /// The labels as written in the truth file (JSON text, e.g. `5` or `true`).
    pub label_names: Vec<String>,
}

/// Precision, recall and F1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scores {
    /// True positives / predicted positives (1 when nothing is predicted positive).
    pub precision: f64,
    /// True positives / actual positives (1 when nothing is positive).
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
}

impl Scores {
    /// The scores of `common` true positives among `predicted` predicted and `truth` actual
    /// positives.
    pub fn new(common: u64, predicted: u64, truth: u64) -> Scores {
        let precision = ratio_or_one(common, predicted);
        let recall = ratio_or_one(common, truth);
        let sum = precision + recall;
        let f1 = if sum > 0.0 {
            2.0 * precision * recall / sum
        } else {
            0.0
        };
        Scores {
            precision,
            recall,
            f1,
        }
    }
}

/// `numerator / denominator`, or 1 when the denominator is 0.
fn ratio_or_one(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        1.0
    } else {
        numerator as f64 / denominator as f64
    }
}

/// How many duplicate relations (pairs, or partners) the truth has, the prediction has, and
/// both have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overlap {
    /// In the truth.
    pub truth: u64,
    /// In the prediction.
    pub predicted: u64,
    /// In both.
    pub common: u64,
}

impl Overlap {
    /// Precision, recall and F1 of these counts.
    pub fn scores(self) -> Scores {
        Scores::new(self.common, self.predicted, self.truth)
    }

    fn add(&mut self, other: Overlap) {
        self.truth += other.truth;
        self.predicted += other.predicted;
        self.common += other.common;
    }
}

/// The scores of one category of documents (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryMetrics {
    /// The category's name.
    pub name: String,
    /// How many documents of the truth have this category.
    pub documents: u64,
    /// Their partners, summed over the documents.
    pub partners: Overlap,
}

/// The metrics against ground truth given as clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterMetrics {
    /// Documents in the truth.
    pub documents: u64,
    /// Duplicate pairs among them.
    pub pairs: Overlap,
    /// The adjusted Rand index of the two partitions.
    pub adjusted_rand_index: f64,
    /// Truth clusters: how many documents should be kept.
    pub truth_clusters: u64,
    /// Predicted clusters among the truth's documents (a missing document is one): how many
    /// are kept.
    pub predicted_clusters: u64,
    /// One entry per name of [`ClusterTruth::category_names`], in that order.
    pub categories: Vec<CategoryMetrics>,
}

/// Sizes of the truth clusters, the predicted clusters and their intersections.
#[derive(Default)]
struct Contingency {
    truth: HashMap<u32, u64>,
    predicted: HashMap<u64, u64>,
    cells: HashMap<(u32, u64), u64>,
}

impl Contingency {
    fn new(truth: &[u32], predicted: &[Option<u32>]) -> Contingency {
        let mut table = Contingency::default();
        for (document, &truth_label) in truth.iter().enumerate() {
            let predicted_label = predicted_label(predicted, document);
            *table.truth.entry(truth_label).or_default() += 1;
            *table.predicted.entry(predicted_label).or_default() += 1;
            *table
                .cells
                .entry((truth_label, predicted_label))
                .or_default() += 1;
        }
        table
    }

    /// Pairs in truth clusters, in predicted clusters and in both.
    fn pairs(&self) -> Overlap {
        let sum = |sizes: &mut dyn Iterator<Item = &u64>| sizes.map(|&size| pairs(size)).sum();
        Overlap {
            truth: sum(&mut self.truth.values()),
            predicted: sum(&mut self.predicted.values()),
            common: sum(&mut self.cells.values()),
        }
    }

    /// The partners of a document in truth cluster `truth` and predicted cluster `predicted`.
    fn partners(&self, truth: u32, predicted: u64) -> Overlap {
        let others = |size: Option<&u64>| size.map_or(0, |size| size.saturating_sub(1));
        Overlap {
            truth: others(self.truth.get(&truth)),
            predicted: others(self.predicted.get(&predicted)),
            common: others(self.cells.get(&(truth, predicted))),
        }
    }
}

/// The predicted label of `document`; a missing document gets a label of its own, above every
/// `u32`.
fn predicted_label(predicted: &[Option<u32>], document: usize) -> u64 {
    match predicted.get(document).copied().flatten() {
        Some(label) => u64::from(label),
        None => (1 << 32) + document as u64,
    }
}

/// `C(size, 2)`.
fn pairs(size: u64) -> u64 {
    size * size.saturating_sub(1) / 2
}

/// Scores `predicted` (one cluster label per document of `truth`, see the module
/// documentation) against `truth`. Runs in O(documents).
pub fn cluster_metrics(truth: &ClusterTruth, predicted: &[Option<u32>]) -> ClusterMetrics {
    let table = Contingency::new(&truth.cluster, predicted);
    let pairs = table.pairs();
    let documents = truth.cluster.len() as u64;
    ClusterMetrics {
        documents,
        pairs,
        adjusted_rand_index: adjusted_rand_index(pairs, documents),
        truth_clusters: table.truth.len() as u64,
        predicted_clusters: table.predicted.len() as u64,
        categories: category_metrics(truth, predicted, &table),
    }
}

/// The adjusted Rand index from the pair counts of the contingency table of `documents`.
fn adjusted_rand_index(pairs_of: Overlap, documents: u64) -> f64 {
    let all = i128::from(pairs(documents));
    let (truth, predicted, common) = (
        i128::from(pairs_of.truth),
        i128::from(pairs_of.predicted),
        i128::from(pairs_of.common),
    );
    // (T - A·B/M) / ((A + B)/2 - A·B/M), both multiplied by 2M to stay in integers.
    let numerator = 2 * (common * all - truth * predicted);
    let denominator = (truth + predicted) * all - 2 * truth * predicted;
    if denominator == 0 {
        // T = A = B: every pair of one partition is a pair of the other.
        let identical = common == truth && common == predicted;
        return if identical { 1.0 } else { 0.0 };
    }
    numerator as f64 / denominator as f64
}

fn category_metrics(
    truth: &ClusterTruth,
    predicted: &[Option<u32>],
    table: &Contingency,
) -> Vec<CategoryMetrics> {
    let mut categories: Vec<CategoryMetrics> = (truth.category_names.iter())
        .map(|name| CategoryMetrics {
            name: name.clone(),
            documents: 0,
            partners: Overlap::default(),
        })
        .collect();
    for (document, (&cluster, category)) in truth.cluster.iter().zip(&truth.category).enumerate() {
        let Some(entry) = category.and_then(|c| categories.get_mut(c as usize)) else {
            continue;
        };
        entry.documents += 1;
        (entry.partners).add(table.partners(cluster, predicted_label(predicted, document)));
    }
    categories
}

/// The confusion matrix of labelled pairs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    /// Duplicates predicted duplicate.
    pub true_positive: u64,
    /// Non-duplicates predicted duplicate.
    pub false_positive: u64,
    /// Duplicates predicted distinct.
    pub false_negative: u64,
    /// Non-duplicates predicted distinct.
    pub true_negative: u64,
}

impl Confusion {
    /// Precision, recall and F1 of the duplicate class.
    pub fn scores(self) -> Scores {
        Scores::new(
            self.true_positive,
            self.true_positive + self.false_positive,
            self.true_positive + self.false_negative,
        )
    }

    fn add(&mut self, duplicate: bool, predicted_duplicate: bool) {
        let count = match (duplicate, predicted_duplicate) {
            (true, true) => &mut self.true_positive,
            (false, true) => &mut self.false_positive,
            (true, false) => &mut self.false_negative,
            (false, false) => &mut self.true_negative,
        };
        *count += 1;
    }
}

/// How the pairs of one label were predicted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCounts {
    /// The label as written in the truth file.
    pub label: String,
    /// Pairs with this label.
    pub pairs: u64,
    /// How many of them were predicted duplicate.
    pub predicted_duplicates: u64,
}

/// The metrics against ground truth given as labelled pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairMetrics {
    /// The confusion matrix over all pairs.
    pub confusion: Confusion,
    /// One entry per label, numbers in numeric order first, then the others in text order.
    pub labels: Vec<LabelCounts>,
    /// Pairs with at least one document missing from the prediction (predicted distinct).
    pub missing_pairs: u64,
}

/// Scores `predicted` (one cluster label per document, see the module documentation) on the
/// labelled pairs of `truth`.
pub fn pair_metrics(truth: &PairTruth, predicted: &[Option<u32>]) -> PairMetrics {
    let cluster = |document: u32| predicted.get(document as usize).copied().flatten();
    let mut labels: Vec<LabelCounts> = (truth.label_names.iter())
        .map(|label| LabelCounts {
            label: label.clone(),
            pairs: 0,
            predicted_duplicates: 0,
        })
        .collect();
    let (mut confusion, mut missing_pairs) = (Confusion::default(), 0);
    for pair in &truth.pairs {
        let (a, b) = (cluster(pair.a), cluster(pair.b));
        missing_pairs += u64::from(a.is_none() || b.is_none());
        let same = a.is_some() && a == b;
        confusion.add(pair.duplicate, same);
        if let Some(counts) = labels.get_mut(pair.label as usize) {
            counts.pairs += 1;
            counts.predicted_duplicates += u64::from(same);
        }
    }
    labels.sort_by(|x, y| label_order(&x.label, &y.label));
    PairMetrics {
        confusion,
        labels,
        missing_pairs,
    }
}

/// Numbers by value before everything else, which is ordered as text.
fn label_order(x: &str, y: &str) -> Ordering {
    match (x.parse::<f64>(), y.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => x.cmp(y),
    }
}

/// The shape of a ground-truth file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TruthFormat {
    /// `{"id", "cluster", "category"?}`, one row per document.
    Clusters,
    /// `{"a", "b", "label"}`, one row per labelled pair.
    Pairs,
    /// `{"sentence1", "sentence2", "label"}`, the Sohu text-matching files: the pair on row
    /// `i` (0-based) is documents `2i+1` and `2i+2`.
    Sohu,
}

impl TruthFormat {
    /// The lowercase name (`clusters`, `pairs`, `sohu`).
    pub fn name(self) -> &'static str {
        match self {
            TruthFormat::Clusters => "clusters",
            TruthFormat::Pairs => "pairs",
            TruthFormat::Sohu => "sohu",
        }
    }
}

impl fmt::Display for TruthFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TruthFormat {
    type Err = Error;

    /// Accepts `clusters`, `pairs` and `sohu`.
    fn from_str(name: &str) -> Result<TruthFormat, Error> {
        match name {
            "clusters" => Ok(TruthFormat::Clusters),
            "pairs" => Ok(TruthFormat::Pairs),
            "sohu" => Ok(TruthFormat::Sohu),
            _ => Err(Error::Parameter(neardup_core::Error::invalid(
                "truth_format",
                format!("{name:?} (expected clusters, pairs or sohu)"),
            ))),
        }
    }
}

/// The metrics of either kind of ground truth.
#[derive(Debug, Clone, PartialEq)]
pub enum Metrics {
    /// Against clusters.
    Clusters(ClusterMetrics),
    /// Against labelled pairs.
    Pairs(PairMetrics),
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn truth(cluster: &[u32]) -> ClusterTruth {
        ClusterTruth {
            cluster: cluster.to_vec(),
            ..ClusterTruth::default()
        }
    }

    pub(super) fn all_present(labels: &[u32]) -> Vec<Option<u32>> {
        labels.iter().copied().map(Some).collect()
    }

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() < 1e-12
    }

    #[test]
    fn hand_computed_example() {
        // Truth {a,b,c | d,e}: pairs ab ac bc de (A = 4). Prediction {a,b | c,d | e}: pairs
        // ab cd (B = 2). Common: ab (T = 1). M = C(5,2) = 10, E = A·B/M = 0.8,
        // ARI = (1 - 0.8) / ((4 + 2)/2 - 0.8) = 0.2 / 2.2 = 1/11.
        let metrics = cluster_metrics(&truth(&[0, 0, 0, 1, 1]), &all_present(&[0, 0, 1, 1, 2]));
        let expected = Overlap {
            truth: 4,
            predicted: 2,
            common: 1,
        };
        assert_eq!(metrics.pairs, expected);
        let scores = metrics.pairs.scores();
        assert_eq!((scores.precision, scores.recall), (0.5, 0.25));
        assert!(close(scores.f1, 1.0 / 3.0));
        assert!(close(metrics.adjusted_rand_index, 1.0 / 11.0));
        assert_eq!((metrics.truth_clusters, metrics.predicted_clusters), (2, 3));
        assert_eq!(metrics.documents, 5);
    }

    #[test]
    fn all_singletons_on_both_sides_score_one() {
        let metrics = cluster_metrics(&truth(&[0, 1, 2, 3]), &all_present(&[7, 8, 9, 10]));
        assert_eq!(metrics.pairs, Overlap::default());
        assert_eq!(metrics.pairs.scores(), Scores::new(0, 0, 0));
        let scores = metrics.pairs.scores();
        assert_eq!(
            (scores.precision, scores.recall, scores.f1),
            (1.0, 1.0, 1.0)
        );
        assert_eq!(metrics.adjusted_rand_index, 1.0);
    }

    #[test]
    fn one_big_cluster_against_singletons() {
        // Truth: one cluster of 4 (A = 6); prediction: singletons (B = 0). E = 0, so
        // ARI = 0 / (3 - 0) = 0; precision is 1 by convention, recall 0.
        let metrics = cluster_metrics(&truth(&[5; 4]), &all_present(&[0, 1, 2, 3]));
        let scores = metrics.pairs.scores();
        assert_eq!(
            (scores.precision, scores.recall, scores.f1),
            (1.0, 0.0, 0.0)
        );
        assert_eq!(metrics.adjusted_rand_index, 0.0);
        assert_eq!((metrics.truth_clusters, metrics.predicted_clusters), (1, 4));
        // The other way round: every predicted pair is wrong; recall is 1 by convention.
        let metrics = cluster_metrics(&truth(&[0, 1, 2, 3]), &all_present(&[5; 4]));
        let scores = metrics.pairs.scores();
        assert_eq!(
            (scores.precision, scores.recall, scores.f1),
            (0.0, 1.0, 0.0)
        );
        assert_eq!(metrics.adjusted_rand_index, 0.0);
    }

    #[test]
    fn identical_single_clusters_have_ari_one() {
        // A = B = T = 6 = M: the ARI denominator is 0 and the partitions are identical.
        let metrics = cluster_metrics(&truth(&[1; 4]), &all_present(&[2; 4]));
        assert_eq!(metrics.pairs.scores().f1, 1.0);
        assert_eq!(metrics.adjusted_rand_index, 1.0);
    }

    #[test]
    fn no_documents_and_one_document() {
        for cluster in [&[][..], &[0][..]] {
            let metrics = cluster_metrics(&truth(cluster), &[]);
            assert_eq!(metrics.adjusted_rand_index, 1.0);
            assert_eq!(metrics.pairs.scores().f1, 1.0);
        }
    }

    #[test]
    fn missing_documents_are_predicted_singletons() {
        // Truth {a,b,c}; prediction {a,b}, c missing (None), d beyond the end of the slice.
        let metrics = cluster_metrics(&truth(&[0, 0, 0, 1]), &[Some(4), Some(4), None]);
        let expected = Overlap {
            truth: 3,
            predicted: 1,
            common: 1,
        };
        assert_eq!(metrics.pairs, expected);
        assert_eq!((metrics.truth_clusters, metrics.predicted_clusters), (2, 3));
        // Two missing documents are not in the same cluster, even with equal indices' labels.
        let metrics = cluster_metrics(&truth(&[0, 0]), &[None, None]);
        assert_eq!(metrics.pairs.predicted, 0);
        assert_eq!(metrics.predicted_clusters, 2);
    }

    #[test]
    fn categories_sum_partners_of_their_documents() {
        // Truth {a,b,c | d,e}, prediction {a,b | c,d | e}; a, b: x; c, d: y; e: none.
        // a: truth partners b c, predicted b, common b (2, 1, 1); b likewise (2, 1, 1);
        // c: truth a b, predicted d, common none (2, 1, 0); d: truth e, predicted c (1, 1, 0).
        let truth = ClusterTruth {
            cluster: vec![0, 0, 0, 1, 1],
            category: vec![Some(0), Some(0), Some(1), Some(1), None],
            category_names: vec!["x".into(), "y".into(), "unused".into()],
        };
        let metrics = cluster_metrics(&truth, &all_present(&[0, 0, 1, 1, 2]));
        let [x, y, unused] = &metrics.categories[..] else {
            panic!("three categories expected")
        };
        assert_eq!((x.documents, x.partners), (2, overlap(4, 2, 2)));
        assert_eq!(
            (x.partners.scores().precision, x.partners.scores().recall),
            (1.0, 0.5)
        );
        assert_eq!((y.documents, y.partners), (2, overlap(3, 2, 0)));
        assert_eq!(y.partners.scores().f1, 0.0);
        assert_eq!((unused.documents, unused.partners), (0, Overlap::default()));
    }

    fn overlap(truth: u64, predicted: u64, common: u64) -> Overlap {
        Overlap {
            truth,
            predicted,
            common,
        }
    }

    /// The pair counts by enumerating every pair: the obviously correct reference.
    fn brute_force_pairs(truth: &[u32], predicted: &[u32]) -> Overlap {
        let mut counts = Overlap::default();
        for i in 0..truth.len() {
            for j in i + 1..truth.len() {
                let (same_truth, same_predicted) =
                    (truth[i] == truth[j], predicted[i] == predicted[j]);
                counts.truth += u64::from(same_truth);
                counts.predicted += u64::from(same_predicted);
                counts.common += u64::from(same_truth && same_predicted);
            }
        }
        counts
    }

    /// The ARI from the textbook floating-point formula.
    fn reference_ari(counts: Overlap, documents: u64) -> f64 {
        let (a, b, t) = (
            counts.truth as f64,
            counts.predicted as f64,
            counts.common as f64,
        );
        let expected = a * b / pairs(documents) as f64;
        (t - expected) / ((a + b) / 2.0 - expected)
    }

    #[test]
    fn contingency_counts_match_pair_enumeration() {
        let mut state = 12345u64;
        let mut next = |modulus: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % modulus) as u32
        };
        for round in 0..200 {
            let documents = 2 + round % 30;
            let (truth_k, predicted_k) = (1 + next(8) as u64, 1 + next(8) as u64);
            let truth: Vec<u32> = (0..documents).map(|_| next(truth_k)).collect();
            let predicted: Vec<u32> = (0..documents).map(|_| next(predicted_k)).collect();
            let metrics = cluster_metrics(&self::truth(&truth), &all_present(&predicted));
            let expected = brute_force_pairs(&truth, &predicted);
            assert_eq!(metrics.pairs, expected, "{truth:?} {predicted:?}");
            let reference = reference_ari(expected, documents);
            if reference.is_finite() {
                assert!((metrics.adjusted_rand_index - reference).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn labelled_pairs_confusion_labels_and_missing() {
        // Prediction: documents 0 1 together, 2 3 together, 4 missing.
        let pair = |a, b, duplicate, label| LabelledPair {
            a,
            b,
            duplicate,
            label,
        };
        let truth = PairTruth {
            pairs: vec![
                pair(0, 1, true, 1),  // TP
                pair(1, 2, true, 1),  // FN
                pair(2, 3, false, 0), // FP
                pair(3, 4, false, 2), // TN, missing
                pair(4, 0, false, 0), // TN, missing
            ],
            label_names: vec!["3".into(), "5".into(), "0".into()],
        };
        let metrics = pair_metrics(&truth, &[Some(0), Some(0), Some(1), Some(1)]);
        let expected = Confusion {
            true_positive: 1,
            false_positive: 1,
            false_negative: 1,
            true_negative: 2,
        };
        assert_eq!(metrics.confusion, expected);
        assert_eq!(metrics.missing_pairs, 2);
        let scores = metrics.confusion.scores();
        assert_eq!(
            (scores.precision, scores.recall, scores.f1),
            (0.5, 0.5, 0.5)
        );
        let labels: Vec<(&str, u64, u64)> = (metrics.labels.iter())
            .map(|c| (c.label.as_str(), c.pairs, c.predicted_duplicates))
            .collect();
        assert_eq!(labels, [("0", 1, 0), ("3", 2, 1), ("5", 2, 1)]);
    }

    #[test]
    fn no_labelled_duplicates_and_none_predicted_score_one() {
        let truth = PairTruth {
            pairs: vec![LabelledPair {
                a: 0,
                b: 1,
                duplicate: false,
                label: 0,
            }],
            label_names: vec!["false".into()],
        };
        let metrics = pair_metrics(&truth, &[Some(0), Some(1)]);
        assert_eq!(metrics.confusion.true_negative, 1);
        assert_eq!(metrics.confusion.scores().f1, 1.0);
    }

    #[test]
    fn labels_sort_numbers_first_by_value() {
        let mut labels = vec!["true", "10", "false", "3", "0.5"];
        labels.sort_by(|x, y| label_order(x, y));
        assert_eq!(labels, ["0.5", "3", "10", "false", "true"]);
    }

    #[test]
    fn truth_format_names_round_trip() {
        for format in [TruthFormat::Clusters, TruthFormat::Pairs, TruthFormat::Sohu] {
            assert_eq!(format.name().parse::<TruthFormat>().unwrap(), format);
        }
        let error = "csv".parse::<TruthFormat>().unwrap_err().to_string();
        assert_eq!(
            error,
            "invalid `truth_format`: \"csv\" (expected clusters, pairs or sohu)"
        );
    }
}
