//! Integration tests of `neardup synth`: determinism, the corpus/truth contract, and that
//! `neardup dedup` finds the easy copies and leaves the hard negatives alone.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::util::{example, json_lines, neardup, path};

/// Edits that normalisation undoes or that add little text: dedup must find these copies.
const EASY_EDITS: [&str; 4] = ["punct", "width", "script", "boilerplate"];

/// Runs `neardup synth` on the example into `dir`; returns the corpus and truth paths.
fn synth(dir: &Path, seed: &str, extra: &[&str]) -> (String, String) {
    let (corpus, truth) = (
        path(dir, &format!("corpus-{seed}.jsonl")),
        path(dir, &format!("truth-{seed}.jsonl")),
    );
    let example = example();
    let mut args = vec![
        "synth",
        example.as_str(),
        "-o",
        &corpus,
        "--truth",
        &truth,
        "--text-field",
        "text",
        "--id-field",
        "id",
        "--seed",
        seed,
    ];
    args.extend_from_slice(extra);
    let run = neardup(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("227 sources"),
        "summary on stderr: {stderr}"
    );
    (corpus, truth)
}

#[test]
fn synth_is_byte_identical_for_a_seed_and_truth_follows_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let first = synth(dir.path(), "5", &[]);
    let again_dir = tempfile::tempdir().unwrap();
    let again = synth(again_dir.path(), "5", &[]);
    let other = synth(dir.path(), "6", &[]);
    let read = |path: &str| std::fs::read(path).unwrap();
    assert_eq!(read(&first.0), read(&again.0));
    assert_eq!(read(&first.1), read(&again.1));
    assert_ne!(read(&first.0), read(&other.0));

    let (corpus, truth) = (json_lines(&first.0), json_lines(&first.1));
    assert_eq!(corpus.len(), truth.len());
    assert!(corpus.len() > 227, "variants were added");
    for (document, row) in corpus.iter().zip(&truth) {
        assert_eq!(document["id"], row["id"]);
        let keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["id", "cluster", "category"]);
        let keys: Vec<&str> = document
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["id", "text", "source"]);
        assert!(
            document["source"].as_str().unwrap().contains('-'),
            "news ids look like zh-5"
        );
    }
}

/// The dedup clusters file of `corpus`, as id -> (cluster, duplicate_of).
fn dedup_clusters(dir: &Path, corpus: &str) -> HashMap<String, (Value, Value)> {
    let (kept, clusters) = (path(dir, "kept.jsonl"), path(dir, "clusters.jsonl"));
    let run = neardup(&[
        "dedup",
        corpus,
        "-o",
        &kept,
        "--clusters",
        &clusters,
        "--id-field",
        "id",
        "--quiet",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let rows = json_lines(&clusters);
    let id = |row: &Value| row["id"].as_str().unwrap().to_owned();
    let entry = |row: Value| {
        (
            id(&row),
            (row["cluster"].clone(), row["duplicate_of"].clone()),
        )
    };
    rows.into_iter().map(entry).collect()
}

#[test]
fn dedup_finds_easy_copies_and_not_hard_negatives() {
    let dir = tempfile::tempdir().unwrap();
    let options = ["--duplicate-rate", "0.6", "--hard-negatives", "0.3"];
    let (corpus, truth) = synth(dir.path(), "3", &options);
    let found = dedup_clusters(dir.path(), &corpus);
    let (mut easy, mut easy_found, mut negatives) = (0, 0, 0);
    for row in json_lines(&truth) {
        let id = row["id"].as_str().unwrap();
        let category = row["category"].as_str().unwrap();
        let original = row["cluster"].as_str().unwrap();
        if category == "hard_negative" {
            negatives += 1;
            let source = id.trim_end_matches("-hn1");
            assert_ne!(found[id].1, source, "{id} is not a duplicate of its source");
            assert_ne!(found[source].1, id, "its source is not a duplicate of {id}");
        } else if category.split('+').all(|edit| EASY_EDITS.contains(&edit)) {
            easy += 1;
            easy_found += usize::from(found[id].0 == found[original].0);
        }
    }
    assert!(
        easy >= 20 && negatives >= 20,
        "{easy} easy copies, {negatives} hard negatives"
    );
    assert!(
        easy_found * 10 >= easy * 7,
        "dedup found {easy_found} of {easy} easy copies"
    );
}

/// FNV-1a (64 bits) of a file's bytes.
fn fnv(path: &str) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn default_output_is_pinned() {
    // The bytes of `neardup synth` before --wrappers, --rewrap and --templates existed: the
    // defaults (and explicit zeros) must keep them.
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = synth(dir.path(), "1", &[]);
    assert_eq!(
        (fnv(&corpus), fnv(&truth)),
        (0x2eff_83ec_9b8b_b33b, 0xfa95_1562_fa09_0a5e)
    );
    let zeros = ["--wrappers", "0", "--rewrap", "0", "--templates", "0"];
    let extra = [
        &["--duplicate-rate", "0.7", "--hard-negatives", "0.4"],
        &zeros[..],
    ]
    .concat();
    let (corpus, truth) = synth(dir.path(), "9", &extra);
    assert_eq!(
        (fnv(&corpus), fnv(&truth)),
        (0x4f78_8891_7f2a_20a1, 0x019e_a754_3b9b_b521)
    );
}

#[test]
fn wrappers_rewraps_and_templates_have_their_categories() {
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--wrappers", "5", "--rewrap", "0.3", "--templates", "20"];
    let (corpus, truth) = synth(dir.path(), "4", &extra);
    let run = neardup(&[
        "synth",
        &example(),
        "-o",
        &path(dir.path(), "again.jsonl"),
        "--truth",
        &path(dir.path(), "again-truth.jsonl"),
        "--text-field",
        "text",
        "--id-field",
        "id",
        "--seed",
        "4",
        "--wrappers",
        "5",
        "--rewrap",
        "0.3",
        "--templates",
        "20",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("re-wraps") && stderr.contains("20 template notices"),
        "{stderr}"
    );
    assert_eq!(fnv(&corpus), fnv(&path(dir.path(), "again.jsonl")));
    let (corpus, truth) = (json_lines(&corpus), json_lines(&truth));
    let mut counts: HashMap<String, usize> = HashMap::new();
    let clusters: HashMap<&str, &str> = truth
        .iter()
        .map(|row| {
            (
                row["id"].as_str().unwrap(),
                row["cluster"].as_str().unwrap(),
            )
        })
        .collect();
    for (document, row) in corpus.iter().zip(&truth) {
        let (id, category) = (
            row["id"].as_str().unwrap(),
            row["category"].as_str().unwrap(),
        );
        *counts.entry(category.to_owned()).or_default() += 1;
        let cluster = row["cluster"].as_str().unwrap();
        match category {
            "template" => {
                assert!(id.starts_with('t') && cluster == id, "{row}");
                assert!(document["source"].is_null());
            }
            "rewrap" => {
                let source = id.strip_suffix("-rw1").unwrap();
                assert_eq!(cluster, clusters[source]);
            }
            "original" => assert!(document["text"].as_str().unwrap().lines().count() >= 3),
            _ => {}
        }
    }
    assert_eq!(counts["original"], 227);
    assert_eq!(counts["template"], 20);
    assert!((30..=110).contains(&counts["rewrap"]), "{counts:?}");
}

#[test]
fn bad_options_and_inputs_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = (path(dir.path(), "c.jsonl"), path(dir.path(), "t.jsonl"));
    let example = example();
    let run = |extra: &[&str]| {
        let mut args = vec!["synth", example.as_str(), "-o", &corpus, "--truth", &truth];
        args.extend_from_slice(extra);
        let output = neardup(&args);
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    assert!(run(&["--edits", "punct,bogus"]).contains("bogus"));
    assert!(run(&["--strength", "0"]).contains("strength"));
    assert!(run(&["--duplicate-rate", "2"]).contains("duplicate-rate"));
    assert!(run(&["--rewrap", "0.2"]).contains("rewrap"));
    assert!(run(&["--wrappers", "3", "--rewrap", "1.5"]).contains("rewrap"));
    assert!(run(&["--text-field", "body"]).contains("news.jsonl:1"));
    assert!(!Path::new(&corpus).exists() && !Path::new(&truth).exists());
}
