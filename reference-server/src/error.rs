//! The one HTTP error type. Every failure a client can see is rendered as
//! `{"error":{"type":…,"message":…}}` (SPEC 2.9), never a panic, a stack trace, a path or a secret.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// `error.type`: the machine-readable kinds of error a client can see (strata-wire C-B1, SPEC 2.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `invalid_request_error`: the request itself is wrong (400, 405, 408, 413, 415).
    InvalidRequest,
    /// `authentication_error`: the key is missing or wrong (401).
    Authentication,
    /// `forbidden`: a Host or Origin that is not allowed (403).
    Forbidden,
    /// `not_found`: nothing here (404).
    NotFound,
    /// `server_error`: the server could not answer (500, 503).
    Server,
}

impl ErrorKind {
    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest => "invalid_request_error",
            ErrorKind::Authentication => "authentication_error",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Server => "server_error",
        }
    }
}

/// An error answer: status, machine-readable type and a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// `error.type` in the body.
    pub kind: ErrorKind,
    /// `error.message` in the body.
    pub message: String,
}

impl ApiError {
    /// Any status, type and message.
    pub fn new(status: StatusCode, kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { status, kind, message: message.into() }
    }

    /// 400 `invalid_request_error`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorKind::InvalidRequest, message)
    }

    /// 400 for a body that is not the JSON shape the route expects.
    pub fn malformed(detail: impl std::fmt::Display) -> Self {
        Self::bad_request(format!("the request is malformed ({detail})"))
    }

    /// 401 with the exact body of strata-wire C-B1.
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ErrorKind::Authentication, "missing or wrong API key")
    }

    /// 403 `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorKind::Forbidden, message)
    }

    /// 404 that says nothing about what was looked for.
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorKind::NotFound, "not found")
    }

    /// 413 for a body over the configured cap.
    pub fn too_large(limit_bytes: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::InvalidRequest,
            format!("the request body is over the limit of {} MiB", limit_bytes >> 20),
        )
    }

    /// 415 for the own-page routes that accept only JSON.
    pub fn unsupported_media_type() -> Self {
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, ErrorKind::InvalidRequest, "send application/json")
    }

    /// 500 without detail; the detail goes to the log, not to the client.
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, ErrorKind::Server, "the server could not answer this request")
    }

    /// The JSON body, also used inside an SSE stream when the error comes after the headers.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {"type": self.kind.as_str(), "message": self.message}})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body().to_string();
        let mut response = (self.status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}
