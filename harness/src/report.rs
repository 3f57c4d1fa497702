//! Reports: the terminal table (grouped by SPEC section, failures with expected vs. actual and the
//! HTTP exchange), JSON, and JUnit XML; [`markdown`] (a summary for a CI job's page) and [`html`] (one
//! self-contained file to read a run in), which name the command that replays each case
//! ([`replay`]) and show the page cases' [`screenshots`]. Every headline says what the exit code
//! says ([`judgement`]); the terminal and HTML reports show a bounded [`excerpt`] of each text.

pub mod excerpt;
pub mod html;
pub mod judgement;
pub mod markdown;
pub mod replay;
pub mod screenshots;

use std::fmt::Write as _;

use self::excerpt::{BOUND, excerpt};
use self::judgement::Judgement;
use crate::baseline::Comparison;
use crate::case::Level;
use crate::runner::{Outcome, Verdict};

/// SPEC.md's section titles.
pub fn section_title(section: &str) -> &'static str {
    match section {
        "1" => "Startup and configuration",
        "2" => "Authentication, Host and Origin",
        "3" => "Health and status",
        "4" => "Chat completions",
        "5" => "The MCP hub",
        "6" => "The tool loop",
        "7" => "Result text",
        "8" => "Tool pictures",
        "9" => "GET /tool-media",
        "10" => "References in later turns",
        "11" => "Pictures handed back as text",
        "12" => "The vision path",
        "13" => "The chat page",
        _ => "Other",
    }
}

/// Counts by outcome.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// MUSTs that failed.
    pub fail: usize,
    /// SHOULDs that failed.
    pub warn: usize,
    /// Not run.
    pub not_run: usize,
}

impl Summary {
    /// Counts `verdicts`.
    pub fn of(verdicts: &[Verdict]) -> Self {
        let mut summary = Summary::default();
        for verdict in verdicts {
            match verdict.outcome {
                Outcome::Pass => summary.pass += 1,
                Outcome::Fail => summary.fail += 1,
                Outcome::Warn => summary.warn += 1,
                Outcome::NotRun => summary.not_run += 1,
            }
        }
        summary
    }
}

/// The verdicts grouped by SPEC section (`9` for `9.2`), sections in numeric order, verdicts in
/// their order within each.
pub fn by_section(verdicts: &[Verdict]) -> Vec<(&'static str, Vec<&Verdict>)> {
    fn section(verdict: &Verdict) -> &'static str {
        verdict.clause.split('.').next().unwrap_or(verdict.clause)
    }
    let mut sections: Vec<&'static str> = verdicts.iter().map(section).collect();
    sections.sort_by_key(|s| s.parse::<u32>().unwrap_or(u32::MAX));
    sections.dedup();
    sections.into_iter().map(|s| (s, verdicts.iter().filter(|v| section(v) == s).collect())).collect()
}

/// Per SPEC section, in numeric order: the section, its title and its counts (both summaries'
/// tables).
pub fn counts_by_section(verdicts: &[Verdict]) -> Vec<(&'static str, &'static str, Summary)> {
    by_section(verdicts)
        .into_iter()
        .map(|(section, in_section)| {
            let owned: Vec<Verdict> = in_section.into_iter().cloned().collect();
            (section, section_title(section), Summary::of(&owned))
        })
        .collect()
}

/// An outcome as the reports write it (`pass`, `FAIL`, `warn`, `not-run`).
pub fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "FAIL",
        Outcome::Warn => "warn",
        Outcome::NotRun => "not-run",
    }
}

/// One verdict as a progress line.
pub fn progress_line(verdict: &Verdict) -> String {
    format!("{:>7}  {:<6} {:<52} {}", mark(verdict.outcome), verdict.clause, verdict.id, verdict.description)
}

/// The terminal report without a headline (for a caller that decides its exit code its own way):
/// the verdicts by section, the counts and, last, the not-run line when cases were not run.
pub fn terminal(target: &str, verdicts: &[Verdict]) -> String {
    terminal_report(target, verdicts, None, None)
}

/// `mediacheck run`'s terminal report: the verdicts by section, the baseline's comparison when the run
/// had one, the counts, the headline (`mediacheck failed (exit 1): …`, from `judgement`, as the exit
/// code) and, last, the not-run line when cases were not run.
pub fn terminal_judged(
    target: &str,
    verdicts: &[Verdict],
    baseline: Option<&Comparison>,
    judgement: &Judgement,
) -> String {
    terminal_report(target, verdicts, baseline, Some(judgement))
}

fn terminal_report(
    target: &str,
    verdicts: &[Verdict],
    baseline: Option<&Comparison>,
    judgement: Option<&Judgement>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mediacheck conformance report — target: {target}");
    for (section, in_section) in by_section(verdicts) {
        let _ = writeln!(out, "\n§{section} {}", section_title(section));
        for verdict in in_section {
            let _ = writeln!(out, "{}", progress_line(verdict));
            if verdict.outcome == Outcome::Pass {
                continue;
            }
            if let Some(expected) = &verdict.expected {
                let _ = writeln!(out, "           expected: {}", excerpt(expected, BOUND));
            }
            if let Some(actual) = &verdict.actual {
                let label = if verdict.outcome == Outcome::NotRun { "why" } else { "actual" };
                let _ = writeln!(out, "           {label}: {}", excerpt(actual, BOUND));
            }
            for exchange in verdict.transcript.iter().rev().take(3).rev() {
                let _ = writeln!(
                    out,
                    "           > {} → {} {}",
                    exchange.request,
                    exchange.status,
                    exchange.body.replace('\n', " ")
                );
            }
        }
    }
    if let Some(comparison) = baseline {
        let _ = write!(out, "\n{}", baseline_summary(comparison));
    }
    let summary = Summary::of(verdicts);
    let musts = verdicts.iter().filter(|v| v.level == Level::Must).count();
    let _ = writeln!(
        out,
        "\n{} cases: {} passed, {} failed, {} warnings, {} not run ({} MUST, {} SHOULD)",
        verdicts.len(),
        summary.pass,
        summary.fail,
        summary.warn,
        summary.not_run,
        musts,
        verdicts.len() - musts
    );
    if let Some(judgement) = judgement {
        let _ = writeln!(out, "mediacheck {}", judgement.sentence());
    }
    if summary.not_run > 0 {
        let _ = writeln!(out, "{}", not_run_line(summary.not_run, verdicts.len()));
    }
    out
}

/// The last line of a run where cases did not run: it is not a conformance claim.
pub fn not_run_line(not_run: usize, total: usize) -> String {
    format!(
        "{not_run} of {total} not run: not a conformance claim (the reasons are above, each with what it \
         needs; --strict fails the run)"
    )
}

/// The JSON report without a headline (for a caller that decides its exit code its own way): the
/// target, the counts and every verdict whole.
pub fn json(target: &str, verdicts: &[Verdict]) -> serde_json::Value {
    serde_json::json!({"target": target, "summary": Summary::of(verdicts), "verdicts": verdicts})
}

/// `mediacheck run`'s JSON report: the target, the run's headline (`passed`, `exit_code` and the
/// sentence the other reports show), the counts and every verdict whole.
pub fn json_judged(target: &str, verdicts: &[Verdict], judgement: &Judgement) -> serde_json::Value {
    serde_json::json!({
        "target": target,
        "passed": judgement.passed(),
        "exit_code": judgement.exit_code(),
        "headline": judgement.sentence(),
        "summary": Summary::of(verdicts),
        "verdicts": verdicts,
    })
}

/// JUnit XML, written by quick-junit: one `testsuite` per SPEC section (`spec.4`), one `testcase` per
/// case (`classname` the section, `name` the case id and clause). A failed MUST is a `failure`; a not-run
/// case is `skipped` with the reason; a SHOULD not met passes with the warning in `system-out`
/// (warnings never fail a run).
pub fn junit(verdicts: &[Verdict]) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("mediacheck");
    let mut suites: Vec<TestSuite> = Vec::new();
    for verdict in verdicts {
        let section = format!("spec.{}", verdict.clause.split('.').next().unwrap_or(""));
        let explained = || {
            format!(
                "expected {}; actual {}",
                verdict.expected.as_deref().unwrap_or("-"),
                verdict.actual.as_deref().unwrap_or("-")
            )
        };
        let status = match verdict.outcome {
            Outcome::Pass | Outcome::Warn => TestCaseStatus::success(),
            Outcome::Fail => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(explained());
                status
            }
            Outcome::NotRun => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(verdict.actual.clone().unwrap_or_default());
                status
            }
        };
        let mut case = TestCase::new(format!("{} [{}]", verdict.id, verdict.clause), status);
        case.set_classname(section.clone());
        case.set_time(std::time::Duration::from_millis(verdict.ms));
        if verdict.outcome == Outcome::Warn {
            case.set_system_out(format!("warning (SHOULD {}): {}", verdict.clause, explained()));
        }
        match suites.iter_mut().find(|s| s.name.as_str() == section) {
            Some(suite) => {
                suite.add_test_case(case);
            }
            None => {
                let mut suite = TestSuite::new(section);
                suite.add_test_case(case);
                suites.push(suite);
            }
        }
    }
    report.add_test_suites(suites);
    report.to_string().unwrap_or_default()
}

/// The baseline comparison in a few lines.
pub fn baseline_summary(comparison: &crate::baseline::Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "baseline: {} expected failures", comparison.expected_failures.len());
    if !comparison.new_failures.is_empty() {
        let _ = writeln!(out, "baseline: NEW failures: {}", comparison.new_failures.join(", "));
    }
    if !comparison.stale.is_empty() {
        let _ = writeln!(out, "baseline: STALE entries (these pass now; remove them): {}", comparison.stale.join(", "));
    }
    if !comparison.unknown.is_empty() {
        let _ = writeln!(out, "baseline: entries that name no case that ran: {}", comparison.unknown.join(", "));
    }
    out
}

#[cfg(test)]
mod not_run_tests {
    use super::*;
    use crate::runner::{Outcome, Verdict};

    fn verdict(id: &'static str, outcome: Outcome) -> Verdict {
        Verdict {
            id,
            clause: "9.2",
            level: Level::Must,
            description: "d",
            scenario: "s",
            outcome,
            expected: None,
            actual: Some("why".into()),
            transcript: Vec::new(),
            ms: 0,
        }
    }

    #[test]
    fn junit_has_a_testsuite_per_section_and_no_raw_control_characters() {
        let mut failed = verdict("f", Outcome::Fail);
        failed.actual = Some("a body with \u{1b}[31m colour and a \u{0} NUL <tag> & more".into());
        let xml = junit(&[verdict("a", Outcome::Pass), failed, verdict("n", Outcome::NotRun)]);
        assert!(xml.contains("<testsuite name=\"spec.9\" tests=\"3\""), "{xml}");
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert_eq!(xml.matches("<skipped").count(), 1, "{xml}");
        assert!(!xml.chars().any(|c| c.is_control() && !"\n\t\r".contains(c)), "{xml}");
        assert!(!xml.contains("<tag>"), "{xml}");
    }

    #[test]
    fn a_run_with_cases_not_run_says_so_last_and_a_full_run_does_not() {
        let partial = [verdict("a", Outcome::Pass), verdict("b", Outcome::NotRun), verdict("c", Outcome::NotRun)];
        let text = terminal_judged("t", &partial, None, &Judgement::of(&partial, None, false));
        assert_eq!(text.trim_end().lines().last(), Some(not_run_line(2, 3).as_str()), "{text}");
        assert_eq!(terminal("t", &partial).trim_end().lines().last(), Some(not_run_line(2, 3).as_str()));
        assert!(not_run_line(2, 3).starts_with("2 of 3 not run: not a conformance claim"));
        let full = [verdict("a", Outcome::Pass)];
        assert!(!terminal("t", &full).contains("mediacheck passed"), "no headline without a judgement");
        let text = terminal_judged("t", &full, None, &Judgement::of(&full, None, false));
        assert!(!text.contains("not a conformance claim"));
        assert_eq!(text.trim_end().lines().last(), Some("mediacheck passed (exit 0): no MUST case failed"), "{text}");
    }

    /// The headline's line, just after the counts.
    fn headline(text: &str) -> &str {
        text.lines().find(|l| l.starts_with("mediacheck passed") || l.starts_with("mediacheck failed")).unwrap_or("")
    }

    #[test]
    fn the_headline_follows_the_exit_code_for_a_stale_baseline_entry_and_a_strict_run() {
        let passing = [verdict("a", Outcome::Pass), verdict("b", Outcome::Pass)];
        let comparison = crate::baseline::compare(&passing, &["a".to_string()].into());
        let judgement = Judgement::of(&passing, Some(&comparison), false);
        let text = terminal_judged("t", &passing, Some(&comparison), &judgement);
        assert_eq!(judgement.exit_code(), judgement::EXIT_FAILED);
        assert!(headline(&text).starts_with("mediacheck failed (exit 1): 1 baseline entry is stale"), "{text}");
        assert!(text.contains("baseline: STALE entries (these pass now; remove them): a\n\n2 cases:"), "{text}");
        let partial = [verdict("a", Outcome::Pass), verdict("b", Outcome::NotRun)];
        let judgement = Judgement::of(&partial, None, true);
        let text = terminal_judged("t", &partial, None, &judgement);
        assert!(headline(&text).starts_with("mediacheck failed (exit 1): 1 case was not run"), "{text}");
        assert_eq!(text.trim_end().lines().last(), Some(not_run_line(1, 2).as_str()), "{text}");
        let report = json_judged("t", &partial, &judgement).to_string();
        assert!(
            report.starts_with(r#"{"target":"t","passed":false,"exit_code":1,"headline":"failed (exit 1): 1 case"#)
        );
        assert!(
            report.contains(r#"with cases not run","summary":{"pass":1,"fail":0,"warn":0,"not_run":1}"#),
            "{report}"
        );
    }

    #[test]
    fn a_long_actual_is_cut_in_the_terminal() {
        let mut failed = verdict("f", Outcome::Fail);
        failed.actual = Some("x".repeat(10 << 20));
        let verdicts = [failed];
        let text = terminal("t", &verdicts);
        assert!(text.len() < 2 * BOUND, "{}", text.len());
        assert!(text.contains("… 10,420,224 bytes more not shown"), "{}", &text[BOUND..]);
    }
}
