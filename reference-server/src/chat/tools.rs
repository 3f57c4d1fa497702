//! Which tools a request offers and how an MCP round runs (SPEC §6): the request's own tools first,
//! then the hub's (a request's own tool of the same name wins); each call announced, run with
//! keep-alives, and its result both streamed and appended for the next pass.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::messages::{Message, Part, Role, ToolSpec};
use super::request::ChatRequest;
use super::turn::{TurnEvent, WrittenCall};
use crate::mcp::result_text::cap;
use crate::mcp::{CallOutcome, Hub, OfferedTool};
use crate::state::AppState;

/// How long a request waits for servers that are still starting (strata-wire C-J1).
const WAIT_FOR_STARTING: Duration = Duration::from_secs(10);
/// How often a comment keeps the stream alive while a tool runs (strata-wire C-J5).
const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(1);

/// The tools of one request.
pub struct ToolPlan {
    tools: Vec<ToolSpec>,
    own: Vec<String>,
    mcp: Vec<OfferedTool>,
    hub: Option<Arc<Hub>>,
}

impl ToolPlan {
    /// Decides the tools: MCP only with `"strata_mcp": true`, a hub, and at least one routable tool.
    pub async fn new(state: &AppState, request: &ChatRequest) -> Self {
        let own: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
        let mut tools = request.tools.clone();
        let (mcp, hub) = match (&state.hub, request.strata_mcp) {
            (Some(hub), true) => {
                hub.wait_while_starting(WAIT_FOR_STARTING).await;
                let offered: Vec<OfferedTool> =
                    hub.offered().into_iter().filter(|t| !own.contains(&t.spec.name)).collect();
                if offered.is_empty() { (Vec::new(), None) } else { (offered, Some(Arc::clone(hub))) }
            }
            _ => (Vec::new(), None),
        };
        tools.extend(mcp.iter().map(|t| t.spec.clone()));
        Self { tools, own, mcp, hub }
    }

    /// Every tool offered in the prompt.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The hub, when this request uses MCP.
    pub fn hub(&self) -> Option<&Arc<Hub>> {
        self.hub.as_ref()
    }

    /// Whether a call to `name` is run by the server (MCP on and not one of the request's own tools).
    pub fn is_mcp_call(&self, name: &str) -> bool {
        self.hub.is_some() && !self.own.iter().any(|n| n == name)
    }

    /// The offered MCP tool of this name.
    pub fn offered(&self, name: &str) -> Option<&OfferedTool> {
        self.mcp.iter().find(|t| t.spec.name == name)
    }

    /// The prompt entry of an offered MCP tool.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.offered(name).map(|t| &t.spec)
    }
}

/// One round of MCP calls.
pub struct McpRound<'a> {
    /// The server.
    pub state: &'a AppState,
    /// The hub.
    pub hub: &'a Arc<Hub>,
    /// 1-based round number.
    pub round: usize,
    /// Cancelled when the client leaves.
    pub cancel: &'a CancellationToken,
    /// Where events go.
    pub events: &'a mpsc::Sender<TurnEvent>,
}

impl McpRound<'_> {
    /// Runs every complete call in order. Returns the tool messages for the next pass, or `None` when
    /// the request was cancelled (no further round runs).
    pub async fn run(&self, calls: &[WrittenCall], plan: &ToolPlan) -> Option<Vec<Message>> {
        let mut results = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            let Some(arguments) = call.arguments.clone() else { continue };
            let offered = plan.offered(&call.name);
            let announce = json!({
                "event": "call",
                "id": call.id,
                "name": call.name,
                "server": offered.map(|t| t.server.clone()),
                "tool": offered.map_or(call.name.clone(), |t| t.tool.clone()),
                "arguments": arguments,
                "round": self.round,
            });
            self.events.send(TurnEvent::Mcp(announce)).await.ok()?;
            let outcome = match offered {
                Some(tool) => self.call_with_keep_alive(tool, arguments).await,
                None => Some(Hub::unknown_tool(&call.name)),
            };
            let Some(outcome) = outcome else {
                Self::skip_all(&calls[index..], self.events).await;
                return None;
            };
            results.push(self.finish(call, outcome).await?);
        }
        Some(results)
    }

    async fn call_with_keep_alive(&self, tool: &OfferedTool, arguments: Value) -> Option<CallOutcome> {
        let call = self.hub.call(tool, arguments, self.cancel);
        tokio::pin!(call);
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE_EVERY, KEEP_ALIVE_EVERY);
        loop {
            tokio::select! {
                outcome = &mut call => return outcome,
                _ = ticks.tick() => {
                    if self.events.send(TurnEvent::KeepAlive).await.is_err() {
                        self.cancel.cancel();
                    }
                }
            }
        }
    }

    /// Streams the result event and returns the tool message.
    async fn finish(&self, call: &WrittenCall, outcome: CallOutcome) -> Option<Message> {
        let capped = cap(outcome.text, self.state.config.mcp.max_result_chars);
        tracing::info!(
            tool = %call.name,
            ok = outcome.ok,
            chars = capped.chars,
            ms = outcome.ms,
            truncated = capped.truncated,
            "tool call finished"
        );
        let event = json!({
            "event": "result",
            "id": call.id,
            "ok": outcome.ok,
            "text": capped.text,
            "chars": capped.chars,
            "truncated": capped.truncated,
            "ms": outcome.ms,
        });
        self.events.send(TurnEvent::Mcp(event)).await.ok()?;
        Some(Message { role: Role::Tool, parts: vec![Part::Text(capped.text)], tool_calls: Vec::new() })
    }

    /// Announces every call as not run (strata-wire C-J4).
    pub async fn skip_all(calls: &[WrittenCall], events: &mpsc::Sender<TurnEvent>) {
        for call in calls {
            let skipped = json!({
                "event": "result", "id": call.id, "ok": false, "skipped": true,
                "text": "not run", "chars": 0, "truncated": false, "ms": 0,
            });
            if events.send(TurnEvent::Mcp(skipped)).await.is_err() {
                return;
            }
        }
    }
}
