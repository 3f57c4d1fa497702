//! # vision-mcp
//!
//! The "external eyes" of seed 003: an MCP server with one tool, `analyze_image(image, prompt,
//! detail)`, that takes one picture from one dedicated folder, checks it, shrinks it to at most 512 px
//! with every byte of metadata dropped, and sends it with the prompt and fixed observation instructions
//! to the OpenAI Responses API, once, within a persistent call budget. The observations come back as
//! text; the model that asked goes on reasoning with them.
//!
//! ## Layout
//!
//! - [`config`]: settings from the environment; a bad value names its variable.
//! - [`images`]: the picture — a relative name resolved inside the folder component by component
//!   without following links, format and size checks from the header, re-encoding.
//! - [`budget`]: the SQLite call budget (per day, per 10 minutes), reserved atomically before a call.
//! - [`openai`]: one Responses API request, no retries, a timeout; errors say nothing of the upstream body.
//! - [`tool`]: `analyze_image` itself: validate, reserve, ask, answer.
//! - [`server`]: the MCP server (rmcp) over stdio, and over Streamable HTTP behind [`guard`]
//!   (Bearer token, Host/Origin, body size).
//! - [`check`]: `vision-mcp check URL`: initialize, tools/list, and optionally one real call.
//!
//! **Invariant:** nothing this server returns or logs contains the API key, the token, a path, the
//! prompt, the picture or an upstream error body; success logs token counts only.

pub mod budget;
pub mod check;
pub mod config;
pub mod guard;
pub mod images;
pub mod openai;
pub mod server;
pub mod tool;
