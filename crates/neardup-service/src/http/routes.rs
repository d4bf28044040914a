//! The handlers of the routes: each reads its body into a request type of [`crate::api`]
//! ([`super::body`]), does the work off the async threads, and answers with an answer type.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::body::{self, json_body};
use super::{ok, Answer, Failure, Shared, OPENAPI};
use crate::api::{
    BatchItem, CheckBatchAnswer, Collections, Deleted, Dropped, Health, InsertBatchAnswer,
    Inserted, ListedCollection, Matches, Refused, UnavailableCollection,
};
use crate::collection::NewDocument;
use crate::error::ServiceError;
use crate::settings::Settings;

pub(super) async fn not_found() -> Failure {
    Failure(ServiceError::new(
        404,
        "not_found",
        "no such route; see GET /v1/openapi.json",
    ))
}

pub(super) async fn method_not_allowed() -> Failure {
    Failure(ServiceError::new(
        405,
        "method_not_allowed",
        "this route does not take that method; see GET /v1/openapi.json",
    ))
}

/// Runs blocking work (sketching, reads, waiting for the queue) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ServiceError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServiceError::new(500, "internal", format!("a worker failed: {e}")))?
}

pub(super) async fn healthz(State(state): State<Shared>) -> Answer {
    // Unauthenticated: says whether every collection opened, never which or how many.
    let body = if state.service.unavailable().is_empty() {
        Health {
            status: "ok".into(),
            message: None,
        }
    } else {
        Health {
            status: "degraded".into(),
            message: Some(
                "some collections could not be opened at start and are unavailable (the \
                 others serve); GET /v1/collections names them"
                    .into(),
            ),
        }
    };
    ok(StatusCode::OK, body)
}

pub(super) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

pub(super) async fn list_collections(State(state): State<Shared>) -> Answer {
    let service = Arc::clone(&state.service);
    let collections = blocking(move || {
        let mut list = Vec::new();
        for name in service.names() {
            if let Ok(collection) = service.collection(&name) {
                list.push(ListedCollection::Open(Box::new(
                    service.describe(collection.as_ref()),
                )));
            }
        }
        for (name, error) in service.unavailable() {
            list.push(ListedCollection::Unavailable(UnavailableCollection {
                name,
                unavailable: true,
                error,
            }));
        }
        list.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(list)
    })
    .await?;
    ok(StatusCode::OK, Collections { collections })
}

pub(super) async fn create_collection(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let settings = Settings::from_json(&json_body(body)?)?;
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

pub(super) async fn show_collection(
    State(state): State<Shared>,
    Path(name): Path<String>,
) -> Answer {
    let collection = state.service.collection(&name)?;
    let service = Arc::clone(&state.service);
    let described = blocking(move || Ok(service.describe(collection.as_ref()))).await?;
    ok(StatusCode::OK, described)
}

pub(super) async fn collection_activity(
    State(state): State<Shared>,
    Path(name): Path<String>,
) -> Answer {
    let collection = state.service.collection(&name)?;
    let activity = blocking(move || Ok(collection.activity())).await?;
    ok(StatusCode::OK, activity)
}

pub(super) async fn drop_collection(
    State(state): State<Shared>,
    Path(name): Path<String>,
) -> Answer {
    let service = Arc::clone(&state.service);
    let name_for = name.clone();
    let dropped = blocking(move || service.drop_collection(&name_for)).await?;
    if !dropped {
        return Err(ServiceError::unknown_collection(&name).into());
    }
    ok(
        StatusCode::OK,
        Dropped {
            name,
            dropped: true,
        },
    )
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

pub(super) async fn insert_one(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let request = body::insert_request(json_body(body)?, &state.config)?;
    let document = body::new_document(request)?;
    let mut answers = submit(&state, &name, vec![document]).await?;
    match answers.pop() {
        Some(Ok(inserted)) => ok(StatusCode::OK, inserted),
        Some(Err(error)) => Err(error.into()),
        None => Err(ServiceError::new(500, "internal", "no answer").into()),
    }
}

pub(super) async fn insert_batch(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let request = body::insert_batch_request(json_body(body)?, &state.config)?;
    let ids: Vec<String> = request.documents.iter().map(|d| d.id.clone()).collect();
    let documents = request
        .documents
        .into_iter()
        .map(body::new_document)
        .collect::<Result<Vec<_>, _>>()?;
    let answers = submit(&state, &name, documents).await?;
    let results = answers
        .into_iter()
        .zip(ids)
        .map(|(answer, id)| match answer {
            Ok(inserted) => BatchItem::Inserted(inserted),
            Err(error) => BatchItem::Refused(Refused {
                error: error.body().error,
                id,
                status: error.status,
            }),
        })
        .collect();
    ok(StatusCode::OK, InsertBatchAnswer { results })
}

pub(super) async fn check_one(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let request = body::check_request(json_body(body)?, &state.config)?;
    let limit = body::limit(request.limit, &state.config);
    let collection = state.service.collection(&name)?;
    let mut found = blocking(move || collection.check(&[request.text], limit)).await?;
    let matches = found.pop().unwrap_or_default();
    ok(StatusCode::OK, Matches { matches })
}

pub(super) async fn check_batch(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let request = body::check_batch_request(json_body(body)?, &state.config)?;
    let limit = body::limit(request.limit, &state.config);
    let collection = state.service.collection(&name)?;
    let found = blocking(move || collection.check(&request.texts, limit)).await?;
    let results = found
        .into_iter()
        .map(|matches| Matches { matches })
        .collect();
    ok(StatusCode::OK, CheckBatchAnswer { results })
}

pub(super) async fn get_document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Answer {
    document_answer(&state, &name, id).await
}

pub(super) async fn get_batch_named_document(
    State(state): State<Shared>,
    Path(name): Path<String>,
) -> Answer {
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

pub(super) async fn delete_document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Answer {
    delete_answer(&state, &name, id).await
}

pub(super) async fn delete_batch_named_document(
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
    ok(StatusCode::OK, Deleted { id, deleted: true })
}
