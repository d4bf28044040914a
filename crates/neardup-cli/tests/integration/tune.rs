//! `neardup tune` end to end: a labelled corpus, the sweep table, the recommendation.

use std::process::Command;

use serde_json::Value;

#[test]
fn tune_sweeps_the_grid_and_recommends_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    let truth = dir.path().join("truth.jsonl");
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
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "tune",
            corpus.to_str().unwrap(),
            "--truth",
            truth.to_str().unwrap(),
            "--id-field",
            "id",
        ])
        .args(["--thresholds", "0.5,0.9", "--ngrams", "3,5", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
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
