//! SPEC 13.16 in a real browser: the page reads the answer's event stream however it is framed. The
//! recording proxy hands the page the server's events framed again ([`crate::browser::recut`]: CR LF,
//! `id:`/`event:`/`retry:` fields and comments, `data:` without its space on every other line, every
//! character of two to four bytes cut across two network reads), and the page must show the turn as
//! streamed: the reasoning, the text before and after the tool block, the block done with its result,
//! every character intact.

use serde_json::json;

use super::common::call;
use super::page_in_browser::{Visit, at_768_framed};
use crate::browser::page::{js, open_every_tool, sel, send, tools_settled, wait_until};
use crate::browser::proxy::Framing;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{Scenario, own};

/// Texts of two, three and four bytes a character, in each place the page draws text from.
const REASONING: &str = "Überlegung: 思考中 🧠 FRAMED-REASONING";
const BEFORE: &str = "Vorher: café ① 日本語 🎉 FRAMED-BEFORE";
const ECHOED: &str = "Grüße 你好 🌍 FRAMED-ECHO";
const AFTER: &str = "Nachher: ñandú → 終わり 🏁 FRAMED-AFTER";

/// A pass with reasoning, text and an echo call, then a pass with the closing text.
const FRAMED: Scenario = own("page-framed", || {
    super::page_in_browser::page(vec![
        format!("{REASONING}{}", call("echo", &[("text", ECHOED)]).replacen("Let me check.", BEFORE, 1)),
        format!("</think>\n\n{AFTER}"),
    ])
});

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.stream-read-in-any-framing",
        "13.16",
        Must,
        FRAMED,
        "through a proxy that frames the event stream again (CR LF, id:/event:/retry: fields and comments, data: with and without its space, each character of 2-4 bytes cut across two network reads): the reasoning, the text before and after the tool block and the echoed result shown whole, non-ASCII intact",
        stream_read_in_any_framing,
        [
            "page-stream-characters-split",
            "page-stream-every-field-read",
            "page-stream-data-space-required",
            "page-stream-events-split-on-blank-lf"
        ]
    )]
}

async fn stream_read_in_any_framing(ctx: Ctx) -> CheckResult {
    at_768_framed(&ctx, "page.stream-read-in-any-framing", Framing::Reframed, |visit| Box::pin(framed_turn(visit)))
        .await
}

async fn framed_turn(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Echo something").await?;
    let answered = format!(
        "{} && [...document.querySelectorAll('{}')].some(b => b.textContent.includes('FRAMED-AFTER'))",
        tools_settled(1),
        sel("bubble")
    );
    // A page that loses the stream never settles: what it shows is the failure below, not a timeout.
    let settled = wait_until(visit.client(), &answered, 30, "the turn over, its closing text shown").await;
    open_every_tool(visit.client()).await?;
    let facts = js(
        visit.client(),
        &format!(
            "const b = [...document.querySelectorAll('{}')].pop(); \
             return {{ text: b ? b.textContent : '', states: [...document.querySelectorAll('{}')].map(t => t.dataset.state) }};",
            sel("bubble"),
            sel("tool")
        ),
    )
    .await?;
    let text = facts["text"].as_str().unwrap_or_default();
    expect(!text.contains('\u{FFFD}'), "no U+FFFD in the answer (a character cut between reads decoded whole)", text)?;
    for (what, wanted) in [
        ("the reasoning", REASONING),
        ("the text before the call", BEFORE),
        ("the echoed result", ECHOED),
        ("the closing text", AFTER),
    ] {
        expect(text.contains(wanted), format!("{what} shown whole: {wanted:?}"), text)?;
    }
    expect_eq("the tool block's state", json!(["done"]), facts["states"].clone())?;
    settled
}
