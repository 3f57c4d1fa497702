//! Shared helpers for the reference server's tests: a real server on 127.0.0.1 port 0 from a JSON
//! configuration written to a temp folder, an HTTP client, and an SSE reader.

#![allow(dead_code, reason = "each test file uses a different part of the helpers")]

use std::path::{Path, PathBuf};

use reference_server::RunningServer;
use reference_server::config::{Overrides, RunConfig};
use serde_json::Value;

/// A running server and the folder its configuration lives in.
pub struct TestServer {
    pub server: RunningServer,
    pub dir: tempfile::TempDir,
    pub config_path: PathBuf,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.url(), path)
    }
}

/// Writes `config` as `<dir>/run.json`.
pub fn write_config(dir: &Path, config: &Value) -> PathBuf {
    let path = dir.join("run.json");
    std::fs::write(&path, serde_json::to_vec_pretty(config).expect("json")).expect("write config");
    path
}

/// Starts a server for `config` (port forced to 0).
pub async fn start(config: Value) -> TestServer {
    let dir = tempfile::tempdir().expect("temp dir");
    start_in(dir, config).await
}

/// Starts a server for `config` in an existing folder.
pub async fn start_in(dir: tempfile::TempDir, config: Value) -> TestServer {
    let config_path = write_config(dir.path(), &config);
    let overrides = Overrides { port: Some(0), ..Overrides::default() };
    let loaded = RunConfig::load(&config_path, &overrides).expect("valid configuration");
    let server = reference_server::start(loaded.config).await.expect("server starts");
    TestServer { server, dir, config_path }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().build().expect("client")
}

/// What an SSE body held.
#[derive(Debug, Default)]
pub struct Sse {
    /// Every `data:` payload that is JSON, in order.
    pub chunks: Vec<Value>,
    /// `: keep-alive` comments seen.
    pub keep_alives: usize,
    /// Whether `data: [DONE]` ended it.
    pub done: bool,
}

impl Sse {
    pub fn parse(body: &str) -> Sse {
        let mut sse = Sse::default();
        for line in body.lines() {
            if line.starts_with(": keep-alive") {
                sse.keep_alives += 1;
            } else if let Some(data) = line.strip_prefix("data: ") {
                if data == "[DONE]" {
                    sse.done = true;
                } else {
                    sse.chunks.push(serde_json::from_str(data).expect("a JSON chunk"));
                }
            }
        }
        sse
    }

    /// The streamed content, joined.
    pub fn content(&self) -> String {
        self.chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect()
    }

    /// The `strata_mcp` event objects, in order.
    pub fn events(&self) -> Vec<Value> {
        self.chunks.iter().filter_map(|c| c.get("strata_mcp").cloned()).collect()
    }

    /// The last chunk (finish reason and usage).
    pub fn last(&self) -> &Value {
        self.chunks.last().expect("at least one chunk")
    }
}

/// Posts a chat body and returns the response.
pub async fn chat(server: &TestServer, body: &Value) -> reqwest::Response {
    client().post(server.url("/v1/chat/completions")).json(body).send().await.expect("request sent")
}

/// Posts a streamed chat body and reads the whole stream.
pub async fn chat_stream(server: &TestServer, mut body: Value) -> Sse {
    body["stream"] = Value::Bool(true);
    let response = chat(server, &body).await;
    assert_eq!(response.status(), 200, "streamed chat status");
    Sse::parse(&response.text().await.expect("body"))
}

/// A user message body.
pub fn user(text: &str) -> Value {
    serde_json::json!({"messages": [{"role": "user", "content": text}]})
}

/// Waits for a condition on the server's status, polling; panics after `seconds`.
pub async fn wait_for_status(server: &TestServer, seconds: u64, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(seconds);
    loop {
        let status: Value =
            client().get(server.url("/v1/status")).send().await.expect("status").json().await.expect("json");
        if wanted(&status) {
            return status;
        }
        assert!(tokio::time::Instant::now() < deadline, "status never matched: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// An in-process fixture MCP server plus a reference server that uses it as `fake`.
pub struct WithFixture {
    pub server: TestServer,
    pub fixture: fixtures::http::HttpFixture,
}

/// Starts a fixture MCP server and a reference server whose configuration is `config` plus
/// `mcp_servers.fake` pointing at it.
pub async fn with_fixture(mut config: Value) -> WithFixture {
    let fixture =
        fixtures::http::serve_http(fixtures::mcp_server::FixtureOptions::default(), 0, None).await.expect("fixture");
    config["mcp_servers"] = serde_json::json!({"fake": {"url": fixture.url}});
    let server = start(config).await;
    WithFixture { server, fixture }
}

/// The `result` events of a stream.
pub fn results(sse: &Sse) -> Vec<Value> {
    sse.events().into_iter().filter(|e| e["event"] == "result").collect()
}

/// A body that opts in to MCP.
pub fn opt_in() -> Value {
    serde_json::json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})
}

/// The most recent prompts the engine got, as text.
pub fn prompts(server: &TestServer) -> Vec<String> {
    server.server.state.engine.recent_prompts().iter().map(|p| reference_server::tokenizer::decode(p)).collect()
}

/// `<|image_pad|>` tokens in the most recent prompt.
pub fn last_prompt_pads(server: &TestServer) -> usize {
    let prompts = server.server.state.engine.recent_prompts();
    let last = prompts.last().expect("a prompt");
    last.iter().filter(|&&id| id == reference_server::tokenizer::IMAGE_PAD).count()
}

/// The reference-server binary itself, started on a configuration file in `dir` with `--port 0`; it is
/// killed when dropped. `base` is `http://127.0.0.1:PORT` from its ready line.
pub struct Binary {
    pub child: std::process::Child,
    pub base: String,
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the binary on `config` (written to `dir/run.json`) with extra `args` and `env`; stderr goes
/// to `stderr` (null, piped, or a file).
pub fn spawn_binary(
    dir: &Path,
    config: &Value,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    stderr: std::process::Stdio,
) -> Binary {
    use std::io::BufRead;
    let path = write_config(dir, config);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_reference-server"));
    command.arg("--config").arg(&path).args(["--port", "0"]).args(args).env_remove("SSL_CERT_FILE");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.stdout(std::process::Stdio::piped()).stderr(stderr).spawn().expect("starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready line");
    let base = line.trim().strip_prefix("listening on ").expect(&line).to_string();
    Binary { child, base }
}

/// Waits until the first MCP server of the binary at `base` is no longer starting; its `/mcp` status.
pub async fn settled_binary(base: &str, key: &str) -> Value {
    for _ in 0..1500 {
        let status: Value = client()
            .get(format!("{base}/mcp"))
            .bearer_auth(key)
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("json");
        if status["servers"][0]["status"] != "starting" {
            return status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the MCP server never settled");
}

/// A non-streamed chat turn against the binary at `base`: the answer's JSON.
pub async fn chat_binary(base: &str, key: &str, body: &Value) -> Value {
    client()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("json")
}

/// The peak resident memory of process `pid` (VmHWM), in MiB.
pub fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM");
    kib >> 10
}
