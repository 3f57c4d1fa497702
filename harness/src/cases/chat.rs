//! SPEC §4: chat completions.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::sse::EventStream;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "chat.stream.shape",
            "4.4",
            Must,
            Basic,
            "a streamed answer: role chunk, content deltas, final chunk with usage, [DONE]",
            stream_shape
        ),
        case!(
            "chat.complete.shape",
            "4.3",
            Must,
            Basic,
            "a whole answer is one chat.completion with usage",
            complete_shape
        ),
    ]
}

fn hello() -> serde_json::Value {
    json!({"messages": [{"role": "user", "content": "hi"}]})
}

async fn stream_shape(ctx: Ctx) -> CheckResult {
    let mut body = hello();
    body["stream"] = json!(true);
    let reply = ctx.http.post_json("/v1/chat/completions", &body).send().await?;
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
    for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
        expect(usage[key].is_u64(), format!("usage.{key} is an integer"), usage.to_string())?;
    }
    let total = usage["prompt_tokens"].as_u64().unwrap_or(0) + usage["completion_tokens"].as_u64().unwrap_or(0);
    expect_eq("total_tokens", Some(total), usage["total_tokens"].as_u64())
}

async fn complete_shape(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.post_json("/v1/chat/completions", &hello()).send().await?;
    expect_eq("status", 200, reply.status)?;
    let body = reply.json()?;
    expect_eq("object", &json!("chat.completion"), &body["object"])?;
    expect_eq("role", &json!("assistant"), &body["choices"][0]["message"]["role"])?;
    expect(body["choices"][0]["message"]["content"].is_string(), "content is text", body.to_string())?;
    expect(body["usage"]["prompt_tokens"].is_u64(), "usage.prompt_tokens", body["usage"].to_string())
}
