//! Generated run configurations and a model of what SPEC 1.3–1.5 and 1.11 say startup does with them.
//!
//! A configuration sets some of the typed keys — the seconds of `mcp.*_s` (numbers > 0), the counts of
//! `mcp.*` and the connection bounds (integer-valued numbers ≥ 1), `engine.delay_ms` (integer-valued
//! ≥ 0), the booleans `mcp.image_results` and `engine.restart_per_request`, the lists of strings
//! `allowed_hosts` and `trusted_origins` (1.11g) and `engine.scripts` (at least one, 1.11a) — to values
//! of every JSON kind, each key's bounds on both sides (0, 1, 0.5, 2.0, -1, `[]`, a list holding a
//! number, …), with at most one value the key refuses; it may also hold an unknown key (at the top, in `mcp`, in `engine`) and an `api_key` (a
//! string, or a list holding one: refused, and shown as `["***"]`). The
//! model says: a refused value stops startup with exactly one stderr line holding
//! `config <key>=<value as JSON>: `, exit code 2, the key never shown; otherwise the server starts and
//! warns once per unknown key, `config <key>=<value>: unknown key, ignored`.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// What a key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A number > 0 (booleans refused): 1.5's seconds.
    Seconds,
    /// An integer-valued number ≥ 1 (`2.0` is 2; `1.5` and booleans refused).
    PositiveInteger,
    /// An integer-valued number ≥ 0.
    NonNegativeInteger,
    /// A JSON boolean only.
    Boolean,
    /// A list of strings, empty or not (1.11g).
    Strings,
    /// A list of at least one string (1.11a's `engine.scripts`).
    Scripts,
}

/// Every typed key a generated configuration sets, with what it takes.
pub const KEYS: [(&str, Kind); 20] = [
    ("mcp.timeout_s", Kind::Seconds),
    ("mcp.start_timeout_s", Kind::Seconds),
    ("mcp.retry_failed_s", Kind::Seconds),
    ("mcp.max_result_chars", Kind::PositiveInteger),
    ("mcp.max_rounds", Kind::PositiveInteger),
    ("mcp.max_pictures_per_result", Kind::PositiveInteger),
    ("mcp.max_picture_chars", Kind::PositiveInteger),
    ("mcp.max_tool_pages", Kind::PositiveInteger),
    ("mcp.max_tools_per_server", Kind::PositiveInteger),
    ("mcp.image_results", Kind::Boolean),
    ("max_body_mib", Kind::PositiveInteger),
    ("max_connections", Kind::PositiveInteger),
    ("header_timeout_s", Kind::PositiveInteger),
    ("body_timeout_s", Kind::PositiveInteger),
    ("engine.delay_ms", Kind::NonNegativeInteger),
    ("engine.max_context", Kind::PositiveInteger),
    ("engine.restart_per_request", Kind::Boolean),
    ("allowed_hosts", Kind::Strings),
    ("trusted_origins", Kind::Strings),
    ("engine.scripts", Kind::Scripts),
];

/// Whether the key at `index` in [`KEYS`] takes a list.
fn is_list(index: usize) -> bool {
    matches!(KEYS[index].1, Kind::Strings | Kind::Scripts)
}

/// Values of every JSON kind, each key's bounds on both sides among them (as JSON text).
const VALUES: [&str; 19] = [
    "0",
    "1",
    "2",
    "7",
    "2.0",
    "0.5",
    "1.5",
    "-1",
    "-0.5",
    "true",
    "false",
    "null",
    "\"5\"",
    "[1]",
    "{}",
    "300",
    "[]",
    "[\"a.example\"]",
    "[\"a.example\",1]",
];

/// Whether a key of `kind` takes `value` (SPEC 1.5, 1.11).
pub fn takes(kind: Kind, value: &Value) -> bool {
    let whole = value.as_f64().filter(|f| f.fract() == 0.0);
    match kind {
        Kind::Seconds => value.as_f64().is_some_and(|s| s > 0.0),
        Kind::PositiveInteger => whole.is_some_and(|n| n >= 1.0),
        Kind::NonNegativeInteger => whole.is_some_and(|n| n >= 0.0),
        Kind::Boolean => value.is_boolean(),
        Kind::Strings => value.as_array().is_some_and(|items| items.iter().all(Value::is_string)),
        Kind::Scripts => value.as_array().is_some_and(|items| !items.is_empty() && items.iter().all(Value::is_string)),
    }
}

/// A generated configuration: typed keys in the order written, an unknown key, an API key.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedConfig {
    /// `(key index, value index)` pairs, each key at most once.
    pub settings: Vec<(usize, usize)>,
    /// An unknown key: where (0 the top, 1 `mcp`, 2 `engine`) and its value's index.
    pub unknown: Option<(usize, usize)>,
    /// The file's `api_key`: none, the secret, or a list holding it (refused, shown as `["***"]`).
    pub key: ApiKey,
}

/// The `api_key` a generated configuration holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKey {
    /// None.
    Absent,
    /// [`SECRET`].
    Secret,
    /// `[SECRET]`: not a string, so refused, and shown without the secret (1.3).
    SecretInAList,
}

/// The secret every generated configuration's `api_key` holds.
pub const SECRET: &str = "gen-secret-k3y-ç";

/// Configurations of 0 to 5 typed keys (drawn from all of them), now and then an unknown key and a key.
pub fn configs() -> impl Strategy<Value = GeneratedConfig> {
    // A value the key takes 7 times in 10, so that many configurations start (and show their warnings).
    let setting = (0..KEYS.len(), prop::bool::weighted(0.7), any::<usize>()).prop_map(|(key, taken, pick)| {
        let fitting: Vec<usize> = (0..VALUES.len()).filter(|&v| takes(KEYS[key].1, &value(v)) == taken).collect();
        (key, fitting[pick % fitting.len()])
    });
    // A list-valued key two times in five besides, as a list it takes or one holding a number: three
    // keys of twenty would otherwise be set too rarely for `string-lists-lenient` to be met at the budget.
    let lists: Vec<usize> = (0..KEYS.len()).filter(|&k| is_list(k)).collect();
    let list_values: Vec<usize> = (0..VALUES.len()).filter(|&v| value(v).is_array()).collect();
    let list = prop::option::weighted(0.4, (prop::sample::select(lists), prop::sample::select(list_values)));
    let settings = (prop::collection::vec(setting, 0..6), list).prop_map(|(mut pairs, list)| {
        pairs.extend(list);
        let mut seen = std::collections::BTreeSet::new();
        pairs.retain(|(key, _)| seen.insert(*key));
        pairs
    });
    let key = prop_oneof![2 => Just(ApiKey::Absent), 2 => Just(ApiKey::Secret), 1 => Just(ApiKey::SecretInAList)];
    (settings, prop::option::weighted(0.5, (0usize..3, 0..VALUES.len())), key)
        .prop_map(|(settings, unknown, key)| GeneratedConfig { settings, unknown, key })
}

fn value(index: usize) -> Value {
    serde_json::from_str(VALUES[index]).unwrap_or(Value::Null)
}

/// Where an unknown key goes.
const UNKNOWN: [&str; 3] = ["colour", "mcp.shade", "engine.flavour"];

impl GeneratedConfig {
    /// The configuration file's JSON.
    pub fn json(&self) -> Value {
        let mut top = Map::new();
        let mut put = |path: &str, value: Value| match path.split_once('.') {
            Some((block, key)) => {
                let inner = top.entry(block).or_insert_with(|| Value::Object(Map::new()));
                if let Some(inner) = inner.as_object_mut() {
                    inner.insert(key.to_string(), value);
                }
            }
            None => {
                top.insert(path.to_string(), value);
            }
        };
        for &(key, v) in &self.settings {
            put(KEYS[key].0, value(v));
        }
        if let Some((at, v)) = self.unknown {
            put(UNKNOWN[at], value(v));
        }
        match self.key {
            ApiKey::Absent => {}
            ApiKey::Secret => put("api_key", Value::String(SECRET.into())),
            ApiKey::SecretInAList => put("api_key", serde_json::json!([SECRET])),
        }
        Value::Object(top)
    }

    /// The first key whose value its kind refuses, with that value (the model refuses at most one:
    /// the strategy may draw more, and then the check accepts any of them).
    pub fn refused(&self) -> Vec<(&'static str, Value)> {
        let mut refused: Vec<(&'static str, Value)> = self
            .settings
            .iter()
            .filter(|&&(key, v)| !takes(KEYS[key].1, &value(v)))
            .map(|&(key, v)| (KEYS[key].0, value(v)))
            .collect();
        if self.key == ApiKey::SecretInAList {
            refused.push(("api_key", serde_json::json!(["***"])));
        }
        refused
    }
}

/// What the server did with `config`, against the model.
pub fn judge(config: &GeneratedConfig, code: Option<i32>, health: Option<u16>, stderr: &str) -> Result<(), String> {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if stderr.contains(SECRET) {
        return Err(format!("the API key shows in stderr: {stderr:?}"));
    }
    let refused = config.refused();
    if refused.is_empty() {
        if code.is_some() || health != Some(200) {
            return Err(format!(
                "every value is one its key takes; the server did not start (exit code {code:?}, /health {health:?}): {stderr:?}"
            ));
        }
        if let Some((at, v)) = config.unknown {
            let warning = format!("config {}={}: unknown key, ignored", UNKNOWN[at], value(v));
            if lines.iter().filter(|l| l.contains(&warning)).count() != 1 {
                return Err(format!("one line with `{warning}`; stderr: {stderr:?}"));
            }
        }
        return Ok(());
    }
    if code != Some(2) {
        return Err(format!("a refused value ({refused:?}): exit code 2, not {code:?}; stderr: {stderr:?}"));
    }
    let named = |line: &&str| refused.iter().any(|(key, v)| line.contains(&format!("config {key}={v}: ")));
    match lines.as_slice() {
        [line] if named(line) => Ok(()),
        _ => Err(format!(
            "exactly one stderr line naming the refused key and value as `config <key>=<value as JSON>: …` \
             (one of {refused:?}); stderr: {stderr:?}"
        )),
    }
}

/// A configuration as a reader wants it.
pub fn describe(config: &GeneratedConfig) -> String {
    let refused = config.refused();
    format!(
        "  {}\n  the model: {}",
        config.json(),
        if refused.is_empty() { "starts".to_string() } else { format!("refuses {refused:?}") }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_takes_its_values_and_no_other() {
        let takes_text = |kind, text: &str| takes(kind, &serde_json::from_str(text).expect("json"));
        let taken = |kind| VALUES.iter().filter(|v| takes_text(kind, v)).copied().collect::<Vec<_>>();
        assert_eq!(taken(Kind::Seconds), ["1", "2", "7", "2.0", "0.5", "1.5", "300"]);
        assert_eq!(taken(Kind::PositiveInteger), ["1", "2", "7", "2.0", "300"]);
        assert_eq!(taken(Kind::NonNegativeInteger), ["0", "1", "2", "7", "2.0", "300"]);
        assert_eq!(taken(Kind::Boolean), ["true", "false"]);
        assert_eq!(taken(Kind::Strings), ["[]", "[\"a.example\"]"]);
        assert_eq!(taken(Kind::Scripts), ["[\"a.example\"]"]);
    }

    #[test]
    fn one_refusal_line_naming_the_key_is_what_the_model_wants() {
        let config = GeneratedConfig { settings: vec![(4, 6)], unknown: None, key: ApiKey::Secret };
        assert_eq!(config.json()["mcp"]["max_rounds"], serde_json::json!(1.5));
        let line = "reference-server: config mcp.max_rounds=1.5: expected a positive integer\n";
        assert_eq!(judge(&config, Some(2), None, line), Ok(()));
        assert!(judge(&config, Some(2), None, &format!("{line}second line\n")).is_err());
        assert!(judge(&config, Some(1), None, line).is_err());
        assert!(judge(&config, Some(2), None, &format!("config api_key={SECRET}\n")).is_err());
        let listed = GeneratedConfig { settings: vec![], unknown: None, key: ApiKey::SecretInAList };
        let shown = "reference-server: config api_key=[\"***\"]: expected a string\n";
        assert_eq!(judge(&listed, Some(2), None, shown), Ok(()));
        let fine = GeneratedConfig { settings: vec![(4, 4)], unknown: Some((1, 0)), key: ApiKey::Absent };
        let warned = "config mcp.shade=0: unknown key, ignored\n";
        assert_eq!(judge(&fine, None, Some(200), warned), Ok(()));
        assert!(judge(&fine, None, Some(200), "").is_err());
        assert!(judge(&fine, Some(2), None, warned).is_err());
    }
}

#[cfg(test)]
mod odds {
    use super::*;

    #[test]
    fn nearly_every_run_holds_what_the_named_variants_need() {
        // At the default budget: an unknown key in a configuration that starts (unknown-keys-refused),
        // a value its key refuses (config-lenient, refusal-with-cause-line), the key in a list (secrets-shown).
        let warned = crate::generate::runs_holding(configs(), 48, |c| c.unknown.is_some() && c.refused().is_empty());
        let refused = crate::generate::runs_holding(configs(), 48, |c| {
            c.settings.iter().any(|&(k, v)| !takes(KEYS[k].1, &value(v)))
        });
        let listed = crate::generate::runs_holding(configs(), 48, |c| c.key == ApiKey::SecretInAList);
        assert!(warned >= 999 && refused >= 999 && listed >= 999, "{warned}, {refused}, {listed} of 1,000");
        // A list-valued key holding something besides strings (string-lists-lenient).
        let lists = crate::generate::runs_holding(configs(), 48, |c| {
            c.settings
                .iter()
                .any(|&(k, v)| is_list(k) && value(v).as_array().is_some_and(|a| a.iter().any(|i| !i.is_string())))
        });
        assert!(lists >= 999, "{lists} of 1,000");
    }
}
