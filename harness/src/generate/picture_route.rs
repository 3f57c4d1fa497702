//! Generated picture requests and a model of what SPEC 2.2–2.4 and §9 say `/tool-media/<name>`
//! answers.
//!
//! A request is `GET` or `HEAD` of a name — a picture planted in the cache folder (a PNG of 2 MiB and
//! some, far more than one read of a file gives, a small JPEG and a small WebP), a well-formed name with no file, a folder, a FIFO or a symbolic link planted under a
//! well-formed name, or a malformed name (upper-case hex, a hex digit short or over, another
//! extension, a character after it, a percent-encoded character, a dot-dot) — with the key in each
//! form 2.2 takes (`Bearer` in three cases, `x-api-key`, `x-api-key` beside a bare `Bearer`), with no
//! key, or with a wrong one in either header (another, or the key less its last character); and `If-None-Match` absent, the ETag strong or weak,
//! in a list, `*`, or another ETag.
//!
//! The model, from SPEC alone: without the key, 401 with 2.4's body; with it, a name 9.2 does not
//! take, or one whose file is not a regular file in the folder, is 9.7's 404 (9.5b: whatever
//! `If-None-Match` says); a planted picture is 304 without a body when `If-None-Match` names its ETag
//! (or is `*`), else 200 with 9.4's headers and its bytes. `HEAD` is `GET`'s status and headers, no
//! body (9.6). Every answer also passes the wire monitor (2.8's error shape, 9.4's headers and SHA).

use std::path::{Path, PathBuf};

use fixtures::images::{PictureFormat, picture};
use http::Method;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::http::Http;

/// What the request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The planted picture of this format.
    Planted(PictureFormat),
    /// A well-formed name with no file.
    Absent,
    /// A folder under a well-formed name.
    Folder,
    /// A FIFO under a well-formed name.
    Fifo,
    /// A symbolic link under a well-formed name, to a picture's bytes outside the folder.
    Link,
    /// A malformed name, made from the PNG's name as [`Malformed`] says.
    Malformed(Malformed),
}

/// How a malformed name differs from a media name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// The hex in upper case.
    UpperHex,
    /// 63 hex digits.
    Short,
    /// 65 hex digits.
    Long,
    /// `.gif`.
    OtherExtension,
    /// `.PNG`.
    UpperExtension,
    /// A character after the extension.
    Trailing,
    /// The first digit percent-encoded.
    PercentEncoded,
    /// `..%2F` and the name.
    DotDot,
}

/// How the request carries the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// `Authorization: <scheme> <key>` with the scheme written so.
    Bearer(&'static str),
    /// `x-api-key: <key>`.
    XApiKey,
    /// `x-api-key: <key>` beside an `Authorization` of `Bearer` and nothing else (2.2e).
    XApiKeyBesideBareBearer,
    /// No key.
    Missing,
    /// `Authorization: Bearer <another key>`.
    WrongBearer,
    /// `x-api-key: <another key>`.
    WrongXApiKey,
    /// `Authorization: Bearer <the key less its last character>`.
    PrefixBearer,
}

impl Key {
    fn accepted(self) -> bool {
        matches!(self, Key::Bearer(_) | Key::XApiKey | Key::XApiKeyBesideBareBearer)
    }
}

/// What `If-None-Match` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// No `If-None-Match`.
    Absent,
    /// The picture's ETag.
    Strong,
    /// `W/` and the ETag.
    Weak,
    /// Another ETag, then the picture's, in one list.
    InList,
    /// `*`.
    Star,
    /// Another ETag only.
    Other,
}

impl Condition {
    /// Whether it names the picture whose hash is `hash` (9.5).
    fn matches(self) -> bool {
        matches!(self, Condition::Strong | Condition::Weak | Condition::InList | Condition::Star)
    }

    fn header(self, hash: &str) -> Option<String> {
        let other = format!("\"{}\"", "0".repeat(64));
        match self {
            Condition::Absent => None,
            Condition::Strong => Some(format!("\"{hash}\"")),
            Condition::Weak => Some(format!("W/\"{hash}\"")),
            Condition::InList => Some(format!("{other}, \"{hash}\"")),
            Condition::Star => Some("*".into()),
            Condition::Other => Some(other),
        }
    }
}

/// A generated picture request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureRequest {
    /// `GET` (false) or `HEAD` (true).
    pub head: bool,
    /// What it names.
    pub target: Target,
    /// How it carries the key.
    pub key: Key,
    /// Its `If-None-Match`.
    pub condition: Condition,
}

const FORMATS: [PictureFormat; 3] = [PictureFormat::Png, PictureFormat::Jpeg, PictureFormat::Webp];

/// The planted PNG's size: 2 MiB and an odd few bytes, so a server that serves one read of the file
/// (or a buffer's worth) serves less than the picture.
const LARGE_PNG: usize = 2 * 1024 * 1024 + 13;

fn target() -> impl Strategy<Value = Target> {
    let malformed = prop_oneof![
        Just(Malformed::UpperHex),
        Just(Malformed::Short),
        Just(Malformed::Long),
        Just(Malformed::OtherExtension),
        Just(Malformed::UpperExtension),
        Just(Malformed::Trailing),
        Just(Malformed::PercentEncoded),
        Just(Malformed::DotDot),
    ];
    prop_oneof![
        6 => prop::sample::select(FORMATS.to_vec()).prop_map(Target::Planted),
        1 => Just(Target::Absent),
        1 => Just(Target::Folder),
        1 => Just(Target::Fifo),
        1 => Just(Target::Link),
        2 => malformed.prop_map(Target::Malformed),
    ]
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        2 => Just(Key::Bearer("Bearer")),
        1 => Just(Key::Bearer("bearer")),
        1 => Just(Key::Bearer("BEARER")),
        2 => Just(Key::XApiKey),
        1 => Just(Key::XApiKeyBesideBareBearer),
        1 => Just(Key::Missing),
        1 => Just(Key::WrongBearer),
        1 => Just(Key::WrongXApiKey),
        2 => Just(Key::PrefixBearer),
    ]
}

fn condition() -> impl Strategy<Value = Condition> {
    prop_oneof![
        3 => Just(Condition::Absent),
        1 => Just(Condition::Strong),
        1 => Just(Condition::Weak),
        1 => Just(Condition::InList),
        1 => Just(Condition::Star),
        1 => Just(Condition::Other),
    ]
}

/// The broken variants `gen.picture-route-model` names, each met in at least 999 runs of 1,000 of its budget (this
/// module's tests hold it).
pub const VARIANTS: &[&str] = &[
    "media-public",
    "no-304",
    "head-skips-checks",
    "bearer-only",
    "key-prefix-match",
    "media-headers",
    "media-x-api-key-refused",
    "media-etag-unquoted",
    "bearer-case-sensitive",
    // Met in every run by the covering requests (MET_BY_THE_COVERING), not by the draw's odds.
    "conditional-before-file-check",
    // The last three (MET_BEFORE_THE_DRAW) are met in every run, by each_name_once's GETs.
    "single-read-served",
    "missing-file-500",
    "non-files-served",
];

/// The variants of [`VARIANTS`] after the drawn ones that [`covering`] meets in every run.
pub const MET_BY_THE_COVERING: [&str; 1] = ["conditional-before-file-check"];

/// The variants at the end of [`VARIANTS`] that `each_name_once` meets in every run, before the draw.
pub const MET_BEFORE_THE_DRAW: [&str; 3] = ["single-read-served", "missing-file-500", "non-files-served"];

/// Every request of the space the module's doc names.
pub fn requests() -> impl Strategy<Value = PictureRequest> {
    (any::<bool>(), target(), key(), condition()).prop_map(|(head, target, key, condition)| PictureRequest {
        head,
        target,
        key,
        condition,
    })
}

/// Every target, key form and condition the draws take, for the covering requests.
pub(crate) const TARGETS: [Target; 15] = [
    Target::Planted(PictureFormat::Png),
    Target::Planted(PictureFormat::Jpeg),
    Target::Planted(PictureFormat::Webp),
    Target::Absent,
    Target::Folder,
    Target::Fifo,
    Target::Link,
    Target::Malformed(Malformed::UpperHex),
    Target::Malformed(Malformed::Short),
    Target::Malformed(Malformed::Long),
    Target::Malformed(Malformed::OtherExtension),
    Target::Malformed(Malformed::UpperExtension),
    Target::Malformed(Malformed::Trailing),
    Target::Malformed(Malformed::PercentEncoded),
    Target::Malformed(Malformed::DotDot),
];
pub(crate) const KEYS: [Key; 9] = [
    Key::Bearer("Bearer"),
    Key::Bearer("bearer"),
    Key::Bearer("BEARER"),
    Key::XApiKey,
    Key::XApiKeyBesideBareBearer,
    Key::Missing,
    Key::WrongBearer,
    Key::WrongXApiKey,
    Key::PrefixBearer,
];
pub(crate) const CONDITIONS: [Condition; 6] =
    [Condition::Absent, Condition::Strong, Condition::Weak, Condition::InList, Condition::Star, Condition::Other];

/// Requests holding every pair of the four axes' values (method, target, key form, condition): a
/// conditional `GET` of a link or a folder under a media name is met on every run, not by a draw's luck.
pub fn covering() -> Vec<PictureRequest> {
    super::covering::pairwise(&[2, TARGETS.len(), KEYS.len(), CONDITIONS.len()])
        .iter()
        .map(|row| PictureRequest {
            head: row[0] == 1,
            target: TARGETS[row[1]],
            key: KEYS[row[2]],
            condition: CONDITIONS[row[3]],
        })
        .collect()
}

/// A generated request, for a failure's report.
pub fn describe(request: &PictureRequest) -> String {
    format!("{request:?}")
}

/// A planted picture: its format, bytes and media name.
#[derive(Debug, Clone)]
struct Picture {
    format: PictureFormat,
    bytes: Vec<u8>,
    name: String,
}

/// What the cache folder holds for the generated requests: each format's picture (its bytes, hash
/// and name), and the well-formed names of the absent file, folder, FIFO and link.
#[derive(Debug, Clone)]
pub struct Planted {
    pictures: Vec<Picture>,
    absent: String,
    folder: String,
    fifo: String,
    link: String,
}

/// The SHA-256 of `bytes`, lowercase hex.
fn sha256(bytes: &[u8]) -> String {
    fixtures::images::sha256_hex(bytes)
}

fn name_of(bytes: &[u8], format: PictureFormat) -> String {
    let extension = match format {
        PictureFormat::Jpeg => "jpg",
        PictureFormat::Webp => "webp",
        _ => "png",
    };
    format!("{}.{extension}", sha256(bytes))
}

/// Plants the pictures, folder, FIFO and link in `folder` (made if missing), the link's target beside
/// it.
pub fn plant(folder: &Path) -> Result<Planted, String> {
    let failed = |what: &str, e: std::io::Error| format!("planting {what} in {}: {e}", folder.display());
    std::fs::create_dir_all(folder).map_err(|e| failed("the folder", e))?;
    let mut pictures = Vec::new();
    for (at, format) in FORMATS.into_iter().enumerate() {
        let bytes = match format {
            PictureFormat::Png => fixtures::images::padded_png_of(LARGE_PNG, 36, 24),
            _ => picture(format, 36 + at as u32, 24, 0x9e7 + at as u32),
        };
        let name = name_of(&bytes, format);
        std::fs::write(folder.join(&name), &bytes).map_err(|e| failed("a picture", e))?;
        pictures.push(Picture { format, bytes, name });
    }
    let well_formed = |digit: char| format!("{}.png", std::iter::repeat_n(digit, 64).collect::<String>());
    let (absent, folder_name, fifo, link) = (well_formed('a'), well_formed('b'), well_formed('c'), well_formed('d'));
    let _ = std::fs::remove_file(folder.join(&absent));
    if !folder.join(&folder_name).is_dir() {
        std::fs::create_dir(folder.join(&folder_name)).map_err(|e| failed("a folder", e))?;
    }
    if !folder.join(&fifo).exists() {
        let made = std::process::Command::new("mkfifo").arg(folder.join(&fifo)).status();
        if !made.as_ref().is_ok_and(|s| s.success()) {
            return Err(format!("mkfifo in {}: {made:?}", folder.display()));
        }
    }
    let outside: PathBuf = folder.parent().unwrap_or(folder).join("picture-route-outside.png");
    std::fs::write(&outside, &pictures[0].bytes).map_err(|e| failed("the link's target", e))?;
    if std::fs::symlink_metadata(folder.join(&link)).is_err() {
        std::os::unix::fs::symlink(&outside, folder.join(&link)).map_err(|e| failed("a link", e))?;
    }
    Ok(Planted { pictures, absent, folder: folder_name, fifo, link })
}

impl Planted {
    /// The request target for `target`, and the planted picture it names, if any.
    fn path(&self, target: Target) -> (String, Option<&Picture>) {
        let png = &self.pictures[0].name;
        let (hash, _) = png.split_once('.').unwrap_or((png, ""));
        let name = match target {
            Target::Planted(format) => {
                let found = self.pictures.iter().find(|p| p.format == format);
                return (format!("/tool-media/{}", found.map_or("", |p| p.name.as_str())), found);
            }
            Target::Absent => self.absent.clone(),
            Target::Folder => self.folder.clone(),
            Target::Fifo => self.fifo.clone(),
            Target::Link => self.link.clone(),
            Target::Malformed(how) => match how {
                Malformed::UpperHex => format!("{}.png", hash.to_uppercase()),
                Malformed::Short => format!("{}.png", &hash[1..]),
                Malformed::Long => format!("{hash}0.png"),
                Malformed::OtherExtension => format!("{hash}.gif"),
                Malformed::UpperExtension => format!("{hash}.PNG"),
                Malformed::Trailing => format!("{png}x"),
                Malformed::PercentEncoded => format!("%{:02X}{}", hash.as_bytes()[0], &png[1..]),
                Malformed::DotDot => format!("..%2F{png}"),
            },
        };
        (format!("/tool-media/{name}"), None)
    }
}

fn mime(format: PictureFormat) -> &'static str {
    match format {
        PictureFormat::Jpeg => "image/jpeg",
        PictureFormat::Webp => "image/webp",
        _ => "image/png",
    }
}

/// Before the generated requests: a plain `GET` with the key of each name planted — each picture, the
/// name with no file, the folder, the FIFO, the link — held to the model, so each is asked for in every
/// run whatever the draw (the 2 MiB PNG read whole among them).
pub async fn each_name_once(http: &Http, planted: &Planted) -> Result<(), String> {
    let targets =
        FORMATS.map(Target::Planted).into_iter().chain([Target::Absent, Target::Folder, Target::Fifo, Target::Link]);
    for target in targets {
        let request = PictureRequest { head: false, target, key: Key::Bearer("Bearer"), condition: Condition::Absent };
        let (path, _) = planted.path(target);
        let what = match target {
            Target::Planted(format) => format!("the planted {format:?} picture"),
            Target::Absent => "a well-formed name with no file".into(),
            Target::Folder => "a folder under a well-formed name".into(),
            Target::Fifo => "a FIFO under a well-formed name".into(),
            _ => "a link under a well-formed name".into(),
        };
        check(http.clone(), planted.clone(), request).await.map_err(|e| format!("GET {path} ({what}): {e}"))?;
    }
    Ok(())
}

/// Sends `request` and holds the answer to the model.
pub async fn check(http: Http, planted: Planted, request: PictureRequest) -> Result<(), String> {
    let key = http.key().unwrap_or_default().to_string();
    let (target, found) = planted.path(request.target);
    let method = if request.head { Method::HEAD } else { Method::GET };
    let mut call = http.call(method, &target).without_key();
    call = match request.key {
        Key::Bearer(scheme) => call.header("authorization", format!("{scheme} {key}").as_bytes()),
        Key::XApiKey => call.header("x-api-key", key.as_bytes()),
        Key::XApiKeyBesideBareBearer => call.header("authorization", b"Bearer").header("x-api-key", key.as_bytes()),
        Key::Missing => call,
        Key::WrongBearer => call.header("authorization", format!("Bearer not-{key}").as_bytes()),
        Key::WrongXApiKey => call.header("x-api-key", format!("not-{key}").as_bytes()),
        Key::PrefixBearer => {
            let prefix: String = key.chars().take(key.chars().count().saturating_sub(1)).collect();
            call.header("authorization", format!("Bearer {prefix}").as_bytes())
        }
    };
    let hash = found.map(|p| sha256(&p.bytes)).unwrap_or_else(|| "0".repeat(64));
    if let Some(tag) = request.condition.header(&hash) {
        call = call.header("if-none-match", tag.as_bytes());
    }
    let reply = call.send().await.map_err(|e| e.to_string())?;
    let body_json = || serde_json::from_slice::<Value>(&reply.body).ok();
    let (status, body): (u16, Option<Value>) = if !request.key.accepted() {
        (401, Some(json!({"error": {"type": "authentication_error", "message": "missing or wrong API key"}})))
    } else if found.is_none() {
        (404, Some(json!({"error": {"type": "not_found", "message": "not found"}})))
    } else if request.condition.matches() {
        (304, None)
    } else {
        (200, None)
    };
    if reply.status != status {
        return Err(format!("status {}, the model says {status}", reply.status));
    }
    if (request.head || status == 304) && !reply.body.is_empty() {
        return Err(format!("{} bytes of body, the model says none (9.5, 9.6)", reply.body.len()));
    }
    if let Some(wanted) = body.filter(|_| !request.head) {
        return if body_json().as_ref() == Some(&wanted) {
            Ok(())
        } else {
            Err(format!("body {:?}, the model says {wanted}", String::from_utf8_lossy(&reply.body)))
        };
    }
    let Some(Picture { format, bytes, .. }) = found.filter(|_| status == 200) else { return Ok(()) };
    let mut wrong = Vec::new();
    if !request.head && reply.body != *bytes {
        wrong.push(format!("{} bytes that are not the planted picture's {}", reply.body.len(), bytes.len()));
    }
    // HEAD's headers are GET's (9.6), Content-Length the picture's too.
    for (header, wanted) in [
        ("content-type", mime(*format).to_string()),
        ("content-length", bytes.len().to_string()),
        ("etag", format!("\"{hash}\"")),
        ("cache-control", "private, max-age=31536000, immutable".to_string()),
        ("x-content-type-options", "nosniff".to_string()),
    ] {
        if reply.header(header).as_deref() != Some(wanted.as_str()) {
            wrong.push(format!("{header}: {:?}, the model says {wanted:?}", reply.header(header)));
        }
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

#[cfg(test)]
mod tests;
