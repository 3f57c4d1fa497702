//! The one HTTP error type. Every failure a client can see is rendered as
//! `{"error":{"type":…,"message":…}}` (SPEC 2.9), never a panic, a stack trace, a path or a secret.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer: status, machine-readable type and a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// `error.type` in the body.
    pub kind: &'static str,
    /// `error.message` in the body.
    pub message: String,
}

impl ApiError {
    /// Any status, type and message.
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self { status, kind, message: message.into() }
    }

    /// 400 `invalid_request_error`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// 400 for a body that is not the JSON shape the route expects.
    pub fn malformed(detail: impl std::fmt::Display) -> Self {
        Self::bad_request(format!("the request is malformed ({detail})"))
    }

    /// 401 with the exact body of strata-wire C-B1.
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "authentication_error", "missing or wrong API key")
    }

    /// 403 `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 that says nothing about what was looked for.
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "not found")
    }

    /// 413 for a body over the configured cap.
    pub fn too_large(limit_bytes: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            format!("the request body is over the limit of {} MiB", limit_bytes >> 20),
        )
    }

    /// 415 for the own-page routes that accept only JSON.
    pub fn unsupported_media_type() -> Self {
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "send application/json")
    }

    /// 500 without detail; the detail goes to the log, not to the client.
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "the server could not answer this request")
    }

    /// The JSON body, also used inside an SSE stream when the error comes after the headers.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {"type": self.kind, "message": self.message}})
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

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.kind, self.message)
    }
}

impl std::error::Error for ApiError {}
