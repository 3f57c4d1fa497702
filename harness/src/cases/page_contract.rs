//! SPEC 13.7 in a real browser, once at 768 px: the page contract's marks (what every other page case
//! finds things by), and the key sent exactly as saved.

use futures::future::BoxFuture;
use serde_json::json;

use super::page_visit::{Visit, at_768, pictures};
use crate::browser::page::{
    KEY_ESCAPE, click_mark, enter_key, idle, js, open_every_tool_with_results, sel, send, shown, type_keys, wait_until,
};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Scenario, own};

/// The turn with two pictures and more (`page_visit::pictures`), on a server of its own for 13.7's marks.
const CONTRACT: Scenario = own("page-contract", pictures);

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.contract-marks",
        "13.7",
        Must,
        CONTRACT,
        "the page marks the key field and its save control, the message box, Send, bubbles, tool blocks (with a valid data-state, name and result) and pictures, and sends the key exactly as saved (Bearer and the key; no header before a key is saved)",
        contract_marks,
        // The last one breaks 4.5 only in what the page is answered: the wire monitor on the proxy.
        [
            "page-unmarked",
            "page-bearer-without-a-key",
            "page-key-saved-by-escape",
            "page-key-untrimmed",
            "browser-streams-without-usage"
        ]
    )]
}

/// The contract's marks (SPEC 13.7), read once at 768 px: what every other page case relies on.
async fn contract_marks(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.contract-marks", contract_marks_at).await
}

fn contract_marks_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        for name in ["api-key", "save-key", "message", "send"] {
            let found = js(visit.client(), &format!("return !!document.querySelector('{}');", sel(name))).await?;
            expect_eq(&format!("an element marked {}", sel(name)), json!(true), found)?;
        }
        expect(!shown(visit.client(), "stop").await?, "Stop not shown while no turn runs", "shown")?;
        visit.turn_with_pictures("Show me two pictures", 2).await?;
        let facts = js(
            visit.client(),
            &format!(
                r#"const tools = [...document.querySelectorAll('{tool}')];
                return {{
                    bubbles: document.querySelectorAll('{bubble}').length,
                    tools: tools.map(t => ({{
                        collapsible: t.tagName === 'DETAILS' || t.hasAttribute('aria-expanded'),
                        state: t.dataset.state || null,
                        named: !!t.querySelector('{name}'),
                    }})),
                    pictures: [...document.querySelectorAll('{picture}')].map(p => [p.querySelectorAll('img').length, p.querySelectorAll('a[download]').length]),
                }};"#,
                tool = sel("tool"),
                bubble = sel("bubble"),
                name = sel("tool-name"),
                picture = sel("picture"),
            ),
        )
        .await?;
        expect(
            facts["bubbles"].as_u64().unwrap_or(0) >= 2,
            "a bubble for the question and one for the answer",
            facts["bubbles"].to_string(),
        )?;
        let tool = json!({"collapsible": true, "state": "done", "named": true});
        expect_eq("the tool blocks", json!([tool, tool, tool]), facts["tools"].clone())?;
        expect_eq("the pictures (img, a[download])", json!([[1, 1], [1, 1]]), facts["pictures"].clone())?;
        open_every_tool_with_results(visit.client()).await?;
        key_changed_only_by_save(visit).await?;
        key_sent_as_saved(&visit.proxy.log())
    })
}

/// 13.7: a key typed and left with Escape is not kept, and one saved with whitespace around it is
/// kept without it — each shown by the next turn's request (the scenario's last script answers it).
async fn key_changed_only_by_save(visit: &Visit<'_>) -> CheckResult {
    let client = visit.client();
    let answered =
        |turns: usize| format!("document.querySelectorAll('{}').length === {} && {}", sel("bubble"), 2 * turns, idle());
    let last_key = || {
        visit
            .proxy
            .log()
            .iter()
            .rev()
            .find(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
            .and_then(|r| r.authorization.clone())
    };
    let bearer = Some(format!("Bearer {HARNESS_KEY}"));
    if !shown(client, "api-key").await? {
        click_mark(client, "open-settings").await?;
        let field = format!("document.querySelector('{}').getClientRects().length > 0", sel("api-key"));
        wait_until(client, &field, 5, "the key field to show").await?;
    }
    type_keys(client, "api-key", &format!("not-the-key{KEY_ESCAPE}")).await?;
    send(client, "Still there?").await?;
    wait_until(client, &answered(2), 30, "a turn after a key typed and left with Escape").await?;
    expect_eq(
        "the key a turn sends after another was typed and left with Escape (never saved)",
        bearer.clone(),
        last_key(),
    )?;
    enter_key(client, &format!("  {HARNESS_KEY}  ")).await?;
    send(client, "Once more").await?;
    wait_until(client, &answered(3), 30, "a turn after the key was saved with spaces around it").await?;
    expect_eq("the key a turn sends after it was saved with spaces around it", bearer, last_key())
}

/// 13.7: every key the page sent is the one saved, as `Bearer <key>` or `x-api-key: <key>` (the page
/// loaded before the key was entered, so a page that sends a header without a key shows it here).
fn key_sent_as_saved(log: &[crate::browser::proxy::Recorded]) -> CheckResult {
    let bearer = format!("Bearer {HARNESS_KEY}");
    for request in log {
        let sent = [
            ("Authorization", &request.authorization, &bearer),
            ("x-api-key", &request.api_key, &HARNESS_KEY.to_string()),
        ];
        for (header, value, wanted) in sent {
            if let Some(value) = value {
                expect(
                    value == wanted,
                    format!("{header} absent or exactly {wanted:?} (the key as saved)"),
                    format!("{header}: {value:?} on {} {}", request.method, request.target),
                )?;
            }
        }
    }
    let keyed = log.iter().filter(|r| r.authorization.is_some() || r.api_key.is_some()).count();
    expect(keyed > 0, "requests carrying the saved key", "none did")
}
