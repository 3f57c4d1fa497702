//! The wire monitor's invariants, each shown holding for a conforming exchange and broken by one
//! change of it.

use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use super::*;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).expect("value"));
    }
    map
}

fn seen<'a>(method: &'a Method, target: &'a str, status: u16, headers: &'a HeaderMap, body: &'a [u8]) -> Seen<'a> {
    Seen { method, target, status, headers, body, key: Some("sk-secret-key") }
}

fn clauses(found: Vec<Violation>) -> Vec<&'static str> {
    found.into_iter().map(|v| v.clause).collect()
}

#[test]
fn every_error_answer_is_2_8s_json_without_the_key() {
    let none = HeaderMap::new();
    let get = Method::GET;
    let good = br#"{"error":{"type":"not_found","message":"not found"}}"#;
    for status in [400, 401, 404, 405, 413, 500, 503] {
        assert!(observe(&seen(&get, "/web/x", status, &none, good)).is_empty(), "{status}");
    }
    assert!(observe(&seen(&get, "/ok", 399, &none, b"plain")).is_empty(), "not an error");
    assert!(observe(&seen(&Method::HEAD, "/x", 404, &none, b"")).is_empty(), "HEAD has no body");
    for bad in [
        &b"Invalid URL: Invalid UTF-8"[..],
        br#"{"error":"not found"}"#,
        br#"{"error":{"type":"x"}}"#,
        br#"{"error":{"message":"m"}}"#,
        br#"{"error":{"type":1,"message":"m"}}"#,
        br#"{"error":{"type":"x","message":"bad key sk-secret-key"}}"#,
        b"",
    ] {
        let found = observe(&seen(&get, "/web/%FF", 400, &none, bad));
        assert_eq!(clauses(found), ["2.8"], "{}", String::from_utf8_lossy(bad));
    }
}

fn completion() -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 0}}})
}

fn chat(content_type: &str, body: &[u8]) -> Vec<&'static str> {
    let h = headers(&[("content-type", content_type)]);
    clauses(observe(&seen(&Method::POST, "/v1/chat/completions", 200, &h, body)))
}

#[test]
fn a_completion_keeps_4_3s_envelope_and_4_5s_usage() {
    let json = "application/json";
    assert!(chat(json, completion().to_string().as_bytes()).is_empty());
    type Edit = (&'static str, fn(&mut Value));
    let broken: [Edit; 9] = [
        ("4.3", |v| v["id"] = json!("cmpl-1")),
        ("4.3", |v| v["object"] = json!("chat.completion.chunk")),
        ("4.3", |v| v["created"] = json!("1")),
        ("4.3", |v| v["choices"][0]["index"] = json!(1)),
        ("4.3", |v| v["choices"][0]["message"]["role"] = json!("user")),
        ("4.3", |v| v["choices"][0]["finish_reason"] = Value::Null),
        ("4.5", |v| v["usage"]["total_tokens"] = json!(6)),
        ("4.5", |v| v["usage"].as_object_mut().expect("usage").remove("prompt_tokens_details").map(drop).unwrap_or(())),
        ("4.5", |v| v.as_object_mut().expect("object").remove("usage").map(drop).unwrap_or(())),
    ];
    for (clause, edit) in broken {
        let mut value = completion();
        edit(&mut value);
        assert_eq!(chat(json, value.to_string().as_bytes()), [clause], "{value}");
    }
    assert_eq!(chat("text/plain", b"{}"), ["4.3"]);
    assert_eq!(chat(json, b"not json"), ["4.3"]);
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A streamed turn with a tool event: first chunk, text, an event, the last chunk, [DONE].
fn turn() -> Vec<Value> {
    let mut event = chunk(json!({}), Value::Null);
    event["strata_mcp"] = json!({"event": "start", "id": "c1", "name": "t"});
    let mut last = chunk(json!({}), json!("stop"));
    last["usage"] = completion()["usage"].clone();
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "hi"}), Value::Null),
        event,
        last,
    ]
}

fn sse(chunks: &[Value], done: bool) -> Vec<u8> {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.insert_str(0, ": keep-alive\n\n");
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    text.into_bytes()
}

#[test]
fn a_stream_keeps_the_envelope_in_every_chunk_and_ends_with_usage_then_done() {
    let stream = "text/event-stream";
    assert!(chat(stream, &sse(&turn(), true)).is_empty());
    assert!(chat(stream, sse(&turn(), true).replace_all_crlf().as_slice()).is_empty(), "CR LF lines");
    type Edit = (&'static str, fn(&mut Vec<Value>));
    let edits: [Edit; 10] = [
        ("4.4", |t| t[2].as_object_mut().expect("chunk").remove("model").map(drop).unwrap_or(())),
        ("4.4", |t| t[2]["object"] = json!("chat.completion")),
        ("4.4", |t| {
            t[1]["choices"][0].as_object_mut().expect("choice").remove("finish_reason").map(drop).unwrap_or(())
        }),
        ("4.4", |t| t[0]["choices"][0]["delta"] = json!({"role": "assistant"})),
        ("4.4", |t| t[3]["choices"][0]["finish_reason"] = Value::Null),
        ("4.4", |t| t.clear()),
        ("6.2", |t| t[2]["choices"][0]["delta"] = json!({"content": ""})),
        ("4.5", |t| t[3]["usage"]["completion_tokens"] = json!(9)),
        ("4.5", |t| t[3].as_object_mut().expect("chunk").remove("usage").map(drop).unwrap_or(())),
        ("4.4", |t| t[1]["choices"][0]["index"] = json!(1)),
    ];
    for (clause, edit) in edits {
        let mut chunks = turn();
        edit(&mut chunks);
        assert_eq!(chat(stream, &sse(&chunks, true)), [clause], "{chunks:?}");
    }
    assert_eq!(chat(stream, &sse(&turn(), false)), ["4.4"], "no [DONE]");
    // One event's JSON over several data: lines, without the space, among other fields: one chunk.
    let mut split = String::from_utf8(sse(&turn()[..1], false)).expect("text");
    split = split.replacen("data: {", "id: 1\ndata:{\ndata: ", 1);
    let rest = String::from_utf8(sse(&turn()[1..], true)).expect("text");
    assert!(chat(stream, format!("{split}{rest}").as_bytes()).is_empty(), "{split}");
    // Two data lines in one event are one value, not two chunks.
    let glued = format!("data: {}\ndata: {}\n\n", turn()[0], turn()[1]);
    assert_eq!(chat(stream, format!("{glued}{rest}").as_bytes()), ["4.4"], "two chunks glued into one event");
    // A failure after the stream began: 2.8's error in place of the last chunk, then [DONE].
    let failed = |error: Value| {
        let mut chunks = turn();
        chunks[3] = error;
        chat(stream, &sse(&chunks, true))
    };
    assert!(failed(json!({"error": {"type": "invalid_request_error", "message": "exceeds the context"}})).is_empty());
    assert_eq!(failed(json!({"error": {"message": "no type"}})), ["2.8"]);
    let mut early = turn();
    early[1] = json!({"error": {"type": "server_error", "message": "m"}});
    assert_eq!(chat(stream, &sse(&early, true)), ["4.4"], "an error before the end is no chunk");
    let mut after = sse(&turn(), true);
    after.extend_from_slice(b"data: {}\n\n");
    assert_eq!(chat(stream, &after), ["4.4"], "data after [DONE]");
}

trait Crlf {
    fn replace_all_crlf(&self) -> Vec<u8>;
}

impl Crlf for Vec<u8> {
    fn replace_all_crlf(&self) -> Vec<u8> {
        String::from_utf8_lossy(self).replace('\n', "\r\n").into_bytes()
    }
}

#[test]
fn a_picture_keeps_9_4s_headers_and_its_name() {
    let body = b"\x89PNG\r\n\x1a\npixels";
    let digest = fixtures::images::sha256_hex(body);
    let target = format!("/tool-media/{digest}.png");
    let good = [
        ("content-type", "image/png".to_string()),
        ("content-length", body.len().to_string()),
        ("etag", format!("\"{digest}\"")),
        ("cache-control", IMMUTABLE.to_string()),
        ("x-content-type-options", "nosniff".to_string()),
    ];
    let of = |pairs: &[(&'static str, String)], body: &[u8]| {
        let h = headers(&pairs.iter().map(|(n, v)| (*n, v.as_str())).collect::<Vec<_>>());
        clauses(observe(&seen(&Method::GET, &target, 200, &h, body)))
    };
    assert!(of(&good, body).is_empty());
    for n in 0..good.len() {
        let mut missing = good.to_vec();
        missing.remove(n);
        assert_eq!(of(&missing, body), ["9.4"], "without {}", good[n].0);
        let mut wrong = good.to_vec();
        wrong[n].1.push('x');
        assert_eq!(of(&wrong, body), ["9.4"], "a wrong {}", good[n].0);
    }
    let mut other = body.to_vec();
    other[9] ^= 1;
    assert_eq!(of(&good, &other), ["9.4"], "bytes of another name");
    let h = HeaderMap::new();
    assert!(observe(&seen(&Method::HEAD, &target, 200, &h, b"")).is_empty(), "HEAD is 9.6's");
    assert!(observe(&seen(&Method::GET, &target, 304, &h, b"")).is_empty(), "304 is 9.5's");
}

#[test]
fn every_health_answer_has_3_1s_keys_in_order() {
    let json = headers(&[("content-type", "application/json")]);
    let get = Method::GET;
    let good = br#"{"status":"ok","max_context":262144,"model":"m","images":false,"api_key":true,"loaded":true,"service":"reference-server"}"#;
    for path in ["/health", "/api/health"] {
        assert!(observe(&seen(&get, path, 200, &json, good)).is_empty(), "{path}");
    }
    for bad in [
        &br#"{"status":"ok"}"#[..],
        br#"{"max_context":262144,"status":"ok","model":"m","images":false,"api_key":true,"loaded":true,"service":"s"}"#,
        br#"{"status":"ok","max_context":262144,"model":"m","images":"false","api_key":true,"loaded":true,"service":"s"}"#,
        br#"{"status":"ok","max_context":262144,"model":"m","images":false,"api_key":true,"loaded":false,"service":"s"}"#,
        b"ok",
    ] {
        assert_eq!(clauses(observe(&seen(&get, "/api/health", 200, &json, bad))), ["3.1"], "{}", String::from_utf8_lossy(bad));
    }
    assert!(observe(&seen(&get, "/healthz", 200, &json, b"ok")).is_empty(), "another path");
}

#[test]
fn every_mcp_server_has_one_of_5_8s_statuses() {
    let get = Method::GET;
    let json = headers(&[("content-type", "application/json")]);
    for status in ["starting", "ready", "failed", "stopped"] {
        let body = serde_json::json!({"servers": [{"name": "a", "status": status}], "tools": 0}).to_string();
        assert!(observe(&seen(&get, "/mcp", 200, &json, body.as_bytes())).is_empty(), "{status}");
    }
    for status in [serde_json::json!("idle"), serde_json::json!(null), serde_json::json!("Ready")] {
        let body = serde_json::json!({"servers": [{"name": "a", "status": status}], "tools": 0}).to_string();
        assert_eq!(clauses(observe(&seen(&get, "/mcp", 200, &json, body.as_bytes()))), ["5.8"], "{status}");
    }
}
