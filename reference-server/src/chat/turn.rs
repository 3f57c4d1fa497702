//! One chat request from first prompt to final chunk (SPEC 4.4–4.6, 6.x): engine passes, the output
//! read as it streams, and — when MCP tools are offered — the tool rounds between passes. The turn
//! emits [`TurnEvent`]s; `sse` renders them as a stream and `collect` as one JSON answer, so both
//! shapes come from the same code.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{FinishReason, McpEvent};
use super::output::{OutputEvent, OutputParser, RawArguments};
use super::prepare::{Prepared, prepare_blocking};
use super::request::ChatRequest;
use super::tools::{McpRound, ToolPlan};
use super::turn_event::{TurnEvent, Usage, WrittenCall};
use crate::engine::GenerateRequest;
use crate::messages::{Message, Part, Role, ToolCall, ToolSpec};
use crate::state::AppState;
use crate::tokenizer::IM_END;

/// How a pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PassEnd {
    Stop,
    Length,
    Cancelled,
}

struct PassOutcome {
    text: String,
    end: PassEnd,
    completion_tokens: usize,
    mcp_calls: Vec<WrittenCall>,
    own_calls_complete: usize,
}

/// Runs a request whose first prompt is already prepared, sending what happens to `events`.
pub async fn run(
    state: Arc<AppState>,
    request: ChatRequest,
    plan: ToolPlan,
    first: Prepared,
    cancel: CancellationToken,
    events: mpsc::Sender<TurnEvent>,
) {
    let mut running = state.activity.begin();
    let mut messages = request.messages.clone();
    let mut prepared = first;
    let mut usage = Usage::default();
    let mut own_index = 0;
    let mut pass_index = 0;
    let finish_reason = loop {
        usage.prompt_tokens = prepared.ids.len();
        let outcome = pass(&state, &request, &plan, &prepared, pass_index, &mut own_index, &cancel, &events).await;
        usage.completion_tokens += outcome.completion_tokens;
        pass_index += 1;
        // One signal that the client is gone: the token (a pass whose send failed has set it too).
        if cancel.is_cancelled() {
            running.mark_cancelled();
            return;
        }
        if outcome.own_calls_complete > 0 {
            McpRound::skip_all(&outcome.mcp_calls, &events).await;
            break FinishReason::ToolCalls;
        }
        if outcome.mcp_calls.is_empty() {
            break if outcome.end == PassEnd::Length { FinishReason::Length } else { FinishReason::Stop };
        }
        if outcome.end == PassEnd::Length {
            McpRound::skip_all(&outcome.mcp_calls, &events).await;
            break FinishReason::Length;
        }
        let Some(hub) = plan.hub() else {
            McpRound::skip_all(&outcome.mcp_calls, &events).await;
            break FinishReason::Stop;
        };
        if pass_index > state.config.mcp.max_rounds {
            let limit = McpEvent::Limit { max_rounds: state.config.mcp.max_rounds };
            let _ = events.send(TurnEvent::Mcp(limit)).await;
            McpRound::skip_all(&outcome.mcp_calls, &events).await;
            break FinishReason::Stop;
        }
        let round = McpRound { state: &state, hub, round: pass_index, cancel: &cancel, events: &events };
        let Some(results) = round.run(&outcome.mcp_calls, &plan).await else {
            running.mark_cancelled();
            return;
        };
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![Part::Text(outcome.text.trim().to_string())],
            tool_calls: outcome
                .mcp_calls
                .iter()
                .filter_map(|c| {
                    let arguments = c.arguments.clone()?;
                    Some(ToolCall { id: Some(c.id.clone()), name: c.name.clone(), arguments })
                })
                .collect(),
        });
        messages.extend(results);
        let (kept, next) =
            prepare_blocking(Arc::clone(&state), messages, plan.tools().to_vec(), request.max_tokens).await;
        messages = kept;
        prepared = match next {
            Ok(p) => p,
            Err(error) => {
                let _ = events.send(TurnEvent::Failed(error)).await;
                return;
            }
        };
    };
    let _ = events.send(TurnEvent::Finished { finish_reason, usage }).await;
}

#[expect(clippy::too_many_arguments, reason = "one pass needs the whole turn's context")]
async fn pass(
    state: &AppState,
    request: &ChatRequest,
    plan: &ToolPlan,
    prepared: &Prepared,
    pass_index: usize,
    own_index: &mut usize,
    cancel: &CancellationToken,
    events: &mpsc::Sender<TurnEvent>,
) -> PassOutcome {
    let generate = GenerateRequest {
        prompt: Arc::clone(&prepared.ids),
        max_new: prepared.max_new,
        pass_in_request: pass_index,
        model: request.model.clone(),
        embeddings: prepared.embeddings.clone(),
    };
    let mut generation = state.engine.generate(generate, cancel.child_token());
    let mut parser = OutputParser::new(generation.starts_in_reasoning);
    let mut outcome = PassOutcome {
        text: String::new(),
        end: PassEnd::Length,
        completion_tokens: 0,
        mcp_calls: Vec::new(),
        own_calls_complete: 0,
    };
    let mut open_own: Option<(usize, String)> = None;
    let mut batch = Vec::with_capacity(256);
    loop {
        batch.clear();
        let received = tokio::select! {
            () = cancel.cancelled() => { outcome.end = PassEnd::Cancelled; return outcome; }
            n = generation.tokens.recv_many(&mut batch, 256) => n,
        };
        if received == 0 {
            break;
        }
        let stop = batch.iter().position(|&id| id == IM_END);
        let useful = &batch[..stop.unwrap_or(batch.len())];
        outcome.completion_tokens += useful.len();
        let found = parser.feed(useful);
        if !emit(found, request, plan, &mut outcome, &mut open_own, own_index, events).await {
            return client_gone(outcome, cancel);
        }
        if stop.is_some() {
            outcome.end = PassEnd::Stop;
            break;
        }
    }
    if cancel.is_cancelled() {
        outcome.end = PassEnd::Cancelled;
        return outcome;
    }
    let (rest, unfinished) = parser.finish();
    if !emit(rest, request, plan, &mut outcome, &mut open_own, own_index, events).await {
        return client_gone(outcome, cancel);
    }
    if unfinished {
        // A call the output ends inside is never run (strata-wire C-N1, #211): its start was announced,
        // nothing more is said about it.
        outcome.mcp_calls.retain(|c| c.arguments.is_some());
    }
    outcome
}

/// A pass whose events could not be sent: the client's stream is gone, so the whole request is
/// cancelled (as a failed keep-alive cancels it, `McpRound`) and the pass ends there.
fn client_gone(mut outcome: PassOutcome, cancel: &CancellationToken) -> PassOutcome {
    cancel.cancel();
    outcome.end = PassEnd::Cancelled;
    outcome
}

/// Sends what the parser found; false when the client is gone.
async fn emit(
    found: Vec<OutputEvent>,
    request: &ChatRequest,
    plan: &ToolPlan,
    outcome: &mut PassOutcome,
    open_own: &mut Option<(usize, String)>,
    own_index: &mut usize,
    events: &mpsc::Sender<TurnEvent>,
) -> bool {
    for event in found {
        let turn_event = match event {
            OutputEvent::Reasoning(text) => TurnEvent::Reasoning(text),
            OutputEvent::Content(text) => {
                outcome.text.push_str(&text);
                TurnEvent::Content(text)
            }
            OutputEvent::CallStarted { name } => {
                let id = new_call_id();
                if plan.is_mcp_call(&name) {
                    outcome.mcp_calls.push(WrittenCall { id: id.clone(), name: name.clone(), arguments: None });
                    TurnEvent::Mcp(McpEvent::Start { id, name })
                } else {
                    *open_own = Some((*own_index, name.clone()));
                    *own_index += 1;
                    TurnEvent::OwnCallHeader { index: *own_index - 1, id, name }
                }
            }
            OutputEvent::CallFinished { name, arguments } => {
                if plan.is_mcp_call(&name) {
                    let spec = plan.spec(&name);
                    let Some(call) =
                        outcome.mcp_calls.iter_mut().rev().find(|c| c.name == name && c.arguments.is_none())
                    else {
                        continue;
                    };
                    call.arguments = Some(convert_arguments(arguments, spec));
                    continue;
                }
                let spec = request.tools.iter().find(|t| t.name == name);
                let Some((index, _)) = open_own.take() else { continue };
                outcome.own_calls_complete += 1;
                let arguments = convert_arguments(arguments, spec).to_string();
                TurnEvent::OwnCallArguments { index, arguments }
            }
        };
        if events.send(turn_event).await.is_err() {
            return false;
        }
    }
    true
}

/// Turns written arguments into a JSON object, using the tool's schema for the value types: a string
/// parameter stays text; anything else is read as JSON when it parses (SPEC 6.4).
pub fn convert_arguments(arguments: RawArguments, spec: Option<&ToolSpec>) -> Value {
    match arguments {
        RawArguments::Json(Value::Object(map)) => Value::Object(map),
        RawArguments::Json(_) => Value::Object(Map::new()),
        RawArguments::Parameters(pairs) => {
            let mut map = Map::new();
            for (name, text) in pairs {
                let declared = spec.and_then(|s| s.parameter_type(&name));
                let value = if declared == Some("string") {
                    Value::String(text)
                } else {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                };
                map.insert(name, value);
            }
            Value::Object(map)
        }
    }
}

/// A fresh call id, `call_` and 24 hex digits.
pub fn new_call_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("call_{}", &hex[..24])
}
