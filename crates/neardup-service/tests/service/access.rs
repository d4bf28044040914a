//! Scoped tokens (issue 28, item 13): each scope is refused everything outside it (403), an
//! unknown or missing token everything but `/healthz` (401).

use neardup_service::client::{Client, Method};
use neardup_service::http::{HttpConfig, Tokens};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{rt, Server, NEWS};

const SINGLE: &str = "the-single-admin-token";
const ADMIN_ALL: &str = "admin-all-0123456789";
const ADMIN_C: &str = "admin-c-0123456789ab";
const WRITE_C: &str = "write-c-0123456789ab";
const READ_C: &str = "read-c-0123456789abc";
const READ_ALL: &str = "read-all-0123456789a";
const WRITE_ALL: &str = "write-all-0123456789";

const TOKENS_FILE: &str = "\
# scope collection token
admin * admin-all-0123456789
admin c admin-c-0123456789ab
write c write-c-0123456789ab
read  c read-c-0123456789abc
read  * read-all-0123456789a
write * write-all-0123456789
";

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Scope {
    Read,
    Write,
    Admin,
}

/// The grants of each token, written out independently of the service's table.
fn grants(token: &str) -> &'static [(Scope, Option<&'static str>)] {
    match token {
        SINGLE | ADMIN_ALL => &[(Scope::Admin, None)],
        ADMIN_C => &[(Scope::Admin, Some("c"))],
        WRITE_C => &[(Scope::Write, Some("c"))],
        READ_C => &[(Scope::Read, Some("c"))],
        READ_ALL => &[(Scope::Read, None)],
        WRITE_ALL => &[(Scope::Write, None)],
        _ => &[],
    }
}

fn allowed(token: &str, scope: Scope, collection: Option<&str>) -> bool {
    grants(token).iter().any(|(granted, on)| {
        *granted >= scope && (on.is_none() || (*on == collection && collection.is_some()))
    })
}

/// A request and what it needs: a scope (`None`: any valid token) on a collection (`None`:
/// on every collection).
struct Route {
    method: Method,
    path: String,
    body: Option<Value>,
    scope: Option<Scope>,
    collection: Option<String>,
}

fn route(method: Method, path: String, body: Option<Value>, scope: Option<Scope>) -> Route {
    // The collection is the path's third segment, when the route names one.
    let collection = path
        .strip_prefix("/v1/collections/")
        .map(|rest| rest.split('/').next().unwrap_or_default().to_owned());
    Route {
        method,
        path,
        body,
        scope,
        collection,
    }
}

/// Every route, on collection `name`; `n` makes the inserted ids new.
fn routes(name: &str, n: usize) -> Vec<Route> {
    let c = format!("/v1/collections/{name}");
    let (read, write, admin) = (Some(Scope::Read), Some(Scope::Write), Some(Scope::Admin));
    let one = json!({"id": format!("one-{n}"), "text": format!("{NEWS}{n}")});
    let many = json!({"documents": [{"id": format!("many-{n}"), "text": "x"}]});
    vec![
        route(Method::GET, "/v1/collections".into(), None, read),
        route(Method::GET, "/metrics".into(), None, read),
        route(Method::GET, "/v1/openapi.json".into(), None, None),
        route(Method::GET, c.clone(), None, read),
        route(Method::GET, format!("{c}/activity"), None, read),
        route(
            Method::POST,
            format!("{c}/check"),
            Some(json!({"text": NEWS})),
            read,
        ),
        route(
            Method::POST,
            format!("{c}/check/batch"),
            Some(json!({"texts": [NEWS]})),
            read,
        ),
        route(Method::GET, format!("{c}/documents/a"), None, read),
        route(Method::GET, format!("{c}/documents/batch"), None, read),
        route(Method::POST, format!("{c}/documents"), Some(one), write),
        route(
            Method::POST,
            format!("{c}/documents/batch"),
            Some(many),
            write,
        ),
        route(Method::DELETE, format!("{c}/documents/zz"), None, write),
        route(Method::DELETE, format!("{c}/documents/batch"), None, write),
        route(Method::PUT, c.clone(), Some(json!({})), admin),
        route(Method::DELETE, c, None, admin),
    ]
}

/// The status and the answer, `null` when it is not JSON (`/metrics`).
async fn ask(client: &Client, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let body = body.map(|b| b.to_string().into_bytes());
    let (status, answer) = client.send(method, path, body).await.unwrap();
    (
        status,
        serde_json::from_slice(&answer).unwrap_or(Value::Null),
    )
}

async fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let config = HttpConfig {
        token: Some(SINGLE.into()),
        tokens: Tokens::parse(TOKENS_FILE, "tokens").unwrap(),
        ..HttpConfig::default()
    };
    let server = Server::start(dir.path(), config).await;
    (dir, server)
}

#[test]
fn each_scope_is_refused_everything_outside_it() {
    rt().block_on(async {
        let (_dir, server) = start().await;
        let tokens = [
            SINGLE, ADMIN_ALL, ADMIN_C, WRITE_C, READ_C, READ_ALL, WRITE_ALL,
        ];
        let mut n = 0;
        for token in tokens {
            let client = Client::new(&server.url, Some(token.to_owned())).unwrap();
            for name in ["c", "d"] {
                for Route {
                    method,
                    path,
                    body,
                    scope,
                    collection,
                } in routes(name, n)
                {
                    n += 1;
                    // Each route runs against an existing collection (a drop is undone).
                    server.create_if_absent(name).await;
                    let (status, answer) = ask(&client, method.clone(), &path, body).await;
                    let expected = match scope {
                        None => true,
                        Some(scope) => allowed(token, scope, collection.as_deref()),
                    };
                    if expected {
                        assert!(
                            status != 401 && status != 403,
                            "{token} {method} {path}: {status} {answer}"
                        );
                    } else {
                        assert_eq!(status, 403, "{token} {method} {path}: {answer}");
                        assert_eq!(answer["error"]["code"], "forbidden");
                        let message = answer["error"]["message"].as_str().unwrap();
                        let Some(scope) = scope else { unreachable!() };
                        let name = ["read", "write", "admin"][scope as usize];
                        assert!(
                            message.contains(&format!("needs the {name} scope")),
                            "{message}"
                        );
                    }
                }
            }
        }
        server.stop().await;
    });
}

#[test]
fn an_unknown_or_missing_token_is_refused_everything_but_healthz() {
    rt().block_on(async {
        let (_dir, server) = start().await;
        server.create_if_absent("c").await;
        let unknown = [
            None,
            Some("unknown-0123456789ab"),
            Some("ADMIN-ALL-0123456789"),
            Some("admin-all-012345678"),
            Some("admin-all-01234567890"),
        ];
        for token in unknown {
            let client = Client::new(&server.url, token.map(str::to_owned)).unwrap();
            for Route {
                method, path, body, ..
            } in routes("c", 0)
            {
                let (status, answer) = ask(&client, method.clone(), &path, body).await;
                assert_eq!(status, 401, "{token:?} {method} {path}: {answer}");
                assert_eq!(answer["error"]["code"], "unauthorized");
            }
            let (status, answer) = client.json(Method::GET, "/healthz", None).await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(
                answer.get("collections"),
                None,
                "/healthz tells how many: {answer}"
            );
        }
        server.stop().await;
    });
}

/// Sends `authorization` as the header of `GET /v1/collections`; the status.
async fn status_with(url: &str, authorization: &str) -> u16 {
    let mut stream = TcpStream::connect(url.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!(
        "GET /v1/collections HTTP/1.1\r\nHost: x\r\n{authorization}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_bearer_scheme_is_read_in_any_case() {
    rt().block_on(async {
        let (_dir, server) = start().await;
        for header in [
            format!("Authorization: Bearer {READ_ALL}"),
            format!("authorization: bearer {READ_ALL}"),
            format!("AUTHORIZATION: BEARER {READ_ALL}"),
            format!("Authorization: bEaReR   {READ_ALL}"),
        ] {
            assert_eq!(status_with(&server.url, &header).await, 200, "{header}");
        }
        for header in [
            format!("Authorization: Basic {READ_ALL}"),
            format!("Authorization: Bearer{READ_ALL}"),
            format!("Authorization: {READ_ALL}"),
            "Authorization: Bearer".to_owned(),
            format!("Authorization: Bearer {READ_C}"),
        ] {
            let expected = if header.ends_with(READ_C) { 403 } else { 401 };
            assert_eq!(
                status_with(&server.url, &header).await,
                expected,
                "{header}"
            );
        }
        server.stop().await;
    });
}

impl Server {
    /// Creates collection `name` with the default settings unless it exists.
    async fn create_if_absent(&self, name: &str) {
        let path = format!("/v1/collections/{name}");
        let (status, answer) = self.call(Method::PUT, &path, Some(json!({}))).await;
        assert!(status == 200 || status == 201, "{answer}");
    }
}

/// `GET path` without a token: the whole answer (status line, headers, body).
async fn get_without_token(url: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(url.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[test]
fn the_console_page_needs_no_token_and_holds_no_data() {
    rt().block_on(async {
        let (_dir, server) = start().await;
        server.create_if_absent("secret-collection-name").await;
        let answer = get_without_token(&server.url, "/").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let lower = answer.to_ascii_lowercase();
        assert!(
            lower.contains("content-type: text/html; charset=utf-8"),
            "{answer}"
        );
        assert!(answer.contains("<title>neardup console</title>"));
        // The page reads the API with the token typed into it; it carries nothing itself.
        assert!(!answer.contains("secret-collection-name"));
        assert!(answer.contains("\"/v1/collections\""));
        // Everything else still needs a token.
        let listed = get_without_token(&server.url, "/v1/collections").await;
        assert!(listed.starts_with("HTTP/1.1 401"), "{listed}");
        let other = get_without_token(&server.url, "/index.html").await;
        assert!(other.starts_with("HTTP/1.1 401"), "{other}");
        server.stop().await;
    });
}
