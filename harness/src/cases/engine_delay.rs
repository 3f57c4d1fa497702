//! SPEC 1.11's `engine.delay_ms`, the mock engine's pause per token: a scripted answer of 40 tokens at
//! 25 ms a token takes at least 1 s from the request to the end of its stream, and the same answer at
//! 0 ms answers too (a lower bound only: a loaded machine is slower, never faster).

use std::time::{Duration, Instant};

use serde_json::json;

use super::case;
use super::common::{stream, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

/// The answer: `</think>` and two newlines (10 tokens, one a byte) and 30 letters.
const ANSWER: &str = "</think>\n\nabcdefghijklmnopqrstuvwxyzabcd";
/// The pause per token, and the least the whole answer takes at it.
const DELAY_MS: u64 = 25;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "engine.delay-ms-paces-tokens",
        "1.11",
        Must,
        LAUNCHES,
        "with engine.delay_ms 25 a scripted answer of 40 tokens (</think>, two newlines, 30 letters) takes at least 1 s from the request to the end of its stream, and arrives whole",
        delay_paces_tokens,
        ["delay-ignored", "caps-unread"]
    )]
}

async fn delay_paces_tokens(ctx: Ctx) -> CheckResult {
    let tokens = ANSWER.len() as u64 + 1; // and the script's closing <|im_end|> (4.9)
    let config = json!({"engine": {"delay_ms": DELAY_MS}});
    let server = ctx.start_running(&config, &[ANSWER.to_string()], &[]).await?;
    let started = Instant::now();
    let answer = stream(&server.http, user("hi")).await?;
    let took = started.elapsed();
    expect_eq("the answer", "abcdefghijklmnopqrstuvwxyzabcd", answer.content().as_str())?;
    let least = Duration::from_millis(DELAY_MS * (tokens - 1));
    expect(
        took >= least,
        format!("at least {} ms for {tokens} tokens at {DELAY_MS} ms a token", least.as_millis()),
        format!("{} ms", took.as_millis()),
    )
}
