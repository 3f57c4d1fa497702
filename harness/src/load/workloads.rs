//! One request of each kind, timed from when it was meant to start, with its integrity check.

use std::sync::Arc;
use std::time::Instant;

use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::options::Op;
use super::recorder::{Phase, Recorder};
use crate::events::{self, Event};
use crate::http::Http;

/// Lowercase hex SHA-256.
fn sha256(bytes: &[u8]) -> String {
    fixtures::images::sha256_hex(bytes)
}

/// How one request failed: the kind the report counts errors by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// No answer (build, connect, timeout, body: [`crate::http::HttpError::kind`]).
    #[error("{0}")]
    Http(&'static str),
    /// An answer with another status.
    #[error("status {0}")]
    Status(u16),
    /// A picture whose bytes do not hash to its name.
    #[error("integrity")]
    Integrity,
    /// The stream stopped in the middle.
    #[error("the stream broke off")]
    BrokeOff,
    /// A `data:` line that is not JSON.
    #[error("a chunk that is not JSON")]
    NotJson,
    /// An error event in the stream.
    #[error("an error event")]
    ErrorEvent,
    /// A `strata_mcp` event not of SPEC 6.2's shape.
    #[error("an event not of SPEC 6.2's shape")]
    BadEvent,
    /// No `[DONE]`.
    #[error("the stream ended without [DONE]")]
    NoDone,
}

/// Fetches a cached picture and checks its bytes against its name (`new`: a `cache-write` turn
/// announced it). Returns whether it came back whole.
pub async fn fetch_and_check(http: &Http, name: &str, recorder: &Recorder, new: bool) -> Result<(), Failure> {
    let reply = http.get(&format!("/tool-media/{name}")).send().await.map_err(|e| Failure::Http(e.kind()))?;
    if reply.status != 200 {
        recorder.picture(name, false, 0, new);
        return Err(Failure::Status(reply.status));
    }
    let whole = name.get(..64) == Some(sha256(&reply.body).as_str());
    recorder.picture(name, whole, reply.body.len(), new);
    if whole { Ok(()) } else { Err(Failure::Integrity) }
}

/// `GET /tool-media/<name>`.
pub async fn media_get(http: Http, name: Arc<str>, recorder: Arc<Recorder>, intended: Instant) {
    match fetch_and_check(&http, &name, &recorder, false).await {
        Ok(()) => {
            recorder.latency(Op::MediaGet, Phase::Total, intended.elapsed());
            recorder.ok(Op::MediaGet);
        }
        Err(kind) => recorder.error(format!("media-get: {kind}")),
    }
}

/// A streamed chat turn whose tool returns pictures; every picture it announces is fetched back.
pub async fn chat_turn(http: Http, op: Op, recorder: Arc<Recorder>, intended: Instant) {
    let body = json!({"model": op.name(), "stream": true, "strata_mcp": true,
        "messages": [{"role": "user", "content": "pictures, please"}]});
    let announced = match stream_turn(&http, &body, op, &recorder, intended).await {
        Ok(announced) => announced,
        Err(kind) => {
            recorder.error(format!("{}: {kind}", op.name()));
            return;
        }
    };
    recorder.latency(op, Phase::Total, intended.elapsed());
    for name in &announced {
        if let Err(kind) = fetch_and_check(&http, name, &recorder, op == Op::CacheWrite).await {
            recorder.error(format!("{}: announced picture {kind}", op.name()));
            return;
        }
    }
    if announced.is_empty() {
        recorder.error(format!("{}: no picture announced", op.name()));
        return;
    }
    recorder.ok(op);
}

async fn stream_turn(
    http: &Http,
    body: &Value,
    op: Op,
    recorder: &Recorder,
    intended: Instant,
) -> Result<Vec<String>, Failure> {
    let response = http.post_json("/v1/chat/completions", body).open().await.map_err(|e| Failure::Http(e.kind()))?;
    if response.status() != 200 {
        return Err(Failure::Status(response.status().as_u16()));
    }
    let mut body = response.into_body();
    let mut buffer = String::new();
    let mut announced = Vec::new();
    let (mut saw_call, mut saw_result, mut done) = (false, false, false);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Failure::BrokeOff)?;
        let Some(data) = frame.data_ref() else { continue };
        buffer.push_str(&String::from_utf8_lossy(data));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(payload) = line.trim().strip_prefix("data:").map(str::trim) else { continue };
            if payload == "[DONE]" {
                done = true;
                continue;
            }
            if !payload.contains("\"strata_mcp\"") && !payload.contains("\"error\"") {
                continue;
            }
            let chunk: Value = serde_json::from_str(payload).map_err(|_| Failure::NotJson)?;
            if chunk.get("error").is_some() {
                return Err(Failure::ErrorEvent);
            }
            let event = events::parse(&chunk["strata_mcp"]).map_err(|_| Failure::BadEvent)?;
            match event {
                Event::Call { .. } if !saw_call => {
                    saw_call = true;
                    recorder.latency(op, Phase::ToCall, intended.elapsed());
                }
                Event::Result(result) => {
                    if !saw_result {
                        saw_result = true;
                        recorder.latency(op, Phase::ToResult, intended.elapsed());
                    }
                    announced.extend(result.media.iter().map(|m| m.name().to_string()));
                }
                _ => {}
            }
        }
    }
    if !done {
        return Err(Failure::NoDone);
    }
    Ok(announced)
}
