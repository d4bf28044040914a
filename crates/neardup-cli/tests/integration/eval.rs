//! Integration tests of `neardup eval`: the three truth formats, the text and JSON reports, bad
//! input, and `dedup` followed by `eval` on the example corpus.

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::util::{example, neardup};

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.to_str().unwrap().to_owned()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn json_report(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).expect("a JSON report")
}

/// Truth {a,b,c | d,e}; prediction {a,b | c,d} with e missing and x not in the truth.
const TRUTH: &str = r#"{"id": "a", "cluster": 1, "category": "cut"}
{"id": "b", "cluster": 1, "category": "cut"}
{"id": "c", "cluster": 1, "category": "light"}
{"id": "d", "cluster": 2, "category": "light"}
{"id": "e", "cluster": 2}
"#;
const PREDICTED: &str = r#"{"id": "a", "cluster": "a", "duplicate_of": null, "similarity": null}
{"id": "b", "cluster": "a", "duplicate_of": "a", "similarity": 0.9}
{"id": "c", "cluster": "c", "duplicate_of": null, "similarity": null}
{"id": "d", "cluster": "c", "duplicate_of": "c", "similarity": 0.8}
{"id": "x", "cluster": "x", "duplicate_of": null, "similarity": null}
"#;

#[test]
fn cluster_truth_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(dir.path(), "truth.jsonl", TRUTH);
    let predicted = write(dir.path(), "clusters.jsonl", PREDICTED);
    let args = ["eval", "--truth", &truth, "--predicted", &predicted];
    let text = stdout(&neardup(&args));
    for expected in [
        "(5 rows, 1 not in the truth and ignored)",
        "1 truth documents are not in the prediction (counted as singletons); first: \"e\"",
        "kept       3 (predicted clusters); the truth keeps 2",
        "pairs      4 duplicate pairs in the truth, 2 predicted, 1 in both",
        "precision  0.5000\nrecall     0.2500\nF1         0.3333\nARI        0.0909\n",
        "cut               2      4          2       2     1.0000  0.5000  0.6667",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }

    let report_path = dir.path().join("report.json");
    let report_path = report_path.to_str().unwrap();
    let run = neardup(&[&args[..], &["--json", "-o", report_path]].concat());
    assert!(stdout(&run).is_empty());
    let report: Value = serde_json::from_str(&std::fs::read_to_string(report_path).unwrap())
        .expect("a JSON report");
    assert_eq!(
        report["pairs"],
        json!({"truth": 4, "predicted": 2, "common": 1})
    );
    assert_eq!(
        (report["precision"].as_f64(), report["recall"].as_f64()),
        (Some(0.5), Some(0.25))
    );
    assert!((report["adjusted_rand_index"].as_f64().unwrap() - 1.0 / 11.0).abs() < 1e-12);
    assert_eq!(report["missing"], json!({"documents": 1, "first": ["e"]}));
    assert_eq!(report["predicted"]["not_in_truth"], json!(1));
    assert_eq!(report["categories"]["light"]["partners"]["truth"], json!(3));
}

#[test]
fn pair_truth_with_boolean_and_numeric_labels() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(
        dir.path(),
        "pairs.jsonl",
        "{\"a\": \"a\", \"b\": \"b\", \"label\": 1}\n{\"a\": \"b\", \"b\": \"c\", \"label\": true}\n\
         {\"a\": \"c\", \"b\": \"d\", \"label\": 0}\n{\"a\": \"d\", \"b\": \"e\", \"label\": false}\n",
    );
    let predicted = write(dir.path(), "clusters.jsonl", PREDICTED);
    let run = neardup(&[
        "eval",
        "--truth",
        &truth,
        "--predicted",
        &predicted,
        "--json",
    ]);
    let report = json_report(&run);
    assert_eq!(report["truth"]["format"], "pairs");
    let confusion: Vec<&Value> = [
        "true_positive",
        "false_positive",
        "false_negative",
        "true_negative",
    ]
    .iter()
    .map(|key| &report[key])
    .collect();
    assert_eq!(confusion, [&json!(1), &json!(1), &json!(1), &json!(1)]);
    assert_eq!(
        report["missing"],
        json!({"documents": 1, "first": ["e"], "pairs": 1})
    );
    assert_eq!(
        report["labels"]["0"],
        json!({"pairs": 1, "predicted_duplicates": 1})
    );
    assert_eq!(
        report["labels"]["true"],
        json!({"pairs": 1, "predicted_duplicates": 0})
    );
    let text = stdout(&neardup(&[
        "eval",
        "--truth",
        &truth,
        "--predicted",
        &predicted,
    ]));
    assert!(
        text.contains("TP 1  FP 1\n           FN 1  TN 1\n"),
        "{text}"
    );
}

#[test]
fn sohu_truth_scores_record_numbers_of_dedup() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        (
            "今天北京天气晴朗，适合出门散步。",
            "今天北京天气晴朗,适合出门散步!!",
            5,
        ),
        (
            "上海明天有大雨，出门记得带伞。",
            "广州队主场二比一战胜山东泰山。",
            0,
        ),
        (
            "央行宣布下调存款准备金率零点五个百分点",
            "国务院常务会议部署稳经济措施",
            5,
        ),
    ];
    let truth: String = (rows.iter())
        .map(|(one, two, label)| {
            json!({"sentence1": one, "sentence2": two, "label": label}).to_string() + "\n"
        })
        .collect();
    let truth = write(dir.path(), "dd-test.jsonl", &truth);
    // The texts one after another: record numbers 2i+1 and 2i+2 are the default ids.
    let texts: String = (rows.iter())
        .flat_map(|(one, two, _)| [one, two])
        .map(|text| json!({ "text": text }).to_string() + "\n")
        .collect();
    let texts = write(dir.path(), "texts.jsonl", &texts);
    let (kept, clusters) = (
        dir.path().join("kept.jsonl"),
        dir.path().join("clusters.jsonl"),
    );
    let (kept, clusters) = (kept.to_str().unwrap(), clusters.to_str().unwrap());
    let dedup = neardup(&[
        "dedup",
        &texts,
        "-o",
        kept,
        "--clusters",
        clusters,
        "--quiet",
    ]);
    stdout(&dedup);
    let args = [
        "eval",
        "--truth",
        &truth,
        "--predicted",
        clusters,
        "--positive-label",
        "5",
    ];
    let report = json_report(&neardup(&[&args[..], &["--json"]].concat()));
    assert_eq!(report["truth"]["format"], "sohu");
    assert_eq!(report["missing"]["documents"], json!(0));
    // Pair 1 is found, pair 2 is rightly apart, pair 3 (label 5, different words) is missed.
    let counts = [
        "true_positive",
        "false_positive",
        "false_negative",
        "true_negative",
    ];
    let counts: Vec<u64> = counts.iter().map(|k| report[k].as_u64().unwrap()).collect();
    assert_eq!(counts, [1, 0, 1, 1]);
    assert_eq!(
        report["labels"]["5"],
        json!({"pairs": 2, "predicted_duplicates": 1})
    );
    let text = stdout(&neardup(&args));
    assert!(text.contains("(sohu, positive label 5)"), "{text}");
}

#[test]
fn broken_truth_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write(
        dir.path(),
        "truth.jsonl",
        "{\"id\": 1, \"cluster\": 1}\n\n{\"id\": 2, \"cluster\": \n",
    );
    let predicted = write(dir.path(), "clusters.jsonl", PREDICTED);
    let run = neardup(&["eval", "--truth", &truth, "--predicted", &predicted]);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!("{truth}:3: invalid JSON")),
        "{stderr}"
    );
    let missing = dir.path().join("absent.jsonl");
    let run = neardup(&[
        "eval",
        "--truth",
        missing.to_str().unwrap(),
        "--predicted",
        &predicted,
    ]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("absent.jsonl"));
}

/// Runs `neardup dedup` on the example with `extra` arguments; returns the clusters file.
fn dedup_example(dir: &Path, name: &str, extra: &[&str]) -> String {
    let (kept, clusters) = (
        dir.join(format!("{name}-kept.jsonl")),
        dir.join(format!("{name}.jsonl")),
    );
    let (kept, clusters) = (kept.to_str().unwrap(), clusters.to_str().unwrap());
    let base = [
        "dedup",
        &example(),
        "-o",
        kept,
        "--clusters",
        clusters,
        "--id-field",
        "id",
        "--quiet",
    ];
    stdout(&neardup(&[&base[..], extra].concat()));
    clusters.to_owned()
}

#[test]
fn minhash_finds_every_exact_duplicate_of_the_example() {
    let dir = tempfile::tempdir().unwrap();
    let exact = dedup_example(dir.path(), "exact", &["--method", "exact"]);
    let truth: String = (std::fs::read_to_string(&exact).unwrap().lines())
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            json!({"id": row["id"], "cluster": row["cluster"]}).to_string() + "\n"
        })
        .collect();
    let truth = write(dir.path(), "exact-truth.jsonl", &truth);
    let minhash = dedup_example(dir.path(), "minhash", &["--method", "minhash"]);
    let run = neardup(&["eval", "--truth", &truth, "--predicted", &minhash, "--json"]);
    let report = json_report(&run);
    assert!(report["pairs"]["truth"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["recall"], json!(1.0), "{report}");
    assert_eq!(report["missing"]["documents"], json!(0));
    assert_eq!(report["predicted"]["not_in_truth"], json!(0));
    // The exact clusters scored against themselves are perfect.
    let report = json_report(&neardup(&[
        "eval",
        "--truth",
        &truth,
        "--predicted",
        &exact,
        "--json",
    ]));
    for key in ["precision", "recall", "f1", "adjusted_rand_index"] {
        assert_eq!(report[key], json!(1.0), "{key}");
    }
}
