//! # vision-mcp
//!
//! An MCP server with one tool, `analyze_image`, that sends one picture from one folder to the OpenAI
//! Responses API and returns what is visible as text (seed 003). Not written yet: it comes with the
//! vision-mcp issue.
//!
//! ## Layout
//!
//! (empty until that issue lands)
