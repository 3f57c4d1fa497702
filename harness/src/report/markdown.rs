//! The Markdown summary (`run --markdown FILE`), written for a CI job's page (GitHub's
//! `$GITHUB_STEP_SUMMARY`): the counts by SPEC section, then every failure and warning with its
//! clause, case id, expected and actual, and the command that replays it, and why cases did not run.
//! The headline says what the exit code says ([`Judgement`]).
//! Short by design: a long text is cut with a note, and past [`SIZE_CAP`] the remaining failures are
//! only named; the HTML and JSON reports have everything.
//!
//! Case output is hostile by design (it quotes what a server sent): it goes into fenced code blocks,
//! whose fence is longer than any run of backticks inside, and every other text is escaped.

use std::fmt::Write as _;

use super::judgement::Judgement;
use super::replay::{RunFacts, is_generated};
use super::{Summary, counts_by_section, not_run_line};
use crate::baseline::Comparison;
use crate::case::Level;
use crate::runner::{Outcome, Verdict};

/// The most characters of one expected, actual or not-run reason shown.
pub const TEXT_CAP: usize = 1_500;
/// Past this many bytes of summary, the failures and warnings left are only named (GitHub takes up to
/// 1 MiB a step; a page much longer than this is not read).
pub const SIZE_CAP: usize = 64 * 1024;
/// The most case ids named in one line of "… and these".
const IDS_CAP: usize = 40;

/// The Markdown summary of a run.
pub fn markdown(facts: &RunFacts, verdicts: &[Verdict], baseline: Option<&Comparison>) -> String {
    let summary = Summary::of(verdicts);
    let judgement = Judgement::of(verdicts, baseline, facts.strict);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## mediacheck {}: {} passed, {} failed, {} warnings, {} not run\n",
        judgement.word(),
        summary.pass,
        summary.fail,
        summary.warn,
        summary.not_run
    );
    let sentence = judgement.sentence();
    let sentence = sentence.get(..1).map(|first| first.to_uppercase() + &sentence[1..]).unwrap_or_default();
    let _ = writeln!(out, "**{}**\n", inline(&sentence));
    let musts = verdicts.iter().filter(|v| v.level == Level::Must).count();
    let generated = if verdicts.iter().any(is_generated) {
        format!(" · generated cases: seed `{:#x}`, {} requests each", facts.seed, facts.gen_budget)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "Target: {} · {} cases ({musts} MUST, {} SHOULD){generated}\n",
        inline(&facts.target),
        verdicts.len(),
        verdicts.len() - musts,
    );
    counts_table(&mut out, verdicts);
    if summary.not_run > 0 {
        let _ = writeln!(out, "\n> {}", inline(&not_run_line(summary.not_run, verdicts.len())));
    }
    if let Some(comparison) = baseline {
        let _ = writeln!(out);
        for line in super::baseline_summary(comparison).lines() {
            let _ = writeln!(out, "- {}", inline(line));
        }
    }
    for (outcome, heading) in [(Outcome::Fail, "Failures (MUST not met)"), (Outcome::Warn, "Warnings (SHOULD not met)")]
    {
        let listed: Vec<&Verdict> = verdicts.iter().filter(|v| v.outcome == outcome).collect();
        if listed.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {heading}: {}\n", listed.len());
        for (at, verdict) in listed.iter().enumerate() {
            if out.len() > SIZE_CAP {
                let rest: Vec<&str> = listed[at..].iter().map(|v| v.id).collect();
                let _ = writeln!(
                    out,
                    "\n… and {} more, not shown: this summary stops at {} KiB (every one is in the HTML and JSON \
                     reports): {}",
                    rest.len(),
                    SIZE_CAP / 1024,
                    ids(&rest)
                );
                break;
            }
            failure(&mut out, facts, verdict);
        }
    }
    not_run(&mut out, verdicts);
    out
}

fn counts_table(out: &mut String, verdicts: &[Verdict]) {
    let _ = writeln!(out, "| § | section | pass | fail | warn | not run |\n|--:|---|--:|--:|--:|--:|");
    for (section, title, s) in counts_by_section(verdicts) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            inline(section),
            inline(title),
            s.pass,
            s.fail,
            s.warn,
            s.not_run
        );
    }
    let s = Summary::of(verdicts);
    let _ = writeln!(out, "| | **all** | **{}** | **{}** | **{}** | **{}** |", s.pass, s.fail, s.warn, s.not_run);
}

fn failure(out: &mut String, facts: &RunFacts, verdict: &Verdict) {
    let level = if verdict.level == Level::Must { "MUST" } else { "SHOULD" };
    let _ = writeln!(
        out,
        "#### `{}` — SPEC {} {level}\n\n{}\n",
        verdict.id,
        inline(verdict.clause),
        inline(verdict.description)
    );
    for (label, text) in [("Expected", &verdict.expected), ("Actual", &verdict.actual)] {
        if let Some(text) = text {
            let _ = writeln!(out, "{label}:\n\n{}", fenced("text", &cap(text, TEXT_CAP)));
        }
    }
    let _ = writeln!(out, "Replay:\n\n{}", fenced("sh", &facts.replay(verdict)));
    if let Some(note) = facts.replay_note() {
        let _ = writeln!(out, "{}\n", inline(&note));
    }
}

/// The cases not run, one line per reason (against `--url`, many share one).
fn not_run(out: &mut String, verdicts: &[Verdict]) {
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    for verdict in verdicts.iter().filter(|v| v.outcome == Outcome::NotRun) {
        let why = verdict.actual.clone().unwrap_or_default();
        match reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, ids)) => ids.push(verdict.id),
            None => reasons.push((why, vec![verdict.id])),
        }
    }
    if reasons.is_empty() {
        return;
    }
    let count: usize = reasons.iter().map(|(_, ids)| ids.len()).sum();
    let _ = writeln!(out, "\n### Not run: {count}\n\n<details><summary>Why, by reason</summary>\n");
    for (why, ids_of) in reasons {
        if out.len() > SIZE_CAP {
            let _ = writeln!(out, "- … more reasons, not shown (the HTML and JSON reports have every one)");
            break;
        }
        let _ = writeln!(out, "- {} ({}): {}", inline(&cap(&why, 300)), ids_of.len(), ids(&ids_of));
    }
    let _ = writeln!(out, "\n</details>");
}

/// Case ids as code, at most [`IDS_CAP`] of them.
fn ids(ids: &[&str]) -> String {
    let mut shown: Vec<String> = ids.iter().take(IDS_CAP).map(|id| format!("`{}`", id.replace('`', "'"))).collect();
    if ids.len() > IDS_CAP {
        shown.push(format!("and {} more", ids.len() - IDS_CAP));
    }
    shown.join(", ")
}

/// At most `max` characters of `text`, with a note of how many more there were.
fn cap(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n… ({} more characters, in the HTML and JSON reports)", total - max)
}

/// `text` as a fenced code block: nothing inside is read as Markdown or HTML.
fn fenced(info: &str, text: &str) -> String {
    let text = clean(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{}\n{fence}\n", text.trim_end_matches('\n'))
}

/// `text` on one line, with every character Markdown or HTML could read as syntax escaped.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in clean(text).chars().enumerate() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '(' | ')' | '|' | '~' | '&' | '@' => {
                out.push('\\');
                out.push(c);
            }
            // A list item or a heading only at the start of a line.
            '#' | '+' | '-' if at == 0 => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Control characters (but line breaks and tabs) as U+FFFD.
fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_control() && !matches!(c, '\n' | '\t') { '\u{fffd}' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn verdict(id: &'static str, clause: &'static str, outcome: Outcome) -> Verdict {
        Verdict {
            id,
            clause,
            level: if outcome == Outcome::Warn { Level::Should } else { Level::Must },
            description: "what is checked",
            scenario: "s",
            outcome,
            expected: (outcome != Outcome::Pass && outcome != Outcome::NotRun).then(|| "a 404".into()),
            actual: match outcome {
                Outcome::Pass => None,
                Outcome::NotRun => Some("needs a server the harness starts".into()),
                _ => Some("<img src=x onerror=alert(1)> & ```\n| a | table |".into()),
            },
            transcript: Vec::new(),
            ms: 1,
        }
    }

    fn facts() -> RunFacts {
        RunFacts::new(&Target::Spawn { template: "./srv --port {port}".into() }, 0x5eed, 48, None)
    }

    fn run() -> Vec<Verdict> {
        vec![
            verdict("health.shape", "3.1", Outcome::Pass),
            verdict("tool-media.name", "9.2", Outcome::Fail),
            verdict("tool-media.etag", "9.4", Outcome::Pass),
            verdict("page.fits", "13.5", Outcome::NotRun),
            verdict("gen.lifting-model", "11.2", Outcome::Fail),
            verdict("lift.scan", "11.6", Outcome::Warn),
        ]
    }

    #[test]
    fn the_counts_are_by_section_and_in_all() {
        let text = markdown(&facts(), &run(), None);
        assert!(text.starts_with("## mediacheck failed: 2 passed, 2 failed, 1 warnings, 1 not run\n"), "{text}");
        for row in [
            "| 3 | Health and status | 1 | 0 | 0 | 0 |",
            "| 9 | GET /tool-media | 1 | 1 | 0 | 0 |",
            "| 11 | Pictures handed back as text | 0 | 1 | 1 | 0 |",
            "| 13 | The chat page | 0 | 0 | 0 | 1 |",
            "| | **all** | **2** | **2** | **1** | **1** |",
        ] {
            assert!(text.contains(row), "no row {row}:\n{text}");
        }
        assert!(text.contains("> 1 of 6 not run: not a conformance claim"), "{text}");
    }

    #[test]
    fn every_failure_and_warning_has_its_clause_expected_actual_and_replay() {
        let text = markdown(&facts(), &run(), None);
        assert!(text.contains("### Failures (MUST not met): 2"), "{text}");
        assert!(text.contains("#### `tool-media.name` — SPEC 9.2 MUST"), "{text}");
        assert!(text.contains("#### `lift.scan` — SPEC 11.6 SHOULD"), "{text}");
        assert!(text.contains("mediacheck run --only tool-media.name --spawn './srv --port {port}'\n"), "{text}");
        assert!(text.contains("--only gen.lifting-model --spawn './srv --port {port}' --seed 0x5eed --gen-budget 48"));
        assert_eq!(text.matches("Expected:\n\n```text\na 404\n```").count(), 3, "{text}");
        assert!(text.contains("- needs a server the harness starts (1): `page.fits`"), "{text}");
        assert!(!text.contains("health.shape"), "a pass is only counted: {text}");
    }

    #[test]
    fn hostile_text_stays_inside_a_longer_fence_or_is_escaped() {
        let mut hostile = verdict("x.y", "9.2", Outcome::Fail);
        hostile.description = "a <b>description</b> | with [a](link)";
        let text = markdown(&facts(), &[hostile], None);
        assert!(text.contains("\n````text\n<img src=x onerror=alert(1)> & ```\n| a | table |\n````\n"), "{text}");
        assert!(text.contains("a \\<b\\>description\\</b\\> \\| with \\[a\\]\\(link\\)"), "{text}");
        let outside_fences: String = text.split("````").step_by(2).collect();
        assert!(!outside_fences.contains("<img") && !outside_fences.contains("<b>"), "{outside_fences}");
        assert_eq!(inline("a\u{1b}[31m\nb"), "a\u{fffd}\\[31m b");
        assert_eq!(inline("- a-b # c"), "\\- a-b # c");
    }

    #[test]
    fn a_long_text_is_cut_and_a_long_run_names_the_failures_it_leaves_out() {
        let mut long = verdict("x.long", "9.2", Outcome::Fail);
        long.actual = Some("é".repeat(TEXT_CAP + 10));
        let text = markdown(&facts(), std::slice::from_ref(&long), None);
        assert!(text.contains("… (10 more characters, in the HTML and JSON reports)"), "{}", text.len());
        let many: Vec<Verdict> = (0..200).map(|_| long.clone()).collect();
        let text = markdown(&facts(), &many, None);
        assert!(text.len() < SIZE_CAP + 8 * 1024, "{}", text.len());
        assert!(text.contains("more, not shown: this summary stops at 64 KiB"), "{text}");
    }

    /// The headline and the sentence under it.
    fn headline(text: &str) -> (&str, &str) {
        let mut lines = text.lines();
        (lines.next().unwrap_or(""), lines.nth(1).unwrap_or(""))
    }

    #[test]
    fn the_headline_follows_the_exit_code_with_a_stale_baseline_entry_and_under_strict() {
        let passing =
            vec![verdict("health.shape", "3.1", Outcome::Pass), verdict("tool-media.etag", "9.4", Outcome::Pass)];
        let text = markdown(&facts(), &passing, None);
        assert_eq!(
            headline(&text),
            (
                "## mediacheck passed: 2 passed, 0 failed, 0 warnings, 0 not run",
                "**Passed \\(exit 0\\): no MUST case failed**"
            )
        );
        let stale = crate::baseline::compare(&passing, &["tool-media.etag".to_string()].into());
        let text = markdown(&facts(), &passing, Some(&stale));
        assert_eq!(headline(&text).0, "## mediacheck failed: 2 passed, 0 failed, 0 warnings, 0 not run", "{text}");
        assert!(headline(&text).1.starts_with("**Failed \\(exit 1\\): 1 baseline entry is stale"), "{text}");
        let mut partial = passing.clone();
        partial.push(verdict("page.fits", "13.5", Outcome::NotRun));
        assert!(headline(&markdown(&facts(), &partial, None)).0.starts_with("## mediacheck passed: "));
        let text = markdown(&facts().with_strict(true), &partial, None);
        assert_eq!(headline(&text).0, "## mediacheck failed: 2 passed, 0 failed, 0 warnings, 1 not run", "{text}");
        assert!(headline(&text).1.contains("1 case was not run, and --strict fails"), "{text}");
        let expected = crate::baseline::compare(&run(), &["tool-media.name".into(), "gen.lifting-model".into()].into());
        assert!(markdown(&facts(), &run(), Some(&expected)).starts_with("## mediacheck passed: 2 passed, 2 failed"));
    }

    #[test]
    fn against_a_server_with_a_key_the_replay_says_where_the_key_comes_from() {
        let url = Target::Url { base: "http://h:1".into(), api_key: Some("sekrit".into()) };
        let text = markdown(&RunFacts::new(&url, 1, 2, None), &run(), None);
        assert!(text.contains("```sh\nmediacheck run --only tool-media.name --url http://h:1\n```\n"), "{text}");
        assert!(text.contains("reads the server's key from $MEDIACHECK\\_API\\_KEY: set it first"), "{text}");
        assert!(!text.contains("sekrit") && !text.contains("--api-key"), "{text}");
    }

    #[test]
    fn a_baseline_is_summarised() {
        let comparison = Comparison { stale: vec!["a.b".into()], ..Comparison::default() };
        let text = markdown(&facts(), &run(), Some(&comparison));
        assert!(text.contains("- baseline: STALE entries \\(these pass now; remove them\\): a.b"), "{text}");
    }
}
