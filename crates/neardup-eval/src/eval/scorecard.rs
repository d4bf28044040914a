//! The report of `neardup eval`: the [`Report`] type and its text and JSON renderings.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::{CategoryMetrics, ClusterMetrics, Metrics, Overlap, PairMetrics, Scores, TruthFormat};

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

/// `neardup eval --json`: where the data came from, then the metrics' fields.
#[derive(Serialize)]
struct ReportJson<'a> {
    truth: TruthJson<'a>,
    predicted: PredictedJson<'a>,
    missing: MissingJson<'a>,
    #[serde(flatten)]
    metrics: MetricsJson<'a>,
}

#[derive(Serialize)]
struct TruthJson<'a> {
    path: &'a str,
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    positive_label: Option<f64>,
}

#[derive(Serialize)]
struct PredictedJson<'a> {
    path: &'a str,
    rows: u64,
    not_in_truth: u64,
}

#[derive(Serialize)]
struct MissingJson<'a> {
    documents: u64,
    first: &'a [Value],
    /// Truth pairs with a document missing (pair formats only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs: Option<u64>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum MetricsJson<'a> {
    Clusters(ClustersJson<'a>),
    Pairs(PairsJson<'a>),
}

#[derive(Serialize)]
struct ScoresJson {
    precision: f64,
    recall: f64,
    f1: f64,
}

impl From<Scores> for ScoresJson {
    fn from(scores: Scores) -> ScoresJson {
        ScoresJson {
            precision: scores.precision,
            recall: scores.recall,
            f1: scores.f1,
        }
    }
}

#[derive(Serialize)]
struct OverlapJson {
    truth: u64,
    predicted: u64,
    common: u64,
}

impl From<Overlap> for OverlapJson {
    fn from(overlap: Overlap) -> OverlapJson {
        OverlapJson {
            truth: overlap.truth,
            predicted: overlap.predicted,
            common: overlap.common,
        }
    }
}

#[derive(Serialize)]
struct ClustersJson<'a> {
    documents: u64,
    pairs: OverlapJson,
    #[serde(flatten)]
    scores: ScoresJson,
    adjusted_rand_index: f64,
    clusters: ClusterCountsJson,
    #[serde(serialize_with = "by_name")]
    categories: Vec<(&'a str, CategoryJson)>,
}

#[derive(Serialize)]
struct ClusterCountsJson {
    truth: u64,
    predicted: u64,
}

#[derive(Serialize)]
struct CategoryJson {
    documents: u64,
    partners: OverlapJson,
    #[serde(flatten)]
    scores: ScoresJson,
}

#[derive(Serialize)]
struct PairsJson<'a> {
    pairs: u64,
    true_positive: u64,
    false_positive: u64,
    false_negative: u64,
    true_negative: u64,
    #[serde(flatten)]
    scores: ScoresJson,
    #[serde(serialize_with = "by_name")]
    labels: Vec<(&'a str, LabelJson)>,
}

#[derive(Serialize)]
struct LabelJson {
    pairs: u64,
    predicted_duplicates: u64,
}

/// Named entries as a JSON object, in their order (names are unique: they come from the
/// truth's interned categories and labels).
fn by_name<T: Serialize, S: serde::Serializer>(
    entries: &[(&str, T)],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_map(entries.iter().map(|(name, entry)| (name, entry)))
}

impl Report {
    /// The report as one JSON object.
    pub fn to_json(&self) -> Value {
        let report = ReportJson {
            truth: TruthJson {
                path: &self.truth_path,
                format: self.truth_format.name(),
                positive_label: self.positive_label,
            },
            predicted: PredictedJson {
                path: &self.predicted_path,
                rows: self.predicted_rows,
                not_in_truth: self.not_in_truth,
            },
            missing: MissingJson {
                documents: self.missing_documents,
                first: &self.missing_first,
                pairs: match &self.metrics {
                    Metrics::Clusters(_) => None,
                    Metrics::Pairs(metrics) => Some(metrics.missing_pairs),
                },
            },
            metrics: match &self.metrics {
                Metrics::Clusters(metrics) => MetricsJson::Clusters(cluster_json(metrics)),
                Metrics::Pairs(metrics) => MetricsJson::Pairs(pair_json(metrics)),
            },
        };
        // Plain fields, ids and maps with string keys: serialising them cannot fail.
        serde_json::to_value(report).unwrap_or(Value::Null)
    }
}

fn cluster_json(metrics: &ClusterMetrics) -> ClustersJson<'_> {
    ClustersJson {
        documents: metrics.documents,
        pairs: metrics.pairs.into(),
        scores: metrics.pairs.scores().into(),
        adjusted_rand_index: metrics.adjusted_rand_index,
        clusters: ClusterCountsJson {
            truth: metrics.truth_clusters,
            predicted: metrics.predicted_clusters,
        },
        categories: (metrics.categories.iter())
            .map(|category| {
                let entry = CategoryJson {
                    documents: category.documents,
                    partners: category.partners.into(),
                    scores: category.partners.scores().into(),
                };
                (category.name.as_str(), entry)
            })
            .collect(),
    }
}

fn pair_json(metrics: &PairMetrics) -> PairsJson<'_> {
    let confusion = metrics.confusion;
    PairsJson {
        pairs: confusion.true_positive
            + confusion.false_positive
            + confusion.false_negative
            + confusion.true_negative,
        true_positive: confusion.true_positive,
        false_positive: confusion.false_positive,
        false_negative: confusion.false_negative,
        true_negative: confusion.true_negative,
        scores: confusion.scores().into(),
        labels: (metrics.labels.iter())
            .map(|counts| {
                let entry = LabelJson {
                    pairs: counts.pairs,
                    predicted_duplicates: counts.predicted_duplicates,
                };
                (counts.label.as_str(), entry)
            })
            .collect(),
    }
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
    use serde_json::{json, Map};

    /// The JSON report as it was built with `json!` before it had types: the typed one must
    /// print the same.
    fn json_rows_report(report: &Report) -> Value {
        let scores = |scores: Scores, object: &mut Map<String, Value>| {
            object.insert("precision".into(), json!(scores.precision));
            object.insert("recall".into(), json!(scores.recall));
            object.insert("f1".into(), json!(scores.f1));
        };
        let overlap =
            |o: Overlap| json!({"truth": o.truth, "predicted": o.predicted, "common": o.common});
        let mut truth = json!({"path": report.truth_path, "format": report.truth_format.name()});
        if let Some(label) = report.positive_label {
            truth["positive_label"] = json!(label);
        }
        let mut out = json!({
            "truth": truth,
            "predicted": {
                "path": report.predicted_path,
                "rows": report.predicted_rows,
                "not_in_truth": report.not_in_truth,
            },
            "missing": {"documents": report.missing_documents, "first": report.missing_first},
        });
        let mut object = Map::new();
        match &report.metrics {
            Metrics::Clusters(metrics) => {
                object.insert("documents".into(), json!(metrics.documents));
                object.insert("pairs".into(), overlap(metrics.pairs));
                scores(metrics.pairs.scores(), &mut object);
                object.insert(
                    "adjusted_rand_index".into(),
                    json!(metrics.adjusted_rand_index),
                );
                let clusters = json!({"truth": metrics.truth_clusters, "predicted": metrics.predicted_clusters});
                object.insert("clusters".into(), clusters);
                let categories = metrics.categories.iter().map(|category| {
                    let mut entry = Map::new();
                    entry.insert("documents".into(), json!(category.documents));
                    entry.insert("partners".into(), overlap(category.partners));
                    scores(category.partners.scores(), &mut entry);
                    (category.name.clone(), Value::Object(entry))
                });
                object.insert("categories".into(), Value::Object(categories.collect()));
            }
            Metrics::Pairs(metrics) => {
                out["missing"]["pairs"] = json!(metrics.missing_pairs);
                let c = metrics.confusion;
                let pairs = c.true_positive + c.false_positive + c.false_negative + c.true_negative;
                object.insert("pairs".into(), json!(pairs));
                object.insert("true_positive".into(), json!(c.true_positive));
                object.insert("false_positive".into(), json!(c.false_positive));
                object.insert("false_negative".into(), json!(c.false_negative));
                object.insert("true_negative".into(), json!(c.true_negative));
                scores(c.scores(), &mut object);
                let labels = metrics.labels.iter().map(|counts| {
                    let entry = json!({"pairs": counts.pairs, "predicted_duplicates": counts.predicted_duplicates});
                    (counts.label.clone(), entry)
                });
                object.insert("labels".into(), Value::Object(labels.collect()));
            }
        }
        if let Some(fields) = out.as_object_mut() {
            fields.extend(object);
        }
        out
    }

    /// `report.to_json()`, checked against [`json_rows_report`] to the byte.
    fn typed_json(report: &Report) -> Value {
        let json = report.to_json();
        assert_eq!(
            format!("{json:#}"),
            format!("{:#}", json_rows_report(report))
        );
        assert_eq!(json.to_string(), json_rows_report(report).to_string());
        json
    }

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
        let json = typed_json(&report);
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
        let json = typed_json(&report);
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
