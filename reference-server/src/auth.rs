//! Who may call what (SPEC §2): the API key (constant-time, UTF-8 or Latin-1), which routes need it,
//! the Host check against DNS rebinding when no key is set, and the Origin rules for `/v1/*` and the
//! server's own page.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::paths;
use crate::state::AppState;

/// The key a client sent: `Authorization: Bearer <key>` (any case of "bearer") or `x-api-key`.
pub fn presented_key(headers: &HeaderMap) -> Option<&[u8]> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let bytes = value.as_bytes();
        if bytes.len() > 7 && bytes[..7].eq_ignore_ascii_case(b"bearer ") {
            return Some(bytes[7..].trim_ascii());
        }
    }
    headers.get("x-api-key").map(|v| v.as_bytes().trim_ascii())
}

/// Whether a request may pass without the key (SPEC 2.3): the page, its assets, health, and OPTIONS.
pub fn is_public(method: &Method, path: &str) -> bool {
    if method == Method::OPTIONS {
        return true;
    }
    let reads = method == Method::GET || method == Method::HEAD;
    reads && (path == paths::PAGE || path.starts_with(paths::WEB_PREFIX) || paths::HEALTH_ROUTES.contains(&path))
}

/// The gate in front of every route: Host check, key check, Origin check for `/v1/*` posts.
pub async fn gate(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    match check(&state, &request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

fn check(state: &AppState, request: &Request) -> Result<(), ApiError> {
    let headers = request.headers();
    let path = request.uri().path();
    let Some(key) = &state.config.api_key else {
        host_allowed(state, headers)?;
        if request.method() == Method::POST && path.starts_with("/v1/") {
            origin_allowed(state, headers)?;
        }
        return Ok(());
    };
    let public = is_public(request.method(), path);
    if public {
        return Ok(());
    }
    match presented_key(headers) {
        Some(presented) if key.matches(presented) => Ok(()),
        _ => Err(ApiError::unauthorized()),
    }
}

/// The name part of a Host header (`[::1]:8080` → `::1`, `example.com:80` → `example.com`).
pub fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn is_loopback_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// DNS-rebinding protection when no key is set (SPEC 2.5, strata-wire C-B3).
fn host_allowed(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::HOST) else { return Ok(()) };
    let host = String::from_utf8_lossy(value.as_bytes()).into_owned();
    let name = host_name(&host).to_ascii_lowercase();
    let allowed = name.parse::<IpAddr>().is_ok()
        || is_loopback_name(&name)
        || name == state.config.host.to_ascii_lowercase()
        || state.config.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&name));
    if allowed {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "Host '{}' is not allowed (DNS rebinding protection): add it to the configuration's allowed_hosts or set an API key",
        clip(&host, 200)
    )))
}

/// The Origin rule for `/v1/*` posts without a key (SPEC 2.6, strata-wire C-B4a).
fn origin_allowed(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()) else {
        return Ok(());
    };
    let Some((scheme, _)) = origin.split_once("://") else {
        return Err(foreign_origin(&origin)); // `null`, and anything else without a scheme
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Ok(()); // an extension's page, `file://` (SPEC 2.6)
    }
    let origin = origin.trim_end_matches('/');
    let Some((_, rest)) = origin.split_once("://") else { return Err(foreign_origin(origin)) };
    let own_host = headers.get(header::HOST).map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
    let name = host_name(rest).to_ascii_lowercase();
    let allowed = own_host.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(rest))
        || is_loopback_name(&name)
        || name == state.config.host.to_ascii_lowercase()
        || state.config.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&name))
        || state.config.trusted_origins.iter().any(|t| t.trim_end_matches('/') == origin);
    if allowed { Ok(()) } else { Err(foreign_origin(origin)) }
}

fn foreign_origin(origin: &str) -> ApiError {
    ApiError::forbidden(format!(
        "requests from the web page at '{}' are not allowed: set an API key or add the origin to trusted_origins",
        clip(origin, 200)
    ))
}

/// The own-page rule (SPEC 2.7, strata-wire C-B4b): JSON only (415), and an Origin, when present, must
/// be the request's own Host or a trusted origin (403). `what` names what is being protected.
pub fn own_page_only(state: &AppState, headers: &HeaderMap, what: &str) -> Result<(), ApiError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    if !json {
        return Err(ApiError::unsupported_media_type());
    }
    let Some(origin) = headers.get(header::ORIGIN).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()) else {
        return Ok(());
    };
    let origin = origin.trim_end_matches('/');
    let own_host = headers.get(header::HOST).map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
    let same_host = origin.split_once("://").is_some_and(|(_, rest)| own_host.as_deref() == Some(rest));
    let trusted = state.config.trusted_origins.iter().any(|t| t.trim_end_matches('/') == origin);
    if same_host || trusted {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "{what} only from this server's own page (or an origin in the configuration's trusted_origins)"
    )))
}

fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_is_case_insensitive_and_x_api_key_works() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "BeArEr  k1 ".parse().expect("header"));
        assert_eq!(presented_key(&headers), Some(&b"k1"[..]));
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", "k2".parse().expect("header"));
        assert_eq!(presented_key(&headers), Some(&b"k2"[..]));
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "Basic k3".parse().expect("header"));
        assert_eq!(presented_key(&headers), None);
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("[::1]:8080"), "::1");
        assert_eq!(host_name("example.com:80"), "example.com");
        assert_eq!(host_name("example.com"), "example.com");
    }

    #[test]
    fn only_page_assets_health_and_options_are_public() {
        assert!(is_public(&Method::GET, "/health"));
        assert!(is_public(&Method::GET, "/"));
        assert!(is_public(&Method::GET, "/web/app.js"));
        assert!(is_public(&Method::OPTIONS, "/v1/chat/completions"));
        assert!(!is_public(&Method::GET, "/v1/models"));
        assert!(!is_public(&Method::GET, "/tool-media/x"));
        assert!(!is_public(&Method::POST, "/health"));
    }
}
