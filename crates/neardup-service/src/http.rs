//! The HTTP front end (axum): routes, authentication, limits, errors and metrics.
//!
//! Routes (version 1; the OpenAPI document at `GET /v1/openapi.json` describes each body):
//!
//! | route | what |
//! |---|---|
//! | `PUT /v1/collections/{name}` | create with settings (`{}` = defaults) |
//! | `GET /v1/collections` | list |
//! | `GET /v1/collections/{name}` | settings and counts |
//! | `DELETE /v1/collections/{name}` | drop with its documents |
//! | `POST /v1/collections/{name}/documents` | check-and-insert one document |
//! | `POST /v1/collections/{name}/documents/batch` | check-and-insert many, answered in order |
//! | `POST /v1/collections/{name}/check` | check one text |
//! | `POST /v1/collections/{name}/check/batch` | check many texts |
//! | `GET`, `DELETE /v1/collections/{name}/documents/{id}` | one stored document |
//! | `GET /healthz`, `GET /metrics`, `GET /v1/openapi.json` | health, Prometheus, OpenAPI |
//!
//! Every error is answered as `{"error": {"code", "message", "field"}}` with a 4xx or 5xx
//! status. With tokens, every route but `/healthz` needs `Authorization: Bearer <token>` and
//! a token whose scope covers it ([`tokens`]: read, write, admin, per collection or for all):
//! 401 without a known token, 403 outside its scope.
//!
//! Connections are served by [`connections`]: idle, header and body timeouts and a
//! connection limit. Metrics labels come from closed sets (the routes of the table, the
//! methods the service knows), so no request can add a series.

mod connections;
mod strict_json;
pub mod tokens;

pub use connections::{default_max_connections, open_files_limit, raise_open_files_limit};
pub use tokens::{Grant, Scope, Tokens};

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, RawPathParams, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::RequestExt as _;
use axum::Router;
use serde_json::{json, Map, Value};

use crate::collection::{Found, Inserted, NewDocument};
use crate::error::ServiceError;
use crate::settings::{parse_time, Settings};
use crate::Service;

/// The OpenAPI document served at `GET /v1/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

/// How long a connection may wait for a request, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request's head may take from its first byte, by default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body may send nothing, by default.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Limits and authentication of the HTTP front end.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A bearer token with the admin scope on every collection (`--token-file`,
    /// `NEARDUP_TOKEN`).
    pub token: Option<String>,
    /// Scoped tokens (`--tokens-file`). With neither `token` nor `tokens` the service does
    /// not authenticate (allowed on loopback only).
    pub tokens: Tokens,
    /// The most open connections; at the limit a new one closes the idlest idle one.
    pub max_connections: usize,
    /// The most time from the first byte of a request to the end of its head.
    pub header_timeout: Duration,
    /// The most time a connection waits for a request (the first, or the next after an
    /// answer).
    pub idle_timeout: Duration,
    /// The most time a request body may send nothing.
    pub body_timeout: Duration,
    /// The largest request body in bytes.
    pub max_body_bytes: usize,
    /// The most documents or texts in one batch.
    pub max_batch: usize,
    /// The longest text in bytes.
    pub max_text_bytes: usize,
    /// The longest id in bytes.
    pub max_id_bytes: usize,
    /// The most matches a check returns.
    pub max_matches: usize,
    /// The most collections the service holds (`--max-collections`).
    pub max_collections: usize,
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            token: None,
            tokens: Tokens::new(),
            max_connections: default_max_connections(),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_body_bytes: 64 << 20,
            max_batch: 10_000,
            max_text_bytes: 1 << 20,
            max_id_bytes: 512,
            max_matches: 100,
            max_collections: crate::DEFAULT_MAX_COLLECTIONS,
        }
    }
}

/// Latency buckets of the histograms, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, seconds: f64) {
        for (bucket, &le) in self.buckets.iter().zip(&BUCKETS) {
            if seconds <= le {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }
}

#[derive(Default)]
struct Metrics {
    /// (route, method, status) -> count.
    requests: Mutex<std::collections::BTreeMap<(String, String, u16), u64>>,
    /// route -> latency.
    latency: Mutex<std::collections::BTreeMap<String, Arc<Histogram>>>,
}

struct AppState {
    service: Arc<Service>,
    config: HttpConfig,
    /// `config.tokens` and `config.token` (admin on every collection); empty: no
    /// authentication.
    tokens: Tokens,
    metrics: Metrics,
    started: Instant,
}

type Shared = Arc<AppState>;

/// An error as an HTTP answer.
struct Failure(ServiceError);

impl From<ServiceError> for Failure {
    fn from(error: ServiceError) -> Failure {
        Failure(error)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0.body())).into_response()
    }
}

type Answer = Result<Response, Failure>;

fn ok(status: StatusCode, body: Value) -> Answer {
    Ok((status, axum::Json(body)).into_response())
}

/// The router of the service.
pub fn router(service: Arc<Service>, config: HttpConfig) -> Router {
    let limit = config.max_body_bytes;
    let mut tokens = config.tokens.clone();
    if let Some(token) = &config.token {
        tokens.grant_admin(token);
    }
    let state = Arc::new(AppState {
        service,
        config,
        tokens,
        metrics: Metrics::default(),
        started: Instant::now(),
    });
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/collections", get(list_collections))
        .route(
            "/v1/collections/{name}",
            put(create_collection)
                .get(show_collection)
                .delete(drop_collection),
        )
        .route("/v1/collections/{name}/documents", post(insert_one))
        .route(
            "/v1/collections/{name}/documents/batch",
            post(insert_batch)
                .get(get_batch_named_document)
                .delete(delete_batch_named_document),
        )
        .route(
            "/v1/collections/{name}/documents/{id}",
            get(get_document).delete(delete_document),
        )
        .route("/v1/collections/{name}/check", post(check_one))
        .route("/v1/collections/{name}/check/batch", post(check_batch))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            authenticate,
        ))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), observe))
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

async fn not_found() -> Failure {
    Failure(ServiceError::new(
        404,
        "not_found",
        "no such route; see GET /v1/openapi.json",
    ))
}

async fn method_not_allowed() -> Failure {
    Failure(ServiceError::new(
        405,
        "method_not_allowed",
        "this route does not take that method; see GET /v1/openapi.json",
    ))
}

/// What a route needs of the request's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Nothing (`/healthz`).
    Nothing,
    /// Any known token (`/v1/openapi.json`, and routes that answer 404 or 405 anyway).
    AnyToken,
    /// A scope on every collection (`/metrics`, the list of collections).
    OnAll(Scope),
    /// A scope on the collection named in the path.
    OnCollection(Scope),
}

/// The table of what each route and method needs (scopes in [`tokens`]).
fn needs(route: Option<&str>, method: &Method) -> Needs {
    const DOCUMENTS: &str = "/v1/collections/{name}/documents";
    const BATCH: &str = "/v1/collections/{name}/documents/batch";
    const DOCUMENT: &str = "/v1/collections/{name}/documents/{id}";
    const CHECK: &str = "/v1/collections/{name}/check";
    const CHECK_BATCH: &str = "/v1/collections/{name}/check/batch";
    let Some(route) = route else {
        return Needs::AnyToken;
    };
    match (route, method.as_str()) {
        ("/healthz", _) => Needs::Nothing,
        ("/metrics" | "/v1/collections", _) => Needs::OnAll(Scope::Read),
        ("/v1/collections/{name}", "PUT" | "DELETE") => Needs::OnCollection(Scope::Admin),
        ("/v1/collections/{name}", "GET" | "HEAD") => Needs::OnCollection(Scope::Read),
        (CHECK | CHECK_BATCH, "POST") => Needs::OnCollection(Scope::Read),
        (DOCUMENTS | BATCH, "POST") => Needs::OnCollection(Scope::Write),
        (BATCH | DOCUMENT, "GET" | "HEAD") => Needs::OnCollection(Scope::Read),
        (BATCH | DOCUMENT, "DELETE") => Needs::OnCollection(Scope::Write),
        _ => Needs::AnyToken,
    }
}

/// The token of an `Authorization` header: the scheme `Bearer` in any case (RFC 7235), one
/// or more spaces, the token.
fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

fn unauthorized() -> Response {
    let mut response = Failure(ServiceError::new(
        401,
        "unauthorized",
        "this service needs the header Authorization: Bearer <token> with a token it knows",
    ))
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

fn forbidden(method: &Method, route: &str, scope: Scope, collection: Option<&str>) -> Response {
    let on = match collection {
        Some(name) => format!("collection {name:?} (or on \"*\")"),
        None => "\"*\" (every collection)".to_owned(),
    };
    Failure(ServiceError::new(
        403,
        "forbidden",
        format!(
            "this token may not {method} {route}: that needs the {} scope on {on}; see the \
             scopes in docs/service.md",
            scope.name()
        ),
    ))
    .into_response()
}

async fn authenticate(State(state): State<Shared>, mut request: Request, next: Next) -> Response {
    if state.tokens.is_empty() {
        return next.run(request).await;
    }
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let needs = needs(route.as_deref(), request.method());
    if needs == Needs::Nothing {
        return next.run(request).await;
    }
    let Some(grants) = bearer(&request).and_then(|given| state.tokens.find(given.as_bytes()))
    else {
        return unauthorized();
    };
    let (scope, collection) = match needs {
        Needs::Nothing | Needs::AnyToken => return next.run(request).await,
        Needs::OnAll(scope) => (scope, None),
        Needs::OnCollection(scope) => {
            let params = request.extract_parts::<RawPathParams>().await.ok();
            let name = params
                .as_ref()
                .and_then(|p| p.iter().find(|(key, _)| *key == "name"))
                .map(|(_, value)| value.to_owned());
            (scope, name)
        }
    };
    if !tokens::allows(grants, scope, collection.as_deref()) {
        let route = route.unwrap_or_default();
        return forbidden(request.method(), &route, scope, collection.as_deref());
    }
    next.run(request).await
}

async fn observe(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = method_label(request.method()).to_owned();
    let start = Instant::now();
    let response = next.run(request).await;
    let seconds = start.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    {
        let mut requests = state
            .metrics
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *requests.entry((route.clone(), method, status)).or_default() += 1;
    }
    let histogram = {
        let mut latency = state
            .metrics
            .latency
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(latency.entry(route).or_default())
    };
    histogram.observe(seconds);
    response
}

/// The `method` label of a request: one of the methods the routes take, else `other` (a
/// label from the request itself would let each new token add a series forever).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        _ => "other",
    }
}

/// Reads a JSON body: an empty body is `null`; bad JSON, a repeated key, oversized and stalled
/// bodies are JSON errors.
fn json_body(body: Result<Bytes, BytesRejection>) -> Result<Value, ServiceError> {
    let bytes = body.map_err(|rejection| {
        if let Some(stalled) = stalled(&rejection) {
            return ServiceError::new(408, "body_timeout", stalled.to_string());
        }
        let status = rejection.status().as_u16();
        let code = if status == 413 {
            "body_too_large"
        } else {
            "bad_request"
        };
        ServiceError::new(status, code, rejection.body_text())
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    strict_json::parse(&bytes)
}

/// The stall behind a body that could not be read, if that is why.
fn stalled(rejection: &BytesRejection) -> Option<&connections::BodyStalled> {
    let mut error: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(current) = error {
        if let Some(stalled) = current.downcast_ref::<connections::BodyStalled>() {
            return Some(stalled);
        }
        error = current.source();
    }
    None
}

fn object(value: &Value) -> Result<&Map<String, Value>, ServiceError> {
    value
        .as_object()
        .ok_or_else(|| ServiceError::bad_request("the body must be a JSON object"))
}

fn refuse_unknown(object: &Map<String, Value>, known: &[&str]) -> Result<(), ServiceError> {
    match object.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(ServiceError::bad_request(format!(
            "unknown field (expected: {})",
            known.join(", ")
        ))
        .field(key.clone())),
        None => Ok(()),
    }
}

fn text_field(
    object: &Map<String, Value>,
    name: &str,
    config: &HttpConfig,
) -> Result<String, ServiceError> {
    text_value(object.get(name), name, config)
}

/// A text under the length limit; errors name `name`.
fn text_value(
    value: Option<&Value>,
    name: &str,
    config: &HttpConfig,
) -> Result<String, ServiceError> {
    match value {
        Some(Value::String(text)) => {
            if text.len() > config.max_text_bytes {
                return Err(ServiceError::new(
                    413,
                    "text_too_long",
                    format!(
                        "the text has {} bytes; the limit is {} (--max-text-bytes)",
                        text.len(),
                        config.max_text_bytes
                    ),
                )
                .field(name));
            }
            Ok(text.clone())
        }
        Some(other) => Err(ServiceError::bad_request(format!(
            "expected a string, got {}",
            kind(other)
        ))
        .field(name)),
        None => Err(ServiceError::bad_request("missing").field(name)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn document(value: &Value, config: &HttpConfig) -> Result<NewDocument, ServiceError> {
    let object = value.as_object().ok_or_else(|| {
        ServiceError::bad_request(format!("expected an object, got {}", kind(value)))
    })?;
    refuse_unknown(object, &["id", "text", "time"])?;
    let id = match object.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(other) => {
            return Err(ServiceError::bad_request(format!(
                "expected a string, got {}",
                kind(other)
            ))
            .field("id"))
        }
        None => return Err(ServiceError::bad_request("missing").field("id")),
    };
    if id.is_empty() || id.len() > config.max_id_bytes {
        return Err(ServiceError::invalid(
            "id",
            format!(
                "an id has 1 to {} bytes; this one has {}",
                config.max_id_bytes,
                id.len()
            ),
        ));
    }
    let text = text_field(object, "text", config)?;
    let time_ms = match object.get("time") {
        None | Some(Value::Null) => None,
        Some(value) => Some(parse_time(value).map_err(|m| {
            let status = if value.is_number() || value.is_string() {
                422
            } else {
                400
            };
            ServiceError::new(status, "invalid_value", m).field("time")
        })?),
    };
    Ok(NewDocument { id, text, time_ms })
}

fn limit(object: &Map<String, Value>, config: &HttpConfig) -> Result<usize, ServiceError> {
    match object.get("limit") {
        None | Some(Value::Null) => Ok(10.min(config.max_matches)),
        Some(value) => value
            .as_u64()
            .filter(|&n| n >= 1 && n as usize <= config.max_matches)
            .map(|n| n as usize)
            .ok_or_else(|| {
                ServiceError::invalid(
                    "limit",
                    format!(
                        "{value}: expected a whole number from 1 to {}",
                        config.max_matches
                    ),
                )
            }),
    }
}

fn batch<'a>(
    object: &'a Map<String, Value>,
    name: &str,
    config: &HttpConfig,
) -> Result<&'a [Value], ServiceError> {
    let items = match object.get(name) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ServiceError::bad_request(format!(
                "expected an array, got {}",
                kind(other)
            ))
            .field(name))
        }
        None => return Err(ServiceError::bad_request("missing").field(name)),
    };
    if items.len() > config.max_batch {
        return Err(ServiceError::new(
            413,
            "batch_too_large",
            format!(
                "{} items; a batch holds at most {} (--max-batch)",
                items.len(),
                config.max_batch
            ),
        )
        .field(name));
    }
    Ok(items)
}

/// Runs blocking work (sketching, reads, waiting for the queue) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ServiceError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServiceError::new(500, "internal", format!("a worker failed: {e}")))?
}

async fn healthz(State(state): State<Shared>) -> Answer {
    // Unauthenticated: says whether every collection opened, never which or how many.
    let body = if state.service.unavailable().is_empty() {
        json!({"status": "ok"})
    } else {
        json!({
            "status": "degraded",
            "message": "some collections could not be opened at start and are unavailable \
                        (the others serve); GET /v1/collections names them",
        })
    };
    ok(StatusCode::OK, body)
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn list_collections(State(state): State<Shared>) -> Answer {
    let service = Arc::clone(&state.service);
    let list = blocking(move || {
        let mut list = Vec::new();
        for name in service.names() {
            if let Ok(collection) = service.collection(&name) {
                list.push(service.describe(collection.as_ref()));
            }
        }
        for (name, error) in service.unavailable() {
            list.push(json!({"name": name, "unavailable": true, "error": error}));
        }
        list.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        Ok(list)
    })
    .await?;
    ok(StatusCode::OK, json!({"collections": list}))
}

async fn create_collection(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = json_body(body)?;
    let settings = Settings::from_json(&body)?;
    let service = Arc::clone(&state.service);
    let (created, described) = blocking(move || {
        let created = service.create(&name, settings)?;
        let collection = service.collection(&name)?;
        Ok((created, service.describe(collection.as_ref())))
    })
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    ok(status, described)
}

async fn show_collection(State(state): State<Shared>, Path(name): Path<String>) -> Answer {
    let collection = state.service.collection(&name)?;
    let service = Arc::clone(&state.service);
    let described = blocking(move || Ok(service.describe(collection.as_ref()))).await?;
    ok(StatusCode::OK, described)
}

async fn drop_collection(State(state): State<Shared>, Path(name): Path<String>) -> Answer {
    let service = Arc::clone(&state.service);
    let name_for = name.clone();
    let dropped = blocking(move || service.drop_collection(&name_for)).await?;
    if !dropped {
        return Err(ServiceError::unknown_collection(&name).into());
    }
    ok(StatusCode::OK, json!({"name": name, "dropped": true}))
}

async fn submit(
    state: &Shared,
    name: &str,
    documents: Vec<NewDocument>,
) -> Result<Vec<Result<Inserted, ServiceError>>, ServiceError> {
    let collection = state.service.collection(name)?;
    let receiver = blocking(move || collection.submit(documents)).await?;
    receiver
        .await
        .map_err(|_| ServiceError::unavailable("the collection closed before answering"))
}

async fn insert_one(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = json_body(body)?;
    let document = document(&body, &state.config)?;
    let mut answers = submit(&state, &name, vec![document]).await?;
    match answers.pop() {
        Some(Ok(inserted)) => ok(StatusCode::OK, inserted.to_json()),
        Some(Err(error)) => Err(error.into()),
        None => Err(ServiceError::new(500, "internal", "no answer").into()),
    }
}

async fn insert_batch(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = json_body(body)?;
    let object = object(&body)?;
    refuse_unknown(object, &["documents"])?;
    let items = batch(object, "documents", &state.config)?;
    let documents = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            document(item, &state.config).map_err(|e| e.within(&format!("documents[{i}]")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<String> = documents.iter().map(|d| d.id.clone()).collect();
    let answers = submit(&state, &name, documents).await?;
    let results: Vec<Value> = answers
        .into_iter()
        .zip(ids)
        .map(|(answer, id)| match answer {
            Ok(inserted) => inserted.to_json(),
            Err(error) => {
                let mut body = error.body();
                body["id"] = json!(id);
                body["status"] = json!(error.status);
                body
            }
        })
        .collect();
    ok(StatusCode::OK, json!({"results": results}))
}

fn matches_json(found: &[Found]) -> Value {
    json!({"matches": found.iter().map(Found::to_json).collect::<Vec<_>>()})
}

async fn check_one(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = json_body(body)?;
    let object = object(&body)?;
    refuse_unknown(object, &["text", "limit"])?;
    let text = text_field(object, "text", &state.config)?;
    let limit = limit(object, &state.config)?;
    let collection = state.service.collection(&name)?;
    let mut found = blocking(move || collection.check(&[text], limit)).await?;
    ok(
        StatusCode::OK,
        matches_json(&found.pop().unwrap_or_default()),
    )
}

async fn check_batch(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = json_body(body)?;
    let object = object(&body)?;
    refuse_unknown(object, &["texts", "limit"])?;
    let items = batch(object, "texts", &state.config)?;
    let mut texts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        texts.push(text_value(
            Some(item),
            &format!("texts[{i}]"),
            &state.config,
        )?);
    }
    let limit = limit(object, &state.config)?;
    let collection = state.service.collection(&name)?;
    let found = blocking(move || collection.check(&texts, limit)).await?;
    let results: Vec<Value> = found.iter().map(|f| matches_json(f)).collect();
    ok(StatusCode::OK, json!({"results": results}))
}

async fn get_document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Answer {
    document_answer(&state, &name, id).await
}

async fn get_batch_named_document(State(state): State<Shared>, Path(name): Path<String>) -> Answer {
    document_answer(&state, &name, "batch".into()).await
}

async fn document_answer(state: &Shared, name: &str, id: String) -> Answer {
    let collection = state.service.collection(name)?;
    let id_for = id.clone();
    match blocking(move || collection.get(&id_for)).await? {
        Some(body) => ok(StatusCode::OK, body),
        None => Err(ServiceError::new(
            404,
            "unknown_document",
            format!("no document {id:?} in collection {name:?} (never stored, deleted or expired)"),
        )
        .into()),
    }
}

async fn delete_document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Answer {
    delete_answer(&state, &name, id).await
}

async fn delete_batch_named_document(
    State(state): State<Shared>,
    Path(name): Path<String>,
) -> Answer {
    delete_answer(&state, &name, "batch".into()).await
}

async fn delete_answer(state: &Shared, name: &str, id: String) -> Answer {
    let collection = state.service.collection(name)?;
    let id_for = id.clone();
    let receiver = blocking(move || collection.delete(&id_for)).await?;
    let deleted = receiver
        .await
        .map_err(|_| ServiceError::unavailable("the collection closed before answering"))??;
    if !deleted {
        return Err(ServiceError::new(
            404,
            "unknown_document",
            format!("no document {id:?} in collection {name:?}"),
        )
        .into());
    }
    ok(StatusCode::OK, json!({"id": id, "deleted": true}))
}

async fn metrics(State(state): State<Shared>) -> Response {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP neardup_uptime_seconds Seconds since the service started."
    );
    let _ = writeln!(out, "# TYPE neardup_uptime_seconds gauge");
    let _ = writeln!(
        out,
        "neardup_uptime_seconds {:.3}",
        state.started.elapsed().as_secs_f64()
    );
    let _ = writeln!(
        out,
        "# HELP neardup_http_requests_total HTTP requests by route, method and status."
    );
    let _ = writeln!(out, "# TYPE neardup_http_requests_total counter");
    {
        let requests = state
            .metrics
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for ((route, method, status), count) in requests.iter() {
            let _ = writeln!(
                out,
                "neardup_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {count}",
                escape(route)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP neardup_http_request_duration_seconds Request latency by route."
    );
    let _ = writeln!(
        out,
        "# TYPE neardup_http_request_duration_seconds histogram"
    );
    {
        let latency = state
            .metrics
            .latency
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (route, histogram) in latency.iter() {
            let route = escape(route);
            for (bucket, le) in histogram.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{le}\"}} {}",
                    bucket.load(Ordering::Relaxed)
                );
            }
            let count = histogram.count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_sum{{route=\"{route}\"}} {:.6}",
                histogram.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
            );
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_count{{route=\"{route}\"}} {count}"
            );
        }
    }
    let gauges: [(&str, &str, &str); 10] = [
        ("documents", "gauge", "Live stored documents."),
        ("partitions", "gauge", "Partitions (segment files) held."),
        ("disk_bytes", "gauge", "Bytes of the segment files."),
        (
            "memory_bytes",
            "gauge",
            "Approximate bytes of the in-memory indexes and ids.",
        ),
        ("stored", "counter", "Documents stored since start."),
        (
            "duplicates",
            "counter",
            "Inserts answered as duplicates since start.",
        ),
        (
            "refused",
            "counter",
            "Inserts refused (existing id, bad time, store error).",
        ),
        ("checks", "counter", "Texts checked since start."),
        (
            "groups",
            "counter",
            "Groups written, one sync each, since start.",
        ),
        ("expired", "counter", "Documents expired since start."),
    ];
    let service = Arc::clone(&state.service);
    let stats: Vec<(String, Value)> = tokio::task::spawn_blocking(move || {
        service
            .names()
            .into_iter()
            .filter_map(|name| {
                let collection = service.collection(&name).ok()?;
                Some((name, collection.stats()))
            })
            .collect()
    })
    .await
    .unwrap_or_default();
    for (key, kind, help) in gauges {
        let metric = if kind == "counter" {
            format!("neardup_collection_{key}_total")
        } else {
            format!("neardup_collection_{key}")
        };
        let _ = writeln!(out, "# HELP {metric} {help}");
        let _ = writeln!(out, "# TYPE {metric} {kind}");
        for (name, stats) in &stats {
            let _ = writeln!(
                out,
                "{metric}{{collection=\"{}\"}} {}",
                escape(name),
                stats[key].as_u64().unwrap_or(0)
            );
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// True when `addr` is a loopback address (authentication is optional only there).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Serves `service` on `listener` until `shutdown` completes, then closes the idle
/// connections, lets the in-flight requests finish and closes every collection (their
/// queues drain first). Connections are bounded by the timeouts and the limit of `config`
/// (see [`connections`]).
///
/// # Errors
/// None today: a failed accept is retried; the result is kept for callers.
pub async fn serve(
    service: Arc<Service>,
    config: HttpConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = connections::Limits {
        max_connections: config.max_connections,
        header_timeout: config.header_timeout,
        idle_timeout: config.idle_timeout,
        body_timeout: config.body_timeout,
    };
    let app = router(Arc::clone(&service), config);
    connections::serve(listener, app, limits, shutdown).await;
    let closing = Arc::clone(&service);
    let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    Ok(())
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// Runs the service on `listen` until SIGTERM or SIGINT, then drains: the address actually
/// bound is given to `ready` (port 0 picks one).
///
/// # Errors
/// No token while listening beyond loopback, an address that cannot be bound, a data folder
/// that cannot be opened.
pub fn run(
    data_dir: &std::path::Path,
    listen: &str,
    config: HttpConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServiceError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServiceError::new(500, "internal", format!("cannot start: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            ServiceError::invalid("listen", format!("{listen}: cannot listen: {e}"))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServiceError::invalid("listen", format!("{listen}: {e}")))?;
        if !is_loopback(&addr) && config.token.is_none() && config.tokens.is_empty() {
            return Err(ServiceError::invalid(
                "listen",
                format!(
                    "{addr} is reachable beyond this machine: give a token (--token-file, \
                     NEARDUP_TOKEN or --tokens-file) so that only its holders can write"
                ),
            ));
        }
        let dir = data_dir.to_owned();
        let options = crate::ServiceOptions {
            max_collections: config.max_collections,
        };
        let service = tokio::task::spawn_blocking(move || Service::open_with(&dir, options))
            .await
            .map_err(|e| ServiceError::new(500, "internal", e.to_string()))??;
        ready(addr);
        serve(service, config, listener, shutdown_signal())
            .await
            .map_err(|e| ServiceError::new(500, "internal", format!("the server failed: {e}")))
    })
}
