//! Integration tests of the `neardup` binary: the `dedup` contract, determinism, bad input.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::{example, files_in, json_lines, neardup, path, stderr};

#[test]
fn dedup_contract_on_the_example() {
    let dir = tempfile::tempdir().unwrap();
    let (out, clusters) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "clusters.jsonl"),
    );
    let stats = path(dir.path(), "stats.json");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--stats",
        &stats,
        "--id-field",
        "id",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));

    let input: Vec<String> = std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let rows = json_lines(&clusters);
    assert_eq!(
        rows.len(),
        input.len(),
        "one clusters row per input document"
    );
    let kept_lines: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut expected_kept = Vec::new();
    for (row, line) in rows.iter().zip(&input) {
        let keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["id", "cluster", "duplicate_of", "similarity"]);
        let id = &serde_json::from_str::<Value>(line).unwrap()["id"];
        assert_eq!(&row["id"], id, "rows follow input order");
        if row["duplicate_of"].is_null() {
            assert_eq!(&row["cluster"], id);
            assert!(row["similarity"].is_null());
            expected_kept.push(line.clone());
        } else {
            assert_eq!(row["cluster"], row["duplicate_of"]);
            // At least the default threshold (0.4).
            assert!(row["similarity"].as_f64().unwrap() >= 0.4 - 1e-9);
        }
    }
    assert_eq!(
        kept_lines, expected_kept,
        "kept JSONL lines are passed through byte for byte"
    );
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["documents_in"], input.len());
    assert!(
        stats["removed"].as_u64().unwrap() >= 20,
        "the example has duplicates: {stats}"
    );
    assert_eq!(
        stats["kept"].as_u64().unwrap() as usize,
        expected_kept.len()
    );
    // The candidate budget does not cut into an ordinary corpus.
    assert_eq!(stats["budget_hits"], 0);
    assert!(stats["partner_limit"].is_null(), "{stats}");
}

#[test]
fn bucket_cap_zero_is_an_error_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let content = b"{\"text\": \"a\"}\n";
    for option in ["--bucket-cap", "--candidate-budget"] {
        let expect = [option, "must be at least 1"];
        assert_fails_cleanly(dir.path(), "in.jsonl", content, &[option, "0"], &expect);
    }
}

#[test]
fn template_flood_stats_show_a_bounded_candidate_count() {
    let dir = tempfile::tempdir().unwrap();
    let (input, out, stats) = (
        path(dir.path(), "flood.txt"),
        path(dir.path(), "out.txt"),
        path(dir.path(), "stats.json"),
    );
    let documents = 20_000;
    let text: String = (0..documents)
        .map(|i| format!("document number {i} about topic {} with words\n", i % 1000))
        .collect();
    std::fs::write(&input, text).unwrap();
    let budget = "16";
    let run_with = |extra: &[&str]| -> Value {
        let mut args = vec![
            "dedup",
            &input,
            "-o",
            &out,
            "--stats",
            &stats,
            "--quiet",
            "--candidate-budget",
            budget,
        ];
        args.extend_from_slice(extra);
        let run = neardup(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap()
    };
    // Without the template checks (common shingles, numbers), the notices merge: 77 million
    // candidate pairs before the budget.
    let stats = run_with(&["--max-df", "off", "--slots", "off"]);
    assert!(
        stats["candidate_pairs"].as_u64().unwrap() <= documents * 16,
        "{stats}"
    );
    assert!(stats["budget_hits"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["partner_limit"].as_u64().unwrap() >= 16, "{stats}");
    assert!(stats["kept"].as_u64().unwrap() < 100, "{stats}");
    // By default they are notices of one template that differ in their numbers: the same
    // bounded candidates, none verified, all kept.
    let stats = run_with(&[]);
    assert!(
        stats["candidate_pairs"].as_u64().unwrap() <= documents * 16,
        "{stats}"
    );
    assert_eq!(stats["verified_pairs"], 0, "{stats}");
    assert_eq!(stats["kept"], documents, "{stats}");
    assert!(
        stats["boilerplate"]["discounted_shingles"]
            .as_u64()
            .unwrap()
            > documents
    );
}

#[test]
fn one_and_two_threads_give_byte_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let outputs: Vec<Vec<Vec<u8>>> = ["1", "2"]
        .iter()
        .map(|threads| {
            let names = ["out.jsonl", "clusters.jsonl", "pairs.jsonl"]
                .map(|n| path(dir.path(), &format!("{threads}-{n}")));
            let run = neardup(&[
                "dedup",
                &example(),
                "-o",
                &names[0],
                "--clusters",
                &names[1],
                "--pairs",
                &names[2],
                "--threads",
                threads,
                "--threshold",
                "0.5",
                "--quiet",
            ]);
            assert!(run.status.success(), "{}", stderr(&run));
            names.iter().map(|n| std::fs::read(n).unwrap()).collect()
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    assert!(!outputs[0][2].is_empty(), "the example has verified pairs");
}

#[test]
fn exact_method_follows_the_same_contract() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.txt");
    std::fs::write(&input, "Hello, world!\nhello world\n\nsomething else\n\n").unwrap();
    let (out, clusters) = (path(dir.path(), "out.txt"), path(dir.path(), "c.jsonl"));
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--method",
        "exact",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "Hello, world!\n\nsomething else\n\n"
    );
    let rows = json_lines(&clusters);
    assert_eq!(rows[1]["duplicate_of"], 1);
    assert_eq!(rows[1]["similarity"], 1.0);
    assert!(
        rows[2]["duplicate_of"].is_null() && rows[4]["duplicate_of"].is_null(),
        "empty lines never merge"
    );
}

fn assert_fails_cleanly(
    dir: &Path,
    input_name: &str,
    content: &[u8],
    extra: &[&str],
    expect: &[&str],
) {
    let input = path(dir, input_name);
    std::fs::write(&input, content).unwrap();
    let out = path(dir, "out");
    let clusters = path(dir, "clusters.jsonl");
    let mut args = vec![
        "dedup",
        input.as_str(),
        "-o",
        out.as_str(),
        "--clusters",
        clusters.as_str(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let run = neardup(&args);
    assert!(!run.status.success(), "{input_name} should fail");
    let message = stderr(&run);
    for needle in expect {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
    assert_eq!(
        files_in(dir),
        [input_name.to_owned()],
        "no output or temporary file is left behind"
    );
    std::fs::remove_file(&input).unwrap();
}

#[test]
fn bad_input_fails_with_file_line_and_field_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_fails_cleanly(
        d,
        "broken.jsonl",
        b"{\"text\":\"a\"}\n{\"text\":\"b\"}\n{\"text\": oops}\n",
        &[],
        &["broken.jsonl:3", "JSON"],
    );
    assert_fails_cleanly(
        d,
        "missing.jsonl",
        b"{\"text\":\"a\"}\n{\"body\":\"b\"}\n",
        &[],
        &["missing.jsonl:2", "text"],
    );
    assert_fails_cleanly(
        d,
        "utf8.jsonl",
        b"{\"text\":\"a\"}\n{\"text\":\"\xff\xfe\"}\n",
        &[],
        &["utf8.jsonl:2", "UTF-8"],
    );
    assert_fails_cleanly(
        d,
        "rows.csv",
        b"id,text\n1,hello\n2,hello,extra\n",
        &[],
        &["rows.csv:3", "fields"],
    );
    assert_fails_cleanly(
        d,
        "big.txt",
        &[b'a'; 5000],
        &["--max-doc-bytes", "1000"],
        &["big.txt:1", "max-doc-bytes"],
    );
    assert_fails_cleanly(
        d,
        "params.txt",
        b"a\n",
        &["--threshold", "1.5"],
        &["threshold", "1.5"],
    );
}

#[test]
fn skip_mode_counts_and_reports_bad_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    std::fs::write(&input, "{\"text\":\"first document here\"}\nnot json\n{\"other\":1}\n{\"text\":\"first document here\"}\n").unwrap();
    let (out, clusters, stats) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "c.jsonl"),
        path(dir.path(), "s.json"),
    );
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--stats",
        &stats,
        "--on-error",
        "skip",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(
        message.contains("skipped 2")
            && message.contains("in.jsonl:2")
            && message.contains("in.jsonl:3"),
        "{message}"
    );
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["skipped"], 2);
    assert_eq!(stats["documents_in"], 2);
    assert_eq!(json_lines(&clusters).len(), 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 1);
}

#[test]
fn unwritable_output_fails_before_reading_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir_output = path(dir.path(), "no/such/dir/out.jsonl");
    // The input does not exist either: the output error must come first.
    let run = neardup(&[
        "dedup",
        "does-not-exist.jsonl",
        "-o",
        &missing_dir_output,
        "--quiet",
    ]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("no/such/dir/out.jsonl"),
        "{}",
        stderr(&run)
    );
}

#[test]
fn stdin_and_stdout_work() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", "-", "--format", "text", "-o", "-", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            "今天天气很好，我们去公园散步吧。\n今天天气很好,我们去公园散步吧!\n另一件事\n"
                .as_bytes(),
        )
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "今天天气很好，我们去公园散步吧。\n另一件事\n"
    );
}

/// A corpus of 40 short posts in one account's header and footer.
fn wrapped_corpus(dir: &Path) -> String {
    let input = path(dir, "wrapped.jsonl");
    let rows: String = (0..40)
        .map(|i| {
            let text = format!(
                "Copyright 2024 Example Daily News Group. All rights reserved worldwide.\n\
                 Post {i}: the {} market opened {} today with {} traders on the floor.\n\
                 Subscribe to our newsletter for the latest updates from Example Daily.",
                ["grain", "bond", "metal", "oil", "coffee"][i % 5],
                ["higher", "lower", "flat", "early"][i % 4],
                100 + i * 17
            );
            serde_json::json!({ "id": format!("p{i}"), "text": text }).to_string() + "\n"
        })
        .collect();
    std::fs::write(&input, rows).unwrap();
    input
}

#[test]
fn boilerplate_is_reported_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = wrapped_corpus(dir.path());
    let (out, clusters, stats, list) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "clusters.jsonl"),
        path(dir.path(), "stats.json"),
        path(dir.path(), "boilerplate.txt"),
    );
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--stats",
        &stats,
        "--boilerplate-out",
        &list,
        "--id-field",
        "id",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let found: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let found = &found["boilerplate"];
    assert_eq!(found["boilerplate_df"], 20, "{found}");
    assert_eq!(found["documents"], 40, "{found}");
    assert_eq!(found["distinct_lines"], 3, "{found}");
    assert_eq!(found["top_lines"][0]["documents"], 40, "{found}");
    let listed = std::fs::read_to_string(&list).unwrap();
    assert_eq!(
        listed.lines().next(),
        Some("Copyright 2024 Example Daily News Group."),
        "{listed}"
    );
    assert_eq!(listed.lines().count(), 3);
    let with_corpus = std::fs::read_to_string(&clusters).unwrap();

    // The saved list, with no corpus statistics at all, gives the same clusters.
    let again = path(dir.path(), "again.jsonl");
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &again,
        "--boilerplate-file",
        &list,
        "--boilerplate-df",
        "off",
        "--max-df",
        "off",
        "--id-field",
        "id",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), with_corpus);

    // Without boilerplate handling the wrapper merges the posts.
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &again,
        "--boilerplate-df",
        "off",
        "--max-df",
        "off",
        "--id-field",
        "id",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_ne!(std::fs::read_to_string(&again).unwrap(), with_corpus);
}

#[test]
fn bad_boilerplate_options_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = wrapped_corpus(dir.path());
    let out = path(dir.path(), "out.jsonl");
    for (option, value, expect) in [
        ("--max-df", "0", "--max-df"),
        ("--max-df", "1.5", "--max-df"),
        ("--boilerplate-df", "lots", "--boilerplate-df"),
        ("--rare-threshold", "2", "--rare-threshold"),
        ("--corpus-memory", "12Q", "--corpus-memory"),
        ("--boilerplate-file", "/nonexistent/list.txt", "list.txt"),
    ] {
        let run = neardup(&["dedup", &input, "-o", &out, option, value, "--quiet"]);
        assert!(!run.status.success(), "{option} {value}");
        let message = stderr(&run);
        assert!(message.contains(expect), "{option} {value}: {message}");
        assert!(
            !Path::new(&out).exists(),
            "{option} {value}: output written"
        );
    }
}
