//! SPEC §7–§8 as a model over a generated tool result: the `result` event's `ok`, `text` (each
//! block's 7.1 text joined by `\n`, the error form, the cap and its note), `chars`, `truncated` and
//! `media` (the first 4 candidates that are PNG, JPEG or WebP by their bytes, in block order), and
//! the tokens the next pass's tool message holds (6.5, 8.8), with or without a vision encoder.

use base64::Engine as _;
use fixtures::images::{self, PictureFormat};
use serde_json::{Value, json};

use super::{Block, CAP, Data, GeneratedResult, PICTURES_PER_RESULT};

/// What the scenario's server is configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// `mcp.image_results`.
    pub image_results: bool,
    /// A vision encoder (the geometry backend).
    pub vision: bool,
}

/// `1234567` → `1,234,567` (SPEC 7.1, 7.3).
fn thousands(n: usize) -> String {
    images::with_commas(n)
}

/// Every `"  "` written as `" "`, left to right, once (three spaces become two): Strata's
/// `str.replace("  ", " ")` on a resource link's text (SPEC 7.1).
fn collapse_double_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("  ") {
        out.push_str(&rest[..at]);
        out.push(' ');
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// A block's 7.1 text.
fn block_text(block: &Block) -> String {
    let placeholder = |kind: &str, mime: &str, base64_len: usize| {
        let mime = if mime.is_empty() { "?" } else { mime };
        format!("[{kind} ({mime}, {} bytes): not shown to the model]", thousands(base64_len * 3 / 4))
    };
    match block {
        Block::Text(text) | Block::TextResource { text, .. } => text.clone(),
        Block::Blob { mime, uri, .. } => {
            let mime = mime.as_deref().filter(|m| !m.is_empty()).unwrap_or("binary");
            format!("[resource {uri} ({mime}), not shown]")
        }
        Block::Link { name, uri } => collapse_double_spaces(&format!("[resource link: {name} {uri}]")),
        Block::Image { data, mime } => placeholder("image", mime, data.base64().len()),
        Block::Audio { mime, len } => {
            placeholder("audio", mime, base64::engine::general_purpose::STANDARD.encode(vec![0u8; *len]).len())
        }
    }
}

/// A cached picture, as its media entry says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// `<sha256>.<png|jpg|webp>`.
    pub name: String,
    /// Its mime by its bytes.
    pub mime: &'static str,
    /// The decoded picture.
    pub bytes: Vec<u8>,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
}

/// The picture a candidate holds, if it is one that is cached (8.2, 8.5): PNG, JPEG or WebP by its
/// bytes, whatever its label.
pub(super) fn cacheable(data: &Data) -> Option<Expected> {
    let Data::Raster { format, width, height, .. } = data else { return None };
    let (mime, extension) = match format {
        PictureFormat::Png => ("image/png", "png"),
        PictureFormat::Jpeg => ("image/jpeg", "jpg"),
        PictureFormat::Webp => ("image/webp", "webp"),
        _ => return None,
    };
    let bytes = data.bytes();
    let name = format!("{}.{extension}", images::sha256_hex(&bytes));
    Some(Expected { name, mime, bytes, width: *width, height: *height })
}

/// `text` cut to [`CAP`] characters with 7.3's note, when it is longer; its length in characters.
fn capped(text: String, cap: usize) -> (String, usize) {
    let chars = text.chars().count();
    if chars <= cap {
        return (text, chars);
    }
    let kept: String = text.chars().take(cap).collect();
    let note = format!(
        "\n\n[... truncated: the tool returned {} characters; only the first {} are shown]",
        thousands(chars),
        thousands(cap)
    );
    (kept + &note, chars)
}

/// For each block in order, the picture it caches, if any (8.2, 8.4: the first 4 candidates that are
/// PNG, JPEG or WebP); none for an error or with `image_results` off.
pub(super) fn cached_by_block(result: &GeneratedResult, image_results: bool) -> Vec<Option<Expected>> {
    let mut left = if result.is_error || !image_results { 0 } else { PICTURES_PER_RESULT };
    result
        .blocks
        .iter()
        .map(|block| {
            let picture = match block {
                Block::Image { data, .. } => cacheable(data),
                Block::Blob { data, mime: Some(mime), .. } if mime.starts_with("image/") => cacheable(data),
                _ => None,
            };
            let picture = picture.filter(|_| left > 0);
            left -= usize::from(picture.is_some());
            picture
        })
        .collect()
}

/// The tokens the tool message of the next pass holds (6.5, 8.8): its text's UTF-8 bytes, and each
/// cached picture's 12.2 image tokens and its two markers when there is a vision encoder.
pub fn tool_message_tokens(result: &GeneratedResult, mode: Mode) -> u64 {
    let cached = cached_by_block(result, mode.image_results);
    if !mode.vision || cached.iter().all(Option::is_none) {
        // Every picture is its 7.1 text: the message is the event's text (an error caches none).
        let (event, _) = expected(result, mode.image_results);
        return event["text"].as_str().map_or(0, str::len) as u64;
    }
    let mut pictures = 0;
    let texts: Vec<String> = result
        .blocks
        .iter()
        .zip(&cached)
        .map(|(block, cached)| match cached {
            Some(picture) => {
                pictures += crate::geometry::expected_tokens(picture.width, picture.height) + 2;
                String::new()
            }
            None => block_text(block),
        })
        .collect();
    let (text, _) = capped(texts.join("\n"), CAP);
    text.len() as u64 + pictures
}

/// What the model says the `result` event holds (without `id` and `ms`), and the pictures cached:
/// none with `mcp.image_results` off, where the event is 7.1–7.3's alone (7.4).
pub fn expected(result: &GeneratedResult, image_results: bool) -> (Value, Vec<Expected>) {
    expected_capped(result, image_results, CAP)
}

/// [`expected`] on a server whose `mcp.max_result_chars` is `cap`.
pub fn expected_capped(result: &GeneratedResult, image_results: bool, cap: usize) -> (Value, Vec<Expected>) {
    let joined = result.blocks.iter().map(block_text).collect::<Vec<_>>().join("\n");
    let text = match (result.is_error, joined.is_empty()) {
        (true, true) => "error: the tool reported an error".to_string(),
        (true, false) => format!("error: {joined}"),
        (false, _) => joined,
    };
    let (shown, chars) = capped(text, cap);
    let truncated = chars > cap;
    let pictures: Vec<Expected> = cached_by_block(result, image_results).into_iter().flatten().collect();
    let mut event =
        json!({"event": "result", "ok": !result.is_error, "text": shown, "chars": chars, "truncated": truncated});
    if !pictures.is_empty() {
        event["media"] = pictures
            .iter()
            .map(|p| {
                json!({"ref": format!("strata-tool-media:{}", p.name), "url": format!("/tool-media/{}", p.name),
                       "mime": p.mime, "bytes": p.bytes.len(), "width": p.width, "height": p.height})
            })
            .collect();
    }
    (event, pictures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(seed: u32) -> Data {
        Data::Raster { format: PictureFormat::Png, width: 3, height: 2, seed }
    }

    #[test]
    fn double_spaces_collapse_once_left_to_right() {
        assert_eq!(collapse_double_spaces("a  b"), "a b");
        assert_eq!(collapse_double_spaces("a   b"), "a  b");
        assert_eq!(collapse_double_spaces("a    b"), "a  b");
        assert_eq!(collapse_double_spaces("[resource link:  x]"), "[resource link: x]");
    }

    #[test]
    fn every_block_kind_has_its_text() {
        let result = GeneratedResult {
            blocks: vec![
                Block::Text("é😀".into()),
                Block::Image { data: Data::NotBase64, mime: String::new() },
                Block::Blob { data: Data::Svg, mime: Some(String::new()), uri: "file:///a".into() },
                Block::Link { name: "n".into(), uri: "file:///b".into() },
                Block::Audio { mime: "audio/wav".into(), len: 2_000 },
            ],
            is_error: false,
        };
        let (event, pictures) = expected(&result, true);
        assert!(pictures.is_empty());
        assert_eq!(
            event["text"],
            "é😀\n[image (?, 14 bytes): not shown to the model]\n[resource file:///a (binary), not shown]\n\
             [resource link: n file:///b]\n[audio (audio/wav, 2,001 bytes): not shown to the model]"
        );
        assert!(event.get("media").is_none());
    }

    #[test]
    fn only_the_first_four_rasters_are_cached_whatever_their_labels() {
        let mut blocks = vec![
            Block::Image { data: Data::Svg, mime: "image/svg+xml".into() },
            Block::Image { data: Data::Corrupt, mime: "image/png".into() },
            Block::Blob { data: png(1), mime: Some("application/octet-stream".into()), uri: "file:///x".into() },
            Block::Image {
                data: Data::Raster { format: PictureFormat::Gif, width: 2, height: 2, seed: 9 },
                mime: "image/gif".into(),
            },
        ];
        blocks.extend((2..7).map(|seed| Block::Image { data: png(seed), mime: "image/jpeg".into() }));
        let (event, pictures) = expected(&GeneratedResult { blocks: blocks.clone(), is_error: false }, true);
        assert_eq!(pictures.len(), 4);
        assert_eq!(event["media"][0]["mime"], "image/png");
        assert_eq!(pictures[3].bytes, png(5).bytes());
        let (off, none_off) = expected(&GeneratedResult { blocks: blocks.clone(), is_error: false }, false);
        assert!(none_off.is_empty() && off.get("media").is_none());
        let (error, none) = expected(&GeneratedResult { blocks, is_error: true }, true);
        assert!(none.is_empty() && error.get("media").is_none());
        assert_eq!(error["ok"], false);
    }

    #[test]
    fn with_an_encoder_a_cached_picture_is_image_tokens_and_leaves_the_text() {
        let result = GeneratedResult {
            blocks: vec![Block::Text("ab".into()), Block::Image { data: png(1), mime: "image/png".into() }],
            is_error: false,
        };
        let picture = crate::geometry::expected_tokens(3, 2) + 2;
        assert_eq!(tool_message_tokens(&result, Mode { image_results: true, vision: true }), 3 + picture);
        let placeholder = "ab\n[image (image/png, ".len() as u64;
        assert!(tool_message_tokens(&result, Mode { image_results: true, vision: false }) > placeholder);
        let long = GeneratedResult {
            blocks: vec![Block::Text("x".repeat(CAP + 5)), Block::Image { data: png(2), mime: String::new() }],
            is_error: false,
        };
        let note = "\n\n[... truncated: the tool returned 306 characters; only the first 300 are shown]".len() as u64;
        assert_eq!(tool_message_tokens(&long, Mode { image_results: true, vision: true }), CAP as u64 + note + picture);
    }

    #[test]
    fn the_cap_counts_characters_and_says_so() {
        let (event, _) =
            expected(&GeneratedResult { blocks: vec![Block::Text("é".repeat(CAP + 1))], is_error: false }, true);
        assert_eq!(event["chars"], CAP + 1);
        assert_eq!(event["truncated"], true);
        assert_eq!(
            event["text"],
            format!(
                "{}\n\n[... truncated: the tool returned 301 characters; only the first 300 are shown]",
                "é".repeat(CAP)
            )
        );
        let (event, _) =
            expected(&GeneratedResult { blocks: vec![Block::Text("é".repeat(CAP))], is_error: false }, true);
        assert_eq!(event["truncated"], false);
        let (event, _) = expected(&GeneratedResult { blocks: vec![], is_error: true }, true);
        assert_eq!(event["text"], "error: the tool reported an error");
    }
}
