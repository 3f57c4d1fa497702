//! `gen.cut-character-model`: every member of a set at every point: answers of characters of each UTF-8
//! width, cut by `max_tokens` after each byte (`generate::cut_characters`), on a server of their own.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::covering_first;
use crate::generate::cut_characters::{self, Answer};
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.cut-character-model",
        "4.6",
        Must,
        LAUNCHES,
        "answers of characters of 1, 2, 3 and 4 UTF-8 bytes (covering texts holding each width, then drawn ones), each cut by max_tokens after every one of its bytes: the content, whole and streamed, is the whole characters kept and exactly one U+FFFD for a character cut inside (an eighth of --gen-budget drawn beside the covering texts: each starts a server)",
        cut_character_model,
        cut_characters::VARIANTS
    )]
}

async fn cut_character_model(ctx: Ctx) -> CheckResult {
    let check = move |answer: Answer| {
        let ctx = ctx.clone();
        async move {
            let server = ctx.start_running(&json!({}), &[answer.script()], &[]).await.map_err(|e| format!("{e:?}"))?;
            let mut wrong = Vec::new();
            for max_tokens in answer.cuts() {
                let body = json!({"messages": [{"role": "user", "content": "say it"}], "max_tokens": max_tokens});
                let whole = super::common::complete(&server.http, &body).await.map_err(|e| format!("{e:?}"))?;
                let whole = whole["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_string();
                let streamed = super::common::stream(&server.http, body).await.map_err(|e| format!("{e:?}"))?.content();
                let wanted = answer.content(max_tokens);
                if whole != wanted || streamed != wanted {
                    wrong.push(format!(
                        "max_tokens {max_tokens}: whole {whole:?}, streamed {streamed:?} (4.6f: {wanted:?})"
                    ));
                }
            }
            if wrong.is_empty() { Ok(()) } else { Err(wrong.join("\n")) }
        }
    };
    covering_first(
        "cut-character",
        8,
        (cut_characters::covering(), 1),
        cut_characters::answers(),
        cut_characters::describe,
        check,
    )
    .await
}
