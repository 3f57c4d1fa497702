//! `POST /v1/chat/completions` (SPEC §4, §6): read, check, prepare the first prompt (errors here are
//! plain JSON answers), then run the turn and render it streamed or whole.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use crate::auth::own_page_only;
use crate::body::{BodyLimits, read_json};
use crate::chat::prepare::{check_references, prepare_blocking};
use crate::chat::request::ChatRequest;
use crate::chat::sse::ChunkHead;
use crate::chat::tools::ToolPlan;
use crate::chat::{collect, sse, turn};
use crate::error::ApiError;
use crate::state::AppState;

/// The handler.
pub async fn completions(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    match start(state, headers, body).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

/// The top-level fields of a chat request the server reads (SPEC 4.1); the rest are skipped unread.
pub const CHAT_FIELDS: &[&str] = &[
    "messages",
    "tools",
    "stream",
    "max_tokens",
    "max_completion_tokens",
    "model",
    "strata_mcp",
    "tool_choice",
    "response_format",
];

async fn start(state: Arc<AppState>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let config = &state.config;
    let limits = BodyLimits { limit: config.max_body_bytes, timeout: config.body_timeout, room: &state.body_room };
    let value = read_json(&headers, body, limits, CHAT_FIELDS).await?;
    let mut request = ChatRequest::from_json(&value)?;
    // The parsed body is a second copy of every message: gone before the prompt is prepared.
    drop(value);
    if request.strata_mcp {
        own_page_only(&state, &headers, "MCP tools can be used")?;
    }
    check_references(&request.messages)?;
    let uses_tools = !request.tools.is_empty() || (request.strata_mcp && state.hub.is_some());
    if request.structured_response && uses_tools {
        return Err(ApiError::bad_request("structured response_format with tools/MCP is not supported"));
    }
    let plan = ToolPlan::new(&state, &request).await;
    if request.forced_tool_choice && plan.hub().is_some() {
        return Err(ApiError::bad_request("a forced tool_choice with MCP tools is not supported"));
    }
    let messages = std::mem::take(&mut request.messages);
    let (messages, first) =
        prepare_blocking(Arc::clone(&state), messages, plan.tools().to_vec(), request.max_tokens).await;
    request.messages = messages;
    let first = first?;
    let cancel = state.shutdown.child_token();
    let (sender, events) = mpsc::channel(64);
    let head = ChunkHead::new(&state.config.model);
    let stream = request.stream;
    let guard = cancel.clone().drop_guard();
    tokio::spawn(turn::run(Arc::clone(&state), request, plan, first, cancel, sender));
    Ok(if stream { sse::response(events, head, guard) } else { collect::response(events, head, guard).await })
}
