//! SPEC 1.12: even at `RUST_LOG=trace`, the log carries no prompt, tool argument, tool result or key.

mod support;

use std::io::Read;
use std::process::Stdio;

use fixtures::scripts::{answer_script, call_script};
use serde_json::json;

const KEY: &str = "log-test-KEY-7f3a";

#[tokio::test]
async fn spec_1_12_a_trace_level_log_holds_no_prompt_argument_result_or_key() {
    let dir = tempfile::tempdir().expect("dir");
    let config = json!({
        "mcp_servers": {"fake": {"command": fixtures::binary::fixture_mcp()}},
        "engine": {"scripts": [call_script("fake__echo", &[("text", "ARGUMENT-CANARY")]), answer_script("done")]},
    });
    let mut server = support::spawn_binary(
        dir.path(),
        &config,
        &["--api-key", KEY],
        &[("RUST_LOG", "trace".as_ref())],
        Stdio::piped(),
    );
    let base = server.base.clone();
    let body = json!({"messages": [{"role": "user", "content": "PROMPT-CANARY"}], "strata_mcp": true});
    let answer = support::chat_binary(&base, KEY, &body).await;
    let events = answer["choices"][0]["message"]["strata_mcp"].as_array().expect("events").clone();
    assert!(events.iter().any(|e| e["event"] == "result" && e["text"] == "ARGUMENT-CANARY"), "{answer}");
    let _ = server.child.kill();
    let _ = server.child.wait();
    let mut log = String::new();
    server.child.stderr.take().expect("stderr").read_to_string(&mut log).expect("the log");
    assert!(log.lines().count() > 5, "trace logging is on: {log}");
    for secret in ["PROMPT-CANARY", "ARGUMENT-CANARY", KEY] {
        assert!(!log.contains(secret), "the log carries {secret}");
    }
}
