//! SPEC §6 and §7: the tool loop with the mock engine and a real fixture MCP server — event shapes,
//! the next pass's prompt, rounds, errors as text, the cap, keep-alives, stop, own-page rules.

mod support;

use std::time::Duration;

use fixtures::http::{HttpFixture, serve_http};
use fixtures::mcp_server::{FixtureLog, FixtureOptions};
use fixtures::scripts::{answer_script, call_script};
use reference_server::tokenizer::decode;
use serde_json::{Value, json};
use support::{Sse, TestServer, chat, chat_stream, client, start, wait_for_status};

struct Setup {
    server: TestServer,
    log: FixtureLog,
    _fixture: HttpFixture,
}

async fn setup(scripts: Vec<String>, mcp: Value) -> Setup {
    let log = FixtureLog::default();
    let fixture =
        serve_http(FixtureOptions { log: log.clone(), ..FixtureOptions::default() }, 0, None).await.expect("fixture");
    let server = start(json!({
        "mcp_servers": {"fake": {"url": fixture.url}},
        "mcp": mcp,
        "engine": {"scripts": scripts},
    }))
    .await;
    Setup { server, log, _fixture: fixture }
}

fn opt_in() -> Value {
    json!({"messages": [{"role": "user", "content": "please check"}], "strata_mcp": true})
}

fn prompts(setup: &Setup) -> Vec<String> {
    setup.server.server.state.engine.recent_prompts().iter().map(|p| decode(p)).collect()
}

#[tokio::test]
async fn spec_6_2_a_call_streams_start_call_result_in_their_exact_shapes() {
    let setup = setup(
        vec![call_script("fake__echo", &[("text", "hello from the tool")]), answer_script("The tool said hello.")],
        json!({}),
    )
    .await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let events = sse.events();
    assert_eq!(events.len(), 3, "{events:?}");
    let id = events[0]["id"].as_str().expect("id");
    assert!(id.starts_with("call_"));
    assert_eq!(events[0], json!({"event": "start", "id": id, "name": "fake__echo"}));
    assert_eq!(
        events[1],
        json!({"event": "call", "id": id, "name": "fake__echo", "server": "fake", "tool": "echo",
               "arguments": {"text": "hello from the tool"}, "round": 1})
    );
    let result = &events[2];
    let keys: Vec<&String> = result.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["event", "id", "ok", "text", "chars", "truncated", "ms"]);
    assert_eq!(result["ok"], true);
    assert_eq!(result["text"], "hello from the tool");
    assert_eq!(result["chars"], 19);
    assert_eq!(result["truncated"], false);
    let mcp_chunk = sse.chunks.iter().find(|c| c.get("strata_mcp").is_some()).expect("chunk");
    assert_eq!(mcp_chunk["choices"][0]["delta"], json!({}));
    assert_eq!(sse.content(), "Let me check.The tool said hello.");
    assert!(
        sse.chunks.iter().all(|c| c["choices"][0]["delta"].get("tool_calls").is_none()),
        "6.3: no tool_calls deltas"
    );
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "stop");
    // 6.5 and 4.5: the second pass's prompt holds the call and its result, and its length is the usage.
    let prompts = setup.server.server.state.engine.recent_prompts();
    assert_eq!(prompts.len(), 2);
    let second = decode(&prompts[1]);
    assert!(decode(&prompts[0]).contains("\"name\":\"fake__echo\""));
    assert!(second.contains("<tool_response>\nhello from the tool\n</tool_response>"), "{second}");
    assert!(second.contains("<function=fake__echo>\n<parameter=text>\nhello from the tool\n</parameter>"), "{second}");
    assert_eq!(sse.last()["usage"]["prompt_tokens"], prompts[1].len());
}

#[tokio::test]
async fn spec_6_7_not_streamed_the_events_are_in_the_message() {
    let setup = setup(vec![call_script("fake__add", &[("a", "2"), ("b", "3")]), answer_script("5.")], json!({})).await;
    let answer: Value = chat(&setup.server, &opt_in()).await.json().await.expect("json");
    let message = &answer["choices"][0]["message"];
    assert_eq!(message["content"], "Let me check.5.");
    let events = message["strata_mcp"].as_array().expect("events");
    assert_eq!(
        events.iter().map(|e| e["event"].as_str().expect("kind")).collect::<Vec<_>>(),
        ["start", "call", "result"]
    );
    assert_eq!(events[1]["arguments"], json!({"a": 2, "b": 3}), "6.4: numbers stay numbers");
    assert_eq!(events[2]["text"], "5");
    assert!(message.get("tool_calls").is_none());
}

#[tokio::test]
async fn spec_6_1_without_the_json_boolean_the_tools_go_to_the_client() {
    for flag in [json!("yes"), json!(1), json!("true"), Value::Null] {
        let setup = setup(vec![call_script("fake__echo", &[("text", "x")])], json!({})).await;
        let mut body = opt_in();
        body["strata_mcp"] = flag.clone();
        let sse = chat_stream(&setup.server, body).await;
        assert!(sse.events().is_empty(), "{flag}");
        assert_eq!(sse.last()["choices"][0]["finish_reason"], "tool_calls", "{flag}");
        assert!(!prompts(&setup)[0].contains("fake__echo\",\"description"), "no MCP tools offered for {flag}");
        assert!(setup.log.entries().iter().all(|e| e.get("call").is_none()), "nothing ran for {flag}");
    }
}

#[tokio::test]
async fn spec_5_7_a_request_s_own_tool_of_the_same_name_wins() {
    let setup = setup(vec![call_script("fake__echo", &[("text", "x")])], json!({})).await;
    let mut body = opt_in();
    body["tools"] = json!([{"type": "function", "function": {"name": "fake__echo", "description": "mine", "parameters": {"type": "object", "properties": {}}}}]);
    let sse = chat_stream(&setup.server, body).await;
    assert!(sse.events().is_empty());
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "tool_calls");
    let prompt = &prompts(&setup)[0];
    assert_eq!(prompt.matches("\"name\":\"fake__echo\"").count(), 1, "offered once: {prompt}");
    assert!(prompt.contains("\"description\":\"mine\""));
    assert!(prompt.contains("fake__add"), "the other MCP tools are still offered");
}

#[tokio::test]
async fn spec_6_10_an_own_call_in_the_same_pass_skips_the_mcp_call() {
    let script = format!(
        "{}\n<tool_call>\n<function=lookup>\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call>",
        call_script("fake__echo", &[("text", "x")])
    );
    let setup = setup(vec![script], json!({})).await;
    let mut body = opt_in();
    body["tools"] = json!([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]);
    let sse = chat_stream(&setup.server, body).await;
    let events = sse.events();
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[1],
        json!({"event": "result", "id": events[0]["id"], "ok": false, "skipped": true, "text": "not run", "chars": 0, "truncated": false, "ms": 0})
    );
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn spec_6_6_max_rounds_ends_with_limit_and_a_skipped_call() {
    let setup = setup(vec![call_script("fake__echo", &[("text", "again")])], json!({"max_rounds": 2})).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let events = sse.events();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().expect("kind")).collect();
    assert_eq!(kinds, ["start", "call", "result", "start", "call", "result", "start", "limit", "result"]);
    assert_eq!(events[1]["round"], 1);
    assert_eq!(events[4]["round"], 2);
    assert_eq!(events[7], json!({"event": "limit", "max_rounds": 2}));
    assert_eq!(events[8]["skipped"], true);
    assert_eq!(prompts(&setup).len(), 3);
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn spec_7_2_failures_are_results_not_failed_requests() {
    let setup = setup(
        vec![call_script("fake__fail", &[]), call_script("fake__nope", &[("x", "1")]), answer_script("ok")],
        json!({}),
    )
    .await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let events = sse.events();
    let results: Vec<&Value> = events.iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(results[0]["ok"], false);
    assert_eq!(results[0]["text"], "error: it failed on purpose");
    assert_eq!(results[1]["text"], "error: there is no tool named 'fake__nope'");
    let unknown_call = events.iter().filter(|e| e["event"] == "call").nth(1).expect("call");
    assert_eq!(unknown_call["server"], Value::Null);
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "stop");
    assert!(
        prompts(&setup)[2].contains("<tool_response>\nerror: there is no tool named 'fake__nope'\n</tool_response>")
    );
}

#[tokio::test]
async fn spec_7_2_a_timeout_is_a_result_and_the_server_is_told() {
    let setup =
        setup(vec![call_script("fake__sleep", &[("seconds", "30")]), answer_script("ok")], json!({"timeout_s": 0.5}))
            .await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let result = sse.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(result["text"], "error: tools/call timed out after 0.5 s");
    assert_eq!(result["ok"], false);
    let cancelled = setup.log.wait_for(Duration::from_secs(10), |e| e["cancelled"] == "sleep").await;
    assert!(cancelled.is_some(), "notifications/cancelled reached the server: {:?}", setup.log.entries());
}

#[tokio::test]
async fn spec_7_3_long_text_is_cut_with_the_note() {
    let setup =
        setup(vec![call_script("fake__big", &[("n", "3000")]), answer_script("ok")], json!({"max_result_chars": 500}))
            .await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let result = sse.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(result["chars"], 3000);
    assert_eq!(result["truncated"], true);
    assert_eq!(
        result["text"],
        format!(
            "{}\n\n[... truncated: the tool returned 3,000 characters; only the first 500 are shown]",
            "y".repeat(500)
        )
    );
}

#[tokio::test]
async fn spec_6_3_keep_alives_while_a_tool_runs() {
    let setup = setup(vec![call_script("fake__sleep", &[("seconds", "2.5")]), answer_script("ok")], json!({})).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    assert!(sse.keep_alives >= 2, "{} keep-alives", sse.keep_alives);
    let result = sse.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(result["text"], "slept");
}

#[tokio::test]
async fn spec_6_8_closing_the_stream_cancels_the_running_call_and_no_round_follows() {
    let setup = setup(vec![call_script("fake__sleep", &[("seconds", "30")]), answer_script("never")], json!({})).await;
    let mut body = opt_in();
    body["stream"] = json!(true);
    let mut response = chat(&setup.server, &body).await;
    let mut seen = String::new();
    while !seen.contains("\"event\":\"call\"") {
        let chunk = response.chunk().await.expect("read").expect("more");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    setup.log.wait_for(Duration::from_secs(5), |e| e["call"] == "sleep").await.expect("the call started");
    drop(response);
    let cancelled = setup.log.wait_for(Duration::from_secs(10), |e| e["cancelled"] == "sleep").await;
    assert!(cancelled.is_some(), "the server got notifications/cancelled");
    wait_for_status(&setup.server, 10, |s| s["requests"]["cancelled"] == 1 && s["busy"] == false).await;
    assert_eq!(prompts(&setup).len(), 1, "no further pass ran");
}

#[tokio::test]
async fn spec_6_9_a_call_the_output_ends_inside_is_not_run() {
    let setup =
        setup(vec!["</think>\n\nTrying.\n<tool_call>\n<function=fake__echo>\n<parameter=text>\nhal".into()], json!({}))
            .await;
    let sse: Sse = chat_stream(&setup.server, opt_in()).await;
    let events = sse.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["event"], "start");
    assert!(setup.log.entries().iter().all(|e| e.get("call").is_none()));
    assert_eq!(sse.last()["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn spec_2_7_mcp_only_from_the_server_s_own_page() {
    let setup = setup(vec![answer_script("ok")], json!({})).await;
    let url = setup.server.url("/v1/chat/completions");
    let body = opt_in().to_string();
    let plain = client().post(&url).header("content-type", "text/plain").body(body.clone()).send().await.expect("sent");
    assert_eq!(plain.status(), 415);
    assert_eq!(plain.json::<Value>().await.expect("json")["error"]["message"], "send application/json");
    let foreign = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("origin", "http://localhost:9999")
        .body(body.clone())
        .send()
        .await
        .expect("sent");
    assert_eq!(foreign.status(), 403);
    let own_origin = format!("http://{}", setup.server.server.addr);
    let own = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("origin", own_origin)
        .body(body)
        .send()
        .await
        .expect("sent");
    assert_eq!(own.status(), 200);
    assert!(prompts(&setup).len() == 1, "only the own-page request reached the engine");
}

#[tokio::test]
async fn spec_6_11_structured_output_and_forced_choice_are_refused_with_mcp() {
    let setup = setup(vec![answer_script("ok")], json!({})).await;
    let mut structured = opt_in();
    structured["response_format"] = json!({"type": "json_object"});
    assert_eq!(chat(&setup.server, &structured).await.status(), 400);
    let mut forced = opt_in();
    forced["tool_choice"] = json!("required");
    assert_eq!(chat(&setup.server, &forced).await.status(), 400);
}
