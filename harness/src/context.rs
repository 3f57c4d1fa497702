//! What a check gets: a client for the server under test, and what the harness itself set up and can
//! observe from outside — the configuration folder (the picture cache is beside it), its own fixture MCP
//! server's log, restarting the server, and starting server processes for configuration cases; and
//! [`Group`], what the cases run on one server share.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
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
    /// The cases run on this server with this one, and what they compute once for all.
    pub group: Group,
}

/// The cases a run gives one server (one scenario group, in order), and what one of them computes
/// for all: a page tour walked once, say, in whose states each case then reads its own rule.
#[derive(Clone, Default)]
pub struct Group {
    cases: Arc<[&'static str]>,
    computed: Arc<std::sync::Mutex<HashMap<&'static str, Arc<dyn Any + Send + Sync>>>>,
}

impl Group {
    /// A group of the cases `ids`.
    pub fn of(ids: impl IntoIterator<Item = &'static str>) -> Self {
        Group { cases: ids.into_iter().collect(), computed: Arc::default() }
    }

    /// The group's cases, in the order they run.
    pub fn cases(&self) -> &[&'static str] {
        &self.cases
    }

    /// The value named `name`: computed by the first case that asks (the others wait for it), then
    /// shared. A computation cut short (its case timed out) is started again by the next case.
    pub async fn once<T, F, Fut>(&self, name: &'static str, compute: F) -> Arc<T>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        type Cell<T> = tokio::sync::OnceCell<Arc<T>>;
        let cell = {
            let mut computed = self.computed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let slot = computed.entry(name).or_insert_with(|| Arc::new(Cell::<T>::new()));
            match Arc::clone(slot).downcast::<Cell<T>>() {
                Ok(cell) => cell,
                // Another type under this name: a slot of this type of its own, not shared.
                Err(_) => Arc::new(Cell::<T>::new()),
            }
        };
        cell.get_or_init(|| async { Arc::new(compute().await) }).await.clone()
    }
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
            target => {
                let mut running = target
                    .start_running(config, scripts, env)
                    .await
                    .map_err(|e| CheckError::Fail { expected: "the server starts".into(), actual: e.to_string() })?;
                // Its exchanges are held to the wire monitor's invariants like the case's own.
                running.http = running.http.reporting_to(&self.http);
                Ok(running)
            }
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
    /// while it serves (its client's exchanges seen by the case's wire monitor).
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
        // The probe's exchanges are held to the wire monitor's invariants like the case's own.
        let case = self.http.clone();
        let watched = move |http: Http| probe(http.reporting_to(&case));
        self.target.launch_probing(file, port, extras, watched).await.map_err(|e| CheckError::NotRun(e.to_string()))
    }

    /// Starts a server process on `file` (on `port`, or a free one) and reports how it ended.
    pub async fn launch_with(&self, file: crate::target::ConfigFile, port: Option<u16>) -> Result<Launch, CheckError> {
        self.target.launch_with(file, port).await.map_err(|e| CheckError::NotRun(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_group_holds_the_cases_it_was_made_of() {
        let group = Group::of(["page.a", "page.b"]);
        assert!(group.cases().contains(&"page.a") && group.cases().contains(&"page.b"));
        assert!(!group.cases().contains(&"page.c") && !group.cases().contains(&"page"));
        assert_eq!(group.cases(), ["page.a", "page.b"], "in the order they run");
    }

    #[tokio::test]
    async fn once_computes_a_name_once_for_every_case_that_asks_at_the_same_time() {
        let group = Group::of(["page.a", "page.b", "page.c"]);
        let runs = AtomicUsize::new(0);
        let compute = || async {
            runs.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            41
        };
        let (a, b, c) =
            tokio::join!(group.once("walk", compute), group.once("walk", compute), group.once("walk", compute));
        assert_eq!((*a, *b, *c), (41, 41, 41));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let other = group.once("another walk", || async { 7 }).await;
        assert_eq!(*other, 7, "a second name is computed on its own");
        let again = group.once("walk", || async { 0 }).await;
        assert_eq!(*again, 41, "a name computed once is not computed again");
    }

    #[tokio::test]
    async fn another_type_under_a_taken_name_is_computed_apart() {
        let group = Group::default();
        assert_eq!(*group.once("walk", || async { 3_u32 }).await, 3);
        assert_eq!(*group.once("walk", || async { "text" }).await, "text");
    }
}
