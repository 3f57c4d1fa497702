//! SPEC §1 and §5, what a whole server process does: its log at every level (1.12), how it stops on
//! SIGTERM (1.9), and its MCP server processes and their process groups (5.5). Each case starts a
//! server process of its own ([`crate::running`]) with stdio MCP servers run by `mediacheck`
//! itself, each marked with a word the case finds its processes by.

use std::time::Duration;

use serde_json::{Value, json};

use super::case;
use super::common::opt_in;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::running::{alive_with, kill_all_with, mediacheck_exe, until_gone};
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "process.sigterm-stops-cleanly",
            "1.9",
            Must,
            LAUNCHES,
            "SIGTERM during a streamed answer: the stream ends, the server exits 0 and its stdio MCP server process is gone",
            sigterm_stops_cleanly,
            ["sigterm-abrupt"]
        ),
        case!(
            "process.sigint-stops-cleanly",
            "1.9",
            Must,
            LAUNCHES,
            "SIGINT during a streamed answer stops the server as SIGTERM does: the stream ends, the server exits 0 and its stdio MCP server process is gone",
            sigint_stops_cleanly,
            ["sigint-abrupt"]
        ),
        case!(
            "process.mcp-process-groups-reaped",
            "5.5",
            Must,
            LAUNCHES,
            "when a stdio MCP server's leader exits, the worker it left in its process group is killed at once; at shutdown every stdio server is stopped",
            process_groups_reaped,
            ["mcp-groups-escape"]
        ),
        case!(
            "process.shutdown-asks-stdio-servers-then-waits",
            "5.5",
            Must,
            LAUNCHES,
            "at SIGTERM, a stdio server that takes 1 s to stop on SIGTERM gets SIGTERM (it writes a note) and one that ignores SIGTERM is killed about 2 s later; both are gone when the server exits 0, between 2 and 6 s after the signal",
            shutdown_asks_then_waits,
            ["sigterm-forgets-mcp-servers"]
        ),
        case!(
            "process.tool-cap-warns-only-when-tools-are-left-out",
            "5.2",
            Must,
            LAUNCHES,
            "a stdio server listing exactly 1,000 tools has all 1,000 and the log warns of nothing; one listing 1,001 has 1,000 and the log warns that the rest were left out",
            tool_cap_warns,
            ["tool-cap-warns-when-full"]
        ),
        case!(
            "process.log-keeps-no-secrets",
            "1.12",
            Must,
            LAUNCHES,
            "with RUST_LOG=trace, a chat with MCP calls and a picture leaves no prompt, tool argument or result, picture, key or MCP server stderr in the log",
            log_keeps_no_secrets,
            ["logs-requests"]
        ),
    ]
}

/// A word no other process has, for one case's processes.
fn marker(what: &str) -> String {
    format!("mediacheck-{what}-{}-{}", std::process::id(), stamp())
}

/// The time in nanoseconds: a suffix that makes canaries and markers unique.
fn stamp() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// A stdio MCP server entry: `mediacheck fixture-mcp`, found by `marker`.
fn fixture_server(marker: &str) -> Result<Value, crate::case::CheckError> {
    let exe = mediacheck_exe()?;
    Ok(json!({"command": exe, "args": ["fixture-mcp", "--marker", marker]}))
}

async fn sigterm_stops_cleanly(ctx: Ctx) -> CheckResult {
    stops_cleanly_on(ctx, "TERM").await
}

async fn sigint_stops_cleanly(ctx: Ctx) -> CheckResult {
    stops_cleanly_on(ctx, "INT").await
}

/// 1.9: `signal` during a streamed answer ends the stream, the server exits 0, its stdio MCP server goes.
async fn stops_cleanly_on(ctx: Ctx, signal: &str) -> CheckResult {
    let worker = marker(&format!("sig{}-worker", signal.to_lowercase()));
    let config = json!({"mcp_servers": {"worker": fixture_server(&worker)?},
        "engine": {"delay_ms": 5}});
    let mut server = ctx.start_running(&config, &["word ".repeat(3000)], &[]).await?;
    let status = super::common::settled_mcp_status(&server.http, 20).await?;
    expect_eq("the stdio server's status", &json!("ready"), &status["servers"][0]["status"])?;
    expect_eq("processes of the stdio server", 1, alive_with(&worker))?;
    // A streamed answer is running when the signal comes.
    let body = json!({"messages": [{"role": "user", "content": "talk"}], "stream": true});
    let (mut response, seen) =
        super::common::read_until(&server.http, body, |seen| seen.contains("\"content\":\"w")).await?;
    // The signal cuts this answer (1.9c), so how it ends is not held to 4.4's.
    response.body_mut().unmonitored();
    expect(seen.contains("\"content\":\"w"), "the answer streaming", seen.clone())?;
    let rest = tokio::spawn(super::common::read_rest(response));
    let code = server.stop_with(signal, Duration::from_secs(10)).await?;
    expect_eq(&format!("exit code after SIG{signal}"), Some(0), code)?;
    let rest = tokio::time::timeout(Duration::from_secs(5), rest).await;
    expect(rest.is_ok(), "the open stream ends (the connection finishes)", "it was still open 5 s after the exit")?;
    expect_eq("stdio server processes 2 s after the exit", 0, until_gone(&worker, Duration::from_secs(2)).await)
}

async fn process_groups_reaped(ctx: Ctx) -> CheckResult {
    let (worker, left_behind) = (marker("group-worker"), marker("group-left"));
    let verdict = groups_reaped(&ctx, &worker, &left_behind).await;
    // What a server that failed this leaves behind (a sleeper for 10 minutes) goes now.
    kill_all_with(&worker);
    kill_all_with(&left_behind);
    verdict
}

async fn groups_reaped(ctx: &Ctx, worker: &str, left_behind: &str) -> CheckResult {
    let exe = mediacheck_exe()?;
    // `hostile-mcp grandchild` starts a sleeper in its own process group and exits after tools/list.
    let config = json!({"mcp_servers": {
        "worker": fixture_server(worker)?,
        "leaver": {"command": exe, "args": ["hostile-mcp", "grandchild", left_behind]},
    }});
    let mut server = ctx.start_running(&config, &[], &[]).await?;
    super::common::settled_mcp_status(&server.http, 20).await?;
    expect_eq(
        "processes left in the exited leader's group 3 s after tools/list",
        0,
        until_gone(left_behind, Duration::from_secs(3)).await,
    )?;
    expect_eq("processes of the running stdio server", 1, alive_with(worker))?;
    let code = server.stop_with("TERM", Duration::from_secs(10)).await?;
    expect_eq("exit code after SIGTERM", Some(0), code)?;
    expect_eq("stdio server processes 2 s after the exit", 0, until_gone(worker, Duration::from_secs(2)).await)
}

async fn shutdown_asks_then_waits(ctx: Ctx) -> CheckResult {
    let note = std::env::temp_dir().join(marker("slow-to-stop"));
    let note_arg = note.to_string_lossy().into_owned();
    let stubborn = marker("ignores-term");
    let verdict = asks_then_waits(&ctx, &note_arg, &stubborn).await;
    kill_all_with(&note_arg);
    kill_all_with(&stubborn);
    let _ = std::fs::remove_file(&note);
    verdict
}

async fn asks_then_waits(ctx: &Ctx, note: &str, stubborn: &str) -> CheckResult {
    let exe = mediacheck_exe()?;
    let config = json!({"mcp_servers": {
        "polite": {"command": exe, "args": ["hostile-mcp", "slow-to-stop", note]},
        "stubborn": {"command": exe, "args": ["hostile-mcp", "ignores-term", stubborn]},
    }});
    let mut server = ctx.start_running(&config, &[], &[]).await?;
    let status = super::common::settled_mcp_status(&server.http, 20).await?;
    let ready = status["servers"].as_array().into_iter().flatten().filter(|s| s["status"] == "ready").count();
    expect_eq("stdio servers ready", 2, ready)?;
    expect_eq("processes of the two stdio servers", 2, alive_with(note) + alive_with(stubborn))?;
    let asked = std::time::Instant::now();
    let code = server.stop_with("TERM", Duration::from_secs(10)).await?;
    let took = asked.elapsed();
    let left = alive_with(note) + alive_with(stubborn);
    expect_eq("exit code after SIGTERM", Some(0), code)?;
    let noted = std::fs::read_to_string(note).unwrap_or_default();
    expect(
        noted == "term\n",
        "the polite server asked with SIGTERM first (it wrote its note, 1 s after)",
        format!("its note: {noted:?} (SIGKILL leaves none)"),
    )?;
    expect_eq("stdio server processes alive when the server exited (reaped first, 1.9)", 0, left)?;
    expect(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "the exit 2 to 6 s after SIGTERM (the stubborn server's 2 s of grace, then SIGKILL)",
        format!("{:.2} s", took.as_secs_f64()),
    )
}

async fn tool_cap_warns(ctx: Ctx) -> CheckResult {
    let exe = mediacheck_exe()?;
    for (mode, listed) in [("thousand-tools", 1000), ("thousand-and-one-tools", 1001)] {
        let config = json!({"mcp_servers": {"many": {"command": exe, "args": ["hostile-mcp", mode]}}});
        let mut server = ctx.start_running(&config, &[], &[]).await?;
        let status = super::common::settled_mcp_status(&server.http, 30).await?;
        let offered = status["servers"][0]["tools"].as_array().map_or(0, Vec::len);
        expect_eq(&format!("tools offered of a server listing {listed} (GET /mcp)"), 1000, offered)?;
        let code = server.stop_with("TERM", Duration::from_secs(10)).await?;
        expect_eq("exit code after SIGTERM", Some(0), code)?;
        let log = server.stderr();
        let warnings: Vec<&str> = log.lines().filter(|l| l.to_ascii_lowercase().contains("warn")).collect();
        if listed == 1000 {
            expect(
                warnings.is_empty(),
                "no warning in the log: exactly 1,000 tools leave none out",
                format!("{warnings:?}"),
            )?;
        } else {
            expect(
                !warnings.is_empty(),
                "a warning in the log that tools were left out (1,001 listed, 1,000 kept)",
                format!("no line with \"warn\" in {} bytes of log", log.len()),
            )?;
        }
    }
    Ok(())
}

async fn log_keeps_no_secrets(ctx: Ctx) -> CheckResult {
    let exe = mediacheck_exe()?;
    let stamp = stamp();
    let key = format!("log-key-{stamp}");
    let argument = format!("log-argument-{stamp}");
    let prompt = format!("log-prompt-{stamp}");
    let stderr_line = format!("log-stderr-{stamp}");
    let noisy = format!("echo {stderr_line} >&2; exec '{}' fixture-mcp", exe.display());
    let config = json!({
        "api_key": key,
        "mcp": {"image_results": true},
        "mcp_servers": {"fake": {"command": "sh", "args": ["-c", noisy]}},
    });
    let calls: [(&str, &[(&str, &str)]); 2] =
        [("fake__echo", &[("text", argument.as_str())]), ("fake__picture", &[("width", "64"), ("height", "48")])];
    let scripts = [fixtures::scripts::calls_script(&calls), super::common::answer("done")];
    let mut server = ctx.start_running(&config, &scripts, &[("RUST_LOG", "trace")]).await?;
    super::common::settled_mcp_status(&server.http, 20).await?;
    let mut body = opt_in();
    body["messages"] = json!([{"role": "user", "content": prompt}]);
    let stream = super::common::stream(&server.http, body).await?;
    let results = stream.results()?;
    expect(results.len() == 2 && results.iter().all(|r| r.ok), "both calls answered", format!("{results:?}"))?;
    let picture =
        super::common::fetch(&server.http, &results[1].media.first().map(|m| m.url.clone()).unwrap_or_default())
            .await?;
    expect_eq("the picture's status", 200, picture.status)?;
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &picture.body);
    let picture_part: String = encoded.chars().skip(40).take(48).collect();
    let code = server.stop_with("TERM", Duration::from_secs(10)).await?;
    expect_eq("exit code after SIGTERM", Some(0), code)?;
    let log = server.stderr();
    for (what, secret) in [
        ("the key", key.as_str()),
        ("the prompt", prompt.as_str()),
        ("the tool's argument and result", argument.as_str()),
        ("the picture's base64", picture_part.as_str()),
        ("the MCP server's stderr", stderr_line.as_str()),
    ] {
        if log.contains(secret) {
            let line = log.lines().find(|l| l.contains(secret)).unwrap_or_default();
            let shown: String = line.chars().take(300).collect();
            return Err(crate::case::CheckError::Fail {
                expected: format!("a log without {what} at RUST_LOG=trace"),
                actual: format!("{} bytes of log; this line holds {what}: {shown}", log.len()),
            });
        }
    }
    Ok(())
}
