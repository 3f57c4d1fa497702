//! SPEC §1: configuration the server must refuse — one line naming the key and the value, exit code 2.
//! These cases start server processes of their own.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "config.image-results.rejects-a-string",
            "1.5",
            Must,
            LAUNCHES,
            "\"image_results\": \"true\" stops startup with one line, exit 2",
            rejects_string,
            ["config-lenient"]
        ),
        case!(
            "config.image-results.rejects-a-number",
            "1.5",
            Must,
            LAUNCHES,
            "\"image_results\": 1 stops startup with one line, exit 2",
            rejects_number,
            ["config-lenient"]
        ),
        case!(
            "config.image-results.rejects-null",
            "1.5",
            Must,
            LAUNCHES,
            "\"image_results\": null stops startup with one line, exit 2",
            rejects_null,
            ["config-lenient"]
        ),
        case!(
            "config.mcp.rejects-bad-numbers",
            "1.5",
            Must,
            LAUNCHES,
            "timeout_s 0 and max_rounds 1.5 each stop startup",
            rejects_bad_numbers,
            ["config-lenient"]
        ),
        case!(
            "config.api-key.rejects-empty",
            "1.7",
            Must,
            LAUNCHES,
            "an empty api_key stops startup",
            rejects_empty_key,
            ["empty-key-ok"]
        ),
    ]
}

/// Launches with `config` and checks the refusal names `key` and shows `value`.
async fn refused(ctx: &Ctx, config: Value, key: &str, value: &str) -> CheckResult {
    let launch = ctx.launch(&config).await?;
    let lines: Vec<&str> = launch.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    expect_eq(&format!("exit code for {config}"), Some(2), launch.code)?;
    expect(lines.len() == 1, "exactly one line on stderr", format!("{} lines: {:?}", lines.len(), lines))?;
    expect(
        lines[0].contains(key) && lines[0].contains(value),
        format!("a line naming {key} and {value}"),
        lines[0].to_string(),
    )
}

async fn rejects_string(ctx: Ctx) -> CheckResult {
    refused(&ctx, json!({"mcp": {"image_results": "true"}}), "mcp.image_results", "\"true\"").await
}

async fn rejects_number(ctx: Ctx) -> CheckResult {
    refused(&ctx, json!({"mcp": {"image_results": 1}}), "mcp.image_results", "1").await
}

async fn rejects_null(ctx: Ctx) -> CheckResult {
    refused(&ctx, json!({"mcp": {"image_results": null}}), "mcp.image_results", "null").await
}

async fn rejects_bad_numbers(ctx: Ctx) -> CheckResult {
    refused(&ctx, json!({"mcp": {"timeout_s": 0}}), "mcp.timeout_s", "0").await?;
    refused(&ctx, json!({"mcp": {"max_rounds": 1.5}}), "mcp.max_rounds", "1.5").await
}

async fn rejects_empty_key(ctx: Ctx) -> CheckResult {
    let launch = ctx.launch(&json!({"api_key": ""})).await?;
    expect_eq("exit code", Some(2), launch.code)?;
    expect(launch.stderr.contains("empty"), "a line saying the key is empty", launch.stderr)
}
