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
        case!(
            "errors.wrong-method-405",
            "3.4",
            Must,
            BASIC,
            "every known route with each method it does not take (GET, POST, PUT, DELETE, PATCH) is 405 in the JSON error shape",
            wrong_method_405,
            ["plain-errors", "wrong-method-404"]
        ),
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

/// The known routes (SPEC §3, §4, §9, §13) and the methods each takes.
const ROUTES: [(&str, &str); 9] = [
    ("/health", "GET"),
    ("/api/health", "GET"),
    ("/v1/models", "GET"),
    ("/v1/status", "GET"),
    ("/mcp", "GET"),
    ("/v1/chat/completions", "POST"),
    ("/tool-media/0000000000000000000000000000000000000000000000000000000000000000.png", "GET"),
    ("/", "GET"),
    ("/web/app.js", "GET"),
];

async fn wrong_method_405(ctx: Ctx) -> CheckResult {
    for (route, takes) in ROUTES {
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            if method == takes {
                continue;
            }
            let method_value =
                http::Method::from_bytes(method.as_bytes()).map_err(|e| crate::case::broken(e.to_string()))?;
            let reply = ctx
                .http
                .call(method_value, route)
                .header("content-type", b"application/json")
                .body("{}".to_string())
                .send()
                .await?;
            expect_eq(&format!("status of {method} {route}"), 405, reply.status)?;
            let body = reply.json()?;
            expect(
                body["error"]["type"].is_string() && body["error"]["message"].is_string(),
                format!("{method} {route}: the JSON error shape"),
                body.to_string(),
            )?;
        }
    }
    Ok(())
}

async fn json_404(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/no/such/route").send().await?;
    expect_eq("status", 404, reply.status)?;
    expect_eq("body", json!({"error": {"type": "not_found", "message": "not found"}}), reply.json()?)
}
