//! SPEC 13.1: the chat page is served, and its assets, without the key and with `Cache-Control:
//! no-cache` — every asset the page loads, found from its HTML and its scripts' imports; an unknown
//! asset is the JSON 404. (How it looks and behaves at each width is checked in a
//! real browser by the other `page_*` cases.)

use super::case;
use serde_json::json;

use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::KEYED;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.served-without-a-key",
            "13.1",
            Must,
            KEYED,
            "GET / serves the page, and its script and style, without the key",
            served,
            ["no-page", "assets-need-key"]
        ),
        case!(
            "page.assets-uncached-and-unknown-404",
            "13.1",
            Must,
            KEYED,
            "GET / and every asset it loads (its script and style under /web/, and each module a script imports, followed) are served without the key with Cache-Control: no-cache; an unknown /web/ asset (with or without the key) is 404 with 2.8's JSON not_found",
            uncached_and_unknown,
            ["page-cacheable", "modules-cacheable", "unknown-asset-plain-404"]
        ),
    ]
}

async fn served(ctx: Ctx) -> CheckResult {
    let page = ctx.http.get("/").without_key().send().await?;
    expect_eq("GET / status", 200, page.status)?;
    let kind = page.header("content-type").unwrap_or_default();
    expect(kind.starts_with("text/html"), "text/html", kind)?;
    // The assets are the ones the page names (SPEC names no file): a script and a style at least.
    let assets = page_assets(&ctx, &page.text()).await?;
    for (ending, mime) in [(".js", "text/javascript"), (".css", "text/css")] {
        let named: Vec<&String> = assets.iter().filter(|a| a.ends_with(ending)).collect();
        expect(!named.is_empty(), format!("the page loads a {ending} asset under /web/"), assets.join(", "))?;
        for asset in named {
            let reply = ctx.http.get(asset).without_key().send().await?;
            expect_eq(&format!("GET {asset}"), 200, reply.status)?;
            let kind = reply.header("content-type").unwrap_or_default();
            expect(kind.starts_with(mime), format!("GET {asset}: {mime}"), kind)?;
        }
    }
    Ok(())
}

/// The quoted values after `marker` in `text` (`src="…"`, `from "…"`), either quote.
fn quoted_after<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    text.match_indices(marker)
        .filter_map(|(at, _)| {
            let rest = &text[at + marker.len()..];
            let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            rest[1..].split(quote).next()
        })
        .collect()
}

/// The most assets a page is followed through.
const MAX_ASSETS: usize = 64;

/// Every `/web/` asset the page loads: its `src` and `href` under `web/`, and the modules each script
/// imports (`from "./x.js"`, `import("./x.js")`), followed from script to script.
async fn page_assets(ctx: &Ctx, page: &str) -> Result<Vec<String>, crate::case::CheckError> {
    let mut found: Vec<String> = Vec::new();
    let add = |found: &mut Vec<String>, path: String| {
        if found.len() < MAX_ASSETS && !found.contains(&path) {
            found.push(path);
        }
    };
    for value in quoted_after(page, "src=").into_iter().chain(quoted_after(page, "href=")) {
        if let Some(name) = value.strip_prefix("/web/").or_else(|| value.strip_prefix("web/")) {
            add(&mut found, format!("/web/{name}"));
        }
    }
    let mut at = 0;
    while at < found.len() {
        if found[at].ends_with(".js") {
            let script = ctx.http.get(&found[at]).without_key().send().await?.text();
            for module in quoted_after(&script, "from ").into_iter().chain(quoted_after(&script, "import(")) {
                if let Some(name) = module.strip_prefix("./") {
                    add(&mut found, format!("/web/{name}"));
                }
            }
        }
        at += 1;
    }
    Ok(found)
}

async fn uncached_and_unknown(ctx: Ctx) -> CheckResult {
    let page = ctx.http.get("/").without_key().send().await?.text();
    let assets = page_assets(&ctx, &page).await?;
    let kinds = |ending: &str| assets.iter().filter(|a| a.ends_with(ending)).count();
    expect(
        kinds(".js") >= 1 && kinds(".css") >= 1,
        "the page loads a script and a style under /web/",
        assets.join(", "),
    )?;
    for path in std::iter::once("/".to_string()).chain(assets) {
        let reply = ctx.http.get(&path).without_key().send().await?;
        expect_eq(&format!("GET {path} without the key"), 200, reply.status)?;
        let control = reply.header("cache-control").unwrap_or_default().to_ascii_lowercase();
        expect(
            control.split(',').any(|d| d.trim() == "no-cache"),
            format!("GET {path}: Cache-Control: no-cache"),
            control,
        )?;
    }
    for (path, keyed) in [("/web/no-such-asset.js", false), ("/web/no-such-asset.js", true), ("/web/app.js.map", false)]
    {
        let call = ctx.http.get(path);
        let reply = if keyed { call.send().await? } else { call.without_key().send().await? };
        expect_eq(&format!("GET {path} (key: {keyed}) status"), 404, reply.status)?;
        let body = reply.json().ok().map(|v| v["error"]["type"].clone());
        expect_eq(&format!("GET {path} (key: {keyed}) error type"), Some(json!("not_found")), body)?;
    }
    Ok(())
}
