//! SPEC 3.3's request counters, compared exactly on a server of the case's own: fresh, every counter
//! is 0 and `busy` false; after two answers `finished` is 2; with two streams open `running` is 2 and
//! `busy` true; once both are closed before their end, `running` is 0, `cancelled` 2, `finished`
//! still 2 and `busy` false.

use serde_json::{Value, json};

use super::case;
use super::common::{complete, read_until, status_until, user};
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "status.request-counters",
        "3.3",
        Must,
        LAUNCHES,
        "/v1/status counts exactly: a fresh server 0 running, 0 finished, 0 cancelled and not busy; after two answers 2 finished; with two streams open 2 running and busy; after both are closed early 0 running, 2 cancelled, 2 finished, not busy",
        request_counters,
        ["finished-uncounted", "running-uncounted", "no-cancel"]
    )]
}

/// `(busy, running, finished, cancelled)` of `status`.
fn counters(status: &Value) -> (Value, Value, Value, Value) {
    let requests = &status["requests"];
    (status["busy"].clone(), requests["running"].clone(), requests["finished"].clone(), requests["cancelled"].clone())
}

async fn request_counters(ctx: Ctx) -> CheckResult {
    // A quick default script and a slow one (4.9's script sets): 3,000 words at 2 ms a token.
    let config = json!({"engine": {"delay_ms": 2, "script_sets": {"slow": ["word ".repeat(3000)]}}});
    let server = ctx.start_running(&config, &["</think>\n\nquick".to_string()], &[]).await?;
    let http = &server.http;
    let status = || async { http.get("/v1/status").send().await?.json() };
    let at = |busy: bool, running: u64, finished: u64, cancelled: u64| {
        (json!(busy), json!(running), json!(finished), json!(cancelled))
    };
    expect_eq(
        "(busy, running, finished, cancelled) of a fresh server",
        at(false, 0, 0, 0),
        counters(&status().await?),
    )?;
    for _ in 0..2 {
        complete(http, &user("hi")).await?;
    }
    expect_eq(
        "(busy, running, finished, cancelled) after two answers",
        at(false, 0, 2, 0),
        counters(&status().await?),
    )?;
    let mut slow = user("talk");
    slow["model"] = json!("slow");
    let started = |seen: &str| seen.contains("\"delta\":{\"content\":\"w");
    let (first, _) = read_until(http, slow.clone(), started).await?;
    let (second, _) = read_until(http, slow, started).await?;
    expect_eq(
        "(busy, running, finished, cancelled) with two streams open",
        at(true, 2, 2, 0),
        counters(&status().await?),
    )?;
    drop((first, second));
    status_until(http, 10, |s| s["requests"]["running"] == 0).await?;
    expect_eq(
        "(busy, running, finished, cancelled) after both were closed",
        at(false, 0, 2, 2),
        counters(&status().await?),
    )
}
