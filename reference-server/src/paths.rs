//! Every route's path, as constants (SPEC §3): a leaf, so the router, the auth rules and media names
//! share them without knowing each other.

/// The chat page.
pub const PAGE: &str = "/";
/// The page's assets, `/web/<name>`.
pub const WEB_PREFIX: &str = "/web/";
/// The router's pattern for them.
pub const WEB_ASSET_ROUTE: &str = "/web/{name}";
/// Health, without auth.
pub const HEALTH: &str = "/health";
/// Health, Strata's second spelling.
pub const API_HEALTH: &str = "/api/health";
/// Both health routes.
pub const HEALTH_ROUTES: [&str; 2] = [HEALTH, API_HEALTH];
/// The model list.
pub const MODELS: &str = "/v1/models";
/// Server status, including the vision geometry.
pub const STATUS: &str = "/v1/status";
/// MCP server and tool status.
pub const MCP: &str = "/mcp";
/// Chat completions.
pub const CHAT: &str = "/v1/chat/completions";
/// Cached tool pictures, `/tool-media/<sha256>.<ext>`.
pub const TOOL_MEDIA_PREFIX: &str = "/tool-media/";
/// The router's pattern for them (axum answers HEAD from the GET route).
pub const TOOL_MEDIA_ROUTE: &str = "/tool-media/{name}";
