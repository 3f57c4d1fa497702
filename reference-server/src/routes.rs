//! Every route, in one place (SPEC §3): the paths as constants, and the router with the auth gate in
//! front. Handlers live in one file per concern under `routes/`.

mod chat;
mod media;
mod page;
mod status;

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::auth;
use crate::error::ApiError;
use crate::faults::Fault;
use crate::state::AppState;

/// Route paths.
pub mod paths {
    /// The chat page.
    pub const PAGE: &str = "/";
    /// The page's assets, `/web/<name>`.
    pub const WEB_PREFIX: &str = "/web/";
    /// The router's pattern for them.
    pub const WEB_ASSET_ROUTE: &str = "/web/{name}";
    /// Health, without auth.
    pub const HEALTH: &str = "/health";
    /// Health, Strata's second spelling.
    pub const API_HEALTH: &str = "/api/health";
    /// Both health routes.
    pub const HEALTH_ROUTES: [&str; 2] = [HEALTH, API_HEALTH];
    /// The model list.
    pub const MODELS: &str = "/v1/models";
    /// Server status, including the vision geometry.
    pub const STATUS: &str = "/v1/status";
    /// MCP server and tool status.
    pub const MCP: &str = "/mcp";
    /// Chat completions.
    pub const CHAT: &str = "/v1/chat/completions";
    /// Cached tool pictures, `/tool-media/<sha256>.<ext>`.
    pub const TOOL_MEDIA_PREFIX: &str = "/tool-media/";
    /// The router's pattern for them (axum answers HEAD from the GET route).
    pub const TOOL_MEDIA_ROUTE: &str = "/tool-media/{name}";
}

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

async fn not_found(State(state): State<Arc<AppState>>) -> Response {
    if state.faults().has(Fault::PlainErrors) {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    ApiError::not_found().into_response()
}

async fn method_not_allowed(State(state): State<Arc<AppState>>) -> Response {
    if state.faults().has(Fault::PlainErrors) {
        return (StatusCode::METHOD_NOT_ALLOWED, "method not allowed").into_response();
    }
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "invalid_request_error", "method not allowed").into_response()
}
