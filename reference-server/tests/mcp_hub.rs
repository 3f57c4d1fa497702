//! SPEC §5: the hub against real fixture MCP servers — stdio (the `fixture-mcp` binary) and Streamable
//! HTTP (in-process) — starting, failing, restarting, naming, `GET /mcp`, shutdown.

mod support;

use std::time::Duration;

use fixtures::binary::fixture_mcp;
use fixtures::http::serve_http;
use fixtures::mcp_server::{FixtureLog, FixtureOptions};
use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};
use support::{TestServer, chat_stream, client, start, user};

fn stdio(extra: &[&str]) -> Value {
    json!({"command": fixture_mcp(), "args": extra})
}

async fn mcp_status(server: &TestServer) -> Value {
    client().get(server.url("/mcp")).send().await.expect("sent").json().await.expect("json")
}

/// Waits until no server is starting (GET /mcp polled).
async fn settled(server: &TestServer) -> Value {
    for _ in 0..500 {
        let status = mcp_status(server).await;
        let servers = status["servers"].as_array().cloned().unwrap_or_default();
        if servers.iter().all(|s| s["status"] != "starting") {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("servers never settled");
}

fn mcp_chat(script_args: &[(&str, &str)], name: &str) -> (Value, String) {
    (json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true}), call_script(name, script_args))
}

#[tokio::test]
async fn spec_5_2_every_page_of_tools_list_is_read_and_5_8_the_status_shape() {
    let server = start(json!({"mcp_servers": {"fixture": stdio(&["--page", "2"])}})).await;
    let status = settled(&server).await;
    let fixture = &status["servers"][0];
    assert_eq!(fixture["status"], "ready", "{status}");
    assert_eq!(fixture["transport"], "stdio");
    assert_eq!(fixture["error"], Value::Null);
    assert_eq!(fixture["info"]["name"], "fixture");
    assert_eq!(fixture["info"]["version"], "1.0.0");
    assert!(fixture["info"]["protocol"].as_str().expect("protocol").starts_with("20"));
    let names: Vec<&str> =
        fixture["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().expect("name")).collect();
    let catalogue = fixtures::tools::catalogue();
    assert_eq!(names.len(), catalogue.len(), "every page was read");
    assert_eq!(
        names[..6],
        ["fixture__echo", "fixture__add", "fixture__fail", "fixture__sleep", "fixture__big", "fixture__die"]
    );
    assert_eq!(fixture["tools"][0]["tool"], "echo");
    assert_eq!(fixture["tools"][0]["description"], "Returns the text it is given.");
    assert_eq!(status["tools"], catalogue.len());
    assert_eq!(status["settings"], json!({"timeout_s": 60.0, "max_result_chars": 20000, "max_rounds": 8}));
    let keys: Vec<&String> = status.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["servers", "tools", "settings"]);
}

#[tokio::test]
async fn spec_5_8_without_servers_the_status_is_empty_and_6_1_the_chat_is_plain() {
    let server = start(json!({})).await;
    assert_eq!(mcp_status(&server).await, json!({"servers": [], "tools": 0}));
    let mut body = user("hi");
    body["strata_mcp"] = json!(true);
    let sse = chat_stream(&server, body).await;
    assert_eq!(sse.content(), "Hello from the mock engine.");
    assert!(sse.events().is_empty());
}

#[tokio::test]
async fn spec_5_3_servers_that_fail_are_left_out_with_their_error() {
    let server = start(json!({
        "mcp_servers": {
            "good": stdio(&[]),
            "crashy": stdio(&["--crash-at-start"]),
            "missing": {"command": "/no/such/program-here"},
            "down": {"url": "http://127.0.0.1:9/mcp"},
        },
        "mcp": {"start_timeout_s": 10},
        "engine": {"scripts": [call_script("good__echo", &[("text", "still works")]), answer_script("done")]},
    }))
    .await;
    let status = settled(&server).await;
    let by_name = |name: &str| {
        status["servers"].as_array().expect("list").iter().find(|s| s["name"] == name).cloned().expect(name)
    };
    assert_eq!(by_name("good")["status"], "ready");
    let crashy = by_name("crashy");
    assert_eq!(crashy["status"], "failed");
    let error = crashy["error"].as_str().expect("error");
    assert!(error.contains("exit code 2") && error.contains("missing configuration"), "{error}");
    assert!(
        by_name("missing")["error"].as_str().expect("error").starts_with("could not start '/no/such/program-here'")
    );
    assert!(by_name("down")["error"].as_str().expect("error").starts_with("could not reach http://127.0.0.1:9/mcp"));
    assert_eq!(status["tools"], fixtures::tools::catalogue().len(), "only the good server's tools are offered");
    let sse = chat_stream(&server, json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})).await;
    let results: Vec<Value> = sse.events().into_iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(results[0]["text"], "still works");
}

#[tokio::test]
async fn spec_5_1_streamable_http_with_configured_headers() {
    let fixture = serve_http(FixtureOptions::default(), 0, Some("tok-123".into())).await.expect("fixture");
    let server = start(json!({
        "mcp_servers": {
            "web": {"url": fixture.url, "headers": {"Authorization": "Bearer tok-123"}},
            "refused": {"url": fixture.url, "headers": {"Authorization": "Bearer wrong"}},
        },
        "engine": {"scripts": [call_script("web__add", &[("a", "2"), ("b", "3")]), answer_script("ok")]},
    }))
    .await;
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["servers"][0]["transport"], "http");
    assert_eq!(status["servers"][1]["status"], "failed");
    let (body, _) = mcp_chat(&[], "web__add");
    let sse = chat_stream(&server, body).await;
    let result = sse.events().into_iter().find(|e| e["event"] == "result").expect("a result");
    assert_eq!(result["text"], "5");
    assert_eq!(result["ok"], true);
}

#[tokio::test]
async fn spec_5_4_a_server_that_died_mid_call_is_started_again_on_its_next_call() {
    let server = start(json!({
        "mcp_servers": {"fixture": stdio(&[])},
        "engine": {"scripts": [
            call_script("fixture__die", &[]), answer_script("it died"),
            call_script("fixture__echo", &[("text", "back again")]), answer_script("fine"),
        ]},
    }))
    .await;
    settled(&server).await;
    let body = json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true});
    let first = chat_stream(&server, body.clone()).await;
    let died = first.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(died["ok"], false);
    assert_eq!(died["text"], "error: the server stopped (exit code 3): dying on purpose");
    assert_eq!(mcp_status(&server).await["servers"][0]["status"], "stopped");
    assert_eq!(
        mcp_status(&server).await["tools"],
        fixtures::tools::catalogue().len(),
        "a stopped server's tools stay offered"
    );
    let second = chat_stream(&server, body).await;
    let back = second.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(back["text"], "back again");
    assert_eq!(mcp_status(&server).await["servers"][0]["status"], "ready");
}

#[tokio::test]
async fn spec_5_6_names_are_cleaned_and_collisions_numbered() {
    let server = start(json!({"mcp_servers": {"my.server": stdio(&[]), "my server": stdio(&[])}})).await;
    let status = settled(&server).await;
    let first: Vec<&str> = status["servers"][0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("n"))
        .collect();
    let second: Vec<&str> = status["servers"][1]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("n"))
        .collect();
    assert_eq!(first[0], "my_server__echo");
    assert_eq!(second[0], "my_server__echo_2");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn spec_5_5_stopping_the_server_reaps_its_mcp_processes() {
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("calls.jsonl");
    let server = start(json!({"mcp_servers": {"fixture": {"command": fixture_mcp(), "args": ["--log", log]}}})).await;
    settled(&server).await;
    let started: Value =
        serde_json::from_str(std::fs::read_to_string(&log).expect("log").lines().next().expect("line")).expect("json");
    let pid = started["started"].as_u64().expect("pid");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    server.server.stop().await;
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the fixture process {pid} is gone");
}

#[tokio::test]
async fn spec_5_2_an_in_process_fixture_sees_the_initialized_session() {
    let log = FixtureLog::default();
    let fixture =
        serve_http(FixtureOptions { log: log.clone(), ..FixtureOptions::default() }, 0, None).await.expect("fixture");
    let server = start(json!({
        "mcp_servers": {"web": {"url": fixture.url}},
        "engine": {"scripts": [call_script("web__echo", &[("text", "héllo – 日本")]), answer_script("ok")]},
    }))
    .await;
    settled(&server).await;
    let (body, _) = mcp_chat(&[], "web__echo");
    let sse = chat_stream(&server, body).await;
    let result = sse.events().into_iter().find(|e| e["event"] == "result").expect("result");
    assert_eq!(result["text"], "héllo – 日本", "UTF-8 survives");
    let call =
        log.wait_for(Duration::from_secs(5), |e| e["call"] == "echo").await.expect("the call reached the server");
    assert_eq!(call["arguments"], json!({"text": "héllo – 日本"}));
}
