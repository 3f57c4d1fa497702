//! SPEC §5: the MCP hub as seen from outside — `GET /mcp` and the names tools get.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Reach, Scenario, Serving, Setup};

/// A server of the case's own with no MCP server configured (against `--url`, the server's own
/// servers would be listed).
const NO_SERVERS: Scenario = crate::scenario::own("no-mcp-servers", Setup::plain);
const MCP: Scenario =
    Scenario { name: "mcp-plain-shared", build: || Setup::mcp(None), serving: Serving::Shared(Reach::Configured) };

/// The fixture beside three servers that cannot start: a command that does not exist, one that exits
/// at once saying why, and a URL where nothing listens.
const FAILING: Scenario = crate::scenario::own("failing-servers", || {
    let exe = crate::running::mediacheck_exe().map_or_else(|_| "mediacheck".to_string(), |p| p.display().to_string());
    let hostile = |how: &str| json!({"command": exe, "args": ["hostile-mcp", how]});
    let closed = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_or(9, |a| a.port());
    let mut setup = Setup::mcp(None)
        .scripts(vec![super::common::call("echo", &[("text", "still here")]), super::common::answer("done")]);
    setup.config["mcp_servers"] = json!({
        "gone": {"command": "/nonexistent/mediacheck-no-such-mcp-server"},
        "quits": {"command": "sh", "args": ["-c", "echo cannot start: missing configuration >&2; exit 3"]},
        "closed": {"url": format!("http://127.0.0.1:{closed}/mcp")},
        "refuses": hostile("list-error"),
        "leaves": hostile("exits-on-list"),
    });
    setup
});

/// Servers named in both `mcp_servers` and `mcpServers`: the later source's entry wins, and
/// `"disabled": true` there takes the earlier one out.
const TWO_SOURCES: Scenario = crate::scenario::own("two-server-sources", || {
    let mut setup = Setup::mcp(None);
    setup.config["mcp_servers"] = json!({
        "twice": {"command": "/nonexistent/mediacheck-from-mcp_servers"},
        "dropped": {"command": "/nonexistent/mediacheck-dropped"},
    });
    setup.config["mcpServers"] = json!({
        "twice": {"command": "/nonexistent/mediacheck-from-mcpServers"},
        "dropped": {"command": "/nonexistent/mediacheck-dropped", "disabled": true},
        "second": {"command": "/nonexistent/mediacheck-second"},
    });
    setup
});

/// Stdio servers whose `tools/list` tests the reader: three pages, 100,000 tools, pages for ever,
/// a tool with an empty name, -32601, and one that answers only after `notifications/initialized`.
const LISTING: Scenario = crate::scenario::own("tool-listing", || {
    let exe = crate::running::mediacheck_exe().map_or_else(|_| "mediacheck".to_string(), |p| p.display().to_string());
    let hostile = |how: &str| json!({"command": exe, "args": ["hostile-mcp", how]});
    let mut setup = Setup::mcp(None);
    setup.config["mcp_servers"] = json!({
        "paged": {"command": exe, "args": ["fixture-mcp", "--page", "3"]},
        "many": hostile("many-tools"),
        "forever": hostile("small-pages-forever"),
        "nameless": hostile("nameless-tool"),
        "nolist": hostile("no-tools-list"),
        "strict": hostile("needs-initialized"),
    });
    setup
});

/// A stdio server that lists its tool and exits on its own half a second later, asked nothing.
const EXITS_ALONE: Scenario = crate::scenario::own("server-exits-alone", || {
    let exe = crate::running::mediacheck_exe().map_or_else(|_| "mediacheck".to_string(), |p| p.display().to_string());
    let mut setup = Setup::mcp(None);
    setup.config["mcp_servers"] = json!({"brief": {"command": exe, "args": ["hostile-mcp", "exits-after-list"]}});
    setup
});

/// A stdio fixture server that can be stopped (`die`) and kept from starting again (a crash file).
const RESTARTS: Scenario = crate::scenario::own("restarts", || {
    let exe = crate::running::mediacheck_exe().map_or_else(|_| "mediacheck".to_string(), |p| p.display().to_string());
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("mediacheck-restarts-{}-{stamp}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let (crash, log) = (dir.join("crash"), dir.join("log.jsonl"));
    let call = |tool: &str, args: &[(&str, &str)]| fixtures::scripts::call_script(&format!("flaky__{tool}"), args);
    let answer = super::common::answer("done");
    let mut setup = Setup::plain().scripts(vec![
        call("die", &[]),
        answer.clone(),
        call("echo", &[("text", "second")]),
        answer.clone(),
        call("echo", &[("text", "third")]),
        answer.clone(),
        call("echo", &[("text", "fourth")]),
        answer,
    ]);
    setup.config["mcp_servers"] = json!({"flaky": {"command": exe, "args": [
        "fixture-mcp", "--crash-if-exists", crash, "--log", log]}});
    setup
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "mcp.stopped-server-restarts-and-waits-after-a-failure",
            "5.4",
            Must,
            RESTARTS,
            "a stdio server that stopped keeps its tools and starts again on its next call; when that start fails the call says so, the server stays stopped, a call within 10 s fails without trying, and one after 10 s starts it",
            restarts,
            ["retry-at-once", "restart-failure-reworded"]
        ),
        case!(
            "mcp.tools-list-read-within-caps",
            "5.2",
            Must,
            LISTING,
            "every page of tools/list is read (3 per page), at most 100 pages (500 tools of a list that never ends) and 1000 tools (of 100,000); a tool with an empty name is dropped; -32601 is a server without tools; tools/list comes after notifications/initialized",
            tools_list_within_caps,
            ["tool-caps-off", "nameless-tools-offered", "tools-listed-before-initialized"]
        ),
        case!(
            "mcp.servers-from-both-keys",
            "1.6",
            Must,
            TWO_SOURCES,
            "servers come from mcp_servers then mcpServers: a name in both takes the later entry, \"disabled\": true removes it, and each source's own names are kept",
            servers_from_both_keys,
            ["mcpservers-ignored"]
        ),
        case!(
            "mcp.failed-servers-left-out-with-their-error",
            "5.3",
            Must,
            FAILING,
            "servers that cannot start are listed as failed with SPEC 5.3's error (could not start '<cmd>', the server stopped (exit code 3): <last stderr line>, could not reach <url>: <the refused connection>, tools/list failed: … for a JSON-RPC error that is not -32601, the stopped message for a server that exits while listing), offer no tools, and a chat still calls the fixture's tools",
            failed_servers,
            ["failed-servers-hidden", "list-errors-mean-no-tools", "unreachable-cause-dropped"]
        ),
        case!(
            "mcp.server-that-exits-alone-shows-stopped",
            "5.8",
            Must,
            EXITS_ALONE,
            "a ready stdio server whose process exits on its own, with no call asked of it, is `stopped` in GET /mcp within 5 s, its tool still offered (5.4)",
            exits_alone_shows_stopped,
            ["exited-servers-shown-ready", "stopped-servers-toolless"]
        ),
        case!(
            "mcp.status-starting-while-a-server-starts",
            "5.8",
            Must,
            crate::scenario::LAUNCHES,
            "a stdio server that takes 2 s to start is `starting` in GET /mcp right after the ready line, then `ready`",
            status_starting,
            ["status-idle-while-starting"]
        ),
        case!(
            "mcp.tools-offered-as-functions",
            "5.7",
            Must,
            MCP,
            "the prompt with MCP on is token for token the prompt of a request offering each fixture tool as {type: function, function: {name, description, parameters}}; a request's own tool of an MCP tool's name replaces it",
            offered_as_functions,
            ["tools-without-descriptions", "own-and-mcp-both-offered"]
        ),
        case!(
            "mcp.status.shape",
            "5.8",
            Must,
            MCP,
            "GET /mcp lists the server, its tools and the settings",
            status_shape,
            ["mcp-status-shape"]
        ),
        case!(
            "mcp.status-without-servers",
            "5.8",
            Must,
            NO_SERVERS,
            "on a server without MCP servers, GET /mcp is exactly {\"servers\":[],\"tools\":0}",
            status_without_servers,
            ["empty-status-with-settings"]
        ),
        case!(
            "mcp.tool-names.cleaned",
            "5.6",
            Must,
            MCP,
            "every character of a tool's name outside [A-Za-z0-9_-] is offered as _ (- and _ kept); names that clean to one are numbered _2, _3 in order, skipping a number a tool's own name already has",
            names_cleaned,
            ["names-unclean", "numbers-collide", "tool-names-unprefixed"]
        ),
        case!(
            "mcp.tool-names.at-63-64-65",
            "5.6",
            Must,
            MCP,
            "names of 63 and 64 characters are offered whole, one of 65 is cut to 64, and one that cuts to a name already taken becomes its first 60 characters and _2",
            names_at_the_cut,
            ["names-unclean", "names-cut-at-63"]
        ),
        case!(
            "mcp.tool-names.cut-to-64",
            "5.6",
            Must,
            MCP,
            "a very long tool name is offered as <server>__<tool> cut to 64 characters",
            names_cut,
            ["names-unclean"]
        ),
    ]
}

async fn mcp_status(ctx: &Ctx) -> Result<Value, crate::case::CheckError> {
    super::common::settled_mcp_status(&ctx.http, 20).await
}

async fn status_without_servers(ctx: Ctx) -> CheckResult {
    let status: Value = ctx.http.get("/mcp").send().await?.json()?;
    expect_eq("GET /mcp without MCP servers", &json!({"servers": [], "tools": 0}), &status)
}

async fn status_shape(ctx: Ctx) -> CheckResult {
    let status = mcp_status(&ctx).await?;
    let server = &status["servers"][0];
    expect_eq("status", &Value::from("ready"), &server["status"])?;
    expect_eq("transport", &Value::from("http"), &server["transport"])?;
    for key in ["name", "error", "info", "tools"] {
        expect(server.get(key).is_some(), format!("servers[0].{key}"), server.to_string())?;
    }
    let tools = server["tools"].as_array().cloned().unwrap_or_default();
    expect(
        tools.iter().any(|t| t["name"] == "fake__echo" && t["tool"] == "echo"),
        "fake__echo for the tool echo",
        format!("{tools:?}"),
    )?;
    expect_eq("tools count", Some(tools.len() as u64), status["tools"].as_u64())?;
    let settings = &status["settings"];
    for key in ["timeout_s", "max_result_chars", "max_rounds"] {
        expect(settings.get(key).is_some(), format!("settings.{key}"), settings.to_string())?;
    }
    Ok(())
}

async fn names_cleaned(ctx: Ctx) -> CheckResult {
    let status = mcp_status(&ctx).await?;
    let tools = status["servers"][0]["tools"].as_array().cloned().unwrap_or_default();
    let offered = |tool: &str| tools.iter().find(|t| t["tool"] == tool).and_then(|t| t["name"].as_str());
    // The fixture's tools/list order decides the numbers: a numbered name is the first one free, and a
    // tool's own name (`pair_x_2`, listed first) is taken like any other.
    for (tool, wanted) in [
        ("dash-and-dot.v2", "fake__dash-and-dot_v2"),
        ("naïve tool", "fake__na_ve_tool"),
        ("big", "fake__big"),
        ("dup_name", "fake__dup_name"),
        ("dup.name", "fake__dup_name_2"),
        ("dup name", "fake__dup_name_3"),
        ("pair_x_2", "fake__pair_x_2"),
        ("pair_x", "fake__pair_x"),
        ("pair.x", "fake__pair_x_3"),
    ] {
        expect_eq(&format!("the name offered for the tool {tool:?}"), Some(wanted), offered(tool))?;
    }
    Ok(())
}

async fn names_cut(ctx: Ctx) -> CheckResult {
    let status = mcp_status(&ctx).await?;
    let long = format!("fake__{}", fixtures::tools::LONG_NAME);
    let wanted: String = long.chars().take(64).collect();
    let names: Vec<String> = status["servers"][0]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    expect(names.contains(&wanted), format!("a tool named {wanted}"), format!("{names:?}"))?;
    expect(names.iter().all(|n| n.len() <= 64), "every name at most 64 characters", format!("{names:?}"))
}

/// The tools the fixture server offers, as SPEC 5.7 says a client's own tools look: the names from
/// `GET /mcp` (5.6 is checked on its own), each tool's description and input schema from the
/// fixture's own catalogue.
pub(super) async fn offered_tools(ctx: &Ctx) -> Result<Vec<Value>, crate::case::CheckError> {
    let status = mcp_status(ctx).await?;
    let catalogue = fixtures::tools::catalogue();
    let mut offered = Vec::new();
    for listed in status["servers"][0]["tools"].as_array().into_iter().flatten() {
        let (Some(name), Some(tool)) = (listed["name"].as_str(), listed["tool"].as_str()) else { continue };
        let Some(own) = catalogue.iter().find(|t| t.name == tool) else {
            return Err(crate::case::broken(format!("GET /mcp lists a tool the fixture does not have: {tool}")));
        };
        let description = own.description.as_deref().unwrap_or_default();
        let parameters = Value::Object((*own.input_schema).clone());
        offered.push(json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}));
    }
    expect(!offered.is_empty(), "GET /mcp lists the fixture's tools", status.to_string())?;
    Ok(offered)
}

async fn status_starting(ctx: Ctx) -> CheckResult {
    let exe = crate::running::mediacheck_exe()?;
    let slow = format!("sleep 2; exec '{}' fixture-mcp", exe.display());
    let config = json!({"mcp_servers": {"slow": {"command": "sh", "args": ["-c", slow]}}});
    let server = ctx.start_running(&config, &[], &[]).await?;
    let early: Value = server.http.get("/mcp").send().await?.json()?;
    expect_eq(
        "the slow server's status right after the ready line",
        &json!("starting"),
        &early["servers"][0]["status"],
    )?;
    let settled = super::common::settled_mcp_status(&server.http, 20).await?;
    expect_eq("its status once started", &json!("ready"), &settled["servers"][0]["status"])
}

async fn offered_as_functions(ctx: Ctx) -> CheckResult {
    use super::common::{complete, opt_in, prompt_tokens, user};
    let offered = offered_tools(&ctx).await?;
    let with_mcp = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    // The tools reach the prompt at all: every name and description is in it (one token a byte, 4.8).
    let without = prompt_tokens(&complete(&ctx.http, &json!({"messages": opt_in()["messages"]})).await?)?;
    let named: usize = offered
        .iter()
        .map(|t| {
            t["function"]["name"].as_str().map_or(0, str::len)
                + t["function"]["description"].as_str().map_or(0, str::len)
        })
        .sum();
    expect(
        with_mcp - without >= named as i64,
        format!("MCP on adds at least the {named} bytes of the tools' names and descriptions to the prompt"),
        format!("{} tokens", with_mcp - without),
    )?;
    let mut by_hand = user("hi");
    by_hand["tools"] = json!(offered);
    let by_hand = prompt_tokens(&complete(&ctx.http, &by_hand).await?)?;
    expect_eq("prompt tokens with MCP on vs. the same tools sent by hand", by_hand, with_mcp)?;
    // A request's own tool named like an MCP tool: it is offered, the MCP one is not.
    let own = json!({"type": "function", "function": {"name": "fake__echo", "description": "The client's own.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}});
    let mut mcp_and_own = opt_in();
    mcp_and_own["tools"] = json!([own]);
    let mcp_and_own = prompt_tokens(&complete(&ctx.http, &mcp_and_own).await?)?;
    let mut all = vec![own];
    all.extend(offered.into_iter().filter(|t| t["function"]["name"] != "fake__echo"));
    let mut by_hand = user("hi");
    by_hand["tools"] = json!(all);
    let by_hand = prompt_tokens(&complete(&ctx.http, &by_hand).await?)?;
    expect_eq("prompt tokens with an own fake__echo and MCP on vs. own + the others by hand", by_hand, mcp_and_own)
}

async fn exits_alone_shows_stopped(ctx: Ctx) -> CheckResult {
    let status = super::common::settled_mcp_status(&ctx.http, 20).await?;
    let brief = |status: &Value| {
        status["servers"].as_array().and_then(|s| s.iter().find(|s| s["name"] == "brief")).cloned().unwrap_or_default()
    };
    // The server exits 0.5 s after its tools/list; what GET /mcp shows is read until 5 s have passed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut last = status;
    while brief(&last)["status"] != "stopped" && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        last = ctx.http.get("/mcp").send().await?.json()?;
    }
    expect_eq("brief's status after its process exited", &json!("stopped"), &brief(&last)["status"])?;
    let tools: Vec<Value> = brief(&last)["tools"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    expect_eq("brief's tools, still offered while it is stopped", vec!["brief__call"], names)
}

async fn failed_servers(ctx: Ctx) -> CheckResult {
    let status = super::common::settled_mcp_status(&ctx.http, 20).await?;
    let servers = status["servers"].as_array().cloned().unwrap_or_default();
    let server = |name: &str| servers.iter().find(|s| s["name"] == name).cloned().unwrap_or_default();
    let closed = ctx.config()?["mcp_servers"]["closed"]["url"].as_str().unwrap_or_default().to_string();
    for (name, starts) in [
        ("gone", "could not start '/nonexistent/mediacheck-no-such-mcp-server': ".to_string()),
        ("quits", "the server stopped (exit code 3): cannot start: missing configuration".to_string()),
        ("closed", format!("could not reach {closed}: ")),
        ("refuses", "tools/list failed: ".to_string()),
        ("leaves", "the server stopped (exit code 4): lost the tool database".to_string()),
    ] {
        let entry = server(name);
        expect_eq(&format!("{name}'s status"), &json!("failed"), &entry["status"])?;
        let error = entry["error"].as_str().unwrap_or_default();
        expect(error.starts_with(&starts), format!("{name}'s error starting {starts:?}"), entry.to_string())?;
        expect_eq(&format!("{name}'s tools"), &json!([]), &entry["tools"])?;
    }
    // 5.1: an address that cannot be reached is reported with the innermost cause, on one line — here
    // the refused connection, which the system names (Linux: `Connection refused (os error 111)`).
    let cause = server("closed")["error"]
        .as_str()
        .unwrap_or_default()
        .strip_prefix(&format!("could not reach {closed}: "))
        .unwrap_or_default()
        .to_string();
    expect(
        cause.to_ascii_lowercase().contains("refused") && !cause.contains('\n'),
        "closed's error naming the innermost cause, the refused connection, on one line",
        format!("{cause:?}"),
    )?;
    expect_eq("the fixture's status", &json!("ready"), &server("fake")["status"])?;
    let stream = super::common::stream(&ctx.http, super::common::opt_in()).await?;
    let result = super::common::first_result(&stream)?;
    expect_eq("the fixture's echo, beside the failed servers", (true, "still here"), (result.ok, result.text.as_str()))
}

async fn servers_from_both_keys(ctx: Ctx) -> CheckResult {
    let status = super::common::settled_mcp_status(&ctx.http, 20).await?;
    let servers = status["servers"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    names.sort_unstable();
    expect_eq("the servers listed", vec!["fake", "second", "twice"], names)?;
    let twice = servers.iter().find(|s| s["name"] == "twice").cloned().unwrap_or_default();
    let error = twice["error"].as_str().unwrap_or_default();
    expect(
        error.contains("/nonexistent/mediacheck-from-mcpServers"),
        "twice started from its mcpServers entry (the later source)",
        twice.to_string(),
    )
}

async fn tools_list_within_caps(ctx: Ctx) -> CheckResult {
    // Capped, every list is read in well under a second here; 10 s is room for a slow machine.
    let status = super::common::settled_mcp_status(&ctx.http, 10).await?;
    let servers = status["servers"].as_array().cloned().unwrap_or_default();
    let catalogue = fixtures::tools::catalogue().len();
    for (name, tools) in
        [("paged", catalogue), ("many", 1000), ("forever", 500), ("nameless", 1), ("nolist", 0), ("strict", 1)]
    {
        let server = servers.iter().find(|s| s["name"] == name).cloned().unwrap_or_default();
        expect_eq(&format!("{name}'s status"), &json!("ready"), &server["status"])?;
        let listed = server["tools"].as_array().map_or(0, Vec::len);
        expect_eq(&format!("tools {name} offers"), tools, listed)?;
    }
    let nameless = servers.iter().find(|s| s["name"] == "nameless").map(|s| s["tools"][0]["name"].clone());
    expect_eq("the named tool of nameless", Some(json!("nameless__call")), nameless)
}

async fn restarts(ctx: Ctx) -> CheckResult {
    let args = ctx.config()?["mcp_servers"]["flaky"]["args"].clone();
    let path_after = |flag: &str| -> std::path::PathBuf {
        let at = args.as_array().and_then(|a| a.iter().position(|v| v == flag)).map_or(0, |i| i + 1);
        std::path::PathBuf::from(args[at].as_str().unwrap_or_default())
    };
    let (crash, log) = (path_after("--crash-if-exists"), path_after("--log"));
    let verdict = restarts_with(&ctx, &crash, &log).await;
    if let Some(dir) = crash.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
    verdict
}

/// How many log lines of `kind` (`started`, `crashed`) the flaky server wrote.
fn logged(log: &std::path::Path, kind: &str) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter(|l| l.contains(&format!("\"{kind}\""))).count()
}

/// `GET /mcp` showing the one server stopped with its tools still offered; the status.
async fn stopped_with_tools(ctx: &Ctx, when: &str) -> Result<Value, crate::case::CheckError> {
    let status = ctx.http.get("/mcp").send().await?.json()?;
    let server = status["servers"][0].clone();
    expect_eq(&format!("the server's status {when}"), &json!("stopped"), &server["status"])?;
    let offered = server["tools"].as_array().is_some_and(|t| !t.is_empty());
    expect(offered, format!("its tools still offered {when}"), status.to_string())?;
    Ok(status)
}

async fn restarts_with(ctx: &Ctx, crash: &std::path::Path, log: &std::path::Path) -> CheckResult {
    use super::common::{first_result, opt_in, settled_mcp_status, stream};
    let flaky = |status: &Value| status["servers"].as_array().and_then(|s| s.first()).cloned().unwrap_or_default();
    settled_mcp_status(&ctx.http, 20).await?;
    // 1. The server stops itself.
    let died = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect(!died.ok, "the die call's result is an error", died.text.clone())?;
    stopped_with_tools(ctx, "after it stopped").await?;
    // 2. Its next call starts it again, and that start fails.
    std::fs::write(crash, b"").map_err(|e| crate::case::broken(e.to_string()))?;
    let second = first_result(&stream(&ctx.http, opt_in()).await?)?;
    let failed_at = std::time::Instant::now();
    expect(
        !second.ok && second.text.starts_with("error: the server could not be started again: "),
        "the call's result: error: the server could not be started again: …",
        second.text.clone(),
    )?;
    expect_eq("starts tried (crashed) after the second call", 1, logged(log, "crashed"))?;
    let status = stopped_with_tools(ctx, "after the failed start").await?;
    expect(flaky(&status)["error"].as_str().is_some_and(|e| !e.is_empty()), "its error shown", status.to_string())?;
    // 3. A call within 10 s does not try.
    let third = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect(
        !third.ok && third.text.starts_with("error: the server is not running ("),
        "the call's result within 10 s: error: the server is not running (…)",
        third.text.clone(),
    )?;
    expect_eq("starts tried after the third call", 1, logged(log, "crashed"))?;
    // 4. After 10 s a call starts it.
    std::fs::remove_file(crash).map_err(|e| crate::case::broken(e.to_string()))?;
    let wait = std::time::Duration::from_millis(10_300).saturating_sub(failed_at.elapsed());
    tokio::time::sleep(wait).await;
    let fourth = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect_eq("the call after 10 s", (true, "fourth"), (fourth.ok, fourth.text.as_str()))?;
    expect_eq("starts that succeeded (the first and the last)", 2, logged(log, "started"))
}

async fn names_at_the_cut(ctx: Ctx) -> CheckResult {
    use fixtures::tools::{NAME_57, NAME_58, NAME_59, NAME_60};
    let status = mcp_status(&ctx).await?;
    let offered = |tool: &str| -> Option<String> {
        let tools = status["servers"].as_array()?.iter().find(|s| s["name"] == "fake")?["tools"].as_array()?.clone();
        tools.iter().find(|t| t["tool"] == tool).and_then(|t| t["name"].as_str().map(str::to_string))
    };
    let cut = |name: String| -> String { name.chars().take(64).collect() };
    let wanted = [
        (NAME_57, format!("fake__{NAME_57}")),
        (NAME_58, format!("fake__{NAME_58}")),
        (NAME_59, cut(format!("fake__{NAME_59}"))),
        (NAME_60, format!("{}_2", cut(format!("fake__{NAME_60}")).chars().take(60).collect::<String>())),
    ];
    for (tool, name) in wanted {
        expect_eq(&format!("the name offered for the {}-character tool", tool.len()), Some(name), offered(tool))?;
    }
    Ok(())
}
