//! Typed readers for JSON configuration values. Each reader either returns the value or a
//! [`ConfigError`] that names the key and shows the value, so every bad setting is one clear line.

use serde_json::Value;

/// A configuration value that cannot be used. Rendered as one line:
/// `config <key>=<value>: <what was expected>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config {key}={value}: {expected}")]
pub struct ConfigError {
    /// The dotted key, e.g. `mcp.image_results`.
    pub key: String,
    /// The value as compact JSON, cut to a readable length.
    pub value: String,
    /// What the key needs.
    pub expected: String,
}

impl ConfigError {
    /// An error for `key` holding `value`.
    pub fn new(key: &str, value: &Value, expected: impl Into<String>) -> Self {
        // A value at `api_key`, `….env` or `….headers` is itself a secret: none of its strings show.
        let secret = matches!(key.rsplit('.').next(), Some("api_key" | "env" | "headers"));
        let value = if secret { show(&strings_hidden(value)) } else { show(value) };
        Self { key: key.to_string(), value, expected: expected.into() }
    }
}

/// Compact JSON of a value, cut at 120 characters so a huge value cannot flood the terminal.
pub fn show(value: &Value) -> String {
    let text = redacted(value).to_string();
    if text.chars().count() <= 120 {
        return text;
    }
    let cut: String = text.chars().take(117).collect();
    format!("{cut}...")
}

/// `value` with every secret-bearing string replaced by `"***"`: every string under a `headers`,
/// `env` or `api_key` key, whatever its shape (an object, a list, a string) and at any depth. Other values are kept, so the wrong
/// one still shows.
pub fn redacted(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, inner)| {
                    // Whatever shape it has (an object, a list, a bare string), nothing under these
                    // keys shows a string: a token written as `["Authorization: Bearer …"]` is one.
                    let secret = matches!(key.as_str(), "api_key" | "headers" | "env");
                    let shown = if secret { strings_hidden(inner) } else { redacted(inner) };
                    (key.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

/// `value` with every string in it, at any depth, replaced by `"***"` (object keys stay).
fn strings_hidden(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::String("***".into()),
        Value::Object(object) => Value::Object(object.iter().map(|(k, v)| (k.clone(), strings_hidden(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(strings_hidden).collect()),
        other => other.clone(),
    }
}

/// A JSON boolean, nothing else (`"true"`, `1` and `null` are refused).
pub fn boolean(key: &str, value: &Value) -> Result<bool, ConfigError> {
    value.as_bool().ok_or_else(|| ConfigError::new(key, value, "expected true or false (a JSON boolean)"))
}

/// A number of seconds greater than 0; booleans are refused (strata-wire C-F5).
pub fn seconds(key: &str, value: &Value) -> Result<f64, ConfigError> {
    match value.as_f64() {
        Some(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(ConfigError::new(key, value, "expected a number of seconds > 0")),
    }
}

/// 2^53: up to here a JSON number written with a fraction or an exponent holds every integer exactly
/// (SPEC 1.5); past it, one such value stands for several integers, so it is refused.
const EXACT_FLOAT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// An integer-valued number of at least 1 (`1.5` and booleans are refused; strata-wire C-F6).
pub fn positive_integer(key: &str, value: &Value) -> Result<u64, ConfigError> {
    let whole = value.as_u64().or_else(|| {
        value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= EXACT_FLOAT_INTEGERS).map(|f| f as u64)
    });
    match whole {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(ConfigError::new(key, value, "expected a positive integer")),
    }
}

/// An integer-valued number of at least 0 (`2.0` is 2, as for [`positive_integer`]; `1.5` and booleans
/// are refused).
pub fn non_negative_integer(key: &str, value: &Value) -> Result<u64, ConfigError> {
    value
        .as_u64()
        .or_else(|| {
            value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= EXACT_FLOAT_INTEGERS).map(|f| f as u64)
        })
        .ok_or_else(|| ConfigError::new(key, value, "expected an integer >= 0"))
}

/// A TCP port, 0 to 65535 (0 asks the system for a free one).
pub fn port(key: &str, value: &Value) -> Result<u16, ConfigError> {
    value
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(|| ConfigError::new(key, value, "expected a port number from 0 to 65535"))
}

/// A string that is not empty after trimming.
pub fn non_empty_string(key: &str, value: &Value) -> Result<String, ConfigError> {
    match value.as_str().map(str::trim) {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(ConfigError::new(key, value, "expected a non-empty string")),
    }
}

/// A list of strings.
pub fn string_list(key: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
    let fail = || ConfigError::new(key, value, "expected a list of strings");
    let items = value.as_array().ok_or_else(fail)?;
    items.iter().map(|item| item.as_str().map(str::to_string).ok_or_else(fail)).collect()
}

/// An object whose values are all strings (environment variables, HTTP headers).
pub fn string_map(key: &str, value: &Value) -> Result<Vec<(String, String)>, ConfigError> {
    // Headers and environment variables carry tokens: the error shows the names and the wrong value,
    // every string as "***" (SPEC 1.3).
    let fail = || ConfigError::new(key, value, "expected an object of strings");
    let object = value.as_object().ok_or_else(fail)?;
    object.iter().map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())).ok_or_else(fail)).collect()
}

/// One of a fixed set of words.
pub fn one_of(key: &str, value: &Value, words: &[&'static str]) -> Result<&'static str, ConfigError> {
    let found = value.as_str().and_then(|s| words.iter().find(|w| **w == s));
    found.copied().ok_or_else(|| ConfigError::new(key, value, format!("expected one of {}", words.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_in_headers_env_and_api_key_are_never_shown() {
        let entry = json!({"url": "u", "type": "sse", "headers": {"Authorization": "Bearer T0KEN", "X": 1}});
        assert_eq!(show(&entry), r#"{"url":"u","type":"sse","headers":{"Authorization":"***","X":1}}"#);
        let err =
            string_map("mcp_servers.x.env", &json!({"OPENAI_API_KEY": "sk-S3CRET", "N": 2})).expect_err("refused");
        assert_eq!(err.value, r#"{"OPENAI_API_KEY":"***","N":2}"#);
        let err = string_map("mcp_servers.x.headers", &json!("Bearer T0KEN")).expect_err("refused");
        assert_eq!(err.value, r#""***""#);
        assert_eq!(show(&json!({"api_key": "k3y", "port": 1})), r#"{"api_key":"***","port":1}"#);
        // At any depth: a nested object or a list under env, headers or api_key shows no string.
        let err = string_map("mcp_servers.x.env", &json!({"A": {"b": "N3STED"}, "L": ["L1ST"]})).expect_err("refused");
        assert_eq!(err.value, r#"{"A":{"b":"***"},"L":["***"]}"#);
        assert_eq!(show(&json!({"api_key": ["k3y", 2]})), r#"{"api_key":["***",2]}"#);
        assert_eq!(ConfigError::new("api_key", &json!(["k3y"]), "a string").value, r#"["***"]"#);
        assert_eq!(ConfigError::new("mcp_servers.env.command", &json!("c"), "x").value, r#""c""#);
        assert_eq!(show(&json!({"x": {"env": {"A": {"b": "s"}}}})), r#"{"x":{"env":{"A":{"b":"***"}}}}"#);
        // Whatever the shape under headers or env: a list of strings or objects, a bare string.
        let entry = json!({"type": "sse", "headers": ["Authorization: Bearer T0KEN", {"k": "T0KEN", "n": 1}]});
        assert_eq!(show(&entry), r#"{"type":"sse","headers":["***",{"k":"***","n":1}]}"#);
        assert_eq!(show(&json!({"headers": "Bearer T0KEN", "env": ["A=T0KEN"]})), r#"{"headers":"***","env":["***"]}"#);
    }

    #[test]
    fn integer_valued_numbers_are_integers_and_fractions_are_not() {
        assert_eq!(non_negative_integer("engine.delay_ms", &json!(2.0)).ok(), Some(2));
        assert_eq!(non_negative_integer("engine.delay_ms", &json!(0)).ok(), Some(0));
        for bad in [json!(1.5), json!(-1), json!(-0.0001), json!(true), json!("2")] {
            assert!(non_negative_integer("engine.delay_ms", &bad).is_err(), "{bad}");
        }
        assert_eq!(positive_integer("mcp.max_rounds", &json!(2.0)).ok(), Some(2));
        assert!(positive_integer("mcp.max_rounds", &json!(0)).is_err());
    }

    #[test]
    fn boolean_refuses_strings_numbers_and_null() {
        for bad in [json!("true"), json!(1), json!(null)] {
            let err = boolean("mcp.image_results", &bad).expect_err("refused");
            assert_eq!(err.key, "mcp.image_results");
            assert!(err.to_string().starts_with(&format!("config mcp.image_results={bad}: ")));
        }
        assert_eq!(boolean("k", &json!(false)), Ok(false));
    }

    #[test]
    fn positive_integer_refuses_fractions_booleans_and_zero() {
        for bad in [json!(1.5), json!(true), json!(0), json!(-3), json!("4")] {
            assert!(positive_integer("mcp.max_rounds", &bad).is_err(), "{bad}");
        }
        assert_eq!(positive_integer("k", &json!(3.0)), Ok(3));
        assert_eq!(positive_integer("k", &json!(7)), Ok(7));
    }

    #[test]
    fn seconds_refuse_zero_and_booleans() {
        for bad in [json!(0), json!(false), json!(-1.0), json!("5")] {
            assert!(seconds("mcp.timeout_s", &bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("k", &json!(1.5)), Ok(1.5));
    }

    #[test]
    fn a_huge_value_is_cut_in_the_message() {
        let long = json!("x".repeat(1000));
        let err = boolean("k", &long).expect_err("refused");
        assert!(err.value.len() < 130);
    }
}
