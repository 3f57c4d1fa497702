//! Generated sources of MCP servers and a model of SPEC 1.6's rules for them.
//!
//! A launch has up to three sources, each an object of entries: the configuration's `mcp_servers`,
//! its `mcpServers`, and a `--mcp-config` file holding `mcpServers` or `mcp_servers` — each absent,
//! empty or naming some of three names. Every entry is one of: a Streamable HTTP entry for the fixture
//! MCP server (which asks for a Bearer token) with the right `Authorization` in its `headers`, with a
//! wrong one, or with none; an entry for an address where nothing listens; or `"disabled": true` (alone
//! or beside a right entry's fields).
//!
//! The model (1.6a–e): the sources are read in that order, a later name replaces an earlier one and
//! `"disabled": true` removes it; `GET /mcp`, once no server is starting, lists exactly the names left,
//! each `ready` when its entry is the right one (its headers sent) and not `ready` otherwise.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The names the sources draw from.
pub const NAMES: [&str; 3] = ["alpha", "beta", "gamma"];
/// The token the fixture MCP server asks for.
pub const TOKEN: &str = "fixture-tøken-1.6";

/// One entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// The fixture, with the right `Authorization` header.
    Right,
    /// The fixture, with a wrong token.
    WrongHeader,
    /// The fixture, with no `headers`.
    NoHeaders,
    /// An address where nothing listens.
    Dead,
    /// `"disabled": true`, alone.
    Disabled,
    /// `"disabled": true` beside the right entry's fields.
    DisabledRight,
}

/// Where the file's entries are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKey {
    /// `{"mcpServers": {…}}`.
    Camel,
    /// `{"mcp_servers": {…}}`.
    Snake,
}

/// One source: absent (`None`), or the entries it gives each name (`None`: the name not there).
pub type Source = Option<[Option<Entry>; 3]>;

/// A generated launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// `mcp_servers`, `mcpServers`, then the file's, in 1.6a's order.
    pub sources: [Source; 3],
    /// The file's key.
    pub file_key: FileKey,
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        3 => Just(Entry::Right),
        1 => Just(Entry::WrongHeader),
        1 => Just(Entry::NoHeaders),
        1 => Just(Entry::Dead),
        1 => Just(Entry::Disabled),
        1 => Just(Entry::DisabledRight),
    ]
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![1 => Just(None), 5 => proptest::array::uniform3(proptest::option::weighted(0.6, entry())).prop_map(Some)]
}

/// Every launch of the space the module's doc names.
pub fn launches() -> impl Strategy<Value = Launch> {
    (source(), source(), source(), prop_oneof![Just(FileKey::Camel), Just(FileKey::Snake)])
        .prop_map(|(a, b, c, file_key)| Launch { sources: [a, b, c], file_key })
}

/// A launch, for a failure's report.
pub fn describe(launch: &Launch) -> String {
    let shown = |source: &Source| match source {
        None => "absent".to_string(),
        Some(entries) => format!(
            "{{{}}}",
            NAMES
                .iter()
                .zip(entries)
                .filter_map(|(name, e)| e.map(|e| format!("{name}: {e:?}")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "mcp_servers {}, mcpServers {}, --mcp-config {} under {:?}",
        shown(&launch.sources[0]),
        shown(&launch.sources[1]),
        shown(&launch.sources[2]),
        launch.file_key
    )
}

/// The broken variants `gen.server-sources-model` names, each met in at least 999 runs of 1,000 of
/// its budget (this module's tests hold it).
pub const VARIANTS: &[&str] = &[
    "first-name-wins",
    "disabled-ignored",
    "entry-headers-ignored",
    "mcp-config-ignored",
    "mcpservers-ignored",
    // 5.8d broken on this path alone (a failed server from mcpServers or the file shown `error`): the wire monitor
    // catches it, as the model here reads `ready` or not.
    "file-servers-failed-as-error",
];

fn json_entry(entry: Entry, url: &str, dead: &str) -> Value {
    let bearer = json!({"Authorization": format!("Bearer {TOKEN}")});
    match entry {
        Entry::Right => json!({"url": url, "headers": bearer}),
        Entry::WrongHeader => json!({"url": url, "headers": {"Authorization": "Bearer not-the-token"}}),
        Entry::NoHeaders => json!({"url": url}),
        Entry::Dead => json!({"url": dead, "headers": bearer}),
        Entry::Disabled => json!({"disabled": true}),
        Entry::DisabledRight => json!({"url": url, "headers": bearer, "disabled": true}),
    }
}

fn json_source(source: &[Option<Entry>; 3], url: &str, dead: &str) -> Value {
    let entries: Map<String, Value> = NAMES
        .iter()
        .zip(source)
        .filter_map(|(name, e)| e.map(|e| (name.to_string(), json_entry(e, url, dead))))
        .collect();
    Value::Object(entries)
}

impl Launch {
    /// The configuration: the two keys of the configuration's sources that are present.
    pub fn config(&self, url: &str, dead: &str) -> Value {
        let mut config = Map::new();
        for (key, source) in ["mcp_servers", "mcpServers"].iter().zip(&self.sources[..2]) {
            if let Some(source) = source {
                config.insert(key.to_string(), json_source(source, url, dead));
            }
        }
        Value::Object(config)
    }

    /// The `--mcp-config` file, when the launch has one.
    pub fn file(&self, url: &str, dead: &str) -> Option<Value> {
        let source = self.sources[2].as_ref()?;
        let key = match self.file_key {
            FileKey::Camel => "mcpServers",
            FileKey::Snake => "mcp_servers",
        };
        Some(json!({key: json_source(source, url, dead)}))
    }

    /// What the model says `GET /mcp` lists: each name left, and whether it is `ready`.
    pub fn expected(&self) -> BTreeMap<&'static str, bool> {
        let mut servers = BTreeMap::new();
        for source in self.sources.iter().flatten() {
            for (name, entry) in NAMES.iter().zip(source) {
                match entry {
                    Some(Entry::Disabled | Entry::DisabledRight) => {
                        servers.remove(name);
                    }
                    Some(entry) => {
                        servers.insert(*name, *entry == Entry::Right);
                    }
                    None => {}
                }
            }
        }
        servers
    }
}

/// Holds what `GET /mcp` showed (once settled: each server's name and status) to the model.
pub fn judge(launch: &Launch, shown: &[(String, String)]) -> Result<(), String> {
    let got: BTreeMap<&str, bool> = shown.iter().map(|(name, status)| (name.as_str(), status == "ready")).collect();
    let wanted = launch.expected();
    if got.len() != shown.len() || got != wanted {
        return Err(format!(
            "GET /mcp shows {shown:?}; the model says {:?} (name: ready)",
            wanted.iter().collect::<Vec<_>>()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_name_replaces_an_earlier_one_and_disabled_removes_it() {
        let launch = Launch {
            sources: [
                Some([Some(Entry::Right), Some(Entry::Dead), Some(Entry::Right)]),
                None,
                Some([Some(Entry::NoHeaders), Some(Entry::Right), Some(Entry::DisabledRight)]),
            ],
            file_key: FileKey::Snake,
        };
        let expected: Vec<_> = launch.expected().into_iter().collect();
        assert_eq!(expected, [("alpha", false), ("beta", true)]);
        assert!(judge(&launch, &[("alpha".into(), "failed".into()), ("beta".into(), "ready".into())]).is_ok());
        assert!(judge(&launch, &[("alpha".into(), "ready".into()), ("beta".into(), "ready".into())]).is_err());
        assert!(judge(&launch, &[("beta".into(), "ready".into())]).is_err());
        let config = launch.config("http://f", "http://d");
        assert!(config.get("mcpServers").is_none() && config["mcp_servers"]["alpha"]["headers"].is_object());
        assert_eq!(launch.file("http://f", "http://d").expect("a file")["mcp_servers"]["gamma"]["disabled"], true);
    }

    #[test]
    fn each_named_variant_is_met_in_999_runs_of_1000() {
        // A quarter of the budget: each launch starts a server. Each variant is met by a launch whose
        // model differs from what the variant makes of it.
        let budget = (crate::generate::DEFAULT_BUDGET / 4) as usize;
        let held = crate::generate::runs_holding_each(launches(), budget, VARIANTS.len(), |launch| {
            let wanted = launch.expected();
            // What each variant makes of the launch, as the variant's own doc says.
            let mut first: BTreeMap<&str, Entry> = BTreeMap::new();
            for source in launch.sources.iter().flatten() {
                for (name, entry) in NAMES.iter().zip(source) {
                    if let Some(entry) = entry {
                        first.entry(*name).or_insert(*entry);
                    }
                }
            }
            first.retain(|_, e| !matches!(e, Entry::Disabled | Entry::DisabledRight));
            let first_wins: BTreeMap<&str, bool> = first.into_iter().map(|(n, e)| (n, e == Entry::Right)).collect();
            let mut enabled = launch.clone();
            for entry in enabled.sources.iter_mut().flatten().flatten().flatten() {
                if *entry == Entry::DisabledRight {
                    *entry = Entry::Right;
                }
            }
            let bare_disabled = launch.sources.iter().flatten().flatten().flatten().any(|e| *e == Entry::Disabled);
            let disabled = bare_disabled || enabled.expected() != wanted;
            let headers = wanted.values().any(|ready| *ready);
            let from = |at: usize| {
                let mut without = launch.clone();
                without.sources[at] = None;
                without.expected() != wanted
            };
            let failed_in_file = wanted.iter().any(|(name, ready)| {
                let at = NAMES.iter().position(|n| n == name).unwrap_or_default();
                !ready && launch.sources[1..].iter().flatten().any(|source| source[at].is_some())
            });
            vec![first_wins != wanted, disabled, headers, from(2), from(1), failed_in_file]
        });
        for (variant, held) in VARIANTS.iter().zip(held) {
            assert!(held >= 999, "{variant} met in {held} runs of 1,000");
        }
    }
}
