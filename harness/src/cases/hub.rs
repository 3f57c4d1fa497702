//! SPEC §5: the MCP hub as seen from outside — `GET /mcp` and the names tools get.

use serde_json::Value;

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Reach, Scenario, Serving, Setup};

const MCP: Scenario =
    Scenario { name: "mcp-plain-shared", build: || Setup::mcp(None), serving: Serving::Shared(Reach::Configured) };

pub fn cases() -> Vec<Case> {
    vec![
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
            "mcp.tool-names.cleaned",
            "5.6",
            Must,
            MCP,
            "every character of a tool's name outside [A-Za-z0-9_-] is offered as _ (- and _ kept); names that clean to one are numbered _2, _3 in order",
            names_cleaned,
            ["names-unclean"]
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
    for _ in 0..200 {
        let status = ctx.http.get("/mcp").send().await?.json()?;
        if status["servers"][0]["status"] != "starting" && status["servers"][0]["status"] != "idle" {
            return Ok(status);
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    ctx.http.get("/mcp").send().await?.json()
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
    let names: Vec<String> = status["servers"][0]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    for wanted in [
        "fake__dash-and-dot_v2",
        "fake__na_ve_tool",
        "fake__big",
        "fake__dup_name",
        "fake__dup_name_2",
        "fake__dup_name_3",
    ] {
        expect(names.iter().any(|n| n == wanted), format!("a tool offered as {wanted}"), format!("{names:?}"))?;
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
