//! An MCP result cut into text and pictures (SPEC 8.2, 8.4, 8.5, 8.8): image blocks and `image/*`
//! resource blobs that decode to PNG, JPEG or WebP become pictures, at most four per call and each of
//! at most 24,000,000 base64 characters by default (`mcp.max_pictures_per_result`,
//! `mcp.max_picture_chars`; the size checked before decoding); every other block keeps its result
//! text. Block order is kept.

use std::sync::Arc;

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::format::Format;
use crate::result_text::block_text;

/// Pictures cached per call, by default.
pub const MAX_PICTURES_PER_CALL: usize = 4;
/// The largest picture, in base64 characters, by default.
pub const MAX_PICTURE_BASE64: usize = 24_000_000;

/// How many pictures one result may give, and how large each may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureLimits {
    /// Pictures per result.
    pub per_result: usize,
    /// Base64 characters per picture.
    pub max_chars: usize,
}

impl Default for PictureLimits {
    fn default() -> Self {
        Self { per_result: MAX_PICTURES_PER_CALL, max_chars: MAX_PICTURE_BASE64 }
    }
}

/// A picture taken from a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The decoded bytes.
    pub bytes: Arc<Vec<u8>>,
    /// Its format by magic bytes.
    pub format: Format,
    /// Width from the header.
    pub width: u32,
    /// Height from the header.
    pub height: u32,
    /// The block's result text (what the model gets without a vision encoder).
    pub text: String,
}

/// A piece of a result, in block order.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultPart {
    /// A block's text (text blocks, and every block that is not a picture).
    Text(String),
    /// A picture.
    Picture(Picture),
}

/// Cuts a result into parts.
pub fn result_parts(result: &CallToolResult, limits: PictureLimits) -> Vec<ResultPart> {
    let mut taken = 0;
    result
        .content
        .iter()
        .map(|block| {
            let candidate = match block {
                ContentBlock::Image(image) => Some(image.data.as_str()),
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    ResourceContents::BlobResourceContents { blob, mime_type: Some(mime), .. }
                        if mime.starts_with("image/") =>
                    {
                        Some(blob.as_str())
                    }
                    _ => None,
                },
                _ => None,
            };
            let text = block_text(block);
            let Some(data) = candidate else { return ResultPart::Text(text) };
            if taken == limits.per_result {
                return ResultPart::Text(text);
            }
            match picture(data, text.clone(), limits.max_chars) {
                Some(picture) => {
                    taken += 1;
                    ResultPart::Picture(picture)
                }
                None => ResultPart::Text(text),
            }
        })
        .collect()
}

fn picture(data: &str, text: String, max_chars: usize) -> Option<Picture> {
    if data.len() > max_chars {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.as_bytes()).ok()?;
    let sniffed = Format::sniff(&bytes);
    let format = sniffed.filter(|f| f.is_cacheable())?;
    let (width, height) = format.dimensions(&bytes).ok()?;
    Some(Picture { bytes: Arc::new(bytes), format, width, height, text })
}
