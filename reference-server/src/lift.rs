//! Pictures a client hands back as text (SPEC §11, seed 001): in a tool message's text, a run of at
//! least 1024 base64 characters (optionally right after `data:image/…;base64,`) whose decoded first
//! bytes are PNG, JPEG, BMP, GIF or WebP magic is taken out, and `[image (<mime>, <N> bytes)]` stays
//! where it was.
//!
//! The scan runs on every request, so it is built for speed: a run of 1024 class characters must cover
//! every 1024-byte window it spans, so the scanner probes one byte in 1024 and only looks around a probe
//! that lands in the base64 class (back to the last byte outside it). Each byte is read a few times,
//! nothing backtracks, and a text with no picture is returned untouched, without a copy; a run that
//! looks like a picture is decoded only once it is known to decode (see [`take_run`]).

use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};

use crate::media::Format;
use crate::result_text::thousands;

/// The shortest run that is looked at.
pub const MIN_RUN: usize = 1024;
/// Pictures taken per message.
pub const MAX_PICTURES: usize = 8;
/// The largest picture taken, decoded.
pub const MAX_PICTURE_BYTES: usize = 32 << 20;

const DECODER: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

const fn class_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
        i += 1;
    }
    table
}

static BASE64_CLASS: [bool; 256] = class_table();

/// A picture taken out of the text.
#[derive(Debug, Clone, PartialEq)]
pub struct LiftedPicture {
    /// The decoded bytes.
    pub bytes: Vec<u8>,
    /// The format by magic bytes.
    pub format: Format,
}

/// One piece of a lifted text, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Text (the note included).
    Text(String),
    /// A picture that stood just before this point (its note ends the previous text).
    Picture(LiftedPicture),
}

/// Lifts pictures out of `text`, at most `room` of them (a message's text parts share the 8 of SPEC
/// 11.4, [`MAX_PICTURES`]). `None` when there is none: the caller keeps the text as it is.
pub fn lift_at_most(text: &str, room: usize) -> Option<Vec<Piece>> {
    let bytes = text.as_bytes();
    let mut found: Vec<(usize, usize, LiftedPicture)> = Vec::new();
    let mut start = 0;
    while start + MIN_RUN <= bytes.len() && found.len() < room {
        let probe = start + MIN_RUN - 1;
        if !BASE64_CLASS[usize::from(bytes[probe])] {
            start = probe + 1;
            continue;
        }
        if let Some(outside) = (start..probe).rev().find(|&i| !BASE64_CLASS[usize::from(bytes[i])]) {
            start = outside + 1;
            continue;
        }
        let (padded, picture) = take_run(bytes, start, probe + 1);
        if let Some(picture) = picture {
            found.push((prefix_start(bytes, start), padded, picture));
        }
        start = padded;
    }
    if found.is_empty() {
        return None;
    }
    let mut pieces = Vec::with_capacity(found.len() * 2 + 1);
    let mut text_so_far = String::new();
    let mut at = 0;
    for (from, to, picture) in found {
        text_so_far.push_str(&text[at..from]);
        text_so_far.push_str(&note(&picture));
        pieces.push(Piece::Text(std::mem::take(&mut text_so_far)));
        pieces.push(Piece::Picture(picture));
        at = to;
    }
    pieces.push(Piece::Text(text[at..].to_string()));
    Some(pieces)
}

/// `[image (<mime>, <N> bytes)]`.
pub fn note(picture: &LiftedPicture) -> String {
    format!("[image ({}, {} bytes)]", picture.format.mime(), thousands(picture.bytes.len()))
}

/// The end of the base64 run that continues at `from`, looking no further than `limit`: eight bytes at
/// a time while they all belong to the class (one branch per eight lookups), then byte by byte.
fn run_end(bytes: &[u8], from: usize, limit: usize) -> usize {
    let bytes = &bytes[..limit.min(bytes.len())];
    let mut end = from;
    while let Some(chunk) = bytes.get(end..end + 8) {
        let all = chunk.iter().fold(true, |all, &b| all & BASE64_CLASS[usize::from(b)]);
        if !all {
            break;
        }
        end += 8;
    }
    while end < bytes.len() && BASE64_CLASS[usize::from(bytes[end])] {
        end += 1;
    }
    end
}

/// Long runs are decoded a chunk at a time straight from the text: a chunk of class characters
/// decodes whole, and the first byte outside the class — which ends the run — shows up as the
/// decoder's error offset. So a long run (a real picture, usually) is read once, by the decoder.
const CHUNK: usize = 64 << 10;

/// Takes the run that starts at `start` (at least its first `known` bytes are known to be in the
/// class): returns where it ends, its padding included, and the picture it holds, if any.
///
/// The hostile case is a text full of runs that start like a picture and are not one. So a run that
/// ends within its first [`CHUNK`] bytes (found by the fast class scan) is decoded only once its
/// length, padding and last symbol show it decodes; a longer
/// run is decoded chunk by chunk as it is read, and its cost is a decode of as many bytes.
fn take_run(bytes: &[u8], start: usize, known: usize) -> (usize, Option<LiftedPicture>) {
    let head_len = 16.min(known - start) / 4 * 4;
    let head = general_purpose::STANDARD_NO_PAD.decode(&bytes[start..start + head_len]).unwrap_or_default();
    let format = match Format::sniff(&head) {
        Some(format) => format,
        None => return (padding_end(bytes, run_end(bytes, known, usize::MAX)), None),
    };
    let short_end = run_end(bytes, known, start + CHUNK);
    let out = if short_end < start + CHUNK {
        decode_short_run(bytes, start, short_end)
    } else {
        decode_long_run(bytes, start)
    };
    match out {
        (padded, Some(out)) if format.confirmed_by(&out) => (padded, Some(LiftedPicture { bytes: out, format })),
        (padded, _) => (padded, None),
    }
}

// A short run (under one chunk) decodes to less than the size cap, so only a long run is measured.
const _: () = assert!(CHUNK / 4 * 3 < MAX_PICTURE_BYTES);

/// A run whose end is known (shorter than a chunk): checked, then decoded once, the decoder sizing
/// the buffer from the run's length.
fn decode_short_run(bytes: &[u8], start: usize, end: usize) -> (usize, Option<Vec<u8>>) {
    let padded = padding_end(bytes, end);
    if !decodes(bytes, start, end, padded) {
        return (padded, None);
    }
    let mut out = Vec::new();
    match DECODER.decode_vec(&bytes[start..padded], &mut out) {
        Ok(()) => (padded, Some(out)),
        Err(_) => (padded, None),
    }
}

/// A run longer than a chunk: decoded a chunk at a time, the decoder finding its end.
fn decode_long_run(bytes: &[u8], start: usize) -> (usize, Option<Vec<u8>>) {
    let mut out = Vec::new();
    let mut at = start;
    while let Some(chunk) = bytes.get(at..at + CHUNK) {
        let before = out.len();
        // decode_vec grows the buffer by the chunk's decoded length itself.
        match general_purpose::STANDARD_NO_PAD.decode_vec(chunk, &mut out) {
            Ok(()) => at += CHUNK,
            Err(_) => {
                out.truncate(before);
                break;
            }
        }
        if out.len() > MAX_PICTURE_BYTES {
            return (padding_end(bytes, run_end(bytes, at, usize::MAX)), None);
        }
    }
    let end = run_end(bytes, at, usize::MAX);
    let padded = padding_end(bytes, end);
    if !decodes(bytes, start, end, padded)
        || DECODER.decode_vec(&bytes[at..padded], &mut out).is_err()
        || out.len() > MAX_PICTURE_BYTES
    {
        return (padded, None);
    }
    (padded, Some(out))
}

/// Whether the run `start..end` (class characters) with padding up to `padded` decodes: its length is
/// not 1 more than a multiple of 4, padding (if any) completes the last group, and the bits of the last
/// symbol that fall past the data are zero.
fn decodes(bytes: &[u8], start: usize, end: usize, padded: usize) -> bool {
    let symbols = end - start;
    let rest = symbols % 4;
    if rest == 1 || (padded > end && !(symbols + (padded - end)).is_multiple_of(4)) {
        return false;
    }
    let value = |b: u8| match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let unused_bits_mask = match rest {
        2 => 0b1111,
        3 => 0b11,
        _ => 0,
    };
    rest == 0 || value(bytes[end - 1]) & unused_bits_mask == 0
}

/// Past up to two `=` of padding after `end`.
fn padding_end(bytes: &[u8], end: usize) -> usize {
    let mut padded = end;
    while padded < bytes.len() && padded - end < 2 && bytes[padded] == b'=' {
        padded += 1;
    }
    padded
}

/// Where a `data:image/<subtype>;base64,` just before `start` begins, or `start` when there is none.
fn prefix_start(bytes: &[u8], start: usize) -> usize {
    let window = &bytes[start.saturating_sub(64)..start];
    let Some(before) = window.strip_suffix(b";base64,") else { return start };
    let Some(at) = before.windows(11).rposition(|w| w == b"data:image/") else { return start };
    let subtype = &before[at + 11..];
    let valid =
        !subtype.is_empty() && subtype.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'));
    if valid { start - window.len() + at } else { start }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lift(text: &str) -> Option<Vec<Piece>> {
        lift_at_most(text, MAX_PICTURES)
    }

    fn png_base64(extra: usize) -> (Vec<u8>, String) {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend((0..2000 + extra).map(|i| (i * 7 % 251) as u8));
        let text = general_purpose::STANDARD.encode(&bytes);
        (bytes, text)
    }

    #[test]
    fn a_picture_in_text_is_lifted_and_noted() {
        let (bytes, encoded) = png_base64(0);
        let text = format!("before data:image/png;base64,{encoded} after");
        let pieces = lift(&text).expect("found");
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[0], Piece::Text(format!("before [image (image/png, {} bytes)]", thousands(bytes.len()))));
        assert_eq!(pieces[1], Piece::Picture(LiftedPicture { bytes, format: Format::Png }));
        assert_eq!(pieces[2], Piece::Text(" after".into()));
    }

    #[test]
    fn decoys_that_start_like_a_picture_but_do_not_decode_are_left_alone() {
        let (_, encoded) = png_base64(3000);
        let unpadded = encoded.trim_end_matches('=');
        let mut too_long = unpadded.to_string();
        while too_long.len() % 4 != 1 {
            too_long.push('A');
        }
        let bad_padding = match unpadded.len() % 4 {
            2 => format!("{unpadded}="),
            _ => format!("{unpadded}=="),
        };
        // 'B' is 1: a bit past the data.
        let stray_bits = format!("{}B", &unpadded[..unpadded.len() - 1]);
        let cases = [too_long, bad_padding, stray_bits];
        for (i, decoy) in cases.iter().enumerate() {
            assert!(unpadded.len() % 4 != 0, "the picture's base64 ends mid-group, so each decoy is one");
            assert!(lift(&format!("x {decoy} y")).is_none(), "decoy {i}");
        }
    }

    #[test]
    fn a_picture_of_every_length_is_lifted_whole() {
        for extra in [200_000, 3 * CHUNK, 3 * CHUNK / 4 * 3 - 2008, 147_449, 147_450, 40_000, 40_001] {
            let (bytes, encoded) = png_base64(extra);
            let text = format!("\"data\":\"{encoded}\",\"next\":1");
            let pieces = lift(&text).expect("found");
            assert_eq!(pieces[1], Piece::Picture(LiftedPicture { bytes, format: Format::Png }), "{extra}");
            assert_eq!(pieces[2], Piece::Text("\",\"next\":1".into()));
        }
    }

    #[test]
    fn base64_that_is_not_a_picture_is_left_alone() {
        let encoded = general_purpose::STANDARD.encode(vec![7u8; 3000]);
        assert!(lift(&format!("x {encoded} y")).is_none());
    }

    #[test]
    fn short_runs_and_prose_are_left_alone() {
        let (_, encoded) = png_base64(0);
        assert!(lift(&encoded[..1020]).is_none());
        assert!(lift(&"the quick brown fox ".repeat(10_000)).is_none());
        assert!(lift(&"a".repeat(5000)).is_none(), "a long run that does not decode to a picture");
    }

    #[test]
    fn runs_at_the_edges_and_with_padding() {
        let (bytes, encoded) = png_base64(1);
        assert!(encoded.ends_with('='));
        let pieces = lift(&encoded).expect("found");
        assert_eq!(pieces[0], Piece::Text(format!("[image (image/png, {} bytes)]", thousands(bytes.len()))));
        assert_eq!(pieces[2], Piece::Text(String::new()));
    }

    #[test]
    fn at_most_eight_pictures() {
        let (_, encoded) = png_base64(0);
        let text = vec![encoded; 10].join(" ");
        let pieces = lift(&text).expect("found");
        assert_eq!(pieces.iter().filter(|p| matches!(p, Piece::Picture(_))).count(), 8);
        let Some(Piece::Text(last)) = pieces.last() else { panic!("text last") };
        assert!(last.len() > 2 * MIN_RUN, "the rest is left as sent");
    }

    #[test]
    fn a_json_stringified_tool_content_is_lifted() {
        let (_, encoded) = png_base64(0);
        let text = format!(
            r#"[{{"type":"text","text":"shot"}},{{"type":"image","data":"{encoded}","mimeType":"image/png"}}]"#
        );
        let pieces = lift(&text).expect("found");
        let Piece::Text(first) = &pieces[0] else { panic!("text") };
        assert!(first.ends_with(r#""data":"[image (image/png, 2,008 bytes)]"#), "{first}");
        assert_eq!(pieces[2], Piece::Text(r#"","mimeType":"image/png"}]"#.into()));
    }
}
