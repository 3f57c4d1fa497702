//! MCP: the hub that connects to the configured servers through the official SDK (rmcp), and the names
//! their tools get (the text a result becomes is [`crate::result_text`]).

pub mod connection;
pub mod hub;
pub mod naming;

pub use hub::{CallOutcome, Hub, OfferedTool};
