//! `POST /v1/chat/completions` (SPEC §4, §6): read, check, prepare the first prompt (errors here are
//! plain JSON answers), then run the turn and render it streamed or whole.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use crate::auth::own_page_only;
use crate::body::read_json;
use crate::chat::prepare::{check_references, prepare};
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

async fn start(state: Arc<AppState>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let value = read_json(&headers, body, state.config.max_body_bytes).await?;
    let request = ChatRequest::from_json(&value)?;
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
    let first = prepare(&state, &request.messages, plan.tools(), request.max_tokens)?;
    let cancel = state.shutdown.child_token();
    let (sender, events) = mpsc::channel(64);
    let head = ChunkHead::new(&state.config.model);
    let stream = request.stream;
    tokio::spawn(turn::run(Arc::clone(&state), request, plan, first, cancel.clone(), sender));
    let guard = cancel.drop_guard();
    Ok(if stream { sse::response(events, head, guard) } else { collect::response(events, head, guard).await })
}
