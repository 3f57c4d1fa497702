//! SPEC §11 as a model: what a conversation's prompt must hold after base64 pictures are lifted out of
//! tool text, for conversations generated from the whole input space §11 allows — every role, a
//! string or several text parts, pictures of four formats with and without their `data:` prefix and
//! padding, pictures whose last group ends on a digit, long base64 that is no picture, short runs,
//! more than 8 pictures in a message, and accented, CJK, astral and no-break-space text right against
//! the runs.
//!
//! The model works on the text as sent, by the clause's rule (maximal runs of the base64 class, then
//! up to two `=`; at least 1024 characters; padding that completes the last group or none; the decoded
//! first bytes' magic; 8 a message), not on how the generator built it, so neighbours that join a run
//! are judged as the clause judges them. The observable is `usage.prompt_tokens` on a server without a
//! vision encoder: one token a byte (4.7), and a lifted picture leaves only its note (11.5), so the
//! prompt grows by exactly the bytes of the model's text. It is compared as a difference from the same
//! conversation with every text emptied, so the chat template's own tokens cancel.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use fixtures::images::{PictureFormat, picture};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::CHAT;
use crate::http::Http;

/// The chat route (4.1).
/// Pictures lifted from one message at most (11.4).
const PER_MESSAGE: usize = 8;
/// The shortest run that is read (11.2).
const SHORTEST_RUN: usize = 1024;
/// A picture whose base64 is exactly [`SHORTEST_RUN`] characters: 768 bytes, four symbols for every
/// three, no padding.
const EXACT_BYTES: usize = SHORTEST_RUN / 4 * 3;

/// A piece of a generated text.
#[derive(Debug, Clone)]
pub enum Piece {
    /// Plain text (no `=`: the clause leaves `=` after a complete group unsaid).
    Text(String),
    /// A picture's base64.
    Picture(Pic),
    /// Base64 of bytes that are no picture, long enough to be read.
    Noise {
        /// Its length in characters.
        chars: usize,
        /// Varies its bytes.
        seed: u8,
    },
    /// Base64 shorter than a run.
    Short {
        /// Its length in characters.
        chars: usize,
        /// Varies its bytes.
        seed: u8,
    },
}

/// A generated picture in text.
#[derive(Debug, Clone)]
pub struct Pic {
    format: PictureFormat,
    seed: u32,
    /// Its size in bytes at least (zeros after the picture's end, which decoders ignore): around 768,
    /// where a run reaches 1024 characters.
    size: usize,
    /// Whether its base64's last group has 3 symbols (else 2).
    three_left: bool,
    /// With 3 left, the last byte's low nibble (13, 14, 15: the group ends on 0, 4, 8).
    end_nibble: u8,
    /// `data:image/<subtype>;base64,` before it.
    prefix: Option<&'static str>,
    padding: Padding,
}

/// How a picture's base64 ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// Its `=` as the encoder writes them.
    Kept,
    /// Without `=`.
    Dropped,
    /// One `=` too few or too many where padding belongs (then it is not base64: 11.2).
    Wrong,
}

/// One generated message.
#[derive(Debug, Clone)]
pub struct Message {
    role: &'static str,
    /// One string (`content` as a string), or the text parts of a list.
    parts: Vec<Vec<Piece>>,
    as_list: bool,
}

/// A generated conversation: what is sent.
#[derive(Debug, Clone)]
pub struct Conversation(pub Vec<Message>);

fn text_piece() -> impl Strategy<Value = Piece> {
    let words = prop::sample::select(vec![
        "é",
        "日本",
        "🖼\u{fe0f}",
        "\u{a0}",
        "ü",
        "Ω",
        " ",
        "\n",
        "\"",
        "-",
        "_",
        ".",
        ",",
        ":",
        "see",
        "x1",
        "42",
    ]);
    prop::collection::vec(words, 0..5).prop_map(|w| Piece::Text(w.concat()))
}

fn picture_piece() -> impl Strategy<Value = Piece> {
    let format =
        prop::sample::select(vec![PictureFormat::Png, PictureFormat::Jpeg, PictureFormat::Webp, PictureFormat::Gif]);
    let prefix = prop::option::weighted(0.3, prop::sample::select(vec!["png", "jpeg", "webp", "gif", "x-portable"]));
    let padding = prop_oneof![4 => Just(Padding::Kept), 3 => Just(Padding::Dropped), 1 => Just(Padding::Wrong)];
    // Sizes on both sides of 1024 characters (768 bytes), and exactly on it: 768 bytes are 1024
    // characters whatever the padding (the last group is whole).
    let size = prop_oneof![1 => 700usize..765, 1 => Just(EXACT_BYTES), 2 => 770usize..1100];
    (format, 0u32..1000, size, any::<bool>(), 13u8..16, prefix, padding).prop_map(
        |(format, seed, size, three_left, end_nibble, prefix, padding)| {
            Piece::Picture(Pic { format, seed, size, three_left, end_nibble, prefix, padding })
        },
    )
}

/// Ten to fourteen pictures with text between them: past the 8 a message (11.4), even when some are
/// too short or badly padded to count.
fn crowded_part() -> impl Strategy<Value = Vec<Piece>> {
    prop::collection::vec((picture_piece(), text_piece()), 10..15)
        .prop_map(|pairs| pairs.into_iter().flat_map(|(p, t)| [p, t]).collect())
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        5 => text_piece(),
        5 => picture_piece(),
        1 => (1100usize..1400, any::<u8>()).prop_map(|(chars, seed)| Piece::Noise { chars, seed }),
        1 => (8usize..900, any::<u8>()).prop_map(|(chars, seed)| Piece::Short { chars, seed }),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![6 => Just("tool"), 2 => Just("user"), 1 => Just("assistant"), 1 => Just("system")];
    let part = prop_oneof![2 => prop::collection::vec(piece(), 0..7), 1 => crowded_part()];
    (role, prop::collection::vec(part, 1..4), any::<bool>()).prop_map(|(role, mut parts, as_list)| {
        if !as_list {
            parts.truncate(1);
        }
        Message { role, parts, as_list }
    })
}

/// Conversations of one to five messages.
pub fn conversations() -> impl Strategy<Value = Conversation> {
    prop::collection::vec(message(), 1..6).prop_map(Conversation)
}

/// The 16×12 picture of `format` and `seed`, encoded once per thread (a GIF's palette search is slow
/// in a debug build, and generated conversations ask for the same pictures again and again).
fn small_picture(format: PictureFormat, seed: u32) -> Vec<u8> {
    thread_local! {
        static MADE: std::cell::RefCell<std::collections::HashMap<(u8, u32), Vec<u8>>> =
            std::cell::RefCell::default();
    }
    MADE.with(|made| {
        made.borrow_mut().entry((format as u8, seed)).or_insert_with(|| picture(format, 16, 12, seed)).clone()
    })
}

impl Pic {
    fn bytes(&self) -> Vec<u8> {
        let mut bytes = small_picture(self.format, self.seed);
        bytes.resize(bytes.len().max(self.size), 0);
        if self.size == EXACT_BYTES && bytes.len() == EXACT_BYTES {
            return bytes;
        }
        // Lengths of 3k+2 bytes leave 3 symbols in the last group, 3k+1 leave 2.
        let wanted = if self.three_left { 2 } else { 1 };
        // Never 766 or 767 bytes: 1022 or 1023 symbols, with their `=` 1024 characters; whether an
        // `=` counts toward 1024 is left unsaid.
        while bytes.len() % 3 != wanted || matches!(bytes.len(), 766 | 767) {
            bytes.push(0);
        }
        if self.three_left
            && let Some(last) = bytes.last_mut()
        {
            *last = 0xA0 | self.end_nibble;
        }
        bytes
    }

    fn text(&self) -> String {
        let bytes = self.bytes();
        let bare = STANDARD_NO_PAD.encode(&bytes);
        let run = match self.padding {
            Padding::Kept => STANDARD.encode(&bytes),
            Padding::Dropped => bare,
            // Always a group of 2 or 3, never a whole one: one `=` for 2, two for 3.
            Padding::Wrong if bare.len() % 4 == 2 => format!("{bare}="),
            Padding::Wrong => format!("{bare}=="),
        };
        match self.prefix {
            Some(subtype) => format!("data:image/{subtype};base64,{run}"),
            None => run,
        }
    }
}

/// `chars` base64 characters of bytes that are no picture.
pub fn noise(chars: usize, seed: u8) -> String {
    // Bytes that start with 0 (no format's magic), then a counter mixed with the seed.
    let bytes: Vec<u8> =
        (0..chars * 3 / 4).map(|i| if i == 0 { 0 } else { (i as u8).wrapping_mul(31).wrapping_add(seed) }).collect();
    let mut text = STANDARD_NO_PAD.encode(bytes);
    text.truncate(chars);
    text
}

impl Piece {
    fn text(&self) -> String {
        match self {
            Piece::Text(text) => text.clone(),
            Piece::Picture(pic) => pic.text(),
            Piece::Noise { chars, seed } | Piece::Short { chars, seed } => noise(*chars, *seed),
        }
    }
}

impl Message {
    /// Each part's text. A picture is never followed straight by a base64 character: a run that went on
    /// past a picture's last group would decode (or not) by its trailing bits, which SPEC leaves unsaid,
    /// so a space goes between them.
    fn texts(&self) -> Vec<String> {
        self.parts
            .iter()
            .map(|part| {
                let mut text = String::new();
                let mut picture_end = None;
                for piece in part {
                    let next = piece.text();
                    if picture_end == Some(text.len()) && next.bytes().next().is_some_and(in_class) {
                        text.push(' ');
                    }
                    text.push_str(&next);
                    if matches!(piece, Piece::Picture(_)) {
                        picture_end = Some(text.len());
                    }
                }
                text
            })
            .collect()
    }
}

/// The request body for `texts` (one per part) in `conversation`'s messages.
fn body(conversation: &Conversation, texts: &[Vec<String>]) -> Value {
    let messages: Vec<Value> = conversation
        .0
        .iter()
        .zip(texts)
        .map(|(message, texts)| {
            let content = if message.as_list {
                json!(texts.iter().map(|t| json!({"type": "text", "text": t})).collect::<Vec<_>>())
            } else {
                json!(texts.first().cloned().unwrap_or_default())
            };
            json!({"role": message.role, "content": content})
        })
        .collect();
    json!({"messages": messages, "max_tokens": 1})
}

// --- The model ------------------------------------------------------------------------------------

fn in_class(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/'
}

/// The format a picture's first decoded bytes name (11.2; BMP is never generated).
fn magic(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]) {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// A run's bytes, when its padding completes the last group or is absent (11.2).
fn decode(symbols: &str, pads: usize) -> Option<Vec<u8>> {
    let fits = match (symbols.len() % 4, pads) {
        (1, _) => false,
        (_, 0) => true,
        (2, 2) | (3, 1) => true,
        _ => false,
    };
    if !fits {
        return None;
    }
    STANDARD_NO_PAD.decode(symbols).ok()
}

/// Where a `data:image/<subtype>;base64,` that ends at `end` begins.
fn prefix_start(text: &str, end: usize) -> Option<usize> {
    let head = text[..end].strip_suffix(";base64,")?;
    let at = head.rfind("data:image/")?;
    let subtype = &head[at + "data:image/".len()..];
    let ok = !subtype.is_empty() && subtype.bytes().all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b));
    ok.then_some(at)
}

/// One text of a tool message as the prompt must hold it: each run read as a picture (while `left`
/// allows) becomes its note, `data:` prefix and all; everything else stays as sent.
pub fn lifted(text: &str, left: &mut usize) -> String {
    let bytes = text.as_bytes();
    let (mut out, mut copied, mut at) = (String::new(), 0, 0);
    while at < bytes.len() {
        if !in_class(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && in_class(bytes[at]) {
            at += 1;
        }
        let symbols_end = at;
        while at < bytes.len() && bytes[at] == b'=' && at - symbols_end < 2 {
            at += 1;
        }
        if symbols_end - start < SHORTEST_RUN || *left == 0 {
            continue;
        }
        let Some(decoded) = decode(&text[start..symbols_end], at - symbols_end) else { continue };
        let Some(mime) = magic(&decoded) else { continue };
        let from = prefix_start(text, start).filter(|from| *from >= copied).unwrap_or(start);
        out.push_str(&text[copied..from]);
        out.push_str(&format!("[image ({mime}, {} bytes)]", fixtures::images::with_commas(decoded.len())));
        copied = at;
        *left -= 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// The texts the prompt must hold: tool messages lifted (8 a message, across its parts), every other
/// role as sent (11.1).
pub fn expected(conversation: &Conversation) -> Vec<Vec<String>> {
    conversation
        .0
        .iter()
        .map(|message| {
            let texts = message.texts();
            if message.role != "tool" {
                return texts;
            }
            let mut left = PER_MESSAGE;
            texts.iter().map(|text| lifted(text, &mut left)).collect()
        })
        .collect()
}

// --- The check ------------------------------------------------------------------------------------

/// What the server says of `conversation`, against the model.
pub async fn check(http: Http, conversation: Conversation) -> Result<(), String> {
    let sent: Vec<Vec<String>> = conversation.0.iter().map(Message::texts).collect();
    let emptied: Vec<Vec<String>> = sent.iter().map(|texts| vec![String::new(); texts.len()]).collect();
    let wanted: i64 = expected(&conversation).iter().flatten().map(|t| t.len() as i64).sum();
    let tokens = |texts: Vec<Vec<String>>| {
        // Not kept in the case's transcript: a failure reports the shrunk conversation instead.
        let http = http.fresh();
        let body = body(&conversation, &texts);
        async move {
            let reply = http.post_json(CHAT, &body).send().await.map_err(|e| e.to_string())?;
            let answer: Value = serde_json::from_slice(&reply.body).unwrap_or_default();
            match answer["usage"]["prompt_tokens"].as_i64() {
                Some(tokens) if reply.status == 200 => Ok(tokens),
                _ => Err(format!("status {}: {}", reply.status, String::from_utf8_lossy(&reply.body))),
            }
        }
    };
    let with = tokens(sent).await?;
    let without = tokens(emptied).await?;
    if with - without == wanted {
        Ok(())
    } else {
        Err(format!(
            "the texts added {} prompt tokens; the model says {wanted} (one a byte of its texts: {})",
            with - without,
            describe_expected(&conversation)
        ))
    }
}

/// The model's texts, base64 runs shortened for reading.
fn describe_expected(conversation: &Conversation) -> String {
    let texts: Vec<String> = expected(conversation).into_iter().flatten().map(|t| shorten(&t)).collect();
    format!("{texts:?}")
}

fn shorten(text: &str) -> String {
    let mut out = String::new();
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_alphanumeric() || c == '+' || c == '/' { run + 1 } else { 0 };
        if run <= 12 {
            out.push(c);
        } else if run == 13 {
            out.push('…');
        }
    }
    out
}

/// A conversation as a reader wants it: each message's role and pieces.
pub fn describe(conversation: &Conversation) -> String {
    let mut lines = Vec::new();
    for message in &conversation.0 {
        let parts: Vec<String> = message
            .parts
            .iter()
            .map(|part| {
                part.iter()
                    .filter(|piece| !matches!(piece, Piece::Text(text) if text.is_empty()))
                    .map(|piece| match piece {
                        Piece::Text(text) => format!("{text:?}"),
                        Piece::Picture(pic) => format!(
                            "{:?} picture ({} bytes, last nibble {}, prefix {:?}, padding {:?})",
                            pic.format,
                            pic.bytes().len(),
                            pic.end_nibble,
                            pic.prefix,
                            pic.padding
                        ),
                        Piece::Noise { chars, .. } => format!("{chars} base64 characters of no picture"),
                        Piece::Short { chars, .. } => format!("{chars} base64 characters (short)"),
                    })
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
            .collect();
        let shape = if message.as_list { "text parts" } else { "a string" };
        lines.push(format!("  {} ({shape}): {}", message.role, parts.join(" | ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(size: usize, padding: Padding, prefix: Option<&'static str>) -> Pic {
        Pic { format: PictureFormat::Png, seed: 1, size, three_left: true, end_nibble: 13, prefix, padding }
    }

    #[test]
    fn a_picture_becomes_its_note_with_its_prefix_and_the_text_around_stays() {
        let pic = png(800, Padding::Kept, Some("png"));
        let text = format!("é{}日本", pic.text());
        let note = format!("[image (image/png, {} bytes)]", fixtures::images::with_commas(pic.bytes().len()));
        assert_eq!(lifted(&text, &mut 8), format!("é{note}日本"));
    }

    #[test]
    fn wrong_padding_short_runs_and_no_magic_stay_as_sent() {
        for text in [png(800, Padding::Wrong, None).text(), png(700, Padding::Kept, None).text(), noise(1200, 3)] {
            assert_eq!(lifted(&text, &mut 8), text);
        }
    }

    #[test]
    fn dropped_padding_is_read_and_the_ninth_picture_stays() {
        let pic = png(800, Padding::Dropped, None).text();
        let text = vec![pic.clone(); 9].join(" ");
        let out = lifted(&text, &mut 8);
        assert_eq!(out.matches("[image (image/png").count(), 8);
        assert!(out.ends_with(&pic));
    }
}

#[cfg(test)]
pub(crate) mod odds;
