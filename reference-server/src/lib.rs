//! # The reference server
//!
//! Strata's wire protocol (see `strata-wire.md` in the shared notes) plus MCP image transport, done the
//! way SPEC.md says. The harness checks other servers against this behaviour; this crate is the one
//! that passes.
//!
//! ## Layout
//!
//! - [`config`]: the run configuration file and command-line overrides, validated once at startup.
//! - [`server`]: state, binding, serving, graceful shutdown — [`server::start`] is what the binary and
//!   the tests call; [`routes::app`] is the router.
//! - [`auth`]: which routes need the key, Host and Origin rules, as one middleware in front of every
//!   route; [`api_key`]: the key itself.
//! - [`routes`]: the route table and one handler file per concern; [`paths`]: every route's path.
//! - [`chat`]: a chat request from JSON to answer — `request` (parse), `prepare` (prompt and context),
//!   `output` (reading the model's stream), `turn` (passes and tool rounds), `tools` (what is offered,
//!   how an MCP round runs), `sse` / `collect` (the two answer shapes).
//! - [`engine`]: the engine trait and the scripted mock engine; [`tokenizer`] and [`template`] turn
//!   messages into byte-token prompts.
//! - [`messages`]: the conversation as the server understands it (roles, parts, tool calls) — a leaf
//!   that chat, the template and the hub share.
//! - [`mcp`]: the hub over the official MCP SDK (rmcp) and tool naming; [`result_text`]: the text a
//!   tool result becomes (a leaf that media and lifting share).
//! - [`media`]: tool pictures — formats by magic bytes, names and references, the content-addressed
//!   cache, a result cut into text and pictures. Served by `routes/media`.
//! - [`lift`]: pictures a client hands back as base64 in tool text, found in one skip scan.
//! - [`vision`]: the vision path — the shared grid geometry and the preparation backends.
//! - [`error`]: the one JSON error type; [`body`]: reading JSON bodies within the size cap.
//! - [`cli`]: the command line the binary and process-starting tools share.
//!   and set in code.
//!
//! **Architecture invariant:** nothing here knows about the harness; the harness knows this crate
//! only as something to start.

pub mod api_key;
pub mod auth;
pub mod body;
pub mod chat;
pub mod cli;
pub mod config;
pub mod engine;
pub mod error;
pub mod lift;
pub mod mcp;
pub mod media;
pub mod messages;
pub mod paths;
pub mod result_text;
pub mod routes;
pub mod server;
pub mod state;
pub mod template;
pub mod tokenizer;
pub mod vision;

pub use routes::app;
pub use server::{RunningServer, serve, start};
