//! Generated MCP tool listings and a model of what SPEC 5.2, 5.6, 5.7 and 5.8 say `GET /mcp` shows
//! of them.
//!
//! A listing is 1 to 8 tools served by a fixture MCP server over pages of 1 to 3 tools or one page,
//! twice: over Streamable HTTP under a server name made of word, punctuation, space and non-ASCII
//! pieces, and over stdio (`mediacheck fixture-mcp --listing FILE`) under that name and `-stdio`. Each
//! tool's name is made of the same pieces — empty, colliding once cleaned (`a.b`, `a b`), past 64
//! characters, or already ending in `_2` — and has a description, a title, both or neither, each of 0
//! to 400 characters, non-ASCII among them.
//!
//! The model, from SPEC alone: each server is `ready`, its `transport` `http` or `stdio` (5.8a); its
//! tools are the listed ones whose name is not
//! empty (5.2f), from every page (5.2b), in order, each shown with `name` its 5.6 name
//! (`<server>__<tool>`, every character outside `[A-Za-z0-9_-]` made `_`, an empty part `x`, cut to 64
//! characters, a taken name its first 60 characters and the first free `_2`, `_3`, …), `tool` its own
//! name, and `description` its description (even an empty one), else its title, else `""` (5.7d), cut to
//! its first 300 characters (5.8f); the top-level `tools` counts both servers' tools.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};

/// One listed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its name.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Its description, if any.
    pub description: Option<String>,
}

/// A generated listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The server's name in the configuration.
    pub server: String,
    /// Tools per `tools/list` page (0: one page).
    pub page_size: usize,
    /// The tools, in order.
    pub tools: Vec<Listed>,
}

/// Pieces of names: words, punctuation 5.6 makes `_`, kept `-` and `_`, non-ASCII and a space.
const NAME_PIECES: &[&str] = &["read", "file", "a", "b", "x", ".", " ", "-", "_", "_2", "é", "日本", "/", "$", "0"];
/// Pieces of descriptions and titles.
const TEXT_PIECES: &[&str] = &["Reads a file. ", "Grüße ", "日本語の説明 ", "😀", "<b>", " ", "\n", "0123456789"];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        6 => prop::collection::vec(prop::sample::select(NAME_PIECES), 1..5).prop_map(|p| p.concat()),
        2 => (prop::sample::select(NAME_PIECES), 62..70usize).prop_map(|(p, n)| p.repeat(n).chars().take(n).collect()),
    ]
}

fn text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(String::new())),
        3 => prop::collection::vec(prop::sample::select(TEXT_PIECES), 1..6).prop_map(|p| Some(p.concat())),
        3 => (prop::sample::select(TEXT_PIECES), 290..400usize)
            .prop_map(|(p, n)| Some(p.repeat(n).chars().take(n).collect())),
    ]
}

/// Every listing of the space the module's doc names.
pub fn listings() -> impl Strategy<Value = Listing> {
    let tool = (name(), text(), text()).prop_map(|(name, title, description)| Listed { name, title, description });
    let server = prop::collection::vec(prop::sample::select(&NAME_PIECES[..10]), 1..4)
        .prop_map(|p| p.concat())
        .prop_filter("a server name that is not blank", |s| !s.trim().is_empty());
    (server, prop_oneof![1 => Just(0usize), 3 => 1..4usize], prop::collection::vec(tool, 1..9))
        .prop_map(|(server, page_size, tools)| Listing { server, page_size, tools })
}

/// The broken variants `gen.tool-listing-model` names, each met in at least 999 runs of 1,000 of its budget (this
/// module's tests hold it).
pub const VARIANTS: &[&str] = &[
    "names-unclean",
    "names-cut-at-63",
    "tools-without-descriptions",
    "descriptions-cut-in-bytes",
    "stdio-listing-first-page",
    "tool-names-unprefixed",
];

/// The name the listing's stdio twin is configured under.
pub fn stdio_name(listing: &Listing) -> String {
    format!("{}-stdio", listing.server)
}

/// A generated listing, for a failure's report.
pub fn describe(listing: &Listing) -> String {
    format!("{listing:?}")
}

/// The listing as MCP tools, each with an empty object schema.
pub fn tools(listing: &Listing) -> Arc<Vec<rmcp::model::Tool>> {
    let schema = Arc::new(serde_json::Map::from_iter([("type".to_string(), json!("object"))]));
    Arc::new(
        listing
            .tools
            .iter()
            .map(|t| {
                let mut tool = rmcp::model::Tool::new(t.name.clone(), "", schema.clone());
                tool.description = t.description.clone().map(Into::into);
                tool.title = t.title.clone();
                tool
            })
            .collect(),
    )
}

/// SPEC 5.6's names for `tools` of the server `server`, as a model is offered them: each part with
/// every character outside `[A-Za-z0-9_-]` made `_` (an empty one `x`), joined by `__`, cut to 64
/// characters; a name taken becomes its first 60 characters and `_2`, `_3`, … (the first not taken).
pub fn offered_names(server: &str, tools: &[String]) -> Vec<String> {
    let clean = |part: &str| -> String {
        if part.is_empty() {
            return "x".into();
        }
        part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
    };
    let mut taken: Vec<String> = Vec::new();
    for tool in tools {
        let whole: String = format!("{}__{}", clean(server), clean(tool)).chars().take(64).collect();
        let name = if taken.contains(&whole) {
            let stem: String = whole.chars().take(60).collect();
            (2..).map(|n| format!("{stem}_{n}")).find(|n| !taken.contains(n)).unwrap_or(whole)
        } else {
            whole
        };
        taken.push(name);
    }
    taken
}

/// What `GET /mcp` must show of the listing's HTTP server: its `tools` entries, in order.
pub fn expected(listing: &Listing) -> Vec<Value> {
    expected_as(listing, &listing.server)
}

/// What `GET /mcp` must show of the listing served under the name `server`.
pub fn expected_as(listing: &Listing, server: &str) -> Vec<Value> {
    let kept: Vec<&Listed> = listing.tools.iter().filter(|t| !t.name.is_empty()).collect();
    let names: Vec<String> = kept.iter().map(|t| t.name.clone()).collect();
    kept.iter()
        .zip(offered_names(server, &names))
        .map(|(tool, offered)| {
            let description = tool.description.clone().or_else(|| tool.title.clone()).unwrap_or_default();
            json!({"name": offered, "tool": tool.name, "description": description.chars().take(300).collect::<String>()})
        })
        .collect()
}

/// Starts a fixture MCP server serving `listing` over HTTP and one over stdio, and a server of the
/// case's own configured with both; waits (10 s at most) until neither is `starting`, and holds
/// `GET /mcp` to the model.
pub async fn check(ctx: crate::context::Ctx, listing: Listing) -> Result<(), String> {
    let options = fixtures::mcp_server::FixtureOptions {
        page_size: listing.page_size,
        listing: Some(tools(&listing)),
        ..Default::default()
    };
    let fixture =
        fixtures::http::serve_http(options, 0, None).await.map_err(|e| format!("the fixture MCP server: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("listing.json");
    let listed = serde_json::to_string(&*tools(&listing)).map_err(|e| e.to_string())?;
    std::fs::write(&file, listed).map_err(|e| format!("{}: {e}", file.display()))?;
    let exe = crate::running::mediacheck_exe().map_err(|e| format!("{e:?}"))?;
    let args = ["fixture-mcp", "--page", &listing.page_size.to_string(), "--listing", &file.display().to_string()]
        .map(str::to_string);
    let config = json!({"mcp_servers": {
        listing.server.clone(): {"url": fixture.url},
        stdio_name(&listing): {"command": exe, "args": args},
    }});
    let server = ctx.start_running(&config, &[], &[]).await.map_err(|e| format!("{e:?}"))?;
    let started = std::time::Instant::now();
    loop {
        let reply = server.http.get("/mcp").send().await.map_err(|e| e.to_string())?;
        let answer: Value = serde_json::from_slice(&reply.body).map_err(|e| format!("GET /mcp is not JSON: {e}"))?;
        let starting = answer["servers"].as_array().into_iter().flatten().any(|s| s["status"] == "starting");
        if !starting || started.elapsed() > std::time::Duration::from_secs(10) {
            return judge(&listing, &answer);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Holds `GET /mcp`'s answer to the model: both servers `ready`, each over its transport, with the
/// expected tools.
pub fn judge(listing: &Listing, answer: &Value) -> Result<(), String> {
    let mut count = 0;
    for (name, transport) in [(listing.server.clone(), "http"), (stdio_name(listing), "stdio")] {
        let server = answer["servers"].as_array().into_iter().flatten().find(|s| s["name"] == name.as_str());
        let Some(server) = server else { return Err(format!("no server {name:?} in GET /mcp: {answer}")) };
        if server["status"] != "ready" || server["transport"] != transport {
            return Err(format!(
                "{name:?}: status {} over {}, the model says ready over {transport}; error {}",
                server["status"], server["transport"], server["error"]
            ));
        }
        let shown: Vec<Value> = server["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| json!({"name": t["name"], "tool": t["tool"], "description": t["description"]}))
            .collect();
        let wanted = expected_as(listing, &name);
        if shown != wanted {
            return Err(format!(
                "{name:?} over {transport}: tools {}, the model says {}",
                Value::from(shown),
                Value::from(wanted)
            ));
        }
        count += wanted.len();
    }
    if answer["tools"] != json!(count) {
        return Err(format!("\"tools\": {}, the model says {count}", answer["tools"]));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
