//! `dedup --method join` and `--method ngram`: the outputs contract, `--pairs` with the edit
//! distance, `--against` a reference corpus, and the ngram cap reported.

use serde_json::Value;

use crate::util::{json_lines, neardup, path, stderr};

fn write(dir: &std::path::Path, name: &str, texts: &[&str]) -> String {
    let file = path(dir, name);
    let lines: Vec<String> = (texts.iter().enumerate())
        .map(|(i, t)| serde_json::json!({"id": format!("{name}-{i}"), "text": t}).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

const TITLES: &[&str] = &[
    "国务院常务会议部署扩大内需",
    "国务院常务会议部署扩大内需！",
    "国务院常务会议部署扩大内需措施",
    "上海今天天气晴朗适合出门",
    "Apple unveils the new iPhone at its event",
    "apple unveils the new iphone at its event!",
    "Apple unveils a new iPad at its event",
    "",
];

#[test]
fn join_follows_the_dedup_contract_and_lists_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "titles.jsonl", TITLES);
    let (out, clusters, pairs, stats) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "clusters.jsonl"),
        path(dir.path(), "pairs.jsonl"),
        path(dir.path(), "stats.json"),
    );
    for (measure, threshold) in [("edit", "0.85"), ("jaccard", "0.8"), ("cosine", "0.8")] {
        let run = neardup(&[
            "dedup",
            &input,
            "-o",
            &out,
            "--clusters",
            &clusters,
            "--pairs",
            &pairs,
            "--stats",
            &stats,
            "--id-field",
            "id",
            "--method",
            "join",
            "--measure",
            measure,
            "--threshold",
            threshold,
            "-q",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let rows = json_lines(&clusters);
        assert_eq!(rows.len(), TITLES.len());
        let duplicate_of: Vec<Value> = rows.iter().map(|r| r["duplicate_of"].clone()).collect();
        assert_eq!(duplicate_of[1], "titles.jsonl-0", "{measure}");
        assert_eq!(duplicate_of[5], "titles.jsonl-4", "{measure}");
        assert!(
            duplicate_of[3].is_null() && duplicate_of[7].is_null(),
            "{measure}"
        );
        let kept = std::fs::read_to_string(&out).unwrap().lines().count();
        let removed = duplicate_of.iter().filter(|d| !d.is_null()).count();
        assert_eq!(kept + removed, TITLES.len());
        let pairs = json_lines(&pairs);
        assert!(!pairs.is_empty());
        for pair in &pairs {
            let similarity = pair["similarity"].as_f64().unwrap();
            assert!(
                similarity >= threshold.parse::<f64>().unwrap() - 1e-9,
                "{pair}"
            );
            assert_eq!(pair.get("distance").is_some(), measure == "edit", "{pair}");
        }
        let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(stats["method"]["name"], "join");
        assert_eq!(stats["method"]["params"]["measure"], measure);
    }
    // An absolute bound: 2 edits away is a duplicate, 3 is not.
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--id-field",
        "id",
        "--method",
        "join",
        "--max-edits",
        "2",
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows = json_lines(&clusters);
    assert_eq!(rows[2]["duplicate_of"], "titles.jsonl-0");
    assert!(rows[6]["duplicate_of"].is_null());
}

#[test]
fn bad_join_options_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "titles.jsonl", TITLES);
    let out = path(dir.path(), "out.jsonl");
    for (args, needle) in [
        (vec!["--max-edits", "2", "--threshold", "0.9"], "threshold"),
        (
            vec!["--max-edits", "2", "--measure", "jaccard"],
            "--max-edits",
        ),
        (vec!["--threshold", "1.2"], "threshold"),
        (vec!["--method", "minhash", "--measure", "edit"], "measure"),
        (vec!["--within"], "--against"),
    ] {
        let mut all = vec!["dedup", &input, "-o", &out];
        if !args.contains(&"--method") {
            all.extend(["--method", "join"]);
        }
        all.extend(args.iter().copied());
        let run = neardup(&all);
        assert!(!run.status.success(), "{args:?}");
        assert!(stderr(&run).contains(needle), "{args:?}: {}", stderr(&run));
        assert!(!std::path::Path::new(&out).exists());
    }
}

#[test]
fn against_writes_only_the_new_documents_that_are_not_in_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(
        dir.path(),
        "old.jsonl",
        &["今天北京天气很好", "明天上海有大雨"],
    );
    let new = write(
        dir.path(),
        "new.jsonl",
        &[
            "今天北京天气很好！",
            "周末去公园散步吧",
            "周末去公园散步吧",
            "明天上海有大雨啊",
        ],
    );
    let (out, clusters, pairs) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "clusters.jsonl"),
        path(dir.path(), "pairs.jsonl"),
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "dedup",
            &new,
            "-o",
            &out,
            "--clusters",
            &clusters,
            "--pairs",
            &pairs,
            "--method",
            "join",
            "--threshold",
            "0.6",
            "--against",
            &old,
            "-q",
        ];
        args.extend(extra);
        let run = neardup(&args);
        assert!(run.status.success(), "{}", stderr(&run));
    };
    // Without --id-field the reference documents are named by file and line.
    run(&[]);
    let rows = json_lines(&clusters);
    assert_eq!(rows.len(), 4, "one row per new document");
    let old_name = |line: u32| format!("{old}:{line}");
    assert_eq!(rows[0]["duplicate_of"], old_name(1));
    assert!(rows[1]["duplicate_of"].is_null());
    assert!(
        rows[2]["duplicate_of"].is_null(),
        "new documents are not compared"
    );
    assert_eq!(rows[3]["duplicate_of"], old_name(2));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);
    for pair in json_lines(&pairs) {
        assert!(pair["a"].as_str().unwrap().starts_with(&old), "{pair}");
    }
    run(&["--within", "--id-field", "id"]);
    let rows = json_lines(&clusters);
    assert_eq!(rows[0]["duplicate_of"], "old.jsonl-0");
    assert_eq!(rows[2]["duplicate_of"], "new.jsonl-1");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 1);
    // The reference is never an output.
    let run = neardup(&["dedup", &new, "-o", &old, "--against", &old, "-q"]);
    assert!(!run.status.success());
}

#[test]
fn ngram_reports_what_its_bucket_cap_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..60).map(|i| format!("公告公告{i:02}号")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let input = write(dir.path(), "flood.jsonl", &refs);
    let (out, stats) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "stats.json"),
    );
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--stats",
        &stats,
        "--method",
        "ngram",
        "--bucket-cap",
        "10",
        // The template check off: a templated text is joined on its rare elements and enters
        // no bucket, so the flood would cap none.
        "--max-df",
        "off",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert!(stats["capped_buckets"].as_u64().unwrap() >= 1, "{stats}");
    assert!(stats["capped_out"].as_u64().unwrap() >= 50, "{stats}");
    assert!(stderr(&run).contains("left out"), "{}", stderr(&run));
}

/// Issue 28, item 14: a join stopped by its pair limit said "invalid --candidate-budget: 32",
/// as if 32 were a bad value; it says that the budget was reached and what values it takes.
#[test]
fn regression_the_join_budget_error_says_it_was_reached_and_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..3000)
        .map(|i| format!("document number {i} about topic {} with words", i % 1000))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let input = write(dir.path(), "flood.jsonl", &refs);
    let out = dir.path().join("kept.jsonl").display().to_string();
    // Without the template check: with it (the default since issue 43), the join of rare
    // elements keeps this flood's answer linear.
    let args = [
        "--method",
        "join",
        "--max-df",
        "off",
        "--boilerplate-df",
        "off",
        "-q",
    ];
    let run = neardup(&[&["dedup", &input, "-o", &out][..], &args[..]].concat());
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(!message.contains("invalid --candidate-budget"), "{message}");
    for part in [
        "reached its candidate budget (--candidate-budget 32: a valid value",
        "takes a whole number of at least 1",
        "raise --candidate-budget",
    ] {
        assert!(message.contains(part), "{part} not in {message}");
    }
    assert!(!dir.path().join("kept.jsonl").exists());
}
