//! The MCP server entries of the run configuration (`mcp_servers`, `mcpServers`) and of
//! `--mcp-config FILE` (SPEC 1.6, strata-wire C-F1/F2/F4).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::values::{self, ConfigError};
use super::{StartupError, read_json_file};

/// How to reach one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransportSpec {
    /// A program started by the server, spoken to over stdin/stdout.
    Stdio {
        /// The program (looked up on PATH).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables merged over the server's own environment.
        env: Vec<(String, String)>,
        /// The working folder, when given.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint, usually ending in `/mcp`.
        url: String,
        /// Extra headers sent with every request (e.g. `Authorization`).
        headers: Vec<(String, String)>,
    },
}

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The name the configuration gives it (the prefix of its tools' names).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportSpec,
}

/// The servers of the run configuration: `mcp_servers`, then `mcpServers`; a later name wins.
pub fn servers_from_config(top: &Map<String, Value>) -> Result<Vec<McpServerSpec>, ConfigError> {
    let mut servers = Vec::new();
    for key in ["mcp_servers", "mcpServers"] {
        if let Some(block) = top.get(key) {
            merge(&mut servers, entries(key, block)?);
        }
    }
    Ok(servers)
}

/// The servers of `--mcp-config FILE`, which holds `{"mcpServers": {…}}` or `{"mcp_servers": {…}}`.
pub fn servers_from_file(path: &Path) -> Result<Vec<Entry>, StartupError> {
    let root = read_json_file("--mcp-config", path)?;
    let file_error =
        |reason: String| StartupError::File { what: "--mcp-config", path: path.display().to_string(), reason };
    let block = root
        .get("mcpServers")
        .map(|b| ("mcpServers", b))
        .or_else(|| root.get("mcp_servers").map(|b| ("mcp_servers", b)))
        .ok_or_else(|| file_error("expected {\"mcpServers\": {...}}".to_string()))?;
    entries(block.0, block.1).map_err(|e| file_error(e.to_string().trim_start_matches("config ").to_string()))
}

/// An entry as written: a server, or a name switched off with `"disabled": true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Use this server.
    Server(McpServerSpec),
    /// Leave this name out, removing an earlier entry of the same name.
    Disabled(String),
}

/// Applies entries in order: a later name replaces an earlier one; a disabled name removes it.
pub fn merge(servers: &mut Vec<McpServerSpec>, entries: Vec<Entry>) {
    for entry in entries {
        let name = match &entry {
            Entry::Server(s) => s.name.clone(),
            Entry::Disabled(n) => n.clone(),
        };
        let at = servers.iter().position(|s| s.name == name);
        match (entry, at) {
            (Entry::Server(s), Some(i)) => servers[i] = s,
            (Entry::Server(s), None) => servers.push(s),
            (Entry::Disabled(_), Some(i)) => {
                servers.remove(i);
            }
            (Entry::Disabled(_), None) => {}
        }
    }
}

fn entries(key: &str, block: &Value) -> Result<Vec<Entry>, ConfigError> {
    let object = block
        .as_object()
        .ok_or_else(|| ConfigError::new(key, block, "the MCP servers must be an object {\"name\": {...}}"))?;
    object.iter().map(|(name, spec)| entry(&format!("{key}.{name}"), name, spec)).collect()
}

fn entry(path: &str, name: &str, spec: &Value) -> Result<Entry, ConfigError> {
    let fail = |what: &str| ConfigError::new(path, spec, what.to_string());
    let Some(fields) = spec.as_object() else {
        return Err(fail("an MCP server must be an object with \"command\" or \"url\""));
    };
    if let Some(disabled) = fields.get("disabled")
        && values::boolean(&format!("{path}.disabled"), disabled)?
    {
        return Ok(Entry::Disabled(name.to_string()));
    }
    if let Some(url) = fields.get("url") {
        if fields.get("type").and_then(Value::as_str) == Some("sse") {
            return Err(fail(
                "uses the old SSE transport (\"type\": \"sse\"); this server speaks Streamable HTTP - most servers offer it at /mcp",
            ));
        }
        let url = values::non_empty_string(&format!("{path}.url"), url)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::new(
                &format!("{path}.url"),
                &Value::from(url),
                "expected an http:// or https:// URL",
            ));
        }
        let headers = match fields.get("headers") {
            Some(h) => values::string_map(&format!("{path}.headers"), h)?,
            None => Vec::new(),
        };
        let transport = McpTransportSpec::Http { url, headers };
        return Ok(Entry::Server(McpServerSpec { name: name.to_string(), transport }));
    }
    let Some(command) = fields.get("command") else {
        return Err(fail("needs \"command\" (a program to start) or \"url\""));
    };
    let command = values::non_empty_string(&format!("{path}.command"), command)?;
    let args = match fields.get("args") {
        Some(a) => values::string_list(&format!("{path}.args"), a)?,
        None => Vec::new(),
    };
    let env = match fields.get("env") {
        Some(e) => values::string_map(&format!("{path}.env"), e)?,
        None => Vec::new(),
    };
    let cwd = match fields.get("cwd") {
        Some(c) => Some(PathBuf::from(values::non_empty_string(&format!("{path}.cwd"), c)?)),
        None => None,
    };
    let transport = McpTransportSpec::Stdio { command, args, env, cwd };
    Ok(Entry::Server(McpServerSpec { name: name.to_string(), transport }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn servers(config: Value) -> Result<Vec<McpServerSpec>, ConfigError> {
        servers_from_config(config.as_object().expect("object"))
    }

    #[test]
    fn both_spellings_are_read_and_a_later_name_wins() {
        let found = servers(json!({
            "mcp_servers": {"a": {"command": "one"}, "b": {"url": "http://127.0.0.1:1/mcp"}},
            "mcpServers": {"a": {"command": "two"}, "b": {"disabled": true}},
        }))
        .expect("valid");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "a");
        assert!(matches!(&found[0].transport, McpTransportSpec::Stdio { command, .. } if command == "two"));
    }

    #[test]
    fn bad_entries_name_the_key() {
        let cases = [
            (json!({"mcp_servers": {"x": {}}}), "mcp_servers.x"),
            (json!({"mcp_servers": {"x": {"command": "c", "args": "a b"}}}), "mcp_servers.x.args"),
            (json!({"mcp_servers": {"x": {"url": "http://h/sse", "type": "sse"}}}), "mcp_servers.x"),
            (json!({"mcp_servers": {"x": {"url": "http://h/mcp", "headers": []}}}), "mcp_servers.x.headers"),
            (json!({"mcp_servers": {"x": {"command": "c", "env": {"A": 1}}}}), "mcp_servers.x.env"),
            (json!({"mcp_servers": []}), "mcp_servers"),
            (json!({"mcpServers": {"x": []}}), "mcpServers.x"),
        ];
        for (config, key) in cases {
            let err = servers(config.clone()).expect_err(&config.to_string());
            assert_eq!(err.key, key, "{config}");
        }
    }
}
