//! `GET /health`, `/v1/models`, `/v1/status` and `/mcp` (SPEC 3.1–3.4, 5.8).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::state::AppState;

/// The name this server reports as `service`.
pub const SERVICE: &str = "reference-server";

/// `GET /health`: no auth; the shape of strata-wire C-C1.
pub async fn health(State(state): State<Arc<AppState>>) -> Json<Value> {
    let config = &state.config;
    Json(json!({
        "status": "ok",
        "max_context": config.engine.max_context,
        "model": config.model,
        "images": config.vision.is_some(),
        "api_key": config.api_key.is_some(),
        "loaded": true,
        "service": SERVICE,
    }))
}

/// `GET /v1/models`.
pub async fn models(State(state): State<Arc<AppState>>) -> Json<Value> {
    let modalities = if state.config.vision.is_some() { json!(["text", "image"]) } else { json!(["text"]) };
    Json(json!({
        "object": "list",
        "data": [{
            "id": state.config.model,
            "object": "model",
            "created": 0,
            "owned_by": SERVICE,
            "architecture": {"input_modalities": modalities},
        }],
    }))
}

/// `GET /v1/status`: what the server is doing, and what its vision path would do with a picture.
pub async fn status(State(state): State<Arc<AppState>>) -> Json<Value> {
    let config = &state.config;
    let mut vision = json!({"enabled": config.vision.is_some(), "available": state.vision.is_some(), "error": null});
    if let (Some(backend), Some(settings)) = (&state.vision, &config.vision) {
        vision["backend"] = json!(settings.backend.name());
        vision["device"] = json!(settings.device.name());
        vision["geometry"] = json!(backend.geometry());
    }
    Json(json!({
        "model": config.model,
        "busy": state.activity.running() > 0,
        "requests": {
            "running": state.activity.running(),
            "finished": state.activity.finished(),
            "cancelled": state.activity.cancelled(),
        },
        "vision": vision,
        "dialects": ["/v1/chat/completions"],
    }))
}

/// `GET /mcp`: the hub's status, or `{"servers":[],"tools":0}` without one (strata-wire C-H3).
pub async fn mcp(State(state): State<Arc<AppState>>) -> Json<Value> {
    match &state.hub {
        Some(hub) => Json(hub.status_json()),
        None => Json(json!({"servers": [], "tools": 0})),
    }
}
