//! What stands in front of the HTTP transport (seed 003): Host and Origin validation against the
//! allowed hosts (DNS-rebinding protection — not a substitute for authentication), a body-size cap, and
//! the mandatory Bearer token, compared in constant time. Every refusal says which setting admits the
//! request, and is logged once per client address and value (a bounded set, so a flood cannot grow it).

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use subtle::ConstantTimeEq;

/// The largest request body accepted.
pub const MAX_BODY: usize = 256 << 10;
/// How many distinct (client, refusal, value) lines are logged before further refusals go unlogged.
pub const MAX_LOGGED_REFUSALS: usize = 1024;

/// The refusal for a Host that is not allowed.
pub const HOST_REFUSED: &str = "this Host is not allowed: add the host name and port clients use to MCP_ALLOWED_HOSTS \
     (e.g. nas-name:8102), or set SERVER_IP to the NAS address they use, then recreate the container";
/// The refusal for an Origin that is not allowed.
pub const ORIGIN_REFUSED: &str = "this Origin is not allowed: its host must be in MCP_ALLOWED_HOSTS or be SERVER_IP";
/// The refusal for a missing or wrong token.
pub const TOKEN_REFUSED: &str =
    "a valid Bearer token is required: send 'Authorization: Bearer <VISION_MCP_TOKEN from the server's .env>'";

/// The refusals already logged: (client address, what was refused, the value sent).
type LoggedRefusals = HashSet<(Option<IpAddr>, &'static str, String)>;

/// The rules.
#[derive(Clone)]
pub struct Guard {
    token: Arc<Vec<u8>>,
    allowed: Arc<Vec<String>>,
    logged: Arc<Mutex<LoggedRefusals>>,
    body_timeout: std::time::Duration,
}

impl Guard {
    /// Rules for this token and these host patterns (`host`, `host:port`, `host:*`).
    pub fn new(token: &str, allowed: &[String]) -> Self {
        Self {
            token: Arc::new(token.as_bytes().to_vec()),
            allowed: Arc::new(allowed.to_vec()),
            logged: Arc::new(Mutex::new(HashSet::new())),
            body_timeout: BODY_TIMEOUT,
        }
    }

    /// The same rules with another body timeout (tests use a short one).
    pub fn with_body_timeout(mut self, body_timeout: std::time::Duration) -> Self {
        self.body_timeout = body_timeout;
        self
    }

    /// Logs a refusal the first time this client is refused for this reason and value. The value is a
    /// Host or Origin as sent (never a token); it is cut to 200 characters.
    fn log_refusal(&self, client: Option<IpAddr>, reason: &'static str, value: &str) {
        let value: String = value.chars().take(200).collect();
        let Ok(mut logged) = self.logged.lock() else { return };
        if logged.len() >= MAX_LOGGED_REFUSALS || !logged.insert((client, reason, value.clone())) {
            return;
        }
        drop(logged);
        let client = client.map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
        match reason {
            "token" => tracing::warn!(%client, "refused a request without a valid token (VISION_MCP_TOKEN)"),
            _ => {
                tracing::warn!(%client, %reason, %value, "refused a request: {reason} {value:?} is not allowed (MCP_ALLOWED_HOSTS / SERVER_IP)")
            }
        }
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
    // A 403 or 401 body names the setting to change; nothing in it echoes the request.
    let mut response = (status, axum::Json(serde_json::json!({"error": message}))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The middleware: Host, Origin, size, token, in that order.
pub async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let client = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip());
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !guard.host_allowed(host) {
        guard.log_refusal(client, "Host", host);
        return refuse(StatusCode::FORBIDDEN, HOST_REFUSED);
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let origin_host = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/')).unwrap_or_default();
        if !guard.host_allowed(origin_host) {
            guard.log_refusal(client, "Origin", origin);
            return refuse(StatusCode::FORBIDDEN, ORIGIN_REFUSED);
        }
    }
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large");
    }
    if !guard.token_matches(headers) {
        guard.log_refusal(client, "token", "");
        return refuse(StatusCode::UNAUTHORIZED, TOKEN_REFUSED);
    }
    // The body (at most MAX_BODY) is read here, within BODY_TIMEOUT: a client that trickles it is
    // answered 408 and its connection freed, instead of holding one of the few connections for ever.
    let (parts, body) = request.into_parts();
    let read = http_body_util::Limited::new(body, MAX_BODY).collect();
    let bytes = match tokio::time::timeout(guard.body_timeout, read).await {
        Err(_) => return refuse(StatusCode::REQUEST_TIMEOUT, "the request body did not arrive in time"),
        Ok(Err(_)) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large"),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// How long a client may take to send a request body (at most [`MAX_BODY`]), unless the guard says.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

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

    #[test]
    fn refusals_are_logged_once_per_client_and_value_and_the_set_is_bounded() {
        let guard = Guard::new("t", &[]);
        let client = Some(IpAddr::from([192, 168, 1, 30]));
        guard.log_refusal(client, "Host", "nas:8102");
        guard.log_refusal(client, "Host", "nas:8102");
        guard.log_refusal(client, "Host", "other:8102");
        assert_eq!(guard.logged.lock().map(|l| l.len()).ok(), Some(2));
        for n in 0..(2 * MAX_LOGGED_REFUSALS) {
            guard.log_refusal(client, "Host", &format!("h{n}"));
        }
        assert_eq!(guard.logged.lock().map(|l| l.len()).ok(), Some(MAX_LOGGED_REFUSALS));
    }
}
