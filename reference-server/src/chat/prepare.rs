//! Turning a conversation into the engine's prompt (SPEC 4.7, 4.8): pictures handled, the template
//! applied, the context checked. Requests are never truncated: a prompt that does not fit is a 400.

use std::sync::Arc;

use super::messages::{Message, Part, Role, ToolSpec};
use crate::error::ApiError;
use crate::state::AppState;
use crate::template;

/// Tokens kept free between the prompt and the end of the context (strata-wire C-A5).
pub const CONTEXT_SLACK: usize = 8;

/// The note that replaces a picture in a tool message the vision path cannot take (strata-wire C-E1).
pub const NO_ENCODER_REASON: &str = "this server has no image encoder";

/// A prompt ready for the engine.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The prompt ids.
    pub ids: Arc<Vec<u32>>,
    /// The most tokens this pass may produce.
    pub max_new: usize,
}

/// Prepares `messages` with `tools` offered.
pub fn prepare(
    state: &AppState,
    messages: &[Message],
    tools: &[ToolSpec],
    max_tokens: Option<usize>,
) -> Result<Prepared, ApiError> {
    let messages = without_unreadable_tool_pictures(messages);
    if messages.iter().any(|m| m.role != Role::Tool && m.has_images()) {
        return Err(ApiError::bad_request(
            "this server was started without the vision encoder, so it cannot read images",
        ));
    }
    let ids = template::render(&messages, tools, &[]);
    let max_new = fit(ids.len(), max_tokens, state.config.engine.max_context)?;
    Ok(Prepared { ids: Arc::new(ids), max_new })
}

/// Checks the context and returns how many tokens may be generated (SPEC 4.7).
pub fn fit(prompt: usize, max_tokens: Option<usize>, context: usize) -> Result<usize, ApiError> {
    if prompt + CONTEXT_SLACK >= context {
        return Err(ApiError::bad_request(format!(
            "request exceeds the context window: prompt ({prompt} tokens) leaves no room to answer in the context ({context}); requests are never truncated"
        )));
    }
    let room = context - prompt - CONTEXT_SLACK;
    match max_tokens {
        Some(wanted) if wanted > room => Err(ApiError::bad_request(format!(
            "request exceeds the context window: prompt ({prompt} tokens) plus max_tokens ({wanted}) exceeds the context ({context})"
        ))),
        Some(wanted) => Ok(wanted),
        None => Ok(room),
    }
}

/// Without a vision encoder, a picture in a tool message becomes `[image omitted: …]` in place
/// (strata-wire C-E1); a user's picture is left for the caller to refuse.
fn without_unreadable_tool_pictures(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|message| {
            if message.role != Role::Tool || !message.has_images() {
                return message.clone();
            }
            let parts = message
                .parts
                .iter()
                .map(|part| match part {
                    Part::Image(_) => {
                        tracing::info!(
                            reason = NO_ENCODER_REASON,
                            "a picture a tool returned was left out of the prompt"
                        );
                        Part::Text(format!("[image omitted: {NO_ENCODER_REASON}]"))
                    }
                    text => text.clone(),
                })
                .collect();
            Message { parts, ..message.clone() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_that_leaves_no_room_is_refused() {
        let err = fit(100, None, 105).expect_err("too long");
        assert!(err.message.contains("leaves no room to answer"));
        let err = fit(100, Some(50), 120).expect_err("too long");
        assert!(err.message.contains("exceeds the context"));
        assert_eq!(fit(100, None, 200), Ok(92));
        assert_eq!(fit(100, Some(10), 200), Ok(10));
    }
}
