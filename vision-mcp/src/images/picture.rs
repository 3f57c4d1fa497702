//! The picture's bytes (seed 003): the format by its magic bytes, then from the header alone — size,
//! pixels, animation (GIF frames counted from their headers without decoding, APNG's `acTL` and
//! WebP's animation flag read from the chunks) — before it is decoded, then re-encoded from pixels,
//! so no metadata survives, and shrunk to at most [`MAX_SIDE`] px.

use std::io::Cursor;
use std::num::NonZeroU64;

use base64::Engine;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use super::{ImageError, MAX_GIF_FRAME_BYTES, MAX_PIXELS, MAX_SIDE, Prepared};

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
    // Animation first, from the bytes alone: nothing is decoded or allocated for a refused picture.
    let animated = match format {
        ImageFormat::Gif => gif_frames(bytes)? > 1,
        ImageFormat::Png => png_is_animated(bytes),
        ImageFormat::WebP => webp_is_animated(bytes),
        _ => false,
    };
    if animated {
        return Err(ImageError::Animated);
    }
    let reader = ImageReader::with_format(Cursor::new(bytes), format);
    let (width, height) = reader.into_dimensions().map_err(|_| ImageError::Unreadable)?;
    if width == 0 || height == 0 {
        return Err(ImageError::Unreadable);
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::TooManyPixels);
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

/// A GIF's frames (up to 2), counted from their headers without decoding pixels. A frame that does not
/// lie inside the canvas is refused: a 1×1 canvas with one 65535×65535 frame is a decompression bomb.
fn gif_frames(bytes: &[u8]) -> Result<usize, ImageError> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    options.check_frame_consistency(true);
    options.skip_frame_decoding(true);
    if let Some(limit) = NonZeroU64::new(MAX_GIF_FRAME_BYTES) {
        options.set_memory_limit(gif::MemoryLimit::Bytes(limit));
    }
    let mut decoder = options.read_info(Cursor::new(bytes)).map_err(|_| ImageError::Unreadable)?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    let mut frames = 0;
    while let Some(frame) = decoder.next_frame_info().map_err(|_| ImageError::Unreadable)? {
        let right = u32::from(frame.left) + u32::from(frame.width);
        let bottom = u32::from(frame.top) + u32::from(frame.height);
        if right > width || bottom > height {
            return Err(ImageError::Unreadable);
        }
        frames += 1;
        if frames > 1 {
            break;
        }
    }
    Ok(frames)
}

/// The chunks of a PNG (after its signature) as (type, data), up to the first IDAT.
fn png_chunks(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 8usize;
    std::iter::from_fn(move || {
        let length = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let kind = bytes.get(at + 4..at + 8)?;
        let data = bytes.get(at + 8..(at + 8).checked_add(length)?)?;
        at = at.checked_add(12 + length)?;
        Some((kind, data))
    })
    .take_while(|(kind, _)| *kind != b"IDAT")
}

/// An APNG announces its animation with an `acTL` chunk before the image data.
fn png_is_animated(bytes: &[u8]) -> bool {
    png_chunks(bytes).any(|(kind, _)| kind == b"acTL")
}

/// A WebP is animated when its `VP8X` header sets the animation flag or it carries `ANIM`/`ANMF` chunks.
fn webp_is_animated(bytes: &[u8]) -> bool {
    let mut at = 12usize;
    while let (Some(kind), Some(size)) = (bytes.get(at..at + 4), bytes.get(at + 4..at + 8)) {
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let flagged = kind == b"VP8X" && bytes.get(at + 8).is_some_and(|flags| flags & 0x02 != 0);
        if flagged || kind == b"ANIM" || kind == b"ANMF" {
            return true;
        }
        let Some(next) = at.checked_add(8 + size + (size & 1)) else { return false };
        at = next;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Magic bytes decide the format: RIFF that is not WebP (a WAVE file) is no accepted format, and
    /// neither is a file too short to hold WebP's header.
    #[test]
    fn riff_that_is_not_webp_is_not_a_picture() {
        let mut wave = b"RIFF\x24\0\0\0WAVEfmt ".to_vec();
        wave.resize(64, 0);
        assert_eq!(format_of(&wave), Err(ImageError::Format));
        assert_eq!(format_of(b"RIFF\0\0\0\0WEB"), Err(ImageError::Format));
        assert_eq!(format_of(b"xxxx\0\0\0\0WEBPVP8 "), Err(ImageError::Format));
        assert_eq!(format_of(b"RIFF\0\0\0\0WEBPVP8 "), Ok(ImageFormat::WebP));
    }

    fn decoded(prepared: &Prepared) -> DynamicImage {
        use base64::Engine as _;
        let data = prepared.data_url.split_once(";base64,").expect("a data URL").1;
        let bytes = base64::engine::general_purpose::STANDARD.decode(data).expect("base64");
        image::load_from_memory(&bytes).expect("a picture")
    }

    fn png_of(picture: DynamicImage) -> Vec<u8> {
        let mut out = Vec::new();
        picture.write_to(&mut Cursor::new(&mut out), ImageFormat::Png).expect("encoded");
        out
    }

    /// A PNG keeps its transparency (only JPEG goes out as RGB), and a picture whose longer side is
    /// exactly 512 px goes out pixel for pixel: only a longer side is shrunk.
    #[test]
    fn transparency_stays_and_512_px_is_not_resampled() {
        let rgba = image::RgbaImage::from_fn(4, 3, |x, y| {
            image::Rgba([x as u8 * 60, y as u8 * 80, 9, if x == 0 { 0 } else { 255 }])
        });
        let prepared = prepare(&png_of(DynamicImage::ImageRgba8(rgba.clone()))).expect("prepared");
        assert!(prepared.data_url.starts_with("data:image/png;base64,"));
        assert_eq!(decoded(&prepared).to_rgba8(), rgba, "alpha kept");
        let stripes =
            image::RgbImage::from_fn(512, 300, |x, y| image::Rgb([if (x + y) % 2 == 0 { 255 } else { 0 }, 0, 0]));
        let prepared = prepare(&png_of(DynamicImage::ImageRgb8(stripes.clone()))).expect("prepared");
        assert_eq!((prepared.width, prepared.height), (512, 300));
        assert_eq!(decoded(&prepared).to_rgb8(), stripes, "not resampled");
        let wider = image::RgbImage::from_fn(513, 300, |x, _| image::Rgb([x as u8, 0, 0]));
        let prepared = prepare(&png_of(DynamicImage::ImageRgb8(wider))).expect("prepared");
        assert_eq!((prepared.width, prepared.height), (512, 299));
    }

    /// A GIF frame must lie inside the canvas on both axes: one pixel out to the right or to the bottom
    /// is refused, a frame that ends on the edge (at an offset) is not.
    #[test]
    fn a_gif_frame_past_the_canvas_by_one_pixel_is_refused() {
        let gif_with = |left: u16, top: u16, width: u16, height: u16| {
            let mut out = Vec::new();
            {
                let mut encoder = gif::Encoder::new(&mut out, 10, 10, &[0, 0, 0, 255, 255, 255]).expect("encoder");
                let frame = gif::Frame {
                    left,
                    top,
                    width,
                    height,
                    buffer: std::borrow::Cow::Owned(vec![1; usize::from(width) * usize::from(height)]),
                    ..gif::Frame::default()
                };
                encoder.write_frame(&frame).expect("frame");
            }
            out
        };
        assert_eq!(gif_frames(&gif_with(1, 0, 9, 10)), Ok(1));
        assert_eq!(gif_frames(&gif_with(0, 1, 10, 9)), Ok(1));
        assert_eq!(gif_frames(&gif_with(1, 0, 10, 10)), Err(ImageError::Unreadable), "one column out");
        assert_eq!(gif_frames(&gif_with(0, 1, 10, 10)), Err(ImageError::Unreadable), "one row out");
        assert_eq!(gif_frames(&gif_with(2, 0, 9, 5)), Err(ImageError::Unreadable), "out to the right only");
        assert_eq!(gif_frames(&gif_with(1, 1, 5, 5)), Ok(1), "a frame inside the canvas, off its edges");
    }

    /// A GIF whose logical screen is 0 pixels wide or high is refused as unreadable, as the other
    /// decoders refuse such a header themselves; a 1×1 one is a picture. Written byte by byte: a
    /// two-colour table and one frame, its LZW data only the clear and end codes (or one pixel).
    #[test]
    fn a_gif_screen_with_no_width_or_no_height_is_refused() {
        let gif_of = |width: u16, height: u16| {
            let mut out = b"GIF89a".to_vec();
            out.extend_from_slice(&width.to_le_bytes());
            out.extend_from_slice(&height.to_le_bytes());
            out.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2C, 0, 0, 0, 0]);
            out.extend_from_slice(&width.to_le_bytes());
            out.extend_from_slice(&height.to_le_bytes());
            // No local table; LZW code size 2: clear (4), then one pixel (0) if there is one, then end (5).
            let lzw: &[u8] = if width > 0 && height > 0 { &[0x44, 0x01] } else { &[0x2C] };
            out.extend_from_slice(&[0, 2, lzw.len() as u8]);
            out.extend_from_slice(lzw);
            out.extend_from_slice(&[0, 0x3B]);
            out
        };
        let one = prepare(&gif_of(1, 1)).expect("a 1×1 GIF is a picture");
        assert_eq!((one.width, one.height), (1, 1));
        assert_eq!(prepare(&gif_of(0, 10)).err(), Some(ImageError::Unreadable), "0 wide");
        assert_eq!(prepare(&gif_of(10, 0)).err(), Some(ImageError::Unreadable), "0 high");
        assert_eq!(prepare(&gif_of(0, 0)).err(), Some(ImageError::Unreadable), "0 by 0");
    }

    /// The same for a JPEG whose frame header (SOF0) says 0 wide or 0 high: refused, never sent on as
    /// a picture with no pixels. (PNG and WebP cannot say 0: PNG's header refuses it, WebP stores
    /// size − 1.)
    #[test]
    fn a_jpeg_frame_with_no_width_or_no_height_is_refused() {
        let mut jpeg = Vec::new();
        DynamicImage::ImageRgb8(image::RgbImage::new(8, 8))
            .write_to(&mut Cursor::new(&mut jpeg), ImageFormat::Jpeg)
            .expect("encoded");
        let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).expect("a baseline frame header");
        let sized = |height: u16, width: u16| {
            let mut out = jpeg.clone();
            out[sof + 5..sof + 7].copy_from_slice(&height.to_be_bytes());
            out[sof + 7..sof + 9].copy_from_slice(&width.to_be_bytes());
            out
        };
        assert_eq!(prepare(&sized(8, 8)).map(|p| (p.width, p.height)).ok(), Some((8, 8)), "the unpatched copy");
        assert_eq!(prepare(&sized(8, 0)).err(), Some(ImageError::Unreadable), "0 wide");
        assert_eq!(prepare(&sized(0, 8)).err(), Some(ImageError::Unreadable), "0 high");
    }

    /// An `acTL` chunk after IHDR makes a PNG animated, however small the file: in a 1×1 PNG the chunk
    /// ends within a few dozen bytes of the start.
    #[test]
    fn a_tiny_apng_is_animated_and_a_still_png_is_not() {
        let still = png_of(DynamicImage::ImageRgb8(image::RgbImage::new(1, 1)));
        let ihdr_end = 8 + 4 + 4 + 13 + 4;
        let actl = [&8u32.to_be_bytes()[..], b"acTL", &2u32.to_be_bytes(), &0u32.to_be_bytes(), &[0; 4]].concat();
        let apng = [&still[..ihdr_end], &actl, &still[ihdr_end..]].concat();
        assert!(apng.len() < 120, "{} bytes", apng.len());
        assert!(png_is_animated(&apng));
        assert!(!png_is_animated(&still));
    }

    /// A WebP (RIFF, its size, WEBP) of `chunks`, each padded to an even length as RIFF requires.
    fn webp_of(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
        let mut body = b"WEBP".to_vec();
        for (kind, data) in chunks {
            body.extend(*kind);
            body.extend(u32::try_from(data.len()).expect("small").to_le_bytes());
            body.extend(data);
            if data.len() % 2 == 1 {
                body.push(0);
            }
        }
        [&b"RIFF"[..], &u32::try_from(body.len()).expect("small").to_le_bytes(), &body].concat()
    }

    /// WebP's animation, read from the chunks: the VP8X animation flag (0x02) alone, or an ANIM or ANMF
    /// chunk after chunks of odd sizes (their pad byte skipped); every other VP8X flag is still, and so
    /// is a real still WebP; a chunk claiming 4 GiB ends the walk without a panic.
    #[test]
    fn webp_animation_is_read_from_the_flag_and_the_chunks() {
        let vp8x = |flags: u8| [vec![flags], vec![0; 9]].concat();
        let animated = [
            webp_of(&[(b"VP8X", vp8x(0x02))]),
            webp_of(&[(b"VP8X", vp8x(0x00)), (b"ICCP", vec![1; 3]), (b"ANIM", vec![0; 6])]),
            webp_of(&[(b"VP8X", vp8x(0x00)), (b"EXIF", vec![1; 5]), (b"XMP ", vec![1; 7]), (b"ANMF", vec![0; 16])]),
        ];
        for (i, bytes) in animated.iter().enumerate() {
            assert!(webp_is_animated(bytes), "animated {i}");
        }
        let mut still = vec![
            webp_of(&[(b"VP8X", vp8x(0x3C)), (b"XMP ", vec![1; 4])]),
            webp_of(&[(b"VP8X", vp8x(0x00)), (b"ICCP", vec![b'A'; 3])]),
        ];
        let mut real = Vec::new();
        DynamicImage::ImageRgb8(image::RgbImage::new(8, 8))
            .write_to(&mut Cursor::new(&mut real), ImageFormat::WebP)
            .expect("encoded");
        still.push(real);
        let mut huge = webp_of(&[(b"VP8X", vp8x(0x00))]);
        huge.extend(b"JUNK");
        huge.extend(u32::MAX.to_le_bytes());
        still.push(huge);
        for (i, bytes) in still.iter().enumerate() {
            assert!(!webp_is_animated(bytes), "still {i}");
        }
    }
}
