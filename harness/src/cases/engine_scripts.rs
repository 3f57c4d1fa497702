//! SPEC 4.9: the mock engine's scripts, each on a server of the case's own. Without any script the
//! engine answers its default script; scripts are replayed one per pass, the last repeating across
//! requests, or from the first again for every request with `restart_per_request`; a request whose
//! `model` names an entry of `engine.script_sets` replays that list instead, and one naming no entry
//! the server's scripts. Every answer is read whole and streamed.

use serde_json::{Value, json};

use super::case;
use super::common::{complete, stream};
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::http::Http;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "engine.default-script",
            "4.9",
            Must,
            LAUNCHES,
            "a server given no script answers the default script, whole and streamed: reasoning `Thinking about it.` and content `Hello from the mock engine.`",
            default_script,
            ["default-script-changed"]
        ),
        case!(
            "engine.scripts-replayed",
            "4.9",
            Must,
            LAUNCHES,
            "scripts A, B: three requests are answered A, B, B (the last repeats across requests); with restart_per_request true, A, A, A",
            replayed,
            ["restart-per-request-ignored"]
        ),
        case!(
            "engine.script-sets-by-model",
            "4.9",
            Must,
            LAUNCHES,
            "with engine.script_sets {\"other\": [O]} beside scripts [S] and restart_per_request, a request whose model is \"other\" is answered O, one naming no set or no model S",
            script_sets,
            ["script-sets-ignored"]
        ),
    ]
}

/// What one request is answered, `(reasoning, content)`, read whole (and, when `streamed`, streamed).
async fn answer(http: &Http, model: Option<&str>, streamed: bool) -> Result<(String, String), crate::case::CheckError> {
    let mut body = json!({"messages": [{"role": "user", "content": "go"}]});
    if let Some(model) = model {
        body["model"] = json!(model);
    }
    if streamed {
        let events = stream(http, body).await?;
        let reasoning = events.reasoning();
        return Ok((reasoning, events.content()));
    }
    let whole = complete(http, &body).await?;
    let message = &whole["choices"][0]["message"];
    let text = |key: &str| message[key].as_str().unwrap_or_default().to_string();
    Ok((text("reasoning_content"), text("content")))
}

fn script(word: &str) -> String {
    format!("Reasoning {word}.</think>\n\nAnswer {word}.")
}

fn said(word: &str) -> (String, String) {
    (format!("Reasoning {word}."), format!("Answer {word}."))
}

async fn default_script(ctx: Ctx) -> CheckResult {
    let server = ctx.start_running(&json!({}), &[], &[]).await?;
    let wanted = ("Thinking about it.".to_string(), "Hello from the mock engine.".to_string());
    for streamed in [false, true] {
        let got = answer(&server.http, None, streamed).await?;
        expect_eq(&format!("the default script's reasoning and content (streamed: {streamed})"), &wanted, &got)?;
    }
    Ok(())
}

async fn replayed(ctx: Ctx) -> CheckResult {
    let scripts = [script("A"), script("B")];
    for (restart, wanted) in [(false, ["A", "B", "B"]), (true, ["A", "A", "A"])] {
        let config = json!({"engine": {"restart_per_request": restart}});
        let server = ctx.start_running(&config, &scripts, &[]).await?;
        for (at, word) in wanted.into_iter().enumerate() {
            let got = answer(&server.http, None, at % 2 == 1).await?;
            expect_eq(&format!("request {} with restart_per_request {restart}", at + 1), &said(word), &got)?;
        }
    }
    Ok(())
}

async fn script_sets(ctx: Ctx) -> CheckResult {
    let config: Value = json!({"engine": {"restart_per_request": true, "script_sets": {"other": [script("O")]}}});
    let server = ctx.start_running(&config, &[script("S")], &[]).await?;
    for (model, word) in [(Some("other"), "O"), (None, "S"), (Some("not-a-set"), "S"), (Some("other"), "O")] {
        for streamed in [false, true] {
            let got = answer(&server.http, model, streamed).await?;
            expect_eq(&format!("the answer to model {model:?} (streamed: {streamed})"), &said(word), &got)?;
        }
    }
    Ok(())
}
