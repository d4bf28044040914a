//! Issue 44, the rough edges of the batch command line: repeated JSON keys, an output named
//! for another format, a reader that goes away, a FIFO with no reader, and messages that
//! echo hostile values or speak of the wrong thing. Each test failed on the code before.

use std::io::{BufRead, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{example, files_in, json_file, neardup, path, stderr};

#[test]
fn a_line_that_repeats_a_key_is_refused_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    std::fs::write(
        &input,
        "{\"text\":\"a\",\"text\":\"b\"}\n{\"text\":\"c\"}\n",
    )
    .unwrap();
    let out = path(dir.path(), "out.jsonl");
    let run = neardup(&["dedup", &input, "-o", &out]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("in.jsonl:1: the key \"text\" appears twice in the object"),
        "{}",
        stderr(&run)
    );
    let stats = path(dir.path(), "stats.json");
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--on-error",
        "skip",
        "--stats",
        &stats,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stats = json_file(&stats);
    assert_eq!(stats["skipped"], 1);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"text\":\"c\"}\n");
}

#[test]
fn an_output_named_for_another_format_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "kept.csv");
    let run = neardup(&["dedup", &example(), "-o", &out]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(message.contains("kept.csv: the name says csv"), "{message}");
    assert!(message.contains("name the output .jsonl"), "{message}");
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    // `neardup dedup ... -o - | head -1`: "Broken pipe" was printed as an error.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    let lines: String = (0..200_000)
        .map(|i| format!("{{\"text\":\"document {i} of many, {}\"}}\n", i * 7))
        .collect();
    std::fs::write(&input, lines).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", &input, "-o", "-", "--method", "exact"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("{\"text\""), "{first}");
    drop(stdout);
    let mut message = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut message)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {message}");
    assert!(!message.contains("Broken pipe"), "{message}");
}

#[cfg(unix)]
#[test]
fn a_fifo_output_with_no_reader_says_it_waits() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = path(dir.path(), "out.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", &example(), "-o", &fifo, "--id-field", "id"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let started = Instant::now();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.contains("out.fifo is a FIFO: waiting for a reader to open it"),
        "{line}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    // A reader comes: the run goes on and ends.
    let kept = std::fs::read_to_string(&fifo).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(kept.lines().count() > 100, "{kept}");
}

#[test]
fn messages_cut_hostile_values_and_say_what_applies() {
    let long = "1".repeat(120_000);
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "out.jsonl");
    let cases: [(&[&str], &str); 5] = [
        (&["--threshold", &long], "(120000 characters)"),
        (
            &["--threshold", "0"],
            "0 (expected a number t with 0 < t <= 1)",
        ),
        (
            &["--threshold", "1.5"],
            "1.5 (expected a number t with 0 < t <= 1)",
        ),
        (
            &["--threshold", "<99999999999999999999999:0.3,0.4"],
            "the length bound \"99999999999999999999999\" is too large",
        ),
        (
            &["--method", "simhash", "--ngram", "<24:2,3"],
            "length rules such as \"<30:2,3\" are taken by minhash only",
        ),
    ];
    let example = example();
    for (args, says) in cases {
        let mut all = vec!["dedup", &example, "-o", &out];
        all.extend_from_slice(args);
        let run = neardup(&all);
        assert!(!run.status.success(), "{says}");
        let message = stderr(&run);
        assert!(message.contains(says), "{says}: {message}");
        assert!(message.len() < 1_000, "{} bytes", message.len());
    }
}
