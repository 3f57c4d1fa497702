//! Configuration × behaviour: launches drawn along nine axes of the configuration (engine.max_context,
//! `model`, the `vision` block, where the key comes from, `allowed_hosts` in the file or the environment,
//! the forms an HTTP entry takes, a second entry kept or disabled, the `mcp` settings `GET /mcp` shows,
//! `trusted_origins`), every pair of their values met on every run ([`super::covering::pairwise`]), and
//! a model, from SPEC alone, of what the server then reports and does: `/health` (3.1a–e, 3.1g–h),
//! `/v1/models` (3.2, 3.1h, 2.1a), `/v1/status`'s vision block (3.3b–d, 1.10c, 12.2e), `GET /mcp`'s
//! names, transports and settings (1.6d, 1.6g–h, 5.8g), the Host check and its converse (2.5a–b, 2.5d–e,
//! 2.5h) and the Origin check and its converse (2.6a–b, 2.6f).

use proptest::prelude::*;
use serde_json::{Value, json};

/// The key every keyed launch uses (non-ASCII, so a server that reads it otherwise is seen).
pub const KEY: &str = "gen-readback-kéy-41";
/// A Host name only the lists name.
pub const LISTED_HOST: &str = "gen-listed.example";
/// A Host name nothing names.
pub const FOREIGN_HOST: &str = "gen-foreign.example:8095";
/// An Origin only `trusted_origins` names.
pub const TRUSTED_ORIGIN: &str = "http://gen-trusted.example:81";
/// The `model` a launch may set.
pub const MODEL: &str = "gen-mödel 7/β";

/// How many values each axis takes, in [`Launch`]'s order.
pub const LEVELS: [usize; 9] = [4, 2, 4, 4, 4, 4, 4, 4, 2];

/// One launch: an index into each axis's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// `engine.max_context`: absent, 1, 70001, 200000.0.
    pub max_context: usize,
    /// `model`: absent, [`MODEL`].
    pub model: usize,
    /// `vision`: absent, `{}`, `{"backend":"geometry","device":"cpu"}`, `{min_pixels, max_pixels}`.
    pub vision: usize,
    /// The key: none, the file's `api_key`, `--api-key`, `STRATA_API_KEY`.
    pub key: usize,
    /// [`LISTED_HOST`]: named nowhere, `allowed_hosts: []`, in `allowed_hosts`, in `STRATA_ALLOWED_HOSTS`.
    pub hosts: usize,
    /// The fixture's entry `fake`: `{url}`, with `"type": "http"`, `"type": "streamable-http"`,
    /// `"disabled": false`.
    pub fake: usize,
    /// A second entry `spare`: absent, `{"disabled": true}` alone, `{url, "disabled": false}`,
    /// `{url, "type": "stdio"}`.
    pub spare: usize,
    /// `mcp` settings: none, `{timeout_s 7.5, max_result_chars 321, max_rounds 3}`,
    /// `{max_result_chars 2.0, max_rounds 10.0}`, `{timeout_s 1}`.
    pub settings: usize,
    /// `trusted_origins`: absent, `[TRUSTED_ORIGIN]`.
    pub origins: usize,
}

impl Launch {
    /// The launch a covering row (or a draw) of [`LEVELS`] names.
    pub fn from_row(row: &[usize]) -> Self {
        let at = |i: usize| row.get(i).copied().unwrap_or(0) % LEVELS[i];
        Launch {
            max_context: at(0),
            model: at(1),
            vision: at(2),
            key: at(3),
            hosts: at(4),
            fake: at(5),
            spare: at(6),
            settings: at(7),
            origins: at(8),
        }
    }

    /// Whether a key is set.
    pub fn keyed(&self) -> bool {
        self.key != 0
    }

    /// Whether a vision encoder is configured.
    pub fn vision(&self) -> bool {
        self.vision != 0
    }

    /// The run configuration, the fixture MCP server at `url`.
    pub fn config(&self, url: &str) -> Value {
        let mut config = json!({});
        match self.max_context {
            1 => config["engine"] = json!({"max_context": 1}),
            2 => config["engine"] = json!({"max_context": 70001}),
            3 => config["engine"] = json!({"max_context": 200000.0}),
            _ => {}
        }
        if self.model == 1 {
            config["model"] = json!(MODEL);
        }
        match self.vision {
            1 => config["vision"] = json!({}),
            2 => config["vision"] = json!({"backend": "geometry", "device": "cpu"}),
            3 => config["vision"] = json!({"min_pixels": 6272, "max_pixels": 401408}),
            _ => {}
        }
        if self.key == 1 {
            config["api_key"] = json!(KEY);
        }
        match self.hosts {
            1 => config["allowed_hosts"] = json!([]),
            2 => config["allowed_hosts"] = json!(["gen-other-listed.example", LISTED_HOST]),
            _ => {}
        }
        let fake = match self.fake {
            1 => json!({"type": "http", "url": url}),
            2 => json!({"url": url, "type": "streamable-http"}),
            3 => json!({"url": url, "disabled": false}),
            _ => json!({"url": url}),
        };
        let mut servers = json!({"fake": fake});
        match self.spare {
            1 => servers["spare"] = json!({"disabled": true}),
            2 => servers["spare"] = json!({"url": url, "disabled": false}),
            3 => servers["spare"] = json!({"url": url, "type": "stdio"}),
            _ => {}
        }
        config["mcp_servers"] = servers;
        match self.settings {
            1 => config["mcp"] = json!({"timeout_s": 7.5, "max_result_chars": 321, "max_rounds": 3}),
            2 => config["mcp"] = json!({"max_result_chars": 2.0, "max_rounds": 10.0}),
            3 => config["mcp"] = json!({"timeout_s": 1}),
            _ => {}
        }
        if self.origins == 1 {
            config["trusted_origins"] = json!([TRUSTED_ORIGIN]);
        }
        config
    }

    /// Arguments after the template's.
    pub fn args(&self) -> Vec<String> {
        if self.key == 2 { vec!["--api-key".into(), KEY.into()] } else { Vec::new() }
    }

    /// The environment the server gets (the names it must not get from the harness's are unset).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = Vec::new();
        if self.key == 3 {
            env.push(("STRATA_API_KEY", KEY.to_string()));
        }
        if self.hosts == 3 {
            env.push(("STRATA_ALLOWED_HOSTS", format!(" ,gen-other-listed.example, {LISTED_HOST} ,")));
        }
        env
    }

    /// `engine.max_context` as `/health` must report it (3.1g).
    pub fn max_context_reported(&self) -> u64 {
        [262_144, 1, 70001, 200_000][self.max_context]
    }

    /// The pixel bounds `/v1/status` must report with an encoder (3.3d, 12.2e).
    pub fn pixel_bounds(&self) -> (u64, u64) {
        if self.vision == 3 { (6272, 401_408) } else { (3136, 1_003_520) }
    }

    /// The names `GET /mcp` must list, sorted (1.6d, 1.6g–h).
    pub fn names(&self) -> Vec<&'static str> {
        if matches!(self.spare, 2 | 3) { vec!["fake", "spare"] } else { vec!["fake"] }
    }

    /// `GET /mcp`'s settings: timeout_s, max_result_chars, max_rounds (5.8g).
    pub fn settings(&self) -> [f64; 3] {
        match self.settings {
            1 => [7.5, 321.0, 3.0],
            2 => [60.0, 2.0, 10.0],
            3 => [1.0, 20000.0, 8.0],
            _ => [60.0, 20000.0, 8.0],
        }
    }

    /// Whether [`LISTED_HOST`] is served (2.5a–b, 2.5e, 2.5h).
    pub fn listed_host_served(&self) -> bool {
        self.keyed() || matches!(self.hosts, 2 | 3)
    }

    /// Whether a `POST /v1/chat/completions` from [`TRUSTED_ORIGIN`] passes the Origin check (2.6a–b, 2.6f).
    pub fn trusted_origin_passes(&self) -> bool {
        self.keyed() || self.origins == 1
    }
}

/// Every launch, drawn: each axis's value uniformly.
pub fn launches() -> impl Strategy<Value = Launch> {
    proptest::collection::vec(0..4usize, LEVELS.len()).prop_map(|row| Launch::from_row(&row))
}

/// The covering rows: every pair of two axes' values in at least one launch.
pub fn covering() -> Vec<Launch> {
    super::covering::pairwise(&LEVELS).iter().map(|row| Launch::from_row(row)).collect()
}

/// What the server answered, as the case read it.
#[derive(Debug, Default)]
pub struct Seen {
    /// `GET /health` without a key.
    pub health: Value,
    /// `GET /v1/models` with the key (when keyed).
    pub models: Value,
    /// The status of `GET /v1/models` without a key.
    pub models_without_key: u16,
    /// `GET /v1/status` with the key.
    pub status: Value,
    /// `GET /mcp` with the key, once no server is starting.
    pub mcp: Value,
    /// The status of `GET /v1/models` with the key and Host [`LISTED_HOST`].
    pub listed_host: u16,
    /// The same with Host [`FOREIGN_HOST`].
    pub foreign_host: u16,
    /// The status of `POST /v1/chat/completions` with the key, from [`TRUSTED_ORIGIN`].
    pub trusted_origin: u16,
    /// The same from an Origin nothing names.
    pub foreign_origin: u16,
}

fn number_is(value: &Value, wanted: f64) -> bool {
    value.as_f64().is_some_and(|n| (n - wanted).abs() < 1e-9)
}

/// What the model says of `seen`: every difference, one line each.
pub fn judge(launch: &Launch, seen: &Seen) -> Result<(), String> {
    let mut wrong = Vec::new();
    let mut want = |ok: bool, what: String| {
        if !ok {
            wrong.push(what);
        }
    };
    let health = &seen.health;
    let max_context = launch.max_context_reported();
    want(
        health["max_context"].as_u64() == Some(max_context),
        format!("/health max_context {} (3.1g: configured {max_context})", health["max_context"]),
    );
    want(health["status"] == "ok" && health["loaded"] == true, format!("/health status/loaded: {health}"));
    want(health["images"] == launch.vision(), format!("/health images {} (3.1b-c)", health["images"]));
    want(health["api_key"] == launch.keyed(), format!("/health api_key {} (3.1d-e)", health["api_key"]));
    if launch.model == 1 {
        want(health["model"] == MODEL, format!("/health model {} (3.1h: configured {MODEL:?})", health["model"]));
    }
    let listed = &seen.models["data"][0];
    want(
        listed["id"] == health["model"] && listed["id"].is_string(),
        format!("/v1/models lists {} while /health names {} (3.1h)", listed["id"], health["model"]),
    );
    let modalities = if launch.vision() { json!(["text", "image"]) } else { json!(["text"]) };
    want(
        listed["architecture"]["input_modalities"] == modalities,
        format!("/v1/models input_modalities {} (3.2: {modalities})", listed["architecture"]["input_modalities"]),
    );
    let without = if launch.keyed() { 401 } else { 200 };
    want(
        seen.models_without_key == without,
        format!("/v1/models without the key: {} (2.1a: {without})", seen.models_without_key),
    );
    let vision = &seen.status["vision"];
    want(vision["enabled"] == launch.vision(), format!("/v1/status vision.enabled {} (3.3b)", vision["enabled"]));
    if launch.vision() {
        let (min, max) = launch.pixel_bounds();
        let geometry = &vision["geometry"];
        want(
            vision["backend"] == "geometry" && vision["device"] == "cpu",
            format!("/v1/status vision backend/device {}/{} (1.10c, 3.3c)", vision["backend"], vision["device"]),
        );
        want(
            geometry["min_pixels"].as_u64() == Some(min) && geometry["max_pixels"].as_u64() == Some(max),
            format!("/v1/status vision.geometry {geometry} (3.3d: min_pixels {min}, max_pixels {max})"),
        );
        want(
            geometry["patch_size"] == 14 && geometry["merge_size"] == 2,
            format!("/v1/status vision.geometry {geometry} (12.2d: patch_size 14, merge_size 2)"),
        );
    }
    let servers = seen.mcp["servers"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = servers.iter().map(|s| s["name"].as_str().unwrap_or("?").to_string()).collect();
    names.sort();
    want(names == launch.names(), format!("GET /mcp names {names:?} (1.6d, 1.6g-h: {:?})", launch.names()));
    for server in &servers {
        want(
            server["transport"] == "http" && server["status"] == "ready",
            format!(
                "GET /mcp: {} is {} over {} (1.6h: ready over http)",
                server["name"], server["status"], server["transport"]
            ),
        );
    }
    let settings = &seen.mcp["settings"];
    let [timeout, chars, rounds] = launch.settings();
    want(
        number_is(&settings["timeout_s"], timeout)
            && number_is(&settings["max_result_chars"], chars)
            && number_is(&settings["max_rounds"], rounds),
        format!(
            "GET /mcp settings {settings} (5.8g: timeout_s {timeout}, max_result_chars {chars}, max_rounds {rounds})"
        ),
    );
    let served = |status: u16| status != 403 && status != 401;
    let listed_host = launch.listed_host_served();
    want(
        served(seen.listed_host) == listed_host && (listed_host || seen.listed_host == 403),
        format!(
            "Host {LISTED_HOST}: {} (2.5a-b, 2.5d-e, 2.5h: {})",
            seen.listed_host,
            if listed_host { "served" } else { "403" }
        ),
    );
    want(
        served(seen.foreign_host) == launch.keyed() && (launch.keyed() || seen.foreign_host == 403),
        format!(
            "Host {FOREIGN_HOST}: {} (2.5a, 2.5h: {})",
            seen.foreign_host,
            if launch.keyed() { "served" } else { "403" }
        ),
    );
    let trusted = launch.trusted_origin_passes();
    want(
        served(seen.trusted_origin) == trusted && (trusted || seen.trusted_origin == 403),
        format!(
            "Origin {TRUSTED_ORIGIN}: {} (2.6a-b, 2.6f: {})",
            seen.trusted_origin,
            if trusted { "served" } else { "403" }
        ),
    );
    want(
        served(seen.foreign_origin) == launch.keyed() && (launch.keyed() || seen.foreign_origin == 403),
        format!(
            "a foreign Origin: {} (2.6a, 2.6f: {})",
            seen.foreign_origin,
            if launch.keyed() { "served" } else { "403" }
        ),
    );
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("\n")) }
}

/// The launch in a line or two.
pub fn describe(launch: &Launch) -> String {
    let config = launch.config("http://127.0.0.1:PORT/mcp");
    let mut text = format!("configuration {config}");
    if !launch.args().is_empty() {
        text.push_str(&format!("; arguments {:?}", launch.args()));
    }
    for (name, value) in launch.env() {
        text.push_str(&format!("; {name}={value:?}"));
    }
    text
}

/// The variants this case is named against, for the odds test and the case's list.
pub const VARIANTS: &[&str] = &[
    "max-context-fixed",
    "max-context-unread",
    "disabled-false-removes",
    "typed-http-refused",
    "keyed-host-checked",
    "keyed-origin-checked",
    "settings-shown-as-defaults",
    "model-name-fixed",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_covering_rows_meet_every_pair_of_values() {
        let rows: Vec<Vec<usize>> = super::super::covering::pairwise(&LEVELS);
        assert!(super::super::covering::pairs_missing(&LEVELS, &rows).is_empty());
        assert!(rows.len() <= 30, "{} covering launches: each starts a server", rows.len());
        let launches = covering();
        // Every named variant's trigger is in the covering rows, on every run (coverage by construction).
        type Need = (&'static str, fn(&Launch) -> bool);
        let needs: [Need; 8] = [
            ("max-context-fixed", |l| l.max_context != 0),
            ("max-context-unread", |l| l.max_context != 0),
            ("disabled-false-removes", |l| l.fake == 3 || l.spare == 2),
            ("typed-http-refused", |l| l.fake == 1),
            ("keyed-host-checked", |l| l.keyed()),
            ("keyed-origin-checked", |l| l.keyed() && l.origins == 0),
            ("settings-shown-as-defaults", |l| l.settings != 0),
            ("model-name-fixed", |l| l.model == 1),
        ];
        for (variant, need) in needs {
            assert!(launches.iter().any(need), "no covering launch meets {variant}");
        }
    }

    #[test]
    fn the_model_reads_each_axis() {
        let base = Launch::from_row(&[0; 9]);
        assert!(!base.keyed() && !base.listed_host_served() && !base.trusted_origin_passes());
        assert_eq!(base.names(), vec!["fake"]);
        let keyed = Launch { key: 3, ..base };
        assert!(keyed.listed_host_served() && keyed.trusted_origin_passes());
        assert_eq!(keyed.env()[0], ("STRATA_API_KEY", KEY.to_string()));
        assert_eq!(Launch { spare: 3, ..base }.names(), vec!["fake", "spare"]);
        assert_eq!(Launch { spare: 1, ..base }.names(), vec!["fake"]);
        assert_eq!(Launch { max_context: 3, ..base }.config("u")["engine"]["max_context"], json!(200000.0));
        assert!(Launch { hosts: 3, ..base }.listed_host_served());
        assert!(!Launch { hosts: 1, ..base }.listed_host_served());
    }

    #[test]
    fn a_report_naming_every_difference_is_what_a_wrong_server_gets() {
        let launch = Launch { max_context: 2, key: 1, settings: 1, ..Launch::from_row(&[0; 9]) };
        let seen = Seen {
            health: json!({"status": "ok", "loaded": true, "max_context": 262144, "images": false, "api_key": true, "model": "m"}),
            models: json!({"data": [{"id": "m", "architecture": {"input_modalities": ["text"]}}]}),
            models_without_key: 401,
            status: json!({"vision": {"enabled": false}}),
            mcp: json!({"servers": [{"name": "fake", "transport": "http", "status": "ready"}],
                        "settings": {"timeout_s": 60, "max_result_chars": 321, "max_rounds": 3}}),
            listed_host: 403,
            foreign_host: 200,
            trusted_origin: 200,
            foreign_origin: 200,
        };
        let why = judge(&launch, &seen).expect_err("three differences");
        assert!(why.contains("max_context 262144"), "{why}");
        assert!(why.contains("settings"), "{why}");
        assert!(why.contains(LISTED_HOST), "{why}");
        assert_eq!(why.lines().count(), 3, "{why}");
    }
}
