//! The harness's HTTP client: raw request targets (a hostile path is sent exactly as written, never
//! normalised), the API key when asked, and a transcript of every exchange for failure reports.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::check::{CheckError, broken};
use crate::monitor::{self, Seen, Violation};

mod streamed;
pub use streamed::Streamed;

/// How long one exchange may take before it counts as a failure.
const DEFAULT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one exchange may take: 60 s, or `MEDIACHECK_EXCHANGE_TIMEOUT_S` (the mutation judge
/// lowers it, so a mutant that hangs a request fails in seconds rather than a minute).
pub(crate) fn exchange_timeout() -> Duration {
    static TIMEOUT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        std::env::var("MEDIACHECK_EXCHANGE_TIMEOUT_S")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&s| s > 0)
            .map_or(DEFAULT_EXCHANGE_TIMEOUT, Duration::from_secs)
    })
}

/// Why an exchange brought no answer: the kinds a load report counts apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The request could not be built (a target that is not a URI, say).
    #[error("could not build the request: {0}")]
    Build(String),
    /// No connection, or it closed before an answer (refused, reset).
    #[error("no answer: {0}")]
    Connect(String),
    /// No answer within the exchange timeout.
    #[error("no answer within {0} s")]
    Timeout(u64),
    /// The answer's body broke off.
    #[error("the body broke off: {0}")]
    Body(String),
}

impl HttpError {
    /// Its kind in one word, for load reports: `build`, `connect`, `timeout`, `body`.
    pub fn kind(&self) -> &'static str {
        match self {
            HttpError::Build(_) => "build",
            HttpError::Connect(_) => "connect",
            HttpError::Timeout(_) => "timeout",
            HttpError::Body(_) => "body",
        }
    }
}

impl From<HttpError> for CheckError {
    fn from(error: HttpError) -> Self {
        broken(error)
    }
}

/// One request and its answer, as a report shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Exchange {
    /// `GET /path`.
    pub request: String,
    /// The status, or 0 when no answer came.
    pub status: u16,
    /// Response headers worth showing.
    pub headers: Vec<(String, String)>,
    /// The start of the body.
    pub body: String,
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Result<Value, CheckError> {
        serde_json::from_slice(&self.body)
            .map_err(|_| broken(format!("a body that is not JSON: {}", excerpt(&self.body))))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }
}

/// The start of a body for a transcript: its first 600 characters (only the first few KiB are ever
/// looked at: bodies can be megabytes of picture). A body that is not text (a picture) is shown as its
/// length, and control characters are escaped, so a transcript never writes raw bytes to a terminal or
/// a report.
fn excerpt(body: &[u8]) -> String {
    let start = &body[..body.len().min(2400)];
    // A character cut at the 2400th byte is not a sign of binary; an invalid sequence before it is.
    if let Err(e) = std::str::from_utf8(start)
        && e.error_len().is_some()
    {
        return format!("<{} bytes, not text>", body.len());
    }
    let (mut cut, mut shown_bytes) = (String::new(), 0);
    for c in String::from_utf8_lossy(start).chars().take(600) {
        shown_bytes += c.len_utf8();
        if c.is_control() && c != '\n' && c != '\t' { cut.extend(c.escape_default()) } else { cut.push(c) }
    }
    if body.len() > shown_bytes {
        cut.push('…');
    }
    cut
}

/// A client bound to one server.
#[derive(Clone)]
pub struct Http {
    base: String,
    key: Option<String>,
    client: Client<HttpConnector, Full<Bytes>>,
    transcript: Arc<Mutex<Vec<Exchange>>>,
    /// What the wire monitor found in this client's exchanges (one list per case, like the transcript).
    violations: Arc<Mutex<Vec<Violation>>>,
}

/// A request being built.
pub struct Call {
    http: Http,
    method: Method,
    target: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    with_key: bool,
    monitored: bool,
}

/// The longest a kept-alive connection waits in the pool to be used again: under the 1 s that is the
/// least header timeout a server can be given.
pub(crate) const IDLE_REUSE: std::time::Duration = std::time::Duration::from_millis(900);

impl Http {
    /// A client for `base` (`http://host:port`), sending `key` when a request asks for it.
    pub fn new(base: &str, key: Option<String>) -> Self {
        // A kept-alive connection is reused only within IDLE_REUSE: a server may close an idle one after
        // its header timeout (SPEC 1.11: 1 s at the least), and a request sent on it just then would
        // meet the close and get no answer — the harness's fault, not the server's.
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(32)
            .pool_idle_timeout(IDLE_REUSE)
            .pool_timer(hyper_util::rt::TokioTimer::new())
            .build_http();
        Self {
            base: base.trim_end_matches('/').to_string(),
            key,
            client,
            transcript: Arc::default(),
            violations: Arc::default(),
        }
    }

    /// The same server and key with an empty transcript (one per case).
    pub fn fresh(&self) -> Self {
        Self { transcript: Arc::default(), violations: Arc::default(), ..self.clone() }
    }

    /// This client, with what the wire monitor finds in its exchanges kept among `case`'s (a client
    /// for a server the case started itself, so the runner fails the case for what it saw).
    pub fn reporting_to(self, case: &Http) -> Self {
        Self { violations: Arc::clone(&case.violations), ..self }
    }

    /// The server's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The key this client sends, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// A request with the key (when the server has one).
    pub fn call(&self, method: Method, target: &str) -> Call {
        Call {
            http: self.clone(),
            method,
            target: target.to_string(),
            headers: Vec::new(),
            body: Bytes::new(),
            with_key: true,
            monitored: true,
        }
    }

    /// `GET target` with the key.
    pub fn get(&self, target: &str) -> Call {
        self.call(Method::GET, target)
    }

    /// `POST target` with a JSON body and the key.
    pub fn post_json(&self, target: &str, body: &Value) -> Call {
        self.call(Method::POST, target).json(body)
    }

    /// Everything exchanged so far.
    pub fn transcript(&self) -> Vec<Exchange> {
        self.transcript.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The SPEC requirements the wire monitor saw this client's exchanges break, in order.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Holds `seen` — an exchange this client made, or one a page made on its behalf (the recording
    /// proxy) — to the wire monitor's invariants, keeping what it breaks.
    pub fn observe(&self, seen: &Seen<'_>) {
        let found = monitor::observe(seen);
        if !found.is_empty()
            && let Ok(mut violations) = self.violations.lock()
        {
            // The first few say what broke; a case that makes thousands of exchanges keeps no more.
            let room = 8usize.saturating_sub(violations.len());
            violations.extend(found.into_iter().take(room));
        }
    }

    fn record(&self, exchange: Exchange) {
        if let Ok(mut transcript) = self.transcript.lock() {
            if transcript.len() >= 50 {
                transcript.remove(0);
            }
            transcript.push(exchange);
        }
    }
}

impl Call {
    /// Without the key.
    pub fn without_key(mut self) -> Self {
        self.with_key = false;
        self
    }

    /// Not held to the wire monitor's invariants: for an answer the case made wrong itself (a file it
    /// planted in the cache), never for one the server chose.
    pub fn unmonitored(mut self) -> Self {
        self.monitored = false;
        self
    }

    /// Adds a header (raw bytes allowed).
    pub fn header(mut self, name: &str, value: &[u8]) -> Self {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(value)) {
            self.headers.push((name, value));
        }
        self
    }

    /// A JSON body.
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Bytes::from(body.to_string());
        self.header("content-type", b"application/json")
    }

    /// A raw body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    fn build(&self) -> Result<Request<Full<Bytes>>, HttpError> {
        let uri = format!("{}{}", self.http.base, self.target);
        let mut builder = Request::builder().method(self.method.clone()).uri(uri.as_str());
        if self.with_key
            && let Some(key) = &self.http.key
        {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder.body(Full::new(self.body.clone())).map_err(|e| HttpError::Build(format!("{uri}: {e}")))
    }

    fn line(&self) -> String {
        format!("{} {}", self.method, self.target.chars().take(200).collect::<String>())
    }

    /// Sends and reads the whole answer.
    pub async fn send(self) -> Result<Reply, HttpError> {
        let request = self.build()?;
        let line = self.line();
        let answer = tokio::time::timeout(exchange_timeout(), async {
            let response = self.http.client.request(request).await.map_err(|e| HttpError::Connect(e.to_string()))?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map_err(|e| HttpError::Body(e.to_string()))?.to_bytes();
            Ok::<_, HttpError>(Reply { status: parts.status.as_u16(), headers: parts.headers, body })
        })
        .await
        .unwrap_or_else(|_| Err(HttpError::Timeout(exchange_timeout().as_secs())));
        match answer {
            Ok(reply) => {
                if self.monitored {
                    self.http.observe(&Seen {
                        method: &self.method,
                        target: &self.target,
                        status: reply.status,
                        headers: &reply.headers,
                        body: &reply.body,
                        key: self.http.key.as_deref(),
                    });
                }
                self.http.record(Exchange {
                    request: line,
                    status: reply.status,
                    headers: shown_headers(&reply.headers),
                    body: excerpt(&reply.body),
                });
                Ok(reply)
            }
            Err(error) => {
                self.http.record(Exchange { request: line, status: 0, headers: Vec::new(), body: error.to_string() });
                Err(error)
            }
        }
    }

    /// Sends and returns the streaming response (for SSE read piece by piece, or abandoned midway). An
    /// answer read to its end is held to the wire monitor's invariants then ([`Streamed`]).
    pub async fn open(self) -> Result<hyper::Response<Streamed>, HttpError> {
        let (http, method, target, monitored) =
            (self.http.clone(), self.method.clone(), self.target.clone(), self.monitored);
        let (parts, body) = self.open_raw().await?.into_parts();
        let mut body = Streamed::new(body, &http, method, target, parts.status.as_u16(), parts.headers.clone());
        if !monitored {
            body.unmonitored();
        }
        Ok(hyper::Response::from_parts(parts, body))
    }

    /// [`Call::open`] without the monitor and its copy of the body: for the load tester, which checks
    /// every body itself as it streams, at wire speed.
    pub async fn open_raw(self) -> Result<hyper::Response<hyper::body::Incoming>, HttpError> {
        let request = self.build()?;
        let line = self.line();
        let response = tokio::time::timeout(exchange_timeout(), self.http.client.request(request))
            .await
            .map_err(|_| HttpError::Timeout(exchange_timeout().as_secs()))?
            .map_err(|e| HttpError::Connect(e.to_string()))?;
        self.http.record(Exchange {
            request: line,
            status: response.status().as_u16(),
            headers: shown_headers(response.headers()),
            body: "(streamed)".into(),
        });
        Ok(response)
    }
}

fn shown_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, _)| name.as_str() != "date")
        .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn a_picture_is_shown_as_its_length_and_control_characters_escaped() {
        assert_eq!(excerpt(b"\x89PNG\r\n\x1a\n\0\0\0"), "<11 bytes, not text>");
        assert_eq!(excerpt(b"a\x1b[31mb\nc\td"), "a\\u{1b}[31mb\nc\td");
        let long = "é".repeat(1300);
        assert_eq!(excerpt(long.as_bytes()), format!("{}…", "é".repeat(600)));
        assert_eq!(excerpt(b"{}"), "{}");
    }
}
