//! `neardup serve` and `neardup client` against hostile peers (issue 28, items 11, 13, 14):
//! thousands of idle and half-sent connections, scoped tokens from a file, and fake servers
//! that never answer or answer wrongly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use neardup_service::client::{self, Client, Method};

use super::terminate;

/// A guard against hanging forever on code that never gives up; never a measure.
const HANG: Duration = Duration::from_secs(120);

/// Runs a command to its end; fails the test when it is still running after [`HANG`].
fn run(command: &mut Command) -> (bool, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG {
            child.kill().unwrap();
            let Output { stderr, .. } = child.wait_with_output().unwrap();
            panic!(
                "still running after {HANG:?}: {}",
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn neardup_client(url: &str, args: &[&str]) -> (bool, String, String) {
    run(Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["client", "--url", url])
        .args(args)
        .env_remove("NEARDUP_TOKEN"))
}

/// How a fake service answers a request (its request line and body): a status and a body, or
/// never (`None`).
type Answerer = dyn Fn(&str, &str) -> Option<(u16, String)> + Send + Sync;

/// A fake service on a loopback port: each request (its request line and body) is answered
/// with `answer`'s status and body, or never (`None`). The request lines seen are kept.
fn fake(
    answer: impl Fn(&str, &str) -> Option<(u16, String)> + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let answer = Arc::new(answer);
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let answer = Arc::clone(&answer);
            let log = Arc::clone(&log);
            std::thread::spawn(move || serve_fake(stream, &*answer, &log));
        }
    });
    (url, seen)
}

fn serve_fake(stream: TcpStream, answer: &Answerer, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request_line = request_line.trim().to_owned();
        log.lock().unwrap().push(request_line.clone());
        let Some((status, body)) = answer(&request_line, &String::from_utf8_lossy(&body)) else {
            // Hold the connection open, never answering.
            std::thread::sleep(HANG * 2);
            return;
        };
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn serve_answers_healthz_while_thousands_of_idle_and_half_sent_connections_are_open() {
    // The test holds 3000 sockets; the service gets a descriptor limit of 2048 (soft and hard)
    // so that these connections would exhaust it.
    let limit = neardup_service::http::raise_open_files_limit().unwrap_or(0);
    assert!(
        limit >= 4000,
        "this test needs 4000 open files; the hard limit is {limit}"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 2048 && exec \"$0\" serve --listen 127.0.0.1:0 --data-dir \"$1\"")
        .arg(env!("CARGO_BIN_EXE_neardup"))
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let address: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let mut held = Vec::new();
    for i in 0..3000 {
        // A service that stopped accepting leaves connections in the listen queue until it
        // is full: stop at the first that cannot open.
        let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(5)) else {
            break;
        };
        if i % 2 == 1 {
            let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        }
        held.push(stream);
    }
    let runtime = client::runtime().unwrap();
    let answered = runtime.block_on(async {
        let client = Client::new(&url, None)
            .unwrap()
            .with_timeouts(Duration::from_secs(30), Duration::from_secs(30));
        client.json(Method::GET, "/healthz", None).await
    });
    let (status, answer) =
        answered.unwrap_or_else(|e| panic!("/healthz with {} connections held: {e}", held.len()));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(held.len(), 3000, "connections that could not open");
    drop(held);
    assert!(terminate(&mut child).success());
}

#[test]
fn client_gives_up_on_a_server_that_accepts_and_never_answers() {
    let (url, _) = fake(|_, _| None);
    for args in [&["list"][..], &["insert", "c", "--id", "a", "some text"]] {
        let mut all = vec!["--timeout", "1"];
        all.extend_from_slice(args);
        let (ok, _, stderr) = neardup_client(&url, &all);
        assert!(!ok);
        assert!(
            stderr.contains("no complete answer within 1 s (--timeout)"),
            "{stderr}"
        );
    }
    // A loader gives up too.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, "{\"id\": \"a\", \"text\": \"x\"}\n").unwrap();
    let input = input.to_str().unwrap();
    let (ok, _, stderr) = neardup_client(&url, &["--timeout", "1", "load", "c", input]);
    assert!(!ok);
    assert!(stderr.contains("(--timeout)"), "{stderr}");
}

fn ten_lines(dir: &Path) -> String {
    let input = dir.join("in.jsonl");
    let lines: String = (0..10)
        .map(|i| format!("{{\"id\": \"d{i}\", \"text\": \"text {i}\"}}\n"))
        .collect();
    std::fs::write(&input, lines).unwrap();
    input.to_str().unwrap().to_owned()
}

#[test]
fn client_load_refuses_answers_that_do_not_answer_each_document_sent() {
    let dir = tempfile::tempdir().unwrap();
    let input = ten_lines(dir.path());
    let stored =
        |id: &str| format!("{{\"id\": \"{id}\", \"stored\": true, \"duplicate_of\": null}}");
    let many: String = (0..100_000)
        .map(|_| stored("d0"))
        .collect::<Vec<_>>()
        .join(",");
    let few: String = (0..3)
        .map(|i| stored(&format!("d{i}")))
        .collect::<Vec<_>>()
        .join(",");
    let others: String = (0..10)
        .map(|i| stored(&format!("x{i}")))
        .collect::<Vec<_>>()
        .join(",");
    for (body, expected) in [
        (
            format!("{{\"results\": [{many}]}}"),
            "holds 100000 results for 10 documents sent",
        ),
        (
            format!("{{\"results\": [{few}]}}"),
            "holds 3 results for 10 documents sent",
        ),
        (
            format!("{{\"results\": [{others}]}}"),
            "result 0 is for id \"x0\"",
        ),
        ("{\"ok\": true}".to_owned(), "is not a batch's results"),
        ("[1, 2, 3]".to_owned(), "is not a batch's results"),
    ] {
        let (url, _) = fake(move |_, _| Some((200, body.clone())));
        let (ok, stdout, stderr) = neardup_client(&url, &["load", "c", &input]);
        assert!(!ok, "{stdout}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(stderr.contains("in.jsonl:1-10"), "{stderr}");
    }
    // Single calls check their answer's shape too.
    let (url, _) = fake(|_, _| Some((200, "{\"ok\": true}".to_owned())));
    for args in [
        &["insert", "c", "--id", "a", "text"][..],
        &["check", "c", "text"],
        &["list"],
        &["show", "c"],
        &["get", "c", "a"],
        &["delete", "c", "a"],
        &["drop", "c"],
        &["create", "c"],
    ] {
        let (ok, _, stderr) = neardup_client(&url, args);
        assert!(!ok, "{args:?}");
        assert!(stderr.contains("the answer is not"), "{args:?}: {stderr}");
    }
    let (url, _) = fake(|_, _| Some((502, "<html>Bad Gateway</html>".to_owned())));
    let (ok, _, stderr) = neardup_client(&url, &["list"]);
    assert!(!ok);
    assert!(
        stderr.contains("status 502") && stderr.contains("not JSON"),
        "{stderr}"
    );
}

#[test]
fn client_errors_are_messages_not_debug_text() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (ok, _, stderr) = neardup_client(&url, &["list"]);
    assert!(!ok);
    assert!(stderr.contains("Connection refused"), "{stderr}");
    for debug in ["ConnectError(", "Os {", "kind:", "Error {", "Some("] {
        assert!(!stderr.contains(debug), "debug text {debug:?} in {stderr}");
    }
    for (url, expected) in [
        ("https://127.0.0.1:1", "not an http:// URL"),
        ("http://127.0.0.1:1/x?y=1", "a query or fragment"),
        ("127.0.0.1:8080", "not an http:// URL"),
    ] {
        let (ok, _, stderr) = neardup_client(url, &["list"]);
        assert!(!ok);
        assert!(stderr.contains(expected), "{url}: {stderr}");
    }
}

#[test]
fn client_keeps_the_path_prefix_of_the_url() {
    let (url, seen) = fake(|_, _| Some((200, "{\"collections\": []}".to_owned())));
    for prefix in ["/neardup", "/neardup/", "/a/b"] {
        let (ok, _, stderr) = neardup_client(&format!("{url}{prefix}"), &["list"]);
        assert!(ok, "{stderr}");
        let last = seen.lock().unwrap().last().cloned().unwrap_or_default();
        let expected = format!(
            "GET {}/v1/collections HTTP/1.1",
            prefix.trim_end_matches('/')
        );
        assert_eq!(last, expected);
    }
}

#[test]
fn serve_takes_scoped_tokens_from_a_file_and_refuses_a_bad_one_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.txt");
    std::fs::write(
        &tokens,
        "# scopes\nadmin * admin-token-0123456789\nread  news  reader-token-0123456789\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "admin * admin-token-0123456789\nreed news x\n").unwrap();
    let (ok, _, stderr) = run(Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", "127.0.0.1:0", "--tokens-file"])
        .arg(&bad)
        .arg("--data-dir")
        .arg(dir.path().join("data")));
    assert!(!ok);
    assert!(
        stderr.contains("--tokens-file") && stderr.contains("bad.txt:2: unknown scope \"reed\""),
        "{stderr}"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", "127.0.0.1:0", "--tokens-file"])
        .arg(&tokens)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let admin = dir.path().join("admin.token");
    std::fs::write(&admin, "admin-token-0123456789\n").unwrap();
    let reader = dir.path().join("reader.token");
    std::fs::write(&reader, "reader-token-0123456789\n").unwrap();
    let as_token = |file: &Path, args: &[&str]| {
        let mut all = vec!["--token-file", file.to_str().unwrap()];
        all.extend_from_slice(args);
        neardup_client(&url, &all)
    };
    let (ok, _, stderr) = as_token(&admin, &["create", "news"]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = as_token(&reader, &["check", "news", "some text"]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = as_token(&reader, &["insert", "news", "--id", "a", "some text"]);
    assert!(!ok);
    assert!(
        stderr.contains("403") && stderr.contains("write scope"),
        "{stderr}"
    );
    let (ok, _, stderr) = neardup_client(&url, &["list"]);
    assert!(!ok);
    assert!(stderr.contains("401"), "{stderr}");
    assert!(terminate(&mut child).success());
}
