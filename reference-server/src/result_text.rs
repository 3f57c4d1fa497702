//! A tool result as text (SPEC 7.1–7.4, strata-wire C-I2/I3/I5): what every block kind becomes, the
//! `error: …` form, and the `max_result_chars` cap. With `image_results` off this is the whole result,
//! byte for byte what Strata produces today.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The text of one block, or `None` for a block that gives none.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                let mime = mime_type.as_deref().filter(|mime| !mime.is_empty()).unwrap_or("binary");
                format!("[resource {uri} ({mime}), not shown]")
            }
            other => serde_json::to_string(other).unwrap_or_default(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {} {}]", link.name, link.uri).replace("  ", " "),
        ContentBlock::Image(image) => placeholder("image", &image.mime_type, image.data.len()),
        ContentBlock::Audio(audio) => placeholder("audio", &audio.mime_type, audio.data.len()),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// `[<kind> (<mime>, <N> bytes): not shown to the model]`, N estimated from the base64 length.
pub fn placeholder(kind: &str, mime: &str, base64_len: usize) -> String {
    let mime = if mime.is_empty() { "?" } else { mime };
    format!("[{kind} ({mime}, {} bytes): not shown to the model]", thousands(base64_len * 3 / 4))
}

/// The whole result as text: blocks joined by newlines; `structuredContent` when no block gave text;
/// `error: …` for `isError`.
pub fn result_text(result: &CallToolResult) -> (bool, String) {
    let pieces: Vec<String> = result.content.iter().map(block_text).collect();
    let mut text = pieces.join("\n");
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        text = structured.to_string();
    }
    if result.is_error == Some(true) {
        return (false, error_text(&text));
    }
    (true, text)
}

/// `error: <text>`, or `error: the tool reported an error` when the tool said nothing.
pub fn error_text(text: &str) -> String {
    if text.is_empty() { "error: the tool reported an error".to_string() } else { format!("error: {text}") }
}

/// A capped text: what the model gets, the full length in characters, and whether it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The text, cut and noted when over the cap.
    pub text: String,
    /// The full length in characters.
    pub chars: usize,
    /// Whether it was cut.
    pub truncated: bool,
}

/// Cuts `text` to `cap` characters with the note of strata-wire C-I5.
pub fn cap(text: String, cap: usize) -> Capped {
    let chars = text.chars().count();
    if cap == 0 || chars <= cap {
        return Capped { text, chars, truncated: false };
    }
    let end = text.char_indices().nth(cap).map_or(text.len(), |(i, _)| i);
    let mut cut = text[..end].to_string();
    cut.push_str(&format!(
        "\n\n[... truncated: the tool returned {} characters; only the first {} are shown]",
        thousands(chars),
        thousands(cap)
    ));
    Capped { text: cut, chars, truncated: true }
}

/// `1528438` → `1,528,438`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Resource, ResourceContents};

    #[test]
    fn every_block_kind_has_its_text() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("A".repeat(2_038_152), "image/png"),
            ContentBlock::resource(ResourceContents::text("inside", "file:///a")),
            ContentBlock::resource(ResourceContents::BlobResourceContents {
                uri: "file:///b".into(),
                mime_type: None,
                blob: "AAAA".into(),
                meta: None,
            }),
            ContentBlock::resource_link(Resource::new("file:///c", "c")),
        ]);
        let (ok, text) = result_text(&result);
        assert!(ok);
        assert_eq!(
            text,
            "hello\n[image (image/png, 1,528,614 bytes): not shown to the model]\ninside\n[resource file:///b (binary), not shown]\n[resource link: c file:///c]"
        );
    }

    #[test]
    fn a_blob_with_an_empty_mime_is_binary() {
        let blob = ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri: "file:///b".into(),
            mime_type: Some(String::new()),
            blob: "AAAA".into(),
            meta: None,
        });
        assert_eq!(block_text(&blob), "[resource file:///b (binary), not shown]");
    }

    #[test]
    fn an_error_result_says_error() {
        let (ok, text) = result_text(&CallToolResult::error(vec![ContentBlock::text("it failed on purpose")]));
        assert!(!ok);
        assert_eq!(text, "error: it failed on purpose");
        assert_eq!(result_text(&CallToolResult::error(vec![])).1, "error: the tool reported an error");
    }

    #[test]
    fn the_cap_cuts_and_says_so() {
        let capped = cap("y".repeat(3000), 500);
        assert!(capped.truncated);
        assert_eq!(capped.chars, 3000);
        assert_eq!(
            capped.text,
            format!(
                "{}\n\n[... truncated: the tool returned 3,000 characters; only the first 500 are shown]",
                "y".repeat(500)
            )
        );
        assert!(!cap("short".into(), 500).truncated);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_528_438), "1,528,438");
    }
}
