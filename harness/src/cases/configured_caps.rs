//! SPEC 1.5's picture and tool caps as a configuration sets them, each on both sides of its
//! configured value (the default-valued cases of 5.2 and 8.4 cannot tell a cap that is read from one
//! that is only checked and then left at its default):
//! - `max_pictures_per_result` 2 and `max_picture_chars` 40,000: results of 1, 2 and 3 pictures cache
//!   1, 2 and 2; pictures of 39,996, 40,000 and 40,004 base64 characters are cached, cached, not.
//! - `max_tool_pages` 3: servers whose `tools/list` takes 2, 3 and 4 pages offer every tool, every
//!   tool, and the first 3 pages' tools.
//! - `max_tools_per_server` L−1, L and L+1 (L the fixture's tools, on one page): L−1, L, L offered.
//!
//! The fixture MCP servers run in this process on loopback (Streamable HTTP); the expected counts
//! come from the fixture's own catalogue and the page sizes the harness chose.

use serde_json::{Value, json};

use super::case;
use super::common::{opt_in, settled_mcp_status, stream};
use crate::case::{Case, CheckError, CheckResult, expect_eq};
use crate::check::broken;
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

/// The configured picture caps.
const PICTURES: usize = 2;
const PICTURE_CHARS: usize = 40_000;
/// The configured page cap.
const PAGES: usize = 3;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "mcp.configured-caps-take-effect",
        "1.5",
        Must,
        LAUNCHES,
        "with max_pictures_per_result 2 and max_picture_chars 40,000, results of 1, 2 and 3 pictures cache 1, 2 and 2, pictures of 39,996, 40,000 and 40,004 base64 characters cache 1, 1 and 0; with max_tool_pages 3, lists of 2, 3 and 4 pages offer all, all and 3 pages' tools; with max_tools_per_server L−1, L and L+1 a list of L tools offers L−1, L and L",
        configured_caps,
        ["caps-unread", "configured-caps-default"]
    )]
}

/// An in-process fixture MCP server listing its tools `page_size` to a page (0: one page).
async fn fixture(page_size: usize) -> Result<fixtures::http::HttpFixture, CheckError> {
    let options = fixtures::mcp_server::FixtureOptions { page_size, ..Default::default() };
    fixtures::http::serve_http(options, 0, None).await.map_err(|e| broken(format!("the fixture MCP server: {e}")))
}

/// The tools each configured server offers once every one has settled.
async fn offered(ctx: &Ctx, config: &Value) -> Result<Vec<(String, usize)>, CheckError> {
    let server = ctx.start_running(config, &[], &[]).await?;
    let status = settled_mcp_status(&server.http, 20).await?;
    let mut counts: Vec<(String, usize)> = status["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["name"].as_str().unwrap_or_default().to_string(), s["tools"].as_array().map_or(0, Vec::len)))
        .collect();
    counts.sort();
    Ok(counts)
}

async fn configured_caps(ctx: Ctx) -> CheckResult {
    picture_caps(&ctx).await?;
    page_cap(&ctx).await?;
    tool_cap(&ctx).await
}

async fn picture_caps(ctx: &Ctx) -> CheckResult {
    let server = fixture(0).await?;
    let config = json!({
        "mcp_servers": {"fake": {"url": server.url}},
        "mcp": {"image_results": true, "max_pictures_per_result": PICTURES, "max_picture_chars": PICTURE_CHARS}
    });
    // 3 bytes are 4 base64 characters: 29,997, 30,000 and 30,001 bytes are 39,996, 40,000 and 40,004.
    let bytes = |chars: usize| (chars / 4 * 3).to_string();
    let (under, at, over) = (bytes(PICTURE_CHARS - 4), bytes(PICTURE_CHARS), (PICTURE_CHARS / 4 * 3 + 1).to_string());
    let calls: [(&str, &[(&str, &str)]); 6] = [
        ("fake__picture", &[("count", "1"), ("seed", "61")]),
        ("fake__picture", &[("count", "2"), ("seed", "62")]),
        ("fake__picture", &[("count", "3"), ("seed", "63")]),
        ("fake__at_cap", &[("bytes", &under)]),
        ("fake__at_cap", &[("bytes", &at)]),
        ("fake__at_cap", &[("bytes", &over)]),
    ];
    let scripts = [fixtures::scripts::calls_script(&calls), super::common::answer("ok")];
    let running = ctx.start_running(&config, &scripts, &[]).await?;
    settled_mcp_status(&running.http, 20).await?;
    let results = stream(&running.http, opt_in()).await?.results()?;
    let cached: Vec<usize> = results.iter().map(|r| r.media.len()).collect();
    expect_eq(
        "pictures cached from results of 1, 2 and 3 pictures (cap 2), then of 39,996, 40,000 and 40,004 base64 characters (cap 40,000)",
        vec![1, 2, 2, 1, 1, 0],
        cached,
    )
}

/// The smallest page size that spreads `tools` over exactly `pages` pages.
fn page_size_for(tools: usize, pages: usize) -> Result<usize, CheckError> {
    (1..=tools)
        .find(|size| tools.div_ceil(*size) == pages)
        .ok_or_else(|| broken(format!("no page size spreads {tools} tools over {pages} pages")))
}

async fn page_cap(ctx: &Ctx) -> CheckResult {
    let tools = fixtures::tools::catalogue().len();
    let sizes = [page_size_for(tools, PAGES - 1)?, page_size_for(tools, PAGES)?, page_size_for(tools, PAGES + 1)?];
    let servers = [fixture(sizes[0]).await?, fixture(sizes[1]).await?, fixture(sizes[2]).await?];
    let config = json!({
        "mcp_servers": {"a_two": {"url": servers[0].url}, "b_three": {"url": servers[1].url}, "c_four": {"url": servers[2].url}},
        "mcp": {"max_tool_pages": PAGES}
    });
    let wanted =
        vec![("a_two".to_string(), tools), ("b_three".to_string(), tools), ("c_four".to_string(), PAGES * sizes[2])];
    expect_eq(
        &format!(
            "tools offered with max_tool_pages {PAGES} from lists of {tools} tools on 2, 3 and 4 pages (of {}, {} and {})",
            sizes[0], sizes[1], sizes[2]
        ),
        wanted,
        offered(ctx, &config).await?,
    )
}

async fn tool_cap(ctx: &Ctx) -> CheckResult {
    let tools = fixtures::tools::catalogue().len();
    let server = fixture(0).await?;
    for cap in [tools - 1, tools, tools + 1] {
        let config = json!({"mcp_servers": {"fake": {"url": server.url}}, "mcp": {"max_tools_per_server": cap}});
        expect_eq(
            &format!("tools offered from a list of {tools} with max_tools_per_server {cap}"),
            vec![("fake".to_string(), cap.min(tools))],
            offered(ctx, &config).await?,
        )?;
    }
    Ok(())
}
