//! What a run was given that its reports repeat — the target's flags, the generated cases' seed and
//! budget, the screenshots folder and when the run began, `--strict` — and the command line that runs
//! one case again the same way. A replay never names the API key: mediacheck reads it from
//! [`API_KEY_VARIABLE`], so the same line runs with the variable set and with it unset.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::runner::Verdict;
use crate::target::Target;

/// The environment variable a replay reads the API key from: a report never holds the key itself.
pub const API_KEY_VARIABLE: &str = "MEDIACHECK_API_KEY";

/// What the reports say about the run as a whole.
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// The target in words (`spawn: …`), as the terminal report's header.
    pub target: String,
    /// The target's flags as a shell fragment (`--spawn '…'`; empty for the embedded target).
    pub target_flags: String,
    /// The generated cases' seed.
    pub seed: u64,
    /// Generated requests per generated case (`--gen-budget`).
    pub gen_budget: u32,
    /// The page cases' screenshots folder, when the run kept one.
    pub screenshots: Option<PathBuf>,
    /// When the run began: a screenshot older than that is an earlier run's (none: every one counts).
    pub started: Option<SystemTime>,
    /// Whether the run had `--strict` (a case not run fails it).
    pub strict: bool,
    /// Whether the target had an API key, which a replay reads from [`API_KEY_VARIABLE`].
    pub keyed: bool,
}

impl RunFacts {
    /// The facts of a run against `target` with the generated cases' `seed` and `gen_budget`.
    pub fn new(target: &Target, seed: u64, gen_budget: u32, screenshots: Option<PathBuf>) -> Self {
        let target_flags = match target {
            Target::Embedded { .. } => String::new(),
            Target::Spawn { template } => format!("--spawn {}", shell_words::quote(template)),
            Target::Url { base, .. } => format!("--url {}", shell_words::quote(base)),
        };
        let keyed = matches!(target, Target::Url { api_key: Some(_), .. });
        RunFacts {
            target: target.describe(),
            target_flags,
            seed,
            gen_budget,
            screenshots,
            started: None,
            strict: false,
            keyed,
        }
    }

    /// The same facts of a run that began at `started` (its screenshots are those written since).
    pub fn started_at(mut self, started: SystemTime) -> Self {
        self.started = Some(started);
        self
    }

    /// The same facts of a run with `--strict` or without.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// What a reader must do before a replay, when anything: against a server with a key, set
    /// [`API_KEY_VARIABLE`] (without it, the cases that need the key are not run, and say so).
    pub fn replay_note(&self) -> Option<String> {
        self.keyed.then(|| {
            format!(
                "mediacheck reads the server's key from ${API_KEY_VARIABLE}: set it first (unset, the cases that need \
                 the key are not run, with that reason)"
            )
        })
    }

    /// The command that runs `verdict`'s case again against the same target: its id, the target's
    /// flags, and for a generated case (`gen.*`) the seed and budget that draw the same requests.
    pub fn replay(&self, verdict: &Verdict) -> String {
        let mut command = format!("mediacheck run --only {}", shell_words::quote(verdict.id));
        if !self.target_flags.is_empty() {
            command.push(' ');
            command.push_str(&self.target_flags);
        }
        if is_generated(verdict) {
            command.push_str(&format!(" --seed {:#x} --gen-budget {}", self.seed, self.gen_budget));
        }
        command
    }
}

/// Whether `verdict` is a generated case's (its requests come from the seed).
pub fn is_generated(verdict: &Verdict) -> bool {
    verdict.id.starts_with("gen.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Level;
    use crate::runner::Outcome;

    fn verdict(id: &'static str) -> Verdict {
        Verdict {
            id,
            clause: "9.2",
            level: Level::Must,
            description: "d",
            scenario: "s",
            outcome: Outcome::Fail,
            expected: None,
            actual: None,
            transcript: Vec::new(),
            ms: 0,
        }
    }

    #[test]
    fn a_replay_names_the_case_the_target_and_a_generated_case_its_seed() {
        let spawn = Target::Spawn { template: "./srv --config {config} --port {port} {scripts}".into() };
        let facts = RunFacts::new(&spawn, 0x5eed, 48, None);
        assert_eq!(
            facts.replay(&verdict("tool-media.get.rejects-missing-token")),
            "mediacheck run --only tool-media.get.rejects-missing-token --spawn './srv --config {config} --port {port} {scripts}'"
        );
        assert_eq!(
            facts.replay(&verdict("gen.lifting-model")),
            "mediacheck run --only gen.lifting-model --spawn './srv --config {config} --port {port} {scripts}' \
             --seed 0x5eed --gen-budget 48"
        );
        let embedded = RunFacts::new(&Target::Embedded { launcher: None }, 1, 2, None);
        assert_eq!(embedded.replay(&verdict("health.shape")), "mediacheck run --only health.shape");
    }

    #[test]
    fn a_replay_never_holds_the_api_key_and_quotes_what_the_shell_would_split() {
        let url = Target::Url { base: "http://h:1/it's".into(), api_key: Some("sekrit-key".into()) };
        let facts = RunFacts::new(&url, 1, 2, None);
        let replay = facts.replay(&verdict("health.shape"));
        assert_eq!(replay, r#"mediacheck run --only health.shape --url 'http://h:1/it'\''s'"#);
        assert!(!replay.contains("sekrit") && !replay.contains("--api-key"), "{replay}");
        assert_eq!(shell_words::split(&replay).expect("one command line")[5], "http://h:1/it's");
        assert!(facts.replay_note().is_some_and(|note| note.contains("$MEDIACHECK_API_KEY")));
        let keyless = Target::Url { base: "http://h:1".into(), api_key: None };
        assert_eq!(RunFacts::new(&keyless, 1, 2, None).replay_note(), None);
    }
}
