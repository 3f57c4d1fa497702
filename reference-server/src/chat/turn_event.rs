//! What a turn hands its client (the SSE writer or the whole-answer collector) and its tool rounds:
//! [`TurnEvent`]s, the [`Usage`] they end with, and the [`WrittenCall`]s a pass produced. Apart from
//! `turn` and `tools` so that neither file needs the other's types.

use serde_json::Value;

use super::events::{FinishReason, McpEvent};
use crate::error::ApiError;

/// Something the client will see.
#[derive(Debug, Clone)]
pub enum TurnEvent {
    /// Reasoning text.
    Reasoning(String),
    /// Answer text.
    Content(String),
    /// The model began a call to one of the request's own tools.
    OwnCallHeader {
        /// Position among the own calls.
        index: usize,
        /// The call id.
        id: String,
        /// The function name.
        name: String,
    },
    /// The complete arguments of an own call, as a JSON string.
    OwnCallArguments {
        /// Position among the own calls.
        index: usize,
        /// The arguments.
        arguments: String,
    },
    /// A `strata_mcp` event (start, call, result, limit).
    Mcp(McpEvent),
    /// Nothing new, but the connection is alive (a tool is running).
    KeepAlive,
    /// The end.
    Finished {
        /// stop, length or tool_calls.
        finish_reason: FinishReason,
        /// Token counts.
        usage: Usage,
    },
    /// An error after the answer began.
    Failed(ApiError),
}

/// Token counts of a request (SPEC 4.5, strata-wire C-J7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The last pass's prompt length.
    pub prompt_tokens: usize,
    /// Tokens produced over all passes.
    pub completion_tokens: usize,
}

impl Usage {
    /// The OpenAI `usage` object.
    pub fn json(&self) -> Value {
        serde_json::json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0},
        })
    }
}

/// A call written during a pass.
#[derive(Debug, Clone)]
pub struct WrittenCall {
    /// The call id given to the client.
    pub id: String,
    /// The name as written.
    pub name: String,
    /// The arguments, once the call is complete.
    pub arguments: Option<Value>,
}
