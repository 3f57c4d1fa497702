//! SPEC 1.5, 1.10, 1.11: every typed key of the run configuration, one table — each refuses a value of
//! the wrong kind or out of its bound on its own (one line naming it, exit code 2), and all of them set
//! to values they take start the server without a warning (a key the server does not read would be
//! "unknown"). The vision bounds on both sides of `max_pixels ≥ min_pixels` and `max_pixels ≥ 28 × 28`.
//! `gen.config-model` draws from the same keys at random; this table names each one every run.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "config.every-typed-key-refuses-a-bad-value",
            "1.5",
            Must,
            LAUNCHES,
            "each typed key of 1.5, 1.10 and 1.11 (the mcp seconds and counts, image_results, max_body_mib, the connection bounds, engine.delay_ms, max_context and restart_per_request, vision.backend, device, min_pixels and max_pixels) alone with a value it refuses stops startup with one line `config <key>=<value>: …`, exit 2; max_pixels below min_pixels (785/784) or below 784 (1/783) is refused naming vision.max_pixels, 784/784 and 1/784 start",
            every_key_refuses,
            ["config-lenient", "vision-bounds-ignored", "caps-unread"]
        ),
        case!(
            "config.every-typed-key-read",
            "1.4",
            Must,
            LAUNCHES,
            "every typed key of 1.5, 1.10 and 1.11 set at once to a value it takes starts the server with no warning: none of them is an unknown key",
            every_key_read,
            ["caps-unread"]
        ),
    ]
}

/// Each key alone with a value it refuses, and the value as the refusal line shows it.
fn refused_rows() -> Vec<(&'static str, Value)> {
    vec![
        ("mcp.timeout_s", json!(0)),
        ("mcp.start_timeout_s", json!(-1)),
        ("mcp.retry_failed_s", json!(true)),
        ("mcp.max_result_chars", json!(0)),
        ("mcp.max_rounds", json!(1.5)),
        ("mcp.max_pictures_per_result", json!(0)),
        ("mcp.max_picture_chars", json!(-1)),
        ("mcp.max_tool_pages", json!(0)),
        ("mcp.max_tools_per_server", json!(1.5)),
        ("mcp.image_results", json!("false")),
        ("max_body_mib", json!(0)),
        ("max_connections", json!(0.5)),
        ("header_timeout_s", json!(0)),
        ("body_timeout_s", json!("60")),
        ("engine.delay_ms", json!(-1)),
        ("engine.max_context", json!(0)),
        ("engine.restart_per_request", json!(1)),
        ("vision.backend", json!("gpu")),
        ("vision.device", json!("tpu")),
        ("vision.min_pixels", json!(0)),
        ("vision.max_pixels", json!(2.5)),
    ]
}

/// Every typed key at a value it takes (not always its default, so a key read into the wrong setting
/// has something to change), as one configuration.
fn all_taken() -> Value {
    json!({
        "mcp": {
            "timeout_s": 30, "start_timeout_s": 2.5, "retry_failed_s": 5, "max_result_chars": 20000,
            "max_rounds": 4, "max_pictures_per_result": 4, "max_picture_chars": 24000000,
            "max_tool_pages": 100, "max_tools_per_server": 1000.0, "image_results": true
        },
        "max_body_mib": 16, "max_connections": 64, "header_timeout_s": 10, "body_timeout_s": 60,
        "engine": {"delay_ms": 0, "max_context": 262144, "restart_per_request": false},
        "vision": {"backend": "geometry", "device": "cpu", "min_pixels": 3136, "max_pixels": 1003520}
    })
}

/// `{"a": {"b": value}}` for `a.b`, `{"a": value}` for `a`.
fn config_with(path: &str, value: Value) -> Value {
    match path.split_once('.') {
        Some((block, key)) => json!({ block: { key: value } }),
        None => json!({ path: value }),
    }
}

/// Launches on `config` and requires one refusal line naming `key` with `value` shown as JSON.
async fn refused_naming(ctx: &Ctx, config: &Value, key: &str, value: &Value) -> CheckResult {
    let launch = ctx.launch(config).await?;
    let lines: Vec<&str> = launch.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    expect_eq(&format!("exit code for {config}"), Some(2), launch.code)?;
    let wanted = format!("config {key}={value}: ");
    expect(
        matches!(lines.as_slice(), [line] if line.contains(&wanted)),
        format!("for {config}, exactly one stderr line with `{wanted}`"),
        format!("{lines:?}"),
    )
}

/// Launches on `config` and requires a start with no stderr warning.
async fn starts_quietly(ctx: &Ctx, config: &Value) -> CheckResult {
    let launch = ctx.launch(config).await?;
    expect(
        launch.code.is_none() && launch.health == Some(200),
        format!("the server starts on {config}"),
        format!("exit code {:?}, /health {:?}, stderr {:?}", launch.code, launch.health, launch.stderr),
    )?;
    let warned: Vec<&str> = launch.stderr.lines().filter(|l| l.contains("unknown key")).collect();
    expect(warned.is_empty(), format!("no unknown-key warning for {config}"), format!("{warned:?}"))
}

async fn every_key_refuses(ctx: Ctx) -> CheckResult {
    for (key, value) in refused_rows() {
        refused_naming(&ctx, &config_with(key, value.clone()), key, &value).await?;
    }
    // max_pixels against min_pixels and against one 28 × 28 grid cell, both sides of each.
    for (min, max) in [(785, 784), (1, 783)] {
        let config = json!({"vision": {"min_pixels": min, "max_pixels": max}});
        refused_naming(&ctx, &config, "vision.max_pixels", &json!(max)).await?;
    }
    for (min, max) in [(784, 784), (1, 784)] {
        starts_quietly(&ctx, &json!({"vision": {"min_pixels": min, "max_pixels": max}})).await?;
    }
    Ok(())
}

async fn every_key_read(ctx: Ctx) -> CheckResult {
    starts_quietly(&ctx, &all_taken()).await
}
