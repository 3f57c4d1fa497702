//! The chat page (SPEC §13): `GET /` and `GET /web/<asset>`, vanilla HTML, CSS and JS compiled into the
//! binary. Only bare asset names the page is made of are served (strata-wire C-B5), with `no-cache`.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

const INDEX: &str = include_str!("../../web/index.html");
const JS: &str = "text/javascript; charset=utf-8";
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
pub async fn index() -> Response {
    page(StatusCode::OK, "text/html; charset=utf-8", INDEX)
}

/// `GET /web/<name>`.
pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(asset, _, _)| *asset == name) {
        Some((_, mime, body)) => page(StatusCode::OK, mime, body),
        None => ApiError::not_found().into_response(),
    }
}

fn page(status: StatusCode, mime: &'static str, body: &'static str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
