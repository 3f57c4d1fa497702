//! Names of cached pictures and the references that point at them (SPEC 9.2, 10.2). A name is parsed
//! once, at the edge; after that it is trusted to be exactly `<64 lowercase hex>.<png|jpg|webp>`.

use super::format::Format;

/// The scheme of a reference: `strata-tool-media:<name>`.
pub const REF_SCHEME: &str = "strata-tool-media:";

/// A valid cached-picture name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MediaName {
    text: String,
    format: Format,
}

impl MediaName {
    /// Parses `^[0-9a-f]{64}\.(png|jpg|webp)$` exactly; anything else is `None`.
    pub fn parse(text: &str) -> Option<MediaName> {
        let (hash, extension) = text.split_at_checked(64)?;
        if !hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return None;
        }
        let format = match extension {
            ".png" => Format::Png,
            ".jpg" => Format::Jpeg,
            ".webp" => Format::Webp,
            _ => return None,
        };
        Some(MediaName { text: text.to_string(), format })
    }

    /// The name for a picture with this SHA-256 (lowercase hex) and format.
    pub fn new(sha256_hex: &str, format: Format) -> Option<MediaName> {
        MediaName::parse(&format!("{sha256_hex}.{}", format.extension()))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The hash part (64 hex digits).
    pub fn sha256(&self) -> &str {
        &self.text[..64]
    }

    /// The picture's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// `strata-tool-media:<name>`.
    pub fn reference(&self) -> String {
        format!("{REF_SCHEME}{}", self.text)
    }

    /// `/tool-media/<name>`.
    pub fn url(&self) -> String {
        format!("{}{}", crate::paths::TOOL_MEDIA_PREFIX, self.text)
    }
}

/// A `strata-tool-media:` URL whose name is not a media name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a strata-tool-media reference must name a cached picture as <64 lowercase hex digits>.<png|jpg|webp>")]
pub struct MediaRefError;

/// For a URL with the reference scheme: the name, or an error when it is malformed. `None` for any
/// other URL.
pub fn parse_reference(url: &str) -> Option<Result<MediaName, MediaRefError>> {
    let rest = url.strip_prefix(REF_SCHEME)?;
    Some(MediaName::parse(rest).ok_or(MediaRefError))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn only_the_exact_form_is_a_name() {
        for good in ["png", "jpg", "webp"] {
            assert!(MediaName::parse(&format!("{HASH}.{good}")).is_some(), "{good}");
        }
        let bad = [
            format!("{}.png", HASH.to_uppercase()),
            format!("{HASH}.PNG"),
            format!("{HASH}.jpeg"),
            format!("{HASH}.gif"),
            format!("{HASH}.png/"),
            format!("{HASH}.png\0"),
            format!("{HASH}0.png"),
            format!("{}.png", &HASH[1..]),
            format!("../{HASH}.png"),
            format!("{HASH}%2epng"),
            format!("{HASH}．png"),
            format!("{}é.png", &HASH[..63]),
            String::new(),
        ];
        for name in bad {
            assert!(MediaName::parse(&name).is_none(), "{name:?}");
        }
    }

    #[test]
    fn references_are_parsed_only_with_the_scheme() {
        assert!(parse_reference("data:image/png;base64,AA").is_none());
        assert_eq!(parse_reference(&format!("strata-tool-media:{HASH}.png")).map(|r| r.is_ok()), Some(true));
        assert_eq!(parse_reference("strata-tool-media:../etc/passwd"), Some(Err(MediaRefError)));
    }
}
