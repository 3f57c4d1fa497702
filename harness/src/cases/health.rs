//! SPEC §3: health and status.

use serde_json::Value;

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "health.shape",
        "3.1",
        Must,
        Basic,
        "GET /health answers 200 with Strata's keys in order, without a key",
        health_shape
    )]
}

async fn health_shape(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/health").without_key().send().await?;
    expect_eq("status", 200, reply.status)?;
    let body = reply.json()?;
    let keys: Vec<String> = body.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let wanted = ["status", "max_context", "model", "images", "api_key", "loaded", "service"];
    expect_eq("keys", wanted.map(String::from).to_vec(), keys)?;
    expect_eq("status field", &Value::from("ok"), &body["status"])?;
    for flag in ["images", "api_key", "loaded"] {
        expect(body[flag].is_boolean(), format!("{flag} is a boolean"), format!("{flag} = {}", body[flag]))?;
    }
    expect(body["max_context"].is_u64(), "max_context is an integer", body["max_context"].to_string())
}
