//! The attacks: what each sends, the server configuration it needs, and the driver that sends it.

use std::collections::BTreeMap;
use std::path::Path;

use fixtures::hostile_mcp::{Hostility, TOOL};
use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};

use super::connections::{self, Behaviour};
pub use super::env::{AttackEnv, KEY};
use super::pictures;
use super::requests;

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
    /// How much the server's peak RSS may grow over its RSS when it was ready, in MiB, where the
    /// attack's clause bounds it (beside the bound every attack has on the peak itself).
    pub growth_bound_mib: Option<u64>,
    /// The one answer every attacking request must get, where the clause says what is served (an
    /// attack that is refused cannot show the bound it measures).
    pub every_answer: Option<&'static str>,
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
    /// Raw connections by the hundred, reopened when the server closes them.
    Connections {
        /// How many at once.
        count: usize,
        /// What each does once open.
        behaviour: Behaviour,
    },
    /// The server is configured with a hostile stdio MCP server and one client keeps calling its tool.
    Mcp(Hostility),
    /// Thousands of distinct pictures planted in the cache folder, each fetched at least once.
    Pictures,
}

/// SPEC 9.8: what serving pictures may keep (64 MiB), and as much again for requests in flight and the
/// allocator.
pub const MANY_PICTURES_GROWTH_MIB: u64 = 128;

/// Every attack, in the order they run.
pub fn all() -> Vec<Attack> {
    use AttackKind::*;
    let attack = |id, clauses, description, kind| Attack {
        id,
        clauses,
        description,
        kind,
        growth_bound_mib: None,
        every_answer: None,
    };
    let mcp = |id, hostility, description| attack(id, "5.1, 5.2, 5.5", description, Mcp(hostility));
    let bodies = |workers, body| Bodies { workers, body };
    let connections = |count, behaviour| Connections { count, behaviour };
    vec![
        attack(
            "json-huge-array",
            "4.10",
            "100 MB bodies: a 50-million-element array in an unknown field (2 at a time)",
            bodies(2, requests::huge_unknown_array),
        ),
        attack(
            "json-many-values",
            "4.10",
            "3 million values in the tools list (2 at a time)",
            bodies(2, requests::many_values),
        ),
        attack("json-deep-nesting", "4.10", "4 million nested arrays (2 at a time)", bodies(2, requests::deep_nesting)),
        attack(
            "max-size-bodies",
            "1.11, 4.10",
            "bodies just under max_body_mib (250 MiB), 3 at a time",
            bodies(3, requests::max_size),
        ),
        attack(
            "pictures-claiming-size",
            "4.13, 12.2",
            "64 tiny PNGs claiming 60000x60000 each, then 65 (2 at a time)",
            bodies(2, requests::pictures_claiming_size),
        ),
        attack(
            "picture-bombs",
            "12.3, 12.4",
            "a 20000x20000 PNG bomb, a GIF frame bomb, an APNG, an animated WebP, in turn (2 at a time)",
            bodies(2, requests::picture_bombs),
        ),
        attack(
            "lifted-bombs",
            "11.2, 11.4",
            "the PNG bomb as base64 in a tool message's text, 9 times (2 at a time)",
            bodies(2, requests::lifted_bombs),
        ),
        attack(
            "slowloris-headers",
            "1.11",
            "800 connections sending their headers a byte a second",
            connections(800, Behaviour::Slowloris),
        ),
        attack(
            "slow-bodies",
            "1.11",
            "200 connections declaring 100 MB bodies and sending 1 KiB a second",
            connections(200, Behaviour::SlowBody),
        ),
        attack(
            "idle-connections",
            "1.11",
            "1500 connections opened and never used (reopened when closed)",
            connections(1500, Behaviour::Idle),
        ),
        mcp("mcp-stderr-flood", Hostility::StderrFlood, "an MCP server writing stderr without newlines, flat out"),
        mcp("mcp-invalid-utf8", Hostility::InvalidUtf8, "an MCP server writing bytes that are not UTF-8 to stderr"),
        mcp("mcp-many-tools", Hostility::ManyTools, "an MCP server listing 100,000 tools"),
        mcp("mcp-endless-paging", Hostility::EndlessPaging, "an MCP server whose tools/list never ends"),
        mcp("mcp-huge-line", Hostility::HugeLine, "an MCP server answering every call with a 20 MiB line"),
        mcp("mcp-grandchild", Hostility::Grandchild, "an MCP server that exits leaving a grandchild behind"),
        Attack {
            growth_bound_mib: Some(MANY_PICTURES_GROWTH_MIB),
            every_answer: Some("200"),
            ..attack(
                "media-many-pictures",
                "9.8",
                "3,000 distinct pictures of 128 to 132 KiB in the cache folder, each fetched at least once (4 at a time)",
                Pictures,
            )
        },
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

/// Sends `attack` for the duration; the answers it got, counted.
pub async fn drive(attack: &Attack, env: &AttackEnv) -> BTreeMap<String, u64> {
    match attack.kind {
        AttackKind::Bodies { workers, body } => {
            requests::flood(env, workers, body().into_iter().map(Into::into).collect()).await
        }
        AttackKind::Connections { count, behaviour } => connections::hold(env, count, behaviour).await,
        AttackKind::Pictures => pictures::fetch_all(env).await,
        AttackKind::Mcp(_) => {
            let body = json!({"model": CALL_HOSTILE, "strata_mcp": true, "stream": false,
                "messages": [{"role": "user", "content": "call the tool"}]});
            requests::flood(env, 1, vec![body.to_string().into_bytes().into()]).await
        }
    }
}
