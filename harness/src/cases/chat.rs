//! SPEC §4: chat completions (the body's fields and bounds, 4.1 and 4.10, are `chat_body`'s).

use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, answer, call, complete, opt_in, read_until, status_until, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Scenario, Setup, own};

/// The request's own tool the tool-call scripts call.
fn own_tool() -> serde_json::Value {
    json!([{"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}])
}
use crate::sse::EventStream;

const SMALL_CONTEXT: Scenario = own("small-context", || Setup::plain().set("engine", "max_context", json!(64)));
const SLOW: Scenario =
    own("slow-answer", || Setup::plain().scripts(vec!["word ".repeat(3000)]).set("engine", "delay_ms", json!(5)));
const TWO_PASSES: Scenario =
    own("two-passes", || Setup::mcp(None).scripts(vec![call("echo", &[("text", "hi")]), answer("done")]));

/// Reasoning, then an answer between whitespace.
const REASONING: Scenario =
    own("reasoning", || Setup::plain().scripts(vec!["Let me think.</think>\n\n  The answer.\n\n".into()]));
/// Reasoning, then an answer between whitespace of every ASCII kind: CR LF, tab, space.
const REASONING_CRLF: Scenario = own("reasoning-crlf", || {
    Setup::plain().scripts(vec!["Let me think.</think>\r\n\r\n\t The answer.\r\n\t \r\n".into()])
});
/// A call to the request's own tool after some text.
const OWN_CALL: Scenario = own("own-tool-call", || Setup::plain().scripts(vec![OWN_CALL_SCRIPT.into()]));
/// A call to the request's own tool and nothing else.
const BARE_CALL: Scenario = own("bare-own-tool-call", || Setup::plain().scripts(vec![BARE_CALL_SCRIPT.into()]));

/// An answer that ends on the start of a call marker, and one whose second character takes two bytes.
const MARKER_PREFIX_AT_END: Scenario =
    own("marker-prefix-at-end", || Setup::plain().scripts(vec!["</think>\n\nx < y, so write <tool".into()]));
const TWO_BYTE_CHARACTER: Scenario = own("two-byte-character", || Setup::plain().scripts(vec!["</think>hé!".into()]));

/// Text of one-, two-, three- and four-byte characters, then a call to `lookup` with a non-ASCII
/// value, written a token (a byte) at a time, so every character and the marker arrive in pieces.
const NON_ASCII_THEN_CALL: Scenario = own("non-ascii-then-call", || {
    Setup::plain().set("engine", "delay_ms", json!(1)).scripts(vec![format!(
        "</think>\n\n{NON_ASCII_TEXT} <tool_call>\n<function=lookup>\n<parameter=q>\nçà 世\n</parameter>\n</function>\n</tool_call>"
    )])
});
const NON_ASCII_TEXT: &str = "Grüße — 世界 😀 «ok» é";

/// A call to `lookup` whose `q` (a string in its schema) and `n` (an integer) both look like numbers.
const TYPED_CALL: Scenario = own("own-tool-call-typed", || {
    Setup::plain().scripts(vec![
        "</think>\n\n<tool_call>\n<function=lookup>\n<parameter=q>\n42\n</parameter>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>".into(),
    ])
});

const OWN_CALL_SCRIPT: &str = "Weighing it.</think>\n\nCalling.\n\n<tool_call>\n<function=lookup>\n<parameter=q>\ncats\n</parameter>\n</function>\n</tool_call>";
const BARE_CALL_SCRIPT: &str =
    "</think>\n\n<tool_call>\n<function=lookup>\n<parameter=q>\ncats\n</parameter>\n</function>\n</tool_call>";

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "chat.context-slack-at-the-boundary",
            "4.7",
            Must,
            SMALL_CONTEXT,
            "with a 64-token context, a prompt of 55 tokens (prompt + 8 < 64) is answered and one of 56 (prompt + 8 = 64) is 400 exceeds the context",
            context_boundary,
            ["context-off-by-one", "truncate-prompts"]
        ),
        case!(
            "chat.context.text-alone-refused-early",
            "4.7",
            Must,
            SMALL_CONTEXT,
            "with a 64-token context, text of 56 bytes in a user message, or of 61 across a user and a tool message, is refused before rendering: \"prompt (more than N tokens)\" with N its bytes",
            refused_early,
            ["context-off-by-one", "truncate-prompts", "early-refusal-worded-as-rendered"]
        ),
        case!(
            "chat.marker-start-at-the-end-is-content",
            "4.6",
            Must,
            MARKER_PREFIX_AT_END,
            "an answer that ends on the first characters of a call marker (`<tool`) keeps them as content, streamed and whole: `x < y, so write <tool`",
            marker_start_at_the_end,
            ["marker-start-dropped"]
        ),
        case!(
            "chat.cut-inside-a-character",
            "4.6",
            Must,
            TWO_BYTE_CHARACTER,
            "an answer cut by max_tokens after the first byte of a two-byte character ends with one U+FFFD in its place (`h\u{FFFD}`), streamed and whole; one token more gives `hé`",
            cut_inside_a_character,
            ["cut-character-dropped"]
        ),
        case!(
            "chat.non-ascii-answer-and-call-whole",
            "4.12",
            Must,
            NON_ASCII_THEN_CALL,
            "an answer of two-, three- and four-byte characters followed by a call, written a byte at a time, arrives whole, streamed and not: the content as written, then the call with its non-ASCII argument",
            non_ascii_answer_and_call,
            ["non-ascii-content-mangled"]
        ),
        case!(
            "chat.system-message-and-tools-one-turn",
            "4.8",
            Must,
            BASIC,
            "a leading system message and the offered tools make one system turn: beside the tools the message adds exactly its text's bytes (a turn of its own would add its markers too); alone it is a turn with markers",
            system_and_tools_one_turn,
            ["system-turn-split"]
        ),
        case!(
            "chat.many-messages-filling-the-context",
            "4.7",
            Must,
            BASIC,
            "2,000 messages of 100 bytes (a prompt of about 220,000 of the 262,144 tokens) fit the context and are answered, with the prompt tokens counted",
            many_messages,
            ["messages-capped"]
        ),
        case!(
            "chat.own-tool-arguments-by-its-schema",
            "4.12",
            Must,
            TYPED_CALL,
            "an own tool call's arguments are read by that tool's schema in the request, not another tool's: q (a string) stays \"42\", n (an integer) becomes 7",
            own_arguments_by_schema,
            ["own-arguments-untyped"]
        ),
        case!(
            "chat.whole-answer.exact-shape",
            "4.3",
            Must,
            BASIC,
            "a whole answer is chat.completion with a chatcmpl- id, created now, the model, one choice at index 0 with the assistant's content and reasoning, finish_reason and usage",
            whole_answer_shape,
            ["reasoning-as-content", "completion-id-unprefixed"]
        ),
        case!(
            "chat.whole-answer.empty-content-is-null",
            "4.3",
            Must,
            BARE_CALL,
            "a whole answer that only calls a tool has content null, the call in message.tool_calls and finish_reason tool_calls",
            empty_content_is_null,
            ["empty-content-string"]
        ),
        case!(
            "chat.content-trims-crlf-and-tabs",
            "4.6",
            Must,
            REASONING_CRLF,
            "whitespace after </think> and at the end of the pass is not content when it is CR LF, tabs and spaces, not only newlines: whole and streamed",
            reasoning_split_crlf,
            ["content-keeps-carriage-returns"]
        ),
        case!(
            "chat.reasoning-and-content-split",
            "4.6",
            Must,
            REASONING,
            "what comes before </think> is reasoning_content, and content has neither the whitespace after it nor the whitespace at the end, whole or streamed",
            reasoning_split,
            ["reasoning-as-content", "content-untrimmed"]
        ),
        case!(
            "chat.own-tool-call.streamed",
            "4.12",
            Must,
            OWN_CALL,
            "a call to the request's own tool streams a tool_calls header (id, type, name, empty arguments) then its arguments, the text before it without the trailing whitespace, and finishes with tool_calls",
            own_tool_call_streamed,
            [
                "tool-calls-finish-stop",
                "content-untrimmed",
                "tool-call-header-without-id",
                "tool-call-header-without-type",
                "tool-call-header-unnamed",
                "tool-call-header-without-arguments",
                "tool-call-arguments-in-header"
            ]
        ),
        case!(
            "chat.stream.shape",
            "4.4",
            Must,
            BASIC,
            "a streamed answer: role chunk, content deltas, final chunk with usage, [DONE]",
            stream_shape,
            ["no-done", "stream-labelled-json", "first-delta-role-only", "first-delta-content-only"]
        ),
        case!(
            "chat.usage.counts-every-pass",
            "4.5",
            Must,
            TWO_PASSES,
            "completion_tokens counts the tokens of every pass, total is their sum",
            usage_counts_every_pass,
            ["usage-off", "total-tokens-off"]
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
            "chat.disconnect-cancels",
            "4.11",
            Must,
            SLOW,
            "closing a streamed answer cancels generation (its script holds no </think>, so its words stream as content from the first: 4.9f)",
            disconnect_cancels,
            ["no-cancel", "thinkless-script-held"]
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

async fn disconnect_cancels(ctx: Ctx) -> CheckResult {
    let (response, _) = read_until(&ctx.http, user("talk"), |seen| seen.contains("\"delta\":{\"content\":\"w")).await?;
    drop(response);
    status_until(&ctx.http, 5, |s| s["busy"] == false && s["requests"]["cancelled"].as_u64().unwrap_or(0) >= 1).await
}

/// The content of `body`'s answer, whole and streamed (every `delta.content` joined).
async fn content_both_ways(ctx: &Ctx, body: Value) -> Result<(Value, String), crate::case::CheckError> {
    let whole = complete(&ctx.http, &body).await?["choices"][0]["message"]["content"].clone();
    let streamed = super::common::stream(&ctx.http, body).await?.content();
    Ok((whole, streamed))
}

async fn marker_start_at_the_end(ctx: Ctx) -> CheckResult {
    let wanted = "x < y, so write <tool";
    let (whole, streamed) = content_both_ways(&ctx, user("compare")).await?;
    expect_eq("the whole answer's content", &json!(wanted), &whole)?;
    expect_eq("the streamed content", wanted, streamed.as_str())
}

async fn cut_inside_a_character(ctx: Ctx) -> CheckResult {
    // One token a byte (4.8; the mock engine writes `</think>` as its 8 bytes): 9 tokens reach `h`, 10
    // the first byte of `é`, 11 the whole of it.
    let asking = |max_tokens: u64| {
        let mut body = user("say it");
        body["max_tokens"] = json!(max_tokens);
        body
    };
    let (whole, streamed) = content_both_ways(&ctx, asking(10)).await?;
    expect_eq("the whole answer cut after the first byte of é", &json!("h\u{FFFD}"), &whole)?;
    expect_eq("the streamed answer cut after the first byte of é", "h\u{FFFD}", streamed.as_str())?;
    let (whole, _) = content_both_ways(&ctx, asking(11)).await?;
    expect_eq("the whole answer with one token more", &json!("hé"), &whole)
}

async fn non_ascii_answer_and_call(ctx: Ctx) -> CheckResult {
    let mut body = user("greet");
    body["tools"] = own_tool();
    let whole = complete(&ctx.http, &body).await?;
    let message = &whole["choices"][0]["message"];
    expect_eq("the whole answer's content", &json!(NON_ASCII_TEXT), &message["content"])?;
    let arguments: Value =
        serde_json::from_str(message["tool_calls"][0]["function"]["arguments"].as_str().unwrap_or("null"))
            .unwrap_or_default();
    expect_eq("the whole answer's call arguments", &json!({"q": "çà 世"}), &arguments)?;
    let streamed = super::common::stream(&ctx.http, body).await?;
    expect_eq("the streamed content", NON_ASCII_TEXT, streamed.content().as_str())?;
    let arguments: String = streamed
        .chunks
        .iter()
        .flat_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array().cloned().unwrap_or_default())
        .filter_map(|call| call["function"]["arguments"].as_str().map(str::to_string))
        .collect();
    let arguments: Value = serde_json::from_str(&arguments).unwrap_or_default();
    expect_eq("the streamed call arguments", &json!({"q": "çà 世"}), &arguments)?;
    expect_eq("finish_reason", Some("tool_calls"), streamed.finish_reason())
}

async fn system_and_tools_one_turn(ctx: Ctx) -> CheckResult {
    let tokens = |system: bool, tools: bool| {
        let mut messages = Vec::new();
        if system {
            messages.push(json!({"role": "system", "content": "Be brief."}));
        }
        messages.push(json!({"role": "user", "content": "hi"}));
        let mut body = json!({"messages": messages, "max_tokens": 1});
        if tools {
            body["tools"] = own_tool();
        }
        let http = ctx.http.clone();
        async move { super::common::prompt_tokens(&complete(&http, &body).await?) }
    };
    let (neither, system, tools, both) = (
        tokens(false, false).await?,
        tokens(true, false).await?,
        tokens(false, true).await?,
        tokens(true, true).await?,
    );
    let text = "Be brief.".len() as i64;
    expect_eq("tokens the system message adds beside the tools (its text's bytes: one turn)", text, both - tools)?;
    expect(
        system - neither > text,
        "alone, the system message is a turn of its own (its text and the turn's markers)",
        format!("{} tokens for its {text} bytes", system - neither),
    )
}

async fn many_messages(ctx: Ctx) -> CheckResult {
    let messages: Vec<Value> = (0..2000)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("{i:05}{}", "m".repeat(95))}))
        .collect();
    let answer = complete(&ctx.http, &json!({"messages": messages, "max_tokens": 1})).await?;
    let prompt = super::common::prompt_tokens(&answer)?;
    expect(
        (200_000..262_144).contains(&prompt),
        "prompt tokens: the 200,000 bytes of text and each message's markers, within the context",
        prompt.to_string(),
    )
}

async fn own_arguments_by_schema(ctx: Ctx) -> CheckResult {
    // The other tool's schema says the opposite, so reading the wrong one shows.
    let tools = json!([
        {"type": "function", "function": {"name": "other", "description": "Another tool.",
            "parameters": {"type": "object", "properties": {"q": {"type": "integer"}, "n": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}},
    ]);
    let body =
        complete(&ctx.http, &json!({"messages": [{"role": "user", "content": "look 42 up"}], "tools": tools})).await?;
    let call = &body["choices"][0]["message"]["tool_calls"][0]["function"];
    expect_eq("the call's name", &json!("lookup"), &call["name"])?;
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or("null")).unwrap_or_default();
    expect_eq("the call's arguments, read by lookup's schema", &json!({"q": "42", "n": 7}), &arguments)
}

async fn whole_answer_shape(ctx: Ctx) -> CheckResult {
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let body = complete(&ctx.http, &user("hi")).await?;
    let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let id = body["id"].as_str().unwrap_or_default();
    expect(id.starts_with("chatcmpl-") && id.len() > "chatcmpl-".len(), "an id chatcmpl-…", id)?;
    expect_eq("object", &json!("chat.completion"), &body["object"])?;
    let created = body["created"].as_u64();
    expect(
        created.is_some_and(|c| c + 1 >= before && c <= after + 1),
        format!("created: seconds since 1970, between {before} and {after}"),
        body["created"].to_string(),
    )?;
    expect(body["model"].as_str().is_some_and(|m| !m.is_empty()), "model: a name", body["model"].to_string())?;
    let choices = body["choices"].as_array().cloned().unwrap_or_default();
    expect_eq("number of choices", 1, choices.len())?;
    expect_eq("choices[0].index", &json!(0), &choices[0]["index"])?;
    let message = &choices[0]["message"];
    expect_eq("message.role", &json!("assistant"), &message["role"])?;
    // The default script: "Thinking about it.</think>\n\nHello from the mock engine."
    expect_eq("message.content", &json!("Hello from the mock engine."), &message["content"])?;
    expect_eq("message.reasoning_content", &json!("Thinking about it."), &message["reasoning_content"])?;
    expect(message.get("tool_calls").is_none_or(Value::is_null), "no tool_calls", message["tool_calls"].to_string())?;
    expect_eq("finish_reason", &json!("stop"), &choices[0]["finish_reason"])?;
    let usage = &body["usage"];
    let (prompt, completion) = (usage["prompt_tokens"].as_u64(), usage["completion_tokens"].as_u64());
    expect(
        prompt.is_some_and(|p| p > 0) && completion.is_some_and(|c| c > 0),
        "usage with token counts",
        usage.to_string(),
    )?;
    expect_eq("usage.total_tokens", &json!(prompt.unwrap_or(0) + completion.unwrap_or(0)), &usage["total_tokens"])
}

async fn empty_content_is_null(ctx: Ctx) -> CheckResult {
    let body =
        complete(&ctx.http, &json!({"messages": [{"role": "user", "content": "look cats up"}], "tools": own_tool()}))
            .await?;
    let message = &body["choices"][0]["message"];
    expect_eq("message.content", &Value::Null, &message["content"])?;
    let calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
    expect_eq("number of tool_calls", 1, calls.len())?;
    expect_eq("tool_calls[0].type", &json!("function"), &calls[0]["type"])?;
    expect_eq("tool_calls[0].function.name", &json!("lookup"), &calls[0]["function"]["name"])?;
    let arguments: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap_or("null")).unwrap_or_default();
    expect_eq("tool_calls[0].function.arguments", &json!({"q": "cats"}), &arguments)?;
    expect(calls[0]["id"].as_str().is_some_and(|i| !i.is_empty()), "tool_calls[0].id", calls[0]["id"].to_string())?;
    expect_eq("finish_reason", &json!("tool_calls"), &body["choices"][0]["finish_reason"])
}

/// Every `delta.<field>` text of a stream, joined.
fn joined(stream: &EventStream, field: &str) -> String {
    stream.chunks.iter().filter_map(|c| c["choices"][0]["delta"][field].as_str()).collect()
}

async fn reasoning_split_crlf(ctx: Ctx) -> CheckResult {
    reasoning_and_content(&ctx, "Let me think.", "The answer.").await
}

async fn reasoning_split(ctx: Ctx) -> CheckResult {
    reasoning_and_content(&ctx, "Let me think.", "The answer.").await
}

/// The scenario's answer to "think" splits into `reasoning` and `content`, whole and streamed.
async fn reasoning_and_content(ctx: &Ctx, reasoning: &str, content: &str) -> CheckResult {
    let body = complete(&ctx.http, &user("think")).await?;
    let message = &body["choices"][0]["message"];
    expect_eq("whole: reasoning_content", &json!(reasoning), &message["reasoning_content"])?;
    expect_eq("whole: content", &json!(content), &message["content"])?;
    let stream = super::common::stream(&ctx.http, user("think")).await?;
    expect_eq("streamed: reasoning_content deltas joined", reasoning, &joined(&stream, "reasoning_content"))?;
    expect_eq("streamed: content deltas joined", content, &joined(&stream, "content"))
}

async fn own_tool_call_streamed(ctx: Ctx) -> CheckResult {
    let stream = super::common::stream(
        &ctx.http,
        json!({"messages": [{"role": "user", "content": "look cats up"}], "tools": own_tool()}),
    )
    .await?;
    expect_eq("content deltas joined", "Calling.", &stream.content())?;
    let calls: Vec<&Value> = stream
        .chunks
        .iter()
        .flat_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array().into_iter().flatten())
        .collect();
    let header = calls.first().copied().cloned().unwrap_or_default();
    expect(
        header["id"].as_str().is_some_and(|i| !i.is_empty()),
        "the first tool_calls delta has an id",
        header.to_string(),
    )?;
    expect_eq("the header's type", &json!("function"), &header["type"])?;
    expect_eq("the header's function.name", &json!("lookup"), &header["function"]["name"])?;
    expect_eq("the header's function.arguments", &json!(""), &header["function"]["arguments"])?;
    let arguments: String = calls.iter().filter_map(|c| c["function"]["arguments"].as_str()).collect();
    let parsed: Value = serde_json::from_str(&arguments).unwrap_or_default();
    expect_eq("the arguments deltas joined", &json!({"q": "cats"}), &parsed)?;
    expect(
        calls.iter().all(|c| c["index"] == json!(0)),
        "every tool_calls delta at index 0",
        calls.iter().map(|c| c["index"].to_string()).collect::<Vec<_>>().join(","),
    )?;
    expect_eq("finish_reason", Some("tool_calls"), stream.finish_reason())
}

async fn context_boundary(ctx: Ctx) -> CheckResult {
    // The prompt of one "x": the template's tokens plus one (4.8: one token a byte).
    let one = complete(&ctx.http, &json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1})).await?;
    let overhead = one["usage"]["prompt_tokens"].as_u64().unwrap_or(0).saturating_sub(1) as usize;
    let fits = 64 - 8 - 1 - overhead;
    let asking = |n: usize| json!({"messages": [{"role": "user", "content": "x".repeat(n)}], "max_tokens": 1});
    let answered = complete(&ctx.http, &asking(fits)).await?;
    expect_eq("prompt tokens of the largest prompt that fits", &json!(55), &answered["usage"]["prompt_tokens"])?;
    // 55 + 8 leaves room for one token: max_tokens 1 fits, 2 does not.
    let mut two = asking(fits);
    two["max_tokens"] = json!(2);
    let reply = ctx.http.post_json(CHAT, &two).send().await?;
    expect_eq("status of the 55-token prompt with max_tokens 2 (room for 1)", 400, reply.status)?;
    // 50 + 8 leaves room for 6: max_tokens 6 is answered.
    let mut six = asking(fits - 5);
    six["max_tokens"] = json!(6);
    let reply = ctx.http.post_json(CHAT, &six).send().await?;
    expect_eq("status of a 50-token prompt with max_tokens 6 (room for 6)", 200, reply.status)?;
    let mut unset = asking(fits + 1);
    unset.as_object_mut().map(|b| b.remove("max_tokens"));
    let reply = ctx.http.post_json(CHAT, &unset).send().await?;
    expect_eq("status of a 56-token prompt without max_tokens", 400, reply.status)?;
    let reply = ctx.http.post_json(CHAT, &asking(fits + 1)).send().await?;
    expect_eq("status of a prompt of 56 tokens (56 + 8 = 64)", 400, reply.status)?;
    let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.contains("exceeds the context"), "a message saying it exceeds the context", message)
}

async fn refused_early(ctx: Ctx) -> CheckResult {
    let rows = [
        ("56 bytes in a user message (56 + 8 = 64)", json!([{"role": "user", "content": "x".repeat(56)}]), 56),
        (
            "61 bytes across a user and a tool message",
            json!([{"role": "user", "content": "q"}, {"role": "tool", "content": "y".repeat(60)}]),
            61,
        ),
    ];
    for (what, messages, bytes) in rows {
        let reply = ctx.http.post_json(CHAT, &json!({"messages": messages, "max_tokens": 1})).send().await?;
        expect_eq(&format!("status for {what}"), 400, reply.status)?;
        let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
        let wanted = format!("prompt (more than {bytes} tokens)");
        expect(message.contains(&wanted), format!("for {what}, a message with {wanted:?}"), message)?;
    }
    Ok(())
}
