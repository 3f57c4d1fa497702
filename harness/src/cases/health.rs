//! SPEC §3: health and status.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Reach, Scenario, Serving, Setup};

const VISION: Scenario =
    Scenario { name: "vision", build: || Setup::plain().vision(), serving: Serving::Shared(Reach::Configured) };

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "health.shape",
            "3.1",
            Must,
            BASIC,
            "GET /health answers 200 with Strata's keys in order, without a key",
            health_shape,
            ["health-shape"]
        ),
        case!(
            "models.input-modalities",
            "3.2",
            Must,
            VISION,
            "with a vision encoder /v1/models lists text and image input",
            input_modalities,
            ["models-text-only"]
        ),
        case!(
            "status.vision-geometry",
            "3.3",
            Must,
            VISION,
            "/v1/status gives the vision geometry a client predicts tokens with",
            vision_geometry,
            ["status-no-geometry"]
        ),
        case!("errors.json-404", "3.4", Must, BASIC, "an unknown route is a JSON 404", json_404, ["plain-errors"]),
    ]
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

async fn input_modalities(ctx: Ctx) -> CheckResult {
    let body = ctx.http.get("/v1/models").send().await?.json()?;
    expect_eq("input_modalities", &json!(["text", "image"]), &body["data"][0]["architecture"]["input_modalities"])
}

async fn vision_geometry(ctx: Ctx) -> CheckResult {
    let body = ctx.http.get("/v1/status").send().await?.json()?;
    let geometry = &body["vision"]["geometry"];
    expect_eq("patch_size", Some(14), geometry["patch_size"].as_u64())?;
    expect_eq("merge_size", Some(2), geometry["merge_size"].as_u64())?;
    expect(
        geometry["min_pixels"].is_u64() && geometry["max_pixels"].is_u64(),
        "min_pixels and max_pixels",
        geometry.to_string(),
    )
}

async fn json_404(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/no/such/route").send().await?;
    expect_eq("status", 404, reply.status)?;
    expect_eq("body", json!({"error": {"type": "not_found", "message": "not found"}}), reply.json()?)
}
