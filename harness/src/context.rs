//! What a check gets: a client for the server under test, and what the harness itself set up and can
//! observe from outside — the configuration folder (the picture cache is beside it), its own fixture MCP
//! server's log, restarting the server, and starting server processes for configuration cases.

use std::path::PathBuf;
use std::sync::Arc;

use fixtures::mcp_server::{FixtureLog, Stage};
use tokio::sync::Mutex;

use crate::check::CheckError;
use crate::http::Http;
use crate::target::{Instance, Launch, Target};

/// A check's view of the server.
#[derive(Clone)]
pub struct Ctx {
    /// A client that records the exchanges.
    pub http: Http,
    /// The run configuration the harness wrote, when it started the server.
    pub config_path: Option<PathBuf>,
    /// What the harness's fixture MCP server saw, when the scenario has one.
    pub fixture_log: Option<FixtureLog>,
    /// What the fixture MCP server's `staged` tool returns, when the scenario has one.
    pub fixture_stage: Option<Stage>,
    pub(crate) instance: Option<Arc<Mutex<Instance>>>,
    pub(crate) target: Target,
}

impl Ctx {
    /// The picture cache folder, `<config-stem>.tool-media/` beside the configuration.
    pub fn cache_dir(&self) -> Result<PathBuf, CheckError> {
        let path = self
            .config_path
            .as_ref()
            .ok_or_else(|| CheckError::NotRun("the harness did not write this server's configuration".into()))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(path.with_file_name(format!("{stem}.tool-media")))
    }

    /// The run configuration the harness wrote for this server.
    pub fn config(&self) -> Result<serde_json::Value, CheckError> {
        let path = self
            .config_path
            .as_ref()
            .ok_or_else(|| CheckError::NotRun("the harness did not write this server's configuration".into()))?;
        let text =
            std::fs::read_to_string(path).map_err(|e| crate::check::broken(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| crate::check::broken(format!("{}: {e}", path.display())))
    }

    /// Starts a server process of the case's own on `config` with `scripts` and `env` (see
    /// [`crate::running`]); not run for a `url` target.
    pub async fn start_running(
        &self,
        config: &serde_json::Value,
        scripts: &[String],
        env: &[(&str, &str)],
    ) -> Result<crate::running::Running, CheckError> {
        match &self.target {
            Target::Url { .. } => {
                Err(CheckError::NotRun("needs a server process of its own (use the embedded or spawn target)".into()))
            }
            target => target
                .start_running(config, scripts, env)
                .await
                .map_err(|e| CheckError::Fail { expected: "the server starts".into(), actual: e.to_string() }),
        }
    }

    /// The fixture MCP server's log.
    pub fn fixture(&self) -> Result<&FixtureLog, CheckError> {
        self.fixture_log.as_ref().ok_or_else(|| CheckError::NotRun("the scenario has no fixture MCP server".into()))
    }

    /// The fixture MCP server's stage: what its `staged` tool returns next.
    pub fn stage(&self) -> Result<&Stage, CheckError> {
        self.fixture_stage.as_ref().ok_or_else(|| CheckError::NotRun("the scenario has no fixture MCP server".into()))
    }

    /// Stops the server and starts it again on the same configuration folder; returns the new client.
    pub async fn restart(&self) -> Result<Http, CheckError> {
        let instance =
            self.instance.as_ref().ok_or_else(|| CheckError::NotRun("this target cannot restart the server".into()))?;
        let mut instance = instance.lock().await;
        instance
            .restart(&self.target)
            .await
            .map_err(|e| CheckError::Fail { expected: "the server starts again".into(), actual: e.to_string() })?;
        Ok(instance.http.fresh())
    }

    /// Starts a server process with `config` and reports how it ended.
    pub async fn launch(&self, config: &serde_json::Value) -> Result<Launch, CheckError> {
        self.target.launch(config).await.map_err(|e| CheckError::NotRun(e.to_string()))
    }

    /// [`crate::target::Target::launch_probing`]: a launch with `extras`, and `probe` run on the server
    /// while it serves.
    pub async fn launch_probing<T, F, Fut>(
        &self,
        file: crate::target::ConfigFile,
        port: Option<u16>,
        extras: &crate::target::LaunchExtras<'_>,
        probe: F,
    ) -> Result<(Launch, Option<T>), CheckError>
    where
        F: FnOnce(Http) -> Fut,
        Fut: std::future::Future<Output = T>,
    {
        self.target.launch_probing(file, port, extras, probe).await.map_err(|e| CheckError::NotRun(e.to_string()))
    }

    /// Starts a server process on `file` (on `port`, or a free one) and reports how it ended.
    pub async fn launch_with(&self, file: crate::target::ConfigFile, port: Option<u16>) -> Result<Launch, CheckError> {
        self.target.launch_with(file, port).await.map_err(|e| CheckError::NotRun(e.to_string()))
    }
}
