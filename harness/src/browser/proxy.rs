//! A recording proxy between the browser and the server under test, on loopback: the page is loaded
//! from it, so every request the page makes passes through and is written down (method, path, the
//! key headers, the body of each POST, and what each request was answered). Answers stream through
//! unchanged (a Stop in the page closes the upstream request too), or, for a proxy started with
//! [`Framing::Reframed`], event streams framed again as [`super::recut`] says. Origin and Referer are
//! rewritten to the server's own, since to the page the proxy *is* the server.
//!
//! A proxy given the case's client ([`Proxy::watch`]) holds every answer the server gave the page to
//! the wire monitor's invariants (`monitor`), as the client's own exchanges are: each answer the
//! server finished (as it sent it, before any framing here), once its last byte has passed. Answers
//! the proxy made itself, or that the page or the proxy cut short, are not the server's whole answer
//! and are not held to them.
//!
//! What the log holds is bounded, since the server under test may be hostile: each body at most
//! [`MAX_RECORDED_BODY`], and all of them together at most [`MAX_KEPT`]. An answer that would pass
//! either bound streams on to the page unkept — what was kept of it is let go, so its text reads
//! empty — and unmonitored. Only chat answers stay in the log (the cases read them); a picture's or an
//! asset's bytes are let go once the monitor has read them, or when the page drops the answer.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;

use crate::check::CheckError;
use crate::http::Http;

/// The most of one body (a request's, or an answer's) kept in the log.
const MAX_RECORDED_BODY: usize = 32 << 20;

/// The most the log holds at once, every body together.
pub const MAX_KEPT: usize = 128 << 20;

/// Takes `n` bytes of room from `kept` (the bytes held now) under `most`; false, taking none, when
/// they do not fit.
fn reserve(kept: &std::sync::atomic::AtomicUsize, most: usize, n: usize) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    kept.fetch_update(SeqCst, SeqCst, |held| held.checked_add(n).filter(|total| *total <= most)).is_ok()
}

/// One request the page made.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its method.
    pub method: String,
    /// Its path and query, as sent.
    pub target: String,
    /// Its `Authorization` header.
    pub authorization: Option<String>,
    /// Its `x-api-key` header.
    pub api_key: Option<String>,
    /// The body of a POST, as text.
    pub body: Option<String>,
    /// The answer's body so far (at most [`MAX_RECORDED_BODY`]), as it streams to the page.
    pub answer: Arc<Mutex<Vec<u8>>>,
}

impl Recorded {
    /// The answer's body received so far, as text.
    pub fn answer_text(&self) -> String {
        self.answer.lock().map(|a| String::from_utf8_lossy(&a).into_owned()).unwrap_or_default()
    }
}

/// How the proxy hands the server's event streams to the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// As the server framed them.
    AsServed,
    /// The same events framed again, in pieces ([`super::recut`]).
    Reframed,
    /// As served until a piece holding `marker` has passed, then, `after` later, the connection lost
    /// (the body ends with an error, so the page reads a broken stream, never its end).
    BreakAfter {
        /// What the piece after which the stream breaks holds.
        marker: &'static str,
        /// How long the stream goes on (keep-alives and all) before it breaks.
        after: std::time::Duration,
    },
    /// Chat requests answered by the proxy itself, never forwarded: `502 Bad Gateway` with an HTML
    /// page, as a reverse proxy answers when the server behind it is down.
    GatewayDown,
    /// Chat requests whose body holds `marker` answered by the proxy itself, never forwarded: a 400
    /// with SPEC 2.8's JSON error whose `message` is `message` (a refusal's text is the server's, to
    /// the page); the rest forwarded as served.
    Refuses {
        /// What a refused request's body holds.
        marker: &'static str,
        /// The refusal's message.
        message: &'static str,
    },
}

/// What [`Framing::GatewayDown`] answers a chat request with.
pub const GATEWAY_PAGE: &str = "<html><body><h1>502 Bad Gateway</h1></body></html>";

struct Shared {
    upstream: String,
    framing: Framing,
    proxy_origin: String,
    client: reqwest::Client,
    log: Mutex<Vec<Recorded>>,
    /// The bytes the log holds now, every body together (at most [`MAX_KEPT`]).
    kept: std::sync::atomic::AtomicUsize,
    /// The client whose wire monitor sees the server's answers ([`Proxy::watch`]).
    watch: std::sync::OnceLock<Http>,
}

/// A running proxy; it stops when dropped.
pub struct Proxy {
    /// Where the browser goes (`http://127.0.0.1:<port>`).
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy in front of `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Result<Proxy, CheckError> {
        Proxy::start_framing(upstream, Framing::AsServed).await
    }

    /// Starts a proxy in front of `upstream` that hands event streams to the page as `framing` says.
    pub async fn start_framing(upstream: &str, framing: Framing) -> Result<Proxy, CheckError> {
        let failed = |e: std::io::Error| CheckError::NotRun(format!("the recording proxy did not start: {e}"));
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.map_err(failed)?;
        let url = format!("http://{}", listener.local_addr().map_err(failed)?);
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| CheckError::NotRun(format!("the recording proxy has no client: {e}")))?;
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_string(),
            framing,
            proxy_origin: url.clone(),
            client,
            log: Mutex::new(Vec::new()),
            kept: std::sync::atomic::AtomicUsize::new(0),
            watch: std::sync::OnceLock::new(),
        });
        let app = Router::new().fallback(forward).with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Proxy { url, shared, task })
    }

    /// From now on every whole answer the server gives the page is held to the wire monitor's
    /// invariants, its violations added to `http`'s (so the runner fails the case that saw them).
    pub fn watch(&self, http: &Http) {
        let _ = self.shared.watch.set(http.clone());
    }

    /// The bytes the log holds now, every body together (at most [`MAX_KEPT`]).
    pub fn kept_bytes(&self) -> usize {
        self.shared.kept.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What the page requested so far.
    pub fn log(&self) -> Vec<Recorded> {
        self.shared.log.lock().map(|log| log.clone()).unwrap_or_default()
    }

    /// The chat requests the page sent so far (`POST /v1/chat/completions`), their bodies as JSON
    /// (`null` for a body that is not JSON).
    pub fn chat_bodies(&self) -> Vec<serde_json::Value> {
        self.log()
            .iter()
            .filter(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
            .map(|r| r.body.as_deref().and_then(|b| serde_json::from_str(b).ok()).unwrap_or_default())
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_RECORDED_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    let target = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let text = |name: header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let recorded = Recorded {
        method: parts.method.to_string(),
        target: target.clone(),
        authorization: text(header::AUTHORIZATION),
        api_key: text(header::HeaderName::from_static("x-api-key")),
        body: (parts.method == http::Method::POST && reserve(&shared.kept, MAX_KEPT, body.len()))
            .then(|| String::from_utf8_lossy(&body).into_owned()),
        answer: Arc::default(),
    };
    let sink = Some(Arc::clone(&recorded.answer));
    let chat = parts.method == http::Method::POST && target.starts_with("/v1/chat/completions");
    if let Ok(mut log) = shared.log.lock() {
        log.push(recorded);
    }
    if chat && shared.framing == Framing::GatewayDown {
        if let Some(sink) = &sink
            && let Ok(mut kept) = sink.lock()
        {
            kept.extend_from_slice(GATEWAY_PAGE.as_bytes());
        }
        return (StatusCode::BAD_GATEWAY, [(header::CONTENT_TYPE, "text/html")], GATEWAY_PAGE).into_response();
    }
    if let Framing::Refuses { marker, message } = shared.framing
        && chat
        && String::from_utf8_lossy(&body).contains(marker)
    {
        let refusal = serde_json::json!({"error": {"type": "invalid_request_error", "message": message}}).to_string();
        if let Some(sink) = &sink
            && let Ok(mut kept) = sink.lock()
        {
            kept.extend_from_slice(refusal.as_bytes());
        }
        return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], refusal).into_response();
    }
    let mut outgoing = shared.client.request(parts.method.clone(), format!("{}{target}", shared.upstream)).body(body);
    for (name, value) in &parts.headers {
        if [header::HOST, header::CONTENT_LENGTH, header::CONNECTION].contains(name) {
            continue;
        }
        let value = if *name == header::ORIGIN || *name == header::REFERER {
            let rewritten = value.to_str().unwrap_or_default().replacen(&shared.proxy_origin, &shared.upstream, 1);
            HeaderValue::from_str(&rewritten).unwrap_or_else(|_| value.clone())
        } else {
            value.clone()
        };
        outgoing = outgoing.header(name, value);
    }
    let Ok(answer) = outgoing.send().await else { return StatusCode::BAD_GATEWAY.into_response() };
    let event_stream = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if ![header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION].contains(name) {
            response = response.header(name, value);
        }
    }
    let whole = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let (kept_whole, answer_status, answer_headers) = (Arc::clone(&whole), answer.status(), answer.headers().clone());
    let recorded = sink.clone();
    let room = Arc::clone(&shared);
    let stream = futures::StreamExt::inspect(answer.bytes_stream(), move |chunk| {
        if let (Some(sink), Ok(bytes)) = (&sink, chunk)
            && kept_whole.load(std::sync::atomic::Ordering::Relaxed)
            && let Ok(mut kept) = sink.lock()
        {
            if kept.len() + bytes.len() <= MAX_RECORDED_BODY && reserve(&room.kept, MAX_KEPT, bytes.len()) {
                kept.extend_from_slice(bytes);
            } else {
                // Past a bound: none of it is kept (a prefix would read as the whole answer).
                kept_whole.store(false, std::sync::atomic::Ordering::Relaxed);
                room.kept.fetch_sub(kept.len(), std::sync::atomic::Ordering::SeqCst);
                *kept = Vec::new();
            }
        }
        if chunk.is_err() {
            kept_whole.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    });
    // Polled only once the server's answer has ended, never when the page or the proxy cut it short;
    // the release it holds runs either way, when it is done or dropped.
    let watcher = Arc::clone(&shared);
    let release = Release { shared: Arc::clone(&shared), sink: recorded.clone(), keep: chat };
    let ended = futures::stream::once(async move {
        let _release = release;
        let Some(recorded) = recorded else { return };
        let Ok(body) = recorded.lock() else { return };
        if let Some(http) = watcher.watch.get()
            && whole.load(std::sync::atomic::Ordering::Relaxed)
        {
            http.observe(&crate::monitor::Seen {
                method: &parts.method,
                target: &target,
                status: answer_status.as_u16(),
                headers: &answer_headers,
                body: &body,
                key: http.key(),
            });
        }
    });
    let stream = futures::StreamExt::chain(stream, futures::StreamExt::filter_map(ended, |()| async { None }));
    let body = match shared.framing {
        Framing::Reframed if event_stream => Body::from_stream(super::recut::recut(stream)),
        Framing::BreakAfter { marker, after } if event_stream => {
            Body::from_stream(super::recut::break_after(stream, marker, after))
        }
        _ => Body::from_stream(stream),
    };
    response.body(body).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// Lets go of an answer's kept bytes unless it is a chat answer (the cases read those), when the
/// answer has ended or has been dropped, whichever comes first.
struct Release {
    shared: Arc<Shared>,
    sink: Option<Arc<Mutex<Vec<u8>>>>,
    keep: bool,
}

impl Drop for Release {
    fn drop(&mut self) {
        if !self.keep
            && let Some(sink) = &self.sink
            && let Ok(mut body) = sink.lock()
        {
            self.shared.kept.fetch_sub(body.len(), std::sync::atomic::Ordering::SeqCst);
            *body = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn room_is_taken_only_when_it_fits_and_whole() {
        let kept = AtomicUsize::new(0);
        assert!(reserve(&kept, 10, 9));
        assert!(reserve(&kept, 10, 1), "up to the bound itself");
        assert!(!reserve(&kept, 10, 1), "one past it is refused");
        assert_eq!(kept.load(std::sync::atomic::Ordering::SeqCst), 10, "a refusal takes nothing");
        assert!(!reserve(&kept, usize::MAX, usize::MAX), "no wrap-around");
    }

    /// An upstream with a 1 MiB picture and a chat route that answers its body's length.
    async fn upstream() -> (String, tokio::task::JoinHandle<()>) {
        let app = Router::new()
            .route("/tool-media/x.png", axum::routing::get(|| async { vec![7u8; 1 << 20] }))
            .route("/v1/chat/completions", axum::routing::post(|body: String| async move { body.len().to_string() }));
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.expect("on loopback");
        let url = format!("http://{}", listener.local_addr().expect("on loopback"));
        (url, tokio::spawn(async move { axum::serve(listener, app).await.expect("on loopback") }))
    }

    #[tokio::test]
    async fn pictures_are_let_go_and_chat_answers_kept() {
        let (url, server) = upstream().await;
        let proxy = Proxy::start(&url).await.expect("on loopback");
        let client = reqwest::Client::builder().no_proxy().build().expect("on loopback");
        for _ in 0..40 {
            let bytes =
                client.get(format!("{}/tool-media/x.png", proxy.url)).send().await.expect("on loopback").bytes().await;
            assert_eq!(bytes.expect("on loopback").len(), 1 << 20);
        }
        assert_eq!(proxy.kept_bytes(), 0, "40 MiB of pictures passed; none is held once read");
        let answer =
            client.post(format!("{}/v1/chat/completions", proxy.url)).body("hello").send().await.expect("on loopback");
        assert_eq!(answer.text().await.expect("on loopback"), "5");
        assert_eq!(proxy.kept_bytes(), "hello".len() + "5".len(), "a chat's request and answer stay");
        assert_eq!(proxy.log().last().expect("on loopback").answer_text(), "5");
        // A picture the page gives up on halfway is let go too.
        let mut cut = client.get(format!("{}/tool-media/x.png", proxy.url)).send().await.expect("on loopback");
        let _first = cut.chunk().await;
        drop(cut);
        let released = async {
            while proxy.kept_bytes() != "hello".len() + "5".len() {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(5), released).await.is_ok(),
            "{}",
            proxy.kept_bytes()
        );
        server.abort();
    }
}
