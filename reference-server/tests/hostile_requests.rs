//! Hostile request bodies (SPEC 4.10): a huge array in an unknown field costs no memory, and a body
//! with more JSON values than the bound is refused with 413 before it can grow the server. Measured on
//! the real binary: its peak RSS is read from /proc after the attack.

mod support;

use std::process::Stdio;

use support::{Binary, peak_rss_mib};

const KEY: &str = "hostile-test-key";

fn start() -> Binary {
    start_with("{}")
}

fn start_with(config: &str) -> Binary {
    let dir = tempfile::tempdir().expect("dir");
    let config: serde_json::Value = serde_json::from_str(config).expect("a JSON config");
    support::spawn_binary(dir.path(), &config, &["--api-key", KEY], &[], Stdio::null())
}

/// `{"messages":[…hi…], "<field>": [0,0,…]}` with `elements` zeros.
fn body_with_array(field: &str, elements: usize) -> Vec<u8> {
    let mut body = format!(r#"{{"messages":[{{"role":"user","content":"hi"}}],"{field}":[0"#).into_bytes();
    body.reserve(elements * 2 + 4);
    for _ in 1..elements {
        body.extend_from_slice(b",0");
    }
    body.extend_from_slice(b"]}");
    body
}

async fn post(server: &Binary, body: Vec<u8>) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", server.base))
        .bearer_auth(KEY)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON body"))
}

#[tokio::test]
async fn spec_4_10_a_huge_unknown_field_costs_nothing_and_too_many_values_are_413() {
    let server = start();
    let pid = server.child.id();
    // 30 million elements in an unknown field (60 MB): as a serde_json::Value that was ~2.4 GB.
    let (status, answer) = post(&server, body_with_array("junk", 30_000_000)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello from the mock engine.");
    // Two million values where the server reads them (a tool list): refused at the bound.
    let (status, answer) = post(&server, body_with_array("tools", 2_000_000)).await;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"]["message"], "the request holds more than 1000000 JSON values");
    let peak = peak_rss_mib(pid);
    eprintln!("reference-server peak RSS after a 60 MB unknown array and a 2M-value tool list: {peak} MiB");
    assert!(peak < 300, "peak RSS {peak} MiB");
}

/// `count` copies of a 16×16 PNG as OpenAI `image_url` parts.
fn picture_parts(count: usize) -> Vec<serde_json::Value> {
    use base64::Engine;
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 16, 16, 1);
    let url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png));
    (0..count).map(|_| serde_json::json!({"type": "image_url", "image_url": {"url": url}})).collect()
}

#[tokio::test]
async fn spec_4_13_at_most_64_pictures_reach_the_vision_path() {
    let server = start_with(r#"{"vision": {"backend": "geometry"}}"#);
    for (count, status) in [(63, 200), (64, 200), (65, 400)] {
        let body = serde_json::json!({"messages": [{"role": "user", "content": picture_parts(count)}]});
        let (got, answer) = post(&server, body.to_string().into_bytes()).await;
        assert_eq!(got, status, "{count} pictures: {answer}");
        if status == 400 {
            assert_eq!(answer["error"]["message"], "the request holds more than 64 pictures");
        }
    }
    // In a tool message the 65th is a note, and the request goes on: its prompt is the 64-picture
    // prompt plus the note's bytes (one token per byte, SPEC 4.8).
    let tool_turn = |pictures: usize| {
        serde_json::json!({"messages": [
            {"role": "user", "content": "look"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": picture_parts(pictures)},
        ]})
        .to_string()
        .into_bytes()
    };
    let (got, at_cap) = post(&server, tool_turn(64)).await;
    assert_eq!(got, 200, "{at_cap}");
    let (got, over) = post(&server, tool_turn(65)).await;
    assert_eq!(got, 200, "{over}");
    let note = "[image omitted: the request holds more than 64 pictures]";
    let tokens = |answer: &serde_json::Value| answer["usage"]["prompt_tokens"].as_u64().expect("tokens");
    assert_eq!(tokens(&over) - tokens(&at_cap), note.len() as u64);
}

#[tokio::test]
async fn spec_4_7_a_prompt_far_over_the_context_is_refused_before_it_is_rendered() {
    let server = start();
    let pid = server.child.id();
    // 150 MB of text in one user message: rendered, its prompt ids alone would take 600 MB.
    let text = "a".repeat(150 << 20);
    let body = serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string().into_bytes();
    drop(text);
    let (status, answer) = post(&server, body).await;
    assert_eq!(status, 400, "{answer}");
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("request exceeds the context window: prompt (more than 157286400 tokens)"),
        "{message}"
    );
    let peak = peak_rss_mib(pid);
    eprintln!("reference-server peak RSS after a 150 MB prompt: {peak} MiB");
    assert!(peak < 512, "peak RSS {peak} MiB");
}
