//! Hostile and careless clients (issue 28, items 10, 11 and 14): method tokens that must not
//! grow the metrics, connections that idle or stop halfway, bodies that repeat a key; and
//! (issue 44, item 7) the security headers of every answer.

use std::time::Duration;

use neardup_service::client::Method;
use neardup_service::http::HttpConfig;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{rt, Server};

/// A guard against hanging forever on code that never closes or answers; never a measure.
const HANG: Duration = Duration::from_secs(60);

fn address(url: &str) -> String {
    url.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection; what it sent.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    tokio::time::timeout(HANG, stream.read_to_end(&mut answer))
        .await
        .expect("the server never closed the connection")
        .ok();
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn random_method_tokens_leave_the_metrics_series_bounded() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = HttpConfig {
            token: Some("the-admin-token-0123".into()),
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        server.create("c", json!({})).await;
        let anonymous = neardup_service::client::Client::new(&server.url, None).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut tokens = Vec::new();
        for i in 0..1000 {
            let token: String = (0..12)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[(state % 36) as usize])
                })
                .collect();
            let method = Method::from_bytes(format!("Q{token}").as_bytes()).unwrap();
            let client = if i % 2 == 0 {
                &anonymous
            } else {
                &server.client
            };
            let path = match i % 3 {
                0 => "/healthz".to_owned(),
                1 => "/v1/collections/c".to_owned(),
                _ => format!("/nowhere/{i}"),
            };
            let (status, _) = client.send(method, &path, None).await.unwrap();
            assert!(status >= 400, "{token} {path}: {status}");
            tokens.push(token);
        }
        let (status, text) = server
            .client
            .send(Method::GET, "/metrics", None)
            .await
            .unwrap();
        assert_eq!(status, 200);
        let text = String::from_utf8(text.to_vec()).unwrap();
        let series = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
        let requests = series("neardup_http_requests_total{");
        let histograms = series("neardup_http_request_duration_seconds_count{");
        assert!(
            requests <= 20,
            "{requests} request series after 1000 method tokens"
        );
        assert!(histograms <= 12, "{histograms} latency series");
        assert!(text.contains("method=\"other\""), "{text}");
        for token in &tokens {
            assert!(
                !text.contains(token.as_str()),
                "the method token {token} is a label"
            );
        }
        server.stop().await;
    });
}

#[test]
fn idle_and_half_sent_connections_are_closed_by_the_timeouts() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = HttpConfig {
            idle_timeout: Duration::from_millis(300),
            header_timeout: Duration::from_millis(300),
            body_timeout: Duration::from_millis(300),
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        server.create("c", json!({})).await;
        let at = address(&server.url);
        // A connection that never sends a byte.
        let mut idle = TcpStream::connect(&at).await.unwrap();
        assert_eq!(read_to_close(&mut idle).await, "");
        // A head that stops halfway.
        let mut half = TcpStream::connect(&at).await.unwrap();
        half.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow")
            .await
            .unwrap();
        assert!(!read_to_close(&mut half).await.contains("200 OK"));
        // A head sent one line at a time, each in time: the head as a whole is late.
        let mut slow = TcpStream::connect(&at).await.unwrap();
        slow.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
        let mut lines = 0;
        while lines < 2000 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if slow.write_all(b"X-Slow: 1\r\n").await.is_err() {
                break;
            }
            lines += 1;
        }
        assert!(lines < 2000, "a head trickling for 20 s was kept open");
        // A body that stops halfway is answered 408.
        let mut stalled = TcpStream::connect(&at).await.unwrap();
        stalled
            .write_all(
                b"POST /v1/collections/c/documents HTTP/1.1\r\nHost: x\r\n\
                  Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\": ",
            )
            .await
            .unwrap();
        let answer = read_to_close(&mut stalled).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("body_timeout"), "{answer}");
        // After an answer, a keep-alive connection that sends nothing more is closed.
        let mut kept = TcpStream::connect(&at).await.unwrap();
        kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let answer = read_to_close(&mut kept).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        // The service still serves.
        let (status, _) = server.call(Method::GET, "/healthz", None).await;
        assert_eq!(status, 200);
        server.stop().await;
    });
}

#[test]
fn at_the_connection_limit_idle_and_half_sent_connections_make_room_for_a_client() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = HttpConfig {
            max_connections: 32,
            idle_timeout: Duration::from_secs(3600),
            header_timeout: Duration::from_secs(3600),
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        let at = address(&server.url);
        let mut held = Vec::new();
        for i in 0..300 {
            let mut stream = TcpStream::connect(&at).await.unwrap();
            if i % 2 == 1 {
                stream
                    .write_all(b"POST /v1/collections/c/check HTTP/1.1\r\nHost: x\r\nContent-Le")
                    .await
                    .unwrap();
            }
            held.push(stream);
        }
        let client = neardup_service::client::Client::new(&server.url, None)
            .unwrap()
            .with_timeouts(HANG, HANG);
        for _ in 0..3 {
            let (status, answer) = client.json(Method::GET, "/healthz", None).await.unwrap();
            assert_eq!(status, 200, "{answer}");
        }
        // The oldest held connections were closed to make room.
        let closed = read_to_close(&mut held[0]).await;
        assert!(!closed.contains("200 OK"), "{closed}");
        drop(held);
        server.stop().await;
    });
}

#[test]
fn shutdown_closes_idle_connections_and_answers_the_busy_ones() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server.create("c", json!({})).await;
        let at = address(&server.url);
        let mut idle = Vec::new();
        for _ in 0..50 {
            idle.push(TcpStream::connect(&at).await.unwrap());
        }
        // A request whose body is still coming when shutdown starts is answered. The server
        // says `100 Continue` once the handler reads the body: the request is in flight.
        let mut busy = TcpStream::connect(&at).await.unwrap();
        let body = json!({"id": "late", "text": "a late but complete document"}).to_string();
        let head = format!(
            "POST /v1/collections/c/documents HTTP/1.1\r\nHost: x\r\nContent-Type: \
             application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        busy.write_all(head.as_bytes()).await.unwrap();
        let mut interim = [0u8; 25];
        tokio::time::timeout(HANG, busy.read_exact(&mut interim))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        let stop = server.stop.lock().unwrap().take();
        let _ = stop.unwrap().send(());
        // Once the listener is closed, shutdown has begun.
        tokio::time::timeout(HANG, async {
            while TcpStream::connect(&at).await.is_ok() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the listener stayed open");
        busy.write_all(body.as_bytes()).await.unwrap();
        let answer = read_to_close(&mut busy).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("\"stored\":true"), "{answer}");
        for mut stream in idle {
            assert_eq!(read_to_close(&mut stream).await, "");
        }
        server.stop().await;
    });
}

#[test]
fn a_body_repeating_a_key_is_refused_naming_it() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server.create("c", json!({})).await;
        for (path, body, field) in [
            (
                "/v1/collections/c/documents",
                r#"{"id": "a", "text": "first text here", "id": "b"}"#,
                "id",
            ),
            (
                "/v1/collections/c/documents/batch",
                r#"{"documents": [{"id": "a", "text": "x"}, {"id": "b", "text": "y", "text": "z"}]}"#,
                "documents[1].text",
            ),
            ("/v1/collections/c/check", r#"{"text": "x", "limit": 1, "limit": 5}"#, "limit"),
            ("/v1/collections/d", r#"{"method": "simhash", "method": "minhash"}"#, "method"),
        ] {
            let method = if path.ends_with("/d") {
                Method::PUT
            } else {
                Method::POST
            };
            let (status, answer) = server
                .client
                .send(method, path, Some(body.as_bytes().to_vec()))
                .await
                .unwrap();
            let answer: Value = serde_json::from_slice(&answer).unwrap();
            assert_eq!(status, 400, "{body}: {answer}");
            assert_eq!(answer["error"]["field"], field, "{body}: {answer}");
            assert!(
                answer["error"]["message"].as_str().unwrap().contains("appears twice"),
                "{answer}"
            );
        }
        // Nothing was stored or created.
        let (status, _) = server.call(Method::GET, "/v1/collections/c/documents/a", None).await;
        assert_eq!(status, 404);
        let (status, _) = server.call(Method::GET, "/v1/collections/d", None).await;
        assert_eq!(status, 404);
        server.stop().await;
    });
}

/// The head of the answer to a raw `GET path` (with `token`, if any), lower-cased.
async fn head_of(url: &str, path: &str, token: Option<&str>) -> String {
    let mut stream = TcpStream::connect(address(url)).await.unwrap();
    let authorization = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n{authorization}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = read_to_close(&mut stream).await;
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.to_ascii_lowercase()
}

#[test]
fn every_answer_forbids_framing_sniffing_and_foreign_scripts() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let token = "the-admin-token-0123";
        let config = HttpConfig {
            token: Some(token.into()),
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        server.create("c", json!({})).await;
        // The console, a JSON answer, a 401 from the authentication layer, a 404 from the
        // fallback, the health check and the metrics text.
        for (path, given, status) in [
            ("/", None, "200"),
            ("/v1/collections/c", Some(token), "200"),
            ("/v1/collections/c", None, "401"),
            ("/no/such/route", Some(token), "404"),
            ("/healthz", None, "200"),
            ("/metrics", Some(token), "200"),
        ] {
            let head = head_of(&server.url, path, given).await;
            assert!(
                head.starts_with(&format!("http/1.1 {status}")),
                "{path}: {head}"
            );
            assert!(
                head.contains("\r\nx-content-type-options: nosniff"),
                "{path}: {head}"
            );
            assert!(head.contains("\r\nx-frame-options: deny"), "{path}: {head}");
            let policy = head
                .lines()
                .find_map(|line| line.strip_prefix("content-security-policy: "))
                .unwrap_or_else(|| panic!("{path}: no content-security-policy: {head}"));
            assert!(
                policy.contains("frame-ancestors 'none'"),
                "{path}: {policy}"
            );
            assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
            if path == "/" {
                assert!(policy.contains("default-src 'self'"), "{policy}");
                assert!(policy.contains("script-src 'sha256-"), "{policy}");
            } else {
                assert!(policy.contains("default-src 'none'"), "{path}: {policy}");
            }
        }
        server.stop().await;
    });
}
