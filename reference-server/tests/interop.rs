//! SPEC §5 against MCP servers nobody on this team wrote: `@modelcontextprotocol/server-everything`
//! (npm, stdio) and a server on the official Python SDK (`mcp` 2.x, `MCPServer`, Streamable HTTP).
//! `ci/install-interop.sh` installs both, pinned, under `ci/interop/`; a missing one fails these tests.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};
use support::{TestServer, chat_stream, client, start};

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ci/interop")
}

fn required(path: PathBuf) -> PathBuf {
    assert!(path.exists(), "{} is missing: run ci/install-interop.sh (ci/test.sh does)", path.display());
    path
}

async fn settled(server: &TestServer) -> Value {
    for _ in 0..1500 {
        let status: Value = client().get(server.url("/mcp")).send().await.expect("sent").json().await.expect("json");
        if status["servers"]
            .as_array()
            .expect("list")
            .iter()
            .all(|s| s["status"] != "starting" && s["status"] != "idle")
        {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the interop server never settled");
}

fn results(sse: &support::Sse) -> Vec<Value> {
    sse.events().into_iter().filter(|e| e["event"] == "result").collect()
}

#[tokio::test]
async fn spec_5_server_everything_over_stdio() {
    let entry = required(interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"));
    let server = start(json!({
        "mcp_servers": {"everything": {"command": "node", "args": [entry, "stdio"]}},
        "mcp": {"start_timeout_s": 60},
        "engine": {"scripts": [
            call_script("everything__echo", &[("message", "hi there")]),
            call_script("everything__get-sum", &[("a", "2"), ("b", "40")]),
            call_script("everything__get-tiny-image", &[]),
            answer_script("done"),
        ]},
    }))
    .await;
    let status = settled(&server).await;
    let everything = &status["servers"][0];
    assert_eq!(everything["status"], "ready", "{status}");
    assert_eq!(everything["info"]["name"], "mcp-servers/everything");
    let names: Vec<&str> =
        everything["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().expect("n")).collect();
    assert!(names.contains(&"everything__echo") && names.contains(&"everything__get-tiny-image"), "{names:?}");
    let sse = chat_stream(&server, json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})).await;
    let results = results(&sse);
    assert_eq!(results.len(), 3, "{:?}", sse.events());
    assert_eq!(results[0]["text"], "Echo: hi there");
    assert!(results[1]["text"].as_str().expect("text").contains("42"), "{}", results[1]["text"]);
    let image_text = results[2]["text"].as_str().expect("text");
    assert!(
        image_text.contains("[image (image/png, ") && image_text.contains(" bytes): not shown to the model]"),
        "{image_text}"
    );
    server.server.stop().await;
}

struct PythonServer {
    child: Child,
    url: String,
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_server() -> PythonServer {
    let python = required(interop_dir().join(".venv/bin/python"));
    let script = required(interop_dir().join("python_server.py"));
    let mut child =
        Command::new(python).arg(script).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready line");
    let url = line.trim().strip_prefix("listening on ").expect(&line).to_string();
    PythonServer { child, url }
}

#[tokio::test]
async fn spec_5_a_python_sdk_server_over_streamable_http() {
    let python = python_server();
    let server = start(json!({
        "mcp_servers": {"py": {"url": python.url}},
        "mcp": {"start_timeout_s": 60},
        "engine": {"scripts": [
            call_script("py__shout", &[("text", "quiet")]),
            call_script("py__red_square", &[]),
            answer_script("done"),
        ]},
    }))
    .await;
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["servers"][0]["info"]["name"], "python-interop");
    let sse = chat_stream(&server, json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})).await;
    let results = results(&sse);
    assert_eq!(results[0]["text"], "QUIET");
    let image_text = results[1]["text"].as_str().expect("text");
    assert!(
        image_text.starts_with("[image (image/png, ") && image_text.ends_with(" bytes): not shown to the model]"),
        "{image_text}"
    );
}
