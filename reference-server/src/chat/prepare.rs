//! Turning a conversation into the engine's prompt (SPEC 4.7, 4.8, §10–§12): pictures lifted out of
//! tool text, references resolved inside the cache, every picture measured by the vision backend (or
//! noted as omitted), the template applied, the context checked. Requests are never truncated.

use std::sync::Arc;

use base64::Engine;

use crate::error::ApiError;
use crate::lift::{MAX_PICTURES, Piece, lift_at_most};
use crate::media::name::parse_reference;
use crate::messages::{ImageSource, Message, Part, Role, ToolSpec};
use crate::state::AppState;
use crate::template;
use crate::vision::{Embeddings, PictureError};

/// Tokens kept free between the prompt and the end of the context (strata-wire C-A5).
pub const CONTEXT_SLACK: usize = 8;

/// Why a picture is left out of the prompt: the `[image omitted: …]` note in a tool message, a 400's
/// message in any other (SPEC 10.3, 12.3, strata-wire C-E1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Omitted {
    /// The server has no vision encoder.
    #[error("this server has no image encoder")]
    NoEncoder,
    /// A reference whose file is gone.
    #[error("the picture is no longer in the cache")]
    Missing,
    /// A reference while tool pictures are off.
    #[error("tool pictures are switched off")]
    SwitchedOff,
    /// A reference while no MCP server is configured.
    #[error("MCP is not configured")]
    NoMcp,
    /// An image URL or a path: never fetched, never read.
    #[error("image URLs and file paths are not read by this server")]
    NotRead,
    /// A malformed reference (refused before; kept for completeness).
    #[error("the reference is malformed")]
    MalformedReference,
    /// A `data:` URL that is not base64.
    #[error("the image's data: URL could not be read (it is not base64)")]
    DataNotBase64,
    /// A `data:` URL whose base64 does not decode.
    #[error("the image's data: URL could not be read ({0})")]
    DataUndecodable(String),
    /// Past the pictures one request may hold.
    #[error("the request holds more than {MAX_PICTURES_PER_REQUEST} pictures")]
    TooMany,
    /// The vision backend could not prepare it.
    #[error(transparent)]
    Picture(#[from] PictureError),
}

/// A prompt ready for the engine.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The prompt ids.
    pub ids: Arc<Vec<u32>>,
    /// The most tokens this pass may produce.
    pub max_new: usize,
    /// Pictures that reached the vision path.
    pub pictures: usize,
    /// Their embeddings, in prompt order, when the backend computes them.
    pub embeddings: Vec<Arc<Embeddings>>,
}

/// [`prepare`] on Tokio's blocking pool: lifting, base64 decoding, cache reads and the vision encoder
/// are CPU and disk work that would otherwise hold a runtime thread, and on two cores two large
/// requests would stall every route, `/health` included. The messages are moved in and handed back.
pub async fn prepare_blocking(
    state: Arc<AppState>,
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    max_tokens: Option<usize>,
) -> (Vec<Message>, Result<Prepared, ApiError>) {
    let kept = messages.len();
    let joined = tokio::task::spawn_blocking(move || {
        let prepared = prepare(&state, &messages, &tools, max_tokens);
        (messages, prepared)
    })
    .await;
    match joined {
        Ok(done) => done,
        Err(_) => (Vec::with_capacity(kept), Err(ApiError::internal())),
    }
}

/// Prepares `messages` with `tools` offered.
pub fn prepare(
    state: &AppState,
    messages: &[Message],
    tools: &[ToolSpec],
    max_tokens: Option<usize>,
) -> Result<Prepared, ApiError> {
    // Text that is never lifted is prompt as it stands: when it alone leaves no room, nothing is copied.
    let lifted = |m: &Message| m.role == Role::Tool;
    let fixed_text = messages
        .iter()
        .filter(|m| !lifted(m))
        .flat_map(|m| &m.parts)
        .map(|p| if let Part::Text(text) = p { text.len() } else { 0 })
        .sum::<usize>();
    refuse_early(state, fixed_text)?;
    let mut image_tokens = Vec::new();
    let mut embeddings = Vec::new();
    let mut prepared = Vec::with_capacity(messages.len());
    for message in messages {
        let mut parts = Vec::with_capacity(message.parts.len());
        let lifts = message.role == Role::Tool;
        // SPEC 11.4: the 8 pictures are per message, whatever number of text parts carry them.
        let mut room = MAX_PICTURES;
        for part in &message.parts {
            match part {
                Part::Text(text) if lifts => match lift_at_most(text, room) {
                    None => parts.push(part.clone()),
                    Some(pieces) => {
                        room -= pieces.iter().filter(|p| matches!(p, Piece::Picture(_))).count();
                        for piece in pieces {
                            match piece {
                                Piece::Text(text) => parts.push(Part::Text(text)),
                                Piece::Picture(picture) if state.vision.is_some() => {
                                    let source = ImageSource::Bytes(Arc::new(picture.bytes));
                                    parts.push(picture_part(
                                        state,
                                        message.role,
                                        &source,
                                        &mut image_tokens,
                                        &mut embeddings,
                                    )?);
                                }
                                Piece::Picture(_) => {} // no encoder: the base64 is dropped, the note stays
                            }
                        }
                    }
                },
                Part::Text(_) => parts.push(part.clone()),
                Part::Image(source) => {
                    parts.push(picture_part(state, message.role, source, &mut image_tokens, &mut embeddings)?)
                }
            }
        }
        prepared.push(Message { parts, ..message.clone() });
    }
    // Every text byte is at least one token and every picture its image tokens: when that alone leaves no
    // room, the request is refused before the prompt is rendered (ids take 4 bytes a token).
    let at_least = prepared
        .iter()
        .flat_map(|m| &m.parts)
        .map(|p| if let Part::Text(text) = p { text.len() } else { 0 })
        .sum::<usize>()
        + image_tokens.iter().sum::<usize>();
    refuse_early(state, at_least)?;
    let ids = template::render(&prepared, tools, &image_tokens);
    let max_new = fit(ids.len(), max_tokens, state.config.engine.max_context)?;
    Ok(Prepared { ids: Arc::new(ids), max_new, pictures: image_tokens.len(), embeddings })
}

/// Refuses a request whose prompt is already known to hold at least `at_least` tokens when that leaves
/// no room (SPEC 4.7), before the prompt is rendered.
fn refuse_early(state: &AppState, at_least: usize) -> Result<(), ApiError> {
    let context = state.config.engine.max_context;
    if at_least + CONTEXT_SLACK < context {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "request exceeds the context window: prompt (more than {at_least} tokens) leaves no room to answer in the context ({context}); requests are never truncated"
    )))
}

/// One picture part: a picture of the prompt (its tokens recorded), a note in a tool message, or a
/// refusal.
fn picture_part(
    state: &AppState,
    role: Role,
    source: &ImageSource,
    tokens: &mut Vec<usize>,
    embeddings: &mut Vec<Arc<Embeddings>>,
) -> Result<Part, ApiError> {
    if tokens.len() >= MAX_PICTURES_PER_REQUEST {
        return match role {
            Role::Tool => Ok(Part::Text(format!("[image omitted: {}]", Omitted::TooMany))),
            _ => Err(ApiError::bad_request(Omitted::TooMany.to_string())),
        };
    }
    let outcome = picture_bytes(state, source).and_then(|bytes| {
        let Some(vision) = &state.vision else { return Err(Omitted::NoEncoder) };
        Ok(vision.prepare(&bytes)?)
    });
    match outcome {
        Ok(input) => {
            tokens.push(input.tokens);
            embeddings.extend(input.embeddings);
            Ok(Part::Image(source.clone()))
        }
        Err(reason) if role == Role::Tool => {
            tracing::info!(%reason, "a picture a tool returned was left out of the prompt");
            Ok(Part::Text(format!("[image omitted: {reason}]")))
        }
        Err(Omitted::NoEncoder) => {
            Err(ApiError::bad_request("this server was started without the vision encoder, so it cannot read images"))
        }
        Err(reason) => Err(ApiError::bad_request(reason.to_string())),
    }
}

/// The most pictures one request hands to the vision path (each is decoded and becomes up to
/// `max_pixels / 784` prompt tokens): past it a user's picture is 400, a tool's a note (SPEC 4.13).
pub const MAX_PICTURES_PER_REQUEST: usize = 64;

/// The bytes behind a picture part. A malformed reference, or one outside a tool message, is a 400
/// straight away (SPEC 10.2); the rest are reasons to leave the picture out.
fn picture_bytes(state: &AppState, source: &ImageSource) -> Result<Arc<Vec<u8>>, Omitted> {
    let url = match source {
        ImageSource::Bytes(bytes) => return Ok(Arc::clone(bytes)),
        ImageSource::Url(url) => url,
    };
    if let Some(reference) = parse_reference(url) {
        // check_references has refused malformed ones and ones outside tool messages already.
        let Ok(name) = reference else { return Err(Omitted::MalformedReference) };
        let reason = if state.vision.is_none() {
            Omitted::NoEncoder
        } else if !state.image_results() {
            Omitted::SwitchedOff
        } else if state.config.mcp_servers.is_empty() {
            Omitted::NoMcp
        } else {
            match state.media.read(&name) {
                Ok(bytes) => return Ok(Arc::new(bytes)),
                Err(_) => Omitted::Missing,
            }
        };
        return Err(reason);
    }
    if let Some(data) = url.strip_prefix("data:") {
        let encoded = data.split_once(";base64,").map(|(_, b)| b).ok_or(Omitted::DataNotBase64)?;
        return base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map(Arc::new)
            .map_err(|e| Omitted::DataUndecodable(e.to_string()));
    }
    Err(Omitted::NotRead)
}

/// Refuses malformed `strata-tool-media:` references and references outside tool messages before
/// anything else is done with a request (SPEC 10.2).
pub fn check_references(messages: &[Message]) -> Result<(), ApiError> {
    for message in messages {
        for part in &message.parts {
            let Part::Image(ImageSource::Url(url)) = part else { continue };
            match parse_reference(url) {
                Some(Err(error)) => return Err(ApiError::bad_request(error.to_string())),
                Some(Ok(_)) if message.role != Role::Tool => {
                    return Err(ApiError::bad_request(
                        "strata-tool-media references are accepted only in tool messages",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
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
