//! `neardup tune` end to end: a labelled corpus, the sweep table, the recommendation.

use std::process::{Command, Output};

use serde_json::Value;

/// Three texts with two copies each, and their truth, in `dir`.
fn labelled(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let corpus = dir.join("corpus.jsonl");
    let truth = dir.join("truth.jsonl");
    let base = [
        "国务院总理今天在北京主持召开常务会议，部署进一步扩大内需的措施，会议指出要稳定就业和物价。",
        "The central bank raised interest rates by a quarter point on Tuesday, citing persistent inflation.",
        "本市今日起实施新的垃圾分类管理办法，居民需将厨余垃圾与其他垃圾分开投放，违者将被处罚。",
    ];
    let mut corpus_lines = String::new();
    let mut truth_lines = String::new();
    for (index, text) in base.iter().enumerate() {
        let copies = [
            text.to_string(),
            format!("{text} 转发自新浪微博"),
            text.replace('，', ","),
        ];
        for (copy, variant) in copies.iter().enumerate() {
            let id = format!("d{index}-{copy}");
            corpus_lines += &format!("{}\n", serde_json::json!({"id": id, "text": variant}));
            truth_lines += &format!("{}\n", serde_json::json!({"id": id, "cluster": index}));
        }
    }
    std::fs::write(&corpus, corpus_lines).unwrap();
    std::fs::write(&truth, truth_lines).unwrap();
    (corpus, truth)
}

/// `neardup tune CORPUS --truth TRUTH --id-field id --json ARGS...`.
fn tune_json(corpus: &std::path::Path, truth: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "tune",
            corpus.to_str().unwrap(),
            "--truth",
            truth.to_str().unwrap(),
        ])
        .args(["--id-field", "id", "--json"])
        .args(args)
        .output()
        .unwrap()
}

/// The JSON report of a run that succeeded.
fn report_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn tune_sweeps_the_grid_and_recommends_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = labelled(dir.path());
    let output = tune_json(
        &corpus,
        &truth,
        &["--thresholds", "0.5,0.9", "--ngrams", "3,5"],
    );
    let report = report_of(&output);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "2 thresholds x 2 n-gram sizes");
    let best = report["recommended"].as_u64().expect("a recommendation") as usize;
    assert_eq!(rows[best]["f1"], 1.0, "{report:#}");
    assert_eq!(rows[best]["precision"], 1.0);
}

#[test]
fn tune_reports_a_bad_truth_file_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    let truth = dir.path().join("truth.jsonl");
    std::fs::write(&corpus, "{\"text\": \"a\"}\n").unwrap();
    std::fs::write(
        &truth,
        "{\"id\": 1, \"cluster\": 1}\n{\"id\": 2, \"cluster\": \n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "tune",
            corpus.to_str().unwrap(),
            "--truth",
            truth.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("truth.jsonl:2"));
}

#[test]
fn tune_sweeps_rules_by_length_and_any_other_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = labelled(dir.path());
    let run = |sweeps: &[&str]| {
        let args: Vec<&str> = sweeps
            .iter()
            .flat_map(|&sweep| ["--sweep", sweep])
            .collect();
        tune_json(&corpus, &truth, &args)
    };
    let output = run(&[
        "threshold=0.4;<25:0.43,0.4",
        "ngram=3;<24:2,3",
        "rare-threshold=0.4;0.6",
    ]);
    let report = report_of(&output);
    let rows = report["rows"].as_array().unwrap();
    // The swept threshold and ngram replace --thresholds and --ngrams: 2 x 2 x 2 rows.
    assert_eq!(rows.len(), 8, "{report:#}");
    let swept: Vec<String> = (rows.iter())
        .map(|row| {
            let s = &row["swept"];
            format!("{} {} {}", s["threshold"], s["ngram"], s["rare_threshold"])
        })
        .collect();
    assert!(
        swept.contains(&r#""<25:0.43,0.4" "<24:2,3" "0.6""#.to_owned()),
        "{swept:?}"
    );
    assert!(
        swept.contains(&r#""0.4" "3" "0.4""#.to_owned()),
        "{swept:?}"
    );
    // A parameter the method does not have, or no value, is refused by name.
    let output = run(&["max_distance=3;6"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--max-distance"));
    let output = run(&["threshold="]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("NAME=V1;V2"));
}
