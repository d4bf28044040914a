//! The service's errors: each has an HTTP status, a stable code, a message, and the request
//! field it concerns, and is answered as `{"error": {"code", "message", "field"}}` (its
//! [`body`](ServiceError::body), an [`ErrorAnswer`](crate::api::ErrorAnswer)).

use std::fmt;

use crate::store::StoreError;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// The HTTP status.
    pub status: u16,
    /// A stable, machine-readable code (`unknown_collection`, `id_exists`, ...).
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
    /// The request field concerned (`text`, `documents[3].id`), when there is one.
    pub field: Option<String>,
}

impl ServiceError {
    /// A new error.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError {
            status,
            code,
            message: message.into(),
            field: None,
        }
    }

    /// The same error about `field`.
    pub fn field(mut self, field: impl Into<String>) -> ServiceError {
        self.field = Some(field.into());
        self
    }

    /// The same error about `field` inside `prefix` (`documents[3]` + `id`).
    pub fn within(mut self, prefix: &str) -> ServiceError {
        self.field = Some(match self.field.take() {
            Some(field) => format!("{prefix}.{field}"),
            None => prefix.to_owned(),
        });
        self
    }

    /// 400: the request cannot be read (bad JSON, wrong types).
    pub fn bad_request(message: impl Into<String>) -> ServiceError {
        ServiceError::new(400, "bad_request", message)
    }

    /// 422: a value is understood but refused.
    pub fn invalid(field: &str, message: impl Into<String>) -> ServiceError {
        ServiceError::new(422, "invalid_value", message).field(field)
    }

    /// 404 for a collection; the way to create it is suggested only for a legal name.
    pub fn unknown_collection(name: &str) -> ServiceError {
        let message = match crate::check_name(name) {
            Ok(()) => format!("no collection {name:?}; create it with PUT /v1/collections/{name}"),
            // "no collection \"../x\": a collection name is 1 to 64 of ..."
            Err(refused) => format!("no collection {}", refused.message),
        };
        ServiceError::new(404, "unknown_collection", message)
    }

    /// 503: the service is shutting down or the collection is being dropped.
    pub fn unavailable(message: impl Into<String>) -> ServiceError {
        ServiceError::new(503, "unavailable", message)
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(
                f,
                "{} ({}, field {field}): {}",
                self.status, self.code, self.message
            ),
            None => write!(f, "{} ({}): {}", self.status, self.code, self.message),
        }
    }
}

impl std::error::Error for ServiceError {}

impl From<StoreError> for ServiceError {
    fn from(error: StoreError) -> ServiceError {
        if error.disk_full {
            ServiceError::new(507, "disk_full", error.to_string())
        } else {
            ServiceError::new(500, "store_error", error.to_string())
        }
    }
}

impl From<neardup_core::Error> for ServiceError {
    fn from(error: neardup_core::Error) -> ServiceError {
        let field = error.parameter().to_owned();
        ServiceError::invalid(&field, error.to_string())
    }
}
