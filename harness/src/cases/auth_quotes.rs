//! SPEC 2.5's and 2.6's 403 tells the reader what was refused: its message quotes the refused Host or
//! Origin, at most its first 200 characters. Checked at 199, 200 and 201 characters of each, with the
//! quote found in the message by the harness's own cut.

use super::case;
use super::common::{CHAT, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::BASIC;

/// The most of a refused Host or Origin a 403 quotes.
const QUOTED: usize = 200;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "auth.refusals-quote-what-was-refused",
        "2.5",
        Must,
        BASIC,
        "without a key, the 403 for a foreign Host (2.5) and for a foreign Origin (2.6) quotes it in its message: of 199 and 200 characters whole, of 201 its first 200 and no more",
        refusals_quote,
        ["refusals-unquoted", "quotes-cut-at-199"]
    )]
}

/// A host name of exactly `length` characters (dots every 50, so it reads as a name).
fn name_of(length: usize) -> String {
    (0..length).map(|at| if at % 50 == 49 { '.' } else { char::from(b'a' + (at % 26) as u8) }).collect()
}

/// Requires `message` to quote `refused` cut to [`QUOTED`] characters, and not one character more.
fn quotes(what: &str, message: &str, refused: &str) -> CheckResult {
    let cut: String = refused.chars().take(QUOTED).collect();
    expect(
        message.contains(&format!("'{cut}'")),
        format!(
            "the 403 for {what} of {} characters quotes '{}…' ({} characters)",
            refused.len(),
            &cut[..20],
            cut.len()
        ),
        message.to_string(),
    )
}

async fn refusals_quote(ctx: Ctx) -> CheckResult {
    for length in [QUOTED - 1, QUOTED, QUOTED + 1] {
        let host = name_of(length);
        let reply = ctx.http.get("/v1/models").header("host", host.as_bytes()).send().await?;
        expect_eq(&format!("status with a foreign Host of {length} characters"), 403, reply.status)?;
        let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
        quotes("a Host", &message, &host)?;
        let origin = format!("https://{}", name_of(length - "https://".len()));
        let reply = ctx.http.post_json(CHAT, &user("hi")).header("origin", origin.as_bytes()).send().await?;
        expect_eq(&format!("status from a foreign Origin of {length} characters"), 403, reply.status)?;
        let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
        quotes("an Origin", &message, &origin)?;
    }
    Ok(())
}
