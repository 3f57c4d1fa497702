//! vision-mcp under attack: its tool is asked, over stdio, to look at hostile pictures in its folder —
//! decompression bombs, animations and a hard link to a file outside the folder. Each picture gets a
//! fresh process, so its peak RSS and its growth over the idle process belong to that picture alone.
//! A refusal never reaches OpenAI, so no key or network is needed.

use std::path::Path;
use std::process::Stdio;

use fixtures::bombs;
use fixtures::images::{PictureFormat, picture, png_claiming};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;

use super::bounds::VISION_GROWTH_MIB;

/// What one hostile picture did to vision-mcp.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VisionResult {
    /// The picture's file name (it says what it is).
    pub picture: String,
    /// The tool's answer (an error, when refused).
    pub answer: String,
    /// Whether the tool refused it (`isError`).
    pub refused: bool,
    /// The process's peak RSS, in MiB.
    pub peak_rss_mib: u64,
    /// How far the peak rose over the idle process's RSS, in MiB.
    pub growth_mib: u64,
    /// Refused, the process alive, and the growth within the bound.
    pub survived: bool,
}

/// The hostile pictures, by file name.
fn pictures() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("png-bomb-20000x20000.png", bombs::png_bomb(20_000)),
        ("png-claiming-60000x60000.png", png_claiming(60_000, 60_000)),
        ("gif-frame-bomb-65535x65535.gif", bombs::gif_bomb()),
        ("animated.png", bombs::apng()),
        ("animated.webp", bombs::animated_webp()),
    ]
}

/// Why the vision-mcp run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VisionRunError {
    /// The folder of hostile pictures could not be written.
    #[error("the picture folder could not be written: {0}")]
    Folder(#[from] std::io::Error),
    /// vision-mcp could not be started.
    #[error("could not start vision-mcp: {0}")]
    Start(String),
    /// vision-mcp did not complete `initialize`.
    #[error("vision-mcp did not initialize: {0}")]
    Initialize(String),
}

/// Runs every hostile picture against the vision-mcp binary at `binary`.
pub async fn run(binary: &Path) -> Result<Vec<VisionResult>, VisionRunError> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("images");
    std::fs::create_dir(&root)?;
    let mut names = Vec::new();
    for (name, bytes) in pictures() {
        std::fs::write(root.join(name), bytes)?;
        names.push(name.to_string());
    }
    let outside = dir.path().join("secret.png");
    std::fs::write(&outside, picture(PictureFormat::Png, 12, 12, 3))?;
    std::fs::hard_link(&outside, root.join("hard-link-to-outside.png"))?;
    names.push("hard-link-to-outside.png".into());
    let mut results = Vec::new();
    for name in names {
        results.push(one(binary, dir.path(), &root, &name).await?);
    }
    Ok(results)
}

async fn one(binary: &Path, dir: &Path, root: &Path, name: &str) -> Result<VisionResult, VisionRunError> {
    let mut command = tokio::process::Command::new(binary);
    command
        .env_clear()
        .env("OPENAI_API_KEY", "sk-attack-run-never-sent")
        .env("VISION_IMAGE_ROOT", root)
        .env("VISION_USAGE_DB", dir.join("usage.sqlite3"))
        .stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).map_err(|e| VisionRunError::Start(e.to_string()))?;
    let pid = transport.id().ok_or_else(|| VisionRunError::Start("it has no pid".into()))?;
    let client = ClientConfig::new(ClientCapabilities::default(), Implementation::new("mediacheck-attack", "1"));
    let service = client.serve(transport).await.map_err(|e| VisionRunError::Initialize(e.to_string()))?;
    let idle = memory_kib(pid, "VmRSS:").unwrap_or(0);
    let mut arguments = serde_json::Map::new();
    arguments.insert("image".into(), name.into());
    arguments.insert("prompt".into(), "What is in this picture?".into());
    let call = CallToolRequestParams::new("analyze_image").with_arguments(arguments);
    let answered = service.peer().call_tool(call).await;
    let peak = memory_kib(pid, "VmHWM:").unwrap_or(0);
    let (answer, refused) = match &answered {
        Ok(result) => {
            let text: Vec<String> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
            (text.join(" "), result.is_error == Some(true))
        }
        Err(error) => (format!("the call failed: {error}"), false),
    };
    let alive = answered.is_ok() && service.peer().list_all_tools().await.is_ok();
    let _ = service.cancel().await;
    let growth_mib = peak.saturating_sub(idle).div_ceil(1024);
    Ok(VisionResult {
        picture: name.into(),
        answer,
        refused,
        peak_rss_mib: peak.div_ceil(1024),
        growth_mib,
        survived: refused && alive && growth_mib <= VISION_GROWTH_MIB,
    })
}

fn memory_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix(field))?.split_whitespace().next()?.parse().ok()
}
