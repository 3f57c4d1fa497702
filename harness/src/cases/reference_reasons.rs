//! SPEC 10.3e: when several reasons hold, a reference's note gives the first of: no vision encoder
//! (10.4b), tool pictures switched off, MCP not configured, the picture no longer in the cache. Every
//! combination of the four, each on a server of the case's own — a vision encoder or none, tool
//! pictures on or off, an MCP server configured (an address where none answers) or none — asked about a
//! reference whose picture is in that server's cache and about one whose picture is not. The note the
//! clause's order gives is computed here; a reference for which no reason holds becomes its picture's
//! start, 12.2 tokens and end. The four notes' lengths all differ, so the prompt's growth tells which
//! one the server wrote.

use serde_json::json;

use super::case;
use super::common::{complete, prompt_tokens, sha256};
use super::references::later_turn;
use crate::case::{Case, CheckResult, broken, expect_eq};
use crate::context::Ctx;
use crate::geometry::expected_tokens;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "refs.note-gives-the-first-reason",
        "10.3",
        Must,
        LAUNCHES,
        "on eight servers, every combination of a vision encoder or none, tool pictures on or off and an MCP server configured or none, a reference whose picture is in the cache and one whose picture is not each become the note of the first reason that holds, in 10.3e's order (no encoder, switched off, MCP not configured, gone), or the picture's image tokens when none holds",
        first_reason,
        ["cache-checked-first"]
    )]
}

/// The reasons of 10.3e, in its order, with their notes' words.
const REASONS: [&str; 4] = [
    "this server has no image encoder",
    "tool pictures are switched off",
    "MCP is not configured",
    "the picture is no longer in the cache",
];

/// The picture planted in each server's cache.
const SIDE: (u32, u32) = (64, 48);

async fn first_reason(ctx: Ctx) -> CheckResult {
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, SIDE.0, SIDE.1, 0x10_3e);
    let name = format!("{}.png", sha256(&png));
    let missing = format!("strata-tool-media:{}.png", sha256(b"10.3e, never cached"));
    let mut wrong = Vec::new();
    for combination in 0..8u8 {
        let (encoder, pictures_on, mcp) = (combination & 1 != 0, combination & 2 != 0, combination & 4 != 0);
        let mut config = json!({"mcp": {"image_results": pictures_on}});
        if encoder {
            config["vision"] = json!({"backend": "geometry"});
        }
        if mcp {
            config["mcp_servers"] = json!({"nowhere": {"url": "http://127.0.0.1:1/mcp"}});
        }
        let server = ctx.start_running(&config, &[], &[]).await?;
        let folder = server.cache_dir();
        std::fs::create_dir_all(&folder).map_err(|e| broken(format!("{}: {e}", folder.display())))?;
        std::fs::write(folder.join(&name), &png).map_err(|e| broken(format!("{}: {e}", folder.display())))?;
        let without = prompt_tokens(&complete(&server.http, &later_turn(None)).await?)?;
        for cached in [true, false] {
            let holds = [!encoder, !pictures_on, !mcp, !cached];
            let expected = match REASONS.iter().zip(holds).find(|(_, held)| *held) {
                Some((reason, _)) => format!("[image omitted: {reason}]").len() as i64,
                None => expected_tokens(SIDE.0, SIDE.1) as i64 + 2,
            };
            let reference = if cached { format!("strata-tool-media:{name}") } else { missing.clone() };
            let with = prompt_tokens(&complete(&server.http, &later_turn(Some(&reference))).await?)?;
            if with - without != expected {
                let wanted = REASONS.iter().zip(holds).find(|(_, held)| *held).map_or("the picture", |(r, _)| *r);
                wrong.push(format!(
                    "encoder {encoder}, tool pictures {}, MCP {}, picture {}: the reference added {} tokens, not {expected} ({wanted})",
                    if pictures_on { "on" } else { "off" },
                    if mcp { "configured" } else { "not configured" },
                    if cached { "cached" } else { "gone" },
                    with - without
                ));
            }
        }
    }
    expect_eq(
        "combinations whose reference is not the first reason's note (10.3e)",
        "none".to_string(),
        if wrong.is_empty() { "none".into() } else { wrong.join("; ") },
    )
}
