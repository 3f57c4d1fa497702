//! SPEC 13.15 in a real browser: what the bubble says besides the answer — the reasoning a pass
//! streamed, alone in its element and styled apart from the answer's text, and the message of a
//! request the server refused (a message too long for the context, and a wrong key), read from the
//! refusal itself, as the recording proxy kept it.

use serde_json::{Value, json};

use super::page_visit::{Visit, at_768, at_768_framed};
use crate::browser::page::{enter_key, idle, js, sel, send, send_pasted, wait_until};
use crate::browser::proxy::Framing;
use crate::case::{Case, CheckResult, expect};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

/// The first turn's reasoning (streamed a token at a time) and its answer.
const REASONING: &str = "Erst überlegen: 思考 😀 REASONING-CANARY";
const ANSWER: &str = "Die Antwort: ANSWER-CANARY";
/// The context of the scenario's engine: the first turn fits, a message of [`LONG_WORDS`] words does not.
const CONTEXT: u64 = 1024;
const LONG_WORDS: usize = 1500;

/// No MCP servers, so the first prompt is small.
const NOTES: Scenario = own("page-notes", || {
    Setup::plain().with_key().scripts(vec![format!("{REASONING}</think>\n\n{ANSWER}")]).set(
        "engine",
        "max_context",
        json!(CONTEXT),
    )
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.gateway-refusal-said",
            "13.15",
            Must,
            NOTES,
            "a chat request answered by a reverse proxy's 502 HTML page (not the JSON error): the bubble says the request failed and gives the status, 502",
            gateway_refusal,
            ["page-gateway-refusal-unread"]
        ),
        case!(
            "page.reasoning-and-refusals-shown",
            "13.15",
            Must,
            NOTES,
            "a pass's reasoning is shown in its bubble as it streamed (non-ASCII intact), alone in its element, apart from the answer's text and styled apart from it; a message longer than the context, and one sent with a wrong key, are refused and each bubble shows the refusal's own message",
            reasoning_and_refusals,
            [
                "page-reasoning-hidden",
                "page-reasoning-mixed-into-the-answer",
                "page-reasoning-undefined-appended",
                "page-refusal-silent",
                "page-refusal-status-only",
                "page-reasoning-labelled-inline",
                "page-reasoning-styled-as-the-answer",
                "page-key-refusal-without-its-message",
                "page-refusal-not-said-failed"
            ]
        ),
    ]
}

async fn gateway_refusal(ctx: Ctx) -> CheckResult {
    at_768_framed(&ctx, "page.gateway-refusal-said", Framing::GatewayDown, |visit| Box::pin(gateway_refusal_at(visit)))
        .await
}

async fn gateway_refusal_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Hallo").await?;
    let over = format!("{} && document.querySelectorAll('{}').length >= 2", idle(), sel("bubble"));
    wait_until(visit.client(), &over, 30, "the turn over").await?;
    let shown =
        js(visit.client(), &format!("return [...document.querySelectorAll('{}')].pop().textContent;", sel("bubble")))
            .await?;
    let shown = shown.as_str().unwrap_or_default();
    expect(shown.to_lowercase().contains("failed"), "the bubble says the request failed", shown)?;
    expect(shown.contains("502"), "the bubble gives the status of a refusal that is not the JSON error: 502", shown)
}

async fn reasoning_and_refusals(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.reasoning-and-refusals-shown", |visit| Box::pin(reasoning_and_refusals_at(visit))).await
}

/// A JS expression: the last bubble holds `text` and no turn is running.
fn last_bubble_holds(text: &str) -> String {
    format!(
        "(() => {{ const b = [...document.querySelectorAll('{}')].pop(); return !!b && b.textContent.includes({text:?}); }})() && {}",
        sel("bubble"),
        idle()
    )
}

async fn reasoning_and_refusals_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Denk nach").await?;
    wait_until(visit.client(), &last_bubble_holds(ANSWER), 30, "the answer shown and the turn over").await?;
    // For each text: the text of the smallest element holding all of it, in the last bubble.
    let script = format!(
        r#"const bubble = [...document.querySelectorAll('{bubble}')].pop();
        const holder = (wanted) => {{
            let found = null;
            for (const e of bubble.querySelectorAll('*')) if (e.textContent.includes(wanted)) found = e;
            return found && found.textContent;
        }};
        const holderElement = (wanted) => {{
            let found = null;
            for (const e of bubble.querySelectorAll('*')) if (e.textContent.includes(wanted)) found = e;
            return found;
        }};
        const look = (e) => {{
            if (!e) return null;
            const s = getComputedStyle(e);
            return [s.color, s.fontStyle, s.fontSize, s.fontWeight, s.fontFamily, s.backgroundColor, s.borderLeftWidth, s.borderLeftStyle, s.opacity].join(' | ');
        }};
        return {{ reasoning: holder({REASONING:?}), answer: holder({ANSWER:?}), text: bubble.innerText,
                 looks: [look(holderElement({REASONING:?})), look(holderElement({ANSWER:?}))] }};"#,
        bubble = sel("bubble"),
    );
    let facts = js(visit.client(), &script).await?;
    let text = facts["text"].as_str().unwrap_or_default();
    let reasoning = facts["reasoning"].as_str();
    expect(reasoning.is_some(), format!("the reasoning {REASONING:?} shown in the bubble"), text)?;
    // As it streamed, alone in its element (a label is free, in an element of its own).
    let reasoning_text = reasoning.unwrap_or_default();
    expect(
        reasoning_text.trim() == REASONING,
        format!("the reasoning shown as it streamed, alone in its element: {REASONING:?}"),
        reasoning_text,
    )?;
    let apart = |held: Option<&str>, other: &str| held.is_some_and(|h| !h.contains(other));
    expect(
        apart(reasoning, ANSWER) && apart(facts["answer"].as_str(), REASONING),
        "the reasoning and the answer's text in elements apart (no element holds both)",
        format!("reasoning in {:?}; answer in {:?}", facts["reasoning"], facts["answer"]),
    )?;
    let looks = &facts["looks"];
    expect(
        looks[0] != looks[1],
        "the reasoning styled apart from the answer (colour, font, size, background, border or opacity)",
        format!("both drawn as {}", looks[0]),
    )?;
    let long = vec!["Wort"; LONG_WORDS].join(" ");
    let message = refused_turn(visit, 2, send_pasted(visit.client(), &long)).await?;
    expect(
        message.is_ok(),
        format!("the {LONG_WORDS}-word message refused with the JSON error of 2.8 (a context of {CONTEXT} tokens)"),
        message.clone().err().unwrap_or_default(),
    )?;
    refusal_shown(visit, &message.unwrap_or_default()).await?;
    // A wrong key: the 401's own message (2.4), not only a word of the page's own.
    enter_key(visit.client(), "not-the-key").await?;
    let message = refused_turn(visit, 3, send(visit.client(), "Hallo?")).await?;
    expect(
        message.is_ok(),
        "the wrong key refused with the JSON error of 2.4",
        message.clone().err().unwrap_or_default(),
    )?;
    refusal_shown(visit, &message.unwrap_or_default()).await
}

/// Sends (`sending`) the conversation's turn number `turn` and waits for it to end: the `message` of
/// the JSON error its chat request was answered with, or what the answer was (its first 300
/// characters) when it was no JSON error.
async fn refused_turn(
    visit: &Visit<'_>,
    turn: usize,
    sending: impl std::future::Future<Output = CheckResult>,
) -> Result<Result<String, String>, crate::case::CheckError> {
    let before = visit.proxy.log().len();
    sending.await?;
    let over = format!("{} && document.querySelectorAll('{}').length >= {}", idle(), sel("bubble"), 2 * turn);
    wait_until(visit.client(), &over, 30, &format!("turn {turn} over")).await?;
    let answer = visit.proxy.log()[before..]
        .iter()
        .find(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .map(|r| r.answer_text())
        .unwrap_or_default();
    let message = serde_json::from_str::<Value>(&answer)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .filter(|m| !m.is_empty());
    Ok(message.ok_or_else(|| answer.chars().take(300).collect()))
}

/// The last bubble shows the refusal's `message`.
async fn refusal_shown(visit: &Visit<'_>, message: &str) -> CheckResult {
    let shown =
        js(visit.client(), &format!("return [...document.querySelectorAll('{}')].pop().textContent;", sel("bubble")))
            .await?;
    let shown = shown.as_str().unwrap_or_default();
    expect(shown.contains(message), format!("the refusal's message in the bubble: {message:?}"), shown)?;
    expect(shown.to_lowercase().contains("failed"), "the bubble says the request failed", shown)
}
