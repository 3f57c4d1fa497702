//! SPEC 4.1 and 4.10: the chat request's body — its fields (messages, max_tokens and
//! max_completion_tokens, unknown fields), the bodies refused as 400 (not JSON, wrong types, values
//! of the wrong kind) and `max_body_mib`'s bound, at N−1, N and N+1 bytes, with Content-Length or
//! chunked, and for a client that writes its whole body before it reads.

use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, complete, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Scenario, Setup, own};

/// A 1 MiB body limit.
pub(super) const ONE_MIB_BODIES: Scenario = own("one-mib-bodies", || {
    let mut setup = Setup::plain();
    setup.config["max_body_mib"] = json!(1);
    setup
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "chat.body-limit-holds-for-chunked-bodies",
            "4.10",
            Must,
            ONE_MIB_BODIES,
            "with max_body_mib 1, chunked bodies (no Content-Length; chunks of 64 KiB and of 1,000 bytes) of 1,048,575 and 1,048,576 bytes are read and one of 1,048,577 is 413 in the JSON error shape",
            chunked_body_limit,
            ["chunked-bodies-unbounded"]
        ),
        case!(
            "chat.refused-body-reaches-a-client-that-writes-first",
            "4.10",
            Must,
            ONE_MIB_BODIES,
            "with max_body_mib 1, a client that writes a whole 8 MiB body before reading (with Content-Length, and chunked) gets the 413 in the JSON error shape, not a broken connection",
            refusal_reaches_writers,
            ["refusal-without-lingering"]
        ),
        case!(
            "chat.body-limit-at-1-mib",
            "4.10",
            Must,
            ONE_MIB_BODIES,
            "with max_body_mib 1, bodies of 1,048,575 and 1,048,576 bytes are read (not 413) and one of 1,048,577 is 413 in the JSON error shape",
            body_limit_boundary,
            ["body-limit-off-by-one"]
        ),
        case!(
            "chat.body-fields",
            "4.1",
            Must,
            BASIC,
            "messages must be a non-empty list; every role is taken; max_tokens and max_completion_tokens cap the answer and 0, -1 or unset mean the rest of the context; unknown fields are ignored",
            body_fields,
            ["max-completion-tokens-ignored", "empty-messages-taken"]
        ),
        case!(
            "chat.max-tokens-other-values-refused",
            "4.1",
            Must,
            BASIC,
            "max_tokens and max_completion_tokens of -2, -1000, 1.5, 10.0, 1e3, \"10\", true, [3] or {} are each 400 invalid_request_error; null is the rest of the context; with both present, max_tokens decides (2 and 5, 5 and 2)",
            max_tokens_other_values,
            ["max-tokens-lenient", "max-completion-tokens-wins"]
        ),
        case!(
            "chat.malformed-body-is-400",
            "4.10",
            Must,
            BASIC,
            "a body that is not JSON, or has a wrong type, is 400 invalid_request_error",
            malformed_is_400,
            ["malformed-500"]
        ),
    ]
}

async fn malformed_is_400(ctx: Ctx) -> CheckResult {
    for (what, body) in
        [("not JSON", "{not json".to_string()), ("messages not a list", r#"{"messages": 3}"#.to_string())]
    {
        let reply = super::common::post_chat_body(&ctx.http, body).await?;
        expect_eq(&format!("status for {what}"), 400, reply.status)?;
        expect_eq(&format!("type for {what}"), &json!("invalid_request_error"), &reply.json()?["error"]["type"])?;
    }
    Ok(())
}

async fn max_tokens_other_values(ctx: Ctx) -> CheckResult {
    let messages = r#""messages": [{"role": "user", "content": "hi"}]"#;
    for key in ["max_tokens", "max_completion_tokens"] {
        for value in ["-2", "-1000", "1.5", "10.0", "1e3", "\"10\"", "true", "[3]", "{}"] {
            let reply = super::common::post_chat_body(&ctx.http, format!("{{{messages}, \"{key}\": {value}}}")).await?;
            expect_eq(&format!("status for {key} {value}"), 400, reply.status)?;
            expect_eq(
                &format!("type for {key} {value}"),
                &json!("invalid_request_error"),
                &reply.json()?["error"]["type"],
            )?;
        }
        let answer = complete(&ctx.http, &json!({"messages": [{"role": "user", "content": "hi"}], key: null})).await?;
        expect_eq(&format!("finish_reason with {key} null"), &json!("stop"), &answer["choices"][0]["finish_reason"])?;
    }
    for (max_tokens, max_completion_tokens) in [(2, 5), (5, 2)] {
        let body = json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens,
            "max_completion_tokens": max_completion_tokens});
        let answer = complete(&ctx.http, &body).await?;
        expect_eq(
            &format!(
                "completion_tokens with max_tokens {max_tokens} and max_completion_tokens {max_completion_tokens}"
            ),
            &json!(max_tokens),
            &answer["usage"]["completion_tokens"],
        )?;
    }
    Ok(())
}

async fn body_fields(ctx: Ctx) -> CheckResult {
    for (what, body) in [("no messages", json!({})), ("an empty messages list", json!({"messages": []}))] {
        let reply = ctx.http.post_json(CHAT, &body).send().await?;
        expect_eq(&format!("status for {what}"), 400, reply.status)?;
        expect_eq(&format!("type for {what}"), &json!("invalid_request_error"), &reply.json()?["error"]["type"])?;
    }
    let every_role = json!({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Answer in English."},
        {"role": "user", "content": [{"type": "text", "text": "look it up"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "nothing found"},
        {"role": "user", "content": "then say hello"},
    ], "temperature": 0.2, "x_vendor": {"deep": [1, {"a": null}]}, "stream_options": {"include_usage": true}});
    let answer = complete(&ctx.http, &every_role).await?;
    expect_eq(
        "finish_reason with every role and unknown fields",
        &json!("stop"),
        &answer["choices"][0]["finish_reason"],
    )?;
    let ask = |extra: Value| {
        let mut body = user("hi");
        for (key, value) in extra.as_object().into_iter().flatten() {
            body[key] = value.clone();
        }
        body
    };
    for (what, extra) in
        [("max_tokens 3", json!({"max_tokens": 3})), ("max_completion_tokens 3", json!({"max_completion_tokens": 3}))]
    {
        let answer = complete(&ctx.http, &ask(extra)).await?;
        expect_eq(&format!("finish_reason with {what}"), &json!("length"), &answer["choices"][0]["finish_reason"])?;
        expect_eq(&format!("completion_tokens with {what}"), &json!(3), &answer["usage"]["completion_tokens"])?;
    }
    for (what, extra) in [
        ("max_tokens 0", json!({"max_tokens": 0})),
        ("max_tokens -1", json!({"max_tokens": -1})),
        ("no max_tokens", json!({})),
    ] {
        let answer = complete(&ctx.http, &ask(extra)).await?;
        expect_eq(&format!("finish_reason with {what}"), &json!("stop"), &answer["choices"][0]["finish_reason"])?;
        expect_eq(
            &format!("content with {what}"),
            &json!("Hello from the mock engine."),
            &answer["choices"][0]["message"]["content"],
        )?;
    }
    Ok(())
}

/// The 1 MiB limit of [`ONE_MIB_BODIES`].
const LIMIT: usize = 1 << 20;

/// A chat body of exactly `size` bytes.
pub(super) fn body_of(size: usize) -> String {
    let (head, tail) = (r#"{"messages":[{"role":"user","content":""#, r#""}],"max_tokens":1}"#);
    format!("{head}{}{tail}", "x".repeat(size - head.len() - tail.len()))
}

async fn chunked_body_limit(ctx: Ctx) -> CheckResult {
    for chunk in [64 << 10, 1000] {
        for size in [LIMIT - 1, LIMIT] {
            let (status, _) = super::common::post_chunked(&ctx.http, body_of(size).into_bytes(), chunk).await?;
            expect(
                status != 413 && status != 0,
                format!("a chunked body of {size} bytes in chunks of {chunk} read (any status but 413)"),
                status.to_string(),
            )?;
        }
        let (status, body) = super::common::post_chunked(&ctx.http, body_of(LIMIT + 1).into_bytes(), chunk).await?;
        expect_eq(&format!("status of a chunked body of {} bytes in chunks of {chunk}", LIMIT + 1), 413, status)?;
        let shape: Value = serde_json::from_str(body.trim()).unwrap_or_default();
        expect(shape["error"]["message"].is_string(), "the JSON error shape", body)?;
    }
    Ok(())
}

async fn refusal_reaches_writers(ctx: Ctx) -> CheckResult {
    let body = body_of(8 << 20);
    for chunked in [false, true] {
        let (status, answer) =
            super::common::post_then_read(&ctx.http, body.as_bytes(), chunked, std::time::Duration::ZERO).await?;
        let how = if chunked { "chunked" } else { "with Content-Length" };
        expect_eq(&format!("status for a whole 8 MiB body written first, {how}"), 413, status)?;
        let shape: Value = serde_json::from_str(answer.trim()).unwrap_or_default();
        expect(shape["error"]["message"].is_string(), "the JSON error shape", answer)?;
    }
    Ok(())
}

async fn body_limit_boundary(ctx: Ctx) -> CheckResult {
    for size in [LIMIT - 1, LIMIT] {
        let reply = super::common::post_chat_body(&ctx.http, body_of(size)).await?;
        expect(
            reply.status != 413,
            format!("a body of {size} bytes read (any status but 413)"),
            reply.status.to_string(),
        )?;
    }
    let (status, body) = super::common::post_oversized(&ctx.http, body_of(LIMIT + 1).as_bytes()).await?;
    expect_eq(&format!("status of a body of {} bytes", LIMIT + 1), 413, status)?;
    let shape: Value = serde_json::from_str(body.trim()).unwrap_or_default();
    expect(shape["error"]["message"].is_string(), "the JSON error shape", body)
}
