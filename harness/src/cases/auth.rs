//! SPEC §2: authentication.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "auth.rejects-missing-key",
            "2.4",
            Must,
            Keyed,
            "a protected route without the key is 401 with the exact body",
            rejects_missing_key
        ),
        case!("auth.rejects-wrong-key", "2.4", Must, Keyed, "a wrong key is 401", rejects_wrong_key),
        case!("auth.accepts-bearer", "2.2", Must, Keyed, "Authorization: Bearer <key> is accepted", accepts_bearer),
        case!("auth.accepts-x-api-key", "2.2", Must, Keyed, "x-api-key: <key> is accepted", accepts_x_api_key),
        case!("auth.health-is-public", "2.3", Must, Keyed, "GET /health needs no key", health_is_public),
    ]
}

fn exact_401() -> serde_json::Value {
    json!({"error": {"type": "authentication_error", "message": "missing or wrong API key"}})
}

async fn rejects_missing_key(ctx: Ctx) -> CheckResult {
    for path in ["/v1/models", "/v1/status", "/mcp"] {
        let reply = ctx.http.get(path).without_key().send().await?;
        expect_eq(&format!("GET {path} status"), 401, reply.status)?;
        expect_eq(&format!("GET {path} body"), exact_401(), reply.json()?)?;
    }
    let reply = ctx
        .http
        .post_json("/v1/chat/completions", &json!({"messages": [{"role": "user", "content": "hi"}]}))
        .without_key()
        .send()
        .await?;
    expect_eq("POST /v1/chat/completions status", 401, reply.status)
}

async fn rejects_wrong_key(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").without_key().header("authorization", b"Bearer not-the-key").send().await?;
    expect_eq("status", 401, reply.status)?;
    expect_eq("body", exact_401(), reply.json()?)
}

async fn accepts_bearer(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").send().await?;
    expect_eq("status", 200, reply.status)
}

async fn accepts_x_api_key(ctx: Ctx) -> CheckResult {
    let key = ctx.http.key().unwrap_or_default().to_string();
    let reply = ctx.http.get("/v1/models").without_key().header("x-api-key", key.as_bytes()).send().await?;
    expect_eq("status", 200, reply.status)
}

async fn health_is_public(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/health").without_key().send().await?;
    expect_eq("status", 200, reply.status)
}
