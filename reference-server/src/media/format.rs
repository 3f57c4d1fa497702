//! Picture formats, decided by magic bytes — never by a declared mime type (SPEC 8.2, 11.2).

/// A raster format the server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
    /// GIF (lifting only; never cached).
    Gif,
    /// BMP (lifting only; never cached).
    Bmp,
}

impl Format {
    /// The format of `bytes` by their first bytes, if it is one of the known ones.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else if bytes.starts_with(b"\xFF\xD8\xFF") {
            Some(Format::Jpeg)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Format::Webp)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Format::Gif)
        } else if bytes.starts_with(b"BM") {
            Some(Format::Bmp)
        } else {
            None
        }
    }

    /// Whether bytes whose magic says this format are one: the magic is conclusive, except BMP's two
    /// bytes (`BM`), for which the header must read as well (SPEC 11.2).
    pub fn confirmed_by(self, bytes: &[u8]) -> bool {
        self != Format::Bmp || self.dimensions(bytes).is_ok()
    }

    /// The formats the cache keeps and the page shows: PNG, JPEG, WebP.
    pub fn is_cacheable(self) -> bool {
        matches!(self, Format::Png | Format::Jpeg | Format::Webp)
    }

    /// The mime type.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
            Format::Gif => "image/gif",
            Format::Bmp => "image/bmp",
        }
    }

    /// The file extension of a cached picture.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Webp => "webp",
            Format::Gif => "gif",
            Format::Bmp => "bmp",
        }
    }

    /// The `image` crate's format, for reading dimensions.
    pub fn image_format(self) -> image::ImageFormat {
        match self {
            Format::Png => image::ImageFormat::Png,
            Format::Jpeg => image::ImageFormat::Jpeg,
            Format::Webp => image::ImageFormat::WebP,
            Format::Gif => image::ImageFormat::Gif,
            Format::Bmp => image::ImageFormat::Bmp,
        }
    }

    /// Width and height from the picture's header, without decoding its pixels.
    pub fn dimensions(self, bytes: &[u8]) -> Result<(u32, u32), HeaderError> {
        let reader = image::ImageReader::with_format(std::io::Cursor::new(bytes), self.image_format());
        reader.into_dimensions().map_err(|e| HeaderError { extension: self.extension(), detail: e.to_string() })
    }
}

/// A picture whose header does not give its size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {extension} picture could not be read ({detail})")]
pub struct HeaderError {
    /// The format's extension (`png`, …).
    pub extension: &'static str,
    /// What the decoder said.
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bmp_needs_more_than_its_magic() {
        let lookalike = [&b"BM"[..], &[7u8; 3000]].concat();
        assert_eq!(Format::sniff(&lookalike), Some(Format::Bmp));
        assert!(!Format::Bmp.confirmed_by(&lookalike), "two bytes of magic and no header");
        assert!(Format::Bmp.confirmed_by(&fixtures::images::bmp(4, 3)));
        assert!(Format::Png.confirmed_by(b"\x89PNG\r\n\x1a\n and no header"), "PNG's eight bytes are enough");
    }

    #[test]
    fn magic_bytes_decide() {
        assert_eq!(Format::sniff(b"\x89PNG\r\n\x1a\nrest"), Some(Format::Png));
        assert_eq!(Format::sniff(b"\xFF\xD8\xFF\xE0"), Some(Format::Jpeg));
        assert_eq!(Format::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::Webp));
        assert_eq!(Format::sniff(b"GIF89a"), Some(Format::Gif));
        assert_eq!(Format::sniff(b"<svg xmlns="), None);
        assert!(!Format::Gif.is_cacheable());
    }
}
