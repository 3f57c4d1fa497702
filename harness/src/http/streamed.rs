//! An answer read piece by piece ([`super::Call::open`]), held to the wire monitor's invariants once
//! it has ended: the body passes through unchanged, a copy is kept (at most [`MAX_KEPT`] bytes), and
//! when the server ends it the whole is shown to the monitor, as [`super::Call::send`] shows its
//! answers. A stream the case drops midway, one that breaks, one past the bound, or one the case
//! marked [`Streamed::unmonitored`] (an answer it cut itself, with a signal) is not the server's whole
//! answer and is not held to them.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Method};
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::Http;
use crate::monitor::Seen;

/// The most of one streamed answer kept for the monitor.
pub const MAX_KEPT: usize = 16 << 20;

/// The body of an answer opened with [`super::Call::open`].
pub struct Streamed {
    inner: Incoming,
    watch: Option<Watch>,
}

/// What the monitor will be shown once the stream ends.
struct Watch {
    http: Http,
    method: Method,
    target: String,
    status: u16,
    headers: HeaderMap,
    kept: Vec<u8>,
}

impl Streamed {
    pub(super) fn new(
        inner: Incoming,
        http: &Http,
        method: Method,
        target: String,
        status: u16,
        headers: HeaderMap,
    ) -> Self {
        let watch = Watch { http: http.clone(), method, target, status, headers, kept: Vec::new() };
        Self { inner, watch: Some(watch) }
    }

    /// Not held to the monitor's invariants: for an answer the case cuts short itself (a signal to
    /// the server while it streams), whose end is then not the server's choice.
    pub fn unmonitored(&mut self) {
        self.watch = None;
    }

    /// Shows what was kept to the monitor, once.
    fn ended(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.http.observe(&Seen {
                method: &watch.method,
                target: &watch.target,
                status: watch.status,
                headers: &watch.headers,
                body: &watch.kept,
                key: watch.http.key(),
            });
        }
    }
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(watch)) = (frame.data_ref(), self.watch.as_mut()) {
                    if watch.kept.len() + data.len() <= MAX_KEPT {
                        watch.kept.extend_from_slice(data);
                    } else {
                        self.watch = None;
                    }
                }
            }
            Poll::Ready(Some(Err(_))) => self.watch = None,
            Poll::Ready(None) => self.ended(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, SocketAddr};

    use http_body_util::BodyExt;

    use super::*;

    /// A chat route streaming one chunk and no `[DONE]` (4.4 broken), on loopback.
    async fn upstream() -> (Http, tokio::task::JoinHandle<()>) {
        let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
        let answer = format!("data: {chunk}\n\n");
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move || async move { ([("content-type", "text/event-stream")], answer) }),
        );
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.expect("on loopback");
        let http = Http::new(&format!("http://{}", listener.local_addr().expect("on loopback")), None);
        (http, tokio::spawn(async move { axum::serve(listener, app).await.expect("on loopback") }))
    }

    #[tokio::test]
    async fn a_stream_read_to_its_end_is_shown_to_the_monitor() {
        let (http, server) = upstream().await;
        let mut response =
            http.post_json("/v1/chat/completions", &serde_json::json!({})).open().await.expect("on loopback");
        while response.body_mut().frame().await.is_some() {}
        let seen = http.violations();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].clause, "4.4");
        server.abort();
    }

    #[tokio::test]
    async fn a_stream_dropped_midway_or_marked_unmonitored_is_not() {
        let (http, server) = upstream().await;
        let response =
            http.post_json("/v1/chat/completions", &serde_json::json!({})).open().await.expect("on loopback");
        drop(response);
        let mut response =
            http.post_json("/v1/chat/completions", &serde_json::json!({})).open().await.expect("on loopback");
        response.body_mut().unmonitored();
        while response.body_mut().frame().await.is_some() {}
        assert_eq!(http.violations(), Vec::new());
        server.abort();
    }
}
