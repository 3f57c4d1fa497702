//! Every route, in one place (SPEC §3): the router with the auth gate in front (the paths are
//! constants in [`crate::paths`]). Handlers live in one file per concern under `routes/`.

mod chat;
pub use chat::CHAT_FIELDS;
mod media;
mod page;
mod status;

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::auth;
use crate::error::{ApiError, ErrorKind};
use crate::paths;
use crate::state::AppState;

/// The whole application for this state: routes, the auth gate, JSON 404s.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route(paths::PAGE, get(page::index))
        .route(paths::WEB_ASSET_ROUTE, get(page::asset))
        .route(paths::HEALTH, get(status::health))
        .route(paths::API_HEALTH, get(status::health))
        .route(paths::MODELS, get(status::models))
        .route(paths::STATUS, get(status::status))
        .route(paths::MCP, get(status::mcp))
        .route(paths::CHAT, post(chat::completions))
        .route(paths::TOOL_MEDIA_ROUTE, get(media::tool_media))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(Arc::clone(&state), auth::gate))
        .with_state(state)
}

async fn not_found() -> Response {
    ApiError::not_found().into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, ErrorKind::InvalidRequest, "method not allowed").into_response()
}
