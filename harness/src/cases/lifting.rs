//! SPEC §11: pictures a client hands back as base64 in tool text.

use base64::Engine;
use fixtures::images::{bmp, ending_on, noise_png};
use fixtures::payloads::chatbox_conversation;
use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, complete, prompt_tokens, with_commas};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, Reach, Scenario, Serving, Setup};

const VISION: Scenario =
    Scenario { name: "lift-vision", build: || Setup::plain().vision(), serving: Serving::Shared(Reach::Configured) };

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "lift.size-cap-at-32-mib",
            "11.4",
            Must,
            BASIC,
            "PNGs of 32 MiB less a byte and of exactly 32 MiB in tool text are lifted (the note alone reaches the model); one of 32 MiB and a byte is left as sent, so the prompt exceeds the context",
            size_cap_boundary,
            ["lift-size-cap-off"]
        ),
        case!(
            "lift.cap-at-7-8-9",
            "11.4",
            Must,
            BASIC,
            "a tool message with 7 or 8 pictures has each lifted; with 9, the first 8 are and the ninth is left as sent (N-1, N, N+1)",
            cap_boundary,
            ["lift-cap-off-by-one"]
        ),
        case!(
            "lift.no-encoder-keeps-only-the-note",
            "11.5",
            Must,
            BASIC,
            "without a vision encoder a lifted picture's base64 is dropped and its note stays: PNGs of exactly 1024 and 1028 base64 characters, a JPEG, a WebP, a GIF89a, a GIF87a, one behind a data: prefix",
            no_encoder_note_only,
            ["lift-keeps-base64"]
        ),
        case!(
            "lift.runs-from-1024-characters",
            "11.2",
            Must,
            BASIC,
            "a PNG whose base64 run is 1020 characters stays as sent; at 1024 and 1028 it is lifted",
            run_length_boundary,
            ["lift-short-runs"]
        ),
        case!(
            "lift.padding-completes-the-group",
            "11.2",
            Must,
            BASIC,
            "a PNG whose base64 ends in 2 or 3 characters is lifted without padding or with the = that complete its group; with one = where two belong, or two where one does, it stays as sent",
            padding_boundary,
            ["lift-partial-padding"]
        ),
        case!(
            "lift.every-text-part",
            "11.2",
            Must,
            BASIC,
            "a tool message of three text parts — plain text, then a PNG and a JPEG, then a WebP — has all three pictures lifted: token for token the message with their notes in place",
            every_text_part,
            ["lift-first-text-part-only"]
        ),
        case!(
            "lift.eight-per-message",
            "11.4",
            Must,
            BASIC,
            "a tool message of two text parts with 8 pictures each has 8 lifted: the second part is left as sent, token for token",
            eight_per_message,
            ["lift-per-part"]
        ),
        case!(
            "lift.chatbox-shape",
            "11.2",
            Must,
            VISION,
            "a picture JSON-stringified into tool text becomes the note plus its image tokens",
            chatbox,
            ["lift-note", "no-vision-pads"]
        ),
        case!(
            "lift.user-messages-untouched",
            "11.1",
            Must,
            BASIC,
            "base64 in a user's message is left as sent",
            users_untouched,
            ["lift-users"]
        ),
        case!(
            "lift.non-pictures-untouched",
            "11.3",
            Must,
            VISION,
            "long base64 that is not a picture is left exactly as sent: plain bytes, a BM with no BMP header, a RIFF WAVE sound, a GIF88a",
            non_pictures_untouched,
            ["lift-anything"]
        ),
        case!(
            "lift.last-group-ends-on-a-digit",
            "11.2",
            Must,
            BASIC,
            "PNG, JPEG and WebP pictures whose base64 ends in a group of 3 characters ending on 0, 4 or 8, with and without the =, are lifted like any other",
            digit_ends,
            ["lift-digit-end-refused"]
        ),
        case!(
            "lift.text-around-a-run-kept",
            "11.2",
            Must,
            BASIC,
            "the text on both sides of a lifted picture stays as sent: accented, CJK, astral and no-break-space characters, URL-safe base64's - and _, quotes and line breaks right against the run, with and without a data: prefix",
            text_around_kept,
            ["lift-swallows-non-ascii"]
        ),
        case!(
            "lift.scan-is-linear",
            "11.6",
            Should,
            BASIC,
            "16 MiB of base64 in tool text that is no picture takes at most 24 times as long as 2 MiB (a linear scan: about 8; a quadratic one: 64), the fastest of 4 tries each, the sizes alternating",
            scan_is_linear,
            ["lift-scan-quadratic"]
        ),
        case!(
            "lift.bmp-is-a-picture",
            "11.2",
            Must,
            VISION,
            "a BMP in tool text is lifted like a PNG: its tokens in place of its base64",
            bmp_lifted,
            ["bmp-not-lifted", "no-vision-pads"]
        ),
    ]
}

fn encoded(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The same conversation with the tool's base64 already replaced by `replacement`.
fn with_tool_text(body: &Value, from: &str, replacement: &str) -> Value {
    let mut body = body.clone();
    let content = body["messages"][2]["content"].as_str().unwrap_or_default().replace(from, replacement);
    body["messages"][2]["content"] = json!(content);
    body
}

/// A tool message whose content is `parts`, after a user question and the assistant's call.
fn tool_message_of(parts: &[String]) -> Value {
    let content: Vec<Value> = parts.iter().map(|t| json!({"type": "text", "text": t})).collect();
    json!({"messages": [
        {"role": "user", "content": "Take the screenshots."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "shots", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": content},
    ], "max_tokens": 4})
}

async fn every_text_part(ctx: Ctx) -> CheckResult {
    use fixtures::images::{PictureFormat, picture};
    let [png, jpeg, webp] = [PictureFormat::Png, PictureFormat::Jpeg, PictureFormat::Webp]
        .map(|format| ending_on(picture(format, 40, 30, 90), 2));
    let sent = [
        "The screenshots follow.".to_string(),
        format!("first: {}\nsecond: {} (done)", encoded(&png), encoded(&jpeg)),
        format!("third: {}", encoded(&webp)),
    ];
    let noted = [
        sent[0].clone(),
        format!("first: {}\nsecond: {} (done)", note("image/png", png.len()), note("image/jpeg", jpeg.len())),
        format!("third: {}", note("image/webp", webp.len())),
    ];
    let lifted = prompt_tokens(&complete(&ctx.http, &tool_message_of(&sent)).await?)?;
    let wanted = prompt_tokens(&complete(&ctx.http, &tool_message_of(&noted)).await?)?;
    expect_eq("prompt tokens (each part's pictures as their notes)", wanted, lifted)
}

async fn eight_per_message(ctx: Ctx) -> CheckResult {
    let eight = |first_seed: u32| -> String {
        (first_seed..first_seed + 8)
            .map(|seed| format!("shot {seed}: {}\n", encoded(&noise_png(48, 40, seed))))
            .collect()
    };
    let (first, second) = (eight(100), eight(200));
    let both = prompt_tokens(&complete(&ctx.http, &tool_message_of(&[first.clone(), second.clone()])).await?)?;
    // The second part as plain text of the same length: what it must stay once the 8 are taken.
    let same_length = "x".repeat(second.len());
    let as_text = prompt_tokens(&complete(&ctx.http, &tool_message_of(&[first, same_length])).await?)?;
    expect_eq("prompt tokens (the second part's 8 pictures left as sent)", as_text, both)
}

async fn chatbox(ctx: Ctx) -> CheckResult {
    let png = noise_png(640, 600, 9);
    let body = chatbox_conversation(&png);
    let lifted = prompt_tokens(&complete(&ctx.http, &body).await?)?;
    let note = format!("[image (image/png, {} bytes)]", with_commas(png.len()));
    let by_hand = prompt_tokens(&complete(&ctx.http, &with_tool_text(&body, &encoded(&png), &note)).await?)?;
    // 640x600 → 644x588 → 483 image tokens, plus vision start and end, in place of the base64.
    expect_eq("prompt tokens beyond the note", 483 + 2, lifted - by_hand)
}

async fn bmp_lifted(ctx: Ctx) -> CheckResult {
    let picture = bmp(640, 600);
    let body = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": format!("screen: {} end", encoded(&picture))},
    ]});
    let lifted = prompt_tokens(&complete(&ctx.http, &body).await?)?;
    let note = format!("[image (image/bmp, {} bytes)]", with_commas(picture.len()));
    let by_hand = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": format!("screen: {note} end")},
    ]});
    let by_hand = prompt_tokens(&complete(&ctx.http, &by_hand).await?)?;
    // 640x600 → 644x588 → 483 image tokens, plus vision start and end, in place of the base64.
    expect_eq("prompt tokens beyond the note", 483 + 2, lifted - by_hand)
}

async fn users_untouched(ctx: Ctx) -> CheckResult {
    let png = noise_png(640, 600, 9);
    let body = json!({"messages": [{"role": "user", "content": format!("look: {}", encoded(&png))}]});
    let reply = ctx.http.post_json(CHAT, &body).send().await?;
    expect_eq("status (the base64 stays, so it cannot fit the context)", 400, reply.status)?;
    let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.contains("exceeds the context"), "exceeds the context", message)?;
    // A small picture that fits the context as text: it reaches the model as text, one token a byte.
    let small = encoded(&fixtures::images::padded_png_of(771, 8, 6));
    let asking =
        |text: &str| json!({"messages": [{"role": "user", "content": format!("look: {text}")}], "max_tokens": 4});
    let with = prompt_tokens(&complete(&ctx.http, &asking(&small)).await?)?;
    let without = prompt_tokens(&complete(&ctx.http, &asking("")).await?)?;
    expect_eq("prompt tokens a user's 1028-character PNG adds (left as text)", small.len() as i64, with - without)
}

async fn non_pictures_untouched(ctx: Ctx) -> CheckResult {
    let body = |text: &str| json!({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": format!("archive: {text} end")}]});
    let without = prompt_tokens(&complete(&ctx.http, &body("")).await?)?;
    // Plain bytes, and bytes that start like a BMP (`Qk` in base64) with no header after: neither is
    // a picture, so each stays as sent.
    let bmp_lookalike = [&b"BM"[..], &[7u8; 3000]].concat();
    // A RIFF file that is not WebP (a WAVE sound): RIFF alone is not WebP's magic, RIFF…WEBP is.
    let wave = [&b"RIFF"[..], &3000u32.to_le_bytes(), b"WAVEfmt ", &[7u8; 3000]].concat();
    // GIF's magic is GIF87a or GIF89a; GIF88a is neither.
    let gif_lookalike = [&b"GIF88a"[..], &[7u8; 3000]].concat();
    let rows = [
        ("plain bytes", vec![42u8; 3000]),
        ("a BM lookalike", bmp_lookalike),
        ("a RIFF WAVE sound", wave),
        ("a GIF88a lookalike", gif_lookalike),
    ];
    for (what, bytes) in rows {
        let blob = encoded(&bytes);
        let with = prompt_tokens(&complete(&ctx.http, &body(&blob)).await?)?;
        expect_eq(&format!("prompt tokens {what} take (one per base64 character)"), blob.len() as i64, with - without)?;
    }
    Ok(())
}

/// A user's question and a tool message holding `text` between two words.
fn tool_text(text: &str) -> Value {
    json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": format!("screen: {text} end")},
    ], "max_tokens": 4})
}

/// The note SPEC 11.2 gives a lifted picture of `mime` and `bytes` bytes, written here.
fn note(mime: &str, bytes: usize) -> String {
    format!("[image ({mime}, {} bytes)]", with_commas(bytes))
}

async fn no_encoder_note_only(ctx: Ctx) -> CheckResult {
    use fixtures::images::{PictureFormat, padded_png_of, picture};
    let (exact, longer) = (padded_png_of(768, 8, 6), padded_png_of(771, 8, 6));
    let jpeg = picture(PictureFormat::Jpeg, 64, 48, 5);
    let webp = picture(PictureFormat::Webp, 64, 48, 6);
    let two_pads = padded_png_of(772, 8, 6);
    let gif89 = picture(PictureFormat::Gif, 64, 48, 7);
    // The same picture under the older header (a GIF87a reader reads this one alike).
    let gif87 = [&b"GIF87a"[..], &gif89[6..]].concat();
    let rows: [(&str, String, String); 9] = [
        ("a PNG of exactly 1024 base64 characters", encoded(&exact), note("image/png", exact.len())),
        ("a PNG of 1028 base64 characters", encoded(&longer), note("image/png", longer.len())),
        ("a JPEG", encoded(&jpeg), note("image/jpeg", jpeg.len())),
        // Two = end the run; a third is text after it.
        (
            "a PNG ending == and one more =",
            format!("{}=", encoded(&two_pads)),
            format!("{}=", note("image/png", two_pads.len())),
        ),
        // No subtype: not a data: URL prefix, so it stays in front of the note.
        (
            "a PNG behind data:image/;base64, (no subtype)",
            format!("data:image/;base64,{}", encoded(&longer)),
            format!("data:image/;base64,{}", note("image/png", longer.len())),
        ),
        ("a WebP", encoded(&webp), note("image/webp", webp.len())),
        ("a GIF89a", encoded(&gif89), note("image/gif", gif89.len())),
        ("a GIF87a", encoded(&gif87), note("image/gif", gif87.len())),
        (
            "a PNG behind data:image/png;base64,",
            format!("data:image/png;base64,{}", encoded(&longer)),
            // The prefix goes with the run it introduces (11.2).
            note("image/png", longer.len()),
        ),
    ];
    for (what, sent, only_the_note) in rows {
        let lifted = prompt_tokens(&complete(&ctx.http, &tool_text(&sent)).await?)?;
        let by_hand = prompt_tokens(&complete(&ctx.http, &tool_text(&only_the_note)).await?)?;
        expect_eq(&format!("prompt tokens for {what} (as many as its note alone)"), by_hand, lifted)?;
    }
    // A tool message that is nothing but the picture: a run at offset 0 of the text.
    let alone = |content: String| json!({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": content}], "max_tokens": 4});
    let lifted = prompt_tokens(&complete(&ctx.http, &alone(encoded(&longer))).await?)?;
    let by_hand = prompt_tokens(&complete(&ctx.http, &alone(note("image/png", longer.len()))).await?)?;
    expect_eq("prompt tokens for a tool message that is only a PNG's base64 (as many as its note)", by_hand, lifted)?;
    Ok(())
}

async fn run_length_boundary(ctx: Ctx) -> CheckResult {
    let empty = prompt_tokens(&complete(&ctx.http, &tool_text("")).await?)?;
    for (bytes, lifted) in [(765, false), (768, true), (771, true)] {
        let png = fixtures::images::padded_png_of(bytes, 8, 6);
        let run = encoded(&png);
        let tokens = prompt_tokens(&complete(&ctx.http, &tool_text(&run)).await?)?;
        let wanted = if lifted { note("image/png", png.len()).len() } else { run.len() };
        let how = if lifted { "lifted: its note" } else { "left as sent: one token per character" };
        expect_eq(&format!("prompt tokens a {}-character run adds ({how})", run.len()), wanted as i64, tokens - empty)?;
    }
    Ok(())
}

async fn digit_ends(ctx: Ctx) -> CheckResult {
    use base64::engine::general_purpose::STANDARD_NO_PAD;
    use fixtures::images::{PictureFormat, picture};
    let empty = prompt_tokens(&complete(&ctx.http, &tool_text("")).await?)?;
    let formats =
        [(PictureFormat::Png, "image/png"), (PictureFormat::Jpeg, "image/jpeg"), (PictureFormat::Webp, "image/webp")];
    for (format, mime) in formats {
        for (nibble, digit) in [(13u8, '0'), (14, '4'), (15, '8')] {
            let bytes = ending_on(picture(format, 16, 12, 70 + u32::from(nibble)), nibble);
            let bare = STANDARD_NO_PAD.encode(&bytes);
            expect(
                bare.len() % 4 == 3 && bare.ends_with(digit),
                format!("a run ending in 3 characters, the last {digit}"),
                bare[bare.len() - 4..].to_string(),
            )?;
            for (how, run) in [("no padding", bare.clone()), ("its =", format!("{bare}="))] {
                let tokens = prompt_tokens(&complete(&ctx.http, &tool_text(&run)).await?)?;
                expect_eq(
                    &format!(
                        "prompt tokens a {mime} of {} bytes ending on {digit} ({how}) adds: its note",
                        bytes.len()
                    ),
                    note(mime, bytes.len()).len() as i64,
                    tokens - empty,
                )?;
            }
        }
    }
    Ok(())
}

/// Characters that end a run (none is in the base64 class), each put right after a picture's run and
/// right before it; the expected text, built here, is the text with the run (and its `data:` prefix)
/// replaced by its note; the server's own token count for that text is the comparison.
async fn text_around_kept(ctx: Ctx) -> CheckResult {
    let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 40, 30, 17);
    let run = encoded(&png);
    let the_note = note("image/png", png.len());
    let neighbours = ["é", "日本", "🖼\u{fe0f}", "\u{a0}", "-", "_", "\"", "\n", "ü", "Ω,"];
    for neighbour in neighbours {
        for prefix in ["", "data:image/png;base64,"] {
            let sent = format!("before{neighbour}{prefix}{run}{neighbour}after");
            let expected = format!("before{neighbour}{the_note}{neighbour}after");
            let as_sent = prompt_tokens(&complete(&ctx.http, &tool_only(&sent)).await?)?;
            let as_expected = prompt_tokens(&complete(&ctx.http, &tool_only(&expected)).await?)?;
            expect_eq(
                &format!(
                    "prompt tokens of a picture between {neighbour:?} and {neighbour:?} (prefix {prefix:?}): the text with its note"
                ),
                as_expected,
                as_sent,
            )?;
        }
    }
    Ok(())
}

/// How long the server takes to answer `body` once (here a tool message of `mib` MiB of base64 that is
/// no picture — its bytes start with 0, no format's magic: the server reads it all, and then may refuse
/// it for the context, 4.7).
async fn answer_time(ctx: &Ctx, body: &Value, mib: usize) -> Result<std::time::Duration, CheckError> {
    let started = std::time::Instant::now();
    let reply = ctx.http.fresh().post_json(CHAT, body).send().await?;
    expect(
        reply.status == 200 || reply.status == 400,
        format!("an answer to {mib} MiB (200, or 400 for the context)"),
        reply.status.to_string(),
    )?;
    Ok(started.elapsed())
}

/// Tries of each size; the sizes alternate, so a burst of load elsewhere slows both, not one.
const LINEAR_TRIES: usize = 4;

async fn scan_is_linear(ctx: Ctx) -> CheckResult {
    let (small_body, large_body) = (
        tool_only(&crate::generate::lifting::noise(2 << 20, 7)),
        tool_only(&crate::generate::lifting::noise(16 << 20, 7)),
    );
    let (mut small, mut large) = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..LINEAR_TRIES {
        small = small.min(answer_time(&ctx, &small_body, 2).await?);
        large = large.min(answer_time(&ctx, &large_body, 16).await?);
    }
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    expect(
        ratio <= 24.0,
        "16 MiB of non-picture base64 answered within 24× the time of 2 MiB",
        format!("{ratio:.1}× ({} ms for 2 MiB, {} ms for 16 MiB)", small.as_millis(), large.as_millis()),
    )
}

/// A tool message of exactly `text`.
fn tool_only(text: &str) -> Value {
    json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": text},
    ], "max_tokens": 4})
}

async fn padding_boundary(ctx: Ctx) -> CheckResult {
    use base64::engine::general_purpose::STANDARD_NO_PAD;
    let empty = prompt_tokens(&complete(&ctx.http, &tool_text("")).await?)?;
    // 769 bytes end in a group of 2 characters (two = complete it); 770 in a group of 3 (one = does).
    let (two_left, three_left) =
        (fixtures::images::padded_png_of(769, 8, 6), fixtures::images::padded_png_of(770, 8, 6));
    // 49,153 bytes: 65,538 characters, past the first 64 KiB of a run (read another way by some servers).
    let long = fixtures::images::padded_png_of(49_153, 8, 6);
    let bare = |png: &[u8]| STANDARD_NO_PAD.encode(png);
    let rows: [(&str, String, Option<usize>); 8] = [
        ("a PNG ending in 2 characters, no padding", bare(&two_left), Some(two_left.len())),
        ("a PNG ending in 3 characters, no padding", bare(&three_left), Some(three_left.len())),
        ("a PNG ending in 2 characters and ==", encoded(&two_left), Some(two_left.len())),
        ("a PNG ending in 3 characters and =", encoded(&three_left), Some(three_left.len())),
        ("a PNG ending in 2 characters and one =", format!("{}=", bare(&two_left)), None),
        ("a PNG ending in 3 characters and two =", format!("{}==", bare(&three_left)), None),
        ("a 65,538-character PNG, no padding", bare(&long), Some(long.len())),
        ("a 65,538-character PNG and one =", format!("{}=", bare(&long)), None),
    ];
    for (what, run, lifted) in rows {
        let tokens = prompt_tokens(&complete(&ctx.http, &tool_text(&run)).await?)?;
        let (wanted, how) = match lifted {
            Some(bytes) => (note("image/png", bytes).len(), "lifted: its note"),
            None => (run.len(), "left as sent: one token per character"),
        };
        expect_eq(&format!("prompt tokens {what} adds ({how})"), wanted as i64, tokens - empty)?;
    }
    Ok(())
}

async fn cap_boundary(ctx: Ctx) -> CheckResult {
    let pictures: Vec<Vec<u8>> = (0..9).map(|seed| noise_png(48, 40, 300 + seed)).collect();
    for n in [7usize, 8, 9] {
        let sent: String =
            pictures[..n].iter().enumerate().map(|(i, png)| format!("shot {i}: {}\n", encoded(png))).collect();
        // What must reach the model: the first 8 as notes (no encoder: 11.5), the rest as sent — written
        // as as many plain characters, which no server lifts.
        let wanted: String = pictures[..n]
            .iter()
            .enumerate()
            .map(|(i, png)| {
                let shown = if i < 8 { note("image/png", png.len()) } else { "x".repeat(encoded(png).len()) };
                format!("shot {i}: {shown}\n")
            })
            .collect();
        let lifted = prompt_tokens(&complete(&ctx.http, &tool_text(&sent)).await?)?;
        let by_hand = prompt_tokens(&complete(&ctx.http, &tool_text(&wanted)).await?)?;
        expect_eq(&format!("prompt tokens with {n} pictures (the first 8 lifted)"), by_hand, lifted)?;
    }
    Ok(())
}

async fn size_cap_boundary(ctx: Ctx) -> CheckResult {
    const CAP: usize = 32 << 20;
    for (size, what) in [(CAP - 1, "32 MiB less a byte"), (CAP, "exactly 32 MiB")] {
        let png = fixtures::images::padded_png(size);
        let lifted = prompt_tokens(&complete(&ctx.http, &tool_text(&encoded(&png))).await?)?;
        let by_hand = prompt_tokens(&complete(&ctx.http, &tool_text(&note("image/png", size))).await?)?;
        expect_eq(&format!("prompt tokens for a PNG of {what} (its note alone)"), by_hand, lifted)?;
    }
    let over = fixtures::images::padded_png(CAP + 1);
    let reply = ctx.http.post_json(CHAT, &tool_text(&encoded(&over))).send().await?;
    expect_eq("status for a PNG of 32 MiB and a byte (left as sent: over the context)", 400, reply.status)?;
    let message = reply.json()?["error"]["message"].as_str().unwrap_or_default().to_string();
    expect(message.contains("exceeds the context"), "a message saying it exceeds the context", message)
}
