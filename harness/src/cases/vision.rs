//! SPEC §12: the vision path, seen through `usage.prompt_tokens`.

use base64::Engine;
use serde_json::{Value, json};

use super::case;
use super::common::{answer, call, complete, opt_in, prompt_tokens};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::geometry::{expected_tokens, expected_tokens_within, takes_tokens};
use crate::scenario::{Scenario, Setup, own};

const ONE_THEN_NONE: Scenario = own("vision-mcp-picture", || {
    Setup::mcp(Some(true)).vision().scripts(vec![
        call("picture", &[("width", "640"), ("height", "360"), ("count", "1")]),
        answer("seen"),
        call("picture", &[("width", "640"), ("height", "360"), ("count", "0")]),
        answer("seen"),
    ])
});

/// No vision encoder.
const NO_ENCODER: Scenario = own("no-encoder", Setup::plain);

/// A vision encoder and no tools: pictures come in user messages.
const USER_PICTURES: Scenario = own("vision-user-pictures", || Setup::plain().vision());

/// Configured bounds of 64 and 256 squares of 28×28 (1.10), far from the defaults.
const BOUNDS: (u32, u32) = (64 * 784, 256 * 784);
const CONFIGURED_BOUNDS: Scenario = own("vision-configured-bounds", || {
    let mut setup = Setup::plain().vision();
    setup.config["vision"]["min_pixels"] = json!(BOUNDS.0);
    setup.config["vision"]["max_pixels"] = json!(BOUNDS.1);
    setup
});

/// Sizes around the configured bounds: grids of exactly `max_pixels` (448×448) and `min_pixels`
/// (224×224), which neither scale; one square over (476×448) and one under (224×196); and sizes the
/// defaults would leave alone but these bounds scale (640×360 down, 100×100 up).
const BOUND_SIZES: [(u32, u32); 6] = [(448, 448), (476, 448), (224, 224), (224, 196), (640, 360), (100, 100)];

/// A vision encoder, the fixture's 640x360 picture once, then plain answers.
const EVERY_SOURCE: Scenario = own("vision-every-source", || {
    Setup::mcp(Some(true)).vision().scripts(vec![
        call("picture", &[("width", "640"), ("height", "360"), ("count", "1")]),
        answer("seen"),
        call("picture", &[("width", "640"), ("height", "360"), ("count", "0")]),
        answer("seen"),
    ])
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "vision.content-part-forms",
            "4.2",
            Must,
            USER_PICTURES,
            "a picture as image_url {url}, image_url as a string, input_image and Anthropic image (base64 or url source) each takes its image tokens; a string and a list of one text part are the same prompt",
            content_part_forms,
            ["only-image-url-parts", "anthropic-url-source-dropped"]
        ),
        case!(
            "vision.every-source-becomes-image-tokens",
            "12.1",
            Must,
            EVERY_SOURCE,
            "a tool result's picture, a user's image part, lifted tool text and a cache reference, together in one conversation, each take the 12.2 image tokens plus start and end",
            every_source,
            ["no-vision-pads"]
        ),
        case!(
            "vision.urls-and-paths-never-read",
            "12.3",
            Must,
            USER_PICTURES,
            "an image URL and a local path in a tool message are never fetched or read: a canary server sees no connection, and a real file costs the tokens of a missing one",
            never_read,
            ["fetches-urls-and-paths"]
        ),
        case!(
            "vision.no-encoder-user-400-tool-note",
            "4.13",
            Must,
            NO_ENCODER,
            "without a vision encoder a picture in a user message is 400 and one in a tool message is exactly the note `[image omitted: this server has no image encoder]` in its place: the request goes on",
            no_encoder,
            ["pictures-dropped", "tool-pictures-dropped-without-encoder"]
        ),
        case!(
            "vision.at-most-64-pictures",
            "4.13",
            Must,
            USER_PICTURES,
            "64 pictures in a user message reach the vision path and a 65th is 400 naming the limit; in a tool message 64 reach it and the 65th is its note",
            at_most_64,
            ["pictures-dropped", "tool-pictures-dropped"]
        ),
        case!(
            "vision.geometry-table",
            "12.2",
            Must,
            USER_PICTURES,
            "34 picture sizes (both resize branches, halves, extreme shapes, grids exactly at max_pixels and min_pixels) each take the image tokens SPEC 12.2's formula gives",
            geometry_table,
            ["no-vision-pads", "max-pixels-inclusive"]
        ),
        case!(
            "vision.data-url-format-from-its-bytes",
            "12.3",
            Must,
            USER_PICTURES,
            "a data: URL's picture is read by its bytes, whatever its label: PNG, JPEG, WebP, GIF and BMP each under another format's label, as application/octet-stream and with a parameter take 12.2's tokens of their size",
            data_url_format_from_bytes,
            ["data-url-trusts-its-label"]
        ),
        case!(
            "vision.aspect-ratio-over-200-is-unreadable",
            "12.2",
            Must,
            USER_PICTURES,
            "pictures whose longer side is exactly 200 times the shorter take 12.2's tokens; one over 200 is 400 in a user message and its note in a tool message (both Qwen2-VL processors refuse it)",
            aspect_ratio,
            ["aspect-ratio-unbounded"]
        ),
        case!(
            "vision.configured-pixel-bounds",
            "12.2",
            Must,
            CONFIGURED_BOUNDS,
            "with vision.min_pixels 64·784 and max_pixels 256·784, pictures at, one square over and one under each bound take 12.2's tokens under those bounds",
            configured_bounds,
            ["vision-bounds-ignored"]
        ),
        case!(
            "vision.mcp-picture-tokens",
            "12.2",
            Must,
            ONE_THEN_NONE,
            "a 640x360 tool picture takes 299 image tokens in the next pass's prompt",
            mcp_picture_tokens,
            ["no-vision-pads"]
        ),
    ]
}

async fn mcp_picture_tokens(ctx: Ctx) -> CheckResult {
    let one = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    let none = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    // "1 picture of 640x360" + "\n" before the picture (8.8) is as long as "0 pictures of 640x360"; the
    // picture adds 299 image tokens and the vision start and end tokens.
    expect_eq("prompt tokens the picture added", 299 + 2, one - none)
}

/// Picture sizes (width, height) for the geometry table: both branches of the resize (a picture over
/// `max_pixels` shrinks, floor; one under `min_pixels` grows, ceil), sides whose twenty-eighths end in
/// a half (rounded to even), extreme shapes, ordinary screens, and sides that round to a grid of
/// exactly `max_pixels` (1120x890 → 1120x896) or exactly `min_pixels` (58x54 → 56x56), which neither
/// scale (the clause's "over" and "under" are strict).
const SIZES: [(u32, u32); 34] = [
    (1120, 890),
    (58, 54),
    (1, 1),
    (10, 10),
    (27, 27),
    (28, 28),
    (42, 42),
    (56, 56),
    (57, 57),
    (70, 70),
    (98, 98),
    (126, 42),
    (100, 30),
    (30, 100),
    (300, 28),
    (28, 300),
    (333, 777),
    (500, 500),
    (640, 360),
    (800, 600),
    (1001, 1001),
    (1024, 768),
    (1280, 720),
    (1280, 1280),
    (1500, 1500),
    (1920, 1080),
    (2000, 28),
    (28, 2000),
    (2400, 1600),
    (1003, 1000),
    (1050, 770),
    (882, 1190),
    (3000, 40),
    (714, 1414),
];

fn with_picture(png: Option<&[u8]>) -> Value {
    let mut content = vec![json!({"type": "text", "text": "look"})];
    if let Some(png) = png {
        let url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png));
        content.push(json!({"type": "image_url", "image_url": {"url": url}}));
    }
    json!({"messages": [{"role": "user", "content": content}], "max_tokens": 4})
}

/// Pictures in user messages under labels that are not their format (and one with a parameter before
/// `;base64`): each size differs, so a picture read as another can never take the right count by chance.
async fn data_url_format_from_bytes(ctx: Ctx) -> CheckResult {
    use fixtures::images::PictureFormat::{Bmp, Gif, Jpeg, Png, Webp};
    let without = prompt_tokens(&complete(&ctx.http, &with_picture(None)).await?)?;
    let rows = [
        (Png, "image/jpeg", (640, 360)),
        (Jpeg, "image/png", (333, 500)),
        (Webp, "image/gif", (1000, 250)),
        (Gif, "image/webp", (120, 900)),
        (Bmp, "image/png", (301, 77)),
        (Png, "application/octet-stream", (455, 455)),
        (Jpeg, "image/jpeg;name=shot.jpg", (800, 123)),
    ];
    for (format, label, (width, height)) in rows {
        let bytes = fixtures::images::picture(format, width, height, 9);
        let url = format!("data:{label};base64,{}", base64::engine::general_purpose::STANDARD.encode(&bytes));
        let body = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": url}},
        ]}], "max_tokens": 4});
        let reply = ctx.http.post_json(super::common::CHAT, &body).send().await?;
        let what = format!("a {format:?} {width}x{height} labelled {label}");
        expect_eq(&format!("status for {what}"), 200, reply.status)?;
        let added = prompt_tokens(&reply.json()?)? - without - 2;
        expect_eq(&format!("image tokens of {what}"), expected_tokens(width, height) as i64, added)?;
    }
    Ok(())
}

/// Sizes at and just past 12.2's aspect-ratio bound, both ways round.
const RATIO_SIZES: [(u32, u32); 8] =
    [(200, 1), (201, 1), (1, 200), (1, 201), (6000, 30), (6001, 30), (30, 6000), (4001, 20)];

async fn aspect_ratio(ctx: Ctx) -> CheckResult {
    let without = prompt_tokens(&complete(&ctx.http, &with_picture(None)).await?)?;
    for (width, height) in RATIO_SIZES {
        let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, width, height, 6);
        let reply = ctx.http.post_json(super::common::CHAT, &with_picture(Some(&png))).send().await?;
        if takes_tokens(width, height) {
            expect_eq(&format!("status for {width}x{height} (ratio at most 200)"), 200, reply.status)?;
            let added = prompt_tokens(&reply.json()?)? - without - 2;
            expect_eq(&format!("image tokens of {width}x{height}"), expected_tokens(width, height) as i64, added)?;
        } else {
            expect_eq(&format!("status for {width}x{height} in a user message (ratio over 200)"), 400, reply.status)?;
            expect_eq("error type", &json!("invalid_request_error"), &reply.json()?["error"]["type"])?;
            // In a tool message the picture becomes its note and the turn goes on (12.3).
            let as_tool = |part: Value| {
                json!({"messages": [
                    {"role": "user", "content": "look"},
                    {"role": "tool", "content": [{"type": "text", "text": "shot:"}, part]},
                ], "max_tokens": 4})
            };
            let url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&png));
            let picture = as_tool(json!({"type": "image_url", "image_url": {"url": url}}));
            let reply = ctx.http.post_json(super::common::CHAT, &picture).send().await?;
            expect_eq(&format!("status for {width}x{height} in a tool message"), 200, reply.status)?;
            let tokens = prompt_tokens(&reply.json()?)?;
            let note = format!("[image omitted: the picture's aspect ratio is over 200 ({width}x{height})]");
            let as_text = prompt_tokens(&complete(&ctx.http, &as_tool(json!({"type": "text", "text": note}))).await?)?;
            expect_eq(
                &format!("prompt tokens of {width}x{height} in a tool message (its note, no image tokens)"),
                as_text,
                tokens,
            )?;
        }
    }
    Ok(())
}

async fn configured_bounds(ctx: Ctx) -> CheckResult {
    let without = prompt_tokens(&complete(&ctx.http, &with_picture(None)).await?)?;
    let mut wrong = Vec::new();
    for (width, height) in BOUND_SIZES {
        let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, width, height, 5);
        let added = prompt_tokens(&complete(&ctx.http, &with_picture(Some(&png))).await?)? - without - 2;
        let wanted = expected_tokens_within(width, height, BOUNDS.0, BOUNDS.1) as i64;
        if added != wanted {
            let default = expected_tokens(width, height);
            wrong.push(format!("{width}x{height}: {added} (wanted {wanted}; the defaults give {default})"));
        }
    }
    expect(wrong.is_empty(), "every size at 12.2's count under the configured bounds", wrong.join("; "))
}

async fn geometry_table(ctx: Ctx) -> CheckResult {
    let without = prompt_tokens(&complete(&ctx.http, &with_picture(None)).await?)?;
    let mut wrong = Vec::new();
    for (width, height) in SIZES {
        let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, width, height, 3);
        let with = prompt_tokens(&complete(&ctx.http, &with_picture(Some(&png))).await?)?;
        // The picture adds its N image tokens and the vision start and end tokens (4.8).
        let added = with - without - 2;
        let wanted = expected_tokens(width, height) as i64;
        if added != wanted {
            wrong.push(format!("{width}x{height}: {added} (wanted {wanted})"));
        }
    }
    expect(wrong.is_empty(), format!("every one of {} sizes at SPEC 12.2's token count", SIZES.len()), wrong.join("; "))
}

/// A tool message whose picture is `url`, after the call it answers.
fn tool_picture(url: &str) -> Value {
    json!({"messages": [
        {"role": "user", "content": "Look at the shot."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "shot"}, {"type": "image_url", "image_url": {"url": url}}]},
    ], "max_tokens": 4})
}

async fn never_read(ctx: Ctx) -> CheckResult {
    // A canary HTTP server that counts who connects.
    let canary = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| crate::case::broken(e.to_string()))?;
    let port = canary.local_addr().map_err(|e| crate::case::broken(e.to_string()))?.port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&connections);
    let listening = tokio::spawn(async move {
        while let Ok((stream, _)) = canary.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    // A canary picture on disk, and a path of the same length where nothing is.
    let dir = tempfile::tempdir().map_err(|e| crate::case::broken(e.to_string()))?;
    let file = dir.path().join("canary.png");
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 200, 100, 5);
    std::fs::write(&file, png).map_err(|e| crate::case::broken(e.to_string()))?;
    let path = file.display().to_string();
    let missing = path.replace("canary.png", "nothing.png");
    let url = format!("http://127.0.0.1:{port}/shot.png");
    let tokens = |body: Value| {
        let http = ctx.http.clone();
        async move { prompt_tokens(&complete(&http, &body).await?) }
    };
    tokens(tool_picture(&url)).await?;
    let file_url = format!("file://{path}");
    let with_path = tokens(tool_picture(&path)).await?;
    let with_file_url = tokens(tool_picture(&file_url)).await?;
    let with_missing = tokens(tool_picture(&missing)).await?;
    let with_missing_file_url = tokens(tool_picture(&format!("file://{missing}"))).await?;
    listening.abort();
    expect_eq("connections to the canary URL", 0, connections.load(std::sync::atomic::Ordering::SeqCst))?;
    expect_eq("prompt tokens for a real file's path (a missing file's)", with_missing, with_path)?;
    expect_eq("prompt tokens for a real file's file:// URL (a missing file's)", with_missing_file_url, with_file_url)
}

fn data_url(png: &[u8]) -> String {
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png))
}

/// A user message of `count` small pictures.
fn user_pictures(count: usize) -> Value {
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 8, 8, 1);
    let mut content = vec![json!({"type": "text", "text": "look"})];
    content.extend((0..count).map(|_| json!({"type": "image_url", "image_url": {"url": data_url(&png)}})));
    json!({"messages": [{"role": "user", "content": content}], "max_tokens": 4})
}

async fn no_encoder(ctx: Ctx) -> CheckResult {
    let user = ctx.http.post_json(super::common::CHAT, &user_pictures(1)).send().await?;
    expect_eq("a picture in a user message: status", 400, user.status)?;
    expect_eq("error type", &json!("invalid_request_error"), &user.json()?["error"]["type"])?;
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 8, 8, 1);
    let asked = tool_picture(&data_url(&png));
    let tool = ctx.http.post_json(super::common::CHAT, &asked).send().await?;
    expect_eq("a picture in a tool message: status", 200, tool.status)?;
    // The note stands in the picture's place: the prompt grows by its bytes (4.8i), no more, no less.
    let mut bare = asked.clone();
    if let Some(parts) = bare["messages"][2]["content"].as_array_mut() {
        parts.truncate(1);
    }
    let without = prompt_tokens(&complete(&ctx.http, &bare).await?)?;
    let note = "[image omitted: this server has no image encoder]";
    expect_eq(
        "prompt tokens the tool message's picture added: its note, one a byte",
        note.len() as i64,
        prompt_tokens(&tool.json()?)? - without,
    )
}

async fn at_most_64(ctx: Ctx) -> CheckResult {
    let at = ctx.http.post_json(super::common::CHAT, &user_pictures(64)).send().await?;
    expect_eq("status with 64 pictures", 200, at.status)?;
    let over = ctx.http.post_json(super::common::CHAT, &user_pictures(65)).send().await?;
    expect_eq("status with 65 pictures", 400, over.status)?;
    let message = over.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.contains("64"), "a message naming the limit of 64", message)?;
    // In a tool message 64 reach the model and the 65th is a note; the request goes on.
    let in_tool = |count: usize| {
        let mut body = user_pictures(count);
        body["messages"] = json!([{"role": "user", "content": "look"}, {"role": "tool", "content": body["messages"][0]["content"].clone()}]);
        body
    };
    let mut tokens = Vec::new();
    for count in [0, 64, 65] {
        tokens.push(prompt_tokens(&complete(&ctx.http, &in_tool(count)).await?)?);
    }
    let (none, sixty_four, sixty_five) = (tokens[0], tokens[1], tokens[2]);
    // Each 8x8 picture: its image tokens and the vision start and end tokens (4.8).
    let per_picture = expected_tokens(8, 8) as i64 + 2;
    expect_eq("prompt tokens 64 pictures in a tool message add", 64 * per_picture, sixty_four - none)?;
    let note = "[image omitted: the request holds more than 64 pictures]";
    expect_eq(&format!("prompt tokens the 65th adds (its note, {note})"), note.len() as i64, sixty_five - sixty_four)
}

async fn every_source(ctx: Ctx) -> CheckResult {
    let per_picture = expected_tokens(640, 360) as i64 + 2;
    // From an MCP result: one picture against none, the text of the two results equally long.
    let first = super::common::stream(&ctx.http, opt_in()).await?;
    let one = first.usage().and_then(|u| u["prompt_tokens"].as_i64()).unwrap_or(0);
    let media = super::common::first_result(&first)?.media;
    expect_eq("media entries of the first call", 1, media.len())?;
    let reference = media[0].reference.clone();
    let none = prompt_tokens(&complete(&ctx.http, &opt_in()).await?)?;
    expect_eq("prompt tokens a tool result's picture added", per_picture, one - none)?;
    // A user's image part, lifted tool text and the reference, all in one conversation, against the
    // same conversation with the picture part and the reference left out and the base64 replaced by
    // its note.
    let user_png = fixtures::images::noise_png(640, 360, 41);
    let lifted_png = fixtures::images::noise_png(640, 360, 42);
    let lifted = base64::engine::general_purpose::STANDARD.encode(&lifted_png);
    let note = format!("[image (image/png, {} bytes)]", fixtures::images::with_commas(lifted_png.len()));
    let conversation = |pictures: bool| {
        let data_url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&user_png));
        let mut question = vec![json!({"type": "text", "text": "compare these"})];
        let mut first = vec![json!({"type": "text", "text": "1 picture of 640x360"})];
        if pictures {
            question.push(json!({"type": "image_url", "image_url": {"url": data_url}}));
            first.push(json!({"type": "image_url", "image_url": {"url": reference}}));
        }
        let second = format!("screen: {} end", if pictures { &lifted } else { &note });
        json!({"messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "fake__picture", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": first},
            {"role": "tool", "tool_call_id": "call_2", "content": second},
        ], "max_tokens": 4})
    };
    let with = prompt_tokens(&complete(&ctx.http, &conversation(true)).await?)?;
    let without = prompt_tokens(&complete(&ctx.http, &conversation(false)).await?)?;
    expect_eq("prompt tokens three pictures added (user part, reference, lifted text)", 3 * per_picture, with - without)
}

async fn content_part_forms(ctx: Ctx) -> CheckResult {
    let png = fixtures::images::noise_png(640, 360, 12);
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    let data_url = format!("data:image/png;base64,{data}");
    let asking = |content: Value| json!({"messages": [{"role": "user", "content": content}], "max_tokens": 4});
    let as_string = prompt_tokens(&complete(&ctx.http, &asking(json!("look"))).await?)?;
    let as_part = prompt_tokens(&complete(&ctx.http, &asking(json!([{"type": "text", "text": "look"}]))).await?)?;
    expect_eq("prompt tokens of a list of one text part vs. the same string", as_string, as_part)?;
    let per_picture = expected_tokens(640, 360) as i64 + 2;
    let forms = [
        ("image_url {url}", json!({"type": "image_url", "image_url": {"url": data_url}})),
        ("image_url as a string", json!({"type": "image_url", "image_url": data_url})),
        ("input_image", json!({"type": "input_image", "image_url": data_url})),
        (
            "Anthropic image",
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}),
        ),
        ("Anthropic image with a url source", json!({"type": "image", "source": {"type": "url", "url": data_url}})),
    ];
    for (what, picture) in forms {
        let with =
            prompt_tokens(&complete(&ctx.http, &asking(json!([{"type": "text", "text": "look"}, picture]))).await?)?;
        expect_eq(&format!("prompt tokens {what} added"), per_picture, with - as_part)?;
    }
    Ok(())
}
