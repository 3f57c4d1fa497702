//! The chat page (SPEC §13): `GET /` and `GET /web/<asset>`, vanilla HTML, CSS and JS compiled into the
//! binary. Only bare asset names the page is made of are served (strata-wire C-B5), with `no-cache`.
//! In development (`--web-dir DIR`) the same names are read from that folder on every request instead,
//! so a changed page (a Stryker mutant, say) is served without a rebuild. The page itself comes with a
//! Content-Security-Policy (SPEC 13.23): script from its own origin only, no plugins, no `<base>`, no
//! framing — so text from a model or a tool that some bug drew as markup still could not run.

use std::borrow::Cow;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

const INDEX_NAME: &str = "index.html";
const INDEX: &str = include_str!("../../web/index.html");
const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
/// The page's policy (SPEC 13.23): its own scripts only (no inline script or handler, no eval), nothing
/// embedded, no `<base>`, no framing, no form posted elsewhere. Fetches are left free: a browser-driven
/// suite reads the page's `blob:` downloads with `fetch` in the page.
const POLICY: &str =
    "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const ASSETS: [(&str, &str, &str); 8] = [
    ("app.js", JS, include_str!("../../web/app.js")),
    ("state.js", JS, include_str!("../../web/state.js")),
    ("stream.js", JS, include_str!("../../web/stream.js")),
    ("events.js", JS, include_str!("../../web/events.js")),
    ("request.js", JS, include_str!("../../web/request.js")),
    ("pictures.js", JS, include_str!("../../web/pictures.js")),
    ("render.js", JS, include_str!("../../web/render.js")),
    ("app.css", "text/css; charset=utf-8", include_str!("../../web/app.css")),
];

/// `GET /`.
pub async fn index(State(state): State<Arc<AppState>>) -> Response {
    let mut response = serve(&state, INDEX_NAME, HTML, INDEX).await;
    if response.status() == StatusCode::OK {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    }
    response
}

/// `GET /web/<name>`. A name the path extractor refuses (`%FF`, an overlong `%C0%AE`: not UTF-8 once
/// decoded) is no asset either: the JSON 404, never axum's plain-text 400 (SPEC 2.8).
pub async fn asset(State(state): State<Arc<AppState>>, name: Result<Path<String>, PathRejection>) -> Response {
    let Ok(Path(name)) = name else { return ApiError::not_found().into_response() };
    match ASSETS.iter().find(|(asset, _, _)| *asset == name) {
        Some((asset, mime, body)) => serve(&state, asset, mime, body).await,
        None => ApiError::not_found().into_response(),
    }
}

/// The compiled-in `body`, or in development the file of that `name` (always one of the fixed names
/// above, never a client's path) from the `--web-dir` folder.
async fn serve(state: &AppState, name: &str, mime: &'static str, body: &'static str) -> Response {
    let body: Cow<'static, str> = match &state.config.web_dir {
        None => Cow::Borrowed(body),
        Some(dir) => match tokio::fs::read_to_string(dir.join(name)).await {
            Ok(text) => Cow::Owned(text),
            Err(_) => return ApiError::not_found().into_response(),
        },
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
