//! `dedup` with the classic fingerprints: every method of the registry (the classic ones
//! among them) runs on the example, and I-Match's lexicon is written by `--save-lexicon`
//! and read back by `--lexicon-file`.

use crate::util::{example, files_in, json_lines, neardup, path, stderr};

#[test]
fn every_method_runs_on_the_example_and_finds_copies() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    for method in neardup_core::registry::methods() {
        let method = method.name;
        let (out, clusters) = (path(dir.path(), "out.jsonl"), path(dir.path(), "c.jsonl"));
        let run = neardup(&[
            "dedup",
            &input,
            "-o",
            &out,
            "--clusters",
            &clusters,
            "--method",
            method,
            "--quiet",
        ]);
        assert!(run.status.success(), "{method}: {}", stderr(&run));
        let rows = json_lines(&clusters);
        let removed = rows.iter().filter(|r| !r["duplicate_of"].is_null()).count();
        assert!(removed > 0, "{method} removed nothing");
        assert_eq!(json_lines(&out).len(), rows.len() - removed, "{method}");
    }
}

#[test]
fn the_imatch_lexicon_is_saved_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    let (out, first, second, lexicon) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "first.jsonl"),
        path(dir.path(), "second.jsonl"),
        path(dir.path(), "lexicon.txt"),
    );
    let stats = path(dir.path(), "stats.json");
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &first,
        "--method",
        "imatch",
        "--save-lexicon",
        &lexicon,
        "--stats",
        &stats,
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let words = stats["method"]["learned"]["lexicon_words"]
        .as_u64()
        .unwrap();
    // The header line, then one line per word.
    let listed = std::fs::read_to_string(&lexicon).unwrap().lines().count() as u64;
    assert_eq!(listed, words + 1, "{}", stats["method"]);
    let saved = std::fs::read_to_string(&lexicon).unwrap();
    assert!(saved.starts_with("# neardup imatch lexicon v1"), "{saved}");
    assert!(saved.lines().count() > 100, "{}", saved.lines().count());
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--clusters",
        &second,
        "--method",
        "imatch",
        "--lexicon-file",
        &lexicon,
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(json_lines(&first), json_lines(&second));
}

#[test]
fn save_lexicon_with_a_method_without_one_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    let (out, lexicon) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "lexicon.txt"),
    );
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--method",
        "minhash",
        "--save-lexicon",
        &lexicon,
    ]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(
        message.contains("save_lexicon") || message.contains("save-lexicon"),
        "{message}"
    );
    assert!(message.contains("no lexicon"), "{message}");
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}
