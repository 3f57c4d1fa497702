//! The run configuration: one JSON file plus command-line overrides, validated once at startup
//! (SPEC §1). After [`RunConfig::load`] every value is trusted; nothing later re-reads the file.

mod mcp_servers;
pub mod values;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use mcp_servers::{McpServerSpec, McpTransportSpec, servers_from_file};
pub use values::ConfigError;

use crate::api_key::ApiKey;

/// Settings that come from the command line and win over the file (SPEC 1.2).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--host`.
    pub host: Option<String>,
    /// `--port`.
    pub port: Option<u16>,
    /// `--api-key` (may be empty, which is an error).
    pub api_key: Option<String>,
    /// `STRATA_API_KEY` from the environment.
    pub env_api_key: Option<String>,
    /// `STRATA_ALLOWED_HOSTS` from the environment, comma separated.
    pub env_allowed_hosts: Option<String>,
    /// `--script`, repeatable; replaces the configuration's scripts when given.
    pub scripts: Vec<String>,
    /// `--mcp-config FILE`.
    pub mcp_config: Option<PathBuf>,
    /// `--web-dir DIR` (development): the page's files are read from this folder.
    pub web_dir: Option<PathBuf>,
}

/// Why the server refuses to start. Each renders as one line; the binary exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A key holds a value it cannot hold.
    #[error(transparent)]
    Value(#[from] ConfigError),
    /// The configuration file cannot be read or is not JSON.
    #[error("{what} {path}: {reason}")]
    File {
        /// `--config` or `--mcp-config`.
        what: &'static str,
        /// The file named on the command line.
        path: String,
        /// What went wrong, in one line.
        reason: String,
    },
    /// `--api-key`, `STRATA_API_KEY` or `api_key` was given but empty.
    #[error("an API key was given but it is empty")]
    EmptyApiKey,
    /// The vision block asks for something this build cannot do.
    #[error("config {key}={value}: {reason}")]
    Vision {
        /// The key, e.g. `vision.device`.
        key: &'static str,
        /// The value given.
        value: String,
        /// Why it cannot be used.
        reason: String,
    },
}

/// The mock engine's settings (`engine` block; SPEC 4.9).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineSettings {
    /// One script per engine pass; the last one repeats.
    pub scripts: Vec<String>,
    /// A pause after each token, so a client can watch a stream or close it midway.
    pub delay_ms: u64,
    /// Start again at the first script for every request instead of going on across requests.
    pub restart_per_request: bool,
    /// The context window in tokens.
    pub max_context: usize,
    /// Named script lists, used instead of `scripts` when a request's `model` names one.
    pub script_sets: Vec<(String, Vec<String>)>,
}

/// The script of strata-wire C-A2, used when neither the file nor `--script` gives one.
pub const DEFAULT_SCRIPT: &str = "Thinking about it.</think>\n\nHello from the mock engine.";

/// MCP settings (`mcp` block; SPEC 1.5, 5.x).
#[derive(Debug, Clone, PartialEq)]
pub struct McpSettings {
    /// Seconds one `tools/call` may take.
    pub timeout_s: f64,
    /// The cap on a result's text, in characters.
    pub max_result_chars: usize,
    /// Tool rounds per request.
    pub max_rounds: usize,
    /// Seconds for initialize and tools/list.
    pub start_timeout_s: f64,
    /// Cache and show the pictures tools return (seed 000); off by default.
    pub image_results: bool,
    /// Pictures taken from one result (SPEC 8.4; default 4).
    pub max_pictures_per_result: usize,
    /// The largest picture taken, in base64 characters (SPEC 8.4; default 24,000,000).
    pub max_picture_chars: usize,
    /// `tools/list` pages read per server (SPEC 5.2; default 100, as Strata).
    pub max_tool_pages: usize,
    /// Tools kept per server (SPEC 5.2; default 1000).
    pub max_tools_per_server: usize,
    /// Seconds a server whose start failed is left alone before a call tries again (SPEC 5.4; default 10).
    pub retry_failed_s: f64,
}

impl McpSettings {
    /// strata-wire C-F3's defaults, with `image_results` off.
    pub fn defaults() -> Self {
        Self {
            timeout_s: 60.0,
            max_result_chars: 20_000,
            max_rounds: 8,
            start_timeout_s: 120.0,
            image_results: false,
            max_pictures_per_result: crate::media::parts::MAX_PICTURES_PER_CALL,
            max_picture_chars: crate::media::parts::MAX_PICTURE_BASE64,
            max_tool_pages: 100,
            max_tools_per_server: 1000,
            retry_failed_s: 10.0,
        }
    }
}

/// Which code prepares pictures for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisionBackendKind {
    /// Plain Rust: decode and count tokens with the shared grid arithmetic.
    Geometry,
    /// libtorch (cargo feature `torch`).
    Torch,
}

/// Where the torch backend runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisionDevice {
    /// The CPU.
    Cpu,
    /// The first CUDA device.
    Cuda,
}

/// The `vision` block: present means the server has a vision encoder (SPEC 3.1, 12.x).
#[derive(Debug, Clone, PartialEq)]
pub struct VisionSettings {
    /// The backend.
    pub backend: VisionBackendKind,
    /// The device for the torch backend.
    pub device: VisionDevice,
    /// The smallest picture area after resizing, in pixels.
    pub min_pixels: u64,
    /// The largest picture area after resizing, in pixels.
    pub max_pixels: u64,
}

/// Everything the server needs, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The configuration file (the tool-media cache lives beside it).
    pub path: PathBuf,
    /// The model name the server reports.
    pub model: String,
    /// The address to bind.
    pub host: String,
    /// The port to bind (0: any free port).
    pub port: u16,
    /// The API key, when one is required.
    pub api_key: Option<ApiKey>,
    /// Extra Host names accepted without an API key.
    pub allowed_hosts: Vec<String>,
    /// Origins treated as the server's own page.
    pub trusted_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How many client connections are served at once (`max_connections`, default 1024); more are
    /// closed as they arrive.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (`header_timeout_s`, default 10).
    pub header_timeout: std::time::Duration,
    /// How long a client may take to send a request's body (`body_timeout_s`, default 60).
    pub body_timeout: std::time::Duration,
    /// The mock engine.
    pub engine: EngineSettings,
    /// MCP settings.
    pub mcp: McpSettings,
    /// The MCP servers, in the order they were named (a later name wins).
    pub mcp_servers: Vec<McpServerSpec>,
    /// Development only (`--web-dir`): the folder the page's files are read from on every request,
    /// instead of the copies compiled into the binary (so a changed page needs no rebuild).
    pub web_dir: Option<PathBuf>,
    /// The vision encoder, when configured.
    pub vision: Option<VisionSettings>,
}

/// A configuration and the warnings (unknown keys) found while reading it.
#[derive(Debug)]
pub struct Loaded {
    /// The validated configuration.
    pub config: RunConfig,
    /// One line per unknown key; startup goes on.
    pub warnings: Vec<String>,
}

const TOP_KEYS: &[&str] = &[
    "model",
    "api_key",
    "host",
    "port",
    "allowed_hosts",
    "trusted_origins",
    "max_body_mib",
    "max_connections",
    "header_timeout_s",
    "body_timeout_s",
    "engine",
    "mcp",
    "mcp_servers",
    "mcpServers",
    "vision",
];

impl RunConfig {
    /// Reads and validates the file at `path`, then applies `overrides`.
    pub fn load(path: &Path, overrides: &Overrides) -> Result<Loaded, StartupError> {
        let root = read_json_file("--config", path)?;
        Self::from_json(path, &root, overrides)
    }

    /// Validates an already parsed configuration (the file's content) and applies `overrides`.
    pub fn from_json(path: &Path, root: &Value, overrides: &Overrides) -> Result<Loaded, StartupError> {
        let Some(top) = root.as_object() else {
            // SPEC 1.1: a file that is not an object is a file error, naming --config and the path.
            let found = values::show(root);
            let reason = format!("expected a JSON object, found {found}");
            return Err(StartupError::File { what: "--config", path: path.display().to_string(), reason });
        };
        let mut warnings = Vec::new();
        for (key, value) in top {
            if !TOP_KEYS.contains(&key.as_str()) {
                warnings.push(format!("config {key}={}: unknown key, ignored", values::show(value)));
            }
        }
        let model = match top.get("model") {
            Some(v) => values::non_empty_string("model", v)?,
            None => "mock".to_string(),
        };
        let host = match top.get("host") {
            Some(v) => values::non_empty_string("host", v)?,
            None => "127.0.0.1".to_string(),
        };
        let host = overrides.host.clone().unwrap_or(host);
        let port = match top.get("port") {
            Some(v) => values::port("port", v)?,
            None => 8095,
        };
        let port = overrides.port.unwrap_or(port);
        let api_key = api_key_from(overrides, top.get("api_key"))?;
        let mut allowed_hosts = match top.get("allowed_hosts") {
            Some(v) => values::string_list("allowed_hosts", v)?,
            None => Vec::new(),
        };
        if let Some(env) = &overrides.env_allowed_hosts {
            allowed_hosts.extend(env.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string));
        }
        let trusted_origins = match top.get("trusted_origins") {
            Some(v) => values::string_list("trusted_origins", v)?,
            None => Vec::new(),
        };
        let max_body_bytes = match top.get("max_body_mib") {
            Some(v) => (values::positive_integer("max_body_mib", v)?.min(4096) as usize) << 20,
            None => 256 << 20,
        };
        let bounded = |key: &str, default: u64| match top.get(key) {
            Some(v) => values::positive_integer(key, v),
            None => Ok(default),
        };
        let max_connections = bounded("max_connections", 1024)? as usize;
        let header_timeout = std::time::Duration::from_secs(bounded("header_timeout_s", 10)?);
        let body_timeout = std::time::Duration::from_secs(bounded("body_timeout_s", 60)?);
        let mut engine = engine_from(top.get("engine"), &mut warnings)?;
        if !overrides.scripts.is_empty() {
            engine.scripts = overrides.scripts.clone();
        }
        let mcp = mcp_settings_from(top.get("mcp"), &mut warnings)?;
        let mut mcp_servers = mcp_servers::servers_from_config(top)?;
        if let Some(file) = &overrides.mcp_config {
            mcp_servers::merge(&mut mcp_servers, servers_from_file(file)?);
        }
        let vision = vision_from(top.get("vision"), &mut warnings)?;
        let config = RunConfig {
            path: path.to_path_buf(),
            model,
            host,
            port,
            api_key,
            allowed_hosts,
            trusted_origins,
            max_body_bytes,
            max_connections,
            header_timeout,
            body_timeout,
            engine,
            mcp,
            mcp_servers,
            web_dir: overrides.web_dir.clone(),
            vision,
        };
        Ok(Loaded { config, warnings })
    }

    /// The folder of cached tool pictures: `<config-stem>.tool-media/` beside the configuration (SPEC 8.3).
    pub fn media_dir(&self) -> PathBuf {
        let stem = self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "config".into());
        let parent = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        parent.join(format!("{stem}.tool-media"))
    }
}

/// Reads a JSON file, accepting a UTF-8 byte-order mark (SPEC 1.1).
pub fn read_json_file(what: &'static str, path: &Path) -> Result<Value, StartupError> {
    let file_error = |reason: String| StartupError::File { what, path: path.display().to_string(), reason };
    let bytes = std::fs::read(path).map_err(|e| file_error(e.to_string()))?;
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    serde_json::from_slice(text).map_err(|e| file_error(format!("not valid JSON: {e}")))
}

fn api_key_from(overrides: &Overrides, config: Option<&Value>) -> Result<Option<ApiKey>, StartupError> {
    let from_file = match config {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(other) => return Err(ConfigError::new("api_key", other, "expected a string").into()),
    };
    let given = overrides.api_key.clone().or_else(|| overrides.env_api_key.clone()).or(from_file);
    match given.map(|k| k.trim().to_string()) {
        Some(k) if k.is_empty() => Err(StartupError::EmptyApiKey),
        Some(k) => Ok(Some(ApiKey::new(k))),
        None => Ok(None),
    }
}

fn object<'a>(key: &str, value: &'a Value) -> Result<&'a Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| ConfigError::new(key, value, "expected an object"))
}

fn engine_from(block: Option<&Value>, warnings: &mut Vec<String>) -> Result<EngineSettings, ConfigError> {
    let mut engine = EngineSettings {
        scripts: vec![DEFAULT_SCRIPT.to_string()],
        delay_ms: 0,
        restart_per_request: false,
        max_context: 262_144,
        script_sets: Vec::new(),
    };
    let Some(block) = block else { return Ok(engine) };
    for (key, value) in object("engine", block)? {
        let path = format!("engine.{key}");
        match key.as_str() {
            "scripts" => {
                let scripts = values::string_list(&path, value)?;
                if scripts.is_empty() {
                    return Err(ConfigError::new(&path, value, "expected at least one script"));
                }
                engine.scripts = scripts;
            }
            "delay_ms" => engine.delay_ms = values::non_negative_integer(&path, value)?.min(60_000),
            "restart_per_request" => engine.restart_per_request = values::boolean(&path, value)?,
            "max_context" => engine.max_context = values::positive_integer(&path, value)?.min(1 << 30) as usize,
            "script_sets" => {
                let sets = object(&path, value)?;
                for (name, listed) in sets {
                    let set_path = format!("{path}.{name}");
                    let scripts = values::string_list(&set_path, listed)?;
                    if scripts.is_empty() {
                        return Err(ConfigError::new(&set_path, listed, "expected at least one script"));
                    }
                    engine.script_sets.push((name.clone(), scripts));
                }
            }
            _ => warnings.push(format!("config {path}={}: unknown key, ignored", values::show(value))),
        }
    }
    Ok(engine)
}

fn mcp_settings_from(block: Option<&Value>, warnings: &mut Vec<String>) -> Result<McpSettings, ConfigError> {
    let mut mcp = McpSettings::defaults();
    let Some(block) = block else { return Ok(mcp) };
    for (key, value) in object("mcp", block)? {
        let path = format!("mcp.{key}");
        match key.as_str() {
            "timeout_s" => mcp.timeout_s = values::seconds(&path, value)?,
            "start_timeout_s" => mcp.start_timeout_s = values::seconds(&path, value)?,
            "retry_failed_s" => mcp.retry_failed_s = values::seconds(&path, value)?,
            "max_result_chars" => mcp.max_result_chars = values::positive_integer(&path, value)? as usize,
            "max_rounds" => mcp.max_rounds = values::positive_integer(&path, value)?.min(1000) as usize,
            "image_results" => mcp.image_results = values::boolean(&path, value)?,
            "max_pictures_per_result" => {
                mcp.max_pictures_per_result = values::positive_integer(&path, value)?.min(10_000) as usize;
            }
            "max_picture_chars" => {
                mcp.max_picture_chars = values::positive_integer(&path, value)?.min(1 << 32) as usize;
            }
            "max_tool_pages" => mcp.max_tool_pages = values::positive_integer(&path, value)?.min(1 << 20) as usize,
            "max_tools_per_server" => {
                mcp.max_tools_per_server = values::positive_integer(&path, value)?.min(1 << 24) as usize;
            }
            _ => warnings.push(format!("config {path}={}: unknown key, ignored", values::show(value))),
        }
    }
    Ok(mcp)
}

fn vision_from(block: Option<&Value>, warnings: &mut Vec<String>) -> Result<Option<VisionSettings>, StartupError> {
    let Some(block) = block else { return Ok(None) };
    if block.is_null() {
        return Ok(None);
    }
    let mut vision = VisionSettings {
        backend: VisionBackendKind::Geometry,
        device: VisionDevice::Cpu,
        min_pixels: 56 * 56,
        max_pixels: 28 * 28 * 1280,
    };
    for (key, value) in object("vision", block)? {
        let path = format!("vision.{key}");
        match key.as_str() {
            "backend" => {
                vision.backend = match values::one_of(&path, value, &["geometry", "torch"])? {
                    "torch" => VisionBackendKind::Torch,
                    _ => VisionBackendKind::Geometry,
                }
            }
            "device" => {
                vision.device = match values::one_of(&path, value, &["cpu", "cuda"])? {
                    "cuda" => VisionDevice::Cuda,
                    _ => VisionDevice::Cpu,
                }
            }
            "min_pixels" => vision.min_pixels = values::positive_integer(&path, value)?,
            "max_pixels" => vision.max_pixels = values::positive_integer(&path, value)?,
            _ => warnings.push(format!("config {path}={}: unknown key, ignored", values::show(value))),
        }
    }
    if vision.max_pixels < vision.min_pixels || vision.max_pixels < 28 * 28 {
        return Err(ConfigError::new(
            "vision.max_pixels",
            &Value::from(vision.max_pixels),
            "expected at least vision.min_pixels and at least 784",
        )
        .into());
    }
    Ok(Some(vision))
}

impl VisionBackendKind {
    /// Its name in the configuration and in `/v1/status` (SPEC 1.10, 3.3).
    pub fn name(self) -> &'static str {
        match self {
            Self::Geometry => "geometry",
            Self::Torch => "torch",
        }
    }
}

impl VisionDevice {
    /// Its name in the configuration and in `/v1/status` (SPEC 1.10, 3.3).
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
        }
    }
}
