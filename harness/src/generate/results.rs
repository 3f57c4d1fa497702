//! Generated tool results and a model of what SPEC §7 and §8 say the `result` event must be.
//!
//! A result is a list of blocks from the whole space MCP allows — text (ASCII, non-ASCII, astral,
//! newlines, runs of spaces), image blocks of PNG, JPEG, WebP, GIF, BMP, SVG, corrupt PNG, bytes that are
//! no picture and base64 that does not decode, each labelled rightly or wrongly; resource blobs with an
//! `image/*`, another or no mime; text resources; resource links; audio — or an `isError` result. The
//! fixture MCP server's `staged` tool returns it, and the model predicts, from SPEC alone:
//! - 7.1–7.3: `ok`, `text` (each block's text joined by `\n`, the error form, the cap and its note),
//!   `chars` and `truncated`;
//! - 8.2, 8.4–8.6: `media` — the candidates (image blocks, `image/*` blobs) that decode to PNG, JPEG or
//!   WebP with a readable header, the first 4 of them, in block order, with their hash name, mime,
//!   size and dimensions; no `media` key when there is none (and never for an error);
//! - 8.3: each announced picture's file is in the cache folder with its bytes;
//! - 6.5 and 8.8: the next pass's prompt holds the result as the tool message, so the answer's
//!   `usage.prompt_tokens` (the last pass's prompt, 4.5) exceeds that of an empty result by exactly
//!   the message's tokens (4.8: one a UTF-8 byte, a picture its 12.2 image tokens and two markers).
//!   Without a vision encoder each picture is its 7.1 text, so the message is the event's text; with
//!   one, each cached picture is a picture and adds nothing to the text, whose cap (7.3) counts the
//!   rest.
//!
//! This file generates the results, sends them and checks what comes back; the model itself is
//! `results/model.rs`'s.

mod model;

use std::path::Path;

use base64::Engine as _;
use fixtures::images::{self, PictureFormat};
use proptest::prelude::*;
use rmcp::model::{AudioContent, CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::{Map, Value, json};

use super::CHAT;
use crate::http::Http;
use crate::sse::EventStream;
pub use model::{Expected, Mode, expected, expected_capped, tool_message_tokens};

/// `mcp.max_result_chars` in the generated cases' scenario: small, so the cap is met often.
pub const CAP: usize = 300;
/// Pictures cached per result at most (8.4's default).
const PICTURES_PER_RESULT: usize = 4;

/// What a candidate picture's data holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// A raster picture of this format and size.
    Raster {
        /// Its format.
        format: PictureFormat,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// Its pixels' seed.
        seed: u32,
    },
    /// An SVG (never cached).
    Svg,
    /// A PNG signature followed by bytes that are not a PNG.
    Corrupt,
    /// Bytes that are no picture format.
    Noise(usize),
    /// Characters that are not base64.
    NotBase64,
}

impl Data {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Data::Raster { format, width, height, seed } => images::picture(*format, *width, *height, *seed),
            Data::Svg => images::SVG.as_bytes().to_vec(),
            Data::Corrupt => images::corrupt_png(),
            Data::Noise(len) => (0..*len).map(|i| b"no picture here "[i % 16]).collect(),
            Data::NotBase64 => Vec::new(),
        }
    }

    /// The base64 a tool sends.
    fn base64(&self) -> String {
        match self {
            Data::NotBase64 => "this is not base64!".into(),
            other => base64::engine::general_purpose::STANDARD.encode(other.bytes()),
        }
    }
}

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A text block.
    Text(String),
    /// An image block labelled `mime`.
    Image {
        /// What its data holds.
        data: Data,
        /// Its label.
        mime: String,
    },
    /// An embedded resource with a blob.
    Blob {
        /// What the blob holds.
        data: Data,
        /// Its label, if any.
        mime: Option<String>,
        /// Its URI.
        uri: String,
    },
    /// An embedded resource with text.
    TextResource {
        /// The text.
        text: String,
        /// Its URI.
        uri: String,
    },
    /// A resource link.
    Link {
        /// Its name.
        name: String,
        /// Its URI.
        uri: String,
    },
    /// An audio block of `len` zero bytes.
    Audio {
        /// Its label.
        mime: String,
        /// Its decoded length.
        len: usize,
    },
}

/// A generated tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedResult {
    /// Its content blocks.
    pub blocks: Vec<Block>,
    /// `isError`.
    pub is_error: bool,
}

// --- Strategies -------------------------------------------------------------------------------------

/// Text from pieces a result can hold: words, non-ASCII and astral characters, newlines, runs of
/// spaces; now and then long enough to pass the cap.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z]{1,8}".prop_map(|w| w),
        1 => Just("é".to_string()),
        1 => Just("日本語".to_string()),
        1 => Just("😀".to_string()),
        1 => Just("𝔸".to_string()),
        1 => Just("\n".to_string()),
        2 => Just(" ".to_string()),
        1 => Just("  ".to_string()),
        1 => Just("ÿ".repeat(97)),
        1 => Just("x".repeat(240)),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// A raster picture of one of `formats`, 1 to `side - 1` pixels a side.
fn raster(formats: Vec<PictureFormat>, side: u32) -> impl Strategy<Value = Data> {
    (prop::sample::select(formats), 1..side, 1..side, any::<u32>())
        .prop_map(|(format, width, height, seed)| Data::Raster { format, width, height, seed })
}

fn data() -> impl Strategy<Value = Data> {
    use PictureFormat::*;
    let raster = raster(vec![Png, Jpeg, Webp, Gif, Bmp], 40);
    prop_oneof![
        8 => raster,
        1 => Just(Data::Svg),
        1 => Just(Data::Corrupt),
        1 => (1usize..64).prop_map(Data::Noise),
        1 => Just(Data::NotBase64),
    ]
}

/// A mime label: the right ones, wrong ones, an empty one.
fn mime() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("image/png"),
        Just("image/jpeg"),
        Just("image/webp"),
        Just("image/gif"),
        Just("image/svg+xml"),
        Just("application/octet-stream"),
        Just(""),
    ]
    .prop_map(String::from)
}

fn uri() -> impl Strategy<Value = String> {
    prop_oneof!["file:///[a-z]{1,6}\\.png", "https://example\\.com/[a-z]{1,6}", "fixture://é/[0-9]{1,3}"]
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        4 => text().prop_map(Block::Text),
        5 => (data(), mime()).prop_map(|(data, mime)| Block::Image { data, mime }),
        2 => (data(), prop::option::of(mime()), uri()).prop_map(|(data, mime, uri)| Block::Blob { data, mime, uri }),
        1 => (text(), uri()).prop_map(|(text, uri)| Block::TextResource { text, uri }),
        1 => ("[a-z ]{0,6}( {2,3}[a-zé]{0,3})?", uri()).prop_map(|(name, uri)| Block::Link { name, uri }),
        1 => (prop_oneof![Just("audio/wav"), Just("")], 0usize..300)
            .prop_map(|(mime, len)| Block::Audio { mime: mime.into(), len }),
    ]
}

/// An image block whose data is not a picture that is cached (8.4: it takes none of the 4 places).
fn uncached_candidate() -> impl Strategy<Value = Block> {
    (
        prop_oneof![
            Just(Data::Svg),
            Just(Data::Corrupt),
            Just(Data::NotBase64),
            Just(Data::Noise(20)),
            (1u32..9).prop_map(|seed| Data::Raster { format: PictureFormat::Gif, width: 3, height: 2, seed }),
            (1u32..9).prop_map(|seed| Data::Raster { format: PictureFormat::Bmp, width: 3, height: 2, seed }),
        ],
        mime(),
    )
        .prop_map(|(data, mime)| Block::Image { data, mime })
}

/// A PNG, JPEG or WebP picture in an image block (the kind that is cached), a candidate that is not
/// (8.4: it takes none of the 4 places), or any other block.
fn crowded_block() -> impl Strategy<Value = Block> {
    use PictureFormat::*;
    let cached = (raster(vec![Png, Jpeg, Webp], 24), mime()).prop_map(|(data, mime)| Block::Image { data, mime });
    prop_oneof![4 => cached, 1 => uncached_candidate(), 1 => block()]
}

/// Results of 0 to 9 blocks, and one in three crowded with 6 to 10 pictures, most of them cached (so the
/// 4-picture cap is met often); a fifth of them errors.
pub fn results() -> impl Strategy<Value = GeneratedResult> {
    let blocks = prop_oneof![
        2 => prop::collection::vec(block(), 0..10),
        1 => (prop::option::weighted(0.6, uncached_candidate()), prop::collection::vec(crowded_block(), 5..10))
            .prop_map(|(first, rest)| first.into_iter().chain(rest).collect()),
    ];
    (blocks, prop::bool::weighted(0.2)).prop_map(|(blocks, is_error)| GeneratedResult { blocks, is_error })
}

// --- What the fixture returns -----------------------------------------------------------------------

impl GeneratedResult {
    /// The result as the MCP server sends it.
    pub fn to_mcp(&self) -> CallToolResult {
        let content = self
            .blocks
            .iter()
            .map(|block| match block {
                Block::Text(text) => ContentBlock::text(text.clone()),
                Block::Image { data, mime } => ContentBlock::image(data.base64(), mime.clone()),
                Block::Blob { data, mime, uri } => ContentBlock::resource(ResourceContents::BlobResourceContents {
                    uri: uri.clone(),
                    mime_type: mime.clone(),
                    blob: data.base64(),
                    meta: None,
                }),
                Block::TextResource { text, uri } => {
                    ContentBlock::resource(ResourceContents::text(text.clone(), uri.clone()))
                }
                Block::Link { name, uri } => ContentBlock::resource_link(Resource::new(uri.clone(), name.clone())),
                Block::Audio { mime, len } => {
                    let data = base64::engine::general_purpose::STANDARD.encode(vec![0u8; *len]);
                    ContentBlock::Audio(AudioContent::new(data, mime.clone()))
                }
            })
            .collect();
        if self.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
    }
}

// --- The check --------------------------------------------------------------------------------------

/// Stages `result`, runs one tool turn that calls it, and compares the `result` event and the cache
/// folder with the model.
pub async fn check(
    http: Http,
    stage: fixtures::mcp_server::Stage,
    cache: std::path::PathBuf,
    mode: Mode,
    empty_prompt: std::sync::Arc<tokio::sync::OnceCell<i64>>,
    result: GeneratedResult,
) -> Result<(), String> {
    let empty = GeneratedResult { blocks: Vec::new(), is_error: false };
    let baseline =
        *empty_prompt.get_or_try_init(|| async { turn(&http, &stage, &empty).await.map(|(_, tokens)| tokens) }).await?;
    let (stream, tokens) = turn(&http, &stage, &result).await?;
    let events = stream.mcp_events();
    let results: Vec<&Value> = events.iter().filter(|e| e["event"] == "result").collect();
    let [event] = results.as_slice() else {
        return Err(format!("{} result events, not 1: {events:?}", results.len()));
    };
    let (wanted, pictures) = expected(&result, mode.image_results);
    let mut got: Map<String, Value> = event.as_object().cloned().unwrap_or_default();
    for volatile in ["id", "ms"] {
        if got.remove(volatile).is_none() {
            return Err(format!("the result event has no `{volatile}`: {event}"));
        }
    }
    let got = Value::Object(got);
    if got != wanted {
        return Err(format!("the result event differs from the model's\n model: {wanted}\nserver: {got}"));
    }
    let message = tool_message_tokens(&result, mode) as i64;
    if tokens - baseline != message {
        return Err(format!(
            "the next pass's prompt grew by {} tokens over an empty result's; the model's tool message holds {message}",
            tokens - baseline
        ));
    }
    files_are_there(&cache, &pictures)
}

/// Stages `result` and runs one streamed tool turn that calls it: the stream and the answer's
/// `usage.prompt_tokens`.
async fn turn(
    http: &Http,
    stage: &fixtures::mcp_server::Stage,
    result: &GeneratedResult,
) -> Result<(EventStream, i64), String> {
    stage.set(result.to_mcp());
    let body = json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true, "stream": true});
    // Not kept in the case's transcript: a failure reports the shrunk result instead.
    let reply = http.fresh().post_json(CHAT, &body).send().await.map_err(|e| e.to_string())?;
    if reply.status != 200 {
        return Err(format!("status {}: {}", reply.status, String::from_utf8_lossy(&reply.body)));
    }
    let stream = EventStream::parse(&reply.text());
    let tokens =
        stream.usage().and_then(|u| u["prompt_tokens"].as_i64()).ok_or("the answer has no usage.prompt_tokens")?;
    Ok((stream, tokens))
}

/// Every announced picture is a file in the cache folder holding its bytes (8.3).
fn files_are_there(cache: &Path, pictures: &[Expected]) -> Result<(), String> {
    for picture in pictures {
        let path = cache.join(&picture.name);
        match std::fs::read(&path) {
            Ok(bytes) if bytes == picture.bytes => {}
            Ok(bytes) => return Err(format!("{} holds {} bytes that are not the picture", picture.name, bytes.len())),
            Err(e) => return Err(format!("{} is not in the cache folder: {e}", picture.name)),
        }
    }
    Ok(())
}

/// A result as a reader wants it: one line a block (the model's event is in the failure itself).
pub fn describe(result: &GeneratedResult) -> String {
    let data = |data: &Data| match data {
        Data::Raster { format, width, height, seed } => format!("{format:?} {width}×{height} (seed {seed})"),
        other => format!("{other:?}"),
    };
    let mut lines = vec![format!("  isError: {}", result.is_error)];
    for block in &result.blocks {
        lines.push(match block {
            Block::Text(text) => format!("  text {text:?}"),
            Block::Image { data: d, mime } => format!("  image {} labelled {mime:?}", data(d)),
            Block::Blob { data: d, mime, uri } => format!("  resource blob {uri} {} labelled {mime:?}", data(d)),
            Block::TextResource { text, uri } => format!("  text resource {uri} {text:?}"),
            Block::Link { name, uri } => format!("  resource link {name:?} {uri}"),
            Block::Audio { mime, len } => format!("  audio of {len} bytes labelled {mime:?}"),
        });
    }
    lines.join("\n")
}

#[cfg(test)]
mod odds {
    use super::model::{cacheable, cached_by_block};
    use super::*;

    /// The cached pictures of a result, counted.
    fn cached(result: &GeneratedResult) -> usize {
        cached_by_block(result, true).iter().flatten().count()
    }

    #[test]
    fn nearly_every_run_holds_what_the_named_variants_need() {
        // At the default budget (48 a run), each kind a variant breaks shows in nearly every run:
        // more pictures than the cap (no-picture-cap, picture-cap-off-by-one), a candidate that is not
        // cached before the fourth that is (candidates-take-slots), an error (errors-fail-request).
        let over_the_cap = crate::generate::runs_holding(results(), 48, |r| {
            !r.is_error
                && r.blocks
                    .iter()
                    .filter(|b| matches!(b, Block::Image { data, .. } if cacheable(data).is_some()))
                    .count()
                    > 4
        });
        let uncached_first = crate::generate::runs_holding(results(), 48, |r| {
            let candidates: Vec<bool> = r
                .blocks
                .iter()
                .filter_map(|b| if let Block::Image { data, .. } = b { Some(cacheable(data).is_some()) } else { None })
                .collect();
            !r.is_error
                && cached(r) == 4
                && candidates
                    .iter()
                    .position(|c| !c)
                    .is_some_and(|at| candidates[at..].iter().filter(|c| **c).count() >= 4)
        });
        let errors = crate::generate::runs_holding(results(), 48, |r| r.is_error);
        assert!(
            over_the_cap >= 999 && uncached_first >= 999 && errors >= 999,
            "{over_the_cap}, {uncached_first}, {errors} of 1,000"
        );
    }

    /// `result` with `edit` made to its blocks, as the relay of a variant makes it.
    fn edited(result: &GeneratedResult, edit: impl Fn(Vec<Block>) -> Vec<Block>) -> GeneratedResult {
        GeneratedResult { blocks: edit(result.blocks.clone()), is_error: result.is_error }
    }

    #[test]
    fn nearly_every_run_tells_the_relayed_variants_apart() {
        // Each relayed variant's edit, made to the generated result, changes the model's event:
        // blocks-joined-by-blank-line (an empty text block between every two), text-blocks-first,
        // undecodable-pictures-dropped; image-blocks-not-candidates needs a picture cached from an
        // image block.
        let decodes = |data: &Data| !matches!(data, Data::NotBase64);
        let held = crate::generate::runs_holding_each(results(), 48, 4, |r| {
            let event = expected(r, true).0;
            let joined = edited(r, |blocks| {
                let mut out = Vec::new();
                for (i, block) in blocks.into_iter().enumerate() {
                    if i > 0 {
                        out.push(Block::Text(String::new()));
                    }
                    out.push(block);
                }
                out
            });
            let texts_first = edited(r, |blocks| {
                let (texts, others): (Vec<Block>, Vec<Block>) =
                    blocks.into_iter().partition(|b| matches!(b, Block::Text(_)));
                texts.into_iter().chain(others).collect()
            });
            let dropped = edited(r, |blocks| {
                blocks
                    .into_iter()
                    .filter(|b| match b {
                        Block::Image { data, .. } => decodes(data),
                        Block::Blob { data, mime: Some(mime), .. } if mime.starts_with("image/") => decodes(data),
                        _ => true,
                    })
                    .collect()
            });
            let from_image_block = r
                .blocks
                .iter()
                .zip(cached_by_block(r, true))
                .any(|(block, cached)| matches!(block, Block::Image { .. }) && cached.is_some());
            vec![
                expected(&joined, true).0 != event,
                expected(&texts_first, true).0 != event,
                expected(&dropped, true).0 != event,
                from_image_block,
            ]
        });
        assert!(held.iter().all(|n| *n >= 999), "{held:?} of 1,000");
    }

    #[test]
    fn nearly_every_run_shows_cached_pictures_in_text_and_order() {
        // cached-pictures-as-references needs a cached image block's placeholder whole in the event's
        // text; media-reversed two media entries that differ.
        let held = crate::generate::runs_holding_each(results(), 48, 2, |r| {
            let event = expected(r, true).0;
            let text = event["text"].as_str().unwrap_or_default();
            let placeholder_shown = r.blocks.iter().zip(cached_by_block(r, true)).any(|(block, cached)| {
                let Block::Image { data, mime } = block else { return false };
                let mime = if mime.is_empty() { "?" } else { mime.as_str() };
                let n = fixtures::images::with_commas(data.base64().len() * 3 / 4);
                cached.is_some() && text.contains(&format!("[image ({mime}, {n} bytes): not shown to the model]"))
            });
            let media = event["media"].as_array().cloned().unwrap_or_default();
            let reversed: Vec<Value> = media.iter().rev().cloned().collect();
            vec![placeholder_shown, media != reversed]
        });
        assert!(held.iter().all(|n| *n >= 999), "{held:?} of 1,000");
    }

    /// The byte counts of the `[image|audio (…, N bytes): …]` placeholders in the event's text.
    fn placeholder_numbers(result: &GeneratedResult) -> Vec<usize> {
        let (event, _) = expected(result, true);
        let text = event["text"].as_str().unwrap_or_default();
        text.split(" bytes): not shown to the model]")
            .filter_map(|before| before.rsplit(", ").next()?.replace(',', "").parse().ok())
            .collect()
    }

    #[test]
    fn nearly_every_run_shows_placeholder_numbers() {
        // placeholder-counts-base64 needs a placeholder of a nonzero N in the event's text,
        // placeholder-numbers-plain one of 1,000 bytes or more (its separator).
        let [nonzero, thousands] = crate::generate::runs_holding_each(results(), 48, 2, |r| {
            let numbers = placeholder_numbers(r);
            vec![numbers.iter().any(|n| *n > 0), numbers.iter().any(|n| *n >= 1000)]
        })[..] else {
            unreachable!()
        };
        assert!(nonzero >= 999 && thousands >= 999, "{nonzero}, {thousands} of 1,000");
    }
}
