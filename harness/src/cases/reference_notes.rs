//! SPEC 10.3 and 10.4b, every reason: a reference that does not become a picture becomes exactly its
//! note, `[image omitted: <reason>]`, in its place — so the prompt grows by the note's bytes (4.8i: the
//! parts follow one another with nothing between them) — and the turn goes on. One case a reason, each
//! on the server that has it: the picture gone from the cache, tool pictures switched off, no MCP
//! server configured, no vision encoder (the picture in the cache, so it would resolve); each server
//! has only its reason, since 10.3e says which note wins when several hold.

use super::case;
use super::common::{complete, prompt_tokens, sha256};
use super::references::later_turn;
use crate::case::{Case, CheckResult, broken, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const GONE: Scenario = own("reference-notes-gone", || Setup::mcp(Some(true)).vision());
const SWITCHED_OFF: Scenario = own("reference-notes-off", || Setup::mcp(Some(false)).vision());
/// Tool pictures on, so the reason left is that no MCP server is configured (10.3e's order).
const NO_MCP: Scenario =
    own("reference-notes-no-mcp", || Setup::plain().vision().set("mcp", "image_results", serde_json::json!(true)));
const NO_ENCODER: Scenario = own("reference-notes-no-encoder", || Setup::mcp(Some(true)));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "refs.note-when-the-picture-is-gone",
            "10.3",
            Must,
            GONE,
            "a reference to a picture not in the cache is exactly `[image omitted: the picture is no longer in the cache]` in its place: the prompt grows by its bytes",
            gone,
            ["refs-notes-dropped"]
        ),
        case!(
            "refs.note-when-pictures-are-switched-off",
            "10.3",
            Must,
            SWITCHED_OFF,
            "with mcp.image_results false, a reference (its picture in the cache) is exactly `[image omitted: tool pictures are switched off]` in its place",
            switched_off,
            ["refs-notes-dropped"]
        ),
        case!(
            "refs.note-when-mcp-is-not-configured",
            "10.3",
            Must,
            NO_MCP,
            "on a server without MCP servers, a reference is exactly `[image omitted: MCP is not configured]` in its place",
            no_mcp,
            ["refs-notes-dropped"]
        ),
        case!(
            "refs.note-without-a-vision-encoder",
            "10.4",
            Must,
            NO_ENCODER,
            "without a vision encoder, a reference to a picture in the cache is exactly `[image omitted: this server has no image encoder]` in its place",
            no_encoder,
            ["refs-notes-dropped"]
        ),
    ]
}

/// Plants a PNG in the scenario's cache folder and returns its reference.
fn planted(ctx: &Ctx) -> Result<String, crate::case::CheckError> {
    let folder = ctx.cache_dir()?;
    std::fs::create_dir_all(&folder).map_err(|e| broken(format!("{}: {e}", folder.display())))?;
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 64, 48, 0x10_4b);
    let name = format!("{}.png", sha256(&png));
    std::fs::write(folder.join(&name), &png).map_err(|e| broken(format!("{}: {e}", folder.display())))?;
    Ok(format!("strata-tool-media:{name}"))
}

/// The reference costs exactly its note's bytes, and the turn is answered.
async fn noted(ctx: &Ctx, reference: &str, reason: &str) -> CheckResult {
    let without = prompt_tokens(&complete(&ctx.http, &later_turn(None)).await?)?;
    let with = prompt_tokens(&complete(&ctx.http, &later_turn(Some(reference))).await?)?;
    let note = format!("[image omitted: {reason}]");
    expect_eq(&format!("prompt tokens the reference added: {note:?}, one a byte"), note.len() as i64, with - without)
}

async fn gone(ctx: Ctx) -> CheckResult {
    let reference = format!("strata-tool-media:{}.png", sha256(b"never cached, note"));
    noted(&ctx, &reference, "the picture is no longer in the cache").await
}

async fn switched_off(ctx: Ctx) -> CheckResult {
    let reference = planted(&ctx)?;
    noted(&ctx, &reference, "tool pictures are switched off").await
}

async fn no_mcp(ctx: Ctx) -> CheckResult {
    let reference = format!("strata-tool-media:{}.png", sha256(b"no mcp, note"));
    noted(&ctx, &reference, "MCP is not configured").await
}

async fn no_encoder(ctx: Ctx) -> CheckResult {
    let reference = planted(&ctx)?;
    noted(&ctx, &reference, "this server has no image encoder").await
}
