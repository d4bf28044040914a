//! Regression tests of issue 6: outputs never replace what is not a regular file, never
//! overwrite an input or each other, are committed together, and leave nothing behind when the
//! run is interrupted; options out of range are refused.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{example, files_in, neardup, path, stderr};

/// Runs `program args` and says whether it succeeded (a missing program counts as failure).
fn try_run(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .status()
        .is_ok_and(|status| status.success())
}

/// The kept lines of the example at the defaults, for comparing outputs written elsewhere.
fn expected_kept(dir: &Path) -> Vec<u8> {
    let out = path(dir, "expected.jsonl");
    let run = neardup(&["dedup", &example(), "-o", &out, "--quiet"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(out).unwrap();
    bytes
}

#[cfg(unix)]
#[test]
fn regression_fifo_output_is_written_in_place_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_kept(dir.path());
    let fifo = path(dir.path(), "kept.fifo");
    if !try_run("mkfifo", &[&fifo]) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    let clusters = path(dir.path(), "clusters.jsonl");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &fifo,
        "--clusters",
        &clusters,
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    // Checked before joining the reader: had the FIFO been replaced, the reader would wait on
    // it for ever.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO is still a FIFO");
    assert_eq!(
        reader.join().unwrap(),
        expected,
        "the FIFO's reader gets the output"
    );
    assert_eq!(files_in(dir.path()), ["clusters.jsonl", "kept.fifo"]);
}

#[cfg(unix)]
#[test]
fn regression_device_output_is_not_replaced_by_a_file() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    // A null device of our own (needs root, as CI has): the machine's /dev/null is never risked.
    let device = path(dir.path(), "null");
    if !try_run("mknod", &["-m", "666", &device, "c", "1", "3"]) {
        eprintln!("skipped: cannot create a device node here (not root)");
        return;
    }
    let clusters = path(dir.path(), "clusters.jsonl");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &device,
        "--clusters",
        &clusters,
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let kind = std::fs::symlink_metadata(&device).unwrap().file_type();
    assert!(kind.is_char_device(), "the device is still a device");
    assert_eq!(files_in(dir.path()), ["clusters.jsonl", "null"]);
}

#[cfg(unix)]
#[test]
fn regression_symlink_output_replaces_its_target_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_kept(dir.path());
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let target = path(dir.path(), "data/kept.jsonl");
    std::fs::write(&target, b"old\n").unwrap();
    let link = path(dir.path(), "link.jsonl");
    std::os::unix::fs::symlink("data/kept.jsonl", &link).unwrap();
    let run = neardup(&["dedup", &example(), "-o", &link, "-q"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), expected);
    assert_eq!(files_in(&dir.path().join("data")), ["kept.jsonl"]);
}

#[test]
fn regression_dev_stdout_output_streams_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_kept(dir.path());
    let run = neardup(&["dedup", &example(), "-o", "/dev/stdout", "-q"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(run.stdout, expected);
}

#[test]
fn regression_an_output_that_is_an_input_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "x.jsonl");
    std::fs::copy(example(), &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let dotted = format!("{}/./x.jsonl", dir.path().display());
    let out = path(dir.path(), "out.jsonl");
    for args in [
        vec!["-o", out.as_str(), "--clusters", input.as_str()],
        vec!["-o", input.as_str()],
        vec!["-o", dotted.as_str()],
        vec!["-o", out.as_str(), "--stats", dotted.as_str()],
    ] {
        let mut all = vec!["dedup", input.as_str()];
        all.extend(&args);
        let run = neardup(&all);
        assert!(!run.status.success(), "{args:?} must fail");
        assert!(stderr(&run).contains("is the input"), "{}", stderr(&run));
        assert_eq!(std::fs::read(&input).unwrap(), original, "{args:?}");
    }
    assert_eq!(files_in(dir.path()), ["x.jsonl"]);
}

#[test]
fn regression_two_outputs_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let y = path(dir.path(), "y");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &y,
        "--clusters",
        &y,
        "--pairs",
        &y,
        "--stats",
        &y,
    ]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("are the same file"),
        "{}",
        stderr(&run)
    );
    let run = neardup(&["dedup", &example(), "-o", "-", "--clusters", "-"]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("both write to standard output"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn regression_other_subcommands_refuse_an_input_as_output() {
    let dir = tempfile::tempdir().unwrap();
    let clusters = path(dir.path(), "clusters.jsonl");
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        "/dev/null",
        "--clusters",
        &clusters,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let original = std::fs::read(&clusters).unwrap();
    let corpus = path(dir.path(), "y.jsonl");
    let truth_dotted = format!("{}/./y.jsonl", dir.path().display());
    let example = example();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "eval",
            "--truth",
            &clusters,
            "--predicted",
            &clusters,
            "-o",
            &clusters,
        ],
        vec!["report", &example, "--clusters", &clusters, "-o", &clusters],
        vec!["tune", &example, "--truth", &clusters, "-o", &clusters],
        vec!["synth", &example, "-o", &corpus, "--truth", &truth_dotted],
    ];
    for args in cases {
        let run = neardup(&args);
        assert!(!run.status.success(), "{args:?} must fail");
        let message = stderr(&run);
        assert!(
            message.contains("is the input") || message.contains("are the same file"),
            "{args:?}: {message}"
        );
        assert_eq!(std::fs::read(&clusters).unwrap(), original, "{args:?}");
    }
    assert_eq!(files_in(dir.path()), ["clusters.jsonl"]);
}

#[cfg(target_os = "linux")]
#[test]
fn regression_a_failing_output_leaves_every_old_output_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "kept.jsonl");
    let clusters = path(dir.path(), "clusters.jsonl");
    std::fs::write(&out, b"old kept\n").unwrap();
    std::fs::write(&clusters, b"old clusters\n").unwrap();
    // Writing the statistics fails: the disk is full.
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        &out,
        "--clusters",
        &clusters,
        "--stats",
        "/dev/full",
        "-q",
    ]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("/dev/full"), "{}", stderr(&run));
    assert_eq!(std::fs::read(&out).unwrap(), b"old kept\n");
    assert_eq!(std::fs::read(&clusters).unwrap(), b"old clusters\n");
    assert_eq!(files_in(dir.path()), ["clusters.jsonl", "kept.jsonl"]);
}

#[cfg(unix)]
#[test]
fn regression_sigterm_and_sigint_leave_no_temporary_file() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let out = path(dir.path(), "kept.txt");
        let clusters = path(dir.path(), "clusters.jsonl");
        std::fs::write(&out, b"old\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args([
                "dedup",
                "-",
                "--format",
                "text",
                "-o",
                &out,
                "--clusters",
                &clusters,
                "-q",
            ])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The run waits on its standard input with both temporary files created.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"one line\nanother line\n").unwrap();
        let started = Instant::now();
        while files_in(dir.path()).len() < 3 && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(files_in(dir.path()).len(), 3, "{:?}", files_in(dir.path()));
        assert!(try_run("kill", &[signal, &child.id().to_string()]));
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_eq!(files_in(dir.path()), ["kept.txt"], "{signal}");
        assert_eq!(std::fs::read(&out).unwrap(), b"old\n");
    }
}

#[test]
fn regression_threads_beyond_the_limit_are_refused() {
    let run = neardup(&["dedup", &example(), "-o", "-", "--threads", "100000"]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("--threads 100000: at most 1024"),
        "{}",
        stderr(&run)
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn regression_skipping_every_record_fails_and_quiet_still_reports_skips() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    std::fs::write(&input, b"{\"body\": \"a\"}\n{\"body\": \"b\"}\n").unwrap();
    let out = path(dir.path(), "out.jsonl");
    let run = neardup(&["dedup", &input, "-o", &out, "--on-error", "skip", "-q"]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("every record was skipped (2 bad records"),
        "{}",
        stderr(&run)
    );
    assert_eq!(files_in(dir.path()), ["in.jsonl"]);
    std::fs::write(&input, b"{\"text\": \"a\"}\n{\"body\": \"b\"}\n").unwrap();
    let run = neardup(&["dedup", &input, "-o", &out, "--on-error", "skip", "-q"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("skipped 1 bad records"),
        "{}",
        stderr(&run)
    );
}

#[test]
fn regression_minhash_options_with_exact_are_warned_about() {
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        "/dev/null",
        "--method",
        "exact",
        "--threshold",
        "0.9",
        "--ngram",
        "4",
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(
        message.contains("warning: --threshold, --ngram not used by --method exact"),
        "{message}"
    );
}

/// A truth for the example: each document its own cluster, under its `id`.
fn example_truth(dir: &Path) -> String {
    let truth = path(dir, "truth.jsonl");
    let rows: String = std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .enumerate()
        .map(|(index, line)| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            format!(
                "{}\n",
                serde_json::json!({"id": row["id"], "cluster": index})
            )
        })
        .collect();
    std::fs::write(&truth, rows).unwrap();
    truth
}

#[test]
fn regression_eval_and_tune_refuse_ids_that_do_not_match_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let truth = example_truth(dir.path());
    let clusters = path(dir.path(), "clusters.jsonl");
    // Without --id-field the ids are record numbers, which the truth does not have.
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        "/dev/null",
        "--clusters",
        &clusters,
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let run = neardup(&["eval", "--truth", &truth, "--predicted", &clusters]);
    assert!(
        !run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    assert!(
        stderr(&run).contains("only 0 of the 227 ids"),
        "{}",
        stderr(&run)
    );
    assert!(stderr(&run).contains("--id-field"), "{}", stderr(&run));
    let run = neardup(&[
        "tune",
        &example(),
        "--truth",
        &truth,
        "--thresholds",
        "0.5",
        "--ngrams",
        "3",
    ]);
    assert!(
        !run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    assert!(
        stderr(&run).contains("only 0 of the 227 ids"),
        "{}",
        stderr(&run)
    );
    // With the ids, both work.
    let run = neardup(&[
        "dedup",
        &example(),
        "-o",
        "/dev/null",
        "--clusters",
        &clusters,
        "--id-field",
        "id",
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let run = neardup(&["eval", "--truth", &truth, "--predicted", &clusters]);
    assert!(run.status.success(), "{}", stderr(&run));
}

/// Issue 28, item 4: an output that is a file an option reads (a list, a table, a lexicon,
/// the truth, the stats) is refused like one that is an input, for every subcommand. The
/// file stays byte for byte, and the message names the output's flag, the flag that reads
/// the file, and the path.
#[test]
fn regression_an_output_over_a_file_an_option_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let example = example();
    let file = path(dir.path(), "given.txt");
    let truth = example_truth(dir.path());
    let clusters = path(dir.path(), "clusters.jsonl");
    let run = neardup(&[
        "dedup",
        &example,
        "-o",
        "/dev/null",
        "--clusters",
        &clusters,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let simhash_tfidf = [
        "--method",
        "simhash",
        "--weights",
        "tfidf",
        "--tokenizer",
        "word",
        "--ngram",
        "1",
    ];
    // (arguments, the output's flag, the reading flag, the file both name)
    let mut cases: Vec<(Vec<&str>, &str, &str, &str)> = Vec::new();
    fn dedup<'a>(example: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["dedup", example, "--id-field", "id", "-q"];
        args.extend_from_slice(extra);
        args
    }
    let list = file.as_str();
    for output in [
        "--boilerplate-out",
        "-o",
        "--clusters",
        "--pairs",
        "--stats",
    ] {
        let mut args = dedup(&example, &["--boilerplate-file", list, output, list]);
        if output != "-o" {
            args.extend(["-o", "/dev/null"]);
        }
        let flag = if output == "-o" { "--output" } else { output };
        cases.push((args, flag, "--boilerplate-file", list));
    }
    for output in ["--save-lexicon", "-o"] {
        let mut args = dedup(
            &example,
            &["--method", "imatch", "--lexicon-file", list, output, list],
        );
        if output != "-o" {
            args.extend(["-o", "/dev/null"]);
        }
        let flag = if output == "-o" { "--output" } else { output };
        cases.push((args, flag, "--lexicon-file", list));
    }
    let mut idf = dedup(&example, &simhash_tfidf);
    idf.extend(["--idf-file", list, "-o", list]);
    cases.push((idf, "--output", "--idf-file", list));
    cases.push((
        dedup(
            &example,
            &["--method", "simhash", "--stopwords-file", list, "-o", list],
        ),
        "--output",
        "--stopwords-file",
        list,
    ));
    cases.push((
        dedup(
            &example,
            &["-o", "/dev/null", "--against", list, "--stats", list],
        ),
        "--stats",
        "--against",
        list,
    ));
    for option in ["--stopwords-file", "--idf-file"] {
        let args = vec![
            "fingerprint",
            example.as_str(),
            option,
            list,
            "-o",
            list,
            "-q",
        ];
        cases.push((args, "--output", option, list));
    }
    let tune = vec![
        "tune",
        example.as_str(),
        "--id-field",
        "id",
        "--truth",
        truth.as_str(),
        "--thresholds",
        "0.5",
        "--ngrams",
        "3",
        "--boilerplate-file",
        list,
        "-o",
        list,
    ];
    cases.push((tune, "--output", "--boilerplate-file", list));
    let tune_truth = vec!["tune", example.as_str(), "--truth", &truth, "-o", &truth];
    cases.push((tune_truth, "--output", "--truth", &truth));
    let eval = vec![
        "eval",
        "--truth",
        &truth,
        "--predicted",
        &clusters,
        "-o",
        &truth,
    ];
    cases.push((eval, "--output", "--truth", &truth));
    let stats = path(dir.path(), "stats.json");
    let report = vec![
        "report",
        example.as_str(),
        "--clusters",
        &clusters,
        "--stats",
        &stats,
        "-o",
        &stats,
    ];
    cases.push((report, "--output", "--stats", &stats));
    let report = vec![
        "report",
        example.as_str(),
        "--clusters",
        &clusters,
        "-o",
        &clusters,
    ];
    cases.push((report, "--output", "--clusters", &clusters));
    for (args, output, reader, target) in cases {
        // A file worth keeping: a boilerplate line, a lexicon word, an IDF row, a stopword.
        std::fs::write(&file, "本文来源于网络 1.5\n").unwrap();
        std::fs::write(&stats, "{\"method\": {\"name\": \"minhash\"}}\n").unwrap();
        let before = std::fs::read(target).unwrap();
        let run = neardup(&args);
        let message = stderr(&run);
        assert!(!run.status.success(), "{args:?} must fail");
        assert_eq!(std::fs::read(target).unwrap(), before, "{args:?}");
        for part in [output, reader, target] {
            assert!(message.contains(part), "{args:?}: {part} not in {message}");
        }
        assert!(
            message.contains("refusing to overwrite"),
            "{args:?}: {message}"
        );
    }
    let mut left = files_in(dir.path());
    left.retain(|name| name.contains(".tmp"));
    assert!(left.is_empty(), "{left:?}");
}
