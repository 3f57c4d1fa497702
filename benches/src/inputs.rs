//! Benchmark inputs, built the same way every run.

use base64::Engine;

/// A photo-like PNG of about 1.5 MB (noise barely compresses: 3 bytes a pixel).
pub fn picture_1_5mb() -> Vec<u8> {
    fixtures::images::noise_png(800, 625, 5)
}

/// `len` bytes of deterministic noise (a picture body as the wire carries it: nothing repeats).
pub fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// The picture's base64.
pub fn picture_base64(picture: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(picture)
}

/// A 2 MB tool message with one picture: the AI SDK's stringified tool content (seed 001).
pub fn two_mb_one_picture() -> String {
    fixtures::payloads::chatbox_tool_content("Screenshot taken.", &picture_1_5mb())
}

/// Log-like JSON lines: a tool result with no picture in it.
fn log_lines(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 200);
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!(
            "{{\"ts\":\"2026-11-30T05:{:02}:{:02}Z\",\"level\":\"info\",\"msg\":\"request served\",\"path\":\"/api/items/{}\",\"ms\":{}}}\n",
            (i / 60) % 60,
            i % 60,
            10_000 + i * 7,
            i % 97
        ));
        i += 1;
    }
    text.truncate(bytes);
    text
}

/// A 2 MB tool message with no picture.
pub fn two_mb_none() -> String {
    log_lines(2 << 20)
}

/// The hostile case for lifting (about 2 MB): runs of 4,097 base64 characters, each starting with a
/// real PNG's first bytes and one symbol too long to decode, separated by a quote and a space, as a
/// crafted tool result would send them.
pub fn two_mb_picture_decoys() -> String {
    let start = picture_base64(&fixtures::images::picture(fixtures::images::PictureFormat::Png, 64, 48, 1));
    let filler = picture_base64(&fixtures::images::noise_png(200, 200, 3));
    let mut text = String::with_capacity((2 << 20) + 8192);
    let mut offset = 0;
    while text.len() < 2 << 20 {
        let mut run = start[..64].to_string();
        while run.len() < 4097 {
            let take = (4097 - run.len()).min(filler.len() - offset);
            run.push_str(&filler[offset..offset + take]);
            offset = (offset + take) % (filler.len() - 4);
        }
        text.push_str(&run);
        text.push_str("\" ");
    }
    text
}

/// Valid base64 of the same length as [`two_mb_picture_decoys`], to decode beside it.
pub fn base64_like_decoys() -> String {
    let decoys = two_mb_picture_decoys();
    let mut text = picture_base64(&fixtures::images::noise_png(800, 800, 9));
    text.truncate(decoys.len() / 4 * 4);
    text
}

/// A 20 KB tool message.
pub fn twenty_kb() -> String {
    log_lines(20 << 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inputs_are_what_their_names_say() {
        let one = two_mb_one_picture();
        assert!((1_900_000..2_300_000).contains(&one.len()), "{}", one.len());
        assert_eq!(
            reference_server::lift::lift_at_most(&one, reference_server::lift::MAX_PICTURES).map(|p| p.len()),
            Some(3),
            "one picture lifted"
        );
        assert!(reference_server::lift::lift_at_most(&two_mb_none(), reference_server::lift::MAX_PICTURES).is_none());
        assert_eq!(twenty_kb().len(), 20 << 10);
        let decoys = two_mb_picture_decoys();
        assert!(
            reference_server::lift::lift_at_most(&decoys, reference_server::lift::MAX_PICTURES).is_none(),
            "no decoy is a picture"
        );
        assert!(decoys.matches("iVBORw0KGgo").count() > 400, "every run starts like a PNG");
        assert_eq!(base64_like_decoys().len(), decoys.len() / 4 * 4);
    }
}
