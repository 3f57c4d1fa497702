//! The chat completion route's machinery: the request read, the prompt prepared, the turn run (engine
//! passes and MCP rounds), and the answer rendered streamed or whole. The messages themselves are
//! [`crate::messages`].

pub mod collect;
pub mod events;
pub mod output;
pub mod prepare;
pub mod request;
pub mod sse;
pub mod tools;
pub mod turn;
pub mod turn_event;
