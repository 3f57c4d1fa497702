//! SPEC 4.10's bound on a request's JSON values: the known fields of a chat body may hold 1,000,000
//! values (every object, array, string, number, boolean and null, at any depth); one more is 413
//! "the request holds more than 1000000 JSON values"; a body of exactly 1,000,000 that is then not
//! JSON is the 400 of malformed JSON, not the 413.

#[cfg(test)]
use serde_json::Value;

use super::case;
use super::common::post_chat_body;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::BASIC;

/// SPEC 4.10's bound.
const MAX_VALUES: usize = 1_000_000;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "chat.json-values-bounded",
        "4.10",
        Must,
        BASIC,
        "chat bodies whose known fields hold 999,999 and 1,000,000 JSON values are read, one of 1,000,001 is 413 \"the request holds more than 1000000 JSON values\" in the JSON error shape, once with text parts (3 values each: the object and two strings) and once with nulls, booleans, numbers, strings, [] and {} (one each); 1,000,000 values followed by a stray character is the 400 of malformed JSON",
        json_values_bounded,
        ["json-values-off-by-one", "json-values-unbounded"]
    )]
}

/// The one-value items of the second body: every kind of scalar the clause counts (null, booleans,
/// integers, a float, a non-ASCII string) and the empty array and object.
const SCALARS: [&str; 9] = ["null", "true", "false", "0", "-7", "2.5e3", "\"é\"", "[]", "{}"];

/// A chat body of exactly `values` JSON values in its known fields (`values` ≥ 5) whose user message's
/// content is `SCALARS` over and over: the top object, `messages`, the message, its role and its
/// content list (5), then one value an item. The server refuses such content (its parts are not
/// objects), but only after it has counted it.
fn body_of_scalars(values: usize) -> String {
    let mut body = String::with_capacity((values - 5) * 5 + 60);
    body.push_str(r#"{"messages": [{"role": "user", "content": ["#);
    for (at, item) in SCALARS.iter().cycle().take(values - 5).enumerate() {
        if at > 0 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push_str("]}]}");
    body
}

/// A chat body of exactly `values` JSON values in its known fields (`values` ≥ 5): one user message
/// whose content is empty text parts, and `stream` and `max_tokens` as the count needs them. Counted
/// by the clause: the top object, `messages`, the message, its role, its content list (5), 3 a part
/// (the object and two strings), `stream` and `max_tokens` one each.
fn body_of_values(values: usize) -> String {
    let fixed = 5;
    let (parts, extras) = ((values - fixed) / 3, (values - fixed) % 3);
    let mut body = String::with_capacity(parts * 26 + 100);
    body.push_str(r#"{"messages": [{"role": "user", "content": ["#);
    for at in 0..parts {
        if at > 0 {
            body.push(',');
        }
        body.push_str(r#"{"type":"text","text":""}"#);
    }
    body.push_str("]}]");
    for extra in [r#", "stream": false"#, r#", "max_tokens": 4"#].iter().take(extras) {
        body.push_str(extra);
    }
    body.push('}');
    body
}

/// How many JSON values `value` holds, counted by walking the parsed value (the check of the writer
/// above, never of the server).
#[cfg(test)]
fn count_values(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_values).sum(),
        Value::Object(fields) => fields.values().map(count_values).sum(),
        _ => 0,
    }
}

async fn json_values_bounded(ctx: Ctx) -> CheckResult {
    for (kind, writer) in [
        ("text parts", body_of_values as fn(usize) -> String),
        ("nulls, booleans, numbers, strings, [] and {}", body_of_scalars),
    ] {
        for values in [MAX_VALUES - 1, MAX_VALUES] {
            let reply = post_chat_body(&ctx.http, writer(values)).await?;
            expect(
                reply.status != 413 && reply.status < 500,
                format!("a body of {values} JSON values ({kind}) read (not 413)"),
                format!(
                    "{} {}",
                    reply.status,
                    String::from_utf8_lossy(&reply.body).chars().take(300).collect::<String>()
                ),
            )?;
        }
        let over = post_chat_body(&ctx.http, writer(MAX_VALUES + 1)).await?;
        expect_eq(&format!("status of a body of {} JSON values ({kind})", MAX_VALUES + 1), 413, over.status)?;
        let shape = over.json()?;
        expect_eq(
            "its error message",
            Some("the request holds more than 1000000 JSON values"),
            shape["error"]["message"].as_str(),
        )?;
        expect_eq("its error type", Some("invalid_request_error"), shape["error"]["type"].as_str())?;
    }
    let stray = post_chat_body(&ctx.http, format!("{} x", body_of_values(MAX_VALUES))).await?;
    expect_eq("status of 1,000,000 JSON values and then a stray `x`", 400, stray.status)?;
    let message = stray.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.starts_with("the request is malformed"), "the malformed-request message", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_hold_exactly_the_values_asked_for() {
        for values in [5, 6, 7, 8, 999_999, 1_000_000, 1_000_001] {
            let parsed: Value = serde_json::from_str(&body_of_values(values)).expect("JSON");
            assert_eq!(count_values(&parsed), values);
            let parsed: Value = serde_json::from_str(&body_of_scalars(values)).expect("JSON");
            assert_eq!(count_values(&parsed), values);
        }
    }
}
