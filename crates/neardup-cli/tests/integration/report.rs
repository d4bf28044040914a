//! Integration tests of `neardup report`: the page of a real dedup run, escaping, the size of
//! the page for a large run, and rendering in headless Chromium.

use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{example, neardup, path};

/// How long Chromium may take before it is killed and the test fails.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);
/// When set, the Chromium test copies its screenshot to this path (for people and CI logs).
const SCREENSHOT_ENV: &str = "NEARDUP_REPORT_SCREENSHOT";

fn succeed(args: &[&str]) {
    let output = neardup(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "neardup {args:?} failed: {stderr}");
}

/// Runs `dedup` on `input` and `report` on its result; returns the page's path.
fn dedup_and_report(dir: &Path, input: &str, id_field: &str) -> String {
    let (clusters, stats) = (path(dir, "clusters.jsonl"), path(dir, "stats.json"));
    let (kept, page) = (path(dir, "kept.jsonl"), path(dir, "report.html"));
    let id = ["--id-field", id_field];
    let outputs = ["--clusters", &clusters, "--stats", &stats, "-o", &kept];
    succeed(&[&["dedup", input, "--quiet"], &id[..], &outputs[..]].concat());
    let report = ["report", input, "--clusters", &clusters, "--stats", &stats];
    succeed(&[&report[..], &id[..], &["-o", &page, "--quiet"]].concat());
    page
}

/// The values of every `src` and `href` attribute in `html`.
fn links(html: &str) -> Vec<&str> {
    ["src=\"", "href=\"", "src='", "href='"]
        .iter()
        .flat_map(|attribute| {
            html.match_indices(attribute)
                .map(|(i, a)| &html[i + a.len()..])
        })
        .map(|rest| rest.split(['"', '\'']).next().unwrap_or_default())
        .collect()
}

#[test]
fn report_of_the_example_has_summary_charts_and_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let page = dedup_and_report(dir.path(), &example(), "id");
    let html = std::fs::read_to_string(&page).expect("the report exists");
    assert!(html.contains("<h2>Summary</h2>"));
    assert!(
        html.contains("<dt>Documents</dt><dd>227</dd>"),
        "every example line counted"
    );
    assert!(
        html.contains("<ins>") || html.contains("<del>"),
        "a highlighted diff"
    );
    assert_eq!(
        html.matches("<svg").count(),
        3,
        "sizes, similarity, S-curve"
    );
    assert!(html.contains("<polyline") && html.contains("threshold 0.40"));
    assert!(links(&html).iter().all(|link| link.starts_with('#')));
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn report_escapes_markup_in_documents() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "<script>alert(1)</script> & <img src=x onerror=alert(2)> the rest of a long \
                   enough sentence for a near duplicate";
    let mut lines = String::new();
    for (id, suffix) in [("<b>one</b>", ""), ("two", " again"), ("three", "")] {
        let row = serde_json::json!({"id": id, "text": format!("{hostile}{suffix}")});
        writeln!(lines, "{row}").unwrap();
    }
    let input = path(dir.path(), "hostile.jsonl");
    std::fs::write(&input, lines).unwrap();
    let html = std::fs::read_to_string(dedup_and_report(dir.path(), &input, "id")).unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x"));
    assert!(html.contains("&lt;b&gt;one&lt;/b&gt;"));
    assert_eq!(
        html.matches("<script>").count(),
        1,
        "only the page's own script"
    );
    assert!(!html.contains("<img") && !html.contains("<b>one"));
}

/// A deterministic text of about `words` words of an invented vocabulary.
fn synthetic_text(seed: u64, words: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "be", "do", "fu", "ga", "hi", "jo", "ku",
        "pe",
    ];
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut text = String::new();
    for _ in 0..words {
        let state = rng.next_u64();
        for shift in [33, 37, 41] {
            text.push_str(SYLLABLES[(state >> shift) as usize % SYLLABLES.len()]);
        }
        text.push(' ');
    }
    text
}

/// Writes 100,000 documents and a clusters file for them: 20,000 singletons, one cluster of
/// 5,000 and many small ones, some texts far longer than `--max-chars`.
fn write_large_run(dir: &Path) -> (String, String) {
    let (mut documents, mut clusters) = (String::new(), String::new());
    let mut id = 0u64;
    let mut cluster_index = 0u64;
    let sizes = [2, 2, 2, 3, 5, 8, 40];
    while id < 100_000 {
        let size = match id {
            0..20_000 => 1,
            20_000 => 5_000,
            _ => sizes[cluster_index as usize % sizes.len()].min(100_000 - id),
        };
        let words = if cluster_index.is_multiple_of(50) {
            1_500
        } else {
            30
        };
        let base = synthetic_text(cluster_index, words);
        let representative = id;
        for member in 0..size {
            let text = if member == 0 {
                base.clone()
            } else {
                format!("{} {base}", synthetic_text(id, 3))
            };
            let row = serde_json::json!({"id": id, "text": text});
            writeln!(documents, "{row}").unwrap();
            let (duplicate_of, similarity) = if member == 0 {
                (None, None)
            } else {
                (Some(representative), Some(0.7 + (id % 300) as f64 / 1000.0))
            };
            let row = serde_json::json!({"id": id, "cluster": representative,
                "duplicate_of": duplicate_of, "similarity": similarity});
            writeln!(clusters, "{row}").unwrap();
            id += 1;
        }
        cluster_index += 1;
    }
    let (documents_path, clusters_path) = (path(dir, "large.jsonl"), path(dir, "large-c.jsonl"));
    std::fs::write(&documents_path, documents).unwrap();
    std::fs::write(&clusters_path, clusters).unwrap();
    (documents_path, clusters_path)
}

#[test]
fn report_of_100_000_documents_stays_under_2_mb() {
    let dir = tempfile::tempdir().unwrap();
    let (documents, clusters) = write_large_run(dir.path());
    let page = path(dir.path(), "large.html");
    let args = [
        "report",
        &documents,
        "--clusters",
        &clusters,
        "--id-field",
        "id",
    ];
    succeed(&[&args[..], &["-o", &page, "--quiet"]].concat());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.len() < 2 << 20, "the page has {} bytes", html.len());
    assert!(html.contains("<dt>Documents</dt><dd>100,000</dd>"));
    assert!(
        html.contains("<strong>5,000 documents</strong>"),
        "the largest cluster"
    );
    assert!(html.contains("4,991 more duplicates not shown"));
    assert!(html.contains("Truncated: the first 3,000 of"));
    assert!(
        html.contains("the S-curve is not drawn"),
        "no --stats given"
    );
    assert_eq!(html.matches(r#"<details class="cluster""#).count(), 100);
}

#[test]
fn report_refuses_a_clusters_file_of_other_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let clusters = path(dir.path(), "clusters.jsonl");
    std::fs::write(
        &clusters,
        "{\"id\": \"nowhere\", \"cluster\": \"nowhere\"}\n",
    )
    .unwrap();
    let page = path(dir.path(), "report.html");
    let args = [
        "report",
        &example(),
        "--id-field",
        "id",
        "--clusters",
        &clusters,
    ];
    let output = neardup(&[&args[..], &["-o", &page]].concat());
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "{clusters}:1: id \"nowhere\" is not the id of any input document"
        )),
        "{stderr}"
    );
    assert!(!Path::new(&page).exists(), "no page after an error");
}

/// Issue 46: the report of the quick start's run, given without `--id-field`, says to give it.
#[test]
fn report_without_the_runs_id_field_says_to_give_it() {
    let dir = tempfile::tempdir().unwrap();
    let clusters = path(dir.path(), "clusters.jsonl");
    let kept = path(dir.path(), "kept.jsonl");
    let dedup = ["dedup", &example(), "-o", &kept, "--clusters", &clusters];
    assert!(neardup(&[&dedup[..], &["--id-field", "id", "-q"]].concat())
        .status
        .success());
    let page = path(dir.path(), "report.html");
    let output = neardup(&["report", &example(), "--clusters", &clusters, "-o", &page]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "so their ids are the record numbers 1 to 227: give the report the \
                         --id-field the dedup run was given"
        ),
        "{stderr}"
    );
}

/// Chromium for a test, or `None` (and the test skips) when it is not installed outside CI;
/// in CI (`CI` set) a missing Chromium fails the test.
pub(crate) fn chromium_or_skip() -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed: CI must install Debian's chromium package");
        }
        println!("skipped: chromium not installed");
    }
    found
}

/// Checks that `screenshot` is a real picture (over 10 KB) and copies it where the variable
/// `env` says, when set (for people and CI logs).
pub(crate) fn keep_screenshot(screenshot: &Path, env: &str) {
    let bytes = std::fs::metadata(screenshot).expect("a screenshot").len();
    assert!(bytes > 10 * 1024, "the screenshot has only {bytes} bytes");
    if let Some(copy) = std::env::var_os(env) {
        std::fs::copy(screenshot, copy).unwrap();
    }
}

/// `chromium` or `chromium-browser` on the PATH.
fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|directory| directory.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// What a finished Chromium run printed.
pub(crate) struct BrowserRun {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs headless Chromium on the page at `url` with `modes` (`--screenshot=...` or
/// `--dump-dom`, and any other flag), in its own profile and process group; kills the group
/// and fails after [`CHROMIUM_TIMEOUT`].
pub(crate) fn run_chromium(
    chromium: &Path,
    dir: &Path,
    name: &str,
    modes: &[&str],
    url: &str,
) -> BrowserRun {
    use std::os::unix::process::CommandExt;

    let (stdout_path, stderr_path) = (
        dir.join(format!("{name}.out")),
        dir.join(format!("{name}.err")),
    );
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!(
                "--user-data-dir={}",
                dir.join(format!("{name}-profile")).display()
            ),
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
        ])
        .args(modes)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            // The negative id names the whole process group: the browser and its helpers.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            panic!("chromium did not finish within {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let run = BrowserRun {
        stdout: read(&stdout_path),
        stderr: read(&stderr_path),
    };
    assert!(
        status.success(),
        "chromium failed ({status}): {}",
        run.stderr
    );
    run
}

/// The lines in which Chromium reported something the page's scripts or policy did.
///
/// With `--enable-logging=stderr`, Chromium writes every console message of the page, whatever
/// its level, as `[pid:tid:time:INFO:CONSOLE:line] "message", source: url (line)`: a
/// `console.error`, an uncaught exception (`"Uncaught TypeError: ..."`) and a blocked fetch
/// (a Content-Security-Policy violation) all look alike. The page logs nothing itself, so any
/// such line is a failure.
pub(crate) fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught"))
        .collect()
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dedup_and_report(dir.path(), &example(), "id");
    let screenshot = dir.path().join("report.png");
    let mode = format!("--screenshot={}", screenshot.display());
    let url = format!("file://{page}");
    let shot = run_chromium(&chromium, dir.path(), "screenshot", &[&mode], &url);
    assert_eq!(
        console_lines(&shot.stderr),
        Vec::<&str>::new(),
        "console messages"
    );
    keep_screenshot(&screenshot, SCREENSHOT_ENV);

    let dom = run_chromium(&chromium, dir.path(), "dom", &["--dump-dom"], &url);
    assert_eq!(
        console_lines(&dom.stderr),
        Vec::<&str>::new(),
        "console messages"
    );
    assert!(dom.stdout.contains("<h2>Summary</h2>"), "{}", dom.stdout);
    assert!(
        dom.stdout.contains(r#"data-ready="true""#),
        "the script ran to its end"
    );
    assert!(
        dom.stdout.contains(r#"aria-selected="true""#),
        "the tabs were set up"
    );
}

#[test]
fn console_errors_are_recognised_in_chromium_logs() {
    // Lines as Chromium 156 prints them for `console.error("x")` and an uncaught exception.
    let stderr = "[1:1:1122/013706.038001:WARNING:ui/base/idle/idle_linux.cc:111] None of the \
                  known D-Bus ScreenSaver services could be used.\n\
                  [1:1:1122/013706.505858:INFO:CONSOLE:1] \"an error\", source: \
                  file:///p.html (1)\n\
                  [1:1:1122/013706.509151:INFO:CONSOLE:1] \"Uncaught Error: thrown\", source: \
                  file:///p.html (1)\n";
    assert_eq!(console_lines(stderr).len(), 2);
}
