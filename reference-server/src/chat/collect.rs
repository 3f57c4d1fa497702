//! The non-streamed answer (SPEC 4.3, strata-wire C-J8): the same turn events gathered into one
//! `chat.completion`, with every `strata_mcp` event object in order under `message.strata_mcp`.

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::DropGuard;

use super::sse::ChunkHead;
use super::turn_event::TurnEvent;
use crate::error::{ApiError, ErrorKind};

/// Waits for the turn and answers with one JSON object. Dropping this future (the client left)
/// drops the guard, which cancels the turn.
pub async fn response(mut events: mpsc::Receiver<TurnEvent>, head: ChunkHead, cancel_on_drop: DropGuard) -> Response {
    let _cancel_on_drop = cancel_on_drop;
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut own_calls: Vec<Value> = Vec::new();
    let mut mcp_events: Vec<Value> = Vec::new();
    while let Some(event) = events.recv().await {
        match event {
            TurnEvent::Reasoning(text) => reasoning.push_str(&text),
            TurnEvent::Content(text) => content.push_str(&text),
            TurnEvent::OwnCallHeader { id, name, .. } => own_calls.push(json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": ""},
            })),
            TurnEvent::OwnCallArguments { index, arguments } => {
                if let Some(call) = own_calls.get_mut(index) {
                    call["function"]["arguments"] = Value::String(arguments);
                }
            }
            TurnEvent::Mcp(event) => mcp_events.push(event.to_json()),
            TurnEvent::KeepAlive => {}
            TurnEvent::Failed(error) => return error.into_response(),
            TurnEvent::Finished { finish_reason, usage } => {
                let mut message = json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { Value::String(content) }});
                if !reasoning.is_empty() {
                    message["reasoning_content"] = Value::String(reasoning);
                }
                if !own_calls.is_empty() {
                    message["tool_calls"] = Value::Array(own_calls);
                }
                if !mcp_events.is_empty() {
                    message["strata_mcp"] = Value::Array(mcp_events);
                }
                return Json(json!({
                    "id": head.id,
                    "object": "chat.completion",
                    "created": head.created,
                    "model": head.model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish_reason.as_str()}],
                    "usage": usage.json(),
                }))
                .into_response();
            }
        }
    }
    ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, ErrorKind::Server, "the request was stopped")
        .into_response()
}
