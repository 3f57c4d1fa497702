//! Scenarios: the server configurations cases run against. Each is a run configuration (JSON),
//! mock-engine scripts and an API key; the target turns one into a running server. Cases that chat
//! consume scripts, so their scenarios get a fresh server for every case.

use serde_json::{Value, json};

/// The key the harness gives servers it starts.
pub const HARNESS_KEY: &str = "mediacheck-key-0123456789";

/// Every scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioId {
    /// No key, default script: health and a plain chat.
    Basic,
    /// An API key is required.
    Keyed,
}

/// What a target needs to start a scenario's server.
#[derive(Debug, Clone)]
pub struct ScenarioSpec {
    /// The run configuration.
    pub config: Value,
    /// Mock-engine scripts (one per engine pass, the last repeating).
    pub scripts: Vec<String>,
    /// The key the server requires, when any.
    pub api_key: Option<String>,
}

impl ScenarioId {
    /// Every scenario, in the order they run.
    pub const ALL: [ScenarioId; 2] = [ScenarioId::Basic, ScenarioId::Keyed];

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            ScenarioId::Basic => "basic",
            ScenarioId::Keyed => "keyed",
        }
    }

    /// Whether each case needs its own server (it consumes scripts or changes state).
    pub fn fresh_per_case(self) -> bool {
        matches!(self, ScenarioId::Basic)
    }

    /// The configuration to start.
    pub fn spec(self) -> ScenarioSpec {
        match self {
            ScenarioId::Basic => ScenarioSpec {
                config: json!({}),
                scripts: vec!["Thinking about it.</think>\n\nHello from the mock engine.".into()],
                api_key: None,
            },
            ScenarioId::Keyed => ScenarioSpec {
                config: json!({"api_key": HARNESS_KEY}),
                scripts: vec!["</think>\n\nok".into()],
                api_key: Some(HARNESS_KEY.into()),
            },
        }
    }

    /// Whether the scenario's cases can run against a server the harness did not start, and if not why.
    pub fn on_foreign_server(self, has_key: bool) -> Result<(), String> {
        match self {
            ScenarioId::Basic => Ok(()),
            ScenarioId::Keyed if has_key => Ok(()),
            ScenarioId::Keyed => Err("needs a server with an API key: pass --api-key".into()),
        }
    }
}
