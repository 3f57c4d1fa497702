//! SPEC 13.1: the chat page is served. (How it looks and behaves at each width is checked in a real
//! browser by the other `page_*` cases.)

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::KEYED;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.served-without-a-key",
        "13.1",
        Must,
        KEYED,
        "GET / serves the page, and its script and style, without the key",
        served,
        ["no-page"]
    )]
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
