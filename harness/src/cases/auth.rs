//! SPEC §2: authentication, Host and Origin.

use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, opt_in, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, KEYED, Setup, own};

const OWN_PAGE: crate::scenario::Scenario = own("mcp-plain", || Setup::mcp(None));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "auth.rejects-missing-key",
            "2.4",
            Must,
            KEYED,
            "a protected route without the key is 401 with the exact body",
            rejects_missing_key,
            ["auth-off", "auth-body"]
        ),
        case!("auth.rejects-wrong-key", "2.4", Must, KEYED, "a wrong key is 401", rejects_wrong_key, ["auth-off"]),
        case!(
            "auth.accepts-both-header-forms",
            "2.2",
            Must,
            KEYED,
            "Authorization: bearer <key> (any case) and x-api-key: <key> are accepted",
            accepts_both_forms,
            ["bearer-only"]
        ),
        case!(
            "auth.health-is-public",
            "2.3",
            Must,
            KEYED,
            "GET /health needs no key",
            health_is_public,
            ["health-needs-key"]
        ),
        case!(
            "auth.protects-every-route",
            "2.3",
            Must,
            KEYED,
            "/v1/models, /v1/status, /mcp, /tool-media/… and every POST need the key",
            protects_every_route,
            ["auth-off"]
        ),
        case!(
            "auth.host-check-without-key",
            "2.5",
            Must,
            BASIC,
            "without a key, a foreign Host is 403",
            host_check,
            ["host-check-off"]
        ),
        case!(
            "auth.mcp-only-from-own-page",
            "2.7",
            Must,
            OWN_PAGE,
            "an MCP request that is not JSON is 415; from a foreign Origin 403",
            own_page_only,
            ["own-page-off"]
        ),
    ]
}

fn exact_401() -> Value {
    json!({"error": {"type": "authentication_error", "message": "missing or wrong API key"}})
}

async fn rejects_missing_key(ctx: Ctx) -> CheckResult {
    for path in ["/v1/models", "/v1/status", "/mcp"] {
        let reply = ctx.http.get(path).without_key().send().await?;
        expect_eq(&format!("GET {path} status"), 401, reply.status)?;
        expect_eq(&format!("GET {path} body"), exact_401(), reply.json()?)?;
    }
    Ok(())
}

async fn rejects_wrong_key(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").without_key().header("authorization", b"Bearer not-the-key").send().await?;
    expect_eq("status", 401, reply.status)?;
    expect_eq("body", exact_401(), reply.json()?)
}

async fn accepts_both_forms(ctx: Ctx) -> CheckResult {
    let key = ctx.http.key().unwrap_or_default().to_string();
    let bearer = ctx
        .http
        .get("/v1/models")
        .without_key()
        .header("authorization", format!("bearer {key}").as_bytes())
        .send()
        .await?;
    expect_eq("status with lower-case bearer", 200, bearer.status)?;
    let x_api_key = ctx.http.get("/v1/models").without_key().header("x-api-key", key.as_bytes()).send().await?;
    expect_eq("status with x-api-key", 200, x_api_key.status)
}

async fn health_is_public(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/health").without_key().send().await?;
    expect_eq("status", 200, reply.status)
}

async fn protects_every_route(ctx: Ctx) -> CheckResult {
    let name = format!("{}.png", "0".repeat(64));
    for path in ["/v1/models", "/v1/status", "/mcp", &format!("/tool-media/{name}")] {
        let reply = ctx.http.get(path).without_key().send().await?;
        expect_eq(&format!("GET {path}"), 401, reply.status)?;
    }
    let reply = ctx.http.post_json(CHAT, &user("hi")).without_key().send().await?;
    expect_eq("POST /v1/chat/completions", 401, reply.status)
}

async fn host_check(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").header("host", b"evil.example").send().await?;
    expect_eq("status with Host: evil.example", 403, reply.status)?;
    expect_eq("error type", &json!("forbidden"), &reply.json()?["error"]["type"])
}

async fn own_page_only(ctx: Ctx) -> CheckResult {
    let plain = ctx
        .http
        .call(http::Method::POST, CHAT)
        .header("content-type", b"text/plain")
        .body(opt_in().to_string())
        .send()
        .await?;
    expect_eq("status for text/plain", 415, plain.status)?;
    let foreign = ctx.http.post_json(CHAT, &opt_in()).header("origin", b"http://localhost:9").send().await?;
    expect_eq("status from a foreign Origin", 403, foreign.status)?;
    let body = foreign.json()?;
    expect(body["error"]["message"].is_string(), "the JSON error shape", body.to_string())
}
