//! SPEC §4: chat completions with the mock engine, streamed and not; bad bodies; the context guard;
//! a closed connection cancels generation.

mod support;

use serde_json::{Value, json};
use support::{Sse, chat, chat_stream, client, start, user, wait_for_status};

#[tokio::test]
async fn spec_4_3_a_plain_answer_with_reasoning_and_usage() {
    let server = start(json!({})).await;
    let response = chat(&server, &user("hi")).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["object"], "chat.completion");
    assert!(body["id"].as_str().expect("id").starts_with("chatcmpl-"));
    let message = &body["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], "Hello from the mock engine.");
    assert_eq!(message["reasoning_content"], "Thinking about it.");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    // 4.8: <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n = 1+5+2+1+1+1+10 tokens.
    assert_eq!(body["usage"]["prompt_tokens"], 21);
    let script = "Thinking about it.</think>\n\nHello from the mock engine.";
    assert_eq!(body["usage"]["completion_tokens"], script.len());
    assert_eq!(body["usage"]["total_tokens"], 21 + script.len());
    assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
}

#[tokio::test]
async fn spec_4_4_a_streamed_answer_in_openai_chunks() {
    let server = start(json!({"engine": {"scripts": ["</think>\n\nOne, two, three."]}})).await;
    let sse = chat_stream(&server, user("count")).await;
    assert!(sse.done, "ends with [DONE]");
    assert_eq!(sse.chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
    assert_eq!(sse.chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(sse.content(), "One, two, three.");
    let last = sse.last();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert_eq!(last["usage"]["prompt_tokens"], 24);
    let ids: Vec<&Value> = sse.chunks.iter().map(|c| &c["id"]).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "one id for the whole answer");
    assert!(sse.events().is_empty(), "no strata_mcp events without MCP");
}

#[tokio::test]
async fn spec_4_9_scripts_advance_per_pass_and_the_last_repeats() {
    let server = start(json!({"engine": {"scripts": ["first", "second"]}})).await;
    let mut answers = Vec::new();
    for _ in 0..3 {
        let body: Value = chat(&server, &user("x")).await.json().await.expect("json");
        answers.push(body["choices"][0]["message"]["content"].as_str().expect("text").to_string());
    }
    assert_eq!(answers, ["first", "second", "second"]);
}

#[tokio::test]
async fn spec_4_5_max_tokens_cuts_with_length() {
    let server = start(json!({"engine": {"scripts": ["abcdefghij"]}})).await;
    let mut body = user("x");
    body["max_tokens"] = json!(4);
    let answer: Value = chat(&server, &body).await.json().await.expect("json");
    assert_eq!(answer["choices"][0]["message"]["content"], "abcd");
    assert_eq!(answer["choices"][0]["finish_reason"], "length");
    assert_eq!(answer["usage"]["completion_tokens"], 4);
}

#[tokio::test]
async fn spec_4_7_a_prompt_that_does_not_fit_is_refused() {
    let server = start(json!({"engine": {"max_context": 64}})).await;
    let response = chat(&server, &user(&"x".repeat(100))).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(body["error"]["message"].as_str().expect("text").contains("leaves no room to answer"));
    let mut too_many = user("x");
    too_many["max_tokens"] = json!(60);
    let response = chat(&server, &too_many).await;
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn spec_4_10_malformed_bodies_are_400_and_big_ones_413() {
    let server = start(json!({"max_body_mib": 1})).await;
    let send_raw = |body: Vec<u8>| {
        client().post(server.url("/v1/chat/completions")).header("content-type", "application/json").body(body).send()
    };
    for bad in [&b"{not json"[..], b"[]", br#"{"messages": 3}"#, br#"{"messages": [{"role": "user", "content": 1}]}"#] {
        let response = send_raw(bad.to_vec()).await.expect("sent");
        assert_eq!(response.status(), 400, "{}", String::from_utf8_lossy(bad));
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert!(body["error"]["message"].as_str().expect("text").starts_with("the request is malformed ("));
    }
    let big = format!(r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#, "x".repeat(2 << 20));
    let response = send_raw(big.into_bytes()).await.expect("sent");
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn spec_4_11_closing_the_stream_cancels_generation() {
    let long = "word ".repeat(2000);
    let server = start(json!({"engine": {"scripts": [long], "delay_ms": 5}})).await;
    let mut body = user("talk");
    body["stream"] = json!(true);
    let mut response = chat(&server, &body).await;
    assert_eq!(response.status(), 200);
    let first = response.chunk().await.expect("read").expect("a first chunk");
    assert!(String::from_utf8_lossy(&first).contains("\"role\":\"assistant\""));
    wait_for_status(&server, 5, |s| s["busy"] == true).await;
    drop(response);
    let status = wait_for_status(&server, 10, |s| s["requests"]["cancelled"] == 1).await;
    assert_eq!(status["busy"], false);
    assert_eq!(status["requests"]["finished"], 0);
}

#[tokio::test]
async fn spec_4_12_a_call_to_the_request_s_own_tool_streams_as_tool_calls() {
    let script = "</think>\n\nUsing it.\n<tool_call>\n<function=lookup>\n<parameter=q>\nrust\n</parameter>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>";
    let server = start(json!({"engine": {"scripts": [script]}})).await;
    let mut body = user("find");
    body["tools"] = json!([{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}}]);
    let sse = chat_stream(&server, body.clone()).await;
    let calls: Vec<&Value> = sse.chunks.iter().filter_map(|c| c["choices"][0]["delta"].get("tool_calls")).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0][0]["function"]["name"], "lookup");
    assert_eq!(calls[0][0]["function"]["arguments"], "");
    assert!(calls[0][0]["id"].as_str().expect("id").starts_with("call_"));
    let arguments: Value =
        serde_json::from_str(calls[1][0]["function"]["arguments"].as_str().expect("text")).expect("json");
    assert_eq!(arguments, json!({"q": "rust", "n": 3}));
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(sse.content(), "Using it.");
}

#[tokio::test]
async fn spec_4_13_without_an_encoder_a_user_picture_is_400_and_a_tool_picture_a_note() {
    let server = start(json!({})).await;
    let picture = json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}});
    let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "see"}, picture]}]});
    let response = chat(&server, &body).await;
    assert_eq!(response.status(), 400);
    let body = json!({"messages": [
        {"role": "user", "content": "see"},
        {"role": "tool", "content": [{"type": "text", "text": "shot:"}, picture]},
    ]});
    let response = chat(&server, &body).await;
    assert_eq!(response.status(), 200);
    let prompt = server.server.state.engine.recent_prompts().pop().expect("a prompt");
    let text = reference_server::tokenizer::decode(&prompt);
    assert!(text.contains("shot:[image omitted: this server has no image encoder]"), "{text}");
}

#[tokio::test]
async fn spec_4_6_whitespace_before_a_call_and_at_the_end_is_not_content() {
    let server = start(json!({"engine": {"scripts": ["</think>\n\n  Answer with spaces.  \n\n"]}})).await;
    let sse: Sse = chat_stream(&server, user("x")).await;
    assert_eq!(sse.content(), "Answer with spaces.");
}

#[tokio::test]
async fn spec_4_9_a_request_naming_a_script_set_replays_that_set() {
    let server = start(json!({"engine": {
        "scripts": ["default answer"],
        "restart_per_request": true,
        "script_sets": {"poet": ["roses are red"]},
    }}))
    .await;
    let mut body = user("x");
    body["model"] = json!("poet");
    let poet: Value = chat(&server, &body).await.json().await.expect("json");
    assert_eq!(poet["choices"][0]["message"]["content"], "roses are red");
    let plain: Value = chat(&server, &user("x")).await.json().await.expect("json");
    assert_eq!(plain["choices"][0]["message"]["content"], "default answer");
}
