//! Whether a run passed: the one decision behind `mediacheck run`'s exit code and the headline of
//! every report (the terminal's last lines, the Markdown summary, the HTML report), so no report can
//! say "passed" of a run that exits 1, or "failed" of one that exits 0. A run fails on a MUST case
//! failed that the baseline does not expect, on a stale baseline entry (a listed case that passes
//! now), and, with `--strict`, on a case not run.

use crate::baseline::Comparison;
use crate::runner::{Outcome, Verdict};

/// The exit code of a run that passed.
pub const EXIT_PASSED: u8 = 0;
/// The exit code of a run that failed.
pub const EXIT_FAILED: u8 = 1;

/// What decides a run, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Judgement {
    /// MUST cases that failed and fail the run (with a baseline: those it does not list).
    pub failures: usize,
    /// Failed cases the baseline lists: they do not fail the run.
    pub expected: usize,
    /// Baseline entries whose case passed: each fails the run.
    pub stale: usize,
    /// Cases not run.
    pub not_run: usize,
    /// Whether `--strict` makes a case not run fail the run.
    pub strict: bool,
    /// Whether the run was compared with a baseline.
    pub baseline: bool,
}

impl Judgement {
    /// Judges `verdicts`, compared with the baseline when the run had one, under `--strict` or not.
    pub fn of(verdicts: &[Verdict], baseline: Option<&Comparison>, strict: bool) -> Judgement {
        let not_run = verdicts.iter().filter(|v| v.outcome == Outcome::NotRun).count();
        match baseline {
            Some(comparison) => Judgement {
                failures: comparison.new_failures.len(),
                expected: comparison.expected_failures.len(),
                stale: comparison.stale.len(),
                not_run,
                strict,
                baseline: true,
            },
            None => Judgement {
                failures: verdicts.iter().filter(|v| v.outcome == Outcome::Fail).count(),
                not_run,
                strict,
                ..Judgement::default()
            },
        }
    }

    /// Whether the run passed (exit 0).
    pub fn passed(&self) -> bool {
        self.failures == 0 && self.stale == 0 && !(self.strict && self.not_run > 0)
    }

    /// The exit code: [`EXIT_PASSED`] or [`EXIT_FAILED`].
    pub fn exit_code(&self) -> u8 {
        if self.passed() { EXIT_PASSED } else { EXIT_FAILED }
    }

    /// `passed` or `failed`, the headline's word.
    pub fn word(&self) -> &'static str {
        if self.passed() { "passed" } else { "failed" }
    }

    /// Why the run failed, one phrase a reason; for a run that passed, why it did.
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.failures > 0 {
            let unlisted = if self.baseline { " that the baseline does not list" } else { "" };
            reasons.push(format!("{} MUST {} failed{unlisted}", self.failures, plural(self.failures, "case", "cases")));
        }
        if self.stale > 0 {
            reasons.push(format!(
                "{} baseline {} stale (the case passes now: remove the line)",
                self.stale,
                plural(self.stale, "entry is", "entries are")
            ));
        }
        if self.strict && self.not_run > 0 {
            reasons.push(format!(
                "{} {} not run, and --strict fails a run with cases not run",
                self.not_run,
                plural(self.not_run, "case was", "cases were")
            ));
        }
        if reasons.is_empty() {
            reasons.push(match self.expected {
                0 => "no MUST case failed".to_string(),
                n => format!("no MUST case failed but the {n} the baseline lists"),
            });
        }
        reasons
    }

    /// The headline as one sentence: `failed (exit 1): 1 baseline entry is stale (…)`.
    pub fn sentence(&self) -> String {
        format!("{} (exit {}): {}", self.word(), self.exit_code(), self.reasons().join("; "))
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Level;

    fn verdict(id: &'static str, outcome: Outcome) -> Verdict {
        Verdict {
            id,
            clause: "9.2",
            level: Level::Must,
            description: "d",
            scenario: "s",
            outcome,
            expected: None,
            actual: None,
            transcript: Vec::new(),
            ms: 0,
        }
    }

    #[test]
    fn a_stale_baseline_entry_fails_a_run_without_a_failure() {
        let verdicts = [verdict("a", Outcome::Pass), verdict("b", Outcome::Pass)];
        let comparison = crate::baseline::compare(&verdicts, &["a".to_string()].into());
        let judgement = Judgement::of(&verdicts, Some(&comparison), false);
        assert_eq!((judgement.passed(), judgement.exit_code()), (false, EXIT_FAILED));
        assert_eq!(
            judgement.sentence(),
            "failed (exit 1): 1 baseline entry is stale (the case passes now: remove the line)"
        );
    }

    #[test]
    fn a_strict_run_with_a_case_not_run_fails_and_without_strict_passes() {
        let verdicts = [verdict("a", Outcome::Pass), verdict("b", Outcome::NotRun)];
        let strict = Judgement::of(&verdicts, None, true);
        assert_eq!(
            strict.sentence(),
            "failed (exit 1): 1 case was not run, and --strict fails a run with cases not run"
        );
        let lax = Judgement::of(&verdicts, None, false);
        assert_eq!(lax.sentence(), "passed (exit 0): no MUST case failed");
    }

    #[test]
    fn failures_the_baseline_expects_pass_and_others_fail() {
        let verdicts = [verdict("a", Outcome::Fail), verdict("b", Outcome::Fail), verdict("c", Outcome::Warn)];
        let listed = crate::baseline::compare(&verdicts, &["a".to_string(), "b".to_string()].into());
        assert_eq!(
            Judgement::of(&verdicts, Some(&listed), false).sentence(),
            "passed (exit 0): no MUST case failed but the 2 the baseline lists"
        );
        let partly = crate::baseline::compare(&verdicts, &["a".to_string()].into());
        assert_eq!(
            Judgement::of(&verdicts, Some(&partly), false).sentence(),
            "failed (exit 1): 1 MUST case failed that the baseline does not list"
        );
        assert_eq!(Judgement::of(&verdicts, None, false).sentence(), "failed (exit 1): 2 MUST cases failed");
        assert_eq!(Judgement::of(&[verdict("c", Outcome::Warn)], None, true).exit_code(), EXIT_PASSED);
    }
}
