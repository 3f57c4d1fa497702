//! One request of each kind, timed from when it was meant to start, with its integrity check: every
//! picture body read chunk by chunk into [`super::integrity`]'s check, never collected into a copy.

use std::sync::Arc;
use std::time::Instant;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};

use super::integrity::{BodyCheck, How, Proven};
use super::options::{Op, Phase};
use super::recorder::Recorder;
use super::wire::{Conn, Target, Wire};
use crate::events::{self, Event};
use crate::http::{Http, HttpError, exchange_timeout};

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

/// A picture to fetch: its name and its request target, parsed once.
#[derive(Debug, Clone)]
pub struct MediaTarget {
    /// `<sha256>.<ext>`.
    pub name: Arc<str>,
    /// `/tool-media/<name>`.
    pub path: Target,
}

impl MediaTarget {
    /// The target for `name`.
    pub fn new(name: &str) -> Result<Self, HttpError> {
        Ok(MediaTarget { name: Arc::from(name), path: Wire::path(&format!("/tool-media/{name}"))? })
    }
}

/// Reads a picture's body chunk by chunk into its check; its length.
async fn read_checked(body: &mut Incoming, check: &mut BodyCheck<'_>) -> Result<usize, Failure> {
    let mut len = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Failure::Http("body"))?;
        if let Some(data) = frame.data_ref() {
            check.feed(data);
            len += data.len();
        }
    }
    Ok(len)
}

/// Reads an answer to `GET /tool-media/<name>` and checks its bytes against the name; records the
/// picture (`new`: a `cache-write` turn announced it).
async fn check_answer(
    response: hyper::Response<Incoming>,
    name: &str,
    proven: &Proven,
    recorder: &Recorder,
    new: bool,
) -> Result<(), Failure> {
    if response.status() != 200 {
        recorder.picture(name, false, 0, new, How::Hashed);
        return Err(Failure::Status(response.status().as_u16()));
    }
    let mut check = proven.check(name);
    let len = read_checked(&mut response.into_body(), &mut check).await?;
    let (whole, how) = check.finish();
    recorder.picture(name, whole, len, new, how);
    if whole { Ok(()) } else { Err(Failure::Integrity) }
}

/// Fetches a picture a chat turn announced, through the harness's client, and checks it.
pub async fn fetch_and_check(
    http: &Http,
    name: &str,
    proven: &Proven,
    recorder: &Recorder,
    new: bool,
) -> Result<(), Failure> {
    let fetch = async {
        let response =
            http.get(&format!("/tool-media/{name}")).open_raw().await.map_err(|e| Failure::Http(e.kind()))?;
        check_answer(response, name, proven, recorder, new).await
    };
    tokio::time::timeout(exchange_timeout(), fetch).await.unwrap_or(Err(Failure::Http("timeout")))
}

/// `GET /tool-media/<name>` on the worker's own connection, the body checked chunk by chunk as it
/// arrives.
pub async fn media_get(
    wire: &Wire,
    conn: &mut Conn,
    target: &MediaTarget,
    proven: &Proven,
    recorder: &Recorder,
    intended: Instant,
) {
    let mut check = proven.check(&target.name);
    let mut len = 0;
    let fetch = wire.fetch(conn, &target.path, |status, data| {
        if status == 200 {
            check.feed(data);
            len += data.len();
        }
    });
    let outcome = match tokio::time::timeout(exchange_timeout(), fetch).await {
        Ok(Ok(200)) => match check.finish() {
            (true, how) => {
                recorder.picture(&target.name, true, len, false, how);
                Ok(())
            }
            (false, how) => {
                recorder.picture(&target.name, false, len, false, how);
                Err(Failure::Integrity)
            }
        },
        Ok(Ok(status)) => {
            recorder.picture(&target.name, false, 0, false, How::Hashed);
            Err(Failure::Status(status))
        }
        Ok(Err(error)) => Err(Failure::Http(error.kind())),
        Err(_) => Err(Failure::Http("timeout")),
    };
    match outcome {
        Ok(()) => recorder.completed(Op::MediaGet, intended.elapsed()),
        Err(kind) => {
            *conn = Conn::default();
            recorder.error(format!("media-get: {kind}"));
        }
    }
}

/// A streamed chat turn whose tool returns pictures; every picture it announces is fetched back.
pub async fn chat_turn(http: Http, op: Op, proven: &Proven, recorder: &Recorder, intended: Instant) {
    let body = json!({"model": op.name(), "stream": true, "strata_mcp": true,
        "messages": [{"role": "user", "content": "pictures, please"}]});
    let announced = match stream_turn(&http, &body, op, recorder, intended).await {
        Ok(announced) => announced,
        Err(kind) => {
            recorder.error(format!("{}: {kind}", op.name()));
            return;
        }
    };
    recorder.latency(op, Phase::Total, intended.elapsed());
    for name in &announced {
        if let Err(kind) = fetch_and_check(&http, name, proven, recorder, op == Op::CacheWrite).await {
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
    let response =
        http.post_json("/v1/chat/completions", body).open_raw().await.map_err(|e| Failure::Http(e.kind()))?;
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
