//! An MCP result cut into text and pictures (SPEC 8.2, 8.4, 8.5, 8.8): image blocks and `image/*`
//! resource blobs that decode to PNG, JPEG or WebP become pictures, at most four per call and each of
//! at most 24,000,000 base64 characters (checked before decoding); every other block keeps its
//! result text. Block order is kept.

use std::sync::Arc;

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::format::Format;
use crate::faults::{Fault, Faults};
use crate::result_text::block_text;

/// Pictures cached per call.
pub const MAX_PICTURES_PER_CALL: usize = 4;
/// The largest picture, in base64 characters.
pub const MAX_PICTURE_BASE64: usize = 24_000_000;

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
pub fn result_parts(result: &CallToolResult, faults: Faults) -> Vec<ResultPart> {
    let capped = !faults.has(Fault::NoPictureCap);
    let mut taken = 0;
    result
        .content
        .iter()
        .map(|block| {
            let candidate = match block {
                ContentBlock::Image(image) => Some((image.data.as_str(), image.mime_type.as_str())),
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    ResourceContents::BlobResourceContents { blob, mime_type: Some(mime), .. }
                        if mime.starts_with("image/") =>
                    {
                        Some((blob.as_str(), mime.as_str()))
                    }
                    _ => None,
                },
                _ => None,
            };
            let text = block_text(block);
            let Some((data, mime)) = candidate else { return ResultPart::Text(text) };
            if capped && taken == MAX_PICTURES_PER_CALL {
                return ResultPart::Text(text);
            }
            let declared = faults.has(Fault::MimeDecides).then_some(mime);
            match picture(data, text.clone(), capped, declared) {
                Some(picture) => {
                    taken += 1;
                    ResultPart::Picture(picture)
                }
                None => ResultPart::Text(text),
            }
        })
        .collect()
}

fn picture(data: &str, text: String, capped: bool, declared_mime: Option<&str>) -> Option<Picture> {
    if capped && data.len() > MAX_PICTURE_BASE64 {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.as_bytes()).ok()?;
    let sniffed = Format::sniff(&bytes);
    if let Some(mime) = declared_mime {
        // The `mime-decides` fault: the label wins, whatever the bytes are.
        let format = [Format::Png, Format::Jpeg, Format::Webp].into_iter().find(|f| f.mime() == mime)?;
        let (width, height) = sniffed.and_then(|f| f.dimensions(&bytes).ok()).unwrap_or((1, 1));
        return Some(Picture { bytes: Arc::new(bytes), format, width, height, text });
    }
    let format = sniffed.filter(|f| f.is_cacheable())?;
    let (width, height) = format.dimensions(&bytes).ok()?;
    Some(Picture { bytes: Arc::new(bytes), format, width, height, text })
}
