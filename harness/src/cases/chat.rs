//! SPEC §4: chat completions.

use serde_json::json;

use super::case;
use super::common::{CHAT, answer, call, complete, opt_in, read_until, status_until, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Scenario, Setup, own};
use crate::sse::EventStream;

const SMALL_CONTEXT: Scenario = own("small-context", || Setup::plain().set("engine", "max_context", json!(64)));
const SLOW: Scenario =
    own("slow-answer", || Setup::plain().scripts(vec!["word ".repeat(3000)]).set("engine", "delay_ms", json!(5)));
const TWO_PASSES: Scenario =
    own("two-passes", || Setup::mcp(None).scripts(vec![call("echo", &[("text", "hi")]), answer("done")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "chat.stream.shape",
            "4.4",
            Must,
            BASIC,
            "a streamed answer: role chunk, content deltas, final chunk with usage, [DONE]",
            stream_shape,
            ["no-done"]
        ),
        case!(
            "chat.usage.counts-every-pass",
            "4.5",
            Must,
            TWO_PASSES,
            "completion_tokens counts the tokens of every pass, total is their sum",
            usage_counts_every_pass,
            ["usage-off"]
        ),
        case!(
            "chat.context.refuses-what-does-not-fit",
            "4.7",
            Must,
            SMALL_CONTEXT,
            "a prompt over the context is 400, never truncated",
            refuses_oversized,
            ["truncate-prompts"]
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
        case!(
            "chat.disconnect-cancels",
            "4.11",
            Must,
            SLOW,
            "closing a streamed answer cancels generation",
            disconnect_cancels,
            ["no-cancel"]
        ),
    ]
}

async fn stream_shape(ctx: Ctx) -> CheckResult {
    let reply = ctx
        .http
        .post_json(CHAT, &json!({"messages": [{"role": "user", "content": "hi"}], "stream": true}))
        .send()
        .await?;
    expect_eq("status", 200, reply.status)?;
    let content_type = reply.header("content-type").unwrap_or_default();
    expect(content_type.starts_with("text/event-stream"), "text/event-stream", content_type)?;
    let stream = EventStream::parse(&reply.text());
    expect(stream.done, "data: [DONE] at the end", "no [DONE]")?;
    expect(stream.bad_lines.is_empty(), "every data line is JSON", format!("{:?}", stream.bad_lines))?;
    let first = stream.chunks.first().cloned().unwrap_or_default();
    expect_eq("first delta", &json!({"role": "assistant", "content": ""}), &first["choices"][0]["delta"])?;
    expect_eq("object", &json!("chat.completion.chunk"), &first["object"])?;
    expect(!stream.content().is_empty(), "some content", "no content")?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())?;
    let usage = stream.usage().cloned().unwrap_or_default();
    let total = usage["prompt_tokens"].as_u64().unwrap_or(0) + usage["completion_tokens"].as_u64().unwrap_or(0);
    expect_eq("total_tokens", Some(total), usage["total_tokens"].as_u64())
}

async fn usage_counts_every_pass(ctx: Ctx) -> CheckResult {
    let answer_body = complete(&ctx.http, &opt_in()).await?;
    let scripts = [call("echo", &[("text", "hi")]), answer("done")];
    let bytes: u64 = scripts.iter().map(|s| s.len() as u64).sum();
    let completion = answer_body["usage"]["completion_tokens"].as_u64().unwrap_or(0);
    // One token per byte of both scripts (4.8), with or without each pass's end token.
    expect(
        completion == bytes || completion == bytes + 2,
        format!("completion_tokens {bytes} (or {})", bytes + 2),
        completion.to_string(),
    )?;
    let prompt = answer_body["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
    expect_eq("total_tokens", Some(prompt + completion), answer_body["usage"]["total_tokens"].as_u64())
}

async fn refuses_oversized(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.post_json(CHAT, &user(&"x".repeat(200))).send().await?;
    expect_eq("status", 400, reply.status)?;
    let body = reply.json()?;
    expect_eq("type", &json!("invalid_request_error"), &body["error"]["type"])?;
    let message = body["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.contains("exceeds the context"), "a message saying it exceeds the context", message)
}

async fn malformed_is_400(ctx: Ctx) -> CheckResult {
    for (what, body) in
        [("not JSON", "{not json".to_string()), ("messages not a list", r#"{"messages": 3}"#.to_string())]
    {
        let reply = ctx
            .http
            .call(http::Method::POST, CHAT)
            .header("content-type", b"application/json")
            .body(body)
            .send()
            .await?;
        expect_eq(&format!("status for {what}"), 400, reply.status)?;
        expect_eq(&format!("type for {what}"), &json!("invalid_request_error"), &reply.json()?["error"]["type"])?;
    }
    Ok(())
}

async fn disconnect_cancels(ctx: Ctx) -> CheckResult {
    let (response, _) = read_until(&ctx.http, user("talk"), |seen| seen.contains("\"delta\":{\"content\":\"w")).await?;
    drop(response);
    status_until(&ctx.http, 5, |s| s["busy"] == false && s["requests"]["cancelled"].as_u64().unwrap_or(0) >= 1).await
}
