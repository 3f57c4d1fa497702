//! The attacks: what each sends, the server configuration it needs, and the driver that sends it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use fixtures::hostile_mcp::{Hostility, TOOL};
use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};

use super::{connections, requests};

/// The API key every attacked server is given (the attacks send it: they are authenticated clients).
pub const KEY: &str = "mediacheck-attack-key";

/// The engine script set the MCP attacks name in `model`: call the hostile tool, then answer.
const CALL_HOSTILE: &str = "call-hostile";

/// One attack.
#[derive(Debug, Clone)]
pub struct Attack {
    /// Its id (`--only` matches it).
    pub id: &'static str,
    /// The SPEC clauses that bound what it attacks.
    pub clauses: &'static str,
    /// What it does, in a line.
    pub description: &'static str,
    /// How it is sent.
    pub kind: AttackKind,
}

/// How an attack is sent.
#[derive(Debug, Clone, Copy)]
pub enum AttackKind {
    /// `workers` clients post these bodies to `/v1/chat/completions` in turn, again and again.
    Bodies {
        /// Clients sending at once.
        workers: usize,
        /// The bodies, sent in turn.
        body: fn() -> Vec<Vec<u8>>,
    },
    /// Connections that send their request headers a byte a second.
    Slowloris {
        /// How many at once.
        connections: usize,
    },
    /// Connections that send complete headers and then a body of 100 MB at 1 KiB a second.
    SlowBodies {
        /// How many at once.
        connections: usize,
    },
    /// Connections that are opened and never used.
    Idle {
        /// How many at once.
        connections: usize,
    },
    /// The server is configured with a hostile stdio MCP server and one client keeps calling its tool.
    Mcp(Hostility),
}

/// Every attack, in the order they run.
pub fn all() -> Vec<Attack> {
    use AttackKind::*;
    let mcp = |id, hostility, description| Attack { id, clauses: "5.1, 5.2, 5.5", description, kind: Mcp(hostility) };
    vec![
        Attack {
            id: "json-huge-array",
            clauses: "4.10",
            description: "100 MB bodies: a 50-million-element array in an unknown field (2 at a time)",
            kind: Bodies { workers: 2, body: requests::huge_unknown_array },
        },
        Attack {
            id: "json-many-values",
            clauses: "4.10",
            description: "3 million values in the tools list (2 at a time)",
            kind: Bodies { workers: 2, body: requests::many_values },
        },
        Attack {
            id: "json-deep-nesting",
            clauses: "4.10",
            description: "4 million nested arrays (2 at a time)",
            kind: Bodies { workers: 2, body: requests::deep_nesting },
        },
        Attack {
            id: "max-size-bodies",
            clauses: "1.11, 4.10",
            description: "bodies just under max_body_mib (250 MiB), 3 at a time",
            kind: Bodies { workers: 3, body: requests::max_size },
        },
        Attack {
            id: "pictures-claiming-size",
            clauses: "4.13, 12.2",
            description: "64 tiny PNGs claiming 60000x60000 each, then 65 (2 at a time)",
            kind: Bodies { workers: 2, body: requests::pictures_claiming_size },
        },
        Attack {
            id: "picture-bombs",
            clauses: "12.3, 12.4",
            description: "a 20000x20000 PNG bomb, a GIF frame bomb, an APNG, an animated WebP, in turn (2 at a time)",
            kind: Bodies { workers: 2, body: requests::picture_bombs },
        },
        Attack {
            id: "lifted-bombs",
            clauses: "11.2, 11.4",
            description: "the PNG bomb as base64 in a tool message's text, 9 times (2 at a time)",
            kind: Bodies { workers: 2, body: requests::lifted_bombs },
        },
        Attack {
            id: "slowloris-headers",
            clauses: "1.11",
            description: "800 connections sending their headers a byte a second",
            kind: Slowloris { connections: 800 },
        },
        Attack {
            id: "slow-bodies",
            clauses: "1.11",
            description: "200 connections declaring 100 MB bodies and sending 1 KiB a second",
            kind: SlowBodies { connections: 200 },
        },
        Attack {
            id: "idle-connections",
            clauses: "1.11",
            description: "1500 connections opened and never used (reopened when closed)",
            kind: Idle { connections: 1500 },
        },
        mcp("mcp-stderr-flood", Hostility::StderrFlood, "an MCP server writing stderr without newlines, flat out"),
        mcp("mcp-invalid-utf8", Hostility::InvalidUtf8, "an MCP server writing bytes that are not UTF-8 to stderr"),
        mcp("mcp-many-tools", Hostility::ManyTools, "an MCP server listing 100,000 tools"),
        mcp("mcp-endless-paging", Hostility::EndlessPaging, "an MCP server whose tools/list never ends"),
        mcp("mcp-huge-line", Hostility::HugeLine, "an MCP server answering every call with a 20 MiB line"),
        mcp("mcp-grandchild", Hostility::Grandchild, "an MCP server that exits leaving a grandchild behind"),
    ]
}

/// The configuration the server under attack runs with: a key, a vision encoder (so pictures reach
/// the vision path), tool pictures on, and for the MCP attacks the hostile server as `hostile`.
pub fn config(attack: &Attack, launcher: &Path, marker: &str) -> Value {
    let mut config = json!({
        "api_key": KEY,
        "vision": {"backend": "geometry"},
        "mcp": {"image_results": true, "timeout_s": 20},
        "engine": {
            "scripts": [answer_script("ok")],
            "script_sets": {CALL_HOSTILE: [call_script(&format!("hostile__{TOOL}"), &[]), answer_script("done")]},
        },
    });
    if let AttackKind::Mcp(hostility) = attack.kind {
        let kind = clap::ValueEnum::to_possible_value(&hostility).map(|v| v.get_name().to_string()).unwrap_or_default();
        config["mcp_servers"] = json!({"hostile": {
            "command": launcher, "args": ["hostile-mcp", kind, marker],
        }});
    }
    config
}

/// Where and how long to attack.
#[derive(Debug, Clone)]
pub struct AttackEnv {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// How long.
    pub duration: Duration,
}

/// Sends `attack` for the duration; the answers it got, counted.
pub async fn drive(attack: &Attack, env: &AttackEnv) -> BTreeMap<String, u64> {
    match attack.kind {
        AttackKind::Bodies { workers, body } => {
            requests::flood(env, workers, body().into_iter().map(Into::into).collect()).await
        }
        AttackKind::Slowloris { connections } => connections::slowloris(env, connections).await,
        AttackKind::SlowBodies { connections } => connections::slow_bodies(env, connections).await,
        AttackKind::Idle { connections } => connections::idle(env, connections).await,
        AttackKind::Mcp(_) => {
            let body = json!({"model": CALL_HOSTILE, "strata_mcp": true, "stream": false,
                "messages": [{"role": "user", "content": "call the tool"}]});
            requests::flood(env, 1, vec![body.to_string().into_bytes().into()]).await
        }
    }
}
