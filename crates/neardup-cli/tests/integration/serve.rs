//! `neardup serve` as a process: killed with SIGKILL under load, and during level merges and
//! the writes of level files, every acknowledged insert is there after the restart; SIGTERM
//! drains and exits cleanly; `neardup client` talks to it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neardup_service::client::{self, Client, Method};
use serde_json::{json, Value};

mod hostile;

/// Starts `neardup serve` on a free loopback port; the child and its URL.
fn start(dir: &Path) -> (Child, String) {
    start_with(dir, &[])
}

/// Starts `neardup serve` with the options `more` on a free loopback port; the child and its
/// URL. The rest of its log is read on a thread, so that it never blocks on a full pipe.
fn start_with(dir: &Path, more: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(more)
        .arg("--data-dir")
        .arg(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let line = lines.next().unwrap().unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn text(n: u64) -> String {
    let mut state = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..60)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 12 == 11 {
                '，'
            } else {
                char::from_u32(0x4e00 + (state % 0x5000) as u32).unwrap_or('中')
            }
        })
        .collect()
}

fn call(url: &str, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let runtime = client::runtime().unwrap();
    runtime.block_on(async {
        let client = Client::new(url, None).unwrap();
        client.json(method, path, body.as_ref()).await.unwrap()
    })
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait().unwrap()
}

#[test]
fn serve_keeps_every_acknowledged_insert_through_kill_9_under_load() {
    let dir = tempfile::tempdir().unwrap();
    // Every answered id, with the id it duplicates when it was not stored.
    type Answers = Arc<Mutex<Vec<(String, Option<String>)>>>;
    let acknowledged: Answers = Arc::default();
    for round in 0..3u64 {
        let (mut child, url) = start(dir.path());
        if round == 0 {
            let (status, _) = call(&url, Method::PUT, "/v1/collections/c", Some(json!({})));
            assert_eq!(status, 201);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let loaders: Vec<_> = (0..6u64)
            .map(|thread| {
                let url = url.clone();
                let stop = Arc::clone(&stop);
                let acknowledged = Arc::clone(&acknowledged);
                std::thread::spawn(move || {
                    let runtime = client::runtime().unwrap();
                    runtime.block_on(async {
                        let client = Client::new(&url, None).unwrap();
                        let mut n = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            n += 1;
                            let key = round * 1_000_000 + thread * 100_000 + n;
                            // One in four repeats an earlier text: duplicates too.
                            let source = if n.is_multiple_of(4) { key - 3 } else { key };
                            let documents: Vec<Value> = if n.is_multiple_of(5) {
                                (0..40)
                                    .map(|i| json!({"id": format!("k{key}-{i}"), "text": text(source * 100 + i)}))
                                    .collect()
                            } else {
                                vec![json!({"id": format!("k{key}"), "text": text(source * 100)})]
                            };
                            let answer = client
                                .json(
                                    Method::POST,
                                    "/v1/collections/c/documents/batch",
                                    Some(&json!({"documents": documents})),
                                )
                                .await;
                            let Ok((200, answer)) = answer else {
                                break;
                            };
                            let mut seen = acknowledged.lock().unwrap();
                            for result in answer["results"].as_array().unwrap() {
                                let id = result["id"].as_str().unwrap().to_owned();
                                match result["stored"].as_bool() {
                                    Some(true) => seen.push((id, None)),
                                    Some(false) => seen.push((
                                        id,
                                        Some(result["duplicate_of"].as_str().unwrap().to_owned()),
                                    )),
                                    None => panic!("{result}"),
                                }
                            }
                        }
                    });
                })
            })
            .collect();
        // Kill once the loaders have real work acknowledged (however slow the machine is),
        // then a little later in each round so the kill lands at a different moment.
        let waited = std::time::Instant::now();
        while acknowledged.lock().unwrap().len() <= 50
            && waited.elapsed() < Duration::from_secs(120)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100 + 150 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        for loader in loaders {
            loader.join().unwrap();
        }
        // After the restart every acknowledged insert is there, and so is every document an
        // answer named as the original.
        let (mut child, url) = start(dir.path());
        let seen = acknowledged.lock().unwrap().clone();
        assert!(
            seen.len() > 50,
            "round {round}: only {} answers",
            seen.len()
        );
        let runtime = client::runtime().unwrap();
        runtime.block_on(async {
            let client = Client::new(&url, None).unwrap();
            let mut stored = 0;
            for (id, duplicate_of) in &seen {
                let wanted = duplicate_of.as_ref().unwrap_or(id);
                let (status, got) = client
                    .json(
                        Method::GET,
                        &format!("/v1/collections/c/documents/{wanted}"),
                        None,
                    )
                    .await
                    .unwrap();
                assert_eq!(
                    status, 200,
                    "round {round}: {wanted} was acknowledged: {got}"
                );
                stored += usize::from(duplicate_of.is_none());
            }
            let (_, shown) = client
                .json(Method::GET, "/v1/collections/c", None)
                .await
                .unwrap();
            let documents = shown["stats"]["documents"].as_u64().unwrap() as usize;
            assert!(documents >= stored, "round {round}: {documents} < {stored}");
        });
        let status = terminate(&mut child);
        assert!(status.success(), "SIGTERM: {status}");
    }
}

/// Starts `neardup serve` writing a level file for every frozen level (they freeze every
/// 8,192 documents).
fn start_with_level_files(dir: &Path) -> (Child, String) {
    start_with(dir, &["--level-file-docs", "8192"])
}

/// Killed with SIGKILL while levels are merged and their files and the segment summaries
/// are written (a level file every 8,192 documents, a segment every 20,000), at a different
/// moment each round: after each restart, which loads the files written before the kill,
/// every acknowledged document is there and found by a check of its own text.
#[test]
fn serve_keeps_every_acknowledged_insert_through_kill_9_during_merges_and_file_writes() {
    let dir = tempfile::tempdir().unwrap();
    let acknowledged: Arc<Mutex<Vec<u64>>> = Arc::default();
    let mut next = 0u64;
    for round in 0..3u64 {
        let (mut child, url) = start_with_level_files(dir.path());
        if round == 0 {
            let body = json!({"partition_documents": 20_000});
            let (status, _) = call(&url, Method::PUT, "/v1/collections/c", Some(body));
            assert_eq!(status, 201);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let first = next;
        next += 1_000_000;
        let loaders: Vec<_> = (0..2u64)
            .map(|thread| {
                let (url, stop) = (url.clone(), Arc::clone(&stop));
                let acknowledged = Arc::clone(&acknowledged);
                std::thread::spawn(move || {
                    let runtime = client::runtime().unwrap();
                    runtime.block_on(async {
                        let client = Client::new(&url, None).unwrap();
                        let mut key = first + thread * 500_000;
                        while !stop.load(Ordering::Relaxed) {
                            let keys: Vec<u64> = (key..key + 500).collect();
                            key += 500;
                            let documents: Vec<Value> = (keys.iter())
                                .map(|k| json!({"id": format!("k{k}"), "text": text(*k)}))
                                .collect();
                            let answer = client
                                .json(
                                    Method::POST,
                                    "/v1/collections/c/documents/batch",
                                    Some(&json!({"documents": documents})),
                                )
                                .await;
                            let Ok((200, answer)) = answer else {
                                break;
                            };
                            let results = answer["results"].as_array().unwrap();
                            let mut seen = acknowledged.lock().unwrap();
                            for (k, result) in keys.iter().zip(results) {
                                assert_eq!(result["stored"], json!(true), "k{k}: {result}");
                                seen.push(*k);
                            }
                        }
                    });
                })
            })
            .collect();
        // Past the first merges and files, then a little later each round.
        let wanted = 20_000 + 12_000 * round as usize;
        let waited = std::time::Instant::now();
        while acknowledged.lock().unwrap().len() < wanted
            && waited.elapsed() < Duration::from_secs(300)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(50 + 200 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        for loader in loaders {
            loader.join().unwrap();
        }
        let index = dir.path().join("collections/c/index/manifest.json");
        assert!(index.exists(), "round {round}: no level file was written");
        let (mut child, url) = start_with_level_files(dir.path());
        let seen = acknowledged.lock().unwrap().clone();
        let runtime = client::runtime().unwrap();
        runtime.block_on(async {
            let client = Client::new(&url, None).unwrap();
            let (_, shown) = client
                .json(Method::GET, "/v1/collections/c", None)
                .await
                .unwrap();
            let documents = shown["stats"]["documents"].as_u64().unwrap() as usize;
            assert!(
                documents >= seen.len(),
                "round {round}: {documents} < {}",
                seen.len()
            );
            // Every acknowledged document found by its own text (its identity and its band
            // keys answer from the levels loaded or rebuilt).
            for chunk in seen.chunks(1000) {
                let texts: Vec<String> = chunk.iter().map(|&k| text(k)).collect();
                let (status, answer) = client
                    .json(
                        Method::POST,
                        "/v1/collections/c/check/batch",
                        Some(&json!({"texts": texts, "limit": 1})),
                    )
                    .await
                    .unwrap();
                assert_eq!(status, 200, "{answer}");
                for (k, result) in chunk.iter().zip(answer["results"].as_array().unwrap()) {
                    let id = &result["matches"][0]["id"];
                    assert_eq!(id, &json!(format!("k{k}")), "round {round}: k{k}");
                }
            }
        });
        let status = terminate(&mut child);
        assert!(status.success(), "SIGTERM: {status}");
    }
}

#[test]
fn the_client_creates_inserts_checks_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = start(dir.path());
    let neardup = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["client", "--url", &url])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        (output.status.success(), stdout, stderr)
    };
    let (ok, _, stderr) = neardup(&["create", "news", "--settings", r#"{"retention": "48h"}"#]);
    assert!(ok, "{stderr}");
    let jsonl = dir.path().join("in.jsonl");
    let mut lines = String::new();
    for i in 0..250u64 {
        let body = if i % 5 == 4 { text(i - 1) } else { text(i) };
        lines.push_str(&json!({"doc": format!("n{i}"), "body": body}).to_string());
        lines.push('\n');
    }
    std::fs::write(&jsonl, lines).unwrap();
    let answers = dir.path().join("answers.jsonl");
    let (ok, stdout, stderr) = neardup(&[
        "load",
        "news",
        jsonl.to_str().unwrap(),
        "--id-field",
        "doc",
        "--text-field",
        "body",
        "--batch",
        "30",
        "--concurrency",
        "3",
        "--answers",
        answers.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["sent"], 250);
    assert_eq!(summary["duplicates"], 50, "{summary}");
    assert_eq!(summary["stored"], 200);
    let answered: Vec<Value> = std::fs::read_to_string(&answers)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<String> = (0..250).map(|i| format!("n{i}")).collect();
    let got: Vec<&str> = answered.iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(got, ids, "answers in input order");
    assert_eq!(answered[4]["duplicate_of"], "n3");
    // Loading again: every id is refused by name, and counted.
    let (ok, stdout, stderr) = neardup(&[
        "load",
        "news",
        jsonl.to_str().unwrap(),
        "--id-field",
        "doc",
        "--text-field",
        "body",
    ]);
    // Issue 44, item 13: refusals fail the load (it exited 0), after the summary.
    assert!(!ok);
    assert!(
        stderr.contains("200 of 250 documents were refused (200 id_exists)"),
        "{stderr}"
    );
    let again: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(again["refused"]["id_exists"], 200, "{again}");
    // The answers file is an output: never the input (nor a link to it), which survives.
    let before = std::fs::read(&jsonl).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&jsonl, &link).unwrap();
    for answers in [&jsonl, &link] {
        let (ok, _, stderr) = neardup(&[
            "load",
            "news",
            jsonl.to_str().unwrap(),
            "--answers",
            answers.to_str().unwrap(),
            "--id-field",
            "doc",
            "--text-field",
            "body",
        ]);
        assert!(!ok);
        assert!(stderr.contains("--answers is the input"), "{stderr}");
    }
    assert_eq!(std::fs::read(&jsonl).unwrap(), before);
    // A document the service refuses in a batch is named by its line.
    let huge = dir.path().join("huge.jsonl");
    let long = "长".repeat(400_000);
    std::fs::write(
        &huge,
        format!(
            "{{\"doc\": \"h1\", \"body\": \"短\"}}\n{{\"doc\": \"h2\", \"body\": \"{long}\"}}\n"
        ),
    )
    .unwrap();
    let (ok, _, stderr) = neardup(&[
        "load",
        "news",
        huge.to_str().unwrap(),
        "--id-field",
        "doc",
        "--text-field",
        "body",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("huge.jsonl:2: the service refused the batch"),
        "{stderr}"
    );
    // A line without the text field is an error naming the file, line and field.
    std::fs::write(
        &jsonl,
        "{\"doc\": \"x\", \"body\": \"y\"}\n{\"doc\": \"z\"}\n",
    )
    .unwrap();
    let (ok, _, stderr) = neardup(&[
        "load",
        "news",
        jsonl.to_str().unwrap(),
        "--id-field",
        "doc",
        "--text-field",
        "body",
    ]);
    assert!(!ok);
    assert!(stderr.contains("in.jsonl:2: no field \"body\""), "{stderr}");
    let (ok, stdout, _) = neardup(&["check", "news", &text(3)]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["matches"][0]["id"],
        "n3"
    );
    let (ok, stdout, _) = neardup(&["insert", "news", "--id", "fresh", &text(9999)]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["stored"],
        true
    );
    let (ok, _, stderr) = neardup(&["insert", "news", "--id", "fresh", "again"]);
    assert!(!ok);
    assert!(stderr.contains("409"), "{stderr}");
    let (ok, stdout, _) = neardup(&["get", "news", "fresh"]);
    assert!(ok && stdout.contains("\"expires\""), "{stdout}");
    assert!(terminate(&mut child).success());
}

#[test]
fn serve_refuses_to_listen_beyond_loopback_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = serve_refused("0.0.0.0:0", &[dir.path().as_os_str()]);
    assert!(
        stderr.contains("--listen") && stderr.contains("token"),
        "{stderr}"
    );
    // Two services never share a data folder.
    let (mut child, _) = start(dir.path());
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("another neardup service"));
    assert!(terminate(&mut child).success());
}

#[test]
fn serve_refuses_a_token_file_shorter_than_a_tokens_file_allows() {
    // Issue 44, item 8: `--token-file` took a 3-character token.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "abc\n").unwrap();
    let data = dir.path().join("data");
    let args = [data.as_os_str(), "--token-file".as_ref(), file.as_os_str()];
    let stderr = serve_refused("127.0.0.1:0", &args);
    assert!(
        stderr.contains("--token-file") && stderr.contains("16 to 512 characters; this one has 3"),
        "{stderr}"
    );
}

/// Runs `serve --listen LISTEN --data-dir ARGS...` without `NEARDUP_TOKEN`, which must fail;
/// its standard error.
fn serve_refused(listen: &str, args: &[&std::ffi::OsStr]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", listen, "--data-dir"])
        .args(args)
        .env_remove("NEARDUP_TOKEN")
        .output()
        .unwrap();
    assert!(!output.status.success());
    String::from_utf8(output.stderr).unwrap()
}

/// Bytes of `text` outside `A-Za-z0-9-_.~` written as `%XX` (a query value).
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The console (`GET /`) in headless Chromium: it renders, lists a collection with its
/// counts, and a check made through the page (its `?collection=&check=` link) shows the match
/// and the stored text beside the checked one; no script error. With
/// `NEARDUP_CONSOLE_SCREENSHOT` set, the screenshot is copied there (docs/service.md's).
#[test]
fn the_console_renders_lists_collections_shows_duplicates_and_checks_in_headless_chromium() {
    use crate::report::{chromium_or_skip, console_lines, keep_screenshot, run_chromium};

    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    /// The server, killed if the test fails before it is stopped.
    struct Server(Child);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = start(&dir.path().join("data"));
    let mut server = Server(child);
    let settings = json!({"method": "simhash", "keep_text": true});
    let (status, answer) = call(
        &url,
        Method::PUT,
        "/v1/collections/console-news",
        Some(settings),
    );
    assert_eq!(status, 201, "{answer}");
    let stored = "国务院常务会议部署进一步扩大内需的措施，加大基础设施投入，稳定就业。";
    for (id, text) in [
        ("a1", stored.to_owned()),
        ("b2", stored.replace("稳定就业", "稳定就业！")),
        ("c3", text(7)),
    ] {
        let body = json!({"id": id, "text": text});
        let (status, answer) = call(
            &url,
            Method::POST,
            "/v1/collections/console-news/documents",
            Some(body),
        );
        assert_eq!(status, 200, "{answer}");
    }
    let checked = "國務院常務會議部署進一步擴大內需的措施,加大基礎設施投入,穩定就業";
    let page = format!(
        "{}/?collection=console-news&check={}",
        url.trim_end_matches('/'),
        percent_encoded(checked)
    );
    let budget = "--virtual-time-budget=8000";
    let dom = run_chromium(
        &chromium,
        dir.path(),
        "console-dom",
        &["--dump-dom", budget],
        &page,
    );
    assert_eq!(
        console_lines(&dom.stderr),
        Vec::<&str>::new(),
        "console messages"
    );
    let html = &dom.stdout;
    assert!(html.contains("<title>neardup console</title>"), "{html}");
    assert!(html.contains(r#"<tr data-name="console-news""#), "{html}");
    // Documents, stored and duplicates of the collection: 2 stored, 1 duplicate.
    assert!(
        html.contains("<td>simhash</td><td>2</td><td>2</td><td>1</td>"),
        "{html}"
    );
    assert!(html.contains(r#"<tr class="match"><td>a1</td>"#), "{html}");
    assert!(
        html.contains(&format!(r#"<div class="matched-text">{stored}</div>"#)),
        "{html}"
    );
    // The latest duplicates: b2 matched a1, shown beside a1's stored text.
    assert!(
        html.contains(r#"<tr class="duplicate">"#) && html.contains("<td>b2</td><td>a1</td>"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            r#"<div class="pair recent-pair"><div>b2: {}</div><div>a1: {stored}</div></div>"#,
            stored.replace("稳定就业", "稳定就业！")
        )),
        "{html}"
    );

    let screenshot = dir.path().join("console.png");
    let mode = format!("--screenshot={}", screenshot.display());
    let shot = run_chromium(
        &chromium,
        dir.path(),
        "console-shot",
        &[&mode, budget],
        &page,
    );
    assert_eq!(
        console_lines(&shot.stderr),
        Vec::<&str>::new(),
        "console messages"
    );
    keep_screenshot(&screenshot, "NEARDUP_CONSOLE_SCREENSHOT");
    assert!(terminate(&mut server.0).success());
}
