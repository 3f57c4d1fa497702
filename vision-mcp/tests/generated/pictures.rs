//! Generated pictures around every size bound, held to the README's rule for what OpenAI receives:
//! the picture re-encoded from its pixels at most 512 px on its longest side, its shape kept, never
//! made larger. Each run draws its pictures from a seed (`VISION_GEN_SEED`, else the clock; printed,
//! so a failure replays): a format (PNG, JPEG, WebP), and a width and a height each from the sides
//! around the bound (1, 2, 511, 512, 513, and larger up to 1,100 px), so wide, tall and square
//! pictures of every side meet it — plus the bound's corners on every run (513 × 1, 1 × 513, …).

use super::support;

use base64::Engine;
use support::{Draw, Format, Setup, answer, openai, picture, requests, seed};

/// Sides around the 512 px bound, and some beyond it.
const SIDES: [u32; 9] = [1, 2, 3, 511, 512, 513, 700, 1024, 1100];
/// Pictures drawn a run, besides the corners.
const DRAWN: usize = 12;

/// The size the README's rule gives a `width` × `height` picture: unchanged when its longest side is
/// at most 512, else its longest side 512 and the other scaled alike (within a pixel, at least 1).
fn shrunk(width: u32, height: u32) -> (u32, u32, bool) {
    let longest = width.max(height);
    if longest <= 512 {
        return (width, height, true);
    }
    let scale = 512.0 / f64::from(longest);
    let (w, h) = (f64::from(width) * scale, f64::from(height) * scale);
    (w.round().max(1.0) as u32, h.round().max(1.0) as u32, false)
}

#[tokio::test]
async fn every_picture_reaches_openai_at_most_512_px_on_its_longest_side_its_shape_kept() {
    let seed = seed();
    println!("VISION_GEN_SEED={seed:#x}");
    let mut draw = Draw(seed);
    let mut pictures: Vec<(Format, u32, u32)> =
        vec![(Format::Png, 513, 1), (Format::Png, 1, 513), (Format::Jpeg, 513, 513), (Format::Webp, 512, 1100)];
    for _ in 0..DRAWN {
        let format = [Format::Png, Format::Jpeg, Format::Webp][draw.next(3)];
        pictures.push((format, SIDES[draw.next(SIDES.len())], SIDES[draw.next(SIDES.len())]));
    }
    let setup = Setup::new(500, 500);
    let server = openai(answer("- a picture", "completed")).await;
    let analyzer = setup.analyzer(&server.uri());
    let mut wrong = Vec::new();
    for (at, (format, width, height)) in pictures.iter().copied().enumerate() {
        let extension = match format {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Webp => "webp",
        };
        let name = format!("drawn/{at}.{extension}");
        setup.write(&name, &picture(format, width, height, at as u32));
        if let Err(refusal) = analyzer.analyze(&name, "What is in it?", None).await {
            wrong.push(format!("{format:?} {width}x{height}: refused ({refusal:?})"));
            continue;
        }
        let body = requests(&server).await.pop().unwrap_or_default();
        let url = body["input"][0]["content"][1]["image_url"].as_str().unwrap_or_default().to_string();
        let sent = url
            .split_once(";base64,")
            .and_then(|(_, data)| base64::engine::general_purpose::STANDARD.decode(data).ok())
            .and_then(|bytes| image::load_from_memory(&bytes).ok());
        let Some(sent) = sent else {
            wrong.push(format!("{format:?} {width}x{height}: no picture sent"));
            continue;
        };
        let (w, h, exact) = shrunk(width, height);
        let (got_w, got_h) = (sent.width(), sent.height());
        let longest_ok = got_w.max(got_h) == w.max(h);
        let close = |got: u32, want: u32| if exact { got == want } else { got.abs_diff(want) <= 1 };
        if !longest_ok || !close(got_w, w) || !close(got_h, h) {
            wrong.push(format!("{format:?} {width}x{height}: sent {got_w}x{got_h}, the rule says {w}x{h}"));
        }
    }
    assert!(wrong.is_empty(), "seed {seed:#x} (VISION_GEN_SEED replays it):\n{}", wrong.join("\n"));
}
