//! The server under attack: a fresh process per attack, started from the command template with the
//! attack's configuration, its RSS when ready (VmRSS) and its peak when the attack is over (VmHWM), read
//! from /proc.

use std::process::Stdio;
use std::time::Duration;

use crate::http::Http;
use crate::target::{ServerError, expand, free_port, wait_for_health};

/// The configuration's file name without `.json`: the cache folder is named after it (SPEC 8.3).
const CONFIG_STEM: &str = "attack";

/// A started server process.
pub struct UnderAttack {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: tokio::process::Child,
    dir: tempfile::TempDir,
}

impl UnderAttack {
    /// Writes `config`, starts `template` on a free port and waits for `/health`.
    pub async fn start(template: &str, config: &serde_json::Value) -> Result<Self, ServerError> {
        let dir = tempfile::tempdir().map_err(|source| ServerError::Io { what: "no temp folder", source })?;
        let path = dir.path().join(format!("{CONFIG_STEM}.json"));
        std::fs::write(&path, config.to_string())
            .map_err(|source| ServerError::Io { what: "could not write the configuration", source })?;
        let port = free_port()?;
        let argv = expand(template, &path, port, &[])?;
        let (program, args) = argv.split_first().ok_or(ServerError::EmptyTemplate)?;
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ServerError::Spawn { program: program.clone(), source })?;
        let base = format!("http://127.0.0.1:{port}");
        wait_for_health(&Http::new(&base, None), &mut child).await?;
        Ok(Self { base, child, dir })
    }

    /// Its cache folder, `<config-stem>.tool-media/` beside its configuration (SPEC 8.3).
    pub fn media_folder(&self) -> std::path::PathBuf {
        self.dir.path().join(format!("{CONFIG_STEM}.tool-media"))
    }

    /// Its peak resident memory so far, in MiB.
    pub fn peak_rss_mib(&self) -> Option<u64> {
        self.memory_mib("VmHWM:")
    }

    /// Its resident memory now, in MiB.
    pub fn rss_mib(&self) -> Option<u64> {
        self.memory_mib("VmRSS:")
    }

    /// A `/proc/PID/status` figure given in kB, in MiB (rounded up).
    fn memory_mib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        let kib: u64 = status.lines().find_map(|l| l.strip_prefix(field))?.split_whitespace().next()?.parse().ok()?;
        Some(kib.div_ceil(1024))
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Whether `/health` answers 200 within 5 s (on a new connection).
    pub async fn health(&self) -> bool {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap_or_default();
        client.get(format!("{}/health", self.base)).send().await.is_ok_and(|r| r.status() == 200)
    }

    /// Stops it with SIGTERM (so it stops its MCP servers as it would in production), then SIGKILL
    /// after 10 s.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = tokio::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().await;
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.is_err() {
            let _ = self.child.start_kill();
            let _ = self.child.wait().await;
        }
    }
}
