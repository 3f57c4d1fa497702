//! The wire monitor: every whole exchange a case makes with the server under test is held to SPEC's
//! invariants here, in the harness's own code, whatever the case was written to check. That is every
//! `Call::send` of the client (`http`); every answer a case opens and reads piece by piece to its end
//! (`Call::open`, `http::Streamed`); every whole answer the chat page gets through the recording proxy
//! of `browser`; and the same for servers a case starts itself (`Ctx::start_running`) or launches to
//! probe (`Ctx::launch_probing`). Left out, each for its reason: answers cut short (by the case, the
//! page or a signal), answers the case made wrong itself (`Call::unmonitored`), and the load tester's
//! (`Call::open_raw`), which checks every body itself. A case names one clause and checks it on its path; the monitor checks
//! the requirements that hold on every path — so a server that keeps 4.4's envelope only in turns
//! without tools, or 9.4's headers only on a picture's first fetch, fails the case that saw it.
//!
//! The invariants, each with the requirement it reads:
//! - **2.8** every error answer (status 400 and up, a body expected: not to `HEAD`) is JSON
//!   `{"error":{"type":…,"message":…}}` with both strings, and never holds the API key;
//! - **4.3, 4.5** a chat answer not streamed has the completion's envelope, and its `usage` adds up
//!   with `prompt_tokens_details.cached_tokens`;
//! - **4.4, 4.5, 6.2** a streamed chat answer: every `data:` is a chunk with the chunk envelope
//!   (`id`, `object` `chat.completion.chunk`, `created`, `model`, `choices[0]` with `index` 0, `delta`
//!   and `finish_reason`), the first delta `{"role":"assistant","content":""}`, a `strata_mcp` chunk's
//!   delta empty, the last chunk ending with a `finish_reason` and 4.5's `usage` — or, for a failure
//!   after the stream began, 2.8's error in its place — then `[DONE]`, last;
//! - **3.1** a health answer (`GET /health`, `/api/health`) has its seven keys in order, each of its
//!   type, `status` `"ok"` and `loaded` true;
//! - **5.8** every MCP server `GET /mcp` lists has a `status` of 5.8c–d: `starting`, `ready`, `failed`
//!   or `stopped`;
//! - **9.4** a picture's 200 has its format's `Content-Type`, its length, `ETag: "<sha256>"`,
//!   `Cache-Control: private, max-age=31536000, immutable`, `X-Content-Type-Options: nosniff`, and bytes
//!   whose SHA-256 is the name.
//!
//! The runner turns what the monitor saw into the case's failure (`runner`), naming the
//! requirement; only a case that passed is failed this way (its own failure says more).

use http::{HeaderMap, Method};
use serde_json::Value;

/// A requirement an exchange broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The requirement (`4.4`).
    pub clause: &'static str,
    /// The request (`POST /v1/chat/completions`).
    pub request: String,
    /// What was wrong.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SPEC {}: {} — {}", self.clause, self.request, self.what)
    }
}

const CHAT: &str = "/v1/chat/completions";
const MEDIA: &str = "/tool-media/";
const IMMUTABLE: &str = "private, max-age=31536000, immutable";

/// One whole exchange: what the monitor reads.
pub struct Seen<'a> {
    /// The request's method.
    pub method: &'a Method,
    /// The request target (path and query).
    pub target: &'a str,
    /// The answer's status.
    pub status: u16,
    /// The answer's headers.
    pub headers: &'a HeaderMap,
    /// The answer's whole body.
    pub body: &'a [u8],
    /// The API key the client holds, when it has one (never to appear in an error).
    pub key: Option<&'a str>,
}

/// The requirements `seen` breaks (none for a conforming exchange).
pub fn observe(seen: &Seen<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut broke = |clause: &'static str, what: String| {
        found.push(Violation { clause, request: format!("{} {}", seen.method, cut(seen.target, 120)), what })
    };
    let path = seen.target.split('?').next().unwrap_or("");
    if seen.status >= 400 && seen.method != Method::HEAD {
        if let Err(what) = error_shape(seen.body, seen.key) {
            broke("2.8", what);
        }
        return found;
    }
    let content_type = header(seen.headers, "content-type").to_ascii_lowercase();
    if seen.method == Method::POST && path == CHAT && seen.status == 200 {
        let check = if content_type.starts_with("text/event-stream") {
            stream(seen.body)
        } else if content_type.starts_with("application/json") {
            completion(seen.body)
        } else {
            Err(("4.3", format!("a 200 labelled {content_type:?}, neither JSON nor an event stream")))
        };
        if let Err((clause, what)) = check {
            broke(clause, what);
        }
    }
    if seen.method == Method::GET
        && seen.status == 200
        && (path == "/health" || path == "/api/health")
        && let Err(what) = health(seen.body)
    {
        broke("3.1", what);
    }
    if seen.method == Method::GET
        && seen.status == 200
        && path == "/mcp"
        && let Err(what) = mcp_statuses(seen.body)
    {
        broke("5.8", what);
    }
    if seen.method == Method::GET
        && seen.status == 200
        && let Some(name) = path.strip_prefix(MEDIA)
        && let Err(what) = picture(name, seen.headers, seen.body)
    {
        broke("9.4", what);
    }
    found
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()).unwrap_or_default()
}

fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most { text.to_string() } else { text.chars().take(most).collect::<String>() + "…" }
}

/// 2.8's shape, and no key in it.
fn error_shape(body: &[u8], key: Option<&str>) -> Result<(), String> {
    let text = String::from_utf8_lossy(body);
    if let Some(key) = key.filter(|k| k.len() >= 4)
        && text.contains(key)
    {
        return Err("an error answer that holds the API key".into());
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|_| format!("an error answer that is not JSON: {:?}", cut(&text, 160)))?;
    let error = &value["error"];
    if !error["type"].is_string() || !error["message"].is_string() {
        return Err(format!("an error answer without error.type and error.message strings: {}", cut(&text, 160)));
    }
    Ok(())
}

/// 3.1's health answer: its keys in order, each of its type, `status` "ok" and `loaded` true.
fn health(body: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(body);
    let value: Value =
        serde_json::from_slice(body).map_err(|_| format!("a health answer that is not JSON: {:?}", cut(&text, 160)))?;
    let keys: Vec<&str> = value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    let typed = value["status"] == "ok"
        && value["max_context"].is_u64()
        && value["model"].is_string()
        && value["images"].is_boolean()
        && value["api_key"].is_boolean()
        && value["loaded"] == true
        && value["service"].is_string();
    if keys != HEALTH_KEYS || !typed {
        return Err(format!(
            "a health answer not {{\"status\":\"ok\",\"max_context\":N,\"model\":S,\"images\":B,\"api_key\":B,\"loaded\":true,\"service\":S}} in that order: {}",
            cut(&text, 200)
        ));
    }
    Ok(())
}

/// Each server's `status` in `GET /mcp`, one of 5.8c–d's four (a body that is not this shape is the
/// case's to judge).
fn mcp_statuses(body: &[u8]) -> Result<(), String> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return Ok(()) };
    for server in value["servers"].as_array().into_iter().flatten() {
        let status = &server["status"];
        if !["starting", "ready", "failed", "stopped"].iter().any(|s| status == s) {
            return Err(format!(
                "MCP server {} has status {status}, not starting, ready, failed or stopped",
                server["name"]
            ));
        }
    }
    Ok(())
}

/// 3.1's keys, in order.
const HEALTH_KEYS: [&str; 7] = ["status", "max_context", "model", "images", "api_key", "loaded", "service"];

/// 4.5's usage.
fn usage(usage: &Value) -> Result<(), String> {
    let n = |field: &str| usage[field].as_u64();
    match (n("prompt_tokens"), n("completion_tokens"), n("total_tokens")) {
        (Some(p), Some(c), Some(t)) if p + c == t => {}
        _ => return Err(format!("usage without prompt + completion = total tokens: {usage}")),
    }
    if !usage["prompt_tokens_details"]["cached_tokens"].is_u64() {
        return Err(format!("usage without prompt_tokens_details.cached_tokens: {usage}"));
    }
    Ok(())
}

/// 4.3's envelope and 4.5's usage.
fn completion(body: &[u8]) -> Result<(), (&'static str, String)> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| ("4.3", "a completion that is not JSON".to_string()))?;
    let choice = &value["choices"][0];
    let fine = value["id"].as_str().is_some_and(|id| id.starts_with("chatcmpl-"))
        && value["object"] == "chat.completion"
        && value["created"].is_u64()
        && value["model"].is_string()
        && choice["index"] == 0
        && choice["message"]["role"] == "assistant"
        && choice["message"].get("content").is_some()
        && choice["finish_reason"].is_string();
    if !fine {
        return Err(("4.3", format!("a completion without 4.3's envelope: {}", cut(&value.to_string(), 300))));
    }
    usage(&value["usage"]).map_err(|what| ("4.5", what))
}

/// 4.4's chunks, 6.2's event chunks and 4.5's usage on the last.
fn stream(body: &[u8]) -> Result<(), (&'static str, String)> {
    let data = events(&String::from_utf8_lossy(body));
    let Some((done, chunks)) = data.split_last() else {
        return Err(("4.4", "an event stream with no data".into()));
    };
    if *done != "[DONE]" {
        return Err(("4.4", format!("an event stream whose last data is not [DONE]: {:?}", cut(done, 120))));
    }
    let mut last = None;
    for (n, raw) in chunks.iter().enumerate() {
        let chunk: Value = serde_json::from_str(raw)
            .map_err(|_| ("4.4", format!("data {n} is not JSON (or [DONE] before the end): {:?}", cut(raw, 120))))?;
        // A failure after the stream began ends it with 2.8's error in place of the last chunk.
        if chunk.get("error").is_some() && n + 1 == chunks.len() {
            return error_shape(raw.as_bytes(), None).map_err(|what| ("2.8", format!("the stream's ending {what}")));
        }
        let choice = &chunk["choices"][0];
        let enveloped = chunk["id"].is_string()
            && chunk["object"] == "chat.completion.chunk"
            && chunk["created"].is_u64()
            && chunk["model"].is_string()
            && choice["index"] == 0
            && choice["delta"].is_object()
            && choice.get("finish_reason").is_some();
        if !enveloped {
            return Err(("4.4", format!("chunk {n} without 4.4's envelope: {}", cut(raw, 300))));
        }
        if n == 0 && choice["delta"] != serde_json::json!({"role": "assistant", "content": ""}) {
            return Err((
                "4.4",
                format!(
                    "a first chunk whose delta is not {{\"role\":\"assistant\",\"content\":\"\"}}: {}",
                    cut(raw, 300)
                ),
            ));
        }
        if chunk.get("strata_mcp").is_some() && choice["delta"].as_object().is_some_and(|d| !d.is_empty()) {
            return Err(("6.2", format!("a strata_mcp chunk whose delta is not empty: {}", cut(raw, 300))));
        }
        last = Some(chunk);
    }
    let last = last.ok_or(("4.4", "an event stream with no chunk before [DONE]".to_string()))?;
    if !last["choices"][0]["finish_reason"].is_string() {
        return Err(("4.4", format!("a last chunk without a finish_reason: {}", cut(&last.to_string(), 300))));
    }
    usage(&last["usage"]).map_err(|what| ("4.5", format!("the last chunk's {what}")))
}

/// The data of each event of an SSE body: its `data:` lines (one space after the colon dropped) joined
/// with `\n`, an event ending at a blank line (or the body's end); comments and other fields skipped.
fn events(text: &str) -> Vec<String> {
    let (mut all, mut lines) = (Vec::new(), Vec::<&str>::new());
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).chain([""]) {
        if line.is_empty() {
            if !lines.is_empty() {
                all.push(lines.join("\n"));
                lines.clear();
            }
        } else if let Some(value) = line.strip_prefix("data:") {
            lines.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    all
}

/// 9.4's headers and bytes.
fn picture(name: &str, headers: &HeaderMap, body: &[u8]) -> Result<(), String> {
    let (digest, ext) = name.split_once('.').unwrap_or((name, ""));
    let wanted_type = match ext {
        "png" => "image/png",
        "jpg" => "image/jpeg",
        "webp" => "image/webp",
        _ => return Ok(()),
    };
    let checks = [
        ("Content-Type", header(headers, "content-type"), wanted_type.to_string()),
        ("Content-Length", header(headers, "content-length"), body.len().to_string()),
        ("ETag", header(headers, "etag"), format!("\"{digest}\"")),
        ("Cache-Control", header(headers, "cache-control"), IMMUTABLE.to_string()),
        ("X-Content-Type-Options", header(headers, "x-content-type-options"), "nosniff".to_string()),
    ];
    for (name, got, wanted) in checks {
        if got != wanted {
            return Err(format!("{name}: {got:?}, not {wanted:?}"));
        }
    }
    let hashed = fixtures::images::sha256_hex(body);
    if hashed != digest {
        return Err(format!("bytes whose SHA-256 is {hashed}, not the name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
