//! Generated API-key sources and ports, and a model of what SPEC 1.2 and 1.7 say startup does with
//! them.
//!
//! A launch may give a key on the command line (`--api-key`), in the environment (`STRATA_API_KEY`)
//! and in the file (`api_key`), each absent or present as the key, the key inside whitespace, an empty
//! string or whitespace alone; it asks for a free port or for port 0. The model: the first source given
//! (flag, then environment, then file) decides, even when a later one has a key; its value with the
//! surrounding whitespace stripped is the key, and a value that strips to nothing stops startup with
//! `an API key was given but it is empty`, exit code 2, one line. A server that starts prints one ready
//! line naming the port it listens on (the real one when 0 was asked for) and opens `GET /v1/models`
//! to the deciding source's key only — to no key, and to every other source's key, it answers 401 —
//! or, with no source given, to anyone. No key is ever written to stdout or stderr.

use proptest::prelude::*;

/// Where a key comes from, in SPEC 1.7's order.
pub const SOURCES: [&str; 3] = ["--api-key", "STRATA_API_KEY", "api_key"];

/// Each source's own key (non-ASCII in each, so a server comparing only ASCII, or bytes of another
/// encoding, is seen): the keys are distinct, so a request tells which source the server took.
pub const KEYS: [&str; 3] = ["flag-kéy-9Zq2", "env-kéy-ñ-0042", "file-kéy-日本-7"];

/// What SPEC 1.7 says when a source that is given holds nothing but whitespace.
pub const EMPTY_KEY_LINE: &str = "an API key was given but it is empty";

/// How one source gives its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    /// The source's key as it is.
    Key,
    /// The key inside spaces, tabs and newlines (stripped: the same key).
    Padded,
    /// An empty string.
    Empty,
    /// Whitespace alone (strips to nothing).
    Blank,
}

impl Given {
    /// The text this source holds for the key of source `at`.
    pub fn text(self, at: usize) -> String {
        match self {
            Given::Key => KEYS[at].to_string(),
            Given::Padded => format!(" \t{}\n ", KEYS[at]),
            Given::Empty => String::new(),
            Given::Blank => " \t\n ".to_string(),
        }
    }

    /// Whether the stripped text is a key.
    pub fn is_key(self) -> bool {
        matches!(self, Given::Key | Given::Padded)
    }
}

/// A generated launch: each source absent or given, and the port asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLaunch {
    /// The flag, the environment and the file, in [`SOURCES`]' order.
    pub sources: [Option<Given>; 3],
    /// Whether port 0 is asked for (else a free port).
    pub port_zero: bool,
}

/// What the model says of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The server starts and needs no key.
    Open,
    /// The server starts and needs the key of this source.
    KeyOf(usize),
    /// Startup stops: the deciding source (this one) is given but empty.
    Refused(usize),
}

/// Launches with each source present about two times in three (the flag one in two), a key in seven of
/// ten of those, and port 0 in three of ten.
pub fn launches() -> impl Strategy<Value = KeyLaunch> {
    let given = || prop_oneof![4 => Just(Given::Key), 3 => Just(Given::Padded), 2 => Just(Given::Empty), 1 => Just(Given::Blank)];
    let flag = prop::option::weighted(0.5, given());
    let env = prop::option::weighted(0.7, given());
    let file = prop::option::weighted(0.7, given());
    (flag, env, file, prop::bool::weighted(0.3))
        .prop_map(|(flag, env, file, port_zero)| KeyLaunch { sources: [flag, env, file], port_zero })
}

impl KeyLaunch {
    /// SPEC 1.7: the first source given decides.
    pub fn expected(&self) -> Expected {
        match self.sources.iter().enumerate().find_map(|(at, given)| given.map(|g| (at, g))) {
            None => Expected::Open,
            Some((at, given)) if given.is_key() => Expected::KeyOf(at),
            Some((at, _)) => Expected::Refused(at),
        }
    }

    /// The configuration file's JSON.
    pub fn config(&self) -> serde_json::Value {
        match self.sources[2] {
            Some(given) => serde_json::json!({"api_key": given.text(2)}),
            None => serde_json::json!({}),
        }
    }

    /// The arguments after the template's.
    pub fn args(&self) -> Vec<String> {
        self.sources[0].map(|given| vec![SOURCES[0].to_string(), given.text(0)]).unwrap_or_default()
    }

    /// `STRATA_API_KEY`'s value, or `None` to leave it out.
    pub fn env(&self) -> Option<String> {
        self.sources[1].map(|given| given.text(1))
    }
}

/// The keys a probe presents, each with `GET /v1/models`: none, then each source's key.
pub fn presented() -> [Option<&'static str>; 4] {
    [None, Some(KEYS[0]), Some(KEYS[1]), Some(KEYS[2])]
}

/// The status the model wants for `GET /v1/models` with `key` (one of [`presented`]).
pub fn wanted_status(expected: Expected, key: Option<&str>) -> u16 {
    match expected {
        Expected::Open => 200,
        Expected::KeyOf(at) if key == Some(KEYS[at]) => 200,
        _ => 401,
    }
}

/// What the server did with `launch` (exit code, `/health`, its ready line, its stderr, and the
/// statuses `GET /v1/models` answered to [`presented`]'s keys while it served), against the model.
pub fn judge(
    launch: &KeyLaunch,
    code: Option<i32>,
    health: Option<u16>,
    ready_line: &str,
    stderr: &str,
    statuses: Option<&[u16]>,
) -> Result<(), String> {
    if let Some(key) = KEYS.iter().find(|k| stderr.contains(*k) || ready_line.contains(*k)) {
        return Err(format!("the key {key:?} shows in the output: stdout {ready_line:?}, stderr {stderr:?}"));
    }
    let expected = launch.expected();
    if let Expected::Refused(at) = expected {
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        if code != Some(2) {
            return Err(format!(
                "{} is given but empty: exit code 2, not {code:?} (/health {health:?}); stderr: {stderr:?}",
                SOURCES[at]
            ));
        }
        return match lines.as_slice() {
            [line] if line.contains(EMPTY_KEY_LINE) => Ok(()),
            _ => Err(format!("exactly one stderr line with `{EMPTY_KEY_LINE}`; stderr: {stderr:?}")),
        };
    }
    let Some(statuses) = statuses.filter(|_| code.is_none() && health == Some(200)) else {
        return Err(format!(
            "the server starts (the model: {expected:?}), answering /health where its ready line says; \
             exit code {code:?}, /health {health:?}, ready line {ready_line:?}, stderr: {stderr:?}"
        ));
    };
    let port = ready_line.strip_prefix("listening on http://").and_then(|rest| rest.rsplit_once(':'));
    if !port.is_some_and(|(_, p)| p.parse::<u16>().is_ok_and(|p| p != 0)) {
        return Err(format!("one ready line `listening on http://HOST:PORT` with the real port, not {ready_line:?}"));
    }
    for (key, &status) in presented().iter().zip(statuses) {
        let wanted = wanted_status(expected, *key);
        if status != wanted {
            let shown = key.map_or("no key".to_string(), |k| format!("the key {k:?}"));
            return Err(format!(
                "GET /v1/models with {shown}: {wanted}, not {status} (the model: {expected:?}, the sources {:?})",
                launch.sources
            ));
        }
    }
    Ok(())
}

/// A launch as a reader wants it.
pub fn describe(launch: &KeyLaunch) -> String {
    let sources: Vec<String> = SOURCES
        .iter()
        .zip(&launch.sources)
        .enumerate()
        .map(|(at, (name, given))| match given {
            Some(given) => format!("{name} = {:?}", given.text(at)),
            None => format!("{name} absent"),
        })
        .collect();
    format!(
        "  {}; port {}\n  the model: {:?}",
        sources.join(", "),
        if launch.port_zero { "0" } else { "free" },
        launch.expected()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(flag: Option<Given>, env: Option<Given>, file: Option<Given>) -> KeyLaunch {
        KeyLaunch { sources: [flag, env, file], port_zero: false }
    }

    #[test]
    fn the_first_source_given_decides_even_when_it_is_empty() {
        use Given::*;
        assert_eq!(launch(None, None, None).expected(), Expected::Open);
        assert_eq!(launch(Some(Padded), Some(Key), Some(Key)).expected(), Expected::KeyOf(0));
        assert_eq!(launch(None, Some(Key), Some(Empty)).expected(), Expected::KeyOf(1));
        assert_eq!(launch(None, None, Some(Padded)).expected(), Expected::KeyOf(2));
        assert_eq!(launch(Some(Blank), Some(Key), None).expected(), Expected::Refused(0));
        assert_eq!(launch(None, Some(Empty), Some(Key)).expected(), Expected::Refused(1));
        assert_eq!(Padded.text(1).trim(), KEYS[1]);
        assert!(Blank.text(0).trim().is_empty());
    }

    #[test]
    fn the_judge_wants_the_deciding_key_alone() {
        use Given::*;
        let env_wins = launch(None, Some(Padded), Some(Key));
        let ready = "listening on http://127.0.0.1:40001";
        assert_eq!(judge(&env_wins, None, Some(200), ready, "", Some(&[401, 401, 200, 401])), Ok(()));
        assert!(judge(&env_wins, None, Some(200), ready, "", Some(&[401, 401, 401, 200])).is_err());
        assert!(judge(&env_wins, None, Some(200), ready, "", Some(&[200, 401, 200, 401])).is_err());
        assert!(
            judge(&env_wins, None, Some(200), "listening on http://127.0.0.1:0", "", Some(&[401, 401, 200, 401]))
                .is_err()
        );
        assert!(judge(&env_wins, None, None, ready, "", None).is_err());
        let leaked = format!("using key {}", KEYS[1]);
        assert!(judge(&env_wins, None, Some(200), ready, &leaked, Some(&[401, 401, 200, 401])).is_err());
        let open = launch(None, None, None);
        assert_eq!(judge(&open, None, Some(200), ready, "", Some(&[200, 200, 200, 200])), Ok(()));
        let refused = launch(Some(Empty), Some(Key), None);
        let line = format!("reference-server: {EMPTY_KEY_LINE}\n");
        assert_eq!(judge(&refused, Some(2), None, "", &line, None), Ok(()));
        assert!(judge(&refused, Some(1), None, "", &line, None).is_err());
        assert!(judge(&refused, None, Some(200), ready, "", Some(&[401, 401, 200, 401])).is_err());
    }
}

#[cfg(test)]
mod odds {
    use super::*;

    #[test]
    fn nearly_every_run_holds_what_the_named_variants_need() {
        // At the default budget: the flag decides (api-key-flag-ignored), the flag and the environment
        // both given (env-key-over-flag), the environment and the file without the flag
        // (api-key-file-wins), a flag or file that decides empty (empty-key-ok), a server that starts
        // on port 0 (ready-line-port-zero), a server whose key came from the flag, where a wrong key
        // is refused (flag-key-refusals-as-text).
        let held = crate::generate::runs_holding_each(launches(), 48, 6, |l| {
            let [flag, env, file] = l.sources;
            vec![
                l.expected() == Expected::KeyOf(0),
                flag.is_some_and(Given::is_key) && env.is_some(),
                flag.is_none() && env.is_some_and(Given::is_key) && file.is_some(),
                matches!(l.expected(), Expected::Refused(0) | Expected::Refused(2)),
                l.port_zero && !matches!(l.expected(), Expected::Refused(_)),
                l.expected() == Expected::KeyOf(0),
            ]
        });
        assert!(held.iter().all(|&h| h >= 999), "{held:?} of 1,000");
    }
}
