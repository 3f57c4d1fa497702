//! SPEC 13.1: the chat page is served, and its assets, without the key and with `Cache-Control:
//! no-cache`; an unknown asset is the JSON 404. (How it looks and behaves at each width is checked in a
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
            "GET / and its script and style carry Cache-Control: no-cache; an unknown /web/ asset (with or without the key) is 404 with 2.8's JSON not_found",
            uncached_and_unknown,
            ["page-cacheable", "unknown-asset-plain-404"]
        ),
    ]
}

async fn served(ctx: Ctx) -> CheckResult {
    let page = ctx.http.get("/").without_key().send().await?;
    expect_eq("GET / status", 200, page.status)?;
    let kind = page.header("content-type").unwrap_or_default();
    expect(kind.starts_with("text/html"), "text/html", kind)?;
    for (asset, mime) in [("web/app.js", "text/javascript"), ("web/app.css", "text/css")] {
        expect(page.text().contains(asset), format!("the page loads {asset}"), "it does not")?;
        let reply = ctx.http.get(&format!("/{asset}")).without_key().send().await?;
        expect_eq(&format!("GET /{asset}"), 200, reply.status)?;
        let kind = reply.header("content-type").unwrap_or_default();
        expect(kind.starts_with(mime), mime.to_string(), kind)?;
    }
    Ok(())
}

async fn uncached_and_unknown(ctx: Ctx) -> CheckResult {
    for path in ["/", "/web/app.js", "/web/app.css"] {
        let reply = ctx.http.get(path).without_key().send().await?;
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
