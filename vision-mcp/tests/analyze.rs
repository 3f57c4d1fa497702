//! `analyze_image` against a wiremock standing in for the OpenAI Responses API: the request it sends,
//! every refusal (and that a refusal sends nothing and consumes nothing), cut-off answers, upstream
//! errors, the budget under concurrency and across a restart, an unusable usage database, and that no
//! error ever carries a secret, a path or the prompt.

mod support;

use base64::Engine;
use serde_json::json;
use support::{KEY, Setup, TOKEN, answer, openai, png, requests};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PROMPT: &str = "Read the error dialog's text, please (PROMPT-CANARY)";

#[tokio::test]
async fn the_request_is_one_responses_call_with_a_small_clean_picture() {
    let setup = Setup::new(20, 3);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("content-type", "application/json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer("- a red square\n- no text", "completed")))
        .expect(1)
        .mount(&server)
        .await;
    setup.write("shots/error.png", &png(2000, 1000));
    let text = setup.analyzer(&server.uri()).analyze("shots/error.png", PROMPT, Some("high")).await.expect("an answer");
    assert_eq!(text, "- a red square\n- no text");
    let body = &requests(&server).await[0];
    assert_eq!(body["model"], "gpt-4.1-mini");
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 300);
    assert!(body["instructions"].as_str().expect("instructions").contains("at most 12 items"));
    assert_eq!(
        body.as_object().expect("object").len(),
        5,
        "model, instructions, input, store, max_output_tokens: {body}"
    );
    let content = &body["input"][0]["content"];
    assert_eq!(content[0], json!({"type": "input_text", "text": PROMPT}));
    assert_eq!(content[1]["type"], "input_image");
    assert_eq!(content[1]["detail"], "high");
    let url = content[1]["image_url"].as_str().expect("a data URL");
    let data = url.strip_prefix("data:image/png;base64,").expect("a PNG data URL");
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).expect("base64");
    let picture = image::load_from_memory(&bytes).expect("a picture");
    assert_eq!((picture.width(), picture.height()), (512, 256), "shrunk to at most 512 px");
    let text = body.to_string();
    assert!(
        !text.contains("error.png") && !text.contains("shots") && !text.contains(&setup.root.display().to_string()),
        "no name or path is sent"
    );
}

#[tokio::test]
async fn a_jpeg_loses_its_exif_and_keeps_its_orientation() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("- a photo", "completed")).await;
    let jpeg = support::picture(support::Format::Jpeg, 300, 100, 2);
    // An APP1 Exif segment saying "rotate 90° clockwise" (orientation 6), with a secret in it.
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0\0\0\0\0GPS-SECRET".to_vec();
    let len = (exif.len() + 2) as u16;
    let mut with_exif = vec![0xFF, 0xD8, 0xFF, 0xE1];
    with_exif.extend(len.to_be_bytes());
    with_exif.append(&mut exif);
    with_exif.extend(&jpeg[2..]);
    setup.write("photo.jpg", &with_exif);
    setup.analyzer(&server.uri()).analyze("photo.jpg", PROMPT, None).await.expect("an answer");
    let body = &requests(&server).await[0];
    let url = body["input"][0]["content"][1]["image_url"].as_str().expect("url");
    assert_eq!(body["input"][0]["content"][1]["detail"], "auto");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(url.strip_prefix("data:image/jpeg;base64,").expect("jpeg"))
        .expect("base64");
    assert!(
        !bytes.windows(4).any(|w| w == b"Exif") && !bytes.windows(6).any(|w| w == b"SECRET"),
        "no metadata survives"
    );
    let picture = image::load_from_memory(&bytes).expect("a picture");
    assert_eq!((picture.width(), picture.height()), (100, 300), "the orientation was applied before it was dropped");
}

/// Every refusal: nothing is sent, nothing is consumed, and the message leaks nothing.
#[tokio::test]
async fn every_refusal_sends_nothing_and_consumes_nothing() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("never", "completed")).await;
    let analyzer = setup.analyzer(&server.uri());
    setup.write("ok.png", &png(10, 10));
    std::fs::write(setup.dir.path().join("outside.png"), png(10, 10)).expect("outside");
    std::os::unix::fs::symlink(setup.dir.path().join("outside.png"), setup.root.join("link.png")).expect("link");
    std::os::unix::fs::symlink(setup.dir.path(), setup.root.join("linkdir")).expect("dir link");
    std::fs::create_dir(setup.root.join("folder.png")).expect("folder");
    setup.write(".hidden.png", &png(10, 10));
    setup.write("big.png", &vec![0x89; (10 << 20) + 1]);
    // A PNG header that claims 6000 x 6000: refused from the header, never decoded.
    let mut huge = png(10, 10)[..33].to_vec();
    huge[16..20].copy_from_slice(&6000u32.to_be_bytes());
    huge[20..24].copy_from_slice(&6000u32.to_be_bytes());
    setup.write("huge.png", &huge);
    setup.write("drawing.svg", support::SVG.as_bytes());
    setup.write("corrupt.png", &support::corrupt_png());
    setup.write("moving.gif", &animated_gif());
    setup.write("shots/ok.png", &png(10, 10));
    // Headers claiming one pixel over 20 megapixels (4,473 × 4,472 = 20,003,256: under 20 × 2^20, so a
    // server that reads "mega" as 2^20 lets it through) and exactly 20,000,000 (5,000 × 4,000: not
    // refused for its size, only for having no pixels after the header).
    for (name, width, height) in [("over-20-mp.png", 4473u32, 4472u32), ("exactly-20-mp.png", 5000, 4000)] {
        setup.write(name, &png_claiming(width, height));
    }
    let fifo = setup.root.join("pipe.png");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let cases: Vec<(String, Option<&str>)> = vec![
        (setup.dir.path().join("outside.png").display().to_string(), None),
        ("/etc/passwd".into(), None),
        ("../outside.png".into(), None),
        (".hidden.png".into(), None),
        ("link.png".into(), None),
        ("linkdir/outside.png".into(), None),
        ("https://example.com/x.png".into(), None),
        ("data:image/png;base64,iVBORw0KGgo=".into(), None),
        (base64::engine::general_purpose::STANDARD.encode(png(40, 40)), None),
        ("folder.png".into(), None),
        ("pipe.png".into(), None),
        ("missing.png".into(), None),
        ("big.png".into(), None),
        ("huge.png".into(), None),
        ("drawing.svg".into(), None),
        ("corrupt.png".into(), None),
        ("moving.gif".into(), None),
        ("ok.png".into(), Some("ultra")),
        // A `..` that stays inside the folder is still not a plain name (seed 003: no `..` at all).
        ("shots/../ok.png".into(), None),
        ("shots/../shots/ok.png".into(), None),
        ("over-20-mp.png".into(), None),
        ("exactly-20-mp.png".into(), None),
    ];
    let mut messages = Vec::new();
    for (image, detail) in cases {
        let refused = analyzer.analyze(&image, PROMPT, detail).await.expect_err(&image).to_string();
        messages.push(refused);
    }
    assert!(analyzer.analyze("ok.png", "   ", None).await.is_err(), "an empty prompt");
    assert!(requests(&server).await.is_empty(), "no refusal reached the API");
    assert_eq!(analyzer.budget().used_today(), Ok(0), "no refusal consumed the budget");
    for message in &messages {
        for secret in [KEY, TOKEN, "PROMPT-CANARY", &setup.dir.path().display().to_string(), "outside.png", "passwd"] {
            assert!(!message.contains(secret), "{message:?} contains {secret:?}");
        }
    }
    assert!(messages[4].contains("symbolic links"), "{}", messages[4]);
    assert!(messages[18].contains("relative file name") && messages[19].contains("relative file name"), "{messages:?}");
    assert!(messages[20].contains("more than 20 megapixels"), "{}", messages[20]);
    assert!(!messages[21].contains("megapixels"), "exactly 20,000,000 pixels is not over the limit: {}", messages[21]);
    assert!(messages[16].contains("animated"), "{}", messages[16]);
}

fn animated_gif() -> Vec<u8> {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame, RgbaImage};
    let mut out = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut out);
        for shade in [0u8, 255] {
            let frame = Frame::from_parts(
                RgbaImage::from_pixel(8, 8, image::Rgba([shade, 0, 0, 255])),
                0,
                0,
                Delay::from_numer_denom_ms(100, 1),
            );
            encoder.encode_frame(frame).expect("frame");
        }
    }
    out
}

/// The CRC-32 of a PNG chunk's type and data.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A 10×10 PNG whose header (with a valid CRC) claims `width` × `height`: its header reads, its pixels
/// are not there, so only a size check made from the header refuses it for its size.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = png(10, 10);
    bytes[16..20].copy_from_slice(&width.to_be_bytes());
    bytes[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

/// A PNG with a text chunk after its header (a tool's or a camera's metadata).
fn png_with_text(width: u32, height: u32, text: &[u8]) -> Vec<u8> {
    let plain = png(width, height);
    let mut chunk = b"tEXt".to_vec();
    chunk.extend(text);
    let mut out = plain[..33].to_vec();
    out.extend((text.len() as u32).to_be_bytes());
    out.extend(&chunk);
    out.extend(crc32(&chunk).to_be_bytes());
    out.extend(&plain[33..]);
    out
}

#[tokio::test]
async fn a_small_png_is_re_encoded_without_its_metadata() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("- a small picture", "completed")).await;
    let original = png_with_text(64, 48, b"Comment\0METADATA-CANARY from the camera");
    assert!(image::load_from_memory(&original).is_ok(), "the test picture decodes");
    setup.write("small.png", &original);
    setup.analyzer(&server.uri()).analyze("small.png", PROMPT, None).await.expect("an answer");
    let body = &requests(&server).await[0];
    let url = body["input"][0]["content"][1]["image_url"].as_str().expect("a data URL");
    let data = url.strip_prefix("data:image/png;base64,").expect("a PNG data URL");
    let sent = base64::engine::general_purpose::STANDARD.decode(data).expect("base64");
    assert_ne!(sent, original, "a picture under 512 px is still re-encoded, not sent as it came");
    assert!(!sent.windows(15).any(|w| w == b"METADATA-CANARY"), "its metadata is gone");
    let (sent, original) =
        (image::load_from_memory(&sent).expect("sent"), image::load_from_memory(&original).expect("original"));
    assert_eq!(sent.to_rgb8(), original.to_rgb8(), "the same pixels");
}

#[tokio::test]
async fn a_still_gif_and_a_webp_are_accepted() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("- ok", "completed")).await;
    let mut gif = Vec::new();
    image::DynamicImage::ImageRgb8(support::pixels(20, 20, 1))
        .write_to(&mut std::io::Cursor::new(&mut gif), image::ImageFormat::Gif)
        .expect("gif");
    setup.write("still.gif", &gif);
    setup.write("pic.webp", &support::picture(support::Format::Webp, 30, 20, 1));
    let analyzer = setup.analyzer(&server.uri());
    assert_eq!(analyzer.analyze("still.gif", PROMPT, Some("low")).await, Ok("- ok".into()));
    assert_eq!(analyzer.analyze("pic.webp", PROMPT, None).await, Ok("- ok".into()));
}

#[tokio::test]
async fn a_cut_off_answer_says_so_and_is_not_retried() {
    let setup = Setup::new(20, 3);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer("- first fact\n- second", "incomplete")))
        .expect(1)
        .mount(&server)
        .await;
    setup.write("a.png", &png(20, 20));
    let text = setup.analyzer(&server.uri()).analyze("a.png", PROMPT, None).await.expect("an answer");
    assert!(text.starts_with("- first fact\n- second"));
    assert!(text.contains("cut off") && text.contains("not retried"), "{text}");
}

#[tokio::test]
async fn an_upstream_error_is_one_line_without_its_body_and_still_counts() {
    let setup = Setup::new(20, 3);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(500).set_body_string(format!("UPSTREAM-SECRET {KEY}")))
        .expect(1)
        .mount(&server)
        .await;
    setup.write("a.png", &png(20, 20));
    let analyzer = setup.analyzer(&server.uri());
    let error = analyzer.analyze("a.png", PROMPT, None).await.expect_err("a failure").to_string();
    assert!(error.contains("HTTP 500"), "{error}");
    assert!(!error.contains("UPSTREAM-SECRET") && !error.contains(KEY), "{error}");
    assert_eq!(analyzer.budget().used_today(), Ok(1), "a failed call stays consumed");
    let unreachable = setup.analyzer("http://127.0.0.1:9");
    let error = unreachable.analyze("a.png", PROMPT, None).await.expect_err("unreachable").to_string();
    assert!(error.contains("could not be reached"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_never_exceed_the_budget_and_it_survives_a_restart() {
    let setup = Setup::new(5, 3);
    let server = openai(answer("- ok", "completed")).await;
    setup.write("a.png", &png(20, 20));
    let analyzer = setup.analyzer(&server.uri());
    let calls = (0..10).map(|_| {
        let analyzer = analyzer.clone();
        tokio::spawn(async move { analyzer.analyze("a.png", PROMPT, None).await })
    });
    let outcomes: Vec<_> = futures::future::join_all(calls).await.into_iter().map(|r| r.expect("joined")).collect();
    let answered = outcomes.iter().filter(|o| o.is_ok()).count();
    assert_eq!(answered, 3, "{outcomes:?}");
    assert_eq!(requests(&server).await.len(), 3, "exactly the budget reached the API");
    for refusal in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(refusal.to_string().contains("10 minutes"), "{refusal}");
    }
    // A new process on the same database: the calls are still counted.
    let restarted = setup.analyzer(&server.uri());
    assert_eq!(restarted.budget().used_today(), Ok(3));
    assert!(restarted.analyze("a.png", PROMPT, None).await.is_err());
    assert_eq!(requests(&server).await.len(), 3);
}

#[tokio::test]
async fn an_unusable_usage_database_means_no_request() {
    let mut setup = Setup::new(20, 3);
    let server = openai(answer("never", "completed")).await;
    setup.write("a.png", &png(20, 20));
    std::fs::create_dir(setup.dir.path().join("a-folder.sqlite3")).expect("a folder where the file should be");
    setup.settings.usage_db = setup.dir.path().join("a-folder.sqlite3");
    let error = setup.analyzer(&server.uri()).analyze("a.png", PROMPT, None).await.expect_err("refused").to_string();
    assert!(error.contains("usage database"), "{error}");
    assert!(requests(&server).await.is_empty());
}

/// The prompt's bound counts characters after trimming: 4,000 `é` (8,000 bytes) with spaces around is
/// sent, 4,001 is refused without reaching the API.
#[tokio::test]
async fn the_prompt_bound_is_4000_characters_after_trimming() {
    let setup = Setup::new(20, 20);
    setup.write("ok.png", &png(16, 16));
    let server = openai(answer("- a square", "completed")).await;
    let analyzer = setup.analyzer(&server.uri());
    let limit = vision_mcp::tool::MAX_PROMPT_CHARS;
    let at_the_bound = format!("  {}\n", "é".repeat(limit));
    assert!(analyzer.analyze("ok.png", &at_the_bound, None).await.is_ok(), "{limit} characters");
    assert_eq!(requests(&server).await.len(), 1);
    let over = "é".repeat(limit + 1);
    let refused = analyzer.analyze("ok.png", &over, None).await.expect_err("one over").to_string();
    assert_eq!(refused, format!("prompt is longer than {limit} characters"));
    assert_eq!(requests(&server).await.len(), 1, "the refusal sent nothing");
}
