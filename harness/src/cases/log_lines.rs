//! SPEC 1.12's log at its default level (`RUST_LOG` unset): an operator learns from it which MCP
//! servers started and why one did not. A server started beside an in-process fixture MCP server
//! (`fake`) and one whose command does not exist (`missing`) logs a line naming `fake` and how many
//! tools it offers, and one naming `missing` with the error `GET /mcp` shows for it. The log is plain text on a pipe (no ANSI escapes).

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::check::broken;
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "log.mcp-servers-at-the-default-level",
        "1.12",
        Must,
        LAUNCHES,
        "with RUST_LOG unset and stderr a pipe, the log is plain text (no ANSI escapes) and has a line naming an MCP server that started and the number of tools it offers, and one naming a server that did not start with the error GET /mcp shows for it",
        mcp_servers_logged,
        ["quiet-log", "log-in-colour"]
    )]
}

/// Whether `line` holds `word` with no letter, digit or `_` on either side.
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let apart = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        apart(line[..at].chars().next_back()) && apart(line[at + word.len()..].chars().next())
    })
}

async fn mcp_servers_logged(ctx: Ctx) -> CheckResult {
    let fixture = fixtures::http::serve_http(fixtures::mcp_server::FixtureOptions::default(), 0, None)
        .await
        .map_err(|e| broken(format!("the fixture MCP server: {e}")))?;
    let config = json!({"mcp_servers": {
        "fake": {"url": fixture.url},
        "missing": {"command": "/nonexistent/mediacheck-no-such-command"},
    }});
    let file = crate::target::ConfigFile::Bytes(config.to_string().into_bytes());
    let extras = crate::target::LaunchExtras { unset: vec!["RUST_LOG"], ..Default::default() };
    let probe = |http: crate::http::Http| async move { super::common::settled_mcp_status(&http, 20).await.ok() };
    let (launch, status) = ctx.launch_probing(file, None, &extras, probe).await?;
    let status: Value = status.flatten().ok_or_else(|| crate::case::CheckError::Fail {
        expected: "the server starts and its MCP servers settle".into(),
        actual: format!("exit {:?}: {}", launch.code, launch.stderr.trim()),
    })?;
    let server = |name: &str| status["servers"].as_array().into_iter().flatten().find(|s| s["name"] == name).cloned();
    let tools = server("fake").and_then(|s| s["tools"].as_array().map(Vec::len)).unwrap_or_default();
    let error = server("missing").and_then(|s| s["error"].as_str().map(str::to_string)).unwrap_or_default();
    expect(
        tools > 0 && !error.is_empty(),
        "GET /mcp: fake ready with tools, missing failed with an error",
        status.to_string(),
    )?;
    let escapes = launch.stderr.lines().filter(|line| line.contains('\u{1b}')).count();
    expect_eq("log lines with ANSI escape sequences (stderr is a pipe here)", 0, escapes)?;
    let log = launch.stderr.clone();
    expect(
        log.lines().any(|line| has_word(line, "fake") && has_word(line, &tools.to_string())),
        format!("a log line naming fake and its {tools} tools"),
        log.clone(),
    )?;
    expect(
        log.lines().any(|line| has_word(line, "missing") && line.contains(&error)),
        format!("a log line naming missing and its error {error:?}"),
        log,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_stand_apart() {
        assert!(has_word("server=fake tools=34", "34"));
        assert!(!has_word("server=fake tools=341", "34"));
        assert!(!has_word("server=fakes", "fake"));
    }
}
