//! Reading a JSON request body within its bounds (SPEC 4.10, 1.11): 408 when it does not arrive in
//! time, 413 over the byte cap and 503 when the shared room is full (each after reading on a bounded
//! part of the rest, so a client still writing gets the answer: [`LINGER_BYTES`], [`LINGER_TIME`]) or over
//! [`MAX_JSON_VALUES`] values, 400 for anything that is not JSON, both in the JSON error shape. Only the
//! top-level fields the route reads are built; the others are skipped without being kept, so an unknown
//! field holding a huge array costs no memory (a `serde_json::Value` costs ~80 bytes an element).

use std::cell::Cell;
use std::fmt;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use http_body_util::BodyExt;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::error::{ApiError, ErrorKind};

/// The most JSON values (every object, array, string, number, boolean and null, at any depth) built
/// from one request's known fields: a bound on the parsed body's memory, far above any real request
/// (a picture is one string).
pub const MAX_JSON_VALUES: usize = 1_000_000;

/// Reads and parses the body, refusing more than `limit` bytes; of a top-level object only the fields
/// named in `keep` are built (the others are checked to be JSON and skipped). The bytes are read into
/// one buffer (sized from `Content-Length` when declared) and take room from `room` (in KiB) while they
/// are read and parsed, so all bodies in flight together stay within it (SPEC 1.11).
pub async fn read_json(
    headers: &HeaderMap,
    body: Body,
    limits: BodyLimits<'_>,
    keep: &[&str],
) -> Result<Value, ApiError> {
    let BodyLimits { limit, timeout, room } = limits;
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    // A client that asked to be told before it sends (`Expect: 100-continue`) waits for the answer.
    let waits = headers.get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if declared.is_some_and(|n| n > limit as u64) {
        if !waits {
            linger(body).await;
        }
        return Err(ApiError::too_large(limit));
    }
    let read = read_within(body, declared.unwrap_or(0) as usize, limit, room, !waits);
    // A body that trickles in is cut off: `timeout` for the whole of it (SPEC 1.11).
    let Ok(read) = tokio::time::timeout(timeout, read).await else {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            ErrorKind::InvalidRequest,
            format!("the request body did not arrive within {} s", timeout.as_secs()),
        ));
    };
    let (bytes, room) = read?;
    if bytes.len() <= PARSE_INLINE_BYTES {
        return parse_bounded(&bytes, keep, MAX_JSON_VALUES);
    }
    // A large body takes a parser for a while (a 100 MB one, ~0.3 s): off the runtime threads, so
    // every other request, `/health` included, goes on being served meanwhile.
    let keep: Vec<String> = keep.iter().map(|k| k.to_string()).collect();
    let parsed = tokio::task::spawn_blocking(move || {
        let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
        parse_bounded(&bytes, &keep, MAX_JSON_VALUES)
    })
    .await;
    drop(room);
    parsed.unwrap_or_else(|_| Err(ApiError::malformed("the body could not be parsed")))
}

/// Bodies up to this size are parsed where they were read; larger ones on the blocking pool.
const PARSE_INLINE_BYTES: usize = 256 * 1024;

/// The bounds on one request body.
#[derive(Clone, Copy)]
pub struct BodyLimits<'a> {
    /// The most bytes one body may have (`max_body_mib`).
    pub limit: usize,
    /// How long the whole body may take to arrive (`body_timeout_s`).
    pub timeout: std::time::Duration,
    /// Room for all bodies in flight, in KiB (as large as `limit`).
    pub room: &'a Semaphore,
}

/// How many KiB of room `bytes` bytes take.
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)
}

/// A body's first bytes take no room: every request may send this much whatever others do (so small
/// requests are never refused for room; with `max_connections` clients, at most 64 MiB in all).
const FREE_BYTES: usize = 64 * 1024;

/// Reads the body into one buffer of at most `limit` bytes (`declared` reserved up to [`FREE_BYTES`]). Beyond
/// [`FREE_BYTES`] every byte takes room; a body that finds no room is refused at once with 503 (its
/// rest drained as a 413's is), so no request waits on another and the bodies in flight never hold more
/// than the room together.
async fn read_within(
    mut body: Body,
    declared: usize,
    limit: usize,
    room: &Semaphore,
    lingers: bool,
) -> Result<(Vec<u8>, Option<SemaphorePermit<'_>>), ApiError> {
    let mut held: Option<SemaphorePermit<'_>> = None;
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ApiError::malformed("the body could not be read"))?;
        let Ok(chunk) = frame.into_data() else { continue };
        let total = bytes.len() + chunk.len();
        if total > limit {
            drop((bytes, held));
            if lingers {
                linger(body).await;
            }
            return Err(ApiError::too_large(limit));
        }
        if total > FREE_BYTES {
            let wanted = kib(total);
            let have = held.as_ref().map_or(0, |h| h.num_permits() as u32);
            if wanted > have {
                let Ok(more) = room.try_acquire_many(wanted - have) else {
                    // Refused at once, but the rest is read on and dropped (taking no room) before the
                    // 503 goes out, as for the 413: a client still writing gets the answer, not a reset.
                    drop((bytes, held));
                    if lingers {
                        linger(body).await;
                    }
                    return Err(busy());
                };
                match &mut held {
                    Some(held) => held.merge(more),
                    None => held = Some(more),
                }
            }
        }
        if bytes.capacity() == 0 {
            // The declared length up to the free part at once; past it the buffer grows with the bytes
            // that have room (a declared length alone reserves nothing more: a client that declares
            // 256 MiB and sends one byte must not make the server hold 256 MiB of address space).
            bytes.reserve(declared.min(FREE_BYTES).max(chunk.len()));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, held))
}

/// The most of a refused body read and dropped before the 413 goes out.
pub const LINGER_BYTES: usize = 16 << 20;
/// The longest the rest of a refused body is waited for.
pub const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Reads the rest of a refused body and drops it, up to [`LINGER_BYTES`] or [`LINGER_TIME`], as
/// nginx's lingering close does. A client that writes its whole body before it reads (Python's
/// `urllib`, most simple clients) would otherwise be closed on while it writes and see "broken pipe"
/// or a reset instead of the 413 (SPEC 4.10). Nothing is kept; past either bound the answer goes out
/// anyway.
async fn linger(mut body: Body) {
    let drained = async {
        let mut read = 0usize;
        while read < LINGER_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, |d| d.len()),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drained).await;
}

fn busy() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Server,
        "the server is reading other large requests: try again in a moment",
    )
}

/// Parses `bytes` as JSON, building only the top-level fields in `keep`, at most `max_values` values.
pub fn parse_bounded(bytes: &[u8], keep: &[&str], max_values: usize) -> Result<Value, ApiError> {
    let left = Cell::new(max_values);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let parsed = Counted { left: &left, keep: Some(keep) }.deserialize(&mut deserializer).and_then(|value| {
        deserializer.end()?;
        Ok(value)
    });
    parsed.map_err(|error| {
        if left.get() == 0 && error.to_string().starts_with(TOO_MANY) {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorKind::InvalidRequest,
                format!("the request holds more than {max_values} JSON values"),
            )
        } else {
            ApiError::malformed(format!("not valid JSON: {error}"))
        }
    })
}

const TOO_MANY: &str = "too many JSON values";

/// One value and everything inside it, each counted against the budget in `left`. At the top level
/// (`keep` is set) an object keeps only the fields named in `keep`; the rest are skipped unbuilt.
struct Counted<'a> {
    left: &'a Cell<usize>,
    keep: Option<&'a [&'a str]>,
}

impl<'a> Counted<'a> {
    fn inner(&self) -> Counted<'a> {
        Counted { left: self.left, keep: None }
    }
}

fn take<E: de::Error>(left: &Cell<usize>) -> Result<(), E> {
    match left.get() {
        0 => Err(E::custom(TOO_MANY)),
        n => {
            left.set(n - 1);
            Ok(())
        }
    }
}

impl<'de> DeserializeSeed<'de> for Counted<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counted<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        take(self.left)?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        take(self.left)?;
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        take(self.left)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.inner())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        take(self.left)?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.keep.is_some_and(|keep| !keep.contains(&key.as_str())) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let value = map.next_value_seed(self.inner())?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_top_level_fields_are_skipped_and_known_ones_kept() {
        let body = br#"{"messages": [{"role": "user", "content": "hi"}], "junk": [1, [2, {"a": 3}]], "stream": true}"#;
        let value = parse_bounded(body, &["messages", "stream"], 100).expect("parsed");
        assert_eq!(value, serde_json::json!({"messages": [{"role": "user", "content": "hi"}], "stream": true}));
    }

    #[test]
    fn the_value_budget_is_exact_and_skipped_fields_do_not_count() {
        // {"messages": [1, 2, 3]}: the object, the array and three numbers are 5 values.
        let body = br#"{"messages": [1, 2, 3], "junk": [0, 0, 0, 0, 0, 0, 0, 0]}"#;
        assert!(parse_bounded(body, &["messages"], 5).is_ok());
        let refused = parse_bounded(body, &["messages"], 4).expect_err("over the budget");
        assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(refused.message, "the request holds more than 4 JSON values");
    }

    #[test]
    fn bad_json_is_still_a_400_even_in_a_skipped_field() {
        for body in [&br#"{"junk": [1, 2"#[..], br#"{"messages": []} trailing"#, b"not json"] {
            let refused = parse_bounded(body, &["messages"], 100).expect_err("refused");
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(body));
            assert!(refused.message.starts_with("the request is malformed (not valid JSON"), "{}", refused.message);
        }
    }
}
