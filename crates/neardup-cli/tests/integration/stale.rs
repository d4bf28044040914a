//! Issue 28, item 9: the temporary files and folders a killed run leaves (`*.tmp-neardup-*`
//! beside the outputs, `.neardup-tmp-*` spill folders) are removed by the next run that
//! writes there, which says so; a live run's are never touched.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{example, files_in, neardup, path, stderr};

/// Whether `files` hold a spill folder and a temporary output file of the new names.
fn has_temporaries(files: &[String]) -> bool {
    files.iter().any(|f| f.starts_with(".neardup-tmp-"))
        && files.iter().any(|f| f.contains(".tmp-"))
}

/// Starts a spilling `dedup` of standard input writing `kept.txt` and `clusters.jsonl` in
/// `dir`, and waits until its temporary folder and files exist (it then waits for more
/// input).
fn start_spilling_run(dir: &Path) -> (Child, ChildStdin) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "dedup",
            "-",
            "--format",
            "text",
            "--memory-limit",
            "1",
            "-q",
        ])
        .args(["-o", &path(dir, "kept.txt")])
        .args(["--clusters", &path(dir, "clusters.jsonl")])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one line\nanother line\n").unwrap();
    stdin.flush().unwrap();
    let started = Instant::now();
    while !has_temporaries(&files_in(dir)) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(has_temporaries(&files_in(dir)), "{:?}", files_in(dir));
    (child, stdin)
}

/// The names in `dir` that are temporaries (files with `.tmp-` or `.neardup-tmp-` folders).
fn temporaries(dir: &Path) -> Vec<String> {
    (files_in(dir).into_iter())
        .filter(|f| f.contains(".tmp-") || f.starts_with(".neardup-tmp-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn regression_a_killed_runs_temporary_files_are_removed_by_the_next_run() {
    for quiet in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, stdin) = start_spilling_run(dir.path());
        // A spill worth freeing in the folder, as a large run would have.
        let spill = temporaries(dir.path())
            .into_iter()
            .find(|f| f.starts_with(".neardup-tmp-"))
            .unwrap();
        std::fs::write(
            dir.path().join(&spill).join("sketches-big"),
            vec![7u8; 300_000],
        )
        .unwrap();
        child.kill().unwrap(); // SIGKILL: no handler runs.
        child.wait().unwrap();
        drop(stdin);
        let left = temporaries(dir.path());
        assert_eq!(left.len(), 3, "{left:?}");
        // The next run writing into the folder (another output) removes them.
        let (input, out) = (example(), path(dir.path(), "again.jsonl"));
        let mut args = vec!["dedup", input.as_str(), "-o", out.as_str()];
        if quiet {
            args.push("-q");
        }
        let run = neardup(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        assert_eq!(temporaries(dir.path()), Vec::<String>::new());
        let message = stderr(&run);
        if quiet {
            assert!(!message.contains("interrupted run"), "{message}");
            continue;
        }
        for name in &left {
            let line = message.lines().find(|line| line.contains(name.as_str()));
            let line = line.unwrap_or_else(|| panic!("{name} not named in {message}"));
            assert!(
                line.contains("removed") && line.contains("interrupted run"),
                "{line}"
            );
        }
        // The spill folder's line gives the bytes freed.
        let line = message.lines().find(|line| line.contains(&spill)).unwrap();
        assert!(line.contains("(300.0 kB)"), "{line}");
    }
}

#[cfg(unix)]
#[test]
fn a_live_runs_temporary_files_are_not_removed_by_a_concurrent_run() {
    let dir = tempfile::tempdir().unwrap();
    let (child, mut stdin) = start_spilling_run(dir.path());
    let live = temporaries(dir.path());
    // Another run writes into the same folder, in memory and spilling there.
    let example = example();
    for extra in [&[][..], &["--memory-limit", "1"][..]] {
        let out = path(dir.path(), "other.jsonl");
        let mut args = vec!["dedup", example.as_str(), "-o", &out];
        args.extend_from_slice(extra);
        let run = neardup(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        assert!(
            !stderr(&run).contains("interrupted run"),
            "{}",
            stderr(&run)
        );
        assert_eq!(temporaries(dir.path()), live);
    }
    // The first run goes on and ends as it would have.
    stdin.write_all(b"one line\n").unwrap();
    drop(stdin);
    let run = child.wait_with_output().unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let kept = std::fs::read_to_string(path(dir.path(), "kept.txt")).unwrap();
    assert_eq!(kept, "one line\nanother line\n");
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
}
