//! SPEC §5: the MCP hub as seen from outside — `GET /mcp` and the names tools get.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Reach, Scenario, Serving, Setup};

const MCP: Scenario =
    Scenario { name: "mcp-plain-shared", build: || Setup::mcp(None), serving: Serving::Shared(Reach::Configured) };

pub fn cases() -> Vec<Case> {
    vec![
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

async fn offered_as_functions(ctx: Ctx) -> CheckResult {
    use super::common::{complete, opt_in, prompt_tokens, user};
    let offered = offered_tools(&ctx).await?;
    let with_mcp = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
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
