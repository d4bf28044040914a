//! The report of `neardup eval`: the [`Report`] type and its text and JSON renderings.

use std::fmt;

use serde_json::{json, Map, Value};

use super::{CategoryMetrics, ClusterMetrics, Metrics, Overlap, PairMetrics, Scores, TruthFormat};

impl Scores {
    /// The scores as JSON fields.
    fn insert_into(self, object: &mut Map<String, Value>) {
        object.insert("precision".into(), json!(self.precision));
        object.insert("recall".into(), json!(self.recall));
        object.insert("f1".into(), json!(self.f1));
    }
}

impl Overlap {
    fn to_json(self) -> Value {
        json!({"truth": self.truth, "predicted": self.predicted, "common": self.common})
    }
}

/// Everything `neardup eval` reports: where the data came from and the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The truth file.
    pub truth_path: String,
    /// Its format.
    pub truth_format: TruthFormat,
    /// The numeric label that marks duplicate pairs (pair formats only).
    pub positive_label: Option<f64>,
    /// The predicted clusters file.
    pub predicted_path: String,
    /// Its rows.
    pub predicted_rows: u64,
    /// Rows whose id is not in the truth (ignored).
    pub not_in_truth: u64,
    /// Truth documents missing from the prediction (counted as predicted singletons).
    pub missing_documents: u64,
    /// The first few of them, as JSON ids.
    pub missing_first: Vec<Value>,
    /// The metrics.
    pub metrics: Metrics,
}

impl Report {
    /// The report as one JSON object.
    pub fn to_json(&self) -> Value {
        let mut truth = json!({"path": self.truth_path, "format": self.truth_format.name()});
        if let Some(label) = self.positive_label {
            truth["positive_label"] = json!(label);
        }
        let mut report = json!({
            "truth": truth,
            "predicted": {
                "path": self.predicted_path,
                "rows": self.predicted_rows,
                "not_in_truth": self.not_in_truth,
            },
            "missing": {"documents": self.missing_documents, "first": self.missing_first},
        });
        let fields = match &self.metrics {
            Metrics::Clusters(metrics) => cluster_json(metrics),
            Metrics::Pairs(metrics) => {
                report["missing"]["pairs"] = json!(metrics.missing_pairs);
                pair_json(metrics)
            }
        };
        if let Some(object) = report.as_object_mut() {
            object.extend(fields);
        }
        report
    }
}

fn cluster_json(metrics: &ClusterMetrics) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("documents".into(), json!(metrics.documents));
    object.insert("pairs".into(), metrics.pairs.to_json());
    metrics.pairs.scores().insert_into(&mut object);
    let ari = json!(metrics.adjusted_rand_index);
    object.insert("adjusted_rand_index".into(), ari);
    let clusters =
        json!({"truth": metrics.truth_clusters, "predicted": metrics.predicted_clusters});
    object.insert("clusters".into(), clusters);
    let categories = metrics.categories.iter().map(|category| {
        let mut entry = Map::new();
        entry.insert("documents".into(), json!(category.documents));
        entry.insert("partners".into(), category.partners.to_json());
        category.partners.scores().insert_into(&mut entry);
        (category.name.clone(), Value::Object(entry))
    });
    object.insert("categories".into(), Value::Object(categories.collect()));
    object
}

fn pair_json(metrics: &PairMetrics) -> Map<String, Value> {
    let confusion = metrics.confusion;
    let mut object = Map::new();
    let pairs = confusion.true_positive
        + confusion.false_positive
        + confusion.false_negative
        + confusion.true_negative;
    object.insert("pairs".into(), json!(pairs));
    object.insert("true_positive".into(), json!(confusion.true_positive));
    object.insert("false_positive".into(), json!(confusion.false_positive));
    object.insert("false_negative".into(), json!(confusion.false_negative));
    object.insert("true_negative".into(), json!(confusion.true_negative));
    confusion.scores().insert_into(&mut object);
    let labels = metrics.labels.iter().map(|counts| {
        let entry =
            json!({"pairs": counts.pairs, "predicted_duplicates": counts.predicted_duplicates});
        (counts.label.clone(), entry)
    });
    object.insert("labels".into(), Value::Object(labels.collect()));
    object
}

impl fmt::Display for Report {
    /// The readable text report.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_sources(f)?;
        match &self.metrics {
            Metrics::Clusters(metrics) => write_clusters(f, metrics),
            Metrics::Pairs(metrics) => write_pairs(f, metrics),
        }
    }
}

impl Report {
    fn write_sources(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "truth      {} ({}", self.truth_path, self.truth_format)?;
        if let Some(label) = self.positive_label {
            write!(f, ", positive label {label}")?;
        }
        writeln!(f, ")")?;
        writeln!(
            f,
            "predicted  {} ({} rows, {} not in the truth and ignored)",
            self.predicted_path, self.predicted_rows, self.not_in_truth
        )?;
        if self.missing_documents > 0 {
            let first: Vec<String> = self.missing_first.iter().map(Value::to_string).collect();
            writeln!(
                f,
                "missing    {} truth documents are not in the prediction (counted as singletons); first: {}",
                self.missing_documents,
                first.join(", ")
            )?;
        }
        Ok(())
    }
}

fn write_scores(f: &mut fmt::Formatter<'_>, scores: Scores) -> fmt::Result {
    writeln!(f, "precision  {:.4}", scores.precision)?;
    writeln!(f, "recall     {:.4}", scores.recall)?;
    writeln!(f, "F1         {:.4}", scores.f1)
}

fn write_clusters(f: &mut fmt::Formatter<'_>, metrics: &ClusterMetrics) -> fmt::Result {
    writeln!(f, "documents  {}", metrics.documents)?;
    writeln!(
        f,
        "kept       {} (predicted clusters); the truth keeps {}",
        metrics.predicted_clusters, metrics.truth_clusters
    )?;
    let pairs = metrics.pairs;
    writeln!(
        f,
        "pairs      {} duplicate pairs in the truth, {} predicted, {} in both",
        pairs.truth, pairs.predicted, pairs.common
    )?;
    write_scores(f, pairs.scores())?;
    writeln!(f, "ARI        {:.4}", metrics.adjusted_rand_index)?;
    if !metrics.categories.is_empty() {
        write_categories(f, &metrics.categories)?;
    }
    Ok(())
}

fn write_categories(f: &mut fmt::Formatter<'_>, categories: &[CategoryMetrics]) -> fmt::Result {
    let width = categories.iter().map(|c| c.name.chars().count()).max();
    let width = width.unwrap_or(0).max("category".len());
    writeln!(
        f,
        "\nper category (partners of the category's documents in their clusters)"
    )?;
    writeln!(
        f,
        "{:width$}  documents  truth  predicted  common  precision  recall      F1",
        "category"
    )?;
    for category in categories {
        let (partners, scores) = (category.partners, category.partners.scores());
        writeln!(
            f,
            "{:width$}  {:>9}  {:>5}  {:>9}  {:>6}  {:>9.4}  {:>6.4}  {:>6.4}",
            category.name,
            category.documents,
            partners.truth,
            partners.predicted,
            partners.common,
            scores.precision,
            scores.recall,
            scores.f1,
        )?;
    }
    Ok(())
}

fn write_pairs(f: &mut fmt::Formatter<'_>, metrics: &PairMetrics) -> fmt::Result {
    let matrix = metrics.confusion;
    let total = metrics
        .labels
        .iter()
        .map(|counts| counts.pairs)
        .sum::<u64>();
    writeln!(
        f,
        "pairs      {total} labelled, {} with a document missing from the prediction",
        metrics.missing_pairs
    )?;
    writeln!(
        f,
        "           TP {}  FP {}",
        matrix.true_positive, matrix.false_positive
    )?;
    writeln!(
        f,
        "           FN {}  TN {}",
        matrix.false_negative, matrix.true_negative
    )?;
    write_scores(f, matrix.scores())?;
    writeln!(f, "\nper label\nlabel  pairs  predicted duplicates")?;
    for counts in &metrics.labels {
        writeln!(
            f,
            "{:5}  {:>5}  {:>20}",
            counts.label, counts.pairs, counts.predicted_duplicates
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::tests::{all_present, truth};
    use crate::eval::{cluster_metrics, pair_metrics, ClusterTruth, LabelledPair, PairTruth};

    fn report(metrics: Metrics) -> Report {
        Report {
            truth_path: "truth.jsonl".into(),
            truth_format: TruthFormat::Clusters,
            positive_label: None,
            predicted_path: "clusters.jsonl".into(),
            predicted_rows: 6,
            not_in_truth: 1,
            missing_documents: 1,
            missing_first: vec![json!("e")],
            metrics,
        }
    }

    #[test]
    fn cluster_report_as_json_and_text() {
        let truth = ClusterTruth {
            category_names: vec!["cut".into()],
            category: vec![Some(0)],
            ..truth(&[0, 0, 0, 1, 1])
        };
        let metrics = cluster_metrics(&truth, &all_present(&[0, 0, 1, 1, 2]));
        let report = report(Metrics::Clusters(metrics));
        let json = report.to_json();
        assert_eq!(
            json["pairs"],
            json!({"truth": 4, "predicted": 2, "common": 1})
        );
        assert_eq!(json["precision"], json!(0.5));
        assert_eq!(json["clusters"], json!({"truth": 2, "predicted": 3}));
        assert_eq!(json["missing"], json!({"documents": 1, "first": ["e"]}));
        assert_eq!(json["categories"]["cut"]["partners"]["truth"], json!(2));
        assert_eq!(
            json["truth"],
            json!({"path": "truth.jsonl", "format": "clusters"})
        );
        let text = report.to_string();
        for expected in [
            "truth      truth.jsonl (clusters)\n",
            "(6 rows, 1 not in the truth and ignored)",
            "first: \"e\"\n",
            "pairs      4 duplicate pairs in the truth, 2 predicted, 1 in both\n",
            "precision  0.5000\nrecall     0.2500\nF1         0.3333\nARI        0.0909\n",
            "cut               1      2          1       1     1.0000  0.5000  0.6667\n",
        ] {
            assert!(text.contains(expected), "{expected:?} not in\n{text}");
        }
    }

    #[test]
    fn pair_report_as_json_and_text() {
        let truth = PairTruth {
            pairs: vec![LabelledPair {
                a: 0,
                b: 1,
                duplicate: true,
                label: 0,
            }],
            label_names: vec!["5".into()],
        };
        let mut report = report(Metrics::Pairs(pair_metrics(&truth, &[Some(0), Some(0)])));
        (report.truth_format, report.positive_label) = (TruthFormat::Sohu, Some(5.0));
        let json = report.to_json();
        assert_eq!(json["true_positive"], json!(1));
        assert_eq!(json["pairs"], json!(1));
        assert_eq!(json["missing"]["pairs"], json!(0));
        assert_eq!(
            json["labels"],
            json!({"5": {"pairs": 1, "predicted_duplicates": 1}})
        );
        assert_eq!(json["truth"]["positive_label"], json!(5.0));
        let text = report.to_string();
        assert!(text.contains("(sohu, positive label 5)"), "{text}");
        assert!(
            text.contains("TP 1  FP 0\n           FN 0  TN 0\n"),
            "{text}"
        );
        assert!(
            text.contains("5          1                     1\n"),
            "{text}"
        );
    }
}
