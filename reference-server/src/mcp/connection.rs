//! One live connection to one MCP server, through the official SDK (rmcp): a stdio child in its own
//! process group whose exit code and last stderr lines are kept for error messages, or a Streamable HTTP
//! session. Initialize, initialized and every page of `tools/list` happen in [`connect`] (SPEC 5.1–5.3).

use std::collections::{HashMap, VecDeque};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{oneshot, watch};

use crate::config::{McpServerSpec, McpTransportSpec};

/// The longest line read from a stdio server.
pub const MAX_STDIO_LINE: usize = 112 << 20;
/// The bytes kept of one stderr line (the rest of a longer line is dropped).
const STDERR_LINE_BYTES: usize = 4096;
/// Lines of a stdio server's stderr kept for error messages.
const STDERR_LINES: usize = 40;
/// The largest answer accepted from an HTTP server: four pictures at the cap and then some.
const MAX_HTTP_ANSWER: usize = 160 << 20;

/// What the server said about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `serverInfo.version`.
    pub version: String,
    /// The negotiated protocol version.
    pub protocol: String,
}

/// A running connection.
pub struct Connection {
    /// The SDK's client.
    pub service: RunningService<RoleClient, ClientConfig>,
    process: Option<ProcessWatch>,
}

struct ProcessWatch {
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// True once stderr has been read to its end (or there was none to read).
    stderr_read: watch::Receiver<bool>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
}

impl Connection {
    /// Whether the server can no longer be reached (the process ended, the session broke).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed() || self.process.as_ref().is_some_and(|p| p.exit.borrow().is_some())
    }

    /// Why a stdio server stopped: `the server stopped (exit code N): <last stderr line>`.
    pub async fn stopped_reason(&self) -> String {
        match &self.process {
            Some(process) => stopped_reason_of(process).await,
            None => "the server ended the session".to_string(),
        }
    }

    /// Ends the session and, for stdio, stops the process group (SIGTERM, then SIGKILL after 2 s) and
    /// reaps it.
    pub async fn close(&self) {
        self.service.cancellation_token().cancel();
        if let Some(process) = &self.process {
            let stop = process.stop.lock().ok().and_then(|mut s| s.take());
            if let Some(stop) = stop {
                let _ = stop.send(());
            }
            let mut exit = process.exit.clone();
            let _ = tokio::time::timeout(Duration::from_secs(5), exit.wait_for(Option::is_some)).await;
        }
    }
}

/// Why a server did not start; shown as one line in `GET /mcp` and in result texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The command could not be started.
    #[error("could not start '{command}': {detail}")]
    Spawn {
        /// The command.
        command: String,
        /// What the system said.
        detail: String,
    },
    /// A pipe to the child was not there.
    #[error("the server's {0} is not available")]
    NoPipe(&'static str),
    /// The process stopped (its exit status and the tail of its stderr).
    #[error("{0}")]
    Stopped(String),
    /// A configured header name is not one.
    #[error("bad header name '{0}'")]
    HeaderName(String),
    /// A configured header value is not one.
    #[error("bad value for header '{0}'")]
    HeaderValue(String),
    /// The URL did not answer as an MCP server.
    #[error("could not reach {url}: {why}")]
    Unreachable {
        /// The URL.
        url: String,
        /// The root cause.
        why: String,
    },
    /// `initialize` did not finish in `start_timeout_s` (shown in seconds).
    #[error("initialize timed out after {0} s")]
    InitializeTimeout(String),
    /// `tools/list` failed.
    #[error("tools/list failed: {0}")]
    ListFailed(String),
    /// `tools/list` did not finish in `start_timeout_s`.
    #[error("tools/list timed out after {0} s")]
    ListTimeout(String),
}

/// Connects, initializes and lists every tool.
pub async fn connect(
    spec: &McpServerSpec,
    start_timeout: Duration,
    limits: ListLimits,
) -> Result<(Connection, ServerInfo, Vec<Tool>), ConnectError> {
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("reference-server", env!("CARGO_PKG_VERSION")),
    );
    let (service, process) = match &spec.transport {
        McpTransportSpec::Stdio { command, args, env, cwd } => {
            let ((stdout, stdin), process) = spawn(command, args, env, cwd.as_deref())?;
            // Room for every answer SPEC 8.4 lets through (four pictures of 24,000,000 characters and
            // their text): rmcp's default of 16 MiB drops a longer line, and the call then waits for
            // its timeout. Longer lines are still dropped, so one answer's memory stays bounded.
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(MAX_STDIO_LINE);
            let started = tokio::time::timeout(start_timeout, client.serve(transport)).await;
            match started {
                Ok(Ok(service)) => (service, Some(process)),
                Ok(Err(_)) => return Err(ConnectError::Stopped(stopped_reason_of(&process).await)),
                Err(_) => return Err(ConnectError::InitializeTimeout(seconds(start_timeout))),
            }
        }
        McpTransportSpec::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| ConnectError::HeaderName(name.to_string()))?;
                let value =
                    http::HeaderValue::from_str(value).map_err(|_| ConnectError::HeaderValue(name.to_string()))?;
                custom.insert(name, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(custom)
                .max_json_response_size(MAX_HTTP_ANSWER)
                .max_sse_event_size(MAX_HTTP_ANSWER)
                .reinit_on_expired_session(true);
            // `Client::new()` panics where the client cannot be built (a system without CA certificates:
            // a minimal container); that is this server's failure to reach it, not a crash.
            let http = reqwest::Client::builder().build().map_err(|error| ConnectError::Unreachable {
                url: url.to_string(),
                why: format!("no HTTP client: {}", root_cause(&error)),
            })?;
            let transport = StreamableHttpClientTransport::with_client(http, config);
            match tokio::time::timeout(start_timeout, client.serve(transport)).await {
                Ok(Ok(service)) => (service, None),
                Ok(Err(error)) => {
                    let why = match connect_failure(url).await {
                        Some(cause) => cause,
                        None => root_cause(&error),
                    };
                    return Err(ConnectError::Unreachable { url: url.to_string(), why });
                }
                Err(_) => return Err(ConnectError::InitializeTimeout(seconds(start_timeout))),
            }
        }
    };
    let info = service
        .peer()
        .peer_info()
        .map(|peer| {
            let server = peer.server_info.clone().unwrap_or_default();
            ServerInfo {
                name: server.name,
                title: server.title,
                version: server.version,
                protocol: peer.protocol_version.to_string(),
            }
        })
        .unwrap_or_default();
    let connection = Connection { service, process };
    let tools = match tokio::time::timeout(start_timeout, list_tools_capped(&connection, limits)).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(rmcp::ServiceError::McpError(e))) if e.code.0 == -32601 => Vec::new(),
        Ok(Err(error)) => {
            let reason = if connection.is_closed() {
                ConnectError::Stopped(connection.stopped_reason().await)
            } else {
                ConnectError::ListFailed(one_line(&error.to_string()))
            };
            connection.close().await;
            return Err(reason);
        }
        Err(_) => {
            connection.close().await;
            return Err(ConnectError::ListTimeout(seconds(start_timeout)));
        }
    };
    Ok((connection, info, tools.into_iter().filter(|t| !t.name.is_empty()).collect()))
}

/// How much of a server's `tools/list` is read (SPEC 5.2; `mcp.max_tool_pages`,
/// `mcp.max_tools_per_server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    /// Pages read at most.
    pub pages: usize,
    /// Tools kept at most.
    pub tools: usize,
}

/// `tools/list`, page by page, at most `limits.pages` pages and `limits.tools` tools: a server that
/// pages forever or lists a hundred thousand tools is cut off there, with a warning.
async fn list_tools_capped(
    connection: &Connection,
    limits: ListLimits,
) -> Result<Vec<rmcp::model::Tool>, rmcp::ServiceError> {
    let peer = connection.service.peer();
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..limits.pages {
        let params = cursor.take().map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_tools(params).await?;
        tools.extend(page.tools);
        let next = page.next_cursor.filter(|next| !next.is_empty());
        if tools.len() > limits.tools || (tools.len() == limits.tools && next.is_some()) {
            tracing::warn!(
                limit = limits.tools,
                "an MCP server lists more tools than the limit; the rest are left out"
            );
            tools.truncate(limits.tools);
            return Ok(tools);
        }
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    tracing::warn!(
        pages = limits.pages,
        "an MCP server's tools/list did not end; the pages after the limit are left out"
    );
    Ok(tools)
}

type Streams = (tokio::process::ChildStdout, tokio::process::ChildStdin);

fn spawn(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&std::path::Path>,
) -> Result<(Streams, ProcessWatch), ConnectError> {
    let mut wrapped = CommandWrap::with_new(command, |c| {
        // The server's own API key is not the tool's business: a child gets it only when its entry's
        // `env` names it (SPEC 5.1).
        c.args(args)
            .env_remove("STRATA_API_KEY")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = cwd {
            c.current_dir(cwd);
        }
    });
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let mut child =
        wrapped.spawn().map_err(|e| ConnectError::Spawn { command: command.to_string(), detail: e.to_string() })?;
    let stdin = child.stdin().take().ok_or(ConnectError::NoPipe("stdin"))?;
    let stdout = child.stdout().take().ok_or(ConnectError::NoPipe("stdout"))?;
    let stderr_pipe = child.stderr().take();
    let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_LINES)));
    let (stderr_done, stderr_read) = watch::channel(stderr_pipe.is_none());
    if let Some(pipe) = stderr_pipe {
        let lines = Arc::clone(&stderr);
        tokio::spawn(async move {
            keep_stderr_lines(pipe, lines).await;
            let _ = stderr_done.send(true);
        });
    }
    let (exit_sender, exit) = watch::channel(None);
    let (stop, stop_requested) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status.ok(),
            _ = stop_requested => {
                let _ = child.signal(libc::SIGTERM);
                match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                    Ok(status) => status.ok(),
                    Err(_) => {
                        let _ = Box::into_pin(child.kill()).await;
                        child.wait().await.ok()
                    }
                }
            }
        };
        // Whatever the leader left behind in its process group (a worker it started, a `sh -c`
        // pipeline) goes with it: the group is killed once the leader is gone (SPEC 5.5).
        let _ = child.signal(libc::SIGKILL);
        let _ = exit_sender.send(status);
    });
    let process = ProcessWatch { exit, stderr, stderr_read, stop: Mutex::new(Some(stop)) };
    Ok(((stdout, stdin), process))
}

/// Waits up to 2 s for the exit status, and up to 2 s more for stderr to be read to its end (its last
/// line may still be in the pipe when the process is reaped, on a busy machine).
async fn stopped_reason_of(process: &ProcessWatch) -> String {
    let mut exit = process.exit.clone();
    let status = match tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some)).await {
        Ok(Ok(status)) => *status,
        _ => None,
    };
    let mut read = process.stderr_read.clone();
    let _ = tokio::time::timeout(Duration::from_secs(2), read.wait_for(|done| *done)).await;
    let last = process.stderr.lock().ok().and_then(|l| l.back().cloned());
    let code = status.and_then(|s| s.code()).map_or("no exit code".to_string(), |c| format!("exit code {c}"));
    match last {
        Some(line) => format!("the server stopped ({code}): {}", line.chars().take(300).collect::<String>()),
        None => format!("the server stopped ({code})"),
    }
}

/// Seconds as Python's `{:g}` writes them: `1.5`, `60`.
pub fn seconds(duration: Duration) -> String {
    let s = duration.as_secs_f64();
    if s.fract() == 0.0 { format!("{}", s as u64) } else { format!("{s}") }
}

/// Reads a stdio server's stderr to its end, keeping the last [`STDERR_LINES`] lines, each cut to
/// [`STDERR_LINE_BYTES`] and read as lossy UTF-8: a line with no newline cannot grow without bound, and
/// a byte that is not UTF-8 does not stop the reader (which would leave the child blocked on a full pipe).
async fn keep_stderr_lines(pipe: tokio::process::ChildStderr, kept: Arc<Mutex<VecDeque<String>>>) {
    // Kept for error messages, never logged: a tool's stderr may echo its arguments.
    let keep = |line: &[u8]| {
        let line = String::from_utf8_lossy(line).into_owned();
        if let Ok(mut kept) = kept.lock() {
            if kept.len() == STDERR_LINES {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    };
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        let buffer = match reader.fill_buf().await {
            Ok(buffer) if !buffer.is_empty() => buffer,
            _ => break,
        };
        let newline = buffer.iter().position(|&b| b == b'\n');
        let chunk = &buffer[..newline.unwrap_or(buffer.len())];
        let room = STDERR_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = newline.map_or(buffer.len(), |at| at + 1);
        reader.consume(used);
        if newline.is_some() {
            keep(&line);
            line.clear();
        }
    }
    if !line.is_empty() {
        keep(&line);
    }
}

/// Why `url` cannot be reached at all (DNS, refused, TLS), from a plain request whose error keeps its
/// cause chain — the SDK's error has flattened it. None when the address answers.
async fn connect_failure(url: &str) -> Option<String> {
    let probe = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().ok()?;
    match probe.head(url).send().await {
        Ok(_) => None,
        Err(error) => Some(root_cause(&error)),
    }
}

/// The innermost cause of an error, on one line: "invalid peer certificate: UnknownIssuer" rather than the
/// SDK's wrapper text. A certificate problem also says how a private CA is trusted.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    let text = one_line(&cause.to_string());
    let text = if text.is_empty() { one_line(&error.to_string()) } else { text };
    if text.to_ascii_lowercase().contains("certificate") {
        format!("{text} (a server with a private CA: point SSL_CERT_FILE at the CA's certificate)")
    } else {
        text
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(300).collect()
}
