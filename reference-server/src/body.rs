//! Reading a JSON request body within its bounds (SPEC 4.10, 1.11): 408 when it does not arrive in
//! time, 413 over the byte cap or over
//! [`MAX_JSON_VALUES`] values, 400 for anything that is not JSON, both in the JSON error shape. Only the
//! top-level fields the route reads are built; the others are skipped without being kept, so an unknown
//! field holding a huge array costs no memory (a `serde_json::Value` costs ~80 bytes an element).

use std::cell::Cell;
use std::fmt;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The most JSON values (every object, array, string, number, boolean and null, at any depth) built
/// from one request's known fields: a bound on the parsed body's memory, far above any real request
/// (a picture is one string).
pub const MAX_JSON_VALUES: usize = 1_000_000;

/// Reads and parses the body, refusing more than `limit` bytes; of a top-level object only the fields
/// named in `keep` are built (the others are checked to be JSON and skipped).
pub async fn read_json(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    timeout: std::time::Duration,
    keep: &[&str],
) -> Result<Value, ApiError> {
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::too_large(limit));
    }
    // A body that trickles in is cut off: `timeout` for the whole of it (SPEC 1.11).
    let Ok(collected) = tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await else {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            format!("the request body did not arrive within {} s", timeout.as_secs()),
        ));
    };
    let bytes = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => return Err(ApiError::too_large(limit)),
        Err(_) => return Err(ApiError::malformed("the body could not be read")),
    };
    parse_bounded(&bytes, keep, MAX_JSON_VALUES)
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
                "invalid_request_error",
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
