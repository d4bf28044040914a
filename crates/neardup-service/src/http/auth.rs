//! Authentication: which scope each route needs ([`needs`]), and the middleware that checks
//! the request's bearer token against it (scopes in [`super::tokens`]).

use axum::extract::{MatchedPath, RawPathParams, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::RequestExt as _;

use super::tokens::{self, Scope};
use super::{Failure, Shared};
use crate::error::ServiceError;

/// What a route needs of the request's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Nothing (`/healthz`, the console page: it holds no data).
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
    use crate::api::routes::{
        ACTIVITY, CHECK, CHECK_BATCH, COLLECTION, COLLECTIONS, CONSOLE, DOCUMENT, DOCUMENTS,
        DOCUMENTS_BATCH as BATCH, HEALTH, METRICS,
    };
    let Some(route) = route else {
        return Needs::AnyToken;
    };
    match (route, method.as_str()) {
        (HEALTH, _) | (CONSOLE, "GET" | "HEAD") => Needs::Nothing,
        (METRICS | COLLECTIONS, _) => Needs::OnAll(Scope::Read),
        (COLLECTION, "PUT" | "DELETE") => Needs::OnCollection(Scope::Admin),
        (COLLECTION | ACTIVITY, "GET" | "HEAD") => Needs::OnCollection(Scope::Read),
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

pub(super) async fn authenticate(
    State(state): State<Shared>,
    mut request: Request,
    next: Next,
) -> Response {
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
