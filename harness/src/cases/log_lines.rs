//! SPEC 1.12's log at its default level (`RUST_LOG` unset): an operator learns from it which MCP
//! servers started and why one did not. A server started beside an in-process fixture MCP server
//! (`fake`) and one whose command does not exist (`missing`) logs a line naming `fake` and how many
//! tools it offers, and one naming `missing` with the error `GET /mcp` shows for it.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect};
use crate::check::broken;
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "log.mcp-servers-at-the-default-level",
        "1.12",
        Must,
        LAUNCHES,
        "with RUST_LOG unset, the log has a line naming an MCP server that started and the number of tools it offers, and one naming a server that did not start with the error GET /mcp shows for it",
        mcp_servers_logged,
        ["quiet-log"]
    )]
}

/// `text` without ANSI colour sequences (`ESC [ … m`).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
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
    let log = plain(&launch.stderr);
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
    fn colours_are_taken_out_and_words_stand_apart() {
        assert_eq!(plain("\u{1b}[2mserver\u{1b}[0m=fake tools\u{1b}[2m=\u{1b}[0m34"), "server=fake tools=34");
        assert!(has_word("server=fake tools=34", "34"));
        assert!(!has_word("server=fake tools=341", "34"));
        assert!(!has_word("server=fakes", "fake"));
    }
}
