//! Scenarios: the server configurations cases run against. A scenario builds a [`Setup`] — the run
//! configuration, mock-engine scripts, the API key, whether the harness's fixture MCP server is wired
//! in — and the target turns it into a running server. Cases that chat consume scripts, so their
//! scenarios are `fresh`: a new server for every case.

use serde_json::{Value, json};

/// The key the harness gives servers that need one.
pub const HARNESS_KEY: &str = "mediacheck-key-0123456789";
/// The name the fixture MCP server gets in `mcp_servers`, so its tools are `fake__<tool>`.
pub const FIXTURE_SERVER: &str = "fake";

/// A named way to configure a server.
#[derive(Clone, Copy)]
pub struct Scenario {
    /// A short name for reports; cases with the same name share a server when it is `Shared`.
    pub name: &'static str,
    /// Builds the setup.
    pub build: fn() -> Setup,
    /// Whether its cases get a server, a new one each or one shared.
    pub serving: Serving,
}

/// How a scenario's cases get their server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serving {
    /// A new server for every case.
    PerCase(Reach),
    /// One server shared by the scenario's cases.
    Shared(Reach),
    /// No server: the cases launch server processes themselves (configuration cases).
    LaunchesItsOwn,
}

/// Which servers a scenario's cases can run against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Any server, an already running one (the `url` target) included.
    AnyServer,
    /// Only one the harness configures (the embedded and spawn targets).
    Configured,
}

impl Scenario {
    /// Whether every case gets a server of its own.
    pub fn fresh(&self) -> bool {
        matches!(self.serving, Serving::PerCase(_))
    }

    /// Whether the cases can run against any server (the `url` target).
    pub fn portable(&self) -> bool {
        matches!(self.serving, Serving::PerCase(Reach::AnyServer) | Serving::Shared(Reach::AnyServer))
    }

    /// Whether the harness starts a server for the cases.
    pub fn server(&self) -> bool {
        self.serving != Serving::LaunchesItsOwn
    }
}

/// What a target needs to start a server.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The run configuration (`mcp_servers.fake` is added when `fixture` is set).
    pub config: Value,
    /// Mock-engine scripts, one per engine pass, the last repeating.
    pub scripts: Vec<String>,
    /// The key the server requires.
    pub api_key: Option<String>,
    /// Wire in the harness's own fixture MCP server.
    pub fixture: bool,
    /// Put a file where the picture cache folder should be, so it cannot be written.
    pub block_cache: bool,
}

impl Setup {
    /// No key, the mock engine's default script.
    pub fn plain() -> Self {
        Setup {
            config: json!({}),
            scripts: vec!["Thinking about it.</think>\n\nHello from the mock engine.".into()],
            api_key: None,
            fixture: false,
            block_cache: false,
        }
    }

    /// An API key is required.
    pub fn keyed() -> Self {
        Setup::plain().with_key()
    }

    /// The fixture MCP server wired in, with `mcp.image_results` set when `Some`.
    pub fn mcp(image_results: Option<bool>) -> Self {
        let mut setup = Setup { fixture: true, ..Setup::plain() };
        if let Some(on) = image_results {
            setup.config["mcp"] = json!({"image_results": on});
        }
        setup
    }

    /// With a vision encoder (the geometry backend).
    pub fn vision(mut self) -> Self {
        self.config["vision"] = json!({"backend": "geometry"});
        self
    }

    /// With these scripts.
    pub fn scripts(mut self, scripts: Vec<String>) -> Self {
        self.scripts = scripts;
        self
    }

    /// With `config.<block>.<key> = value`.
    pub fn set(mut self, block: &str, key: &str, value: Value) -> Self {
        if !self.config[block].is_object() {
            self.config[block] = json!({});
        }
        self.config[block][key] = value;
        self
    }

    /// With the API key required.
    pub fn with_key(mut self) -> Self {
        self.config["api_key"] = json!(HARNESS_KEY);
        self.api_key = Some(HARNESS_KEY.into());
        self
    }

    /// With a cache that cannot be written.
    pub fn blocked_cache(mut self) -> Self {
        self.block_cache = true;
        self
    }
}

/// No key, default script, a fresh server per case.
pub const BASIC: Scenario =
    Scenario { name: "basic", build: Setup::plain, serving: Serving::PerCase(Reach::AnyServer) };
/// A key is required; cases share the server.
pub const KEYED: Scenario = Scenario { name: "keyed", build: Setup::keyed, serving: Serving::Shared(Reach::AnyServer) };
/// No server is started for the case; it launches processes itself (configuration cases).
pub const LAUNCHES: Scenario = Scenario { name: "launches", build: Setup::plain, serving: Serving::LaunchesItsOwn };

/// A scenario of its own for one case: the fixture MCP server, a fresh server per case.
pub const fn own(name: &'static str, build: fn() -> Setup) -> Scenario {
    Scenario { name, build, serving: Serving::PerCase(Reach::Configured) }
}
