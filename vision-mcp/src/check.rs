//! `vision-mcp check URL [--image NAME] [--detail D] [--prompt P]`: connects like a client would, with
//! the token from `VISION_MCP_TOKEN`, initializes and lists the tools; with `--image`, makes one real
//! call (which sends the picture to OpenAI and is billed). Inside the container:
//! `docker compose exec vision-mcp vision-mcp check http://127.0.0.1:8000/mcp` (the token is already in
//! its environment). Any failed step is one line and a non-zero exit; a refusal by the server's guard
//! (token, Host, Origin) is shown with the server's own message, which names the setting to change.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// What to check.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    /// The server's `/mcp` URL.
    pub url: String,
    /// The token.
    pub token: String,
    /// A picture to analyze, for one real call.
    pub image: Option<String>,
    /// `auto`, `low` or `high`.
    pub detail: String,
    /// What to ask.
    pub prompt: String,
}

/// What the check found: the lines to print, and whether every step passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The lines to print.
    pub text: String,
    /// False when the real call was refused or failed.
    pub passed: bool,
}

/// Why the check could not run to the end (one line for the terminal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built")]
    Client,
    /// No answer from the URL.
    #[error("could not reach {url}: {why}")]
    Unreachable {
        /// The URL checked.
        url: String,
        /// What probably went wrong, and what to look at.
        why: &'static str,
    },
    /// The server answered the preflight with an error.
    #[error("{url} refused the check (HTTP {status}): {message}")]
    Refused {
        /// The URL checked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's one-line message.
        message: String,
    },
    /// The MCP handshake failed.
    #[error("could not initialize with {url}: {detail}")]
    Initialize {
        /// The URL checked.
        url: String,
        /// What the SDK said.
        detail: String,
    },
    /// `tools/list` failed.
    #[error("tools/list failed: {0}")]
    ListTools(String),
    /// `tools/call` failed.
    #[error("tools/call failed: {0}")]
    CallTool(String),
}

/// One plain `initialize` POST before the SDK client, so a refusal by the guard comes back as the
/// server's one-line message instead of an SDK error dump. Its session is deleted again.
async fn preflight(request: &CheckRequest) -> Result<(), CheckError> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "vision-mcp-check", "version": env!("CARGO_PKG_VERSION")}}});
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .map_err(|_| CheckError::Client)?;
    let response = client
        .post(&request.url)
        .bearer_auth(&request.token)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| {
            let why = if e.is_timeout() {
                "no answer in 15 s"
            } else if e.is_connect() {
                "connection refused or no route: is MCP_BIND_IP the NAS's LAN address, MCP_PORT the port in this URL, \
                 and the port open in the NAS firewall for this machine?"
            } else {
                "the request failed"
            };
            CheckError::Unreachable { url: request.url.clone(), why }
        })?;
    let status = response.status();
    let session = response.headers().get("mcp-session-id").cloned();
    if !status.is_success() {
        let text = capped_text(response, REFUSAL_BYTES).await;
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| "no explanation given".into());
        return Err(CheckError::Refused { url: request.url.clone(), status: status.as_u16(), message });
    }
    if let Some(session) = session {
        let _ = client.delete(&request.url).bearer_auth(&request.token).header("mcp-session-id", session).send().await;
    }
    Ok(())
}

/// Runs the check and returns what to print.
pub async fn run(request: &CheckRequest) -> Result<Report, CheckError> {
    preflight(request).await?;
    let config = StreamableHttpClientTransportConfig::with_uri(request.url.as_str()).auth_header(request.token.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("vision-mcp-check", env!("CARGO_PKG_VERSION")),
    );
    let service = client
        .serve(transport)
        .await
        .map_err(|e| CheckError::Initialize { url: request.url.clone(), detail: e.to_string() })?;
    let mut out = String::new();
    if let Some(info) = service.peer().peer_info() {
        let server = info.server_info.clone().unwrap_or_default();
        out.push_str(&format!(
            "initialized: {} {} (protocol {})\n",
            server.name, server.version, info.protocol_version
        ));
    }
    let tools = service.peer().list_all_tools().await.map_err(|e| CheckError::ListTools(e.to_string()))?;
    for tool in &tools {
        out.push_str(&format!("tool: {}\n", tool.name));
    }
    let mut passed = true;
    if let Some(image) = &request.image {
        out.push_str("calling analyze_image: this sends the picture to OpenAI and is billed\n");
        let mut arguments = serde_json::Map::new();
        arguments.insert("image".into(), image.clone().into());
        arguments.insert("prompt".into(), request.prompt.clone().into());
        arguments.insert("detail".into(), request.detail.clone().into());
        let result = service
            .peer()
            .call_tool(CallToolRequestParams::new(crate::server::TOOL).with_arguments(arguments))
            .await
            .map_err(|e| CheckError::CallTool(e.to_string()))?;
        let text: Vec<String> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        passed = result.is_error != Some(true);
        let label = if passed { "answer" } else { "refused" };
        out.push_str(&format!("{label}:\n{}\n", text.join("\n")));
    }
    let _ = service.cancel().await;
    Ok(Report { text: out, passed })
}

/// How much of a refusal's body the check reads (its JSON error is a line; a hostile or confused
/// server may send far more).
const REFUSAL_BYTES: usize = 16 * 1024;

/// The first `max` bytes of a response body, as lossy UTF-8; the rest is not read.
async fn capped_text(mut response: reqwest::Response, max: usize) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < max {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk[..chunk.len().min(max - bytes.len())]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
