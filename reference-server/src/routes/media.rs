//! `GET`/`HEAD /tool-media/<name>` (SPEC §9): the name validated before the filesystem is touched, only
//! a regular file inside the cache served, long private caching, `ETag` and 304. Anything else is the
//! same 404 that says nothing about the filesystem.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::media::MediaName;
use crate::state::AppState;

/// The handler for both methods.
pub async fn tool_media(State(state): State<Arc<AppState>>, method: Method, headers: HeaderMap, uri: Uri) -> Response {
    if !state.image_results() {
        return ApiError::not_found().into_response();
    }
    // The raw path, not a decoded one: `%2e%2e` stays `%2e%2e` and is simply not a name.
    let raw = uri.path().strip_prefix(crate::paths::TOOL_MEDIA_PREFIX).unwrap_or_default();
    let Some(name) = MediaName::parse(raw) else { return ApiError::not_found().into_response() };
    let etag = format!("\"{}\"", name.sha256());
    // A 304 only for a picture that is there (one `lstat`): a missing file is 404 whatever the
    // client holds (SPEC 9.7).
    if matches_etag(&headers, &etag) {
        return match state.media.size(&name) {
            Ok(_) => answer(StatusCode::NOT_MODIFIED, &name, &etag, None, Body::empty()),
            Err(_) => ApiError::not_found().into_response(),
        };
    }
    // HEAD and a picture served before need one `lstat`; a first read goes to a blocking thread.
    let served = if method == Method::HEAD {
        state.media.size(&name).map(|len| (len, None))
    } else {
        match state.media.recent(&name) {
            Ok(Some(bytes)) => Ok((bytes.len() as u64, Some(bytes))),
            Ok(None) => {
                let cache = state.media.clone();
                let wanted = name.clone();
                match tokio::task::spawn_blocking(move || cache.load(&wanted)).await {
                    Ok(bytes) => bytes.map(|b| (b.len() as u64, Some(b))),
                    Err(_) => Err(std::io::Error::other("the read stopped")),
                }
            }
            Err(missing) => Err(missing),
        }
    };
    match served {
        Ok((len, bytes)) => {
            let body = bytes.map(Body::from).unwrap_or_else(Body::empty);
            answer(StatusCode::OK, &name, &etag, Some(len), body)
        }
        Err(_) => ApiError::not_found().into_response(),
    }
}

fn answer(status: StatusCode, name: &MediaName, etag: &str, len: Option<u64>, body: Body) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(name.format().mime()));
    if let Some(len) = len {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// `If-None-Match` holds this ETag (weak or strong) or `*`.
fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |tag| {
            let tag = tag.trim();
            tag == "*" || tag.trim_start_matches("W/") == etag
        },
    )
}
