//! Hostile request bodies, and the loop that posts one body from a few workers until time is up.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use fixtures::bombs;
use fixtures::images::png_claiming;
use serde_json::{Value, json};

use super::env::{AttackEnv, KEY};

/// `{"messages":[…"hi"…], <extra>}` with `extra` written as given (the start of the last field).
fn with_field(extra: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut body = br#"{"messages":[{"role":"user","content":"hi"}],"#.to_vec();
    body.extend_from_slice(extra);
    body.extend_from_slice(tail);
    body
}

/// An array of `count` zeros, `[0,0,…]`.
fn zeros(count: usize) -> Vec<u8> {
    let mut array = Vec::with_capacity(count * 2 + 1);
    array.push(b'[');
    for i in 0..count {
        array.extend_from_slice(if i == 0 { b"0" } else { b",0" });
    }
    array.push(b']');
    array
}

/// 100 MB: 50 million zeros in a field the server does not read.
pub fn huge_unknown_array() -> Vec<Vec<u8>> {
    vec![huge_unknown_array_body()]
}

fn huge_unknown_array_body() -> Vec<u8> {
    with_field(b"\"junk\":", &[zeros(50_000_000), b"}".to_vec()].concat())
}

/// 3 million zeros in `tools`, which the server reads: over the value bound.
pub fn many_values() -> Vec<Vec<u8>> {
    vec![many_values_body()]
}

fn many_values_body() -> Vec<u8> {
    with_field(b"\"tools\":", &[zeros(3_000_000), b"}".to_vec()].concat())
}

/// 4 million `[` in `messages` (never closed: a parser that recurses would overflow its stack first).
pub fn deep_nesting() -> Vec<Vec<u8>> {
    vec![deep_nesting_body()]
}

fn deep_nesting_body() -> Vec<u8> {
    let mut body = br#"{"messages":"#.to_vec();
    body.resize(body.len() + 4_000_000, b'[');
    body
}

/// 250 MiB: a string of `x` in a field the server does not read.
pub fn max_size() -> Vec<Vec<u8>> {
    vec![max_size_body()]
}

fn max_size_body() -> Vec<u8> {
    let mut body = with_field(b"\"junk\":\"", b"");
    body.resize((250 << 20) - 2, b'x');
    body.extend_from_slice(b"\"}");
    body
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn user_pictures(urls: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut content = vec![json!({"type": "text", "text": "what are these?"})];
    content.extend(urls.into_iter().map(|url| json!({"type": "image_url", "image_url": {"url": url}})));
    json!({"messages": [{"role": "user", "content": content}]}).to_string().into_bytes()
}

/// 64 PNG headers claiming 60000×60000 in one user message (all reach the vision path), and 65 (the
/// 65th is 400).
pub fn pictures_claiming_size() -> Vec<Vec<u8>> {
    let claim = data_url("image/png", &png_claiming(60_000, 60_000));
    [64, 65].map(|count| user_pictures(std::iter::repeat_n(claim.clone(), count))).into()
}

/// A PNG bomb, a GIF frame bomb, an APNG and an animated WebP, each in a user message of its own.
pub fn picture_bombs() -> Vec<Vec<u8>> {
    [
        data_url("image/png", &bombs::png_bomb(20_000)),
        data_url("image/gif", &bombs::gif_bomb()),
        data_url("image/png", &bombs::apng()),
        data_url("image/webp", &bombs::animated_webp()),
    ]
    .map(|url| user_pictures([url]))
    .into()
}

/// The PNG bomb nine times as bare base64 in the text of a tool message (one over the lifting cap).
pub fn lifted_bombs() -> Vec<Vec<u8>> {
    vec![lifted_bombs_body()]
}

fn lifted_bombs_body() -> Vec<u8> {
    let bomb = base64::engine::general_purpose::STANDARD.encode(bombs::png_bomb(20_000));
    let text: Vec<String> = (0..9).map(|i| format!("picture {i}: {bomb}")).collect();
    let messages: Vec<Value> = vec![
        json!({"role": "user", "content": "show me"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "shoot", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": text.join("\n")}),
    ];
    json!({"messages": messages}).to_string().into_bytes()
}

/// What one answer counts as: its status, or how the request failed.
fn answer_name(result: &Result<reqwest::Response, reqwest::Error>) -> String {
    match result {
        Ok(response) => response.status().as_u16().to_string(),
        Err(error) if error.is_timeout() => "timeout".into(),
        Err(error) if error.is_connect() => "refused".into(),
        Err(_) => "closed".into(),
    }
}

/// The `error.message` of a JSON error body, cut to 60 characters.
fn error_message(body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).unwrap_or_default();
    let message = value["error"]["message"].as_str().unwrap_or("no JSON error");
    let mut cut: String = message.chars().take(60).collect();
    if cut.len() < message.len() {
        cut.push('…');
    }
    cut
}

/// `workers` clients post `bodies` in turn (with the key) until the duration is over; answers counted.
pub async fn flood(env: &AttackEnv, workers: usize, bodies: Vec<Bytes>) -> BTreeMap<String, u64> {
    let deadline = tokio::time::Instant::now() + env.duration;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap_or_default();
    let url = format!("{}/v1/chat/completions", env.base);
    let tasks: Vec<_> = (0..workers)
        .map(|worker| {
            let (client, url, bodies) = (client.clone(), url.clone(), bodies.clone());
            tokio::spawn(async move {
                let mut answers = BTreeMap::new();
                let mut turn = worker;
                while tokio::time::Instant::now() < deadline && !bodies.is_empty() {
                    let body = bodies[turn % bodies.len()].clone();
                    turn += 1;
                    let sent = client
                        .post(&url)
                        .bearer_auth(KEY)
                        .header("content-type", "application/json")
                        .body(body)
                        .send()
                        .await;
                    let mut name = answer_name(&sent);
                    if let Ok(response) = sent {
                        let refused = !response.status().is_success();
                        let body = response.bytes().await.unwrap_or_default();
                        if refused {
                            name = format!("{name} ({})", error_message(&body));
                        }
                    }
                    *answers.entry(name).or_insert(0) += 1;
                }
                answers
            })
        })
        .collect();
    super::answers_of(tasks).await
}
