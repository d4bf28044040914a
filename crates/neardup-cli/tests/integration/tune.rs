//! `neardup tune` end to end: a labelled corpus, the sweep table, the recommendation.

use std::process::{Command, Output};

use serde_json::Value;

use crate::util::{interrupt, json_file};

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

/// `--sweep` of `runs` values of `rare_threshold` (they differ only past the sixth
/// decimal: every run finds the same pairs).
fn sweep_of(runs: usize) -> String {
    let values: Vec<String> = (0..runs)
        .map(|i| format!("0.{:09}", 400_000_000 + i))
        .collect();
    format!("rare_threshold={}", values.join(";"))
}

/// Issue 44, item 4: six swept parameters of ten values each made 1,000,000 runs, started
/// without a word for minutes. A grid past `--max-runs` (default 1,000) is refused at once,
/// naming its count, what makes it and the flag; within the cap, the count and an estimate
/// come first on stderr (none of it with -q).
#[test]
fn regression_tune_refuses_a_grid_past_max_runs_and_says_how_long_first() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = labelled(dir.path());
    let ten = |from: usize| (from..from + 10).map(|v| v.to_string()).collect::<Vec<_>>();
    let six = [
        "--thresholds".to_owned(),
        "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.95".to_owned(),
        "--ngrams".to_owned(),
        ten(1).join(","),
        "--permutations".to_owned(),
        ten(16).join(","),
        "--sweep".to_owned(),
        format!("max_df={}", ten(2).join(";")),
        "--sweep".to_owned(),
        format!("boilerplate_df={}", ten(2).join(";")),
        "--sweep".to_owned(),
        sweep_of(10),
    ];
    let started = std::time::Instant::now();
    let six: Vec<&str> = six.iter().map(String::as_str).collect();
    let refused = tune_json(&corpus, &truth, &six);
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("the grid makes 1000000 runs") && message.contains("--max-runs 1000"),
        "{message}"
    );
    assert!(refused.stdout.is_empty());
    assert!(started.elapsed().as_secs() < 30, "refused before running");
    let four = ["--thresholds", "0.5,0.9", "--ngrams", "3,5"];
    let capped = tune_json(&corpus, &truth, &[&four[..], &["--max-runs", "3"]].concat());
    assert_eq!(capped.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&capped.stderr).contains("4 runs"));
    let allowed = tune_json(&corpus, &truth, &[&four[..], &["--max-runs", "4"]].concat());
    assert_eq!(report_of(&allowed)["rows"].as_array().unwrap().len(), 4);
    let said = String::from_utf8_lossy(&allowed.stderr);
    let count = said.find("neardup: tune: 4 runs").expect("the count");
    let estimate = said.find("the first run took").expect("an estimate");
    assert!(count < estimate, "{said}");
    assert!(said.contains("for the 4 runs"), "{said}");
    let quiet = tune_json(&corpus, &truth, &[&four[..], &["-q"]].concat());
    assert_eq!(report_of(&quiet)["rows"].as_array().unwrap().len(), 4);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// Issue 44, item 4: Ctrl-C in a long sweep lost every run made. It now writes the table of
/// the runs finished, marked partial, where the table goes, and exits 130 leaving no
/// temporary file.
#[cfg(unix)]
#[test]
fn regression_ctrl_c_in_tune_writes_the_table_of_the_runs_finished() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = labelled(dir.path());
    let table = dir.path().join("table.json");
    // 100 thresholds x 1,000 values of rare_threshold (an argument stays under 128 KiB).
    let thresholds: Vec<String> = (400..500).map(|t| format!("0.{t}")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["tune", corpus.to_str().unwrap(), "--truth"])
        .args([truth.to_str().unwrap(), "--id-field", "id", "--json"])
        .args(["--thresholds", &thresholds.join(","), "--ngrams", "3"])
        .args(["--sweep", &sweep_of(1_000)])
        .args(["--max-runs", "100000", "-o", table.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    while !said.contains("the first run took") {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said += &line;
    }
    assert!(said.contains("100000 runs"), "{said}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    interrupt(&child);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{said}{rest}");
    assert!(rest.contains("stopped after"), "{rest}");
    let written = json_file(&table);
    let finished = written["partial"]["finished"].as_u64().unwrap();
    assert_eq!(written["partial"]["planned"], 100_000);
    assert!((1..100_000).contains(&finished), "{finished}");
    assert_eq!(written["rows"].as_array().unwrap().len() as u64, finished);
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 3, "no temporary file: {files:?}");
}
