//! A small HTTP/1.1 client of the service: single calls, the JSONL bulk loader, and the load
//! generator behind `neardup client bench`.
//!
//! Every call has a connect timeout and an answer timeout (a server that accepts and never
//! answers is an error, not a hang), and every answer is checked against what its route
//! promises ([`answers`]): a batch must answer each document sent, in order.

pub mod answers;
mod bench;
mod load;

use std::time::Duration;

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
pub use hyper::Method;
use hyper::Request;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::{
    routes, CheckRequest, CollectionAnswer, Collections, Deleted, Dropped, ErrorAnswer,
    InsertRequest, Inserted, Matches, StoredDocument,
};
use answers::Expected;
pub use bench::{bench, bench_text, read_corpus, BenchOptions, BenchReport, Latency};
pub use load::{load, LoadOptions, LoadReport, LoadSummary};

/// How long a connection may take to open, by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answer may take, from sending the request to its last byte, by default.
pub const DEFAULT_ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an idle pooled connection is kept: well under the service's idle timeout (30 s
/// by default), so that the client never sends on a connection the service is closing.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the service answered a call of a route: its status, and the route's answer or the
/// error body it sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered<T> {
    /// The HTTP status.
    pub status: u16,
    /// The answer of a 2xx, or the error of a 4xx or 5xx.
    pub answer: Result<T, ErrorAnswer>,
}

impl<T: Serialize> Answered<T> {
    /// The answer as JSON, keys in the order the service writes them.
    pub fn to_json(&self) -> Value {
        let json = match &self.answer {
            Ok(answer) => serde_json::to_value(answer),
            Err(error) => serde_json::to_value(error),
        };
        json.unwrap_or(Value::Null)
    }

    /// The status and the answer as JSON, to show.
    pub fn shown(&self) -> (u16, Value) {
        (self.status, self.to_json())
    }
}

/// A client error: the connection, or an answer that is not what the route promises.
#[derive(Debug)]
pub struct ClientError(pub String);

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

/// A connection pool to one service.
#[derive(Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>,
    answer_timeout: Duration,
}

/// The base of every request path: `http://host:port` and the path prefix of `url`, if any,
/// without a trailing `/`.
fn base_url(url: &str) -> Result<String, ClientError> {
    let bad = |why: &str| {
        ClientError(format!(
            "--url {url:?}: {why} (expected http://host:port or http://host:port/prefix; the \
             service speaks plain HTTP: put TLS in a proxy in front of it)"
        ))
    };
    let uri: hyper::Uri = url.parse().map_err(|_| bad("not a URL"))?;
    if uri.scheme_str() != Some("http") {
        return Err(bad("not an http:// URL"));
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("a user name in the URL is not sent; use --token-file"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(bad("a query or fragment cannot prefix the routes"));
    }
    let prefix = uri.path().trim_end_matches('/');
    Ok(format!("http://{authority}{prefix}"))
}

fn connector(connect_timeout: Duration) -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(connect_timeout));
    connector
}

/// An error and its causes, as one line (`client error (Connect): tcp connect error:
/// Connection refused (os error 111)`).
fn causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

impl Client {
    /// A client of the service at `url` (`http://127.0.0.1:8080`, or with a path prefix when
    /// a proxy serves it under one: `http://proxy/neardup`), sending `token` when given, with
    /// the default timeouts.
    ///
    /// # Errors
    /// A URL that is not `http://host:port` with an optional path.
    pub fn new(url: &str, token: Option<String>) -> Result<Client, ClientError> {
        let base = base_url(url)?;
        let http = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector(DEFAULT_CONNECT_TIMEOUT));
        Ok(Client {
            base,
            token,
            http,
            answer_timeout: DEFAULT_ANSWER_TIMEOUT,
        })
    }

    /// The same client with other timeouts: `connect` to open a connection, `answer` from
    /// sending a request to the last byte of its answer.
    pub fn with_timeouts(mut self, connect: Duration, answer: Duration) -> Client {
        self.http = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector(connect));
        self.answer_timeout = answer;
        self
    }

    /// Sends a request with a raw body; the status and the body.
    ///
    /// # Errors
    /// The connection fails, or the whole answer does not arrive within the answer timeout.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes), ClientError> {
        let url = format!("{}{path}", self.base);
        let seconds = self.answer_timeout.as_secs_f64();
        tokio::time::timeout(
            self.answer_timeout,
            self.exchange(method.clone(), &url, body),
        )
        .await
        .map_err(|_| {
            ClientError(format!(
                "{method} {url}: no complete answer within {seconds} s (--timeout)"
            ))
        })?
    }

    async fn exchange(
        &self,
        method: Method,
        url: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes), ClientError> {
        let mut request = Request::builder().method(method.clone()).uri(url);
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| ClientError(format!("{method} {url}: {e}")))?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| ClientError(format!("{method} {url}: {}", causes(&e))))?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| {
                ClientError(format!(
                    "{method} {url}: reading the answer: {}",
                    causes(&e)
                ))
            })?
            .to_bytes();
        Ok((status, bytes))
    }

    /// Sends JSON and reads JSON.
    ///
    /// # Errors
    /// The connection fails or the answer is not JSON.
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), ClientError> {
        let bytes = body.map(|b| serde_json::to_vec(b).unwrap_or_default());
        self.json_bytes(method, path, bytes).await
    }

    /// Sends a request body of [`crate::api`] and reads JSON.
    ///
    /// # Errors
    /// The connection fails or the answer is not JSON.
    pub async fn send_json<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: &B,
    ) -> Result<(u16, Value), ClientError> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        self.json_bytes(method, path, Some(bytes)).await
    }

    async fn json_bytes(
        &self,
        method: Method,
        path: &str,
        bytes: Option<Vec<u8>>,
    ) -> Result<(u16, Value), ClientError> {
        let (status, answer) = self.send(method.clone(), path, bytes).await?;
        let value = serde_json::from_slice(&answer).map_err(|e| {
            ClientError(format!(
                "{method} {path}: status {status}, the answer is not JSON ({e}): {}",
                String::from_utf8_lossy(&answer[..answer.len().min(200)])
            ))
        })?;
        Ok((status, value))
    }

    /// Creates collection `name` with `settings` (`PUT`; `{}` for the defaults).
    ///
    /// # Errors
    /// The connection fails, or the answer is not what the route promises.
    pub async fn create_collection(
        &self,
        name: &str,
        settings: &Value,
    ) -> Result<Answered<CollectionAnswer>, ClientError> {
        let path = routes::fill(routes::COLLECTION, name, None);
        let body = serde_json::to_vec(settings).unwrap_or_default();
        (self.typed(Method::PUT, &path, Some(body), Expected::Collection)).await
    }

    /// The collections (`GET`).
    ///
    /// # Errors
    /// As [`Client::create_collection`].
    pub async fn collections(&self) -> Result<Answered<Collections>, ClientError> {
        (self.typed(
            Method::GET,
            routes::COLLECTIONS,
            None,
            Expected::Collections,
        ))
        .await
    }

    /// Collection `name`: its settings and counts (`GET`).
    ///
    /// # Errors
    /// As [`Client::create_collection`].
    pub async fn collection(&self, name: &str) -> Result<Answered<CollectionAnswer>, ClientError> {
        let path = routes::fill(routes::COLLECTION, name, None);
        (self.typed(Method::GET, &path, None, Expected::Collection)).await
    }

    /// Drops collection `name` with its documents (`DELETE`).
    ///
    /// # Errors
    /// As [`Client::create_collection`]; also an answer that says it was not dropped.
    pub async fn drop_collection(&self, name: &str) -> Result<Answered<Dropped>, ClientError> {
        let path = routes::fill(routes::COLLECTION, name, None);
        (self.typed(Method::DELETE, &path, None, Expected::Dropped)).await
    }

    /// Checks and inserts one document into collection `name` (`POST`).
    ///
    /// # Errors
    /// As [`Client::create_collection`].
    pub async fn insert(
        &self,
        name: &str,
        document: &InsertRequest,
    ) -> Result<Answered<Inserted>, ClientError> {
        let path = routes::fill(routes::DOCUMENTS, name, None);
        let body = serde_json::to_vec(document).unwrap_or_default();
        (self.typed(Method::POST, &path, Some(body), Expected::Inserted)).await
    }

    /// The matches of one text in collection `name` (`POST`).
    ///
    /// # Errors
    /// As [`Client::create_collection`].
    pub async fn check(
        &self,
        name: &str,
        request: &CheckRequest,
    ) -> Result<Answered<Matches>, ClientError> {
        let path = routes::fill(routes::CHECK, name, None);
        let body = serde_json::to_vec(request).unwrap_or_default();
        (self.typed(Method::POST, &path, Some(body), Expected::Matches)).await
    }

    /// Stored document `id` of collection `name` (`GET`).
    ///
    /// # Errors
    /// As [`Client::create_collection`].
    pub async fn document(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Answered<StoredDocument>, ClientError> {
        let path = routes::fill(routes::DOCUMENT, name, Some(id));
        (self.typed(Method::GET, &path, None, Expected::Document)).await
    }

    /// Deletes stored document `id` of collection `name` (`DELETE`).
    ///
    /// # Errors
    /// As [`Client::create_collection`]; also an answer that says it was not deleted.
    pub async fn delete_document(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Answered<Deleted>, ClientError> {
        let path = routes::fill(routes::DOCUMENT, name, Some(id));
        (self.typed(Method::DELETE, &path, None, Expected::Deleted)).await
    }

    /// Sends `body` to `path` and reads the route's answer, checked against what it
    /// promises (`expected` on success, an error body on failure).
    async fn typed<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        expected: Expected,
    ) -> Result<Answered<T>, ClientError> {
        let answered = self.json_bytes(method.clone(), path, body).await?;
        let (status, answer) = self.checked(&method, path, answered, expected)?;
        // `checked` read the same shapes: these cannot fail on what it passed.
        let wrong = |e: serde_json::Error| {
            ClientError(format!(
                "{method} {}{path}: status {status}: {e}",
                self.base
            ))
        };
        let answer = match status {
            200..=299 => Ok(T::deserialize(answer).map_err(wrong)?),
            _ => Err(ErrorAnswer::deserialize(answer).map_err(wrong)?),
        };
        Ok(Answered { status, answer })
    }

    fn checked(
        &self,
        method: &Method,
        path: &str,
        (status, answer): (u16, Value),
        expected: Expected,
    ) -> Result<(u16, Value), ClientError> {
        answers::check(expected, status, &answer).map_err(|why| {
            ClientError(format!(
                "{method} {}{path}: status {status}: {why} (is --url a neardup service?)",
                self.base
            ))
        })?;
        Ok((status, answer))
    }
}

pub use crate::api::routes::segment;

/// A tokio runtime for the CLI's client commands.
///
/// # Errors
/// The runtime cannot start.
pub fn runtime() -> Result<tokio::runtime::Runtime, ClientError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ClientError(format!("cannot start the async runtime: {e}")))
}
