//! Targets: where the server under test comes from. `embedded` starts the reference server in this
//! process; `spawn` starts any server from a command template; `url` uses one already running (cases
//! needing another configuration are not run, with the reason). A target also starts servers as
//! processes for the configuration cases, which watch exit codes and stderr.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fixtures::http::{HttpFixture, serve_http};
use fixtures::mcp_server::{FixtureLog, FixtureOptions, Stage};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::http::Http;
use crate::scenario::{FIXTURE_SERVER, Scenario, Setup};

/// Where servers come from.
#[derive(Debug, Clone)]
pub enum Target {
    /// The reference server, in-process, on loopback port 0. `launcher` is the `mediacheck` binary,
    /// used to start the same server as a process for the configuration cases.
    Embedded {
        /// `mediacheck` (its hidden `serve-reference` subcommand is the reference server's CLI).
        launcher: Option<PathBuf>,
    },
    /// A command template with `{config}`, `{port}` and `{scripts}` placeholders.
    Spawn {
        /// The template, split into words as a POSIX shell would (quotes and backslashes work, so a
        /// path with spaces can be one word); nothing is run through a shell.
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

/// A running server for one scenario, with what the harness set up around it.
pub struct Instance {
    /// A client for it.
    pub http: Http,
    /// The run configuration the harness wrote (the picture cache lives beside it).
    pub config_path: Option<PathBuf>,
    /// What the harness's fixture MCP server saw.
    pub fixture_log: Option<FixtureLog>,
    /// What its `staged` tool returns.
    pub fixture_stage: Option<Stage>,
    setup: Setup,
    server: Server,
    _fixture: Option<HttpFixture>,
    _dir: Option<tempfile::TempDir>,
}

enum Server {
    Embedded(crate::embedded::RunningServer),
    Spawned(tokio::process::Child),
    Foreign,
    Stopped,
}

/// Why a scenario has no server.
#[derive(Debug, Clone)]
pub enum StartError {
    /// This target cannot provide that configuration (the cases are not run).
    Unsupported(String),
    /// The server should have started and did not (the cases fail).
    Failed(String),
}

/// Why a server could not be started by the harness (one line in the report).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The embedded target was built without a launcher binary.
    #[error("no mediacheck binary to start servers with")]
    NoLauncher,
    /// The url target starts nothing.
    #[error("the url target cannot start servers")]
    UrlTarget,
    /// A file, a folder or a port the harness needed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// The spawn template is not a command line.
    #[error("the command template cannot be split: {0}")]
    Template(String),
    /// The spawn template has no words.
    #[error("the spawn template is empty")]
    EmptyTemplate,
    /// The command could not be started.
    #[error("could not start '{program}': {source}")]
    Spawn {
        /// The program.
        program: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A pipe the harness asked for is not there.
    #[error("the server's {0} is not piped")]
    NoPipe(&'static str),
    /// The instance has no configuration file.
    #[error("no configuration to start")]
    NoConfig,
    /// The reference server refused the configuration, or did not start.
    #[error("failed to start: {0}")]
    Embedded(String),
    /// The process exited before it was ready.
    #[error("the server exited ({status}) before /health answered: {last}")]
    Exited {
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last line of its stderr.
        last: String,
    },
    /// The process never answered `/health`.
    #[error("the server did not answer /health within 60 s")]
    NoHealth,
    /// `/health` refused outright (401, 403, 404, 405) for 2 s.
    #[error("the server answered GET /health without a key with {0} for 2 s, never 200 (SPEC 2.3, 3.1)")]
    HealthStatus(u16),
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> ServerError {
    move |source| ServerError::Io { what, source }
}

/// How a launched process ended.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Its exit code; `None` when it was still running (and was stopped) after it became ready.
    pub code: Option<i32>,
    /// The last status `GET /health` answered where the ready line says it listens (the port asked
    /// for, or the one the line names when 0 was asked for); `None` when nothing answered.
    pub health: Option<u16>,
    /// Its first stdout line.
    pub first_line: String,
    /// All it wrote to stderr.
    pub stderr: String,
    /// The configuration path it was given (gone after the launch).
    pub config_path: std::path::PathBuf,
}

/// The configuration file a launch is given.
#[derive(Debug, Clone)]
pub enum ConfigFile {
    /// A file holding these bytes.
    Bytes(Vec<u8>),
    /// A folder where the file should be (it cannot be read as a file).
    Folder,
}

impl Target {
    /// A short description for the report header.
    pub fn describe(&self) -> String {
        match self {
            Target::Embedded { .. } => "embedded reference server".into(),
            Target::Spawn { template } => format!("spawn: {template}"),
            Target::Url { base, .. } => format!("url: {base}"),
        }
    }

    /// The command template that starts this target's server as a process of its own.
    pub(crate) fn process_template(&self) -> Result<String, ServerError> {
        match self {
            Target::Embedded { launcher: Some(exe) } => {
                Ok(format!("{} serve-reference --config {{config}} --port {{port}} {{scripts}}", exe.display()))
            }
            Target::Embedded { launcher: None } => Err(ServerError::NoLauncher),
            Target::Spawn { template } => Ok(template.clone()),
            Target::Url { .. } => Err(ServerError::UrlTarget),
        }
    }

    /// Starts (or, for `url`, reuses) a server for `scenario`.
    pub async fn start(&self, scenario: &Scenario) -> Result<Instance, StartError> {
        let setup = (scenario.build)();
        if let Target::Url { base, api_key } = self {
            if !scenario.portable() {
                return Err(StartError::Unsupported(format!(
                    "needs a server configured for scenario '{}' (use the embedded or spawn target)",
                    scenario.name
                )));
            }
            if setup.api_key.is_some() && api_key.is_none() {
                return Err(StartError::Unsupported("needs a server with an API key: pass --api-key".into()));
            }
            let http = Http::new(base, api_key.clone());
            return Ok(Instance {
                http,
                config_path: None,
                fixture_log: None,
                fixture_stage: None,
                setup,
                server: Server::Foreign,
                _fixture: None,
                _dir: None,
            });
        }
        let dir = tempfile::tempdir().map_err(|e| StartError::Failed(format!("no temp folder: {e}")))?;
        let mut config = setup.config.clone();
        let (fixture, fixture_log, fixture_stage) = if setup.fixture {
            let log = FixtureLog::default();
            let stage = Stage::default();
            let options = FixtureOptions { log: log.clone(), stage: stage.clone(), ..FixtureOptions::default() };
            let fixture =
                serve_http(options, 0, None).await.map_err(|e| StartError::Failed(format!("fixture: {e}")))?;
            // Beside any servers the scenario configures itself.
            if !config["mcp_servers"].is_object() {
                config["mcp_servers"] = serde_json::json!({});
            }
            config["mcp_servers"][FIXTURE_SERVER] = serde_json::json!({"url": fixture.url});
            (Some(fixture), Some(log), Some(stage))
        } else {
            (None, None, None)
        };
        let path = dir.path().join(format!("{}.json", scenario.name));
        std::fs::write(&path, config.to_string()).map_err(|e| StartError::Failed(e.to_string()))?;
        if setup.block_cache {
            let blocker = dir.path().join(format!("{}.tool-media", scenario.name));
            std::fs::write(blocker, "not a folder").map_err(|e| StartError::Failed(e.to_string()))?;
        }
        let mut instance = Instance {
            http: Http::new("http://127.0.0.1:1", setup.api_key.clone()),
            config_path: Some(path),
            fixture_log,
            fixture_stage,
            setup,
            server: Server::Stopped,
            _fixture: fixture,
            _dir: Some(dir),
        };
        instance.boot(self).await.map_err(|e| StartError::Failed(e.to_string()))?;
        Ok(instance)
    }

    /// Starts a server process for `config` (written to a temp folder) and reports how it ended:
    /// its exit code, or `None` once it printed its ready line and answered `/health` (it is then stopped).
    pub async fn launch(&self, config: &serde_json::Value) -> Result<Launch, ServerError> {
        self.launch_with(ConfigFile::Bytes(config.to_string().into_bytes()), None).await
    }

    /// Starts a server process on `file` (on `port`, or a free one) and reports how it ended.
    pub async fn launch_with(&self, file: ConfigFile, port: Option<u16>) -> Result<Launch, ServerError> {
        let (launch, _) = self.launch_probing(file, port, &LaunchExtras::default(), |_| async {}).await?;
        Ok(launch)
    }

    /// [`Target::launch_with`] with `extras` (arguments after the template's, environment variables),
    /// and `probe` run on the server while it serves (once `/health` answered 200 where its ready line
    /// says), before it is stopped: what `probe` found, or `None` when it never served.
    pub async fn launch_probing<T, F, Fut>(
        &self,
        file: ConfigFile,
        port: Option<u16>,
        extras: &LaunchExtras<'_>,
        probe: F,
    ) -> Result<(Launch, Option<T>), ServerError>
    where
        F: FnOnce(Http) -> Fut,
        Fut: std::future::Future<Output = T>,
    {
        let template = self.process_template()?;
        let dir = tempfile::tempdir().map_err(io("no temp folder"))?;
        let path = dir.path().join("launch.json");
        match file {
            ConfigFile::Bytes(bytes) => std::fs::write(&path, bytes),
            ConfigFile::Folder => std::fs::create_dir(&path),
        }
        .map_err(io("could not write the configuration"))?;
        let port = match port {
            Some(port) => port,
            None => free_port()?,
        };
        let mut child = spawn_server_with(&template, &path, port, &[], Stdio::piped(), extras)?;
        let mut stdout = tokio::io::BufReader::new(child.stdout.take().ok_or(ServerError::NoPipe("stdout"))?);
        let mut stderr_pipe = child.stderr.take().ok_or(ServerError::NoPipe("stderr"))?;
        let stderr_task = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text).await;
            text
        });
        let mut first_line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), stdout.read_line(&mut first_line)).await;
        let mut health = None;
        let mut probed = None;
        let code = if read.is_ok_and(|r| r.is_ok_and(|n| n > 0)) {
            // Asked for port 0, the server is found where its ready line says (1.2).
            let named = first_line.trim_end().rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok());
            let found = if port == 0 { named.filter(|p| *p != 0) } else { Some(port) };
            let http = found.map(|p| Http::new(&format!("http://127.0.0.1:{p}"), None));
            let mut code = None;
            for _ in 0..200 {
                if let Ok(Some(status)) = child.try_wait() {
                    code = status.code();
                    break;
                }
                let Some(http) = &http else { break };
                health = http.get("/health").without_key().send().await.ok().map(|r| r.status).or(health);
                if health == Some(200) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            if let Some(http) = http.filter(|_| health == Some(200) && code.is_none()) {
                probed = Some(probe(http).await);
            }
            let _ = child.start_kill();
            let _ = child.wait().await;
            code
        } else {
            match tokio::time::timeout(Duration::from_secs(30), child.wait()).await {
                Ok(Ok(status)) => status.code(),
                _ => {
                    let _ = child.start_kill();
                    let launch = Launch {
                        code: None,
                        health: None,
                        first_line: String::new(),
                        stderr: "(it neither printed a ready line nor exited within 30 s)".into(),
                        config_path: path,
                    };
                    return Ok((launch, None));
                }
            }
        };
        let stderr = tokio::time::timeout(Duration::from_secs(5), stderr_task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let launch = Launch { code, health, first_line: first_line.trim_end().to_string(), stderr, config_path: path };
        Ok((launch, probed))
    }
}

/// What a launch adds to the template's command: arguments after its words (`--api-key K`, as SPEC
/// 1.2 and Strata's command line have it), and environment variables (`STRATA_API_KEY`).
#[derive(Debug, Default)]
pub struct LaunchExtras<'a> {
    /// Arguments after the template's.
    pub args: Vec<String>,
    /// Environment variables set for the process, besides this one's.
    pub env: Vec<(&'a str, String)>,
    /// Environment variables of this process the server does not get.
    pub unset: Vec<&'a str>,
}

/// Starts the command `template` names for `config` on `port` (stderr piped, killed when dropped).
pub(crate) fn spawn_server(
    template: &str,
    config: &std::path::Path,
    port: u16,
    scripts: &[String],
    stdout: Stdio,
    env: &[(&str, &str)],
) -> Result<tokio::process::Child, ServerError> {
    let extras =
        LaunchExtras { env: env.iter().map(|&(k, v)| (k, v.to_string())).collect(), ..LaunchExtras::default() };
    spawn_server_with(template, config, port, scripts, stdout, &extras)
}

/// [`spawn_server`] with `extras`' arguments after the template's words and its environment.
fn spawn_server_with(
    template: &str,
    config: &std::path::Path,
    port: u16,
    scripts: &[String],
    stdout: Stdio,
    extras: &LaunchExtras<'_>,
) -> Result<tokio::process::Child, ServerError> {
    let mut argv = expand(template, config, port, scripts)?;
    argv.extend(extras.args.iter().cloned());
    let (program, args) = argv.split_first().ok_or(ServerError::EmptyTemplate)?;
    let mut command = tokio::process::Command::new(program);
    for name in &extras.unset {
        command.env_remove(name);
    }
    command
        .args(args)
        .envs(extras.env.iter().map(|(k, v)| (k, v)))
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| ServerError::Spawn { program: program.clone(), source })
}

impl Instance {
    /// Starts the server for this instance's configuration (again, after a stop).
    async fn boot(&mut self, target: &Target) -> Result<(), ServerError> {
        let path = self.config_path.clone().ok_or(ServerError::NoConfig)?;
        match target {
            Target::Embedded { .. } => {
                let server =
                    crate::embedded::start(&path, self.setup.scripts.clone()).await.map_err(ServerError::Embedded)?;
                self.http = Http::new(&server.url(), self.setup.api_key.clone());
                self.server = Server::Embedded(server);
            }
            Target::Spawn { template } => {
                let port = free_port()?;
                let mut child = spawn_server(template, &path, port, &self.setup.scripts, Stdio::null(), &[])?;
                let http = Http::new(&format!("http://127.0.0.1:{port}"), self.setup.api_key.clone());
                wait_for_health(&http, &mut child).await?;
                // Nothing reads a scenario server's log, but it must be drained: a server that logs
                // every request would otherwise block on the full pipe (64 KiB: the reference's INFO
                // line per tool call filled it after 255 calls) and stop answering.
                if let Some(mut stderr) = child.stderr.take() {
                    tokio::spawn(async move { tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await });
                }
                self.http = http;
                self.server = Server::Spawned(child);
            }
            Target::Url { .. } => return Err(ServerError::UrlTarget),
        }
        Ok(())
    }

    /// Stops the server and starts it again on the same configuration folder (its cache included).
    pub async fn restart(&mut self, target: &Target) -> Result<(), ServerError> {
        self.stop_server().await;
        self.boot(target).await
    }

    async fn stop_server(&mut self) {
        match std::mem::replace(&mut self.server, Server::Stopped) {
            Server::Embedded(server) => server.stop().await,
            Server::Spawned(mut child) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
            Server::Foreign | Server::Stopped => {}
        }
    }

    /// Stops what the harness started.
    pub async fn stop(mut self) {
        self.stop_server().await;
    }
}

pub(crate) async fn wait_for_health(http: &Http, child: &mut tokio::process::Child) -> Result<(), ServerError> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    // A server that refuses /health outright (401, 403, 404, 405: behind the key, or missing) is given
    // 2 s, then its answer is the error; a 503 while a model loads is waited for up to 60 s.
    let mut answered_since: Option<tokio::time::Instant> = None;
    loop {
        match http.get("/health").without_key().send().await {
            Ok(r) if r.status == 200 => return Ok(()),
            Ok(r) if matches!(r.status, 401 | 403 | 404 | 405) => {
                let since = *answered_since.get_or_insert_with(tokio::time::Instant::now);
                if since.elapsed() > Duration::from_secs(2) {
                    return Err(ServerError::HealthStatus(r.status));
                }
            }
            Ok(_) | Err(_) => {}
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut last = String::new();
            if let Some(stderr) = child.stderr.take() {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    last = line;
                }
            }
            return Err(ServerError::Exited { status, last });
        }
        if tokio::time::Instant::now() > deadline {
            return Err(ServerError::NoHealth);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The template's words (split as a POSIX shell would, without running one) with `{config}` and
/// `{port}` filled in and a `{scripts}` word replaced by repeated `--script S`.
pub(crate) fn expand(
    template: &str,
    config: &std::path::Path,
    port: u16,
    scripts: &[String],
) -> Result<Vec<String>, ServerError> {
    let words = shell_words::split(template).map_err(|e| ServerError::Template(e.to_string()))?;
    let mut argv = Vec::new();
    for word in words {
        if word == "{scripts}" {
            for script in scripts {
                argv.push("--script".to_string());
                argv.push(script.clone());
            }
            continue;
        }
        argv.push(word.replace("{config}", &config.display().to_string()).replace("{port}", &port.to_string()));
    }
    Ok(argv)
}

pub(crate) fn free_port() -> Result<u16, ServerError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(io("no free port"))?;
    listener.local_addr().map(|a| a.port()).map_err(io("no free port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_split_like_a_shell_and_placeholders_stay_one_word() {
        let config = std::path::Path::new("/tmp/a folder/run.json");
        let argv = expand(
            r#"'/opt/my server/bin' --config {config} --port {port} --name "two words" {scripts} --x\ y"#,
            config,
            8080,
            &["s 1".into()],
        );
        let expected = [
            "/opt/my server/bin",
            "--config",
            "/tmp/a folder/run.json",
            "--port",
            "8080",
            "--name",
            "two words",
            "--script",
            "s 1",
            "--x y",
        ];
        assert_eq!(argv.ok(), Some(expected.map(String::from).to_vec()));
        assert!(expand("server 'unclosed", config, 1, &[]).is_err());
    }
}
