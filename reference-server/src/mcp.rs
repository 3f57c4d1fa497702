//! MCP: the hub that connects to the configured servers through the official SDK (rmcp), the names
//! their tools get, and the text a result becomes.

pub mod connection;
pub mod hub;
pub mod naming;
pub mod result_text;

pub use hub::{CallOutcome, Hub, OfferedTool};
