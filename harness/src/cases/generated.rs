//! Generated cases (`gen.*`): each runs `--gen-budget` requests drawn from `--seed` against a model of
//! its clauses in `crate::generate`, and on a failure reports the shrunk request.

use super::case;
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::{lifting, property};
use crate::scenario::BASIC;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.lifting-model",
        "11.2",
        Must,
        BASIC,
        "generated conversations (every role; strings and text parts; PNG, JPEG, WebP and GIF pictures of 700 to 1,100 bytes with and without data: prefixes, padding kept, dropped or wrong, last groups of 2 or 3 ending on digits; base64 that is no picture; short runs; more than 8 pictures a message; non-ASCII text against the runs) add exactly the prompt tokens of the 11.1-11.5 model's text",
        lifting_model,
        [
            "lift-swallows-non-ascii",
            "lift-digit-end-refused",
            "lift-first-text-part-only",
            "lift-anything",
            "lift-users",
            "lift-note",
            "lift-keeps-base64",
            "lift-cap-off-by-one",
            "lift-short-runs",
            "lift-partial-padding",
            "lift-per-part"
        ]
    )]
}

async fn lifting_model(ctx: Ctx) -> CheckResult {
    let http = ctx.http.clone();
    property("lifting", lifting::conversations(), lifting::describe, move |conversation| {
        lifting::check(http.clone(), conversation)
    })
    .await
}
