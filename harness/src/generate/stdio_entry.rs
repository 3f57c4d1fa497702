//! Generated stdio MCP server entries and a model of what SPEC 5.1 says their process is started
//! with: its environment and its working folder.
//!
//! The server runs with `STRATA_API_KEY` (its key), `MC_SHARED` and `MC_SERVER_ONLY` in its
//! environment. An entry's `env` names any of `MC_ONE` (non-ASCII), `MC_EMPTY` (an empty value),
//! `MC_SHARED` (another value than the server's) and `STRATA_API_KEY` (another key), and the entry has
//! a `cwd` or not. Its command is a shell that writes its environment and folder to files beside the
//! case, then runs the fixture MCP server, so the server starts it like any other.
//!
//! The model (5.1b, 5.1c): the process has the server's environment with the entry's `env` over it —
//! every name the entry gives with the entry's value, `MC_SERVER_ONLY` and (unless the entry gives
//! it) `MC_SHARED` with the server's — less `STRATA_API_KEY` unless the entry's `env` names it; it
//! runs in the entry's `cwd` when there is one, in the server's own working folder when there is none.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The server's key, in its configuration and its environment.
pub const SERVER_KEY: &str = "server-kéy-5b";
/// The server's environment besides its key.
pub const SERVER_ENV: [(&str, &str); 2] = [("MC_SHARED", "from-the-server"), ("MC_SERVER_ONLY", "server-only")];
/// What an entry's `env` may name, with the value it gives.
const ENTRY_ENV: [(&str, &str); 4] =
    [("MC_ONE", "éntry-one"), ("MC_EMPTY", ""), ("MC_SHARED", "from-the-entry"), ("STRATA_API_KEY", "entry-kéy")];

/// A generated entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Which of [`ENTRY_ENV`] its `env` names.
    pub env: [bool; 4],
    /// Whether it has a `cwd`.
    pub cwd: bool,
}

/// Every entry of the space the module's doc names.
pub fn entries() -> impl Strategy<Value = Entry> {
    (any::<[bool; 4]>(), any::<bool>()).prop_map(|(env, cwd)| Entry { env, cwd })
}

/// An entry, for a failure's report.
pub fn describe(entry: &Entry) -> String {
    let named: Vec<&str> = ENTRY_ENV.iter().zip(entry.env).filter(|(_, n)| *n).map(|((name, _), _)| *name).collect();
    format!("env names {named:?}, cwd {}", if entry.cwd { "set" } else { "absent" })
}

/// The broken variants `gen.stdio-entry-model` names, each met in at least 999 runs of 1,000 of its
/// budget (this module's tests hold it).
pub const VARIANTS: &[&str] = &["stdio-cwd-ignored", "stdio-gets-the-api-key", "stdio-cwd-defaults-elsewhere"];

/// The configuration of a server with one stdio entry whose shell writes `<dump>.env` and `<dump>.cwd`
/// and then runs `exe fixture-mcp`; `folder` is the entry's `cwd` when it has one.
pub fn config(entry: &Entry, dump: &Path, folder: &Path, exe: &str) -> Value {
    let script = r#"env > "$0.env"; pwd -P > "$0.cwd"; exec "$1" fixture-mcp"#;
    let mut server = json!({"command": "sh", "args": ["-c", script, dump.display().to_string(), exe]});
    let env: Map<String, Value> =
        ENTRY_ENV.iter().zip(entry.env).filter(|(_, n)| *n).map(|((k, v), _)| (k.to_string(), json!(v))).collect();
    if !env.is_empty() {
        server["env"] = Value::Object(env);
    }
    if entry.cwd {
        server["cwd"] = json!(folder.display().to_string());
    }
    json!({"api_key": SERVER_KEY, "mcp_servers": {"probe": server}})
}

/// What the model says the process's environment holds for each name in play (`None`: not there).
pub fn expected_env(entry: &Entry) -> Vec<(&'static str, Option<&'static str>)> {
    let given = |name: &str| ENTRY_ENV.iter().zip(entry.env).find(|((k, _), n)| *k == name && *n).map(|((_, v), _)| *v);
    vec![
        ("MC_ONE", given("MC_ONE")),
        ("MC_EMPTY", given("MC_EMPTY")),
        ("MC_SHARED", given("MC_SHARED").or(Some(SERVER_ENV[0].1))),
        ("MC_SERVER_ONLY", Some(SERVER_ENV[1].1)),
        ("STRATA_API_KEY", given("STRATA_API_KEY")),
    ]
}

/// Holds what the process wrote (`env`'s lines and `pwd -P`) to the model; `folder` is the entry's
/// `cwd` when it has one, `server` the server's own working folder (where it runs without one).
pub fn judge(entry: &Entry, env: &str, cwd: &str, folder: &Path, server: &Path) -> Result<(), String> {
    let mut wrong = Vec::new();
    for (name, wanted) in expected_env(entry) {
        let prefix = format!("{name}=");
        let got = env.lines().find_map(|l| l.strip_prefix(prefix.as_str()));
        if got != wanted {
            wrong.push(format!("{name}: {got:?}, the model says {wanted:?}"));
        }
    }
    let ran_in = Path::new(cwd.trim());
    let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let (want, wanted) = if entry.cwd {
        ("the entry's cwd", canonical(folder))
    } else {
        ("the server's own working folder (no cwd given)", canonical(server))
    };
    if ran_in != wanted {
        wrong.push(format!("ran in {}, the model says {want}, {}", ran_in.display(), wanted.display()));
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_wins_and_the_key_stays_out_unless_named() {
        let none = Entry { env: [false; 4], cwd: false };
        assert_eq!(
            expected_env(&none),
            [
                ("MC_ONE", None),
                ("MC_EMPTY", None),
                ("MC_SHARED", Some("from-the-server")),
                ("MC_SERVER_ONLY", Some("server-only")),
                ("STRATA_API_KEY", None)
            ]
        );
        let all = Entry { env: [true; 4], cwd: true };
        let env = expected_env(&all);
        assert_eq!(env[1], ("MC_EMPTY", Some("")));
        assert_eq!(env[2], ("MC_SHARED", Some("from-the-entry")));
        assert_eq!(env[4], ("STRATA_API_KEY", Some("entry-kéy")));
        let folder = std::env::temp_dir();
        let dump = "MC_SHARED=from-the-server\nMC_SERVER_ONLY=server-only\n";
        let here = folder.canonicalize().unwrap_or(folder.clone());
        let root = Path::new("/");
        assert!(judge(&none, dump, "/", &folder, root).is_ok());
        assert!(judge(&none, dump, &here.display().to_string(), &folder, root).is_err());
        assert!(judge(&none, &format!("{dump}STRATA_API_KEY={SERVER_KEY}\n"), "/", &folder, root).is_err());
        let with_cwd = Entry { env: [false; 4], cwd: true };
        assert!(judge(&with_cwd, dump, &here.display().to_string(), &folder, root).is_ok());
        assert!(judge(&with_cwd, dump, "/", &folder, root).is_err());
    }

    #[test]
    fn each_named_variant_is_met_in_999_runs_of_1000() {
        // A quarter of the budget: each entry starts a server. stdio-cwd-ignored needs a cwd,
        // stdio-gets-the-api-key an entry that does not name the key, stdio-cwd-defaults-elsewhere one
        // without a cwd.
        let budget = (crate::generate::DEFAULT_BUDGET / 4) as usize;
        let held = crate::generate::runs_holding_each(entries(), budget, 3, |e| vec![e.cwd, !e.env[3], !e.cwd]);
        for (variant, held) in VARIANTS.iter().zip(held) {
            assert!(held >= 999, "{variant} met in {held} runs of 1,000");
        }
    }
}
