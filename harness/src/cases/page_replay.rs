//! SPEC 13.14 in a real browser: the next turn sends the conversation back as it streamed. The
//! expected request is computed here from the answer the page was streamed (the recording proxy keeps
//! it), by this file's own model of the clause, and compared with what the page then POSTs.

use serde_json::{Value, json};

use super::common::call;
use super::page_visit::{Visit, at_768, page};
use crate::browser::page::{idle, sel, send, tools_settled, wait_until};
use crate::case::{Case, CheckResult, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{FIXTURE_SERVER, Scenario, own};

/// The three turns' messages.
const FIRST: &str = "Geh die Werkzeuge durch ✓";
const SECOND: &str = "Nur Werkzeuge, kein Text";
const THIRD: &str = "Are you still there?";
/// Text the first pass writes before its two calls, and the third before its call past the limit.
const BEFORE_CALLS: &str = "Zuerst zwei: café ① FIRST-PASS";
const AFTER_CALLS: &str = "Danach: 日本 😀 THIRD-PASS";
/// Reasoning of the first pass: shown, never sent back (it is not `content`).
const REASONING: &str = "Weighing it: 思考 REASONING-CANARY.";
const ECHOED: &str = "Grüße ECHO-CANARY";

/// A pass that calls the fixture's `tool` (with `text`, when given) and streams no text at all.
fn bare_call(tool: &str, text: Option<&str>) -> String {
    let parameter = text.map(|t| format!("<parameter=text>\n{t}\n</parameter>\n")).unwrap_or_default();
    format!("</think><tool_call>\n<function={FIXTURE_SERVER}__{tool}>\n{parameter}</function>\n</tool_call>")
}

/// The first turn — round 1: text, then echo, add and a picture (its result has text and a picture);
/// round 2: fail, with no text at all; then text and a call past `max_rounds` 2 (not run). The second
/// turn: three passes of calls and no text (two rounds, one call past the limit), so nothing streamed
/// after its last round. The third answers "Still here.".
const REPLAY: Scenario = own("page-replay", || {
    let first = fixtures::scripts::calls_script(&[
        ("fake__echo", &[("text", ECHOED)]),
        ("fake__add", &[("a", "1234567"), ("b", "7654321")]),
        ("fake__picture", &[("width", "64"), ("height", "48"), ("count", "1")]),
    ])
    .replacen("Let me check.", BEFORE_CALLS, 1);
    page(vec![
        format!("{REASONING}{first}"),
        bare_call("fail", None),
        call("echo", &[("text", "past the limit")]).replacen("Let me check.", AFTER_CALLS, 1),
        bare_call("echo", Some("eins")),
        bare_call("echo", Some("zwei")),
        bare_call("echo", Some("drei, past the limit")),
        super::common::answer("Still here."),
    ])
    .set("mcp", "max_rounds", json!(2))
});

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.next-turn-sends-the-conversation-as-it-streamed",
        "13.14",
        Must,
        REPLAY,
        "after a turn of three passes (text and three calls, one with a picture; a call with no text; text and a call past the limit) and a turn of calls with no text at all, the next turn's request holds the user messages, one assistant message per round with the text it streamed (non-ASCII intact, nothing added, no reasoning) and its calls (id, name, arguments), one tool message per call run (its result text, an error's too, beside its picture's reference), the closing text where one streamed (no empty message where none did), and the new message",
        next_turn_replays,
        [
            "page-rounds-merged",
            "page-rounds-joined-by-a-blank-line",
            "page-calls-sent-by-tool-name",
            "page-error-results-dropped",
            "page-arguments-dropped",
            "page-tool-text-dropped-beside-pictures",
            "page-empty-closing-message"
        ]
    )]
}

async fn next_turn_replays(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.next-turn-sends-the-conversation-as-it-streamed", |visit| Box::pin(replays_at(visit))).await
}

async fn replays_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), FIRST).await?;
    wait_until(visit.client(), &tools_settled(5), 30, "five tool blocks settled and the turn over").await?;
    send(visit.client(), SECOND).await?;
    wait_until(visit.client(), &tools_settled(8), 30, "three more tool blocks settled and the turn over").await?;
    send(visit.client(), THIRD).await?;
    let answered = format!(
        "[...document.querySelectorAll('{}')].some(b => b.textContent.includes('Still here.')) && {}",
        sel("bubble"),
        idle()
    );
    wait_until(visit.client(), &answered, 30, "the third turn answered").await?;
    let chats: Vec<_> = visit
        .proxy
        .log()
        .into_iter()
        .filter(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .collect();
    expect_eq("chat requests the page made (one a turn)", 3, chats.len())?;
    let mut expected = vec![json!({"role": "user", "content": FIRST})];
    expected.extend(replayed(&chats[0].answer_text()));
    expected.push(json!({"role": "user", "content": SECOND}));
    expected.extend(replayed(&chats[1].answer_text()));
    expected.push(json!({"role": "user", "content": THIRD}));
    let sent: Value = serde_json::from_str(chats[2].body.as_deref().unwrap_or_default()).unwrap_or_default();
    let sent = sent["messages"].as_array().cloned().unwrap_or_default();
    compare(&expected, &sent)
}

/// One call of a round, as the stream announced it.
struct Call {
    id: Value,
    name: Value,
    arguments: Value,
    result: Option<(String, Vec<String>)>,
}

/// The messages SPEC 13.14 says an answer goes back as, from the SSE `stream` it arrived in: per
/// round (6.2's `round` on each `call`), an assistant message with the `delta.content` text streamed
/// before it and its calls, then one tool message per call that has a result (its text, and its
/// pictures' references); calls never run (no `call` event, or `skipped`) are left out; text streamed
/// after the last round closes the answer as an assistant message of its own.
pub(super) fn replayed(stream: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut round = Value::Null;
    let chunks = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok());
    for chunk in chunks {
        let event = &chunk["strata_mcp"];
        if event.is_object() {
            if event["event"] == "call" {
                if !calls.is_empty() && event["round"] != round {
                    flush(&mut out, &mut text, &mut calls);
                }
                round = event["round"].clone();
                calls.push(Call {
                    id: event["id"].clone(),
                    name: event["name"].clone(),
                    arguments: event["arguments"].clone(),
                    result: None,
                });
            } else if event["event"] == "result" && event["skipped"] != json!(true) {
                let media = event["media"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m["ref"].as_str().map(str::to_string))
                    .collect();
                let text = event["text"].as_str().unwrap_or_default().to_string();
                if let Some(call) = calls.iter_mut().find(|c| c.id == event["id"]) {
                    call.result = Some((text, media));
                }
            }
        } else if let Some(content) = chunk["choices"][0]["delta"]["content"].as_str() {
            if !calls.is_empty() {
                flush(&mut out, &mut text, &mut calls);
            }
            text.push_str(content);
        }
    }
    flush(&mut out, &mut text, &mut calls);
    if !text.is_empty() {
        out.push(json!({"role": "assistant", "content": text}));
    }
    out
}

/// A round's assistant message and its tool messages, into `out` (nothing when no call has a result).
fn flush(out: &mut Vec<Value>, text: &mut String, calls: &mut Vec<Call>) {
    let ran: Vec<Call> = calls.drain(..).filter(|c| c.result.is_some()).collect();
    if ran.is_empty() {
        return;
    }
    let tool_calls: Vec<Value> = ran
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    out.push(json!({"role": "assistant", "content": std::mem::take(text), "tool_calls": tool_calls}));
    for c in ran {
        let (result, media) = c.result.unwrap_or_default();
        out.push(json!({"role": "tool", "tool_call_id": c.id, "content": result, "media": media}));
    }
}

/// A message's content as (its text, its pictures' URLs): a string, or parts (text parts joined,
/// `image_url` parts' URLs in order); none is "".
fn content_of(message: &Value) -> (String, Vec<String>) {
    match &message["content"] {
        Value::String(text) => (text.clone(), Vec::new()),
        Value::Array(parts) => {
            let text = parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str()).collect();
            let urls = parts
                .iter()
                .filter(|p| p["type"] == "image_url")
                .filter_map(|p| p["image_url"]["url"].as_str().map(str::to_string))
                .collect();
            (text, urls)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// A call as compared: id, name, and the arguments as JSON (a page may space them as it likes).
fn call_of(tool_call: &Value) -> Value {
    let arguments = &tool_call["function"]["arguments"];
    let arguments = arguments.as_str().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_else(|| arguments.clone());
    json!({"id": tool_call["id"], "type": tool_call["type"], "name": tool_call["function"]["name"], "arguments": arguments})
}

/// Every message of `expected` against `sent`, in order: role, content (text and pictures), the
/// calls of an assistant message, a tool message's `tool_call_id`; the first difference fails.
pub(super) fn compare(expected: &[Value], sent: &[Value]) -> CheckResult {
    let roles = |messages: &[Value]| messages.iter().map(|m| m["role"].clone()).collect::<Vec<_>>();
    expect_eq("the roles of the next turn's messages", json!(roles(expected)), json!(roles(sent)))?;
    for (i, (want, got)) in expected.iter().zip(sent).enumerate() {
        let what = format!("message {} ({})", i + 1, want["role"].as_str().unwrap_or_default());
        let (text, pictures) = content_of(got);
        expect_eq(&format!("{what}: its text"), json!(content_of(want).0), json!(text))?;
        if want["role"] == "tool" {
            expect_eq(&format!("{what}: its pictures"), want["media"].clone(), json!(pictures))?;
            expect_eq(&format!("{what}: tool_call_id"), want["tool_call_id"].clone(), got["tool_call_id"].clone())?;
        }
        let calls = |m: &Value| m["tool_calls"].as_array().into_iter().flatten().map(call_of).collect::<Vec<_>>();
        let wanted = want["tool_calls"].as_array().into_iter().flatten().map(|c| {
            json!({"id": c["id"], "type": "function", "name": c["function"]["name"], "arguments": c["function"]["arguments"]})
        });
        expect_eq(&format!("{what}: its calls"), json!(wanted.collect::<Vec<_>>()), json!(calls(got)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(value: Value) -> String {
        format!("data: {value}\n\n")
    }

    fn content(text: &str) -> String {
        data(json!({"choices": [{"delta": {"content": text}}]}))
    }

    fn mcp(event: Value) -> String {
        data(json!({"choices": [{"delta": {}}], "strata_mcp": event}))
    }

    fn call(id: &str, round: u32) -> String {
        mcp(
            json!({"event": "call", "id": id, "name": "fake__echo", "server": "fake", "tool": "echo", "arguments": {"text": id}, "round": round}),
        )
    }

    fn result(id: &str, text: &str) -> String {
        mcp(
            json!({"event": "result", "id": id, "ok": true, "text": text, "chars": text.len(), "truncated": false, "ms": 3}),
        )
    }

    #[test]
    fn rounds_split_by_round_even_without_text_between() {
        let stream = [
            data(json!({"choices": [{"delta": {"reasoning_content": "hmm"}}]})),
            content("A "),
            content("ü"),
            mcp(json!({"event": "start", "id": "1", "name": "fake__echo"})),
            call("1", 1),
            result("1", "one"),
            call("2", 2),
            result("2", "two"),
            content("B"),
            mcp(json!({"event": "start", "id": "3", "name": "fake__echo"})),
            mcp(json!({"event": "limit", "max_rounds": 2})),
            mcp(json!({"event": "result", "id": "3", "ok": false, "skipped": true, "text": "not run", "chars": 0, "truncated": false, "ms": 0})),
            ": keep-alive\n\n".to_string(),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let messages = replayed(&stream);
        let roles: Vec<_> = messages.iter().map(|m| m["role"].as_str().unwrap_or_default()).collect();
        assert_eq!(roles, ["assistant", "tool", "assistant", "tool", "assistant"]);
        assert_eq!(messages[0]["content"], "A ü");
        assert_eq!(messages[0]["tool_calls"][0]["id"], "1");
        assert_eq!(messages[1]["content"], "one");
        assert_eq!(messages[2]["content"], "");
        assert_eq!(messages[2]["tool_calls"][0]["function"]["arguments"], json!({"text": "2"}));
        assert_eq!(messages[4]["content"], "B");
    }

    #[test]
    fn a_call_without_a_result_is_left_out_and_media_refs_go_to_the_tool_message() {
        let with_media = mcp(
            json!({"event": "result", "id": "1", "ok": true, "text": "pic", "chars": 3, "truncated": false, "ms": 3,
            "media": [{"ref": "strata-tool-media:ab.png", "url": "/tool-media/ab.png"}]}),
        );
        let stream = [call("1", 1), with_media, call("2", 1)].concat();
        let messages = replayed(&stream);
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["tool_calls"].as_array().map(Vec::len), Some(1));
        assert_eq!(messages[1]["media"], json!(["strata-tool-media:ab.png"]));
    }

    #[test]
    fn the_comparison_fails_on_each_kind_of_difference() {
        let stream = [content("A"), call("1", 1), result("1", "one"), content("B")].concat();
        let expected = replayed(&stream);
        let good = vec![
            json!({"role": "assistant", "content": "A", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "fake__echo", "arguments": "{\"text\": \"1\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "1", "content": [{"type": "text", "text": "one"}]}),
            json!({"role": "assistant", "content": "B"}),
        ];
        assert!(compare(&expected, &good).is_ok());
        let edits: [fn(&mut Vec<Value>); 6] = [
            |m| m[2]["content"] = json!("\n\nB"),
            |m| m[0]["tool_calls"][0]["function"]["name"] = json!("echo"),
            |m| m[0]["tool_calls"][0]["function"]["arguments"] = json!("{}"),
            |m| m[1]["tool_call_id"] = json!("2"),
            |m| m[1]["content"] = json!("on"),
            |m| {
                m.remove(2);
            },
        ];
        for edit in edits {
            let mut bad = good.clone();
            edit(&mut bad);
            assert!(compare(&expected, &bad).is_err(), "{bad:?}");
        }
    }
}
