//! Hostile or careless stdio MCP servers (SPEC 5.1, 5.3): a child never receives the server's API key
//! unless its entry names it, and a stderr flood without newlines or with bytes that are not UTF-8 is
//! read to its end, bounded, so the last line still explains why the server stopped.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::Binary;

const KEY: &str = "strata-key-S3CRET-0123";

fn start(dir: &std::path::Path, config: &Value) -> Binary {
    support::spawn_binary(dir, config, &[], &[("STRATA_API_KEY", KEY.as_ref())], Stdio::null())
}

async fn settled(server: &Binary) -> Value {
    support::settled_binary(&server.base, KEY).await
}

#[tokio::test]
async fn spec_5_1_a_stdio_child_never_inherits_the_servers_api_key() {
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("env.txt");
    let config = json!({"mcp_servers": {"envdump": {
        "command": "sh", "args": ["-c", "env > \"$OUT\"; echo 'not an MCP server' >&2; exit 3"],
        "env": {"OUT": out, "CONFIGURED": "yes"}}}});
    let server = start(dir.path(), &config);
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "failed", "{status}");
    let env = std::fs::read_to_string(&out).expect("the child wrote its environment");
    assert!(env.lines().any(|l| l == "CONFIGURED=yes"), "the configured env is there: {env}");
    assert!(!env.contains("STRATA_API_KEY") && !env.contains("S3CRET"), "the server's key leaked: {env}");

    // Named in the entry's env, it is passed: the operator chose to.
    let config = json!({"mcp_servers": {"envdump": {
        "command": "sh", "args": ["-c", "env > \"$OUT\"; exit 3"],
        "env": {"OUT": out, "STRATA_API_KEY": "given-on-purpose"}}}});
    drop(server);
    let server = start(dir.path(), &config);
    settled(&server).await;
    let env = std::fs::read_to_string(&out).expect("env");
    assert!(env.lines().any(|l| l == "STRATA_API_KEY=given-on-purpose"), "{env}");
}

#[tokio::test]
async fn spec_5_3_a_stderr_flood_and_bytes_that_are_not_utf8_still_leave_the_last_line() {
    let dir = tempfile::tempdir().expect("dir");
    let script = "head -c 5000000 /dev/zero | tr '\\0' x >&2; printf '\\n\\377\\376 last words\\n' >&2; exit 3";
    let config = json!({"mcp_servers": {"noisy": {"command": "sh", "args": ["-c", script]}}});
    let server = start(dir.path(), &config);
    let status = settled(&server).await;
    let error = status["servers"][0]["error"].as_str().expect("an error");
    assert_eq!(status["servers"][0]["status"], "failed", "{status}");
    assert!(error.starts_with("the server stopped (exit code 3): "), "{error}");
    assert!(error.ends_with("\u{FFFD}\u{FFFD} last words"), "the reader went past the bad bytes: {error}");
}

/// A stdio MCP server (Python, newline-delimited JSON-RPC) whose `tools/list` never ends: every page
/// holds `argv[1]` tools of the same name and a next cursor.
const ENDLESS_PAGES: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "endless", "version": "1"}}
    elif msg["method"] == "tools/list":
        page = int((msg.get("params") or {}).get("cursor") or 0)
        tools = [{"name": "same", "inputSchema": {"type": "object"}} for _ in range(int(sys.argv[1]))]
        result = {"tools": tools, "nextCursor": str(page + 1)}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[tokio::test]
async fn spec_5_2_endless_paging_and_a_flood_of_tools_are_cut_at_the_limits() {
    let dir = tempfile::tempdir().expect("dir");
    let config = json!({"mcp_servers": {"endless": {"command": "python3", "args": ["-c", ENDLESS_PAGES, "300"]}}});
    let server = start(dir.path(), &config);
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["tools"], 1000, "cut at 1000 tools");
    let tools = status["servers"][0]["tools"].as_array().expect("tools");
    assert_eq!(tools[0]["name"], "endless__same");
    assert_eq!(tools[1]["name"], "endless__same_2");
    assert_eq!(tools[999]["name"], "endless__same_1000");
    drop(server);

    // One tool a page, forever: cut after 100 pages.
    let config = json!({"mcp_servers": {"endless": {"command": "python3", "args": ["-c", ENDLESS_PAGES, "1"]}}});
    let server = start(dir.path(), &config);
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["tools"], 100, "cut after 100 pages");
}

#[tokio::test]
async fn spec_8_4_a_stdio_answer_past_rmcps_16_mib_line_still_arrives() {
    use fixtures::scripts::{answer_script, call_script};
    let dir = tempfile::tempdir().expect("dir");
    // `over_cap` answers one picture of 24,000,004 base64 characters: a JSON-RPC line of ~23 MiB.
    let config = json!({
        "mcp_servers": {"fake": {"command": fixtures::binary::fixture_mcp()}},
        "mcp": {"timeout_s": 30},
        "engine": {"scripts": [call_script("fake__over_cap", &[]), answer_script("done")]},
    });
    let server = start(dir.path(), &config);
    settled(&server).await;
    let body = json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true});
    let answer = support::chat_binary(&server.base, KEY, &body).await;
    let events = answer["choices"][0]["message"]["strata_mcp"].as_array().expect("events").clone();
    let result = events.iter().find(|e| e["event"] == "result").expect("a result");
    assert_eq!(result["ok"], true, "the answer arrived instead of timing out: {result}");
    assert!(result["text"].as_str().expect("text").starts_with("too big"), "{result}");
}

/// Whether process `pid` is still running (a zombie waiting for its reaper counts as gone).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

#[tokio::test]
async fn spec_5_5_a_grandchild_does_not_outlive_a_leader_that_exited_first() {
    let dir = tempfile::tempdir().expect("dir");
    let pid_file = dir.path().join("grandchild.pid");
    let config = json!({"mcp_servers": {"leaver": {
        "command": "sh", "args": ["-c", "sleep 300 & echo $! > \"$PID_FILE\"; exit 3"],
        "env": {"PID_FILE": pid_file}}}});
    let server = start(dir.path(), &config);
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "failed", "{status}");
    let pid: u32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    for _ in 0..250 {
        if !running(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the grandchild {pid} outlived its process group's leader");
}
