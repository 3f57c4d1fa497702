//! SPEC 1.5, 1.10, 1.11: every typed key of the run configuration, one table — each refuses a value of
//! the wrong kind or out of its bound on its own (one line naming it, exit code 2), and all of them set
//! to values they take start the server without a warning (a key the server does not read would be
//! "unknown"). The vision bounds on both sides of `max_pixels ≥ min_pixels` and `max_pixels ≥ 28 × 28`.
//! `gen.config-model` draws from the same keys at random; this table names each one every run. Last,
//! the vision blocks of 1.10: each either starts with `/v1/status` naming the backend, device and
//! pixel bounds it chose (3.3), or stops with one line naming the key it cannot have.

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
            "each typed key of 1.5, 1.10 and 1.11 (the mcp seconds and counts, image_results, max_body_mib, the connection bounds, engine.delay_ms, max_context and restart_per_request, vision.backend, device, min_pixels and max_pixels) alone with a value it refuses stops startup with one line `config <key>=<value>: …`, exit 2; max_pixels below min_pixels (785/784) or below 784 (1/783) is refused naming vision.max_pixels, 784/784 and 1/784 start; the file's port refuses 65536 (whatever --port says), model and host a blank string, integer keys refuse 1.5 (engine.delay_ms too) and the float past 2^53 (mcp.max_result_chars 9007199254740994.0)",
            every_key_refuses,
            [
                "config-lenient",
                "top-values-lenient",
                "vision-bounds-ignored",
                "caps-unread",
                "engine-values-lenient",
                "bounds-values-lenient",
                "refusal-with-cause-line"
            ]
        ),
        case!(
            "config.every-typed-key-read",
            "1.4",
            Must,
            LAUNCHES,
            "every typed key of 1.5, 1.10 and 1.11 set at once to a value it takes (integers also written as 0.0, 1000.0 and 2^53 = 9007199254740992.0; engine.delay_ms at 2^53 too) starts the server with no warning: none of them is an unknown key",
            every_key_read,
            ["caps-unread", "image-results-warned-unknown"]
        ),
        case!(
            "config.vision-choice-reported",
            "1.10",
            Must,
            LAUNCHES,
            "each vision block starts with /v1/status naming what it chose, or stops with one line naming the key it cannot have (exit 2): {} and backend geometry on cpu are geometry/cpu with the default pixel bounds, min_pixels 5000 / max_pixels 400000 are reported as configured, device cuda with geometry (alone or named) is refused naming vision.device, backend torch is refused naming vision.backend or reported as torch on its device",
            vision_choice_reported,
            ["vision-choice-ignored", "status-no-geometry"]
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
        ("port", json!(65_536)),
        ("model", json!("  ")),
        ("host", json!("")),
        ("max_body_mib", json!(0)),
        ("max_connections", json!(0.5)),
        ("header_timeout_s", json!(0)),
        ("body_timeout_s", json!("60")),
        ("engine.delay_ms", json!(-1)),
        ("engine.delay_ms", json!(1.5)),
        // One float past 2^53 (1.5): it no longer holds every integer.
        ("mcp.max_result_chars", json!(9_007_199_254_740_994.0)),
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
            "timeout_s": 30, "start_timeout_s": 2.5, "retry_failed_s": 5, "max_result_chars": 9_007_199_254_740_992.0,
            "max_rounds": 4, "max_pictures_per_result": 4, "max_picture_chars": 24000000,
            "max_tool_pages": 100, "max_tools_per_server": 1000.0, "image_results": true
        },
        "port": 65_535, "max_body_mib": 16, "max_connections": 64, "header_timeout_s": 10, "body_timeout_s": 60,
        "engine": {"delay_ms": 0.0, "max_context": 262144, "restart_per_request": false},
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
    starts_quietly(&ctx, &all_taken()).await?;
    // The non-negative count at 2^53 written as a float (all_taken has it at 0.0).
    starts_quietly(&ctx, &json!({"engine": {"delay_ms": 9_007_199_254_740_992.0}})).await
}

/// What a vision block may come to: a start that `/v1/status` reports as `(backend, device, min, max)`,
/// or a refusal naming one of the keys.
enum VisionOutcome {
    Starts(&'static str, &'static str, u64, u64),
    StartsOrRefused(&'static str, &'static str, &'static [&'static str]),
    Refused(&'static str),
}

/// SPEC 1.10's vision blocks and what each must come to in a build without `torch` or CUDA; a build
/// with them may start where a `StartsOrRefused` row allows it.
fn vision_rows() -> Vec<(Value, VisionOutcome)> {
    use VisionOutcome::*;
    let (min, max) = (56 * 56, 28 * 28 * 1280);
    vec![
        (json!({}), Starts("geometry", "cpu", min, max)),
        (json!({"backend": "geometry", "device": "cpu"}), Starts("geometry", "cpu", min, max)),
        (json!({"min_pixels": 5000, "max_pixels": 400_000}), Starts("geometry", "cpu", 5000, 400_000)),
        (json!({"device": "cuda"}), Refused("vision.device")),
        (json!({"backend": "geometry", "device": "cuda"}), Refused("vision.device")),
        (json!({"backend": "torch"}), StartsOrRefused("torch", "cpu", &["vision.backend"])),
        (
            json!({"backend": "torch", "device": "cuda"}),
            StartsOrRefused("torch", "cuda", &["vision.backend", "vision.device"]),
        ),
    ]
}

async fn vision_choice_reported(ctx: Ctx) -> CheckResult {
    for (block, outcome) in vision_rows() {
        let config = json!({"vision": block});
        let file = crate::target::ConfigFile::Bytes(config.to_string().into_bytes());
        let probe = |http: crate::http::Http| async move {
            http.get("/v1/status").send().await.ok().and_then(|r| r.json().ok()).unwrap_or_default()
        };
        let (launch, status): (_, Option<Value>) =
            ctx.launch_probing(file, None, &crate::target::LaunchExtras::default(), probe).await?;
        let refusal = || {
            let lines: Vec<&str> = launch.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            match (launch.code, lines.as_slice()) {
                (Some(2), [line]) => line
                    .split_once("config ")
                    .and_then(|(_, rest)| rest.split_once('='))
                    .map(|(key, _)| key.to_string()),
                _ => None,
            }
        };
        let started = |backend: &str, device: &str, min: Option<u64>, max: Option<u64>| -> CheckResult {
            let Some(status) = &status else {
                return expect(
                    false,
                    format!("the server starts on {config}"),
                    format!("exit {:?}: {}", launch.code, launch.stderr.trim()),
                );
            };
            let vision = &status["vision"];
            expect_eq(&format!("/v1/status vision.backend for {config}"), &json!(backend), &vision["backend"])?;
            expect_eq(&format!("/v1/status vision.device for {config}"), &json!(device), &vision["device"])?;
            if let (Some(min), Some(max)) = (min, max) {
                expect_eq(
                    &format!("/v1/status vision.geometry's min_pixels and max_pixels for {config}"),
                    (Some(min), Some(max)),
                    (vision["geometry"]["min_pixels"].as_u64(), vision["geometry"]["max_pixels"].as_u64()),
                )?;
            }
            Ok(())
        };
        match outcome {
            VisionOutcome::Starts(backend, device, min, max) => started(backend, device, Some(min), Some(max))?,
            VisionOutcome::Refused(key) => expect_eq(
                &format!("for {config}, exit code 2 and one stderr line `config {key}=…`"),
                Some(key.to_string()),
                refusal(),
            )
            .map_err(|e| with_stderr(e, &launch))?,
            VisionOutcome::StartsOrRefused(backend, device, keys) => match refusal() {
                Some(key) => expect(
                    keys.contains(&key.as_str()),
                    format!("for {config}, a refusal naming {}", keys.join(" or ")),
                    format!("a refusal naming {key}"),
                )?,
                None => started(backend, device, None, None)?,
            },
        }
    }
    Ok(())
}

/// `error` with what the launch wrote to stderr beside its actual value.
fn with_stderr(error: crate::case::CheckError, launch: &crate::target::Launch) -> crate::case::CheckError {
    match error {
        crate::case::CheckError::Fail { expected, actual } => crate::case::CheckError::Fail {
            expected,
            actual: format!("{actual} (exit {:?}, stderr {:?})", launch.code, launch.stderr.trim()),
        },
        other => other,
    }
}
