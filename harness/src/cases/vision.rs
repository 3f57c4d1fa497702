//! SPEC §12: the vision path, seen through `usage.prompt_tokens`.

use super::case;
use super::common::{answer, call, complete, opt_in, prompt_tokens};
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const ONE_THEN_NONE: Scenario = own("vision-mcp-picture", || {
    Setup::mcp(Some(true)).vision().scripts(vec![
        call("picture", &[("width", "640"), ("height", "360"), ("count", "1")]),
        answer("seen"),
        call("picture", &[("width", "640"), ("height", "360"), ("count", "0")]),
        answer("seen"),
    ])
});

pub fn cases() -> Vec<Case> {
    vec![case!(
        "vision.mcp-picture-tokens",
        "12.2",
        Must,
        ONE_THEN_NONE,
        "a 640x360 tool picture takes 299 image tokens in the next pass's prompt",
        mcp_picture_tokens,
        ["no-vision-pads"]
    )]
}

async fn mcp_picture_tokens(ctx: Ctx) -> CheckResult {
    let one = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    let none = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    // "1 picture of 640x360" + "\n" before the picture (8.8) is as long as "0 pictures of 640x360"; the
    // picture adds 299 image tokens and the vision start and end tokens.
    expect_eq("prompt tokens the picture added", 299 + 2, one - none)
}
