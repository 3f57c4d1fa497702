//! SPEC §8: tool pictures cached by SHA-256 and announced as `media` (the cache's files, 8.3, 8.7
//! and 8.9, are `picture_cache`'s).

use base64::Engine;
use fixtures::images::{PictureFormat, picture};
use serde_json::{Value, json};

use super::case;
use super::common::{answer, call, fetch, first_result, one_picture, opt_in, sha256, stream};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

pub(super) const PNG: Scenario = own("picture-png", || {
    Setup::mcp(Some(true))
        .scripts(vec![call("picture", &[("width", "80"), ("height", "60"), ("seed", "3")]), answer("ok")])
});
const MISLABELED: Scenario = own("picture-mislabeled", || {
    Setup::mcp(Some(true)).scripts(vec![call("picture", &[("mime", "image/jpeg")]), answer("ok")])
});
const ODD_BLOCKS: Scenario = own("odd-blocks", || {
    Setup::mcp(Some(true)).scripts(vec![
        call("svg", &[]),
        call("audio", &[]),
        call("link", &[]),
        call("corrupt", &[]),
        answer("ok"),
    ])
});
/// An SVG, a corrupt PNG, an audio block and a GIF, then five pictures, in one result.
const MIXED: Scenario =
    own("mixed-candidates", || Setup::mcp(Some(true)).scripts(vec![call("mixed", &[]), answer("ok")]));
const SIX: Scenario =
    own("six-pictures", || Setup::mcp(Some(true)).scripts(vec![call("picture", &[("count", "6")]), answer("ok")]));
/// Three calls returning 3, 4 and 5 pictures, in one pass.
const THREE_FOUR_FIVE: Scenario = own("three-four-five-pictures", || {
    let calls: [(&str, &[(&str, &str)]); 3] = [
        ("fake__picture", &[("count", "3"), ("seed", "31")]),
        ("fake__picture", &[("count", "4"), ("seed", "41")]),
        ("fake__picture", &[("count", "5"), ("seed", "51")]),
    ];
    Setup::mcp(Some(true)).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")])
});
/// A picture of exactly 24,000,000 base64 characters, then one of 24,000,004.
const AT_AND_OVER_CAP: Scenario = own("at-and-over-cap", || {
    let calls: [(&str, &[(&str, &str)]); 2] = [("fake__at_cap", &[]), ("fake__over_cap", &[])];
    Setup::mcp(Some(true)).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")])
});
const OVER_CAP: Scenario =
    own("over-cap", || Setup::mcp(Some(true)).scripts(vec![call("over_cap", &[]), answer("ok")]));

/// `structured` (structuredContent only) for model "a", `structtext` (the same JSON as a text block) for
/// model "b", with the feature on.
const STRUCTURED: Scenario = own("structured-content", || {
    Setup::mcp(Some(true)).set(
        "engine",
        "script_sets",
        json!({"a": [call("structured", &[]), answer("ok")], "b": [call("structtext", &[]), answer("ok")]}),
    )
});

/// The picture tool returning a GIF or a BMP, small or large, by the request's model name; with a vision
/// encoder, so a picture handed to the model would show in the prompt's size.
const GIF_AND_BMP: Scenario = own("gif-and-bmp", || {
    let set = |format: &str, width: &str, height: &str| {
        json!([
            call("picture", &[("format", format), ("width", width), ("height", height), ("seed", "7")]),
            answer("ok")
        ])
    };
    // Each request replays its set from the start (the stream and the plain request both call the tool).
    Setup::mcp(Some(true)).vision().set("engine", "restart_per_request", json!(true)).set(
        "engine",
        "script_sets",
        json!({
            "gif-small": set("gif", "100", "100"), "gif-large": set("gif", "640", "480"),
            "bmp-small": set("bmp", "100", "100"), "bmp-large": set("bmp", "640", "480"),
        }),
    )
});

/// One pass calling for a JPEG, a WebP, a PNG as a resource blob, and the same PNG blob labelled as
/// something other than a picture.
const FORMATS: Scenario = own("formats-and-blobs", || {
    let calls: [(&str, &[(&str, &str)]); 4] = [
        ("fake__picture", &[("format", "jpeg"), ("width", "72"), ("height", "40"), ("seed", "61")]),
        ("fake__picture", &[("format", "webp"), ("width", "56"), ("height", "44"), ("seed", "62")]),
        ("fake__resource_picture", &[("seed", "63")]),
        ("fake__resource_picture", &[("seed", "64"), ("mime", "application/octet-stream")]),
    ];
    Setup::mcp(Some(true)).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")])
});

/// The picture tool with `mcp.image_results` not in the configuration at all.
const FEATURE_ABSENT: Scenario =
    own("feature-absent", || Setup::mcp(None).scripts(vec![call("picture", &[("seed", "31")]), answer("ok")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "media.per-call-cap-at-3-4-5",
            "8.4",
            Must,
            THREE_FOUR_FIVE,
            "a result with 3 pictures caches 3, with 4 caches 4, with 5 caches the first 4 (N-1, N, N+1)",
            per_call_boundary,
            ["no-picture-cap", "picture-cap-off-by-one"]
        ),
        case!(
            "media.size-cap-at-24000000",
            "8.4",
            Must,
            AT_AND_OVER_CAP,
            "a picture of exactly 24,000,000 base64 characters is cached; one of 24,000,004 is not",
            size_boundary,
            ["no-picture-cap", "size-cap-off-by-one"]
        ),
        case!(
            "media.off-by-default",
            "8.1",
            Must,
            FEATURE_ABSENT,
            "without mcp.image_results in the configuration a picture is not cached, not announced and not served",
            off_by_default,
            ["feature-off-leaks"]
        ),
        case!(
            "media.no-picture-no-change",
            "8.8",
            Must,
            STRUCTURED,
            "with the feature on, a result without a picture reaches the model as its text: structuredContent alone counts as its JSON, token for token",
            no_picture_no_change,
            ["structured-ignored"]
        ),
        case!(
            "media.magic-decides",
            "8.2",
            Must,
            MISLABELED,
            "a PNG declared image/jpeg is cached as .png, image/png",
            magic_decides,
            ["mime-decides"]
        ),
        case!(
            "media.only-raster-pictures",
            "8.5",
            Must,
            ODD_BLOCKS,
            "SVG, audio, links and a corrupt picture are never cached",
            only_rasters,
            ["mime-decides"]
        ),
        case!(
            "media.four-per-call",
            "8.4",
            Must,
            SIX,
            "at most 4 of 6 pictures are cached, the first four in block order, and all six keep their 7.1 text; media is the event's last field",
            four_per_call,
            [
                "no-picture-cap",
                "count-capped-pictures-untexted",
                "cached-pictures-as-references",
                "media-reversed",
                "media-first"
            ]
        ),
        case!(
            "media.size-cap",
            "8.4",
            Must,
            OVER_CAP,
            "a picture over 24,000,000 base64 characters is not cached and keeps its 7.1 text",
            size_cap,
            ["no-picture-cap", "size-capped-pictures-untexted"]
        ),
        case!(
            "media.entry-shape",
            "8.6",
            Must,
            PNG,
            "a media entry is {ref, url, mime, bytes, width, height}",
            entry_shape,
            ["media-shape"]
        ),
        case!(
            "media.no-base64-in-events",
            "8.6",
            Must,
            PNG,
            "no event carries the picture's base64",
            no_base64,
            ["base64-in-events"]
        ),
        case!(
            "media.jpeg-webp-and-resource-blobs",
            "8.2",
            Must,
            FORMATS,
            "a JPEG and a WebP are cached as .jpg and .webp and served with their Content-Type, byte for byte; a PNG resource blob labelled image/png is cached like an image block, one labelled otherwise is not",
            formats_and_blobs,
            [
                "jpeg-webp-refused",
                "blob-label-ignored",
                "image-jpg-mime",
                "image-blocks-not-candidates",
                "image-blobs-not-candidates"
            ]
        ),
        case!(
            "media.gif-and-bmp-stay-text",
            "8.2",
            Must,
            GIF_AND_BMP,
            "a GIF or a BMP from a tool is neither cached nor shown to the model, even with a vision encoder: no media entry, and a 640x480 one costs the prompt only its longer 7.1 text over a 100x100 one",
            gif_and_bmp_stay_text,
            ["gif-and-bmp-shown"]
        ),
        case!(
            "media.only-pictures-take-the-four-places",
            "8.4",
            Must,
            MIXED,
            "a result of an SVG, a corrupt PNG, an audio block and a GIF, then five pictures, caches the first four of the five: candidates that are not cached take none of the four places, and the fifth picture is past them",
            only_pictures_take_places,
            ["candidates-take-slots"]
        ),
    ]
}

/// The picture [`PNG`]'s tool returns.
pub(super) fn expected_png() -> Vec<u8> {
    picture(PictureFormat::Png, 80, 60, 3)
}

async fn formats_and_blobs(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let results = stream.results()?;
    expect_eq("results", 4, results.len())?;
    // SPEC does not order the results of one pass: each is found by its call's seed (call events).
    let seeds: std::collections::HashMap<String, i64> = stream
        .events()?
        .into_iter()
        .filter_map(|e| match e {
            crate::events::Event::Call { id, arguments, .. } => Some((id, arguments["seed"].as_i64()?)),
            _ => None,
        })
        .collect();
    let find = |seed: i64| {
        results.iter().find(|r| seeds.get(&r.id) == Some(&seed)).ok_or_else(|| CheckError::Fail {
            expected: format!("the result of the call with seed {seed}"),
            actual: format!("calls {seeds:?}, results for {:?}", results.iter().map(|r| &r.id).collect::<Vec<_>>()),
        })
    };
    let wanted = [
        (find(61)?, picture(PictureFormat::Jpeg, 72, 40, 61), "image/jpeg", "jpg", (72, 40)),
        (find(62)?, picture(PictureFormat::Webp, 56, 44, 62), "image/webp", "webp", (56, 44)),
        (find(63)?, picture(PictureFormat::Png, 40, 30, 63), "image/png", "png", (40, 30)),
    ];
    for (result, bytes, mime, extension, (width, height)) in wanted {
        let name = format!("{}.{extension}", sha256(&bytes));
        let entry = json!({"ref": format!("strata-tool-media:{name}"), "url": format!("/tool-media/{name}"),
            "mime": mime, "bytes": bytes.len(), "width": width, "height": height});
        // Compared as JSON values, shown as JSON text in a report.
        let media = Value::Array(result.media.iter().map(|m| m.raw.clone()).collect());
        let wanted = Value::Array(vec![entry]);
        expect(wanted == media, format!("the media of the {mime} result: {wanted}"), media.to_string())?;
        let reply = fetch(&ctx.http, &format!("/tool-media/{name}")).await?;
        expect_eq(&format!("status of {name}"), 200, reply.status)?;
        expect_eq(&format!("Content-Type of {name}"), Some(mime.to_string()), reply.header("content-type"))?;
        expect_eq(&format!("the bytes of {name} (their SHA-256)"), sha256(&bytes), sha256(&reply.body))?;
    }
    let unlabelled = find(64)?;
    expect(
        unlabelled.media.is_empty(),
        "no media for a PNG blob labelled application/octet-stream",
        unlabelled.raw.to_string(),
    )?;
    let not_shown = "[resource fixture://picture.png (application/octet-stream), not shown]";
    expect(unlabelled.text.contains(not_shown), format!("its 7.1 text {not_shown}"), unlabelled.text.clone())
}

async fn gif_and_bmp_stay_text(ctx: Ctx) -> CheckResult {
    let asked = |model: String| {
        let mut body = opt_in();
        body["model"] = json!(model);
        body
    };
    for (format, name) in [(PictureFormat::Gif, "gif"), (PictureFormat::Bmp, "bmp")] {
        let mut tokens = Vec::new();
        let mut notes = Vec::new();
        for (size, width, height) in [("small", 100, 100), ("large", 640, 480)] {
            let model = format!("{name}-{size}");
            // SPEC 7.1's text for it, written here: N = base64 length × 3 / 4, thousands separated.
            let encoded_len = base64::engine::general_purpose::STANDARD.encode(picture(format, width, height, 7)).len();
            let note = format!(
                "[image ({}, {} bytes): not shown to the model]",
                format.mime(),
                super::common::with_commas(encoded_len * 3 / 4)
            );
            let result = first_result(&stream(&ctx.http, asked(model.clone())).await?)?;
            expect(result.media.is_empty(), format!("no media entry for the {model} picture"), result.raw.to_string())?;
            expect(result.text.contains(&note), format!("the result text holds {note}"), result.text.clone())?;
            tokens.push(super::common::prompt_tokens(&super::common::complete(&ctx.http, &asked(model)).await?)?);
            notes.push(note);
        }
        // The two turns differ only in the picture, and the widths and heights have as many digits.
        expect_eq(
            &format!("prompt tokens a 640x480 {name} adds over a 100x100 one (its longer text, no picture)"),
            (notes[1].len() - notes[0].len()) as i64,
            tokens[1] - tokens[0],
        )?;
    }
    Ok(())
}

async fn off_by_default(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect(result.media.is_empty(), "no media entry", result.raw.to_string())?;
    expect(result.text.contains("[image (image/png, "), "the picture as its 7.1 text", result.text.clone())?;
    let name = format!("{}.png", sha256(&picture(PictureFormat::Png, 64, 48, 31)));
    expect_eq(
        "GET /tool-media/<the picture's name>",
        404,
        fetch(&ctx.http, &format!("/tool-media/{name}")).await?.status,
    )?;
    let cached = std::fs::read_dir(ctx.cache_dir()?).map(|d| d.count()).unwrap_or(0);
    expect_eq("files in the picture cache", 0, cached)
}

async fn no_picture_no_change(ctx: Ctx) -> CheckResult {
    let asked = |model: &str| {
        let mut body = opt_in();
        body["model"] = json!(model);
        body
    };
    let structured = super::common::complete(&ctx.http, &asked("a")).await?;
    let text = super::common::complete(&ctx.http, &asked("b")).await?;
    // The tools' names have the same length and their results the same JSON, so the prompts must too.
    expect_eq(
        "prompt tokens for structuredContent alone (equal to the same JSON as a text block)",
        super::common::prompt_tokens(&text)?,
        super::common::prompt_tokens(&structured)?,
    )
}

async fn magic_decides(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    expect_eq("mime", "image/png", media.mime.as_str())?;
    let reference = media.reference.as_str();
    expect(reference.ends_with(".png"), "a .png name", reference.to_string())
}

async fn only_rasters(ctx: Ctx) -> CheckResult {
    let results = stream(&ctx.http, opt_in()).await?.results()?;
    expect_eq("results", 4, results.len())?;
    for result in &results {
        expect(result.media.is_empty(), "no media entry", result.raw.to_string())?;
    }
    Ok(())
}

async fn four_per_call(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect_eq("media entries", 4, result.media.len())?;
    let text = result.text.as_str();
    expect_eq("pictures named in the text", 6, text.matches("[image (image/png, ").count())?;
    // The tool's six pictures (seeds 1 to 6, 64x48): each keeps its 7.1 text, cached or past the cap
    // (8.4e, 8.6c), joined by `\n` in block order after the tool's text block (7.1a).
    let pictures: Vec<Vec<u8>> = (1..=6).map(|seed| picture(PictureFormat::Png, 64, 48, seed)).collect();
    let placeholders = pictures.iter().map(|p| {
        let n = base64::engine::general_purpose::STANDARD.encode(p).len() * 3 / 4;
        format!("[image (image/png, {} bytes): not shown to the model]", super::common::with_commas(n))
    });
    let wanted = std::iter::once("6 pictures of 64x48".to_string()).chain(placeholders).collect::<Vec<_>>().join("\n");
    expect_eq("text", wanted.as_str(), text)?;
    // 8.6a: one entry per cached picture, the first four in block order, `media` after the other fields.
    let names: Vec<String> = pictures[..4].iter().map(|p| format!("{}.png", sha256(p))).collect();
    let got: Vec<&str> = result.media.iter().map(|m| m.name()).collect();
    expect_eq("the media entries' names, in block order", names.iter().map(String::as_str).collect::<Vec<_>>(), got)?;
    let keys: Vec<&String> = result.raw.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    expect_eq("the result event's last field", Some("media"), keys.last().map(|k| k.as_str()))
}

async fn size_cap(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect(result.media.is_empty(), "no media entry", result.raw.to_string())?;
    // 8.4e: the picture (18,000,003 bytes: 24,000,004 base64 characters) keeps its 7.1 text.
    let base64_len = 18_000_003usize.div_ceil(3) * 4;
    let n = super::common::with_commas(base64_len * 3 / 4);
    let wanted = format!("too big\n[image (image/png, {n} bytes): not shown to the model]");
    expect_eq("text", wanted.as_str(), result.text.as_str())
}

async fn entry_shape(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let png = expected_png();
    let name = format!("{}.png", sha256(&png));
    let wanted = json!({"ref": format!("strata-tool-media:{name}"), "url": format!("/tool-media/{name}"), "mime": "image/png", "bytes": png.len(), "width": 80, "height": 60});
    expect_eq("the media entry", wanted, media.raw)
}

async fn no_base64(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(expected_png());
    let text: String = stream.chunks.iter().map(|c| c.to_string()).collect();
    expect(
        !text.contains(&encoded[64..128]),
        "no base64 of the picture in the stream",
        "the stream carries the picture's base64",
    )
}

async fn only_pictures_take_places(ctx: Ctx) -> CheckResult {
    let results = stream(&ctx.http, opt_in()).await?.results()?;
    let media = results.first().map(|r| r.media.clone()).unwrap_or_default();
    let wanted: Vec<String> = [
        (PictureFormat::Png, 92, "png"),
        (PictureFormat::Jpeg, 93, "jpg"),
        (PictureFormat::Webp, 94, "webp"),
        (PictureFormat::Png, 95, "png"),
    ]
    .into_iter()
    .map(|(format, seed, extension)| format!("{}.{extension}", sha256(&picture(format, 48, 32, seed))))
    .collect();
    let names: Vec<String> = media.iter().map(|m| m.name().to_string()).collect();
    expect_eq(
        "the cached pictures, in block order (the first four rasters after the SVG, corrupt, audio and GIF; not the fifth)",
        wanted,
        names,
    )
}

async fn per_call_boundary(ctx: Ctx) -> CheckResult {
    let results = stream(&ctx.http, opt_in()).await?.results()?;
    let cached: Vec<usize> = results.iter().map(|r| r.media.len()).collect();
    expect_eq("pictures cached from results of 3, 4 and 5", vec![3, 4, 4], cached)
}

async fn size_boundary(ctx: Ctx) -> CheckResult {
    let results = stream(&ctx.http, opt_in()).await?.results()?;
    let cached: Vec<usize> = results.iter().map(|r| r.media.len()).collect();
    expect_eq("pictures cached at 24,000,000 and at 24,000,004 base64 characters", vec![1, 0], cached)?;
    let bytes = results.first().and_then(|r| r.media.first()).map(|m| m.raw["bytes"].clone());
    expect_eq("the cached picture's size", Some(json!(18_000_000)), bytes)
}
