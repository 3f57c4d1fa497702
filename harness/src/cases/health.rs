//! SPEC §3: health and status.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Reach, Scenario, Serving, Setup};

const VISION: Scenario =
    Scenario { name: "vision", build: || Setup::plain().vision(), serving: Serving::Shared(Reach::Configured) };

/// A key, the fixture MCP server, tool pictures on, and a 1 MiB body limit: every kind of refusal.
const REFUSING: Scenario = crate::scenario::own("refusing", || {
    let mut setup = Setup::mcp(Some(true)).with_key();
    setup.config["max_body_mib"] = json!(1);
    setup
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "errors.every-error-is-clean-json",
            "2.8",
            Must,
            REFUSING,
            "401, 403, 404, 405, 400, 413 and 415 answers from every route are {\"error\":{type, message}} JSON without a stack trace, a file path or the key; every route with a path parameter given a malformed percent-encoded name (%FF, %, %zz, overlong) answers the JSON 404",
            every_error_clean,
            ["errors-show-paths", "plain-errors", "path-rejection-plain"]
        ),
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
            "/v1/status gives vision {enabled, available, error} (true, true, null for the geometry backend, which needs nothing) and the vision geometry a client predicts tokens with",
            vision_geometry,
            [
                "status-no-geometry",
                "status-vision-error-skipped",
                "status-vision-enabled-dropped",
                "status-vision-available-dropped"
            ]
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
    // 3.3b: the three keys are there, each its own value: the encoder is configured (1.10b), the
    // geometry backend needs no library or device, so it is available, with no error.
    let vision = body["vision"].as_object().cloned().unwrap_or_default();
    for (key, wanted) in [("enabled", json!(true)), ("available", json!(true)), ("error", Value::Null)] {
        expect_eq(&format!("vision.{key}"), Some(&wanted), vision.get(key))?;
    }
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

/// Names that are not percent-encoding a path extractor decodes to UTF-8, each sent raw after a route's
/// prefix (the request target as written).
const MALFORMED_ESCAPES: [&str; 6] = ["%FF", "%", "%zz", "%C0%AE", "app%E2%82.js", "%ED%A0%80"];

/// One request that must be refused: what it is, method, path, extra headers, body, the status it must
/// get, and whether it goes without the key.
type Refusal<'a> = (&'a str, http::Method, String, Vec<(&'a str, &'a [u8])>, Vec<u8>, u16, bool);

async fn every_error_clean(ctx: Ctx) -> CheckResult {
    use http::Method;
    let cache = ctx.cache_dir()?.display().to_string();
    let folder = ctx.cache_dir()?.parent().map(|p| p.display().to_string()).unwrap_or_default();
    let missing = format!("/tool-media/{}.png", super::common::sha256(b"never cached"));
    let chat = super::common::CHAT;
    let body = |value: Value| value.to_string().into_bytes();
    let json_type = b"application/json".as_slice();
    // (what, method, path, extra headers, body, the status it must be, without the key)
    let rows: Vec<Refusal> = vec![
        ("no key", Method::GET, "/v1/models".into(), vec![], vec![], 401, true),
        ("a wrong key", Method::GET, "/mcp".into(), vec![("x-api-key", b"not-the-key")], vec![], 401, true),
        ("no key on /tool-media", Method::GET, missing.clone(), vec![], vec![], 401, true),
        ("an unknown route", Method::GET, "/no/such/route".into(), vec![], vec![], 404, false),
        ("a missing picture", Method::GET, missing.clone(), vec![], vec![], 404, false),
        (
            "a picture name with ../",
            Method::GET,
            "/tool-media/..%2F..%2Fetc%2Fpasswd".into(),
            vec![],
            vec![],
            404,
            false,
        ),
        ("a wrong method on chat", Method::DELETE, chat.into(), vec![], vec![], 405, false),
        ("a wrong method on a picture", Method::PUT, missing.clone(), vec![], vec![], 405, false),
        (
            "a body that is not JSON",
            Method::POST,
            chat.into(),
            vec![("content-type", json_type)],
            b"{not json".to_vec(),
            400,
            false,
        ),
        (
            "messages not a list",
            Method::POST,
            chat.into(),
            vec![("content-type", json_type)],
            body(json!({"messages": 3})),
            400,
            false,
        ),
        (
            "a malformed reference",
            Method::POST,
            chat.into(),
            vec![("content-type", json_type)],
            body(
                json!({"messages": [{"role": "tool", "content": [{"type": "image_url", "image_url": {"url": "strata-tool-media:../x.png"}}]}]}),
            ),
            400,
            false,
        ),
        (
            "MCP from a foreign page",
            Method::POST,
            chat.into(),
            vec![("content-type", json_type), ("origin", b"http://evil.example")],
            body(json!({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": true})),
            403,
            false,
        ),
        (
            "MCP sent as text/plain",
            Method::POST,
            chat.into(),
            vec![("content-type", b"text/plain")],
            body(json!({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": true})),
            415,
            false,
        ),
    ];
    // Every route with a path parameter, its name malformed as percent-encoding: not UTF-8 once decoded
    // (`%FF`, an overlong `%C0%AE`, a cut `%E2%82`), a bare `%`, `%zz`. No such name is an asset or a
    // picture: the JSON 404, never a path extractor's own plain-text 400. `/web/` without the key too.
    let mut rows = rows;
    for (prefix, without_key) in [("/web/", false), ("/web/", true), ("/tool-media/", false)] {
        for bad in MALFORMED_ESCAPES {
            let what = if without_key { "a malformed name, without the key" } else { "a malformed name" };
            rows.push((what, Method::GET, format!("{prefix}{bad}"), vec![], vec![], 404, without_key));
        }
    }
    let forbidden = [
        cache.as_str(),
        folder.as_str(),
        crate::scenario::HARNESS_KEY,
        "/tmp/",
        "/root/",
        "/home/",
        ".rs:",
        "panicked",
        "backtrace",
        "RUST_BACKTRACE",
    ];
    for (what, method, path, headers, payload, status, without_key) in rows {
        let mut call = ctx.http.call(method, &path).body(payload);
        for (name, value) in headers {
            call = call.header(name, value);
        }
        if without_key {
            call = call.without_key();
        }
        let reply = call.send().await?;
        expect_eq(&format!("status for {what} ({path})"), status, reply.status)?;
        let content_type = reply.header("content-type").unwrap_or_default();
        expect(content_type.starts_with("application/json"), format!("JSON for {what} ({path})"), content_type)?;
        let answer = reply.json()?;
        let error = &answer["error"];
        let (kind, message) =
            (error["type"].as_str().unwrap_or_default(), error["message"].as_str().unwrap_or_default());
        expect(
            answer.as_object().is_some_and(|o| o.len() == 1) && !kind.is_empty() && !message.is_empty(),
            format!("{{\"error\":{{\"type\":…,\"message\":…}}}} for {what}"),
            answer.to_string(),
        )?;
        let text = reply.text();
        if let Some(leak) = forbidden.iter().find(|f| !f.is_empty() && text.contains(*f)) {
            return Err(crate::case::CheckError::Fail {
                expected: format!("an answer for {what} without a stack trace, a file path or the key"),
                actual: format!("it holds {leak:?}: {text}"),
            });
        }
    }
    // Over max_body_mib: sent so the server's early answer can be read (see post_oversized).
    let big = format!("{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}", "x".repeat(1 << 20));
    let (status, text) = super::common::post_oversized(&ctx.http, big.as_bytes()).await?;
    expect_eq("status for a body over max_body_mib", 413, status)?;
    let answer: Value = serde_json::from_str(text.trim()).unwrap_or_default();
    expect(answer["error"]["message"].is_string(), "{\"error\":{…}} for a body over max_body_mib", text.clone())?;
    if let Some(leak) = forbidden.iter().find(|f| !f.is_empty() && text.contains(*f)) {
        return Err(crate::case::CheckError::Fail {
            expected: "an answer for a body over max_body_mib without a stack trace, a file path or the key".into(),
            actual: format!("it holds {leak:?}: {text}"),
        });
    }
    Ok(())
}
