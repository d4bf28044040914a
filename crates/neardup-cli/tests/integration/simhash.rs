//! `dedup --method simhash`, `fingerprint` and `hamming` end to end: the output contracts,
//! agreement between the commands, and errors that name the line.

use serde_json::Value;

use crate::util::{example, files_in, json_lines, neardup, path, stderr};

fn hex_distance(a: &Value, b: &Value) -> u32 {
    let parse = |v: &Value| u128::from_str_radix(v.as_str().unwrap(), 16).unwrap();
    (parse(a) ^ parse(b)).count_ones()
}

#[test]
fn fingerprint_rows_follow_the_contract_and_hamming_equals_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    for (bits, digits, k) in [("64", 16, "6"), ("128", 32, "12")] {
        let fps = path(dir.path(), &format!("fp{bits}.jsonl"));
        let pairs = path(dir.path(), &format!("pairs{bits}.jsonl"));
        let run = neardup(&[
            "fingerprint",
            &example(),
            "-o",
            &fps,
            "--id-field",
            "id",
            "--bits",
            bits,
            "-q",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let rows = json_lines(&fps);
        assert_eq!(rows.len(), 227);
        for row in &rows {
            let object = row.as_object().unwrap();
            assert_eq!(object.len(), 2, "{row}");
            let hex = row["fingerprint"].as_str().unwrap();
            assert_eq!(hex.len(), digits);
            assert!(hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
        let run = neardup(&["hamming", &fps, "-o", &pairs, "--max-distance", k, "-q"]);
        assert!(run.status.success(), "{}", stderr(&run));
        let found: Vec<(String, String, u64)> = json_lines(&pairs)
            .iter()
            .map(|p| {
                assert_eq!(p.as_object().unwrap().len(), 3);
                (
                    p["a"].to_string(),
                    p["b"].to_string(),
                    p["distance"].as_u64().unwrap(),
                )
            })
            .collect();
        let k: u32 = k.parse().unwrap();
        let mut expected = Vec::new();
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                let d = hex_distance(&a["fingerprint"], &b["fingerprint"]);
                if d <= k {
                    expected.push((a["id"].to_string(), b["id"].to_string(), u64::from(d)));
                }
            }
        }
        assert!(
            expected.iter().any(|p| p.2 == 0),
            "identical fingerprints are pairs"
        );
        assert_eq!(found, expected, "{bits} bits: input order, each pair once");
    }
}

#[test]
fn the_low_half_of_128_bits_is_the_64_bit_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (path(dir.path(), "a.jsonl"), path(dir.path(), "b.jsonl"));
    for (bits, out) in [("64", &a), ("128", &b)] {
        let run = neardup(&["fingerprint", &example(), "-o", out, "--bits", bits, "-q"]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    for (x, y) in json_lines(&a).iter().zip(json_lines(&b)) {
        assert_eq!(
            x["fingerprint"].as_str().unwrap(),
            &y["fingerprint"].as_str().unwrap()[16..]
        );
    }
}

#[test]
fn dedup_pairs_carry_the_distance_and_agree_with_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let (kept, pairs, clusters, fps) = (
        path(dir.path(), "kept.jsonl"),
        path(dir.path(), "pairs.jsonl"),
        path(dir.path(), "clusters.jsonl"),
        path(dir.path(), "fp.jsonl"),
    );
    let example = example();
    let mut args = vec![
        "dedup",
        &example,
        "-o",
        &kept,
        "--pairs",
        &pairs,
        "--clusters",
        &clusters,
    ];
    args.extend(["--id-field", "id", "--method", "simhash", "-q"]);
    args.extend(["--max-distance", "8", "--verify", "none"]);
    let run = neardup(&args);
    assert!(run.status.success(), "{}", stderr(&run));
    let run = neardup(&[
        "fingerprint",
        &example,
        "-o",
        &fps,
        "--id-field",
        "id",
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let fingerprint: std::collections::HashMap<String, Value> = json_lines(&fps)
        .into_iter()
        .map(|r| (r["id"].to_string(), r["fingerprint"].clone()))
        .collect();
    let rows = json_lines(&pairs);
    assert!(!rows.is_empty());
    for row in &rows {
        let d = hex_distance(
            &fingerprint[&row["a"].to_string()],
            &fingerprint[&row["b"].to_string()],
        );
        assert_eq!(row["distance"].as_u64().unwrap(), u64::from(d), "{row}");
        assert!(d <= 8);
        let similarity = row["similarity"].as_f64().unwrap();
        assert!(
            (similarity - (1.0 - f64::from(d) / 64.0)).abs() < 1e-9,
            "{row}"
        );
    }
    for row in json_lines(&clusters) {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "cluster", "duplicate_of", "similarity"]);
    }
}

#[test]
fn hamming_reads_plain_hex_and_names_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let plain = path(dir.path(), "fp.txt");
    let out = path(dir.path(), "pairs.jsonl");
    std::fs::write(
        &plain,
        "00000000000000ff\n0x00000000000000fe\nffffffffffffffff\n",
    )
    .unwrap();
    let run = neardup(&["hamming", &plain, "-o", &out, "--max-distance", "1"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(
        json_lines(&out),
        vec![serde_json::json!({"a": 1, "b": 2, "distance": 1})]
    );
    for (text, message) in [
        (
            "00000000000000ff\n00000000000000fg\n",
            "fp.txt:2: fingerprint \"00000000000000fg\" is not hexadecimal",
        ),
        (
            "00000000000000ff\n00000000000000ff00\n",
            "fp.txt:2: fingerprint \"00000000000000ff00\" has 18 hex digits",
        ),
    ] {
        std::fs::write(&plain, text).unwrap();
        let run = neardup(&["hamming", &plain, "-o", &out, "--max-distance", "1"]);
        assert!(!run.status.success());
        assert!(stderr(&run).contains(message), "{}", stderr(&run));
    }
    std::fs::write(&plain, "00000000000000ff\n").unwrap();
    let run = neardup(&["hamming", &plain, "-o", &out, "--max-distance", "64"]);
    assert!(stderr(&run).contains("--max-distance"), "{}", stderr(&run));
}

#[test]
fn simhash_options_are_checked_and_files_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "kept.jsonl");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--method",
        "simhash",
        "--max-distance",
        "<100:10",
    ]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--max-distance"), "{}", stderr(&run));
    let missing = path(dir.path(), "missing.txt");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--method",
        "simhash",
        "--stopwords-file",
        &missing,
    ]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("missing.txt"), "{}", stderr(&run));
    let idf = path(dir.path(), "idf.txt");
    std::fs::write(&idf, "国务院 9.5\n总理 bad\n").unwrap();
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--method",
        "simhash",
        "--weights",
        "tfidf",
        "--tokenizer",
        "word",
        "--ngram",
        "1",
        "--idf-file",
        &idf,
    ]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("--idf-file") && stderr(&run).contains("line 2"),
        "{}",
        stderr(&run)
    );
    std::fs::write(&idf, "国务院 9.5\n总理 3\n").unwrap();
    let stats = path(dir.path(), "stats.json");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--method",
        "simhash",
        "--weights",
        "tfidf",
        "--tokenizer",
        "word",
        "--ngram",
        "1",
        "--idf-file",
        &idf,
        "--stats",
        &stats,
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["method"]["params"]["idf_file"], "2 entries");
    assert!(stats["exact_only_documents"].is_u64());
}

#[test]
fn tfidf_fingerprints_learn_from_the_input_and_do_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for (threads, weights) in [("1", "tfidf"), ("2", "tfidf"), ("2", "tf")] {
        let out = path(dir.path(), &format!("fp-{threads}-{weights}.jsonl"));
        let run = neardup(&[
            "fingerprint",
            &example(),
            "-o",
            &out,
            "--weights",
            weights,
            "--threads",
            threads,
            "-q",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(
        outputs[0], outputs[1],
        "same fingerprints for 1 and 2 threads"
    );
    assert_ne!(
        outputs[1], outputs[2],
        "IDF weights change the fingerprints"
    );
}

/// Issue 28, item 5: `hamming` on 100,000 identical fingerprints with `--max-distance 0`
/// gathered 5 x 10^9 pairs in memory, aborted on a 6 GB allocation and left its temporary
/// output; ids given twice were accepted.
#[test]
fn hamming_of_identical_fingerprints_is_refused_or_grouped_not_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let plain = path(dir.path(), "fp.txt");
    let out = path(dir.path(), "pairs.jsonl");
    // 5,000 copies: 12,497,500 pairs, over the default budget of 10 million.
    std::fs::write(&plain, "00000000000000ff\n".repeat(5000)).unwrap();
    let run = neardup(&["hamming", &plain, "-o", &out, "--max-distance", "0"]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(message.contains("12497500 pairs"), "{message}");
    assert!(
        message.contains("--groups") && message.contains("--max-pairs"),
        "{message}"
    );
    assert_eq!(files_in(dir.path()), ["fp.txt"]);
    // As groups: one row a fingerprint, the pairs file names none inside a group.
    let groups = path(dir.path(), "groups.jsonl");
    let run = neardup(&[
        "hamming",
        &plain,
        "-o",
        &out,
        "--max-distance",
        "0",
        "--groups",
        &groups,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(json_lines(&out).is_empty());
    let rows = json_lines(&groups);
    assert_eq!(rows.len(), 5000);
    assert_eq!(rows[4999], serde_json::json!({"id": 5000, "group": 1}));
    // A repeated id is refused, naming the file, both lines and the id.
    let rows = path(dir.path(), "fp.jsonl");
    std::fs::write(
        &rows,
        "{\"id\":\"x\",\"fingerprint\":\"00000000000000ff\"}\n\
         {\"id\":\"y\",\"fingerprint\":\"00000000000000fe\"}\n\
         {\"id\":\"x\",\"fingerprint\":\"00000000000000fc\"}\n",
    )
    .unwrap();
    let run = neardup(&["hamming", &rows, "-o", &out, "--max-distance", "3"]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(
        message.contains("fp.jsonl:3: id \"x\" repeats the id of line 1"),
        "{message}"
    );
}
