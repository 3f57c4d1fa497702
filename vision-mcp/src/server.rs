//! The MCP server (rmcp): one tool, `analyze_image`, over stdio or over Streamable HTTP at `/mcp`
//! behind the [`crate::guard`].

use std::sync::Arc;

use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::guard::{Guard, MAX_BODY};
use crate::tool::Analyzer;

/// The tool's name.
pub const TOOL: &str = "analyze_image";

/// The MCP handler.
#[derive(Clone)]
pub struct VisionServer {
    analyzer: Arc<Analyzer>,
}

impl VisionServer {
    /// A handler around an analyzer.
    pub fn new(analyzer: Arc<Analyzer>) -> Self {
        Self { analyzer }
    }
}

/// The tool as `tools/list` shows it.
pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "image": {"type": "string", "description": "A file name inside the image folder, e.g. error.png or screenshots/error.png. Not a path, URL or base64."},
            "prompt": {"type": "string", "description": "What to look for or read in the picture."},
            "detail": {"type": "string", "enum": ["auto", "low", "high"], "default": "auto", "description": "How closely to look."},
        },
        "required": ["image", "prompt"],
    });
    let Value::Object(schema) = schema else { unreachable!("a json! object literal") };
    Tool::new(
        TOOL,
        "Looks at one picture from the image folder and returns the visible facts as text (sent once to the OpenAI \
         Responses API; counts against a daily budget).",
        schema,
    )
}

fn text_argument<'a>(arguments: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}

impl ServerHandler for VisionServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("vision-mcp", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params(format!("there is no tool named {}", request.name), None));
        }
        let arguments = request.arguments.unwrap_or_default();
        let (Some(image), Some(prompt)) = (text_argument(&arguments, "image"), text_argument(&arguments, "prompt"))
        else {
            return Ok(CallToolResult::error(vec![ContentBlock::text("image and prompt are required strings")]).into());
        };
        let detail = text_argument(&arguments, "detail");
        // A client's `notifications/cancelled` (Strata's Stop or its tool timeout) ends the call here:
        // dropping the analysis drops the in-flight OpenAI request with it. A reserved call stays counted.
        let outcome = tokio::select! {
            outcome = self.analyzer.analyze(image, prompt, detail) => outcome,
            () = context.ct.cancelled() => {
                tracing::info!("analyze_image cancelled by the client; the request to OpenAI was aborted");
                Err(crate::tool::Refusal::Cancelled)
            }
        };
        let result = match outcome {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(reason) => CallToolResult::error(vec![ContentBlock::text(reason.to_string())]),
        };
        Ok(result.into())
    }
}

/// The HTTP application: `/mcp` behind the guard. `stop` ends every session.
pub fn http_app(analyzer: Arc<Analyzer>, guard: Guard, stop: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(stop);
    let handler = VisionServer::new(analyzer);
    let service =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(LocalSessionManager::default()), config);
    Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn_with_state(guard, crate::guard::check))
}
