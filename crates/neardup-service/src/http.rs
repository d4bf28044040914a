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
//! Connections are served by `http/connections.rs`: idle, header and body timeouts and a
//! connection limit. Metrics labels come from closed sets (the routes of the table, the
//! methods the service knows), so no request can add a series.

mod auth;
mod body;
mod connections;
mod headers;
mod metrics;
mod routes;
mod strict_json;
pub mod tokens;

pub use connections::{default_max_connections, open_files_limit, raise_open_files_limit};
pub use tokens::{Grant, Scope, Tokens};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::Router;
use serde::Serialize;

use crate::api::routes as route;
use crate::error::ServiceError;
use crate::Service;
use metrics::Metrics;
use routes::{
    check_batch, check_one, collection_activity, create_collection, delete_batch_named_document,
    delete_document, drop_collection, get_batch_named_document, get_document, healthz,
    insert_batch, insert_one, list_collections, method_not_allowed, not_found, openapi,
    show_collection,
};

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
    /// The most memory the collections' stream learning may take together
    /// (`--learning-memory`; [`crate::learning_budget`]).
    pub learning_memory: u64,
    /// A frozen index level of at least this many documents is written to a level file
    /// (`--level-file-docs`; [`crate::LEVEL_FILE_DOCS`]).
    pub level_file_docs: usize,
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
            learning_memory: crate::learning_budget::default_learning_memory(),
            level_file_docs: crate::LEVEL_FILE_DOCS,
        }
    }
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

fn ok(status: StatusCode, body: impl Serialize) -> Answer {
    Ok((status, axum::Json(body)).into_response())
}

/// The console (`GET /`): one page, no build step, no CDN, that reads the API with the
/// token typed into it (the same scopes as any client): collections with their sizes,
/// rates and duplicate ratios over time, and a box to check a text against a collection.
/// `?collection=NAME&check=TEXT` checks on load. The page holds no data: it needs no token.
/// Its `Content-Security-Policy` allows its own inline script and style only (`http/headers.rs`).
const CONSOLE: &str = include_str!("http/console.html");

async fn console() -> Response {
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                axum::http::header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("no-cache"),
            ),
            (
                axum::http::header::CONTENT_SECURITY_POLICY,
                headers::CONSOLE_POLICY.clone(),
            ),
        ],
        CONSOLE,
    )
        .into_response()
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
        .route(route::CONSOLE, get(console))
        .route(route::HEALTH, get(healthz))
        .route(route::METRICS, get(metrics::metrics))
        .route(route::OPENAPI, get(openapi))
        .route(route::COLLECTIONS, get(list_collections))
        .route(
            route::COLLECTION,
            put(create_collection)
                .get(show_collection)
                .delete(drop_collection),
        )
        .route(route::DOCUMENTS, post(insert_one))
        .route(
            route::DOCUMENTS_BATCH,
            post(insert_batch)
                .get(get_batch_named_document)
                .delete(delete_batch_named_document),
        )
        .route(route::DOCUMENT, get(get_document).delete(delete_document))
        .route(route::ACTIVITY, get(collection_activity))
        .route(route::CHECK, post(check_one))
        .route(route::CHECK_BATCH, post(check_batch))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::authenticate,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            metrics::observe,
        ))
        .layer(DefaultBodyLimit::max(limit))
        // Outermost: every answer, a refusal by the layers above included, gets them.
        .layer(middleware::map_response(headers::secure))
        .with_state(state)
}

/// True when `addr` is a loopback address (authentication is optional only there).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Serves `service` on `listener` until `shutdown` completes, then closes the idle
/// connections, lets the in-flight requests finish and closes every collection (their
/// queues drain first). Connections are bounded by the timeouts and the limit of `config`
/// (see `http/connections.rs`).
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
            learning_memory: config.learning_memory,
            level_file_docs: config.level_file_docs,
            ..crate::ServiceOptions::default()
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

#[cfg(test)]
mod openapi_tests {
    //! The OpenAPI document against the types of [`crate::api`]: for every route, each
    //! schema's properties and required keys equal the fields of its type, so that a field
    //! added to one and not the other fails here.

    use std::collections::BTreeSet;

    use serde::de::DeserializeOwned;
    use serde_json::{json, Value};

    use super::body::FIELDS;
    use super::OPENAPI;
    use crate::api::*;
    use crate::settings::{RetentionBy, Settings};

    type Keys = BTreeSet<String>;

    fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
        match schema["$ref"].as_str() {
            Some(path) => {
                let name = path.trim_start_matches("#/components/schemas/");
                resolve(doc, &doc["components"]["schemas"][name])
            }
            None => schema,
        }
    }

    fn properties(schema: &Value) -> Keys {
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn required(schema: &Value) -> Keys {
        schema["required"]
            .as_array()
            .map(|r| r.iter().map(|k| k.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }

    fn keys(value: &Value) -> Keys {
        value.as_object().unwrap().keys().cloned().collect()
    }

    /// An answer's schema against two samples of its type: `full` (every optional field
    /// given) has every property, `minimal` (none given) the required ones; objects inside
    /// are compared the same way. A `oneOf` is compared variant by variant in [`components`].
    fn check_answer(doc: &Value, schema: &Value, full: &Value, minimal: &Value, at: &str) {
        let schema = resolve(doc, schema);
        if schema.get("oneOf").is_some() {
            return;
        }
        assert_eq!(properties(schema), keys(full), "{at}: properties");
        assert_eq!(required(schema), keys(minimal), "{at}: required");
        for (key, property) in schema["properties"].as_object().unwrap() {
            let property = resolve(doc, property);
            let at = format!("{at}.{key}");
            match (&full[key], &minimal[key]) {
                (Value::Object(_), Value::Object(_)) if property.get("properties").is_some() => {
                    check_answer(doc, property, &full[key], &minimal[key], &at)
                }
                (Value::Array(f), Value::Array(m)) if !f.is_empty() && !m.is_empty() => {
                    check_answer(doc, &property["items"], &f[0], &m[0], &at)
                }
                _ => {}
            }
        }
    }

    /// A request's schema against its type: the properties are the fields of a full sample
    /// and the fields the server checks; a field is required when the type refuses a body
    /// without it; an unknown field is refused by both.
    fn check_request<T: serde::Serialize + DeserializeOwned>(
        doc: &Value,
        schema: &Value,
        full: T,
        name: &str,
    ) {
        let schema = resolve(doc, schema);
        let full = serde_json::to_value(full).unwrap();
        assert_eq!(properties(schema), keys(&full), "{name}: properties");
        let checked = FIELDS.iter().find(|(n, _)| *n == name).unwrap().1;
        let checked: Keys = checked.iter().map(|f| (*f).to_owned()).collect();
        assert_eq!(checked, keys(&full), "{name}: the server's checks");
        let needed: Keys = keys(&full)
            .into_iter()
            .filter(|key| {
                let mut body = full.clone();
                body.as_object_mut().unwrap().remove(key);
                serde_json::from_value::<T>(body).is_err()
            })
            .collect();
        assert_eq!(required(schema), needed, "{name}: required");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let mut body = full.clone();
        body["not_a_field"] = json!(1);
        assert!(serde_json::from_value::<T>(body).is_err(), "{name}");
    }

    fn settings(full: bool) -> Settings {
        Settings {
            method: "simhash".into(),
            params: [("max_distance".to_owned(), "3".to_owned())].into(),
            retention: Some("48h".into()),
            retention_by: RetentionBy::Insert,
            keep_text: false,
            partition_documents: 1000,
            frequency_window: full.then_some(100_000),
            frequency_warmup: full.then_some(1000),
            frequency_memory: full.then_some(1 << 20),
        }
    }

    fn collection(failed: Option<String>) -> Value {
        let full = failed.is_some();
        let stats = Stats {
            failed,
            learning: full.then(|| {
                Box::new(crate::api::StreamLearning {
                    max_df: Some(50),
                    ..Default::default()
                })
            }),
            ..Stats::default()
        };
        let collection = CollectionAnswer {
            name: "c".into(),
            settings: settings(full),
            stats,
        };
        serde_json::to_value(collection).unwrap()
    }

    fn inserted(stored: bool) -> Inserted {
        Inserted {
            id: "a".into(),
            stored,
            duplicate_of: (!stored).then(|| "b".into()),
            similarity: (!stored).then_some(0.9),
            distance: (!stored).then_some(2),
        }
    }

    fn error(field: Option<&str>) -> ErrorDetail {
        ErrorDetail {
            code: "invalid_value".into(),
            message: "m".into(),
            field: field.map(str::to_owned),
        }
    }

    fn document(full: bool) -> Value {
        let document = StoredDocument {
            id: "a".into(),
            time: "2026-11-23T08:00:00.000Z".into(),
            inserted: "2026-11-23T08:00:00.000Z".into(),
            fingerprint: full.then(|| "00000000000000ff".into()),
            max_distance: full.then_some(3),
            expires: full.then(|| "2026-11-25T08:00:00.000Z".into()),
            text: full.then(|| "t".into()),
        };
        serde_json::to_value(document).unwrap()
    }

    fn found(distance: Option<u32>) -> Found {
        Found {
            id: "a".into(),
            similarity: 0.9,
            distance,
        }
    }

    fn to_value(value: impl serde::Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    /// The answer of a route on success: a full and a minimal sample.
    fn answer(method: &str, path: &str) -> Option<(Value, Value)> {
        let matches = |distance| {
            to_value(Matches {
                matches: vec![found(distance)],
            })
        };
        Some(match (method, path) {
            ("get", "/healthz") => (
                json!({"status": "degraded", "message": "m"}),
                to_value(Health {
                    status: "ok".into(),
                    message: None,
                }),
            ),
            ("get", "/v1/collections") => (
                json!({"collections": [collection(Some("failed".into()))]}),
                json!({"collections": [collection(None)]}),
            ),
            ("put" | "get", "/v1/collections/{name}") => {
                (collection(Some("failed".into())), collection(None))
            }
            ("delete", "/v1/collections/{name}") => {
                let dropped = to_value(Dropped {
                    name: "c".into(),
                    dropped: true,
                });
                (dropped.clone(), dropped)
            }
            ("post", "/v1/collections/{name}/documents") => {
                (to_value(inserted(false)), to_value(inserted(true)))
            }
            ("post", "/v1/collections/{name}/documents/batch") => {
                let results = vec![BatchItem::Inserted(inserted(true))];
                let batch = to_value(InsertBatchAnswer { results });
                (batch.clone(), batch)
            }
            ("post", "/v1/collections/{name}/check") => (matches(Some(2)), matches(None)),
            ("post", "/v1/collections/{name}/check/batch") => {
                let results = |distance| {
                    let results = vec![Matches {
                        matches: vec![found(distance)],
                    }];
                    to_value(CheckBatchAnswer { results })
                };
                (results(Some(2)), results(None))
            }
            ("get", "/v1/collections/{name}/documents/{id}") => (document(true), document(false)),
            ("delete", "/v1/collections/{name}/documents/{id}") => {
                let deleted = to_value(Deleted {
                    id: "a".into(),
                    deleted: true,
                });
                (deleted.clone(), deleted)
            }
            ("get", "/v1/collections/{name}/activity") => {
                let activity = |full: bool| {
                    to_value(crate::api::Activity {
                        recent_duplicates: vec![crate::api::RecentDuplicate {
                            time: "2026-11-28T00:00:00Z".into(),
                            id: "b".into(),
                            duplicate_of: "a".into(),
                            similarity: 0.9,
                            distance: full.then_some(2),
                            text: full.then(|| "t".into()),
                        }],
                        sample_seconds: 10,
                        history: vec![crate::api::Sample {
                            time_ms: 1,
                            documents: 1,
                            stored: 1,
                            duplicates: 1,
                            checks: 0,
                        }],
                    })
                };
                (activity(true), activity(false))
            }
            ("get", "/metrics" | "/v1/openapi.json") => return None,
            _ => panic!("{method} {path}: a documented route this test does not know"),
        })
    }

    /// Checks the request body of a route against its type.
    fn check_body(doc: &Value, method: &str, path: &str, schema: Option<&Value>) {
        let insert = InsertRequest {
            id: "a".into(),
            text: "t".into(),
            time: Some(json!(1.5)),
        };
        match (method, path, schema) {
            ("post", "/v1/collections/{name}/documents", Some(schema)) => {
                check_request(doc, schema, insert, "InsertRequest")
            }
            ("post", "/v1/collections/{name}/documents/batch", Some(schema)) => {
                let batch = InsertBatchRequest {
                    documents: vec![insert],
                };
                check_request(doc, schema, batch, "InsertBatchRequest")
            }
            ("post", "/v1/collections/{name}/check", Some(schema)) => {
                let check = CheckRequest {
                    text: "t".into(),
                    limit: Some(3),
                };
                check_request(doc, schema, check, "CheckRequest")
            }
            ("post", "/v1/collections/{name}/check/batch", Some(schema)) => {
                let check = CheckBatchRequest {
                    texts: vec!["t".into()],
                    limit: Some(3),
                };
                check_request(doc, schema, check, "CheckBatchRequest")
            }
            ("put", "/v1/collections/{name}", Some(schema)) => {
                // The service's keys; the method's parameters come beside them.
                let schema = resolve(doc, schema);
                let mut stored = keys(&to_value(settings(true)));
                stored.remove("params");
                assert_eq!(properties(schema), stored, "Settings");
                assert!(schema["additionalProperties"].is_object());
            }
            (_, _, None) => {}
            _ => panic!("{method} {path}: a request body this test does not know"),
        }
    }

    #[test]
    fn every_route_is_described_by_the_types_it_reads_and_answers() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        let mut routes = 0;
        for (path, operations) in doc["paths"].as_object().unwrap() {
            for (method, operation) in operations.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                routes += 1;
                let body = &operation["requestBody"]["content"]["application/json"]["schema"];
                check_body(&doc, method, path, (!body.is_null()).then_some(body));
                for (status, response) in operation["responses"].as_object().unwrap() {
                    let schema = &response["content"]["application/json"]["schema"];
                    if status.starts_with('4') || status.starts_with('5') {
                        let name = schema["$ref"].as_str();
                        assert_eq!(name, Some("#/components/schemas/Error"), "{method} {path}");
                    } else if let Some((full, minimal)) = answer(method, path) {
                        let at = format!("{method} {path} {status}");
                        check_answer(&doc, schema, &full, &minimal, &at);
                    }
                }
            }
        }
        assert_eq!(routes, 14, "the routes of the router");
    }

    #[test]
    fn the_documented_methods_are_those_a_collection_takes() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        let method = &doc["components"]["schemas"]["Settings"]["properties"]["method"];
        let documented: Keys = method["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap().to_owned())
            .collect();
        let taken: Keys = neardup_core::registry::methods()
            .iter()
            .filter(|m| Settings::from_json(&json!({ "method": m.name })).is_ok())
            .map(|m| m.name.to_owned())
            .collect();
        assert_eq!(documented, taken);
    }

    #[test]
    fn every_variant_is_described_by_its_type() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        let schema = |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") });
        let unavailable = UnavailableCollection {
            name: "d".into(),
            unavailable: true,
            error: "e".into(),
        };
        let refused = |field| Refused {
            error: error(field),
            id: "a".into(),
            status: 422,
        };
        let error_answer = |field| ErrorAnswer {
            error: error(field),
        };
        for (name, full, minimal) in [
            ("Collection", collection(Some("f".into())), collection(None)),
            (
                "UnavailableCollection",
                to_value(&unavailable),
                to_value(&unavailable),
            ),
            (
                "Inserted",
                to_value(inserted(false)),
                to_value(inserted(true)),
            ),
            (
                "Refused",
                to_value(refused(Some("time"))),
                to_value(refused(None)),
            ),
            (
                "Error",
                to_value(error_answer(Some("id"))),
                to_value(error_answer(None)),
            ),
        ] {
            check_answer(&doc, &schema(name), &full, &minimal, name);
        }
    }
}
