//! Which tools a request offers and how an MCP round runs (SPEC §6): the request's own tools first,
//! then the hub's (a request's own tool of the same name wins); each call announced, run with
//! keep-alives, and its result both streamed and appended for the next pass.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{McpEvent, MediaEntry, ResultEvent};
use super::request::ChatRequest;
use super::turn_event::{TurnEvent, WrittenCall};
use crate::mcp::{CallOutcome, Hub, OfferedTool};
use crate::media::parts::{PictureLimits, ResultPart, result_parts};
use crate::messages::{ImageSource, Message, Part, Role, ToolSpec};
use crate::result_text::{cap, thousands};
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
            let announce = McpEvent::Call {
                id: call.id.clone(),
                name: call.name.clone(),
                server: offered.map(|t| t.server.clone()),
                tool: offered.map_or(call.name.clone(), |t| t.tool.clone()),
                arguments: arguments.clone(),
                round: self.round,
            };
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
        let mut event = ResultEvent {
            id: call.id.clone(),
            ok: outcome.ok,
            skipped: false,
            text: capped.text.clone(),
            chars: capped.chars,
            truncated: capped.truncated,
            ms: outcome.ms,
            media: Vec::new(),
        };
        // A result without a picture reaches the model exactly as with the feature off (its 7.1 text,
        // structuredContent included): only pictures change the tool message (SPEC 8.8).
        let pictures = match (&outcome.result, self.state.image_results()) {
            (Some(result), true) => {
                let mcp = &self.state.config.mcp;
                let limits =
                    PictureLimits { per_result: mcp.max_pictures_per_result, max_chars: mcp.max_picture_chars };
                Some(result_parts(result, limits))
                    .filter(|parts| parts.iter().any(|p| matches!(p, ResultPart::Picture(_))))
            }
            _ => None,
        };
        let message = match pictures {
            None => Message { role: Role::Tool, parts: vec![Part::Text(capped.text)], tool_calls: Vec::new() },
            Some(parts) => {
                event.media = cache_pictures(self.state, &parts).await;
                tool_message(parts, self.state.vision.is_some(), self.state.config.mcp.max_result_chars)
            }
        };
        self.events.send(TurnEvent::Mcp(McpEvent::Result(event))).await.ok()?;
        Some(message)
    }

    /// Announces every call as not run (strata-wire C-J4).
    pub async fn skip_all(calls: &[WrittenCall], events: &mpsc::Sender<TurnEvent>) {
        for call in calls {
            let skipped = McpEvent::Result(ResultEvent::not_run(&call.id));
            if events.send(TurnEvent::Mcp(skipped)).await.is_err() {
                return;
            }
        }
    }
}

/// Writes each picture to the cache and returns the `media` entries (SPEC 8.3, 8.6, 8.7). A picture the
/// cache cannot take is logged and has no entry; the turn goes on.
async fn cache_pictures(state: &AppState, parts: &[ResultPart]) -> Vec<MediaEntry> {
    let mut media = Vec::new();
    for part in parts {
        let ResultPart::Picture(picture) = part else { continue };
        let cache = state.media.clone();
        let (format, bytes) = (picture.format, Arc::clone(&picture.bytes));
        let stored = tokio::task::spawn_blocking(move || cache.store(format, &bytes)).await;
        match stored {
            Ok(Ok(name)) => {
                media.push(MediaEntry {
                    reference: name.reference(),
                    url: name.url(),
                    mime: picture.format.mime(),
                    bytes: picture.bytes.len(),
                    width: picture.width,
                    height: picture.height,
                });
            }
            Ok(Err(error)) => {
                tracing::error!(%error, "a tool picture could not be written to the cache; the text result stays")
            }
            Err(error) => tracing::error!(%error, "the cache write stopped"),
        }
    }
    media
}

/// The tool message for the next pass (SPEC 8.8): blocks in order joined by newlines, pictures as
/// pictures with a vision encoder (else their text), and the cap applied to the text only.
pub fn tool_message(parts: Vec<ResultPart>, vision: bool, max_chars: usize) -> Message {
    let mut pieces: Vec<Part> = Vec::new();
    let mut text = String::new();
    for (index, part) in parts.into_iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        match part {
            ResultPart::Text(t) => text.push_str(&t),
            ResultPart::Picture(picture) if vision => {
                pieces.push(Part::Text(std::mem::take(&mut text)));
                pieces.push(Part::Image(ImageSource::Bytes(picture.bytes)));
            }
            ResultPart::Picture(picture) => text.push_str(&picture.text),
        }
    }
    pieces.push(Part::Text(text));
    Message { role: Role::Tool, parts: cap_text_parts(pieces, max_chars), tool_calls: Vec::new() }
}

/// Caps the text of `parts` to `max_chars` characters in all, pictures not counted (SPEC 7.3).
fn cap_text_parts(parts: Vec<Part>, max_chars: usize) -> Vec<Part> {
    let total: usize = parts.iter().map(|p| if let Part::Text(t) = p { t.chars().count() } else { 0 }).sum();
    if max_chars == 0 || total <= max_chars {
        return parts.into_iter().filter(|p| !matches!(p, Part::Text(t) if t.is_empty())).collect();
    }
    let mut left = max_chars;
    let mut out = Vec::new();
    for part in parts {
        match part {
            Part::Text(t) if left == 0 => drop(t),
            Part::Text(t) => {
                let kept: String = t.chars().take(left).collect();
                left -= kept.chars().count();
                out.push(Part::Text(kept));
            }
            picture => out.push(picture),
        }
    }
    let note = format!(
        "\n\n[... truncated: the tool returned {} characters; only the first {} are shown]",
        thousands(total),
        thousands(max_chars)
    );
    out.push(Part::Text(note));
    out.into_iter().filter(|p| !matches!(p, Part::Text(t) if t.is_empty())).collect()
}
