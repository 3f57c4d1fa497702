//! The streamed answer (SPEC 4.4, strata-wire C-K1/J4/J5/J10): server-sent events in the OpenAI chunk
//! shape, `strata_mcp` events as chunks with an empty delta, `: keep-alive` comments while a tool
//! runs, and `data: [DONE]` at the end. When the client goes away the body is dropped, and with it
//! the guard that cancels the turn (SPEC 4.11).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::DropGuard;

use super::turn_event::TurnEvent;

/// The fields every chunk of one answer shares.
#[derive(Debug, Clone)]
pub struct ChunkHead {
    /// `chatcmpl-…`.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// The model name.
    pub model: String,
}

impl ChunkHead {
    /// A head for a new answer.
    pub fn new(model: &str) -> Self {
        let created =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        Self { id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()), created, model: model.to_string() }
    }

    /// A chunk with this delta and finish reason.
    pub fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        })
    }
}

struct Stream {
    events: mpsc::Receiver<TurnEvent>,
    head: ChunkHead,
    started: bool,
    ended: bool,
    done: &'static [u8],
    _cancel_on_drop: DropGuard,
}

/// The streamed response for a running turn.
pub fn response(events: mpsc::Receiver<TurnEvent>, head: ChunkHead, cancel_on_drop: DropGuard) -> Response {
    let done: &'static [u8] = b"data: [DONE]\n\n";
    let state = Stream { events, head, started: false, ended: false, done, _cancel_on_drop: cancel_on_drop };
    let body = futures::stream::unfold(state, |mut state| async move {
        let bytes = next(&mut state).await?;
        Some((Ok::<Bytes, Infallible>(bytes), state))
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

async fn next(state: &mut Stream) -> Option<Bytes> {
    if state.ended {
        return None;
    }
    if !state.started {
        state.started = true;
        return Some(data(&state.head.chunk(json!({"role": "assistant", "content": ""}), None)));
    }
    let Some(event) = state.events.recv().await else {
        // The turn ended without a final chunk (it was cancelled): end the stream cleanly.
        state.ended = true;
        return Some(Bytes::from_static(state.done));
    };
    let head = &state.head;
    let bytes = match event {
        TurnEvent::Reasoning(text) => data(&head.chunk(json!({"reasoning_content": text}), None)),
        TurnEvent::Content(text) => data(&head.chunk(json!({"content": text}), None)),
        TurnEvent::OwnCallHeader { index, id, name } => data(&head.chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        )),
        TurnEvent::OwnCallArguments { index, arguments } => {
            data(&head.chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}), None))
        }
        TurnEvent::Mcp(event) => {
            let mut chunk = head.chunk(json!({}), None);
            chunk["strata_mcp"] = event.to_json();
            data(&chunk)
        }
        TurnEvent::KeepAlive => Bytes::from_static(b": keep-alive\n\n"),
        TurnEvent::Finished { finish_reason, usage } => {
            state.ended = true;
            let mut chunk = head.chunk(json!({}), Some(finish_reason.as_str()));
            chunk["usage"] = usage.json();
            let mut bytes = data(&chunk).to_vec();
            bytes.extend_from_slice(state.done);
            Bytes::from(bytes)
        }
        TurnEvent::Failed(error) => {
            state.ended = true;
            let mut bytes = data(&error.body()).to_vec();
            bytes.extend_from_slice(state.done);
            Bytes::from(bytes)
        }
    };
    Some(bytes)
}

fn data(value: &Value) -> Bytes {
    let mut bytes = Vec::with_capacity(256);
    bytes.extend_from_slice(b"data: ");
    serde_json::to_writer(&mut bytes, value).unwrap_or_default();
    bytes.extend_from_slice(b"\n\n");
    Bytes::from(bytes)
}
