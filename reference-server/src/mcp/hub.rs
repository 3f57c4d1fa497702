//! The MCP hub (SPEC §5): every configured server started in the background, its tools offered under
//! namespaced names, calls routed with a timeout and cancellation, a stopped server started again on
//! its next call, and `GET /mcp`'s status. Every failure of a call is a result text, never an error.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::connection::{Connection, ListLimits, ServerInfo, connect, seconds};
use super::naming;
use crate::config::{McpServerSpec, McpSettings, McpTransportSpec};
use crate::messages::ToolSpec;

/// A server's lifecycle (strata-wire C-G5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Initializing: from startup (SPEC 5.8c) until its first start ends, and during a restart.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// Could not start; its tools are left out.
    Failed,
    /// Was ready and stopped; started again on its next call, its tools still offered.
    Stopped,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Starting => "starting",
            Status::Ready => "ready",
            Status::Failed => "failed",
            Status::Stopped => "stopped",
        }
    }
}

struct SlotState {
    status: Status,
    error: Option<String>,
    info: Option<ServerInfo>,
    tools: Vec<rmcp::model::Tool>,
    connection: Option<Arc<Connection>>,
    failed_at: Option<Instant>,
}

struct Slot {
    spec: McpServerSpec,
    state: Mutex<SlotState>,
    starting: tokio::sync::Mutex<()>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The prompt entry, under the namespaced name.
    pub spec: ToolSpec,
    /// The server's configured name.
    pub server: String,
    /// The tool's own name on that server.
    pub tool: String,
    slot: usize,
}

/// What a call came to. `ok` is false for every kind of failure; `text` is the full, uncapped text.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The server, or `None` for a name no server offers.
    pub server: Option<String>,
    /// The tool's own name (or the name as written, for an unknown one).
    pub tool: String,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// The result as text, or `error: …`.
    pub text: String,
    /// The raw result, when the tool answered without error (its pictures are read from here).
    pub result: Option<CallToolResult>,
    /// How long the call took.
    pub ms: u64,
}

/// All MCP servers of a run.
pub struct Hub {
    slots: Vec<Arc<Slot>>,
    settings: McpSettings,
    changed: watch::Sender<u64>,
    runtime: HubRuntime,
}

/// The hub's own runtime: one thread on which every MCP session runs (the SDK's tasks, the stdio
/// readers, the decoding of every answer). Whatever a server sends — a page of 100,000 tools, a
/// 20 MiB line — is decoded there, so it never holds up a runtime thread that serves HTTP.
struct HubRuntime(Option<tokio::runtime::Runtime>);

impl HubRuntime {
    fn new() -> Self {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name("mcp-hub").enable_all().build();
        match runtime {
            Ok(runtime) => HubRuntime(Some(runtime)),
            Err(error) => {
                // No thread to spare: the sessions run on the caller's runtime instead.
                tracing::warn!(%error, "no thread for the MCP hub; its sessions share the server's runtime");
                HubRuntime(None)
            }
        }
    }

    /// Runs `task` there and waits for it.
    async fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> Option<T> {
        match &self.0 {
            Some(runtime) => runtime.spawn(task).await.ok(),
            None => Some(task.await),
        }
    }
}

impl Drop for HubRuntime {
    fn drop(&mut self) {
        // The hub may be dropped inside an async context, where a runtime must not block to stop.
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Hub {
    /// Starts every server in the background and returns at once.
    pub fn start(specs: &[McpServerSpec], settings: McpSettings) -> Arc<Hub> {
        let slots = specs
            .iter()
            .map(|spec| {
                Arc::new(Slot {
                    spec: spec.clone(),
                    // `starting` from startup on, before its start task has run (SPEC 5.8c).
                    state: Mutex::new(SlotState {
                        status: Status::Starting,
                        error: None,
                        info: None,
                        tools: Vec::new(),
                        connection: None,
                        failed_at: None,
                    }),
                    starting: tokio::sync::Mutex::new(()),
                })
            })
            .collect();
        let hub = Arc::new(Hub { slots, settings, changed: watch::channel(0).0, runtime: HubRuntime::new() });
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        tracing::info!(count = specs.len(), servers = %names.join(", "), "starting MCP servers");
        for index in 0..hub.slots.len() {
            let starter = Arc::clone(&hub);
            tokio::spawn(async move {
                let hub = Arc::clone(&starter);
                let _ = starter.runtime.run(async move { hub.start_slot(index).await }).await;
            });
        }
        hub
    }

    fn lock(&self, index: usize) -> std::sync::MutexGuard<'_, SlotState> {
        self.slots[index].state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set_status(&self, index: usize, status: Status) {
        self.lock(index).status = status;
        self.changed.send_modify(|v| *v += 1);
    }

    /// Starts (or starts again) one server. Holds the slot's start lock.
    async fn start_slot(&self, index: usize) -> Result<Arc<Connection>, String> {
        let slot = Arc::clone(&self.slots[index]);
        let _starting = slot.starting.lock().await;
        if let Some(connection) = self.live_connection(index) {
            return Ok(connection);
        }
        // A restart keeps the server stopped (its tools offered) when it fails (SPEC 5.4).
        let restarting = self.lock(index).status == Status::Stopped;
        self.set_status(index, Status::Starting);
        let timeout = Duration::from_secs_f64(self.settings.start_timeout_s);
        let limits = ListLimits { pages: self.settings.max_tool_pages, tools: self.settings.max_tools_per_server };
        let outcome = connect(&slot.spec, timeout, limits).await;
        let result = {
            let mut state = self.lock(index);
            match outcome {
                Ok((connection, info, tools)) => {
                    let names: Vec<String> = tools.iter().take(8).map(|t| t.name.to_string()).collect();
                    tracing::info!(server = %slot.spec.name, tools = tools.len(), names = %names.join(", "), "MCP server ready");
                    let connection = Arc::new(connection);
                    state.status = Status::Ready;
                    state.error = None;
                    state.failed_at = None;
                    state.info = Some(info);
                    state.tools = tools;
                    state.connection = Some(Arc::clone(&connection));
                    Ok(connection)
                }
                Err(error) => {
                    let error = error.to_string();
                    tracing::warn!(server = %slot.spec.name, %error, "MCP server did not start; its tools are left out and the chat works without them");
                    state.status = if restarting { Status::Stopped } else { Status::Failed };
                    state.error = Some(error.clone());
                    state.failed_at = Some(Instant::now());
                    state.connection = None;
                    Err(error)
                }
            }
        };
        self.changed.send_modify(|v| *v += 1);
        result
    }

    /// The connection when the server is ready and still reachable; marks it stopped when it is not.
    fn live_connection(&self, index: usize) -> Option<Arc<Connection>> {
        let mut state = self.lock(index);
        let connection = state.connection.clone()?;
        if connection.is_closed() {
            state.status = Status::Stopped;
            return None;
        }
        Some(connection)
    }

    /// Waits until no server is starting, at most `max` (SPEC 6.1: up to 10 s before offering tools).
    pub async fn wait_while_starting(&self, max: Duration) {
        let mut changed = self.changed.subscribe();
        let _ = tokio::time::timeout(max, async {
            loop {
                let starting = (0..self.slots.len()).any(|i| self.lock(i).status == Status::Starting);
                if !starting || changed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }

    /// Every routable tool, namespaced and made unique, in server order (SPEC 5.6, 5.7).
    pub fn offered(&self) -> Vec<OfferedTool> {
        let mut found = Vec::new();
        for (index, slot) in self.slots.iter().enumerate() {
            let state = self.lock(index);
            if !matches!(state.status, Status::Ready | Status::Stopped) {
                continue;
            }
            for tool in &state.tools {
                let description =
                    tool.description.as_deref().map(str::to_string).or_else(|| tool.title.clone()).unwrap_or_default();
                let parameters = Value::Object((*tool.input_schema).clone());
                let parameters =
                    if parameters.is_object() { parameters } else { json!({"type": "object", "properties": {}}) };
                found.push((index, slot.spec.name.clone(), tool.name.to_string(), description, parameters));
            }
        }
        let names = naming::unique(found.iter().map(|(_, server, tool, _, _)| naming::namespaced(server, tool)));
        found
            .into_iter()
            .zip(names)
            .map(|((slot, server, tool, description, parameters), name)| OfferedTool {
                spec: ToolSpec { name, description, parameters },
                server,
                tool,
                slot,
            })
            .collect()
    }

    /// Calls an offered tool. `None` when `cancel` fired first; the server is then told with
    /// `notifications/cancelled` (the SDK sends it when the pending request is dropped).
    pub async fn call(
        self: &Arc<Self>,
        tool: &OfferedTool,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> Option<CallOutcome> {
        let started = Instant::now();
        let outcome = |ok: bool, text: String, result: Option<CallToolResult>| CallOutcome {
            server: Some(tool.server.clone()),
            tool: tool.tool.clone(),
            ok,
            text,
            result,
            ms: started.elapsed().as_millis() as u64,
        };
        let connection = match self.connection_for_call(tool.slot).await {
            Ok(connection) => connection,
            Err(error) => return Some(outcome(false, format!("error: {error}"), None)),
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        let params = CallToolRequestParams::new(tool.tool.clone()).with_arguments(arguments);
        let timeout = Duration::from_secs_f64(self.settings.timeout_s);
        let peer = connection.service.peer().clone();
        let answer = tokio::select! {
            () = cancel.cancelled() => return None,
            () = tokio::time::sleep(timeout) => Err(format!("tools/call timed out after {} s", seconds(timeout))),
            answer = peer.call_tool(params) => answer.map_err(|e| call_error_text(&e)),
        };
        let answer = match answer {
            Ok(result) => result,
            Err(error) => {
                let error = if connection.is_closed() {
                    self.set_status(tool.slot, Status::Stopped);
                    connection.stopped_reason().await
                } else {
                    error
                };
                return Some(outcome(false, format!("error: {error}"), None));
            }
        };
        let (ok, text) = crate::result_text::result_text(&answer);
        Some(outcome(ok, text, ok.then_some(answer)))
    }

    async fn connection_for_call(self: &Arc<Self>, index: usize) -> Result<Arc<Connection>, String> {
        if let Some(connection) = self.live_connection(index) {
            return Ok(connection);
        }
        let (status, error, failed_at) = {
            let state = self.lock(index);
            (state.status, state.error.clone(), state.failed_at)
        };
        let retry_after = Duration::from_secs_f64(self.settings.retry_failed_s);
        if failed_at.is_some_and(|t| t.elapsed() < retry_after) {
            return Err(format!("the server is not running ({})", error.unwrap_or_default()));
        }
        let hub = Arc::clone(self);
        let started = self.runtime.run(async move { hub.start_slot(index).await }).await;
        started.unwrap_or_else(|| Err("the hub is stopping".into())).map_err(|e| {
            if status == Status::Stopped {
                format!("the server could not be started again: {e}")
            } else {
                format!("the server is not running ({e})")
            }
        })
    }

    /// The outcome for a name no server offers (strata-wire C-I3).
    pub fn unknown_tool(name: &str) -> CallOutcome {
        CallOutcome {
            server: None,
            tool: name.to_string(),
            ok: false,
            text: format!("error: there is no tool named '{name}'"),
            result: None,
            ms: 0,
        }
    }

    /// `GET /mcp` (SPEC 5.8, strata-wire C-H3).
    pub fn status_json(&self) -> Value {
        // Each server's status is read before the offered tools: a server that becomes ready in between
        // then shows as starting with its tools (a client waits on), never as ready without them.
        let states: Vec<(Status, Option<String>, Value)> = (0..self.slots.len())
            .map(|index| {
                let mut state = self.lock(index);
                if state.status == Status::Ready && state.connection.as_ref().is_some_and(|c| c.is_closed()) {
                    state.status = Status::Stopped;
                }
                let info = state
                    .info
                    .as_ref()
                    .map(|i| json!({"name": i.name, "title": i.title, "version": i.version, "protocol": i.protocol}));
                (state.status, state.error.clone(), json!(info))
            })
            .collect();
        let offered = self.offered();
        let servers: Vec<Value> = self
            .slots
            .iter()
            .zip(states)
            .enumerate()
            .map(|(index, (slot, (status, error, info)))| {
                let tools: Vec<Value> = offered
                    .iter()
                    .filter(|t| t.slot == index)
                    .map(|t| {
                        let description: String = t.spec.description.chars().take(300).collect();
                        json!({"name": t.spec.name, "tool": t.tool, "description": description})
                    })
                    .collect();
                let transport = match slot.spec.transport {
                    McpTransportSpec::Stdio { .. } => "stdio",
                    McpTransportSpec::Http { .. } => "http",
                };
                json!({
                    "name": slot.spec.name,
                    "transport": transport,
                    "status": status.as_str(),
                    "error": error,
                    "info": info,
                    "tools": tools,
                })
            })
            .collect();
        json!({
            "servers": servers,
            "tools": offered.len(),
            "settings": {
                "timeout_s": self.settings.timeout_s,
                "max_result_chars": self.settings.max_result_chars,
                "max_rounds": self.settings.max_rounds,
            },
        })
    }

    /// Closes every connection and reaps every stdio process (at shutdown).
    pub async fn close(&self) {
        let connections: Vec<Arc<Connection>> =
            (0..self.slots.len()).filter_map(|i| self.lock(i).connection.take()).collect();
        futures::future::join_all(connections.iter().map(|c| c.close())).await;
    }
}

/// A JSON-RPC error as `<message> (code <code>)` (strata-wire C-G4); other SDK errors as they are.
fn call_error_text(error: &rmcp::ServiceError) -> String {
    match error {
        rmcp::ServiceError::McpError(data) => format!("{} (code {})", data.message, data.code.0),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC 5.8c: `starting` from startup on — before the start task has had a chance to run (on a
    /// one-thread runtime it cannot, until this test yields), so no client ever reads another status.
    #[tokio::test(flavor = "current_thread")]
    async fn a_server_is_starting_from_the_moment_the_hub_exists() {
        let spec = McpServerSpec {
            name: "a".into(),
            transport: McpTransportSpec::Http { url: "http://127.0.0.1:9/mcp".into(), headers: Vec::new() },
        };
        let hub = Hub::start(&[spec], McpSettings::defaults());
        assert_eq!(hub.status_json()["servers"][0]["status"], "starting");
    }
}
