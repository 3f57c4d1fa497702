//! SPEC §6: the tool loop — event shapes, opting in, keep-alives, rounds, whole answers, stop.

use std::time::Duration;

use serde_json::{Value, json};

use super::case;
use super::common::{answer, call, complete, first_result, opt_in, read_until, stream};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const ECHO: Scenario = own("echo", || {
    Setup::mcp(None).scripts(vec![call("echo", &[("text", "hello from the tool")]), answer("The tool said hello.")])
});
const SLEEP: Scenario =
    own("sleep", || Setup::mcp(None).scripts(vec![call("sleep", &[("seconds", "2.5")]), answer("ok")]));
const LONG_SLEEP: Scenario =
    own("long-sleep", || Setup::mcp(None).scripts(vec![call("sleep", &[("seconds", "30")]), answer("never")]));
const ROUNDS: Scenario = own("rounds", || {
    Setup::mcp(None).scripts(vec![call("echo", &[("text", "again")])]).set("mcp", "max_rounds", json!(2))
});

/// Two rounds of calls, then an answer, under max_rounds 2: exactly the limit.
const EXACTLY_TWO_ROUNDS: Scenario = own("exactly-two-rounds", || {
    Setup::mcp(None)
        .scripts(vec![call("echo", &[("text", "one")]), call("echo", &[("text", "two")]), answer("done after two")])
        .set("mcp", "max_rounds", json!(2))
});

/// One pass that calls the request's own tool and an MCP tool.
const OWN_AND_MCP: Scenario = own("own-and-mcp", || {
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&[
        ("my_lookup", &[("q", "x")]),
        ("fake__echo", &[("text", "must not run")]),
    ])])
});

/// One pass that calls the fixture's tools with values of every kind, then an answer.
const ARGUMENTS: Scenario = own("arguments", || {
    let calls: [(&str, &[(&str, &str)]); 4] = [
        ("fake__echo", &[("text", "123")]),
        ("fake__echo", &[("text", "{\"a\": 1}")]),
        ("fake__add", &[("a", "2"), ("b", "[1, 2]")]),
        ("fake__big", &[("n", "not json")]),
    ];
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&calls), answer("done")])
});

/// The output ends inside a call: its parameter is never closed.
const UNFINISHED: Scenario = own("unfinished-call", || {
    Setup::mcp(None)
        .scripts(vec!["</think>\n\nLet me check.\n<tool_call>\n<function=fake__echo>\n<parameter=text>\nhalf".into()])
});

/// A complete call, then a long tail of text that `max_tokens` cuts (6.10): the call must not run.
fn call_then_tail() -> String {
    format!(
        "{}\n\n{}",
        fixtures::scripts::call_script("fake__echo", &[("text", "must not run")]),
        "and a long tail ".repeat(200)
    )
}
const CUT_BY_LENGTH: Scenario =
    own("cut-by-length", || Setup::mcp(None).scripts(vec![call_then_tail(), answer("never asked for")]));

/// Two calls in one pass, then an answer: the second pass's prompt holds both results.
const TWO_CALLS: Scenario = crate::scenario::own("two-calls", || {
    let calls: [(&str, &[(&str, &str)]); 2] =
        [("fake__echo", &[("text", "first")]), ("fake__add", &[("a", "2"), ("b", "3")])];
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&calls), super::common::answer("done")])
});

/// The fixture MCP server and a plain answer: requests that must be refused before any pass.
const REFUSALS: Scenario = own("tool-refusals", || Setup::mcp(None).scripts(vec![answer("fine")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "loop.exactly-max-rounds",
            "6.6",
            Must,
            EXACTLY_TWO_ROUNDS,
            "with max_rounds 2, a model that calls in two passes and answers in the third runs both calls, gets no limit event and its answer (N; the max-rounds case checks N+1)",
            exactly_max_rounds,
            ["round-limit-off-by-one", "tool-turn-usage-undetailed"]
        ),
        case!(
            "loop.next-pass-holds-calls-and-results",
            "6.5",
            Must,
            TWO_CALLS,
            "the pass after two calls is token for token the prompt of the conversation with the assistant's text and both calls, then one tool message per result in call order",
            next_pass_prompt,
            ["assistant-text-dropped"]
        ),
        case!(
            "loop.arguments-typed-by-schema",
            "6.4",
            Must,
            ARGUMENTS,
            "a string parameter stays text even when it reads as JSON (123, {\"a\": 1}); others are read as JSON when they parse (2, [1, 2]) and stay text when they do not",
            arguments_typed,
            ["args-all-json", "args-all-text"]
        ),
        case!(
            "loop.unfinished-call-not-run",
            "6.9",
            Must,
            UNFINISHED,
            "a call the output ends inside gets its start event and nothing more, and the tool is never called",
            unfinished_call,
            ["unfinished-calls-run"]
        ),
        case!(
            "loop.length-cut-pass-runs-no-call",
            "6.10",
            Must,
            CUT_BY_LENGTH,
            "a pass that max_tokens ends after a complete MCP call runs no call: the call is reported skipped, the tool never sees it, no second pass runs and the answer ends with length",
            length_cut_pass,
            ["length-cut-calls-run"]
        ),
        case!(
            "loop.structured-format-and-forced-choice-refused",
            "6.11",
            Must,
            REFUSALS,
            "json_object/json_schema beside own tools or MCP, and tool_choice \"required\" or a named function with MCP, are 400; text format, no tools, or a forced choice of own tools only are answered",
            structured_and_forced,
            ["format-with-tools-ok"]
        ),
        case!(
            "loop.own-tool-skips-mcp-calls",
            "6.10",
            Must,
            OWN_AND_MCP,
            "a pass that also calls one of the request's own tools runs no MCP call: it is reported skipped, the tool never sees it, the answer ends with tool_calls",
            own_tool_skips_mcp,
            ["skipped-as-error"]
        ),
        case!(
            "loop.events.exact-shapes",
            "6.2",
            Must,
            ECHO,
            "start, call and result events carry exactly their keys, in order",
            event_shapes,
            ["event-shape", "event-chunks-unenveloped"]
        ),
        case!(
            "loop.opt-in.json-boolean-only",
            "6.1",
            Must,
            ECHO,
            "\"strata_mcp\": \"yes\" or 1 does not run MCP tools",
            opt_in_exact,
            ["opt-in-loose"]
        ),
        case!(
            "loop.keep-alive-while-a-tool-runs",
            "6.3",
            Must,
            SLEEP,
            "a tool running 2.5 s is covered by keep-alive comments, about one a second: 2 to 4",
            keep_alive,
            ["no-keep-alive", "keep-alive-flood"]
        ),
        case!(
            "loop.no-keep-alive-for-a-quick-call",
            "6.3",
            Must,
            ECHO,
            "a call that answers at once (the fixture's echo) sends no keep-alive comment: the first is due a second after the call starts",
            no_keep_alive_for_a_quick_call,
            ["keep-alive-at-once"]
        ),
        case!(
            "loop.mcp-call-beside-own-tools-runs",
            "6.10",
            Must,
            ECHO,
            "a request offering its own tool whose pass calls only an MCP tool runs that call: a call and an ok result with the tool's text, no delta.tool_calls, the answer ends with stop",
            mcp_call_beside_own_tools,
            ["own-tools-stop-mcp"]
        ),
        case!(
            "loop.no-tool-calls-deltas",
            "6.3",
            Must,
            ECHO,
            "MCP calls never stream as delta.tool_calls",
            no_tool_call_deltas,
            ["mcp-as-tool-calls"]
        ),
        case!(
            "loop.max-rounds",
            "6.6",
            Must,
            ROUNDS,
            "past max_rounds: a limit event, the call skipped, finish stop",
            max_rounds,
            ["no-round-limit"]
        ),
        case!(
            "loop.whole-answer-carries-events",
            "6.7",
            Must,
            ECHO,
            "a whole answer holds every event under message.strata_mcp",
            whole_answer_events,
            ["nonstream-no-events"]
        ),
        case!(
            "loop.stop-cancels-the-call",
            "6.8",
            Must,
            LONG_SLEEP,
            "closing the stream during a call sends notifications/cancelled to the tool's server",
            stop_cancels_call,
            ["no-cancel"]
        ),
    ]
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// The stream's first MCP result is a call not run (6.10), and the answer ends with `finish`.
fn skipped_and_ended(stream: &crate::sse::EventStream, finish: &str) -> CheckResult {
    let result = first_result(stream)?;
    expect_eq(
        "the MCP call's result: ok, skipped, text",
        (false, true, "not run"),
        (result.ok, result.skipped, result.text.as_str()),
    )?;
    expect_eq("finish_reason", Some(finish), stream.finish_reason())
}

async fn own_tool_skips_mcp(ctx: Ctx) -> CheckResult {
    let mut body = opt_in();
    body["tools"] = json!([{"type": "function", "function": {"name": "my_lookup", "description": "the client's own",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]);
    let stream = stream(&ctx.http, body).await?;
    skipped_and_ended(&stream, "tool_calls")?;
    let calls = stream.chunks.iter().filter(|c| c["choices"][0]["delta"].get("tool_calls").is_some()).count();
    expect(calls > 0, "the own call streamed as delta.tool_calls", "none")?;
    let ran = ctx.fixture()?.entries().iter().any(|e| e["call"] == "echo");
    expect(!ran, "the MCP tool never called", "echo was called")
}

async fn event_shapes(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let events = stream.mcp_events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    expect_eq("events", vec!["start", "call", "result"], kinds)?;
    expect_eq("start keys", vec!["event", "id", "name"], keys(&events[0]).iter().map(String::as_str).collect())?;
    expect_eq(
        "call keys",
        vec!["event", "id", "name", "server", "tool", "arguments", "round"],
        keys(&events[1]).iter().map(String::as_str).collect(),
    )?;
    expect_eq(
        "result keys",
        vec!["event", "id", "ok", "text", "chars", "truncated", "ms"],
        keys(&events[2]).iter().map(String::as_str).collect(),
    )?;
    expect_eq(
        "call",
        json!({"name": "fake__echo", "server": "fake", "tool": "echo", "arguments": {"text": "hello from the tool"}, "round": 1}),
        json!({"name": events[1]["name"], "server": events[1]["server"], "tool": events[1]["tool"], "arguments": events[1]["arguments"], "round": events[1]["round"]}),
    )?;
    expect_eq(
        "result",
        json!({"ok": true, "text": "hello from the tool", "chars": 19, "truncated": false}),
        json!({"ok": events[2]["ok"], "text": events[2]["text"], "chars": events[2]["chars"], "truncated": events[2]["truncated"]}),
    )?;
    expect(events.iter().all(|e| e["id"] == events[0]["id"]), "one id for the call", format!("{events:?}"))
}

async fn opt_in_exact(ctx: Ctx) -> CheckResult {
    for flag in [json!("yes"), json!(1)] {
        let mut body = opt_in();
        body["strata_mcp"] = flag.clone();
        let stream = stream(&ctx.http, body).await?;
        expect(
            stream.mcp_events().is_empty(),
            format!("no MCP events with strata_mcp {flag}"),
            format!("{:?}", stream.mcp_events()),
        )?;
    }
    let calls = ctx.fixture()?.entries().into_iter().filter(|e| e.get("call").is_some()).count();
    expect_eq("tool calls the fixture saw", 0, calls)
}

async fn keep_alive(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    // About every second, the first a second in: 2 during 2.5 s, and never many more (4 allows for a
    // slow start of the call).
    expect(
        (2..=4).contains(&stream.comments),
        "2 to 4 keep-alive comments during a 2.5 s call (about one a second)",
        format!("{} comments", stream.comments),
    )?;
    expect_eq("result", Some("slept"), Some(first_result(&stream)?.text.as_str()))
}

async fn no_keep_alive_for_a_quick_call(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    expect_eq("result", Some("hello from the tool"), Some(first_result(&stream)?.text.as_str()))?;
    expect_eq("keep-alive comments for a call that answered at once", 0, stream.comments)
}

async fn mcp_call_beside_own_tools(ctx: Ctx) -> CheckResult {
    let mut body = opt_in();
    body["tools"] = json!([{"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]);
    let stream = stream(&ctx.http, body).await?;
    let result = first_result(&stream)?;
    expect_eq("the MCP call's result", (true, "hello from the tool"), (result.ok, result.text.as_str()))?;
    let deltas = stream.chunks.iter().filter(|c| c["choices"][0]["delta"].get("tool_calls").is_some()).count();
    expect_eq("chunks with delta.tool_calls", 0, deltas)?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn no_tool_call_deltas(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let deltas = stream.chunks.iter().filter(|c| c["choices"][0]["delta"].get("tool_calls").is_some()).count();
    expect_eq("chunks with delta.tool_calls", 0, deltas)?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn max_rounds(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let events = stream.mcp_events();
    let calls = events.iter().filter(|e| e["event"] == "call").count();
    expect_eq("calls run with max_rounds 2", 2, calls)?;
    expect(
        events.iter().any(|e| *e == json!({"event": "limit", "max_rounds": 2})),
        "{\"event\":\"limit\",\"max_rounds\":2}",
        format!("{events:?}"),
    )?;
    let last = events.last().cloned().unwrap_or_default();
    expect_eq("last event skipped", Some(true), last["skipped"].as_bool())?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn whole_answer_events(ctx: Ctx) -> CheckResult {
    let body = complete(&ctx.http, &opt_in()).await?;
    let events = body["choices"][0]["message"]["strata_mcp"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    expect_eq("message.strata_mcp events", vec!["start", "call", "result"], kinds)?;
    expect_eq("content", Some("Let me check.The tool said hello."), body["choices"][0]["message"]["content"].as_str())
}

async fn stop_cancels_call(ctx: Ctx) -> CheckResult {
    let log = ctx.fixture()?.clone();
    let (response, _) = read_until(&ctx.http, opt_in(), |seen| seen.contains("\"event\":\"call\"")).await?;
    expect(
        log.wait_for(Duration::from_secs(10), |e| e["call"] == "sleep").await.is_some(),
        "the call reached the tool",
        "it did not",
    )?;
    drop(response);
    let cancelled = log.wait_for(Duration::from_secs(10), |e| e["cancelled"] == "sleep").await;
    expect(
        cancelled.is_some(),
        "notifications/cancelled for the running call",
        format!("fixture log: {:?}", log.entries()),
    )
}

async fn structured_and_forced(ctx: Ctx) -> CheckResult {
    let own_tool = json!([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]);
    let json_object = json!({"type": "json_object"});
    let json_schema = json!({"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}});
    let named = json!({"type": "function", "function": {"name": "fake__echo"}});
    let ask = |extra: Value| {
        let mut body = json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8});
        for (key, value) in extra.as_object().into_iter().flatten() {
            body[key] = value.clone();
        }
        body
    };
    let rows = [
        ("json_object beside own tools", ask(json!({"response_format": json_object, "tools": own_tool})), 400),
        ("json_schema beside own tools", ask(json!({"response_format": json_schema, "tools": own_tool})), 400),
        ("json_object with MCP", ask(json!({"response_format": json_object, "strata_mcp": true})), 400),
        ("json_schema with MCP", ask(json!({"response_format": json_schema, "strata_mcp": true})), 400),
        ("tool_choice required with MCP", ask(json!({"tool_choice": "required", "strata_mcp": true})), 400),
        ("a named tool_choice with MCP", ask(json!({"tool_choice": named, "strata_mcp": true})), 400),
        ("text format beside own tools", ask(json!({"response_format": {"type": "text"}, "tools": own_tool})), 200),
        ("json_object without tools", ask(json!({"response_format": json_object})), 200),
        ("tool_choice auto with MCP", ask(json!({"tool_choice": "auto", "strata_mcp": true})), 200),
        ("tool_choice required, own tools only", ask(json!({"tool_choice": "required", "tools": own_tool})), 200),
    ];
    for (what, body, status) in rows {
        let reply = ctx.http.post_json(super::common::CHAT, &body).send().await?;
        expect_eq(&format!("status for {what}"), status, reply.status)?;
        if status == 400 {
            let kind = reply.json()?["error"]["type"].clone();
            expect_eq(&format!("error type for {what}"), &json!("invalid_request_error"), &kind)?;
        }
    }
    Ok(())
}

async fn arguments_typed(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let wanted = [
        ("echo", json!({"text": "123"})),
        ("echo", json!({"text": "{\"a\": 1}"})),
        ("add", json!({"a": 2, "b": [1, 2]})),
        ("big", json!({"n": "not json"})),
    ];
    let announced: Vec<Value> = stream
        .events()?
        .into_iter()
        .filter_map(|e| match e {
            crate::events::Event::Call { arguments, .. } => Some(arguments),
            _ => None,
        })
        .collect();
    let wanted_arguments: Vec<Value> = wanted.iter().map(|(_, a)| a.clone()).collect();
    expect_eq("the call events' arguments, in call order", &wanted_arguments, &announced)?;
    let received: Vec<(String, Value)> = ctx
        .fixture()?
        .entries()
        .into_iter()
        .filter_map(|e| Some((e["call"].as_str()?.to_string(), e["arguments"].clone())))
        .collect();
    let wanted: Vec<(String, Value)> = wanted.into_iter().map(|(t, a)| (t.to_string(), a)).collect();
    expect_eq("what the tools received, in call order", &wanted, &received)
}

async fn unfinished_call(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let events = stream.events()?;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            crate::events::Event::Start { name, .. } => format!("start {name}"),
            crate::events::Event::Call { name, .. } => format!("call {name}"),
            crate::events::Event::Result(r) => format!("result ok={} skipped={}", r.ok, r.skipped),
            crate::events::Event::Limit { .. } => "limit".into(),
        })
        .collect();
    expect_eq("the MCP events", vec!["start fake__echo".to_string()], kinds)?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calls = ctx.fixture()?.entries().into_iter().filter(|e| e.get("call").is_some()).count();
    expect_eq("calls the fixture server received", 0, calls)?;
    expect(stream.done, "the answer ends with [DONE]", "no [DONE]")
}

async fn length_cut_pass(ctx: Ctx) -> CheckResult {
    let mut body = opt_in();
    // Room for the call and a few words of the tail: every token is at least one byte of the script.
    let call_bytes = call_then_tail().find("</tool_call>").map_or(0, |at| at + "</tool_call>".len());
    body["max_tokens"] = json!(call_bytes + 40);
    let stream = stream(&ctx.http, body).await?;
    skipped_and_ended(&stream, "length")?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ran = ctx.fixture()?.entries().iter().any(|e| e["call"] == "echo");
    expect(!ran, "the MCP tool never called", "echo was called")
}

async fn next_pass_prompt(ctx: Ctx) -> CheckResult {
    use super::common::prompt_tokens;
    let offered = super::hub::offered_tools(&ctx).await?;
    let body = complete(&ctx.http, &opt_in()).await?;
    // 4.5: prompt_tokens is the last pass's prompt, here the second.
    let second_pass = prompt_tokens(&body)?;
    let call = |id: &str, name: &str, arguments: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}});
    let by_hand = json!({"messages": [
        super::common::opt_in()["messages"][0].clone(),
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            call("call_1", "fake__echo", json!({"text": "first"})),
            call("call_2", "fake__add", json!({"a": 2, "b": 3})),
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "first"},
        {"role": "tool", "tool_call_id": "call_2", "content": "5"},
    ], "tools": offered});
    let by_hand = prompt_tokens(&complete(&ctx.http, &by_hand).await?)?;
    expect_eq("the second pass's prompt tokens vs. the conversation written out", by_hand, second_pass)
}

async fn exactly_max_rounds(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let events = stream.mcp_events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    expect_eq("the events of two rounds", vec!["start", "call", "result", "start", "call", "result"], kinds)?;
    expect(stream.content().ends_with("done after two"), "the third pass's answer", stream.content())?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}
