//! Targets: where the server under test comes from. `embedded` starts the reference server in this
//! process; `spawn` starts any server from a command template; `url` uses one already running (cases
//! needing another configuration are not run, with the reason).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use reference_server::config::{Overrides, RunConfig};
use tokio::io::AsyncBufReadExt;

use crate::http::Http;
use crate::scenario::ScenarioId;

/// Where servers come from.
#[derive(Debug, Clone)]
pub enum Target {
    /// The reference server, in-process, on loopback port 0.
    Embedded,
    /// A command template with `{config}`, `{port}` and `{scripts}` placeholders.
    Spawn {
        /// The template, split on whitespace.
        template: String,
    },
    /// An already running server.
    Url {
        /// `http://host:port`.
        base: String,
        /// Its API key, when it has one.
        api_key: Option<String>,
    },
}

/// A running server for one scenario.
pub struct Instance {
    /// A client for it.
    pub http: Http,
    /// The run configuration file, when the harness wrote it (its folder holds the picture cache).
    pub config_path: Option<PathBuf>,
    guard: Guard,
}

enum Guard {
    Embedded { server: reference_server::RunningServer, _dir: tempfile::TempDir },
    Spawned { child: tokio::process::Child, _dir: tempfile::TempDir },
    Foreign,
}

impl Instance {
    /// Stops what the harness started.
    pub async fn stop(self) {
        match self.guard {
            Guard::Embedded { server, .. } => server.stop().await,
            Guard::Spawned { mut child, .. } => {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
            Guard::Foreign => {}
        }
    }
}

/// Why a scenario has no server.
#[derive(Debug, Clone)]
pub enum StartError {
    /// This target cannot provide that configuration (the cases are not run).
    Unsupported(String),
    /// The server should have started and did not (the cases fail).
    Failed(String),
}

impl Target {
    /// Starts (or, for `url`, reuses) a server for `scenario`.
    pub async fn start(&self, scenario: ScenarioId) -> Result<Instance, StartError> {
        match self {
            Target::Url { base, api_key } => {
                scenario.on_foreign_server(api_key.is_some()).map_err(StartError::Unsupported)?;
                Ok(Instance { http: Http::new(base, api_key.clone()), config_path: None, guard: Guard::Foreign })
            }
            Target::Embedded => start_embedded(scenario).await.map_err(StartError::Failed),
            Target::Spawn { template } => start_spawned(template, scenario).await.map_err(StartError::Failed),
        }
    }

    /// A short description for the report header.
    pub fn describe(&self) -> String {
        match self {
            Target::Embedded => "embedded reference server".into(),
            Target::Spawn { template } => format!("spawn: {template}"),
            Target::Url { base, .. } => format!("url: {base}"),
        }
    }
}

fn write_config(scenario: ScenarioId) -> Result<(tempfile::TempDir, PathBuf), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("failed to make a temp folder: {e}"))?;
    let path = dir.path().join(format!("{}.json", scenario.name()));
    let spec = scenario.spec();
    std::fs::write(&path, spec.config.to_string()).map_err(|e| format!("failed to write the configuration: {e}"))?;
    Ok((dir, path))
}

async fn start_embedded(scenario: ScenarioId) -> Result<Instance, String> {
    let (dir, path) = write_config(scenario)?;
    let spec = scenario.spec();
    let overrides =
        Overrides { host: Some("127.0.0.1".into()), port: Some(0), scripts: spec.scripts, ..Overrides::default() };
    let loaded = RunConfig::load(&path, &overrides).map_err(|e| e.to_string())?;
    let server = reference_server::start(loaded.config).await.map_err(|e| format!("failed to start: {e}"))?;
    let http = Http::new(&server.url(), spec.api_key);
    Ok(Instance { http, config_path: Some(path), guard: Guard::Embedded { server, _dir: dir } })
}

async fn start_spawned(template: &str, scenario: ScenarioId) -> Result<Instance, String> {
    let (dir, path) = write_config(scenario)?;
    let spec = scenario.spec();
    let port = free_port()?;
    let mut argv: Vec<String> = Vec::new();
    for token in template.split_whitespace() {
        if token == "{scripts}" {
            for script in &spec.scripts {
                argv.push("--script".into());
                argv.push(script.clone());
            }
            continue;
        }
        argv.push(token.replace("{config}", &path.display().to_string()).replace("{port}", &port.to_string()));
    }
    let (program, args) = argv.split_first().ok_or("the spawn template is empty")?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("could not start '{program}': {e}"))?;
    let base = format!("http://127.0.0.1:{port}");
    let http = Http::new(&base, spec.api_key);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(reply) = http.get("/health").without_key().send().await
            && reply.status == 200
        {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut last = String::new();
            if let Some(stderr) = child.stderr.take() {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    last = line;
                }
            }
            return Err(format!("the server exited ({status}) before /health answered: {last}"));
        }
        if tokio::time::Instant::now() > deadline {
            return Err("the server did not answer /health within 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(Instance { http, config_path: Some(path), guard: Guard::Spawned { child, _dir: dir } })
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}
