//! Settings from the environment (seed 003). Every bad value is one line naming the variable.

use std::path::PathBuf;

/// The model used when `OPENAI_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";
/// The shortest token accepted for HTTP.
pub const MIN_TOKEN_CHARS: usize = 32;

/// A setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {problem}")]
pub struct ConfigError {
    /// The environment variable.
    pub variable: &'static str,
    /// What is wrong (never the value of a secret).
    pub problem: String,
}

/// Everything the server reads from the environment.
#[derive(Clone)]
pub struct Settings {
    /// `OPENAI_API_KEY`.
    pub openai_key: String,
    /// `OPENAI_MODEL`.
    pub model: String,
    /// `VISION_MCP_TOKEN` (required for HTTP).
    pub token: Option<String>,
    /// `MCP_ALLOWED_HOSTS` plus `SERVER_IP`: `host`, `host:port` or `host:*` patterns.
    pub allowed_hosts: Vec<String>,
    /// `VISION_IMAGE_ROOT`: the only folder pictures are read from.
    pub image_root: PathBuf,
    /// `VISION_USAGE_DB`: the SQLite budget.
    pub usage_db: PathBuf,
    /// `VISION_MAX_OUTPUT_TOKENS`.
    pub max_output_tokens: u32,
    /// `VISION_MAX_CALLS_PER_DAY`.
    pub max_calls_per_day: u32,
    /// `VISION_MAX_CALLS_PER_10_MIN`.
    pub max_calls_per_10_min: u32,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("model", &self.model)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("max_calls_per_day", &self.max_calls_per_day)
            .field("max_calls_per_10_min", &self.max_calls_per_10_min)
            .finish_non_exhaustive()
    }
}

impl Settings {
    /// Reads the settings through `var` (the process environment in the binary, a map in tests).
    /// `http` asks for the token too.
    pub fn from_env(var: impl Fn(&str) -> Option<String>, http: bool) -> Result<Settings, ConfigError> {
        let text = |name: &'static str| var(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let openai_key = text("OPENAI_API_KEY").ok_or(ConfigError {
            variable: "OPENAI_API_KEY",
            problem: "missing or empty: the server cannot start without it".into(),
        })?;
        let token = text("VISION_MCP_TOKEN");
        if http {
            match &token {
                None => {
                    return Err(ConfigError {
                        variable: "VISION_MCP_TOKEN",
                        problem: "missing or empty: HTTP needs a Bearer token".into(),
                    });
                }
                Some(t) if t.chars().count() < MIN_TOKEN_CHARS => {
                    return Err(ConfigError {
                        variable: "VISION_MCP_TOKEN",
                        problem: format!("must be at least {MIN_TOKEN_CHARS} characters"),
                    });
                }
                Some(_) => {}
            }
        }
        let mut allowed_hosts: Vec<String> = text("MCP_ALLOWED_HOSTS")
            .unwrap_or_else(|| "localhost:*,127.0.0.1:*,[::1]:*".into())
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        for host in &allowed_hosts {
            if host.contains('/') || host.contains(' ') {
                return Err(ConfigError {
                    variable: "MCP_ALLOWED_HOSTS",
                    problem: format!("'{host}' is not host, host:port or host:*"),
                });
            }
        }
        if let Some(ip) = text("SERVER_IP") {
            if ip.parse::<std::net::IpAddr>().is_err() {
                return Err(ConfigError { variable: "SERVER_IP", problem: format!("'{ip}' is not an IP address") });
            }
            allowed_hosts.push(format!("{}:*", ip.to_ascii_lowercase()));
        }
        let image_root = PathBuf::from(text("VISION_IMAGE_ROOT").unwrap_or_else(|| "/images".into()));
        let usage_db = PathBuf::from(text("VISION_USAGE_DB").unwrap_or_else(|| "/data/usage.sqlite3".into()));
        Ok(Settings {
            openai_key,
            model: text("OPENAI_MODEL").unwrap_or_else(|| DEFAULT_MODEL.into()),
            token,
            allowed_hosts,
            image_root,
            usage_db,
            max_output_tokens: number(&text, "VISION_MAX_OUTPUT_TOKENS", 800, 16, 32_768)?,
            max_calls_per_day: number(&text, "VISION_MAX_CALLS_PER_DAY", 20, 1, 100_000)?,
            max_calls_per_10_min: number(&text, "VISION_MAX_CALLS_PER_10_MIN", 3, 1, 10_000)?,
        })
    }
}

fn number(
    text: &impl Fn(&'static str) -> Option<String>,
    variable: &'static str,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, ConfigError> {
    let Some(value) = text(variable) else { return Ok(default) };
    match value.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ConfigError { variable, problem: format!("'{value}' is not a whole number from {min} to {max}") }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    /// What a log or a panic may show of the settings: the limits and the model, never the key or the
    /// token.
    #[test]
    fn debug_shows_the_limits_and_never_the_secrets() {
        let settings = Settings::from_env(
            env(&[
                ("OPENAI_API_KEY", "sk-SECRET-KEY"),
                ("VISION_MCP_TOKEN", "SECRET-TOKEN-0123456789-0123456789"),
                ("VISION_MAX_CALLS_PER_DAY", "77"),
                ("VISION_MAX_CALLS_PER_10_MIN", "7"),
                ("VISION_MAX_OUTPUT_TOKENS", "333"),
            ]),
            true,
        )
        .expect("settings");
        let shown = format!("{settings:?}");
        for wanted in ["Settings", "max_calls_per_day: 77", "max_calls_per_10_min: 7", "max_output_tokens: 333"] {
            assert!(shown.contains(wanted), "{wanted} in {shown}");
        }
        assert!(!shown.contains("SECRET"), "{shown}");
    }

    #[test]
    fn the_key_is_required_and_the_token_for_http() {
        assert_eq!(Settings::from_env(env(&[]), false).err().map(|e| e.variable), Some("OPENAI_API_KEY"));
        assert_eq!(
            Settings::from_env(env(&[("OPENAI_API_KEY", "  ")]), false).err().map(|e| e.variable),
            Some("OPENAI_API_KEY")
        );
        assert!(Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x")]), false).is_ok());
        let no_token = Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x")]), true);
        assert_eq!(no_token.err().map(|e| e.variable), Some("VISION_MCP_TOKEN"));
        let short = Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), ("VISION_MCP_TOKEN", "short")]), true);
        assert!(short.err().is_some_and(|e| e.problem.contains("32")));
    }

    #[test]
    fn defaults_and_bad_numbers() {
        let settings = Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), ("SERVER_IP", "192.168.1.20")]), false)
            .expect("valid");
        assert_eq!(settings.model, "gpt-4.1-mini");
        assert_eq!(
            (settings.max_output_tokens, settings.max_calls_per_day, settings.max_calls_per_10_min),
            (800, 20, 3)
        );
        assert!(settings.allowed_hosts.contains(&"192.168.1.20:*".to_string()));
        for (variable, value) in
            [("VISION_MAX_CALLS_PER_DAY", "many"), ("VISION_MAX_OUTPUT_TOKENS", "0"), ("SERVER_IP", "nas")]
        {
            let err =
                Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), (variable, value)]), false).expect_err(variable);
            assert_eq!(err.variable, variable);
        }
    }

    /// The token's length counts characters, at the bound: 31 refused, 32 accepted (in bytes, 31 `é` would
    /// be 62); a host is refused when it holds a slash or a space, either one.
    #[test]
    fn the_token_bound_counts_characters_and_hosts_refuse_slashes_and_spaces() {
        for (token, accepted) in [
            ("t".repeat(MIN_TOKEN_CHARS - 1), false),
            ("t".repeat(MIN_TOKEN_CHARS), true),
            ("é".repeat(MIN_TOKEN_CHARS - 1), false),
            ("é".repeat(MIN_TOKEN_CHARS), true),
        ] {
            let result = Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), ("VISION_MCP_TOKEN", &token)]), true);
            assert_eq!(result.is_ok(), accepted, "{} characters of {:?}", token.chars().count(), &token[..2]);
        }
        for hosts in ["nas/x:*", "nas x:*", "ok:*,bad/host"] {
            let result = Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), ("MCP_ALLOWED_HOSTS", hosts)]), false);
            assert_eq!(result.err().map(|e| e.variable), Some("MCP_ALLOWED_HOSTS"), "{hosts}");
        }
        let fine =
            Settings::from_env(env(&[("OPENAI_API_KEY", "sk-x"), ("MCP_ALLOWED_HOSTS", "nas:*, Nas2:8001")]), false);
        assert_eq!(fine.expect("valid").allowed_hosts, ["nas:*", "nas2:8001"]);
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let settings =
            Settings::from_env(env(&[("OPENAI_API_KEY", "sk-secret"), ("VISION_MCP_TOKEN", &"t".repeat(40))]), true)
                .expect("valid");
        let shown = format!("{settings:?}");
        assert!(!shown.contains("sk-secret") && !shown.contains("tttt"), "{shown}");
    }
}

/// Whether the server's user can list and enter the image folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootAccess {
    /// It can.
    Usable,
    /// It is missing or not a folder.
    NotAFolder,
    /// It is a folder this user may not list or enter; the text names the user (`uid 10001, gid 10001`).
    Denied(String),
}

/// Checks the image folder at startup: listing it needs read, entering it (`<root>/.`) needs traverse.
pub fn image_root_access(root: &std::path::Path) -> RootAccess {
    let denied = |e: &std::io::Error| e.kind() == std::io::ErrorKind::PermissionDenied;
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => {}
        Err(error) if denied(&error) => return RootAccess::Denied(running_user()),
        _ => return RootAccess::NotAFolder,
    }
    let entered = std::fs::metadata(root.join("."));
    let listed = std::fs::read_dir(root);
    match (entered, listed) {
        (Ok(_), Ok(_)) => RootAccess::Usable,
        _ => RootAccess::Denied(running_user()),
    }
}

/// `uid N, gid M, groups …` of this process, read from /proc (no unsafe call).
fn running_user() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|rest| rest.split_whitespace().next().unwrap_or_default().to_string())
            .unwrap_or_else(|| "?".into())
    };
    let groups = status.lines().find_map(|line| line.strip_prefix("Groups:")).unwrap_or_default().trim().to_string();
    format!("uid {}, gid {}, groups [{}]", field("Uid:"), field("Gid:"), groups)
}
