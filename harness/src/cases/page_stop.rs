//! SPEC 13.6 in a real browser, at every width: Stop during a running call and during a call still
//! being written — the request aborted, the call Not run, a finished call still Done, the answer said
//! to be stopped.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::common::{answer, call};
use super::page_visit::{ECHOED, Visit, page};
use super::page_walk::every_width_cases;
use crate::browser::page::{idle, js, no_debris, sel, send, shown, stop, wait_until};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::scenario::{Scenario, own};

/// A first round that finishes (echo), then a second that runs for a minute (slow_picture).
const SLOW: Scenario = own("page-stop", || {
    page(vec![call("echo", &[("text", ECHOED)]), call("slow_picture", &[("seconds", "60")]), answer("Done.")])
});
/// A call whose arguments take the mock engine about 30 s to write (6,000 characters at 5 ms each).
const SLOW_WRITING: Scenario = own("page-stop-writing", || {
    page(vec![call("echo", &[("text", &"w".repeat(6000))]), answer("Done.")]).set(
        "engine",
        "delay_ms",
        serde_json::json!(5),
    )
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.stop-marks-calls-not-run",
            "13.6",
            Must,
            SLOW,
            "at every width: Stop during a running call (after a first call that finished) aborts the request (the tool is cancelled), the running call becomes Not run, the finished one stays Done, and the answer says stopped",
            stop_marks_not_run,
            [
                "page-stop-keeps-running",
                "page-stop-marks-finished-calls",
                "page-stop-said-failed",
                "page-running-unnamed",
                "page-nan-time-while-running"
            ]
        ),
        case!(
            "page.stop-marks-writing-calls-not-run",
            "13.6",
            Must,
            SLOW_WRITING,
            "at every width: Stop while a call is still being written makes it Not run (never Writing for good) and the answer says stopped",
            stop_marks_writing_not_run,
            [
                "page-stop-keeps-writing",
                "page-writing-unnamed",
                "page-writing-call-unnamed",
                "page-writing-arguments-shown"
            ]
        ),
    ]
}

/// Clicks Stop and checks what 13.6 says follows: the call Not run, Stop gone, the answer marked stopped.
async fn stop_and_see_not_run(visit: &Visit<'_>) -> CheckResult {
    stop(visit.client()).await?;
    let skipped = format!("{} && document.querySelector('{}[data-state=\"skipped\"]')", idle(), sel("tool"));
    wait_until(visit.client(), &skipped, 10, "the call marked skipped and Stop gone").await?;
    let texts = js(
        visit.client(),
        &format!(
            "const bubbles = [...document.querySelectorAll('{}')]; return [document.querySelector('{}[data-state=\"skipped\"]').textContent, bubbles[bubbles.length - 1].textContent];",
            sel("bubble"),
            sel("tool")
        ),
    )
    .await?;
    let tool = texts[0].as_str().unwrap_or_default();
    expect(tool.contains("Not run"), "the call shown as Not run", tool.to_string())?;
    let answer = texts[1].as_str().unwrap_or_default().to_lowercase();
    expect(answer.contains("stopped"), "the answer marked stopped", &answer)?;
    expect(!answer.contains("failed"), "a stopped answer not said to have failed (Stop is no failure)", &answer)?;
    expect(
        !answer.contains("max_rounds"),
        "no limit note in a stopped answer (the turn did not reach the limit)",
        &answer,
    )?;
    no_debris(visit.client(), "after Stop").await
}

/// The running or writing block (`state`) of `tool` says so in words and names the tool, has no
/// result yet (nor, being written, arguments: opened, no "Arguments"), and nothing on the page reads
/// undefined or NaN.
async fn block_says(visit: &Visit<'_>, state: &str, word: &str, tool: &str) -> CheckResult {
    let block = format!("document.querySelector('{}[data-state=\"{state}\"]')", sel("tool"));
    let read = format!(
        "const t = {block}; return [t.innerText, !!t.querySelector('{}'), (t.querySelector('{}') || {{ textContent: '' }}).textContent];",
        sel("tool-result"),
        sel("tool-name")
    );
    let facts = js(visit.client(), &read).await?;
    let text = facts[0].as_str().unwrap_or_default();
    expect(text.contains(word), format!("the {state} call shown as {word:?}"), text)?;
    let name = facts[2].as_str().unwrap_or_default();
    expect(name.contains(tool), format!("the {state} call's tool-name naming {tool:?}"), name)?;
    expect_eq(&format!("a tool-result in the {state} block (it has none yet)"), json!(false), facts[1].clone())?;
    if state == "writing" {
        let open = format!(
            "const t = {block}; if (t.tagName === 'DETAILS') t.open = true; else t.click(); return t.innerText;"
        );
        let opened = js(visit.client(), &open).await?;
        let opened = opened.as_str().unwrap_or_default();
        expect(!opened.contains("Arguments"), "no arguments shown for a call still being written", opened)?;
    }
    no_debris(visit.client(), &format!("while a call is {state}")).await
}

fn stop_marks_not_run_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        let log = visit.ctx.fixture()?.clone();
        let cancelled = |entries: &[Value]| entries.iter().filter(|e| e["cancelled"] == "slow_picture").count();
        let before = cancelled(&log.entries());
        send(visit.client(), "Take your time").await?;
        let running = format!(
            "(() => {{ const t = document.querySelectorAll('{}'); return t.length === 2 && t[0].dataset.state === 'done' && t[1].dataset.state === 'running'; }})()",
            sel("tool")
        );
        wait_until(visit.client(), &running, 30, "a finished call, then a running one").await?;
        expect(shown(visit.client(), "stop").await?, "Stop shown while the turn runs", "hidden")?;
        block_says(visit, "running", "Running", "slow_picture").await?;
        visit.session.screenshot("running").await;
        stop_and_see_not_run(visit).await?;
        let first = js(
            visit.client(),
            &format!("const t = document.querySelector('{}'); return [t.dataset.state, t.textContent];", sel("tool")),
        )
        .await?;
        let (state, text) = (first[0].as_str().unwrap_or_default(), first[1].as_str().unwrap_or_default());
        expect(
            state == "done" && text.contains("Done") && !text.contains("Not run"),
            "the call that had finished still Done after Stop",
            format!("data-state {state:?}: {text}"),
        )?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while cancelled(&log.entries()) == before && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        expect(
            cancelled(&log.entries()) > before,
            "the request aborted, so the running tool was cancelled",
            "it ran on",
        )
    })
}

fn stop_marks_writing_not_run_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        send(visit.client(), "Echo a long text").await?;
        let writing = format!("document.querySelector('{}[data-state=\"writing\"]')", sel("tool"));
        wait_until(visit.client(), &writing, 30, "a call being written").await?;
        visit.session.screenshot("writing").await;
        block_says(visit, "writing", "Writing", "echo").await?;
        stop_and_see_not_run(visit).await?;
        let writing = js(
            visit.client(),
            &format!("return document.querySelectorAll('{}[data-state=\"writing\"]').length;", sel("tool")),
        )
        .await?;
        expect_eq("calls still shown as being written", json!(0), writing)
    })
}

every_width_cases! {
    stop_marks_not_run = "page.stop-marks-calls-not-run", stop_marks_not_run_at;
    stop_marks_writing_not_run = "page.stop-marks-writing-calls-not-run", stop_marks_writing_not_run_at;
}
