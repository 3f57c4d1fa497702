//! Shared helpers: settings over a temp folder, pictures on disk, a wiremock standing in for OpenAI.

#![allow(dead_code, reason = "each test file uses a different part of the helpers")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use vision_mcp::config::Settings;
use vision_mcp::tool::Analyzer;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const KEY: &str = "sk-test-KEY-0123456789";
pub const TOKEN: &str = "token-0123456789-0123456789-0123456789";
pub const PROMPT: &str = "What is in the picture? (PROMPT-CANARY)";

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub settings: Settings,
}

impl Setup {
    pub fn new(per_day: u32, per_10_min: u32) -> Setup {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().join("images");
        std::fs::create_dir(&root).expect("images folder");
        let root_text = root.display().to_string();
        let db_text = dir.path().join("usage.sqlite3").display().to_string();
        let (day, ten) = (per_day.to_string(), per_10_min.to_string());
        let vars = [
            ("OPENAI_API_KEY", KEY),
            ("VISION_MCP_TOKEN", TOKEN),
            ("VISION_IMAGE_ROOT", root_text.as_str()),
            ("VISION_USAGE_DB", db_text.as_str()),
            ("VISION_MAX_CALLS_PER_DAY", day.as_str()),
            ("VISION_MAX_CALLS_PER_10_MIN", ten.as_str()),
            ("VISION_MAX_OUTPUT_TOKENS", "300"),
        ];
        let settings =
            Settings::from_env(|k| vars.iter().find(|(name, _)| *name == k).map(|(_, v)| v.to_string()), true)
                .expect("settings");
        Setup { dir, root, settings }
    }

    pub fn analyzer(&self, base: &str) -> Arc<Analyzer> {
        Analyzer::new(&self.settings, base).expect("analyzer")
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, bytes).expect("picture");
        path
    }
}

/// The formats the tests write (this folder builds on its own, so it makes its own pictures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Webp,
}

/// Deterministic pixels: a dark frame around a gradient tinted by `seed`.
pub fn pixels(width: u32, height: u32, seed: u32) -> image::RgbImage {
    let tint = seed.wrapping_mul(0x9E37_79B1).to_le_bytes();
    image::RgbImage::from_fn(width.max(1), height.max(1), |x, y| {
        if x < 2 || y < 2 || x + 2 >= width || y + 2 >= height {
            return image::Rgb([20, 20, 20]);
        }
        let d = ((x + y) * 255 / (width + height).max(1)) as u8;
        image::Rgb([d ^ tint[0], (255 - d) ^ tint[1], ((x * 255 / width.max(1)) as u8) ^ tint[2]])
    })
}

/// A picture of `width` × `height` in `format`.
pub fn picture(format: Format, width: u32, height: u32, seed: u32) -> Vec<u8> {
    let format = match format {
        Format::Png => image::ImageFormat::Png,
        Format::Jpeg => image::ImageFormat::Jpeg,
        Format::Webp => image::ImageFormat::WebP,
    };
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(pixels(width, height, seed))
        .write_to(&mut std::io::Cursor::new(&mut out), format)
        .expect("encoding an in-memory picture cannot fail");
    out
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    picture(Format::Png, width, height, 1)
}

/// A small SVG (refused: not a raster format).
pub const SVG: &str =
    r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="red"/></svg>"#;

/// Bytes that start like a PNG and are not one.
pub fn corrupt_png() -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..4000u32).map(|i| (i * 31 % 256) as u8));
    bytes
}

/// The Responses API answer the mock gives.
pub fn answer(text: &str, status: &str) -> Value {
    json!({
        "id": "resp_1", "object": "response", "status": status,
        "incomplete_details": if status == "incomplete" { json!({"reason": "max_output_tokens"}) } else { Value::Null },
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 321, "output_tokens": 45, "total_tokens": 366},
    })
}

/// A mock OpenAI that answers `body` to `POST /v1/responses`.
pub async fn openai(body: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

/// The JSON bodies the mock received.
pub async fn requests(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("a JSON body"))
        .collect()
}

pub fn root_text(root: &Path) -> String {
    root.display().to_string()
}

/// The vision-mcp binary for stdio on this setup's folders: only the key and the two paths in its
/// environment (callers add what their case needs, e.g. `RUST_LOG`).
pub fn stdio_command(setup: &Setup) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_vision-mcp"));
    command
        .env_clear()
        .env("OPENAI_API_KEY", KEY)
        .env("VISION_IMAGE_ROOT", &setup.root)
        .env("VISION_USAGE_DB", setup.dir.path().join("usage.sqlite3"));
    command
}

/// The vision-mcp binary over HTTP on 127.0.0.1 port 0 for this setup (killed when dropped), and its
/// ready line, `listening on http://127.0.0.1:PORT/mcp`. Its log goes to [`http_log`].
pub async fn spawn_http(setup: &Setup) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_vision-mcp"))
        .args(["--http", "--port", "0"])
        .env_clear()
        .env("OPENAI_API_KEY", KEY)
        .env("VISION_MCP_TOKEN", TOKEN)
        .env("VISION_IMAGE_ROOT", &setup.root)
        .env("VISION_USAGE_DB", setup.dir.path().join("usage.sqlite3"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(http_log(setup)).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("spawned");
    let mut line = String::new();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("stdout"));
    stdout.read_line(&mut line).await.expect("the ready line");
    (child, line.trim().to_string())
}

/// Where [`spawn_http`] writes the server's log (stderr).
pub fn http_log(setup: &Setup) -> PathBuf {
    setup.dir.path().join("http.log")
}

/// The seed of a generated test: `VISION_GEN_SEED` (decimal, or hex after `0x`), else the clock; odd.
pub fn seed() -> u64 {
    let given = std::env::var("VISION_GEN_SEED").ok().and_then(|s| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse::<u64>().ok(),
    });
    given.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    }) | 1
}

/// A small deterministic generator (xorshift64*) over a seed: the generated tests need no more.
pub struct Draw(pub u64);

impl Draw {
    /// A number below `below`.
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % below
    }
}
