//! What stands in front of the HTTP transport (seed 003): Host and Origin validation against the
//! allowed hosts (DNS-rebinding protection — not a substitute for authentication), a body-size cap, and
//! the mandatory Bearer token, compared in constant time.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// The largest request body accepted.
pub const MAX_BODY: usize = 256 << 10;

/// The rules.
#[derive(Clone)]
pub struct Guard {
    token: Arc<Vec<u8>>,
    allowed: Arc<Vec<String>>,
}

impl Guard {
    /// Rules for this token and these host patterns (`host`, `host:port`, `host:*`).
    pub fn new(token: &str, allowed: &[String]) -> Self {
        Self { token: Arc::new(token.as_bytes().to_vec()), allowed: Arc::new(allowed.to_vec()) }
    }

    /// Whether `host` (a Host header, or the host part of an Origin) is allowed.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let (name, port) = split_host(&host);
        self.allowed.iter().any(|pattern| {
            let (want_name, want_port) = split_host(pattern);
            want_name == name && (want_port.is_none() || want_port == Some("*") || want_port == port)
        })
    }

    fn token_matches(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()) else { return false };
        if value.len() < 7 || !value[..7].eq_ignore_ascii_case(b"bearer ") {
            return false;
        }
        let given = &value[7..];
        given.len() == self.token.len() && bool::from(given.ct_eq(&self.token))
    }
}

/// `[::1]:8000` → (`[::1]`, `8000`); `nas:8001` → (`nas`, `8001`); `nas` → (`nas`, none).
fn split_host(host: &str) -> (&str, Option<&str>) {
    if host.starts_with('[') {
        return match host.find("]:") {
            Some(at) => (&host[..=at], Some(&host[at + 2..])),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    }
}

fn refuse(status: StatusCode, message: &'static str) -> Response {
    let mut response = (status, axum::Json(serde_json::json!({"error": message}))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The middleware: Host, Origin, size, token, in that order.
pub async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !guard.host_allowed(host) {
        return refuse(StatusCode::FORBIDDEN, "this Host is not allowed");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let origin_host = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/')).unwrap_or_default();
        if !guard.host_allowed(origin_host) {
            return refuse(StatusCode::FORBIDDEN, "this Origin is not allowed");
        }
    }
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large");
    }
    if !guard.token_matches(headers) {
        return refuse(StatusCode::UNAUTHORIZED, "a valid Bearer token is required");
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let guard = Guard::new("t", &["localhost:*".into(), "127.0.0.1:*".into(), "nas:8001".into(), "[::1]:*".into()]);
        assert!(guard.host_allowed("localhost:8000"));
        assert!(guard.host_allowed("LOCALHOST:1"));
        assert!(guard.host_allowed("nas:8001"));
        assert!(!guard.host_allowed("nas:8002"));
        assert!(guard.host_allowed("[::1]:8000"));
        assert!(!guard.host_allowed("evil.example:8000"));
        assert!(!guard.host_allowed(""));
        assert!(!guard.host_allowed("localhost.evil.example:80"));
    }
}
