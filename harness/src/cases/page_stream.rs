//! SPEC 13.16 in a real browser: the page reads the answer's event stream however it is framed. The
//! recording proxy hands the page the server's events framed again ([`crate::browser::recut`]: CR LF,
//! `id:`/`event:`/`retry:` fields and comments, `data:` without its space on every other line, every
//! character of two to four bytes cut across two network reads), and the page must show the turn as
//! streamed: the reasoning, the text before and after the tool block, the block done with its result,
//! every character intact. And SPEC 13.6's other end of a turn: a stream the proxy breaks while a
//! call runs is said to have failed, and the running call becomes Not run. And a stream the server
//! itself ends with 2.8's error in place of a chunk (a later pass refused, 4.7): the bubble says the
//! error's message and "failed", keeping what streamed before it.

use serde_json::json;

use std::time::Duration;

use super::common::{answer, call};
use super::page_visit::{Visit, at_768, at_768_framed};
use crate::browser::page::{idle, js, no_debris, open_every_tool, sel, send, tools_settled, wait_until};
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
    super::page_visit::page(vec![
        format!("{REASONING}{}", call("echo", &[("text", ECHOED)]).replacen("Let me check.", BEFORE, 1)),
        format!("</think>\n\n{AFTER}"),
    ])
});

/// A first round that finishes (echo), then a second that runs for a minute (slow_picture), whose
/// stream the proxy breaks 1.5 s after the call's `call` event.
const BROKEN: Scenario = own("page-broken-stream", || {
    super::page_visit::page(vec![
        call("echo", &[("text", "vorher")]),
        call("slow_picture", &[("seconds", "60")]),
        answer("never shown"),
    ])
});

/// The text the failing turn streams before its call, and the result's length: the first pass fits
/// [`FAILING_CONTEXT`], the second (the call and its result added) does not (4.7), so the stream ends
/// with 2.8's error in place of its last chunk (4.4). The first prompt (4.8's rendering of the
/// fixture's tools and the message) is 7,624 tokens, the second more than 16,600: thousands to spare
/// on each side.
const BEFORE_FAILING: &str = "Schon gestreamt: ① 日本語 STREAMED-BEFORE-FAILING";
const FAILING_RESULT: &str = "9000";
const FAILING_CONTEXT: u64 = 12_288;

const FAILING: Scenario = own("page-failing-stream", || {
    super::page_visit::page(vec![
        call("big", &[("n", FAILING_RESULT)]).replacen("Let me check.", BEFORE_FAILING, 1),
        answer("never shown"),
    ])
    .set("engine", "max_context", json!(FAILING_CONTEXT))
});

/// What the `call` event of slow_picture holds (6.2's compact JSON).
const SLOW_CALL: &str = r#""tool":"slow_picture""#;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.broken-stream-said-and-calls-not-run",
            "13.6",
            Must,
            BROKEN,
            "a stream lost while a call runs (the proxy breaks the connection 1.5 s after its call event): the turn ends, its bubble says failed (never stopped), the running call becomes Not run, the finished one stays Done",
            broken_stream,
            ["page-broken-stream-silent", "page-broken-stream-keeps-running"]
        ),
        case!(
            "page.failed-stream-said",
            "13.16",
            Must,
            FAILING,
            "a turn whose second pass the server refuses after the stream began (the result leaves no room in the context, 4.7), so its last data: is 2.8's JSON error: the bubble says the error's own message and the word failed, and keeps what streamed before it (the text and the done call)",
            failed_stream,
            ["page-stream-error-unread", "page-stream-error-drops-the-turn"]
        ),
        case!(
            "page.stream-read-in-any-framing",
            "13.16",
            Must,
            FRAMED,
            "through a proxy that frames the event stream again (CR LF, id:/event:/retry: fields and comments, data: with and without its space, each character of 2-4 bytes cut across two network reads) and adds a call and a result for a call never started and an event of an unknown kind: the reasoning, the text before and after the tool block and the echoed result shown whole, non-ASCII intact, one tool block, nothing of the unexpected events",
            stream_read_in_any_framing,
            [
                "page-stream-characters-split",
                "page-stream-every-field-read",
                "page-stream-data-space-required",
                "page-stream-events-split-on-blank-lf",
                "page-stream-unknown-calls-break-the-turn",
                "page-unknown-events-read-as-limit"
            ]
        ),
    ]
}

async fn failed_stream(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.failed-stream-said", |visit| Box::pin(failed_turn(visit))).await
}

async fn failed_turn(visit: &Visit<'_>) -> CheckResult {
    let before = visit.proxy.log().len();
    send(visit.client(), "Make it big").await?;
    let over = format!("{} && document.querySelectorAll('{}').length >= 2", idle(), sel("bubble"));
    wait_until(visit.client(), &over, 30, "the turn over").await?;
    let stream = visit.proxy.log()[before..]
        .iter()
        .find(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .map(|r| r.answer_text())
        .unwrap_or_default();
    let message = stream_error(&stream);
    expect(
        message.is_some(),
        format!(
            "the stream ends with 2.8's JSON error as its last data: before [DONE] (4.4; the second pass leaves no room in a context of {FAILING_CONTEXT} tokens, 4.7)"
        ),
        stream.chars().rev().take(400).collect::<String>().chars().rev().collect::<String>(),
    )?;
    let message = message.unwrap_or_default();
    let facts = js(
        visit.client(),
        &format!(
            "const b = [...document.querySelectorAll('{}')].pop(); \
             return {{ text: b.textContent, states: [...b.querySelectorAll('{}')].map(t => t.dataset.state) }};",
            sel("bubble"),
            sel("tool")
        ),
    )
    .await?;
    let text = facts["text"].as_str().unwrap_or_default();
    expect(text.contains(&message), format!("the error's own message in the bubble: {message:?}"), text)?;
    expect(text.to_lowercase().contains("failed"), "the bubble says the request failed (the word \"failed\")", text)?;
    expect(text.contains(BEFORE_FAILING), format!("what streamed before the error kept: {BEFORE_FAILING:?}"), text)?;
    expect_eq("the finished call's data-state, kept", json!(["done"]), facts["states"].clone())?;
    no_debris(visit.client(), "after the failed stream").await
}

/// The `message` of 2.8's JSON error when it is the stream's last `data:` value before `[DONE]`.
fn stream_error(stream: &str) -> Option<String> {
    let values: Vec<&str> = stream
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("data:"))
        .map(|v| v.strip_prefix(' ').unwrap_or(v))
        .filter(|v| *v != "[DONE]")
        .collect();
    let last: serde_json::Value = serde_json::from_str(values.last()?).ok()?;
    last["error"]["message"].as_str().filter(|m| !m.is_empty()).map(str::to_string)
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
    expect(!text.contains("UNEXPECTED-RESULT"), "nothing shown of a result for a call never started", text)?;
    expect(
        !text.to_lowercase().contains("failed"),
        "the turn not said to have failed (the unexpected events skipped)",
        text,
    )?;
    expect(
        !text.contains("max_rounds"),
        "no note naming max_rounds: the turn did not reach the limit (13.13), and an event of an unknown kind that carries a max_rounds is not the limit's",
        text,
    )?;
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

async fn broken_stream(ctx: Ctx) -> CheckResult {
    let framing = Framing::BreakAfter { marker: SLOW_CALL, after: Duration::from_millis(1500) };
    at_768_framed(&ctx, "page.broken-stream-said-and-calls-not-run", framing, |visit| Box::pin(broken_turn(visit)))
        .await
}

async fn broken_turn(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Take your time").await?;
    let running = format!(
        "(() => {{ const t = document.querySelectorAll('{}'); return t.length === 2 && t[1].dataset.state === 'running'; }})()",
        sel("tool")
    );
    wait_until(visit.client(), &running, 30, "a finished call, then a running one").await?;
    wait_until(visit.client(), &idle(), 15, "the turn over once its stream broke (Stop gone)").await?;
    let facts = js(
        visit.client(),
        &format!(
            "const b = [...document.querySelectorAll('{}')].pop(); \
             return {{ text: b.innerText, states: [...b.querySelectorAll('{}')].map(t => [t.dataset.state, t.innerText]) }};",
            sel("bubble"),
            sel("tool")
        ),
    )
    .await?;
    let text = facts["text"].as_str().unwrap_or_default().to_lowercase();
    expect(text.contains("failed"), "the bubble says the request failed (the word \"failed\")", &text)?;
    expect(!text.contains("stopped"), "a broken stream not said to be stopped (no Stop was pressed)", &text)?;
    let states: Vec<String> =
        facts["states"].as_array().into_iter().flatten().filter_map(|s| s[0].as_str()).map(str::to_string).collect();
    expect_eq(
        "the calls' data-state: the finished one, then the one that was running",
        vec!["done".to_string(), "skipped".to_string()],
        states,
    )?;
    let second = facts["states"][1][1].as_str().unwrap_or_default();
    expect(second.contains("Not run"), "the call that was running shown as Not run", second)?;
    no_debris(visit.client(), "after the broken stream").await
}
