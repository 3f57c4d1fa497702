//! SPEC 4.8's ChatML turn, counted exactly: a message that is not a tool result and not the leading
//! system message is `<|im_start|>` ROLE `\n` TEXT `<|im_end|>` `\n` — two special tokens and one token
//! a byte for the rest — so appending one adds 4 + the role's bytes + the text's bytes to
//! `usage.prompt_tokens` (4.5). Counted here from the clause, for each role a client may send.

use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, prompt_tokens};
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::BASIC;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "chat.each-turn-is-its-chatml-tokens",
        "4.8",
        Must,
        BASIC,
        "appending a user, an assistant or a later system message of non-ASCII text to a conversation adds exactly 4 + the role's bytes + the text's bytes to usage.prompt_tokens: <|im_start|> and <|im_end|> one token each, the role as sent, two newlines, the text a token a byte",
        each_turn_is_its_chatml_tokens,
        ["assistant-as-user"]
    )]
}

/// The text each appended message holds: accented, CJK and astral characters of 2, 3 and 4 bytes.
const TEXT: &str = "é 日本 😀 ok";

async fn prompt_of(ctx: &Ctx, messages: &Value) -> Result<i64, crate::case::CheckError> {
    let reply = ctx.http.post_json(CHAT, &json!({"messages": messages, "max_tokens": 1})).send().await?;
    expect_eq(&format!("status for {messages}"), 200, reply.status)?;
    prompt_tokens(&reply.json()?)
}

async fn each_turn_is_its_chatml_tokens(ctx: Ctx) -> CheckResult {
    let base = json!([{"role": "user", "content": "first"}]);
    let before = prompt_of(&ctx, &base).await?;
    for role in ["user", "assistant", "system"] {
        let mut longer = base.clone();
        if let Some(list) = longer.as_array_mut() {
            list.push(json!({"role": role, "content": TEXT}));
            // The conversation goes on with a user turn, as a client's does after an answer.
            list.push(json!({"role": "user", "content": "next"}));
        }
        let after = prompt_of(&ctx, &longer).await?;
        let next_turn = 4 + "user".len() + "next".len();
        let wanted = (4 + role.len() + TEXT.len() + next_turn) as i64;
        expect_eq(
            &format!("prompt tokens added by a {role} message of {TEXT:?} and a user message \"next\""),
            wanted,
            after - before,
        )?;
    }
    Ok(())
}
