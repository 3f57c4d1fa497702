//! A server process a case starts itself, talks to, and then signals: for the clauses about what a
//! whole process does — its log at any level (SPEC 1.12), how it stops on SIGTERM (1.9), and what
//! becomes of its MCP server processes (5.5). The configuration, scripts and environment are the case's.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::check::CheckError;
use crate::http::Http;
use crate::target::{ServerError, Target, free_port, spawn_server, wait_for_health};

/// The most of a running server's stderr the harness keeps (the log cases read it whole).
const STDERR_KEPT: usize = 32 << 20;

/// A running server process; killed when dropped.
pub struct Running {
    child: tokio::process::Child,
    /// A client for it (with the configuration's key, when it has one).
    pub http: Http,
    stderr: Arc<Mutex<Vec<u8>>>,
    dir: tempfile::TempDir,
}

impl Target {
    /// Starts this target's server as a process on `config` with `scripts` and `env`, and waits for
    /// `/health`. Its stderr is kept (see [`Running::stderr`]).
    pub async fn start_running(
        &self,
        config: &serde_json::Value,
        scripts: &[String],
        env: &[(&str, &str)],
    ) -> Result<Running, ServerError> {
        let template = self.process_template()?;
        let dir = tempfile::tempdir().map_err(|source| ServerError::Io { what: "no temp folder", source })?;
        let path = dir.path().join("running.json");
        std::fs::write(&path, config.to_string())
            .map_err(|source| ServerError::Io { what: "could not write the configuration", source })?;
        let port = free_port()?;
        let mut child = spawn_server(&template, &path, port, scripts, Stdio::null(), env)?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let kept = Arc::clone(&stderr);
            tokio::spawn(async move {
                let mut buffer = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    // A server under test may write without end: the first STDERR_KEPT bytes are kept,
                    // the rest is read and dropped (so the pipe never blocks it).
                    if let Ok(mut kept) = kept.lock() {
                        let room = STDERR_KEPT.saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..n.min(room)]);
                    }
                }
            });
        }
        let key = config["api_key"].as_str().map(str::to_string);
        let http = Http::new(&format!("http://127.0.0.1:{port}"), key);
        // wait_for_health reads stderr on an early exit; it was taken, so the reason is the kept text.
        if let Err(error) = wait_for_health(&http, &mut child).await {
            let _ = child.start_kill();
            return Err(error);
        }
        Ok(Running { child, http, stderr, dir })
    }
}

impl Running {
    /// Its picture cache folder: `<configuration's stem>.tool-media` beside its configuration (8.3).
    pub fn cache_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("running.tool-media")
    }

    /// The folder the process runs in (Linux: `/proc/<pid>/cwd`).
    pub fn working_dir(&self) -> Result<std::path::PathBuf, CheckError> {
        let pid = self.child.id().ok_or_else(|| crate::check::broken("the server process is already gone"))?;
        std::fs::read_link(format!("/proc/{pid}/cwd"))
            .map_err(|e| crate::check::broken(format!("the server's working folder: /proc/{pid}/cwd: {e}")))
    }

    /// Everything the process wrote to stderr so far, as text.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    }

    /// Sends `signal` (`TERM`, `INT`) and waits at most `within` for the process to exit; its exit
    /// code, or a failure saying it did not stop.
    pub async fn stop_with(&mut self, signal: &str, within: Duration) -> Result<Option<i32>, CheckError> {
        let pid = self.child.id().ok_or_else(|| crate::check::broken("the server process is already gone"))?;
        let sent = tokio::process::Command::new("kill").args(["-s", signal, &pid.to_string()]).status().await;
        if !sent.is_ok_and(|s| s.success()) {
            return Err(crate::check::broken(format!("kill -s {signal} {pid} failed")));
        }
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(Ok(status)) => Ok(status.code()),
            Ok(Err(error)) => Err(crate::check::broken(format!("waiting for the server: {error}"))),
            Err(_) => Err(CheckError::Fail {
                expected: format!("the server exits within {} s of SIG{signal}", within.as_secs()),
                actual: "it was still running".into(),
            }),
        }
    }
}

/// The `mediacheck` binary, for the stdio MCP servers a case configures (`mediacheck fixture-mcp`,
/// `mediacheck hostile-mcp`): this process when it is mediacheck, else the one beside this test
/// binary in the target folder.
pub fn mediacheck_exe() -> Result<std::path::PathBuf, CheckError> {
    let exe = std::env::current_exe().map_err(|e| CheckError::NotRun(format!("no path for this binary: {e}")))?;
    if exe.file_name().is_some_and(|n| n.to_string_lossy().starts_with("mediacheck")) {
        return Ok(exe);
    }
    let beside = [exe.parent(), exe.parent().and_then(|deps| deps.parent())];
    beside.into_iter().flatten().map(|dir| dir.join("mediacheck")).find(|p| p.is_file()).ok_or_else(|| {
        CheckError::NotRun("no mediacheck binary to run stdio MCP servers with (cargo build -p harness)".into())
    })
}

/// Kills every process with `marker` as one of its arguments (what a failing case leaves behind).
pub fn kill_all_with(marker: &str) {
    for pid in pids_with(marker) {
        let _ = std::process::Command::new("kill").args(["-s", "KILL", &pid]).status();
    }
}

/// How many live processes have `marker` as one of their arguments (Linux /proc; zombies count as gone).
pub fn alive_with(marker: &str) -> usize {
    pids_with(marker).len()
}

/// The ids of the live processes with `marker` as one of their arguments.
fn pids_with(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| {
            let state = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // The state follows the command name's closing parenthesis: Z is a zombie, X dead.
            !state.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
        })
        .filter_map(|e| {
            Some((e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path().join("cmdline")).ok()?))
        })
        .filter(|(_, cmdline)| cmdline.split(|&b| b == 0).any(|arg| arg == marker.as_bytes()))
        .map(|(pid, _)| pid)
        .collect()
}

/// Waits at most `within` for no process with `marker` to be alive; how many are left.
pub async fn until_gone(marker: &str, within: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = alive_with(marker);
        if left == 0 || tokio::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
