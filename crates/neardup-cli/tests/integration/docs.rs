//! The documentation, run: every `console` block of README.md and docs/*.md, and the README's
//! quick start, so that no command or printed output quoted there can drift (issue 46).
//!
//! A `console` block is a shell session:
//!
//! - `$ COMMAND` runs a command in `bash` (a line ending in `\` continues on the next);
//! - the lines under it, up to the next `$`, are what it prints (standard output and error
//!   together), compared line by line: `...` alone on a line stands for any lines, and `[..]`
//!   inside a line for any text (times, sizes: what varies from run to run);
//! - a command ending in `&` runs in the background (the server) until the file's session
//!   ends or the next such command starts (which stops it first, as a user would); the next
//!   command waits until it prints `serving http://`;
//! - a non-zero exit status is a failure, unless the expected output ends with the line
//!   `? N` (the status it must exit with).
//!
//! The blocks of one file run in order in one temporary folder holding a copy of
//! `examples/`, with the `neardup` under test first on `PATH`, no `NEARDUP_*` variable set
//! (as a newcomer's shell) but `NEARDUP_URL` and `NEARDUP_LISTEN`, which point the client and
//! the server at a free port, and port 8080 replaced by that port in commands.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One command of a session and what it must print.
#[derive(Debug)]
struct Step {
    /// Where it is written: `README.md:52`.
    at: String,
    command: String,
    expected: Vec<String>,
    /// The exit status it must end with.
    status: i32,
}

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `console` blocks of a Markdown text, as steps.
fn sessions(name: &str, text: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut inside = false;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((number, line)) = lines.next() {
        let fence = line.trim_start();
        if fence.starts_with("```") {
            inside = !inside && fence.trim_start_matches('`').trim() == "console";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            let mut command = command.to_owned();
            // Kept as written: bash reads `\` and a line break as a continuation.
            while command.ends_with('\\') {
                let (_, next) = lines.next().expect("a continued command goes on");
                command.push('\n');
                command.push_str(next);
            }
            steps.push(Step {
                at: format!("{name}:{}", number + 1),
                command,
                expected: Vec::new(),
                status: 0,
            });
        } else {
            let step = steps
                .last_mut()
                .unwrap_or_else(|| panic!("{name}:{}: output before any `$ ` command", number + 1));
            match line.strip_prefix("? ").map(str::parse::<i32>) {
                Some(Ok(status)) => step.status = status,
                _ => step.expected.push(line.to_owned()),
            }
        }
    }
    steps
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (index, part) in parts.iter().enumerate() {
        if index + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `lines` match `patterns`, where a `...` pattern stands for any lines.
fn lines_match(patterns: &[String], lines: &[&str]) -> bool {
    match patterns.split_first() {
        None => lines.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..]))
        }
        Some((first, rest)) => {
            lines.first().is_some_and(|line| line_matches(first, line))
                && lines_match(rest, &lines[1..])
        }
    }
}

/// A folder laid out as a newcomer's clone: `examples/` copied, `neardup` on `PATH`.
struct Sandbox {
    dir: tempfile::TempDir,
    path: String,
    port: u16,
    background: Vec<Child>,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let examples = dir.path().join("examples");
        std::fs::create_dir(&examples).unwrap();
        for entry in std::fs::read_dir(root().join("examples")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), examples.join(entry.file_name())).unwrap();
        }
        let binary = Path::new(env!("CARGO_BIN_EXE_neardup"));
        let path = format!(
            "{}:{}",
            binary.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Sandbox {
            dir,
            path,
            port,
            background: Vec::new(),
        }
    }

    /// `bash -c command` in the sandbox, as a newcomer's shell would run it.
    fn shell(&self, command: &str) -> Command {
        let command = command.replace(":8080", &format!(":{}", self.port));
        // The quick start builds and runs the binary with cargo; the test runs the one built.
        let command = command.replace("cargo run --release -p neardup-cli --", "neardup");
        let mut shell = Command::new("bash");
        shell.arg("-c").arg(command).current_dir(self.dir.path());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("NEARDUP_") {
                shell.env_remove(name);
            }
        }
        shell
            .env("PATH", &self.path)
            .env("NEARDUP_URL", format!("http://127.0.0.1:{}", self.port))
            .env("NEARDUP_LISTEN", format!("127.0.0.1:{}", self.port))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        shell
    }

    /// Runs one step; the failure names where the step is written.
    fn run(&mut self, step: &Step) {
        if let Some(command) = step.command.strip_suffix('&') {
            self.start(step, command.trim_end());
            return;
        }
        let output = self
            .shell(&format!("{{\n{}\n}} 2>&1", step.command))
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&output.stdout).into_owned();
        let lines: Vec<&str> = printed.lines().collect();
        let status = output.status.code().unwrap_or(-1);
        assert!(
            status == step.status && lines_match(&step.expected, &lines),
            "{}: `{}` exited {status} (expected {}) and printed:\n{printed}\nexpected:\n{}",
            step.at,
            step.command,
            step.status,
            step.expected.join("\n")
        );
    }

    /// Starts a background command and waits until it says it serves.
    fn start(&mut self, step: &Step, command: &str) {
        self.stop();
        let mut child = self
            .shell(&format!("exec {command}"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        self.background.push(child);
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            match receive.recv_timeout(Duration::from_millis(100)) {
                Ok(line) if line.contains("serving http://") => return,
                Ok(line) => seen.push(line),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(_) => break,
            }
        }
        panic!(
            "{}: `{command}` did not start serving; it printed:\n{}",
            step.at,
            seen.join("\n")
        );
    }
}

impl Sandbox {
    /// Stops the background commands.
    fn stop(&mut self) {
        for mut child in self.background.drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs the sessions of one Markdown file; the number of steps run.
fn run_file(relative: &str) -> usize {
    let text = std::fs::read_to_string(root().join(relative)).unwrap();
    let steps = sessions(relative, &text);
    let mut sandbox = Sandbox::new();
    for step in &steps {
        sandbox.run(step);
    }
    steps.len()
}

#[test]
fn the_quick_start_runs_as_written_and_prints_what_the_readme_says() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("\n## Quick start\n")
        .nth(1)
        .expect("a Quick start section")
        .split("\n## ")
        .next()
        .unwrap();
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a sh block");
    let commands: Vec<&str> = block.lines().collect();
    assert_eq!(commands.len(), 2, "exactly two commands: {commands:?}");
    assert!(commands[0].starts_with("cargo run --release -p neardup-cli -- dedup "));
    assert_eq!(commands[1], "scripts/test");
    assert!(root().join("scripts/test").is_file());
    // The first command prints the summary quoted in the ```text block under it.
    let expected: Vec<String> = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the printed summary in a text block")
        .lines()
        .map(str::to_owned)
        .collect();
    let step = Step {
        at: "README.md, Quick start".into(),
        command: commands[0].to_owned(),
        expected,
        status: 0,
    };
    Sandbox::new().run(&step);
}

#[test]
fn every_console_block_of_the_readme_runs_and_prints_what_it_shows() {
    let steps = run_file("README.md");
    assert!(
        steps >= 8,
        "the next steps: report, eval, serve and client ({steps} steps)"
    );
}

#[test]
fn every_console_block_of_the_docs_runs_and_prints_what_it_shows() {
    let mut ran = Vec::new();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            ran.push((name.clone(), run_file(&format!("docs/{name}"))));
        }
    }
    ran.sort();
    let service = ran.iter().find(|(name, _)| name == "service.md");
    assert!(service.is_some_and(|(_, steps)| *steps >= 5), "{ran:?}");
}

/// The `neardup` command lines of the other fenced blocks (usage synopses, measurement
/// recipes that need the shared data or minutes): each with the blocks' name and the line.
fn quoted_commands(name: &str, text: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut fence: Option<String> = None;
    let mut continues = false;
    for (number, line) in text.lines().enumerate() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim().to_owned()),
            };
            continues = false;
            continue;
        }
        let Some(info) = &fence else { continue };
        if info == "console" {
            continue;
        }
        if line.starts_with("neardup ") {
            found.push((format!("{name}:{}", number + 1), line.to_owned()));
        } else if continues || line.starts_with(' ') {
            if let Some((_, command)) = found.last_mut() {
                command.push(' ');
                command.push_str(line.trim());
            }
        }
        continues = line.ends_with('\\');
    }
    found
}

/// Every option a quoted command line names is an option of its command: a renamed or
/// removed flag cannot stay in a synopsis or a recipe.
#[test]
fn every_option_in_a_quoted_command_line_exists() {
    let mut files = vec!["README.md".to_owned()];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            files.push(format!("docs/{name}"));
        }
    }
    let mut helps = std::collections::HashMap::new();
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        for (at, command) in quoted_commands(&file, &text) {
            let words: Vec<&str> = command.split_whitespace().collect();
            let path: Vec<&str> = match words.get(1) {
                Some(&"client") => words[1..3.min(words.len())].to_vec(),
                Some(word) => vec![*word],
                None => continue,
            };
            let help = helps.entry(path.join(" ")).or_insert_with(|| {
                let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
                    .args(&path)
                    .arg("--help")
                    .output()
                    .unwrap();
                assert!(
                    output.status.success(),
                    "{at}: `neardup {}` is no command",
                    path.join(" ")
                );
                String::from_utf8_lossy(&output.stdout).into_owned()
            });
            for word in &words {
                let flag = word
                    .trim_start_matches(['[', '('])
                    .split(['=', ']', '|', ')', ','])
                    .next()
                    .unwrap_or_default();
                if flag.len() > 2 && flag.starts_with("--") {
                    let listed = help.match_indices(flag).any(|(at, _)| {
                        !help[at + flag.len()..]
                            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
                    });
                    assert!(
                        listed,
                        "{at}: `neardup {}` has no option {flag}",
                        path.join(" ")
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 150, "{checked} options checked");
}

/// The runner itself: a wrong output, a wrong status and a missing line are caught.
#[test]
fn the_runner_catches_what_drifts() {
    let steps = sessions(
        "x.md",
        "text\n```console\n$ echo one; echo two \\\n  three\none\ntwo three\n$ echo hello\n[..]\n```\n\
         ```sh\n$ not run\n```\n```console\n$ false\n? 1\n$ printf 'a\\nb\\nc 1.5 s\\n'\n...\nc [..] s\n```\n",
    );
    let commands: Vec<&str> = steps.iter().map(|s| s.command.as_str()).collect();
    assert_eq!(
        commands,
        [
            "echo one; echo two \\\n  three",
            "echo hello",
            "false",
            "printf 'a\\nb\\nc 1.5 s\\n'"
        ]
    );
    assert_eq!(steps[0].at, "x.md:3");
    assert_eq!(steps[2].status, 1);
    let mut sandbox = Sandbox::new();
    for step in &steps {
        sandbox.run(step);
    }
    for (expected, status) in [(vec!["one", "two"], 0), (vec!["one", "two three"], 1)] {
        let step = Step {
            at: "x.md:1".into(),
            command: steps[0].command.clone(),
            expected: expected.into_iter().map(str::to_owned).collect(),
            status,
        };
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Sandbox::new().run(&step)));
        assert!(caught.is_err(), "{step:?} passed");
    }
    assert!(line_matches("a [..] c [..]", "a b c d"));
    assert!(!line_matches("a [..] c", "a b c d"));
    assert!(lines_match(&["...".into()], &[]));
    assert!(!lines_match(&["x".into(), "...".into()], &["y"]));
}
