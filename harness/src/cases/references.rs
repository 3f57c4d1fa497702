//! SPEC §10: pictures referenced in later turns.

use serde_json::{Value, json};

use super::case;
use super::common::{answer, call, complete, one_picture, prompt_tokens};
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const VISION_PICTURE: Scenario = own("reference-vision", || {
    Setup::mcp(Some(true))
        .vision()
        .scripts(vec![call("picture", &[("width", "640"), ("height", "360")]), answer("seen")])
});

const ANSWER_ONLY: Scenario =
    own("reference-vision-answer", || Setup::mcp(Some(true)).vision().scripts(vec![answer("seen")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "refs.only-inside-the-cache",
            "10.1",
            Must,
            ANSWER_ONLY,
            "a reference to a name that is a picture beside the cache folder, or in a folder of the same name, or a link or FIFO in the cache, is never read: it costs what a name nowhere costs",
            only_inside_the_cache,
            ["refs-read-beside", "refs-follow-links"]
        ),
        case!(
            "refs.resolve-to-their-picture",
            "10.4",
            Must,
            VISION_PICTURE,
            "a reference in a tool message reaches the prompt as its picture's image tokens",
            resolve,
            ["no-vision-pads"]
        ),
        case!(
            "refs.malformed-are-400",
            "10.2",
            Must,
            VISION_PICTURE,
            "separators, dots, encodings, upper-case hex and other extensions are 400; so is a well-formed reference in a user, assistant or system message",
            malformed,
            ["refs-lenient", "refs-refused-in-user-only"]
        ),
        case!(
            "refs.missing-file-is-a-note",
            "10.3",
            Must,
            ANSWER_ONLY,
            "a reference to a picture not in the cache leaves a note and the turn goes on",
            missing,
            ["refs-missing-fail"]
        ),
    ]
}

/// The later turn the page sends: the tool message's text, then the reference as an image part.
pub fn later_turn(reference: Option<&str>) -> Value {
    let mut content = vec![json!({"type": "text", "text": "1 picture of 640x360"})];
    if let Some(reference) = reference {
        content.push(json!({"type": "image_url", "image_url": {"url": reference}}));
    }
    json!({"messages": [
        {"role": "user", "content": "take a picture"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "fake__picture", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": content},
        {"role": "user", "content": "what is in it?"},
    ]})
}

async fn only_inside_the_cache(ctx: Ctx) -> CheckResult {
    let cache = ctx.cache_dir()?;
    let beside = cache.parent().ok_or_else(|| crate::case::broken("no folder above the cache"))?.to_path_buf();
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 640, 360, 77);
    let name = format!("{}.png", super::common::sha256(&png));
    let write = |path: std::path::PathBuf| {
        std::fs::write(&path, &png).map_err(|e| crate::case::broken(format!("{}: {e}", path.display())))
    };
    write(beside.join(&name))?;
    let nested = cache.join("tool-media");
    std::fs::create_dir_all(&nested).map_err(|e| crate::case::broken(e.to_string()))?;
    write(nested.join(&name))?;
    // In the cache itself: a link to that picture, and a FIFO (a reader that opens it blocking waits
    // for a writer that never comes). Neither is a picture in the cache (SPEC 9.7's non-regular file).
    let linked = format!("{}.png", super::common::sha256(b"a link to a picture outside"));
    std::os::unix::fs::symlink(beside.join(&name), cache.join(&linked))
        .map_err(|e| crate::case::broken(e.to_string()))?;
    let fifo = format!("{}.png", super::common::sha256(b"a FIFO in the cache"));
    let made = std::process::Command::new("mkfifo").arg(cache.join(&fifo)).status();
    crate::case::expect(
        made.as_ref().is_ok_and(|s| s.success()),
        "a FIFO planted in the cache (mkfifo)",
        format!("{made:?}"),
    )?;
    let nowhere = format!("strata-tool-media:{}.png", "0".repeat(64));
    let missing = prompt_tokens(&complete(&ctx.http, &later_turn(Some(&nowhere))).await?)?;
    for (what, planted) in [
        ("a name only found outside the cache", &name),
        ("a link in the cache to a picture outside it", &linked),
        ("a FIFO in the cache", &fifo),
    ] {
        let turn = later_turn(Some(&format!("strata-tool-media:{planted}")));
        let tokens = prompt_tokens(&complete(&ctx.http, &turn).await?)?;
        expect_eq(&format!("prompt tokens for {what} (a name found nowhere)"), missing, tokens)?;
    }
    Ok(())
}

async fn resolve(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let reference = media.reference.as_str();
    let with = prompt_tokens(&complete(&ctx.http, &later_turn(Some(reference))).await?)?;
    let without = prompt_tokens(&complete(&ctx.http, &later_turn(None)).await?)?;
    // 640x360 → 644x364 → 299 image tokens, plus the vision start and end tokens.
    expect_eq("prompt tokens the picture added", 299 + 2, with - without)
}

async fn malformed(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let reference = media.reference.clone();
    let name = reference.trim_start_matches("strata-tool-media:").to_string();
    let hash = name.get(..64).unwrap_or_default().to_string();
    let bad = [
        format!("strata-tool-media:../{name}"),
        format!("strata-tool-media:{hash}/x.png"),
        format!("strata-tool-media:{hash}%2Epng"),
        format!("strata-tool-media:{}.png", hash.to_uppercase()),
        format!("strata-tool-media:{hash}.gif"),
        format!("strata-tool-media:{hash}.png\\"),
        format!("strata-tool-media:{hash}\u{FF0E}png"),
        format!("strata-tool-media:/{name}"),
    ];
    // A well-formed reference outside a tool message.
    let mut in_user = later_turn(None);
    in_user["messages"][3]["content"] =
        json!([{"type": "text", "text": "this one"}, {"type": "image_url", "image_url": {"url": reference}}]);
    let reply = ctx.http.post_json(super::common::CHAT, &in_user).send().await?;
    expect_eq("status for a reference in a user message", 400, reply.status)?;
    // And in every other role that is not a tool's: an assistant's earlier answer, a system message.
    let parts = json!([{"type": "text", "text": "this one"}, {"type": "image_url", "image_url": {"url": reference}}]);
    let mut in_assistant = later_turn(None);
    in_assistant["messages"][1]["content"] = parts.clone();
    let mut in_system = later_turn(None);
    if let Some(messages) = in_system["messages"].as_array_mut() {
        messages.insert(0, json!({"role": "system", "content": parts}));
    }
    for (role, body) in [("an assistant", in_assistant), ("a system", in_system)] {
        let reply = ctx.http.post_json(super::common::CHAT, &body).send().await?;
        expect_eq(&format!("status for a reference in {role} message"), 400, reply.status)?;
    }
    for reference in bad {
        let reply = ctx.http.post_json(super::common::CHAT, &later_turn(Some(&reference))).send().await?;
        expect_eq(&format!("status for {reference}"), 400, reply.status)?;
        expect_eq(&format!("type for {reference}"), &json!("invalid_request_error"), &reply.json()?["error"]["type"])?;
    }
    Ok(())
}

async fn missing(ctx: Ctx) -> CheckResult {
    let gone = format!("strata-tool-media:{}.png", super::common::sha256(b"never cached"));
    let reply = ctx.http.post_json(super::common::CHAT, &later_turn(Some(&gone))).send().await?;
    expect_eq("status", 200, reply.status)?;
    let body = reply.json()?;
    expect_eq("finish_reason", Some("stop"), body["choices"][0]["finish_reason"].as_str())
}
