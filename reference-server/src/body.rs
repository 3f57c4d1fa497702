//! Reading a JSON request body within the configured size cap (SPEC 4.10): 413 over the cap, 400 for
//! anything that is not JSON, both in the JSON error shape.

use axum::body::Body;
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;

use crate::error::ApiError;

/// Reads and parses the body, refusing more than `limit` bytes.
pub async fn read_json(headers: &HeaderMap, body: Body, limit: usize) -> Result<Value, ApiError> {
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::too_large(limit));
    }
    let bytes = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => return Err(ApiError::too_large(limit)),
        Err(_) => return Err(ApiError::malformed("the body could not be read")),
    };
    serde_json::from_slice(&bytes).map_err(|e| ApiError::malformed(format!("not valid JSON: {e}")))
}
