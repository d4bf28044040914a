//! `dedup --memory-limit`: the spilling path (inputs streamed, sketches in a temporary
//! directory, kept records written by a second read) gives byte-identical outputs to the
//! in-memory path for every method and input kind, and leaves no temporary file after
//! success, error or a signal.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{example, files_in, interrupt, neardup, path, stderr};

/// Runs `dedup` with `args` writing kept, clusters, pairs and stats into `dir` under
/// `prefix`; returns the bytes of the first three and the stats.
fn outputs(dir: &std::path::Path, prefix: &str, args: &[&str]) -> (Vec<Vec<u8>>, Value) {
    let names = ["kept", "clusters.jsonl", "pairs.jsonl", "stats.json"];
    let paths: Vec<String> = (names.iter())
        .map(|name| path(dir, &format!("{prefix}-{name}")))
        .collect();
    let mut all: Vec<&str> = vec!["dedup"];
    all.extend_from_slice(args);
    all.extend([
        "-o",
        &paths[0],
        "--clusters",
        &paths[1],
        "--pairs",
        &paths[2],
        "--stats",
        &paths[3],
        "-q",
    ]);
    let run = neardup(&all);
    assert!(run.status.success(), "{args:?}: {}", stderr(&run));
    let bytes = paths[..3]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let stats = serde_json::from_slice(&std::fs::read(&paths[3]).unwrap()).unwrap();
    (bytes, stats)
}

/// Runs `args` in memory and with a limit of one byte (which forces the spilling path) and
/// checks the outputs are the same.
fn same_both_ways(dir: &std::path::Path, args: &[&str]) {
    let (memory, stats) = outputs(dir, "memory", args);
    assert_eq!(stats["memory_path"], "memory", "{args:?}");
    let mut limited = args.to_vec();
    limited.extend(["--memory-limit", "1"]);
    let (spilled, spill_stats) = outputs(dir, "spill", &limited);
    assert_eq!(spill_stats["memory_path"], "spill", "{args:?}");
    assert!(
        spill_stats["spilled_bytes"].as_u64().unwrap() > 0,
        "{spill_stats}"
    );
    for field in ["documents_in", "kept", "skipped", "skipped_first"] {
        assert_eq!(stats[field], spill_stats[field], "{args:?}: {field}");
    }
    for (name, (a, b)) in ["kept", "clusters", "pairs"]
        .iter()
        .zip(memory.iter().zip(&spilled))
    {
        assert!(a == b, "{args:?}: the {name} outputs differ");
    }
    assert!(
        !files_in(dir).iter().any(|f| f.starts_with(".neardup-tmp")),
        "{:?}",
        files_in(dir)
    );
}

#[test]
fn every_method_gives_the_same_outputs_when_spilling() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    for method in neardup_core::registry::methods() {
        same_both_ways(
            dir.path(),
            &[&input, "--id-field", "id", "--method", method.name],
        );
    }
    same_both_ways(
        dir.path(),
        &[&input, "--cluster", "connected", "--keep", "longest"],
    );
}

/// Without `--clusters` or `--pairs` the spilling path never reads its parked ids back:
/// the kept file is still the in-memory one, and the parked ids leave with the temporary
/// directory.
#[test]
fn spilling_without_reports_keeps_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    let memory = path(dir.path(), "memory.jsonl");
    let spilled = path(dir.path(), "spilled.jsonl");
    let stats = path(dir.path(), "stats.json");
    let run = neardup(&["dedup", &input, "--id-field", "id", "-o", &memory, "-q"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let run = neardup(&[
        "dedup",
        &input,
        "--id-field",
        "id",
        "-o",
        &spilled,
        "--memory-limit",
        "1",
        "--stats",
        &stats,
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stats: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(stats["memory_path"], "spill");
    assert!(std::fs::read(&memory).unwrap() == std::fs::read(&spilled).unwrap());
    let mut files = files_in(dir.path());
    files.sort();
    assert_eq!(files, ["memory.jsonl", "spilled.jsonl", "stats.json"]);
}

#[test]
fn every_input_kind_gives_the_same_outputs_when_spilling() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let texts: Vec<String> = (lines.iter())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Text, CSV with quoted fields, TSV, gzip, two inputs, bad records skipped, CRLF.
    let text = path(dir.path(), "in.txt");
    std::fs::write(&text, texts.join("\n") + "\n").unwrap();
    same_both_ways(dir.path(), &[&text]);
    let csv = path(dir.path(), "in.csv");
    let mut rows = String::from("id,text\n");
    for (i, t) in texts.iter().enumerate() {
        rows.push_str(&format!("r{i},\"{}\"\n", t.replace('"', "\"\"")));
    }
    std::fs::write(&csv, rows).unwrap();
    same_both_ways(dir.path(), &[&csv, "--id-field", "id"]);
    let tsv = path(dir.path(), "in.tsv");
    let rows: String = (texts.iter().enumerate())
        .map(|(i, t)| format!("{i}\t{}\n", t.replace(['\t', '\n'], " ")))
        .collect();
    std::fs::write(&tsv, format!("id\ttext\n{rows}")).unwrap();
    same_both_ways(dir.path(), &[&tsv, "--id-field", "id"]);
    let gz = path(dir.path(), "in.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(std::fs::read(example()).unwrap().as_slice())
        .unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    same_both_ways(dir.path(), &[&gz]);
    let half = lines.len() / 2;
    let (a, b) = (path(dir.path(), "a.jsonl"), path(dir.path(), "b.jsonl"));
    std::fs::write(&a, lines[..half].join("\r\n") + "\r\n{broken\n\n").unwrap();
    std::fs::write(&b, lines[half..].join("\n") + "\n{\"no\": 1}\n").unwrap();
    same_both_ways(dir.path(), &[&a, &b, "--on-error", "skip"]);
    let skip = "--on-error=skip";
    // Repeated ids, skipped: the later reads of the spilling path replay the first one
    // (records met again by input and line) instead of checking ids again.
    let repeated = path(dir.path(), "repeated.jsonl");
    let mut doubled = lines.clone();
    doubled.insert(3, lines[0].clone());
    doubled.insert(10, String::new());
    doubled.push(lines[5].clone());
    doubled.push(lines[7].replace("\"text\"", "\"body\""));
    std::fs::write(&repeated, doubled.join("\n") + "\n").unwrap();
    same_both_ways(dir.path(), &[&repeated, "--id-field", "id", skip]);
    same_both_ways(dir.path(), &[&b, "--against", &a, skip]);
    same_both_ways(
        dir.path(),
        &[&b, "--against", &a, "--within", "--id-field", "id", skip],
    );
}

#[test]
fn standard_input_is_copied_and_gives_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let input = std::fs::read(example()).unwrap();
    let run = |limit: &[&str]| -> Vec<u8> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["dedup", "-", "--format", "jsonl", "-o", "-", "-q"])
            .args(limit)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        output.stdout
    };
    let spilled = run(&["--memory-limit", "1G"]);
    assert_eq!(run(&[]), spilled);
    assert!(!spilled.is_empty());
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[test]
fn a_bad_record_fails_the_spilling_run_as_it_fails_in_memory_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    std::fs::write(&input, b"{\"text\": \"a\"}\n{\"text\": 5}\n").unwrap();
    let out = path(dir.path(), "out.jsonl");
    let memory = neardup(&["dedup", &input, "-o", &out]);
    let spilled = neardup(&["dedup", &input, "-o", &out, "--memory-limit", "1"]);
    assert!(!spilled.status.success());
    assert_eq!(stderr(&memory), stderr(&spilled));
    assert!(
        stderr(&spilled).contains("in.jsonl:2"),
        "{}",
        stderr(&spilled)
    );
    assert_eq!(files_in(dir.path()), ["in.jsonl"]);
}

#[test]
fn an_unusable_temp_dir_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "out.jsonl");
    let missing = path(dir.path(), "no/such/dir");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--memory-limit",
        "1",
        "--temp-dir",
        &missing,
    ]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(
        message.contains("--temp-dir") && message.contains("no/such/dir"),
        "{message}"
    );
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
    // A temporary directory given explicitly is used and left empty.
    let temp = path(dir.path(), "tmp");
    std::fs::create_dir(&temp).unwrap();
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--memory-limit",
        "1",
        "--temp-dir",
        &temp,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(files_in(std::path::Path::new(&temp)), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn a_signal_while_spilling_removes_the_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "kept.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", "-", "--format", "text", "-o", &out, "-q"])
        .args(["--memory-limit", "1"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run copies its standard input into its temporary directory and waits for more.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one line\nanother line\n").unwrap();
    let started = std::time::Instant::now();
    let ready = |files: &[String]| files.iter().any(|f| f.starts_with(".neardup-tmp-"));
    while !ready(&files_in(dir.path())) && started.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(ready(&files_in(dir.path())), "{:?}", files_in(dir.path()));
    interrupt(&child);
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.code(), Some(130));
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

/// Runs `dedup` with `args` (outputs in `dir` under `prefix`), with
/// `NEARDUP_FAIL_AFTER_STAGE=stage` when given: a run that stops right after saving that
/// stage's checkpoint, as a run killed there.
fn run_stopping(
    dir: &std::path::Path,
    prefix: &str,
    args: &[&str],
    stage: Option<&str>,
) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
    command.arg("dedup").args(args).args([
        "-o",
        &path(dir, &format!("{prefix}-kept")),
        "--clusters",
        &path(dir, &format!("{prefix}-clusters.jsonl")),
        "--pairs",
        &path(dir, &format!("{prefix}-pairs.jsonl")),
        "--stats",
        &path(dir, &format!("{prefix}-stats.json")),
        "-q",
    ]);
    if let Some(stage) = stage {
        command.env("NEARDUP_FAIL_AFTER_STAGE", stage);
    }
    command.output().unwrap()
}

fn resume_dirs(dir: &std::path::Path) -> Vec<String> {
    (files_in(dir).into_iter())
        .filter(|f| f.starts_with(".neardup-resume-"))
        .collect()
}

#[test]
fn a_resumed_run_gives_the_same_outputs_as_one_that_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let input = example();
    // minhash learns from the corpus (max-df, boilerplate-df): two checkpoints; exact and
    // simhash (no tfidf) one.
    for (method, stages) in [
        ("minhash", &["corpus", "sketch"][..]),
        ("exact", &["sketch"][..]),
        ("simhash", &["sketch"][..]),
    ] {
        let args = [input.as_str(), "--id-field", "id", "--method", method];
        let (expected, _) = outputs(dir.path(), &format!("{method}-memory"), &args);
        for stage in stages {
            let mut resumable = args.to_vec();
            resumable.extend(["--memory-limit", "1", "--resume"]);
            let prefix = format!("{method}-{stage}");
            let stopped = run_stopping(dir.path(), &prefix, &resumable, Some(stage));
            assert!(!stopped.status.success(), "{method} {stage}");
            assert!(stderr(&stopped).contains(stage), "{}", stderr(&stopped));
            // Nothing that looks like an output; the checkpoints kept.
            assert!(!dir.path().join(format!("{prefix}-kept")).exists());
            let work = resume_dirs(dir.path());
            assert_eq!(work.len(), 1, "{work:?}");
            let checkpoint = format!("{stage}.ckpt");
            assert!(
                files_in(&dir.path().join(&work[0])).contains(&checkpoint),
                "{:?}",
                files_in(&dir.path().join(&work[0]))
            );
            let again = run_stopping(dir.path(), &prefix, &resumable, None);
            assert!(again.status.success(), "{}", stderr(&again));
            let stats: Value = serde_json::from_slice(
                &std::fs::read(dir.path().join(format!("{prefix}-stats.json"))).unwrap(),
            )
            .unwrap();
            assert_eq!(stats["resumed_from"], *stage, "{stats}");
            assert_eq!(stats["memory_path"], "spill");
            for (name, expected) in ["kept", "clusters.jsonl", "pairs.jsonl"]
                .iter()
                .zip(&expected)
            {
                let got = std::fs::read(dir.path().join(format!("{prefix}-{name}"))).unwrap();
                assert!(got == *expected, "{method} {stage}: {name} differs");
            }
            assert_eq!(resume_dirs(dir.path()), Vec::<String>::new());
        }
    }
}

#[test]
fn a_changed_input_or_option_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    std::fs::copy(example(), &input).unwrap();
    let args = [input.as_str(), "--memory-limit", "1", "--resume"];
    let stopped = run_stopping(dir.path(), "a", &args, Some("sketch"));
    assert!(!stopped.status.success());
    // The input grows by one record: the checkpoints are not taken up.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    file.write_all(b"{\"id\": \"new\", \"text\": \"a record added after the stop\"}\n")
        .unwrap();
    drop(file);
    let again = run_stopping(dir.path(), "a", &args, None);
    assert!(again.status.success(), "{}", stderr(&again));
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("a-stats.json")).unwrap()).unwrap();
    assert_eq!(stats["resumed_from"], Value::Null, "{stats}");
    let why = stats["resume_discarded"].as_str().unwrap();
    assert!(why.contains("in.jsonl") && why.contains("size="), "{why}");
    // Another option: the same.
    let stopped = run_stopping(dir.path(), "b", &args, Some("sketch"));
    assert!(!stopped.status.success());
    let mut other = args.to_vec();
    other.extend(["--threshold", "0.5"]);
    let again = run_stopping(dir.path(), "b", &other, None);
    assert!(again.status.success(), "{}", stderr(&again));
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("b-stats.json")).unwrap()).unwrap();
    assert_eq!(stats["resumed_from"], Value::Null, "{stats}");
    assert!(stats["resume_discarded"]
        .as_str()
        .unwrap()
        .contains("method"));
    assert_eq!(resume_dirs(dir.path()), Vec::<String>::new());
}

/// Issue 28, item 14: a resumed run took up its checkpoints after an edit in the middle of an
/// input that kept its size and had its modification time restored (only the first and last
/// MiB were hashed), and wrote the edited record by the old one's decision.
#[test]
fn regression_a_same_size_edit_in_the_middle_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    // 30,000 records of one length, about 2.9 MB: the middle is more than a MiB from either
    // end.
    let mut state: u64 = 1;
    let mut word = || {
        state = (state.wrapping_mul(6364136223846793005)).wrapping_add(1442695040888963407);
        format!("w{:05}", (state >> 33) % 100_000)
    };
    let texts: Vec<String> = (0..30_000)
        .map(|_| (0..8).map(|_| word()).collect::<Vec<_>>().join(" "))
        .collect();
    let record = |i: usize, text: &str| format!("{{\"id\": \"d{i:05}\", \"text\": \"{text}\"}}\n");
    let records: Vec<String> = (texts.iter().enumerate())
        .map(|(i, text)| record(i, text))
        .collect();
    std::fs::write(&input, records.concat()).unwrap();
    let args = [
        input.as_str(),
        "--id-field",
        "id",
        "--method",
        "exact",
        "--memory-limit",
        "1",
        "--resume",
    ];
    let stopped = run_stopping(dir.path(), "a", &args, Some("sketch"));
    assert!(!stopped.status.success());
    // The middle record becomes a copy of the first one's text: same length, same size.
    let middle = 15_000;
    let offset: usize = records[..middle].iter().map(String::len).sum();
    let copy = record(middle, &texts[0]);
    assert_eq!(copy.len(), records[middle].len());
    let modified = std::fs::metadata(&input).unwrap().modified().unwrap();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&input)
        .unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset as u64)).unwrap();
    file.write_all(copy.as_bytes()).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);
    assert_eq!(
        std::fs::metadata(&input).unwrap().modified().unwrap(),
        modified
    );
    let again = run_stopping(dir.path(), "a", &args, None);
    assert!(again.status.success(), "{}", stderr(&again));
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("a-stats.json")).unwrap()).unwrap();
    assert_eq!(stats["resumed_from"], Value::Null, "{stats}");
    let why = stats["resume_discarded"].as_str().unwrap();
    assert!(why.contains("in.jsonl") && why.contains("xxh3="), "{why}");
    // The edited record is a duplicate of the first and is removed.
    let kept = std::fs::read_to_string(dir.path().join("a-kept")).unwrap();
    assert_eq!(kept.lines().count(), records.len() - 1);
    assert!(!kept.contains("\"d15000\""));
}

#[test]
fn resume_refuses_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "kept.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", "-", "--format", "text", "-o", &out, "-q"])
        .args(["--memory-limit", "1", "--resume"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"one\ntwo\n")
        .unwrap();
    let run = child.wait_with_output().unwrap();
    assert!(!run.status.success());
    let message = String::from_utf8_lossy(&run.stderr);
    assert!(
        message.contains("standard input") && message.contains("resume"),
        "{message}"
    );
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}
