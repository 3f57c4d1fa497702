//! The byte tokenizer of strata-wire C-A3: one id per UTF-8 byte, special tokens from 256 up. Prompt
//! lengths therefore equal byte counts plus specials, which is what makes `usage.prompt_tokens` a
//! measurement a client can predict (SPEC 4.8).

/// `<|im_start|>`.
pub const IM_START: u32 = 256;
/// `<|im_end|>`: ends a message, and ends generation.
pub const IM_END: u32 = 257;
/// `<|endoftext|>`.
pub const END_OF_TEXT: u32 = 258;
/// `<|vision_start|>`: opens a picture.
pub const VISION_START: u32 = 259;
/// `<|image_pad|>`: one per image token of a picture.
pub const IMAGE_PAD: u32 = 260;
/// `<|vision_end|>`: closes a picture.
pub const VISION_END: u32 = 261;

const SPECIAL_TEXT: [&str; 6] =
    ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"];

/// Appends the bytes of `text` as ids. Special-token text inside `text` stays ordinary bytes.
pub fn push_text(ids: &mut Vec<u32>, text: &str) {
    ids.extend(text.bytes().map(u32::from));
}

/// The ids of `text`.
pub fn encode(text: &str) -> Vec<u32> {
    let mut ids = Vec::with_capacity(text.len());
    push_text(&mut ids, text);
    ids
}

/// Renders ids back to text, specials as their names (for logs and tests).
pub fn decode(ids: &[u32]) -> String {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        match u8::try_from(id) {
            Ok(byte) => out.push(byte),
            Err(_) => {
                let name = SPECIAL_TEXT.get((id - IM_START) as usize).copied().unwrap_or("<|unknown|>");
                out.extend_from_slice(name.as_bytes());
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_one_id_per_byte_and_specials_stay_text() {
        assert_eq!(encode("hé"), vec![104, 0xC3, 0xA9]);
        assert_eq!(encode("<|im_end|>").len(), 10);
        assert_eq!(decode(&[IM_START, 104, 105, IM_END]), "<|im_start|>hi<|im_end|>");
    }
}
