//! Hostile pictures: decompression bombs, animation in every format the server reads, and a hard link
//! to a file outside the folder. Each is refused with a clear error, before any pixel is decoded; the
//! bombs are sent to the real binary, whose peak memory is read from /proc afterwards.

mod support;

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use support::{PROMPT, Setup, answer, openai, png, requests};

/// A GIF whose canvas is 1×1 and whose one frame claims 65535×65535: a few dozen bytes that a decoder
/// without limits turns into gigabytes.
fn gif_bomb() -> Vec<u8> {
    let mut gif = b"GIF89a".to_vec();
    gif.extend([1, 0, 1, 0, 0x80, 0, 0]); // 1×1 canvas, a global table of 2 colours
    gif.extend([0, 0, 0, 255, 255, 255]);
    gif.push(0x2C); // the image descriptor: at 0,0, 65535×65535, no local table
    gif.extend([0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0]);
    gif.push(2); // LZW minimum code size
    gif.extend([3, 0x84, 0x8F, 0x01, 0]); // a little LZW data, then the block terminator
    gif.push(0x3B);
    gif
}

/// A PNG with an `acTL` chunk (an APNG): the bytes of a still PNG with the chunk after IHDR.
fn apng() -> Vec<u8> {
    let still = png(16, 16);
    let ihdr_end = 8 + 4 + 4 + 13 + 4;
    let mut chunk = Vec::new();
    chunk.extend(8u32.to_be_bytes());
    chunk.extend(b"acTL");
    chunk.extend(2u32.to_be_bytes()); // two frames
    chunk.extend(0u32.to_be_bytes()); // loop forever
    chunk.extend(0u32.to_be_bytes()); // the CRC is not what refuses it
    [&still[..ihdr_end], &chunk, &still[ihdr_end..]].concat()
}

/// An animated WebP: a VP8X header with the animation flag, an ANIM chunk and one ANMF frame.
fn animated_webp() -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    body.extend(b"VP8X");
    body.extend(10u32.to_le_bytes());
    body.extend([0x02, 0, 0, 0]); // flags: animation
    body.extend([15, 0, 0, 15, 0, 0]); // canvas 16×16 (minus one, 24-bit)
    body.extend(b"ANIM");
    body.extend(6u32.to_le_bytes());
    body.extend([0, 0, 0, 0, 0, 0]);
    body.extend(b"ANMF");
    body.extend(16u32.to_le_bytes());
    body.extend([0u8; 16]);
    let mut webp = b"RIFF".to_vec();
    webp.extend((body.len() as u32).to_le_bytes());
    webp.extend(body);
    webp
}

/// A 1×1 GIF canvas with two frames, the second far outside it.
fn gif_two_frames_second_outside() -> Vec<u8> {
    let mut gif = b"GIF89a".to_vec();
    gif.extend([1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    for size in [[1, 0, 1, 0], [0x00, 0x40, 0x00, 0x40]] {
        gif.push(0x2C);
        gif.extend([0, 0, 0, 0]);
        gif.extend(size);
        gif.push(0);
        gif.extend([2, 2, 0x44, 0x01, 0]);
    }
    gif.push(0x3B);
    gif
}

#[tokio::test]
async fn bombs_animation_and_hard_links_are_refused_and_send_nothing() {
    let setup = Setup::new(20, 3);
    let server = openai(answer("never", "completed")).await;
    let analyzer = setup.analyzer(&server.uri());
    setup.write("bomb.gif", &gif_bomb());
    setup.write("outside-frame.gif", &gif_two_frames_second_outside());
    setup.write("moving.png", &apng());
    setup.write("moving.webp", &animated_webp());
    std::fs::write(setup.dir.path().join("secret.png"), png(12, 12)).expect("outside the folder");
    std::fs::hard_link(setup.dir.path().join("secret.png"), setup.root.join("linked.png")).expect("hard link");
    for (name, expected) in [
        ("bomb.gif", "could not be read"),
        ("outside-frame.gif", "could not be read"),
        ("moving.png", "animated pictures"),
        ("moving.webp", "animated pictures"),
        ("linked.png", "hard link"),
    ] {
        let refused = analyzer.analyze(name, PROMPT, None).await.expect_err(name).to_string();
        assert!(refused.contains(expected), "{name}: {refused}");
    }
    assert!(requests(&server).await.is_empty());
    assert_eq!(analyzer.budget().used_today(), Ok(0));
    // A still PNG beside them still works: the checks look at what is animated, not at the format.
    let server = openai(answer("- a square", "completed")).await;
    setup.write("still.png", &png(16, 16));
    assert_eq!(setup.analyzer(&server.uri()).analyze("still.png", PROMPT, None).await.as_deref(), Ok("- a square"));
}

/// The peak resident memory of process `pid`, in KiB (VmHWM).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM")
}

#[tokio::test]
async fn the_binary_refuses_bombs_without_growing_past_64_mib() {
    let setup = Setup::new(20, 3);
    setup.write("bomb.gif", &gif_bomb());
    setup.write("outside-frame.gif", &gif_two_frames_second_outside());
    let mut huge = png(10, 10)[..33].to_vec(); // a PNG header claiming 60000×60000
    huge[16..24].copy_from_slice(&[0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60]);
    setup.write("huge.png", &huge);
    let mut command = support::stdio_command(&setup);
    command.stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).expect("spawned");
    let pid = transport.id().expect("a pid");
    let client = ClientConfig::new(ClientCapabilities::default(), Implementation::new("test", "1"));
    let service = client.serve(transport).await.expect("initialized");
    for name in ["bomb.gif", "outside-frame.gif", "huge.png", "bomb.gif"] {
        let mut arguments = serde_json::Map::new();
        arguments.insert("image".into(), name.into());
        arguments.insert("prompt".into(), "What is it?".into());
        let call = CallToolRequestParams::new("analyze_image").with_arguments(arguments);
        let result = service.peer().call_tool(call).await.expect("a result");
        assert_eq!(result.is_error, Some(true), "{name}");
    }
    let peak = peak_rss_kib(pid);
    assert!(peak < 64 * 1024, "vision-mcp's peak RSS reached {peak} KiB refusing the bombs");
    eprintln!("vision-mcp peak RSS after refusing the bombs: {} KiB", peak);
    let _ = service.cancel().await;
}
