//! The picture (seed 003): a relative name resolved inside the image folder one component at a time
//! without following links, checked from its header (format, size, pixels, animation) before it is
//! decoded, then re-encoded from pixels — so no metadata survives — and shrunk to at most 512 px.

use std::fs::{self, File, OpenOptions};
use std::io::{Cursor, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path};

use base64::Engine;
use image::{AnimationDecoder, DynamicImage, ImageDecoder, ImageFormat, ImageReader};

/// The largest file accepted.
pub const MAX_BYTES: u64 = 10 << 20;
/// The most pixels accepted (width × height, read from the header).
pub const MAX_PIXELS: u64 = 20_000_000;
/// The longest side sent.
pub const MAX_SIDE: u32 = 512;

/// Why a picture is refused. The texts go back to the client, so they name no path and no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Not a plain relative name (absolute, `..`, hidden, empty, separators the folder does not use).
    #[error(
        "image must be a relative file name inside the image folder (no absolute paths, '..', hidden names or backslashes)"
    )]
    NotARelativeName,
    /// A URL, a data URL or base64 instead of a name.
    #[error("image must be a file name inside the image folder, not a URL, a data URL or base64")]
    NotAName,
    /// A link somewhere on the way.
    #[error("symbolic links are not followed")]
    Link,
    /// Nothing of that name.
    #[error("there is no such picture in the image folder")]
    Missing,
    /// The picture, or a folder on the way to it, is not readable by the server's user.
    #[error(
        "permission denied: the server (UID/GID 10001 in the container) cannot read this picture or enter a folder on \
         the way to it; give it read access to the picture and read and traverse access to its folders, or set \
         VISION_IMAGE_GID to a group that has them"
    )]
    Permission,
    /// A folder, a device, a pipe.
    #[error("the picture is not a regular file")]
    NotAFile,
    /// Over the byte limit.
    #[error("the picture is larger than 10 MiB")]
    TooLarge,
    /// Over the pixel limit.
    #[error("the picture has more than 20 megapixels")]
    TooManyPixels,
    /// Not PNG, JPEG, WebP or GIF.
    #[error("only PNG, JPEG, WebP and still GIF pictures are accepted")]
    Format,
    /// An animated GIF.
    #[error("animated GIFs are not accepted")]
    Animated,
    /// Unreadable or corrupt.
    #[error("the picture could not be read")]
    Unreadable,
}

/// A picture ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// `data:image/<png|jpeg>;base64,…`.
    pub data_url: String,
    /// The width sent.
    pub width: u32,
    /// The height sent.
    pub height: u32,
}

/// Whether `name` is a plain relative name: no URL, no base64, no absolute path, no `..`, nothing hidden.
pub fn check_name(name: &str) -> Result<(), ImageError> {
    let lower = name.to_ascii_lowercase();
    if lower.contains("://") || lower.starts_with("data:") || lower.starts_with("www.") {
        return Err(ImageError::NotAName);
    }
    let base64ish =
        name.len() >= 256 && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if base64ish {
        return Err(ImageError::NotAName);
    }
    if name.is_empty() || name.len() > 1024 || name.contains('\\') || name.contains('\0') || name.starts_with('/') {
        return Err(ImageError::NotARelativeName);
    }
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) if !part.to_string_lossy().starts_with('.') => {}
            _ => return Err(ImageError::NotARelativeName),
        }
    }
    Ok(())
}

/// What a failed look-up or open means for the client: missing, not allowed, a link, or unreadable.
fn io_error(error: &std::io::Error) -> ImageError {
    match error.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => ImageError::Missing,
        std::io::ErrorKind::PermissionDenied => ImageError::Permission,
        _ if error.raw_os_error() == Some(libc::ELOOP) => ImageError::Link,
        _ => ImageError::Unreadable,
    }
}

/// Opens `name` inside `root`: every component is looked at without following links, the file is
/// opened with `O_NOFOLLOW`, and the opened file must be the one that was looked at, inside `root`.
pub fn open_inside(root: &Path, name: &str) -> Result<(File, u64), ImageError> {
    check_name(name)?;
    let root = fs::canonicalize(root).map_err(|e| io_error(&e))?;
    let parts: Vec<_> = Path::new(name).components().collect();
    let mut path = root.clone();
    for (index, part) in parts.iter().enumerate() {
        path.push(part.as_os_str());
        let meta = fs::symlink_metadata(&path).map_err(|e| io_error(&e))?;
        if meta.file_type().is_symlink() {
            return Err(ImageError::Link);
        }
        let last = index + 1 == parts.len();
        if !last && !meta.is_dir() {
            return Err(ImageError::Missing);
        }
        if last && !meta.is_file() {
            return Err(ImageError::NotAFile);
        }
    }
    let looked_at = fs::symlink_metadata(&path).map_err(|e| io_error(&e))?;
    if looked_at.len() > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| io_error(&e))?;
    let opened = file.metadata().map_err(|_| ImageError::Unreadable)?;
    if !opened.is_file() || opened.dev() != looked_at.dev() || opened.ino() != looked_at.ino() {
        return Err(ImageError::NotAFile);
    }
    // Nothing on the way was swapped for a link between the walk and the open.
    if let Ok(real) = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        && real != path
    {
        return Err(ImageError::Link);
    }
    if opened.len() > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    Ok((file, opened.len()))
}

/// Reads the picture `name` from `root`.
pub fn read_inside(root: &Path, name: &str) -> Result<Vec<u8>, ImageError> {
    let (file, len) = open_inside(root, name)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    Ok(bytes)
}

fn format_of(bytes: &[u8]) -> Result<ImageFormat, ImageError> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Ok(ImageFormat::Png)
    } else if bytes.starts_with(b"\xFF\xD8\xFF") {
        Ok(ImageFormat::Jpeg)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Ok(ImageFormat::WebP)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Ok(ImageFormat::Gif)
    } else {
        Err(ImageError::Format)
    }
}

/// Checks and re-encodes a picture: format by magic bytes, dimensions from the header before decoding,
/// no animation, orientation applied, shrunk to [`MAX_SIDE`], encoded anew (PNG, or JPEG for JPEG).
pub fn prepare(bytes: &[u8]) -> Result<Prepared, ImageError> {
    let format = format_of(bytes)?;
    let reader = ImageReader::with_format(Cursor::new(bytes), format);
    let (width, height) = reader.into_dimensions().map_err(|_| ImageError::Unreadable)?;
    if width == 0 || height == 0 {
        return Err(ImageError::Unreadable);
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::TooManyPixels);
    }
    if format == ImageFormat::Gif {
        let decoder = image::codecs::gif::GifDecoder::new(Cursor::new(bytes)).map_err(|_| ImageError::Unreadable)?;
        if decoder.into_frames().take(2).count() > 1 {
            return Err(ImageError::Animated);
        }
    }
    let mut decoder =
        ImageReader::with_format(Cursor::new(bytes), format).into_decoder().map_err(|_| ImageError::Unreadable)?;
    let orientation = decoder.orientation().ok();
    let mut picture = DynamicImage::from_decoder(decoder).map_err(|_| ImageError::Unreadable)?;
    if let Some(orientation) = orientation {
        picture.apply_orientation(orientation);
    }
    if picture.width().max(picture.height()) > MAX_SIDE {
        picture = picture.resize(MAX_SIDE, MAX_SIDE, image::imageops::FilterType::Lanczos3);
    }
    let (out_format, mime) =
        if format == ImageFormat::Jpeg { (ImageFormat::Jpeg, "image/jpeg") } else { (ImageFormat::Png, "image/png") };
    let picture = if out_format == ImageFormat::Jpeg { DynamicImage::ImageRgb8(picture.to_rgb8()) } else { picture };
    let mut encoded = Vec::new();
    picture.write_to(&mut Cursor::new(&mut encoded), out_format).map_err(|_| ImageError::Unreadable)?;
    let data = base64::engine::general_purpose::STANDARD.encode(&encoded);
    Ok(Prepared { data_url: format!("data:{mime};base64,{data}"), width: picture.width(), height: picture.height() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_plain_relative_names_are_refused() {
        for bad in
            ["/etc/passwd", "../x.png", "a/../../x.png", ".hidden.png", "dir/.git/x.png", "a\\b.png", "", "./x.png"]
        {
            assert_eq!(check_name(bad), Err(ImageError::NotARelativeName), "{bad:?}");
        }
        for bad in ["https://example.com/x.png", "file:///etc/passwd", "data:image/png;base64,AAAA"] {
            assert_eq!(check_name(bad), Err(ImageError::NotAName), "{bad:?}");
        }
        assert_eq!(check_name(&"QUFB".repeat(100)), Err(ImageError::NotAName));
        assert_eq!(check_name("screens/error.png"), Ok(()));
    }
}
