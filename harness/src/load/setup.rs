//! The server under load: the embedded reference server wired to an in-process fixture MCP server
//! (pictures of realistic sizes cached by a warm-up turn), or a server on loopback given by URL.

use fixtures::scripts::{answer_script, calls_script};
use serde_json::{Value, json};

use super::LoadError;
use super::segment::Segment;
use crate::http::Http;
use crate::sse::EventStream;

/// The key the embedded server requires (so every request pays for authentication, as in production).
pub const KEY: &str = "mediacheck-load-key";

/// A server to load.
pub struct LoadTarget {
    /// A client for it.
    pub http: Http,
    /// Cached pictures for `media-get`, as names.
    pub media: Vec<String>,
    /// Whether the server runs in this process (its memory is this process's).
    pub in_process: bool,
    /// Which request kinds it can serve, and why not.
    pub chat: Result<(), LoadError>,
    _embedded: Option<Embedded>,
}

struct Embedded {
    server: crate::embedded::RunningServer,
    _fixture: fixtures::http::HttpFixture,
    _dir: tempfile::TempDir,
}

impl LoadTarget {
    /// Stops what was started.
    pub async fn stop(self) {
        if let Some(embedded) = self._embedded {
            embedded.server.stop().await;
        }
    }
}

/// The script sets the embedded server replays, by the `model` a request names.
fn script_sets() -> Value {
    json!({
        "chat-image": [
            calls_script(&[("fake__picture", &[("width", "1280"), ("height", "720"), ("count", "2")])]),
            answer_script("Two pictures."),
        ],
        "cache-write": [
            calls_script(&[("fake__fresh_picture", &[("width", "640"), ("height", "480"), ("count", "4")])]),
            answer_script("Four new pictures."),
        ],
        "warm-up": [
            calls_script(&[
                ("fake__picture", &[("width", "640"), ("height", "360"), ("count", "1"), ("seed", "40")]),
                ("fake__picture", &[("width", "1280"), ("height", "720"), ("count", "1"), ("seed", "41")]),
                ("fake__photo", &[("width", "800"), ("height", "600"), ("seed", "42")]),
            ]),
            answer_script("Warm."),
        ],
    })
}

/// Starts the embedded reference server for load and caches the `media-get` pictures.
pub async fn embedded() -> Result<LoadTarget, LoadError> {
    embedded_for(Segment::WHOLE).await
}

/// The same, for one segment of a run: its fixture makes only this segment's share of the new
/// pictures (`cache-write`), so no two segments ever write the same new picture.
pub async fn embedded_for(segment: Segment) -> Result<LoadTarget, LoadError> {
    let failed = |e: &dyn std::fmt::Display| LoadError::Embedded(e.to_string());
    let fixture_options =
        fixtures::mcp_server::FixtureOptions { fresh_seeds: (segment.index - 1, segment.count), ..Default::default() };
    let fixture = fixtures::http::serve_http(fixture_options, 0, None)
        .await
        .map_err(|e| LoadError::Embedded(format!("fixture: {e}")))?;
    let dir = tempfile::tempdir().map_err(|e| failed(&e))?;
    let config = json!({
        "api_key": KEY,
        "mcp": {"image_results": true, "timeout_s": 120},
        "mcp_servers": {"fake": {"url": fixture.url}},
        "engine": {"restart_per_request": true, "scripts": [answer_script("ok")], "script_sets": script_sets()},
    });
    let path = dir.path().join("load.json");
    std::fs::write(&path, config.to_string()).map_err(|e| failed(&e))?;
    let server = crate::embedded::start(&path, Vec::new()).await.map_err(LoadError::Embedded)?;
    let http = Http::new(&server.url(), Some(KEY.into()));
    let media = warm_up(&http).await?;
    Ok(LoadTarget {
        http,
        media,
        in_process: true,
        chat: Ok(()),
        _embedded: Some(Embedded { server, _fixture: fixture, _dir: dir }),
    })
}

async fn warm_up(http: &Http) -> Result<Vec<String>, LoadError> {
    let body = json!({"model": "warm-up", "stream": true, "strata_mcp": true,
        "messages": [{"role": "user", "content": "warm up"}]});
    let reply =
        http.post_json("/v1/chat/completions", &body).send().await.map_err(|e| LoadError::WarmUp(e.to_string()))?;
    let stream = EventStream::parse(&reply.text());
    let results = stream.results().map_err(|e| LoadError::WarmUp(format!("{e:?}")))?;
    let names: Vec<String> = results.iter().flat_map(|r| &r.media).map(|m| m.name().to_string()).collect();
    if names.len() != 3 {
        return Err(LoadError::WarmUp(format!("it cached {} pictures instead of 3", names.len())));
    }
    Ok(names)
}

/// A server already running at `base`, on loopback unless `allow_remote`.
pub fn url(
    base: &str,
    api_key: Option<String>,
    media: Vec<String>,
    allow_remote: bool,
) -> Result<LoadTarget, LoadError> {
    let uri: http::Uri = base.parse().map_err(|_| LoadError::NotAUrl(base.to_string()))?;
    let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback && !allow_remote {
        return Err(LoadError::NotLoopback(base.to_string()));
    }
    Ok(LoadTarget {
        http: Http::new(base, api_key),
        media,
        in_process: false,
        chat: Err(LoadError::ChatNeedsEmbedded),
        _embedded: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_in_every_spelling_and_nothing_else_without_allow_remote() {
        for base in ["http://127.0.0.1:8080", "http://127.9.9.9", "http://localhost:1", "http://[::1]:8080"] {
            assert!(super::url(base, None, Vec::new(), false).is_ok(), "{base}");
        }
        for base in ["http://10.0.0.1:8080", "http://127.0.0.1.evil.example", "http://[::2]:80", "http://example.com"] {
            assert!(super::url(base, None, Vec::new(), false).is_err(), "{base}");
            assert!(super::url(base, None, Vec::new(), true).is_ok(), "{base}");
        }
    }
}
