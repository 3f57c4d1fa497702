//! The server over its transports, with an official-SDK (rmcp) client: stdio (in-process over a pipe,
//! and the real binary), and Streamable HTTP behind the Bearer token, Host/Origin checks and the body
//! cap. Also the binary's refusals to start, its clean stop on SIGTERM, and `vision-mcp check`.

mod support;

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use support::{KEY, Setup, TOKEN, answer, openai, png, requests};
use tokio_util::sync::CancellationToken;
use vision_mcp::guard::Guard;
use vision_mcp::server::{VisionServer, http_app};

fn client() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("test-client", "1"))
}

fn call(image: &str) -> CallToolRequestParams {
    let mut arguments = serde_json::Map::new();
    arguments.insert("image".into(), image.into());
    arguments.insert("prompt".into(), "What does it say?".into());
    CallToolRequestParams::new("analyze_image").with_arguments(arguments)
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

#[tokio::test]
async fn over_stdio_framing_a_client_lists_and_calls_the_tool() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("- a button labelled OK", "completed")).await;
    setup.write("a.png", &png(40, 40));
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let handler = VisionServer::new(setup.analyzer(&server.uri()));
    tokio::spawn(async move {
        if let Ok(service) = handler.serve(tokio::io::split(server_end)).await {
            let _ = service.waiting().await;
        }
    });
    let service = client().serve(tokio::io::split(client_end)).await.expect("initialized");
    let tools = service.peer().list_all_tools().await.expect("tools");
    assert_eq!(tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(), ["analyze_image"]);
    let result = service.peer().call_tool(call("a.png")).await.expect("a result");
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text_of(&result), "- a button labelled OK");
    let refused = service.peer().call_tool(call("../etc/passwd")).await.expect("a result");
    assert_eq!(refused.is_error, Some(true), "a refusal is a tool error, not a protocol error");
    assert_eq!(requests(&server).await.len(), 1);
}

struct Http {
    url: String,
    stop: CancellationToken,
}

impl Drop for Http {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn http(setup: &Setup, base: &str) -> Http {
    let stop = CancellationToken::new();
    let app = http_app(setup.analyzer(base), Guard::new(TOKEN, &setup.settings.allowed_hosts), stop.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let stopped = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(async move { stopped.cancelled().await }).await
    });
    Http { url, stop }
}

fn initialize_body() -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

async fn raw_post(url: &str, headers: &[(&str, &str)], body: String) -> u16 {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("an answer").status().as_u16()
}

#[tokio::test]
async fn over_http_the_token_host_origin_and_size_are_checked() {
    let setup = Setup::new(20, 3);
    let server = http(&setup, "http://127.0.0.1:9").await;
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(raw_post(&server.url, &[], initialize_body()).await, 401, "no token");
    assert_eq!(
        raw_post(&server.url, &[("authorization", "Bearer wrong-token-of-the-same-size-xxxxxxxx")], initialize_body())
            .await,
        401
    );
    assert_eq!(raw_post(&server.url, &[("authorization", &bearer)], initialize_body()).await, 200, "the token");
    assert_eq!(
        raw_post(&server.url, &[("authorization", &bearer), ("host", "evil.example:8000")], initialize_body()).await,
        403,
        "a foreign Host"
    );
    assert_eq!(
        raw_post(&server.url, &[("authorization", &bearer), ("origin", "http://evil.example")], initialize_body())
            .await,
        403,
        "a foreign Origin"
    );
    assert_eq!(
        raw_post(&server.url, &[("authorization", &bearer), ("origin", "http://localhost:3000")], initialize_body())
            .await,
        200
    );
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(300 << 10));
    assert_eq!(raw_post(&server.url, &[("authorization", &bearer)], big).await, 413, "the body cap");
    // The cap at N-1, N and N+1 bytes (an initialize padded with JSON whitespace), declared with
    // Content-Length and sent chunked without one.
    let max = vision_mcp::guard::MAX_BODY;
    for (size, status) in [(max - 1, 200), (max, 200), (max + 1, 413)] {
        let start = initialize_body();
        let body = start.clone() + &" ".repeat(size - start.len());
        assert_eq!(raw_post(&server.url, &[("authorization", &bearer)], body.clone()).await, status, "{size} bytes");
        let chunks =
            body.into_bytes().chunks(64 << 10).map(|c| Ok::<_, std::io::Error>(c.to_vec())).collect::<Vec<_>>();
        let chunked = reqwest::Client::new()
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &bearer)
            .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
            .send()
            .await
            .expect("an answer");
        assert_eq!(chunked.status().as_u16(), status, "{size} bytes, chunked");
    }
}

/// The running binary: every method on `/mcp` needs the token — GET (the SSE stream) and DELETE (ending
/// a session) as much as POST — and so does HEAD beside GET.
#[tokio::test]
async fn the_binary_refuses_every_method_without_the_token() {
    let setup = Setup::new(20, 3);
    let (_child, ready) = support::spawn_http(&setup).await;
    let url = ready.strip_prefix("listening on ").expect("the ready line").to_string();
    let client = reqwest::Client::new();
    // Wrong tokens of the right length (the last or the first character changed), one character short
    // and one long, and the right one without its "Bearer " prefix.
    let (head, last) = TOKEN.split_at(TOKEN.len() - 1);
    let same_size_last = format!("Bearer {head}{}", if last == "x" { "y" } else { "x" });
    let same_size_first = format!("Bearer x{}", &TOKEN[1..]);
    let (short, long) = (format!("Bearer {head}"), format!("Bearer {TOKEN}x"));
    let wrong = [same_size_last.as_str(), same_size_first.as_str(), short.as_str(), long.as_str()];
    for method in ["GET", "DELETE", "POST", "PUT", "PATCH", "HEAD", "OPTIONS"] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let refused =
            [None, Some("Bearer wrong-token"), Some("Bearer "), Some(TOKEN)].into_iter().chain(wrong.map(Some));
        for token in refused {
            let mut request = client
                .request(method.clone(), &url)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", "00000000-0000-0000-0000-000000000000");
            if let Some(value) = token {
                request = request.header("authorization", value);
            }
            let status = request.send().await.expect("an answer").status().as_u16();
            assert_eq!(status, 401, "{method} without the right token ({token:?})");
        }
    }
}

#[tokio::test]
async fn over_http_an_sdk_client_with_the_token_calls_the_tool() {
    let setup = Setup::new(20, 3);
    let openai = openai(answer("- a chart with three bars", "completed")).await;
    setup.write("chart.png", &png(64, 48));
    let server = http(&setup, &openai.uri()).await;
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let service = client().serve(transport).await.expect("initialized");
    let info = service.peer().peer_info().expect("info");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("vision-mcp"));
    let result = service.peer().call_tool(call("chart.png")).await.expect("a result");
    assert_eq!(text_of(&result), "- a chart with three bars");
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).auth_header("not-the-token");
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    assert!(client().serve(transport).await.is_err(), "a wrong token cannot initialize");
}

fn binary() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_vision-mcp"))
}

#[tokio::test]
async fn the_binary_refuses_to_start_without_its_secrets() {
    let dir = tempfile::tempdir().expect("dir");
    for (env, http, variable) in [
        (vec![], false, "OPENAI_API_KEY"),
        (vec![("OPENAI_API_KEY", "")], false, "OPENAI_API_KEY"),
        (vec![("OPENAI_API_KEY", KEY)], true, "VISION_MCP_TOKEN"),
        (vec![("OPENAI_API_KEY", KEY), ("VISION_MCP_TOKEN", "short")], true, "VISION_MCP_TOKEN"),
        (vec![("OPENAI_API_KEY", KEY), ("VISION_MAX_CALLS_PER_DAY", "lots")], false, "VISION_MAX_CALLS_PER_DAY"),
    ] {
        let mut command = binary();
        command.env_clear().env("VISION_IMAGE_ROOT", dir.path()).envs(env.clone()).stdin(Stdio::null());
        if http {
            command.args(["--http", "--port", "0"]);
        }
        let output = command.output().await.expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{env:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(&format!("vision-mcp: {variable}:")), "{stderr}");
        assert!(!stderr.contains(KEY), "{stderr}");
    }
}

#[tokio::test]
async fn the_binary_over_stdio_initializes_and_lists_without_calling_openai() {
    let setup = Setup::new(20, 3);
    let mut command = support::stdio_command(&setup);
    command.stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).expect("spawned");
    let service = client().serve(transport).await.expect("initialized");
    let tools = service.peer().list_all_tools().await.expect("tools");
    assert_eq!(tools[0].name, "analyze_image");
    let schema = serde_json::Value::Object((*tools[0].input_schema).clone());
    assert_eq!(schema["required"], serde_json::json!(["image", "prompt"]));
    assert_eq!(schema["properties"]["detail"]["enum"], serde_json::json!(["auto", "low", "high"]));
    let _ = service.cancel().await;
}

#[tokio::test]
async fn over_http_sigterm_right_after_the_ready_line_is_a_clean_stop() {
    let setup = Setup::new(20, 3);
    let (mut child, line) = support::spawn_http(&setup).await;
    assert!(line.starts_with("listening on http://127.0.0.1:"), "{line}");
    let pid = child.id().expect("running").to_string();
    let sent = tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await.expect("kill runs");
    assert!(sent.success());
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await.expect("it stops");
    assert_eq!(status.expect("exit status").code(), Some(0));
}

#[tokio::test]
async fn check_initializes_and_lists_with_the_token() {
    let setup = Setup::new(20, 3);
    let server = http(&setup, "http://127.0.0.1:9").await;
    let output = binary().args(["check", &server.url]).env("VISION_MCP_TOKEN", TOKEN).output().await.expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("initialized: vision-mcp") && stdout.contains("tool: analyze_image"), "{stdout}");
    let refused = binary().args(["check", &server.url]).env("VISION_MCP_TOKEN", "wrong").output().await.expect("runs");
    assert_eq!(refused.status.code(), Some(1));
}

#[tokio::test]
async fn at_trace_level_the_log_holds_no_prompt_token_or_key() {
    let setup = Setup::new(20, 3);
    setup.write("a.png", &png(20, 20));
    let mut command = support::stdio_command(&setup);
    command.env("RUST_LOG", "trace");
    let log_path = setup.dir.path().join("stderr.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let (transport, _) = TokioChildProcess::builder(command).stderr(log).spawn().expect("spawned");
    let service = client().serve(transport).await.expect("initialized");
    let mut arguments = serde_json::Map::new();
    arguments.insert("image".into(), "missing-CANARY.png".into());
    arguments.insert("prompt".into(), "PROMPT-CANARY".into());
    let call = CallToolRequestParams::new("analyze_image").with_arguments(arguments);
    let result = service.peer().call_tool(call).await.expect("a result");
    assert_eq!(result.is_error, Some(true));
    let _ = service.cancel().await;
    let log = std::fs::read_to_string(&log_path).expect("the log");
    for secret in ["PROMPT-CANARY", "missing-CANARY", KEY] {
        assert!(!log.contains(secret), "the log carries {secret}: {log}");
    }
}
