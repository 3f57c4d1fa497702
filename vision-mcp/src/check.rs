//! `vision-mcp check URL [--image NAME] [--detail D] [--prompt P]`: connects like a client would, with
//! the token from `VISION_MCP_TOKEN`, initializes and lists the tools; with `--image`, makes one real
//! call (which sends the picture to OpenAI and is billed).

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

/// Runs the check and returns what to print.
pub async fn run(request: &CheckRequest) -> Result<String, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(request.url.as_str()).auth_header(request.token.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("vision-mcp-check", env!("CARGO_PKG_VERSION")),
    );
    let service =
        client.serve(transport).await.map_err(|e| format!("could not initialize with {}: {e}", request.url))?;
    let mut out = String::new();
    if let Some(info) = service.peer().peer_info() {
        let server = info.server_info.clone().unwrap_or_default();
        out.push_str(&format!(
            "initialized: {} {} (protocol {})\n",
            server.name, server.version, info.protocol_version
        ));
    }
    let tools = service.peer().list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
    for tool in &tools {
        out.push_str(&format!("tool: {}\n", tool.name));
    }
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
            .map_err(|e| format!("tools/call failed: {e}"))?;
        let text: Vec<String> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        let label = if result.is_error == Some(true) { "refused" } else { "answer" };
        out.push_str(&format!("{label}:\n{}\n", text.join("\n")));
    }
    let _ = service.cancel().await;
    Ok(out)
}
