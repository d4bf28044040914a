//! Integration tests of the readers through `neardup dedup`: ids, quoting, line endings, byte
//! order marks, limits and I/O messages (regressions of issue 6).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{json_lines, neardup, path, stderr};

/// Runs `neardup dedup input -o output --quiet` with `extra` arguments.
fn dedup(input: &str, output: &str, extra: &[&str]) -> Output {
    let mut args = vec!["dedup", input, "-o", output, "--quiet"];
    args.extend_from_slice(extra);
    neardup(&args)
}

#[test]
fn duplicate_ids_are_bad_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    let data = "{\"id\":\"a\",\"text\":\"the first document about cats\"}\n\
                {\"id\":\"b\",\"text\":\"a second document about dogs\"}\n\
                {\"id\":\"a\",\"text\":\"the first document about cats\"}\n";
    std::fs::write(&input, data).unwrap();
    let (out, clusters) = (path(dir.path(), "out.jsonl"), path(dir.path(), "c.jsonl"));
    let run = dedup(&input, &out, &["--id-field", "id", "--clusters", &clusters]);
    assert!(!run.status.success());
    let expected = format!("{input}:3: duplicate id \"a\" (field \"id\"): first seen at {input}:1");
    assert!(stderr(&run).contains(&expected), "{}", stderr(&run));

    let stats = path(dir.path(), "stats.json");
    let extra = [
        "--id-field",
        "id",
        "--clusters",
        &clusters,
        "--on-error",
        "skip",
    ];
    let run = dedup(&input, &out, &[&extra[..], &["--stats", &stats]].concat());
    assert!(run.status.success(), "{}", stderr(&run));
    let ids: Vec<Value> = json_lines(&clusters)
        .into_iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["skipped"], 1);
}

#[test]
fn numeric_ids_keep_their_digits() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.jsonl");
    let data = "{\"id\":12345678901234567890123,\"text\":\"same text here\"}\n\
                {\"id\":12345678901234567890124,\"text\":\"same text here\"}\n\
                {\"id\":-0,\"text\":\"another one\"}\n";
    std::fs::write(&input, data).unwrap();
    let (out, clusters) = (path(dir.path(), "out.jsonl"), path(dir.path(), "c.jsonl"));
    let run = dedup(&input, &out, &["--id-field", "id", "--clusters", &clusters]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows = std::fs::read_to_string(&clusters).unwrap();
    let rows: Vec<&str> = rows.lines().collect();
    assert!(
        rows[0].starts_with("{\"id\":12345678901234567890123,\"cluster\":12345678901234567890123,"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("{\"id\":12345678901234567890124,\"cluster\":12345678901234567890123,"),
        "{}",
        rows[1]
    );
    assert!(rows[2].starts_with("{\"id\":-0,"), "{}", rows[2]);
}

#[test]
fn unterminated_csv_quote_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.csv");
    std::fs::write(&input, "id,text\n1,one\n2,\"two\n3,three\n").unwrap();
    let out = path(dir.path(), "out.csv");
    let run = dedup(&input, &out, &[]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains(&format!(
            "{input}:3: the quoted field opened at line 3 is never closed"
        )),
        "{}",
        stderr(&run)
    );
    let run = dedup(&input, &out, &["--on-error", "skip"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "id,text\n1,one\n");
}

#[test]
fn crlf_lines_and_byte_order_marks_come_out_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (path(dir.path(), "a.jsonl"), path(dir.path(), "b.jsonl"));
    std::fs::write(
        &first,
        "\u{feff}{\"text\":\"alpha beta gamma\"}\r\n{\"text\":\"delta\"}\r\n",
    )
    .unwrap();
    std::fs::write(&second, "\u{feff}{\"text\":\"epsilon zeta\"}\n").unwrap();
    let out = path(dir.path(), "out.jsonl");
    let run = neardup(&["dedup", &first, &second, "-o", &out, "--quiet"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        b"{\"text\":\"alpha beta gamma\"}\r\n{\"text\":\"delta\"}\r\n{\"text\":\"epsilon zeta\"}\n"
    );
}

#[test]
fn strip_html_keeps_a_less_than_sign_that_opens_no_tag() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.txt");
    std::fs::write(&input, "if x < 5 and y > 3 then stop\nif x 3 then stop\n").unwrap();
    let out = path(dir.path(), "out.txt");
    let run = dedup(&input, &out, &["--strip-html", "--method", "exact"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);
}

#[test]
fn os_error_text_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "out.jsonl");
    let missing = path(dir.path(), "missing.jsonl");
    let run = dedup(&missing, &out, &[]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert_eq!(message.matches("os error 2").count(), 1, "{message}");
    assert!(message.contains("missing.jsonl: "), "{message}");
}

#[cfg(unix)]
#[test]
fn max_doc_bytes_fails_on_an_endless_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "out.txt");
    let args = [
        "dedup",
        "/dev/zero",
        "--format",
        "text",
        "-o",
        &out,
        "--quiet",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .args(["--max-doc-bytes", "1000000"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // A generous bound for a slow machine: before the fix the run never ended.
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("neardup kept reading /dev/zero");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("/dev/zero:1: record exceeds --max-doc-bytes 1000000"),
        "{}",
        stderr(&output)
    );
}

/// An input that can be read only once (a FIFO, a process substitution's `/dev/fd/N`) is read
/// whole, on the in-memory path, on the streamed path and with a method that reads its
/// corpus twice: it keeps what the same file keeps. Before, the memory estimate's sample
/// consumed it, and the run said `0 documents` and succeeded.
#[cfg(unix)]
#[test]
fn regression_a_fifo_or_a_descriptor_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let expected_out = path(dir.path(), "expected.jsonl");
    let variants: [&[&str]; 4] = [
        &[],
        &["--id-field", "id"],
        &["--memory-limit", "64M"],
        &[
            "--method",
            "simhash",
            "--id-field",
            "id",
            "--memory-limit",
            "64M",
        ],
    ];
    for extra in variants {
        let run = dedup(&crate::util::example(), &expected_out, extra);
        assert!(run.status.success(), "{}", stderr(&run));
        let expected = std::fs::read_to_string(&expected_out).unwrap();
        assert!(
            expected.lines().count() > 100,
            "the example keeps its documents"
        );

        let fifo = path(dir.path(), "in.jsonl");
        let _ = std::fs::remove_file(&fifo);
        if !Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::copy(crate::util::example(), fifo).unwrap())
        };
        let out = path(dir.path(), "out.jsonl");
        let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
        command
            .args(["dedup", &fifo, "-o", &out, "--quiet"])
            .args(extra);
        // A second open of the FIFO would wait for a writer forever.
        let run = within_a_minute(command);
        writer.join().unwrap();
        assert!(run.status.success(), "{extra:?}: {}", stderr(&run));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            expected,
            "FIFO, {extra:?}"
        );

        let Ok(bash) = Command::new("bash").args(["-c", "true"]).status() else {
            eprintln!("skipped: bash is not available");
            continue;
        };
        assert!(bash.success());
        let command = format!(
            "\"$0\" dedup <(cat \"$1\") --format jsonl -o \"$2\" --quiet {}",
            extra.join(" ")
        );
        let mut bash = Command::new("bash");
        bash.args(["-c", &command, env!("CARGO_BIN_EXE_neardup")])
            .args([crate::util::example(), out.clone()]);
        let run = within_a_minute(bash);
        assert!(run.status.success(), "{extra:?}: {}", stderr(&run));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            expected,
            "<(cat), {extra:?}"
        );
    }
}

/// The output of `command`, killed and failed if it runs for more than a minute.
fn within_a_minute(mut command: Command) -> Output {
    let mut child = (command.stdout(Stdio::piped()).stderr(Stdio::piped()))
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{command:?} ran for more than a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
