//! The HTML report (`run --html FILE`): one self-contained file — inline CSS and script, pictures as
//! `data:` URIs, a Content-Security-Policy that lets nothing else load or run — with every case
//! grouped by SPEC section and a filter by outcome (plain CSS, so it works without script too). Each
//! case that did not pass shows its clause's text from SPEC.md, expected and actual, a generated
//! case's shrunk request and seed, the command that replays it, the last HTTP exchanges, and a page
//! case's screenshots (this run's only). The headline says what the exit code says ([`Judgement`]).
//!
//! Every string from a run is escaped: case output quotes what a server sent, hostile by design. Each
//! text is shown to at most [`excerpt::BOUND`] bytes, with how many were left out.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::excerpt::{self, excerpt};
use super::judgement::Judgement;
use super::replay::{RunFacts, is_generated};
use super::screenshots::{self, Album, CaseShots};
use super::{Summary, by_section, counts_by_section, mark, not_run_line, section_title};
use crate::baseline::Comparison;
use crate::case::Level;
use crate::coverage::{SPEC, clause_text};
use crate::generate::SHRUNK_HEADING;
use crate::runner::{Outcome, Verdict};

/// The page's style sheet, inlined.
const CSS: &str = include_str!("report.css");
/// The page's script, inlined (the filter's count; the filter where CSS `:has()` is missing).
const SCRIPT: &str = include_str!("report.js");
/// The most HTTP exchanges shown for a case (the JSON report has the rest).
const EXCHANGES_SHOWN: usize = 5;
/// The outcomes, in the filter's order, with the word the filter shows.
const OUTCOMES: [(Outcome, &str, &str); 4] = [
    (Outcome::Fail, "fail", "failed (MUST)"),
    (Outcome::Warn, "warn", "warnings (SHOULD)"),
    (Outcome::NotRun, "not-run", "not run"),
    (Outcome::Pass, "pass", "passed"),
];

/// The HTML report, with at most [`screenshots::BUDGET`] bytes of screenshots.
pub fn html(facts: &RunFacts, verdicts: &[Verdict], baseline: Option<&Comparison>) -> String {
    html_with_budget(facts, verdicts, baseline, screenshots::BUDGET)
}

/// The HTML report, with at most `budget` bytes of screenshots.
pub fn html_with_budget(facts: &RunFacts, verdicts: &[Verdict], baseline: Option<&Comparison>, budget: u64) -> String {
    let album =
        facts.screenshots.as_deref().filter(|d| d.is_dir()).map(|d| Album::collect(d, verdicts, budget, facts.started));
    let judgement = Judgement::of(verdicts, baseline, facts.strict);
    let style = format!("{CSS}{}", section_rules(verdicts));
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; \
         style-src '{}'; script-src '{}'; base-uri 'none'; form-action 'none'\">\n\
         <title>mediacheck report — {}</title>\n<style>{style}</style>\n</head>\n<body>\n",
        sha256_source(&style),
        sha256_source(SCRIPT),
        esc(&facts.target)
    );
    header(&mut out, facts, &judgement, album.as_ref());
    let _ = writeln!(out, "<main>");
    counts(&mut out, verdicts, baseline, album.as_ref());
    filter(&mut out, verdicts);
    for (section, in_section) in by_section(verdicts) {
        let _ = writeln!(
            out,
            "<section class=\"spec\" id=\"s{0}\" data-outcomes=\"{1}\" aria-labelledby=\"s{0}-h\">\n\
             <h2 id=\"s{0}-h\">§{0} {2}</h2>\n<ol class=\"cases\">",
            esc(section),
            outcome_set(&in_section),
            esc(section_title(section))
        );
        for verdict in in_section {
            case(&mut out, facts, verdict, album.as_ref().and_then(|a| a.of(verdict.id)));
        }
        let _ = writeln!(out, "</ol>\n</section>");
    }
    let _ = write!(out, "</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

fn header(out: &mut String, facts: &RunFacts, judgement: &Judgement, album: Option<&Album>) {
    let sentence = judgement.sentence();
    let headline = sentence.get(..1).map(|first| first.to_uppercase() + &sentence[1..]).unwrap_or_default();
    let _ = writeln!(
        out,
        "<header>\n<h1>mediacheck conformance report</h1>\n<p class=\"verdict\" data-verdict=\"{}\">{}</p>\n\
         <dl class=\"facts\">\n<dt>Target</dt><dd><code>{}</code></dd>\n<dt>Generated cases</dt><dd>seed \
         <code>{:#x}</code>, {} requests each</dd>",
        judgement.word(),
        esc(&headline),
        esc(&facts.target),
        facts.seed,
        facts.gen_budget
    );
    if let Some(album) = album {
        let _ = writeln!(out, "<dt>Screenshots</dt><dd><code>{}</code></dd>", esc(&album.dir.display().to_string()));
    }
    let _ = writeln!(out, "</dl>\n</header>");
}

fn counts(out: &mut String, verdicts: &[Verdict], baseline: Option<&Comparison>, album: Option<&Album>) {
    let _ = writeln!(
        out,
        "<section aria-labelledby=\"counts-h\">\n<h2 id=\"counts-h\">Counts by SPEC section</h2>\n<table>\n\
         <thead><tr><th scope=\"col\">§</th><th scope=\"col\" class=\"title\">Section</th><th scope=\"col\">pass</th>\
         <th scope=\"col\">fail</th><th scope=\"col\">warn</th><th scope=\"col\">not run</th></tr></thead>\n<tbody>"
    );
    for (section, title, s) in counts_by_section(verdicts) {
        let _ = writeln!(
            out,
            "<tr><td>{0}</td><td class=\"title\">{1}</td><td>{2}</td><td>{3}</td><td>{4}</td><td>{5}</td></tr>",
            esc(section),
            esc(title),
            s.pass,
            s.fail,
            s.warn,
            s.not_run
        );
    }
    let s = Summary::of(verdicts);
    let _ = writeln!(
        out,
        "</tbody>\n<tfoot><tr><th scope=\"row\" colspan=\"2\">all {}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\
         </tfoot>\n</table>",
        verdicts.len(),
        s.pass,
        s.fail,
        s.warn,
        s.not_run
    );
    if s.not_run > 0 {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&not_run_line(s.not_run, verdicts.len())));
    }
    if let Some(comparison) = baseline {
        let lines: String =
            super::baseline_summary(comparison).lines().map(|l| format!("<li>{}</li>", esc(l))).collect();
        let _ = writeln!(out, "<ul class=\"baseline\">{lines}</ul>");
    }
    if let Some(album) = album.filter(|a| a.left_out > 0) {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} screenshots ({:.1} MiB) are not in this page: it holds at most {:.0} MiB of them, \
             the cases that did not pass first. Every one is in {}.</p>",
            album.left_out,
            album.left_out_bytes as f64 / f64::from(1 << 20),
            album.budget as f64 / f64::from(1 << 20),
            esc(&album.dir.display().to_string())
        );
    }
    if let Some(album) = album.filter(|a| a.older > 0) {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} screenshots in {} are from an earlier run (written before this one began) and are \
             not shown.</p>",
            album.older,
            esc(&album.dir.display().to_string())
        );
    }
    let _ = writeln!(out, "</section>");
}

fn filter(out: &mut String, verdicts: &[Verdict]) {
    let _ = writeln!(out, "<fieldset class=\"filter\">\n<legend>Show the cases that</legend>");
    for (outcome, value, words) in OUTCOMES {
        let n = verdicts.iter().filter(|v| v.outcome == outcome).count();
        let _ = writeln!(
            out,
            "<label><input type=\"checkbox\" id=\"show-{value}\" value=\"{value}\" data-filter checked> {words} ({n})</label>"
        );
    }
    let _ = writeln!(out, "</fieldset>\n<p id=\"shown\" role=\"status\">{0} of {0} cases shown</p>", verdicts.len());
}

fn case(out: &mut String, facts: &RunFacts, verdict: &Verdict, shots: Option<&CaseShots>) {
    let level = if verdict.level == Level::Must { "MUST" } else { "SHOULD" };
    let value = OUTCOMES.iter().find(|(o, _, _)| *o == verdict.outcome).map_or("pass", |(_, v, _)| v);
    let _ = writeln!(
        out,
        "<li class=\"case\" id=\"case-{0}\" data-outcome=\"{1}\">\n<h3><span class=\"badge\">{2}</span> \
         <code>{0}</code></h3>\n<p class=\"meta\">SPEC {3} {level} · scenario {4} · {5} ms</p>\n<p>{6}</p>",
        esc(verdict.id),
        value,
        esc(mark(verdict.outcome)),
        esc(verdict.clause),
        esc(verdict.scenario),
        verdict.ms,
        esc(verdict.description)
    );
    match verdict.outcome {
        Outcome::Pass => {}
        Outcome::NotRun => {
            let why = verdict.actual.as_deref().unwrap_or("(no reason given)");
            let _ = writeln!(out, "<p><strong>Not run:</strong> {}</p>", esc(&excerpt(why, excerpt::BOUND)));
        }
        Outcome::Fail | Outcome::Warn => failure(out, facts, verdict),
    }
    if let Some(shots) = shots {
        pictures(out, verdict, shots);
    }
    let _ = writeln!(out, "</li>");
}

fn failure(out: &mut String, facts: &RunFacts, verdict: &Verdict) {
    let _ = writeln!(
        out,
        "<details open>\n<summary>Why it {}</summary>",
        if verdict.outcome == Outcome::Fail { "failed" } else { "is a warning" }
    );
    if let Some(text) = clause_text(SPEC, verdict.clause) {
        let _ = writeln!(out, "<blockquote><strong>SPEC {}</strong> {}</blockquote>", esc(verdict.clause), esc(&text));
    }
    let actual = verdict.actual.as_deref().unwrap_or("");
    let (actual, shrunk) = match actual.split_once(&format!("\n{SHRUNK_HEADING}\n")) {
        Some((why, shrunk)) => (why, Some(shrunk)),
        None => (actual, None),
    };
    let _ = writeln!(out, "<dl class=\"outcome\">");
    for (label, text) in [("Expected", verdict.expected.as_deref()), ("Actual", Some(actual))] {
        if let Some(text) = text {
            let _ = writeln!(out, "<dt>{label}</dt><dd><pre>{}</pre></dd>", esc(&excerpt(text, excerpt::BOUND)));
        }
    }
    let _ = writeln!(out, "</dl>");
    if let Some(shrunk) = shrunk {
        let _ = writeln!(
            out,
            "<h4>Smallest failing request (shrunk)</h4>\n<pre>{}</pre>",
            esc(&excerpt(shrunk, excerpt::BOUND))
        );
    }
    if is_generated(verdict) {
        let _ = writeln!(
            out,
            "<p>Seed <code>{:#x}</code>, {} generated requests (<code>--seed {:#x} --gen-budget {}</code>).</p>",
            facts.seed, facts.gen_budget, facts.seed, facts.gen_budget
        );
    }
    let _ = writeln!(out, "<h4>Replay</h4>\n<pre><code>{}</code></pre>", esc(&facts.replay(verdict)));
    if let Some(note) = facts.replay_note() {
        let _ = writeln!(out, "<p>{}</p>", esc(&note));
    }
    let transcript = &verdict.transcript;
    if !transcript.is_empty() {
        let first = transcript.len().saturating_sub(EXCHANGES_SHOWN);
        let _ = writeln!(
            out,
            "<h4>The last HTTP exchanges ({} of {})</h4>\n<ol class=\"exchanges\" start=\"{}\">",
            transcript.len() - first,
            transcript.len(),
            first + 1
        );
        for exchange in &transcript[first..] {
            let headers: String = exchange.headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
            let _ = writeln!(
                out,
                "<li><pre>{} → {}\n{}\n{}</pre></li>",
                esc(&excerpt(&exchange.request, excerpt::BOUND)),
                exchange.status,
                esc(&excerpt(&headers, excerpt::BOUND)),
                esc(&excerpt(&exchange.body, excerpt::BOUND))
            );
        }
        let _ = writeln!(out, "</ol>");
    }
    let _ = writeln!(out, "</details>");
}

fn pictures(out: &mut String, verdict: &Verdict, shots: &CaseShots) {
    let open = if verdict.outcome == Outcome::Pass { "" } else { " open" };
    let _ =
        writeln!(out, "<details{open}>\n<summary>Screenshots ({})</summary>\n<div class=\"shots\">", shots.shown.len());
    for shot in &shots.shown {
        let label = shot.name.trim_end_matches(".png").replacen('-', " px, ", 1);
        let _ = writeln!(
            out,
            "<figure><img src=\"{}\" alt=\"{} at {}\"><figcaption>{}</figcaption></figure>",
            esc(&shot.data_uri),
            esc(verdict.id),
            esc(&label),
            esc(&label)
        );
    }
    let _ = writeln!(out, "</div>");
    if shots.left_out > 0 {
        let _ =
            writeln!(out, "<p class=\"note\">{} more not in this page (see the note at the top).</p>", shots.left_out);
    }
    let _ = writeln!(out, "</details>");
}

/// The outcomes a section holds, as its `data-outcomes` (sorted, space-separated).
fn outcome_set(verdicts: &[&Verdict]) -> String {
    let set: BTreeSet<&str> =
        verdicts.iter().filter_map(|v| OUTCOMES.iter().find(|(o, _, _)| *o == v.outcome).map(|(_, n, _)| *n)).collect();
    set.into_iter().collect::<Vec<_>>().join(" ")
}

/// For each set of outcomes a section holds, the rule that hides the section when the filter shows
/// none of them.
fn section_rules(verdicts: &[Verdict]) -> String {
    let sets: BTreeSet<String> = by_section(verdicts).iter().map(|(_, v)| outcome_set(v)).collect();
    sets.iter()
        .map(|set| {
            let unchecked: String = set.split(' ').map(|o| format!(":has(#show-{o}:not(:checked))")).collect();
            format!("body{unchecked} section.spec[data-outcomes=\"{set}\"] {{ display: none; }}\n")
        })
        .collect()
}

/// A CSP source naming `text` by its SHA-256 (`sha256-…`).
fn sha256_source(text: &str) -> String {
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes())))
}

/// `text` escaped for HTML text and attribute values; control characters (but line breaks and tabs)
/// as U+FFFD.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Exchange;
    use crate::target::Target;

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    fn verdict(id: &'static str, clause: &'static str, outcome: Outcome) -> Verdict {
        Verdict {
            id,
            clause,
            level: if outcome == Outcome::Warn { Level::Should } else { Level::Must },
            description: "what is checked",
            scenario: "basic",
            outcome,
            expected: matches!(outcome, Outcome::Fail | Outcome::Warn).then(|| "a 404".into()),
            actual: match outcome {
                Outcome::Pass => None,
                Outcome::NotRun => Some("needs a server the harness starts".into()),
                _ => Some(format!("{HOSTILE} & \"quoted\" 'too'")),
            },
            transcript: Vec::new(),
            ms: 3,
        }
    }

    fn facts(screenshots: Option<std::path::PathBuf>) -> RunFacts {
        let target = Target::Spawn { template: format!("./srv {HOSTILE} --port {{port}}") };
        RunFacts::new(&target, 0x5eed, 48, screenshots)
    }

    fn run() -> Vec<Verdict> {
        let mut failed = verdict("tool-media.name", "9.2", Outcome::Fail);
        failed.transcript = (0..7)
            .map(|i| Exchange {
                request: format!("GET /tool-media/{i}{HOSTILE}"),
                status: 404,
                headers: vec![("x-evil".into(), HOSTILE.into())],
                body: format!("{{\"error\":\"{HOSTILE}\"}}"),
            })
            .collect();
        let mut generated = verdict("gen.lifting-model", "11.2", Outcome::Fail);
        generated.actual = Some(format!("the prompt grew by 3\n{SHRUNK_HEADING}\nuser: {HOSTILE}"));
        vec![
            verdict("health.shape", "3.1", Outcome::Pass),
            failed,
            verdict("page.fits-every-width", "13.5", Outcome::NotRun),
            generated,
            verdict("lift.scan-is-linear", "11.6", Outcome::Warn),
        ]
    }

    /// The text of every tag (`<…>`): escaped text never holds a `<`, so each is the report's own.
    fn tags(page: &str) -> Vec<&str> {
        page.split('<').skip(1).map(|rest| &rest[..rest.find('>').unwrap_or(rest.len())]).collect()
    }

    #[test]
    fn every_string_from_the_run_is_escaped() {
        let page = html(&facts(None), &run(), None);
        assert!(!page.contains(HOSTILE), "{page}");
        assert!(!tags(&page).iter().any(|t| t.contains("onerror") || t.starts_with("img src=x")), "{page}");
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot; &#39;too&#39;"), "{page}");
        assert!(page.contains("x-evil: &lt;img src=x onerror=alert(1)&gt;"), "{page}");
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert_eq!(esc("a\u{1b}[0m\u{0}b\n"), "a\u{fffd}[0m\u{fffd}b\n");
    }

    #[test]
    fn every_case_is_listed_under_its_section_with_the_counts() {
        let verdicts = run();
        let page = html(&facts(None), &verdicts, None);
        for v in &verdicts {
            let value = OUTCOMES.iter().find(|(o, _, _)| *o == v.outcome).map(|(_, n, _)| *n).expect("an outcome");
            assert_eq!(page.matches(&format!("id=\"case-{}\" data-outcome=\"{value}\"", v.id)).count(), 1, "{}", v.id);
        }
        let sections: Vec<&str> =
            page.match_indices("<section class=\"spec\" id=\"s").map(|(i, _)| &page[i + 29..i + 33]).collect();
        assert_eq!(sections.len(), 4, "{sections:?}");
        assert!(page.contains("id=\"s11\" data-outcomes=\"fail warn\""), "{page}");
        assert!(page.contains(
            "<tr><td>11</td><td class=\"title\">Pictures handed back as text</td><td>0</td><td>1</td><td>1</td><td>0</td></tr>"
        ));
        assert!(page.contains("<th scope=\"row\" colspan=\"2\">all 5</th><td>1</td><td>2</td><td>1</td><td>1</td>"));
        assert!(page.contains("data-filter checked> failed (MUST) (2)</label>"), "{page}");
        assert!(page.contains(
            "body:has(#show-fail:not(:checked)):has(#show-warn:not(:checked)) section.spec[data-outcomes=\"fail warn\"]"
        ));
        assert!(page.contains(&not_run_line(1, 5)), "{page}");
    }

    #[test]
    fn a_failure_has_its_clause_text_replay_exchanges_and_a_generated_case_its_shrunk_request() {
        let page = html(&facts(None), &run(), None);
        assert!(page.contains("<strong>SPEC 9.2</strong> MUST: The name must match"), "{page}");
        assert!(page.contains("mediacheck run --only tool-media.name --spawn &#39;./srv &lt;img"), "{page}");
        assert!(page.contains("The last HTTP exchanges (5 of 7)</h4>\n<ol class=\"exchanges\" start=\"3\">"), "{page}");
        assert!(page.contains("GET /tool-media/6&lt;img") && !page.contains("GET /tool-media/1&lt;"), "{page}");
        assert!(page.contains("<h4>Smallest failing request (shrunk)</h4>\n<pre>user: &lt;img"), "{page}");
        assert!(page.contains("<pre>the prompt grew by 3</pre>"), "{page}");
        assert!(page.contains("(<code>--seed 0x5eed --gen-budget 48</code>)"), "{page}");
        assert!(page.contains("<strong>Not run:</strong> needs a server the harness starts"), "{page}");
    }

    #[test]
    fn the_page_loads_nothing_and_runs_only_its_own_script_and_style() {
        let page = html(&facts(None), &run(), Some(&Comparison::default()));
        for tag in tags(&page) {
            let lower = tag.to_ascii_lowercase();
            assert!(!lower.contains("http:") && !lower.contains("https:") && !lower.contains("//"), "<{tag}>");
            for attribute in [" src=\"", " href=\""] {
                if let Some(at) = lower.find(attribute) {
                    assert!(lower[at + attribute.len()..].starts_with("data:"), "<{tag}>");
                }
            }
            assert!(
                !lower.starts_with("link") && !lower.starts_with("iframe") && !lower.starts_with("object"),
                "<{tag}>"
            );
        }
        assert!(!page.contains("@import") && !page.contains("url("));
        let inline = |open: &str, close: &str| {
            let start = page.find(open).expect("the element") + open.len();
            page[start..start + page[start..].find(close).expect("its end")].to_string()
        };
        let policy = inline("Content-Security-Policy\" content=\"", "\"");
        assert!(policy.starts_with("default-src 'none'; img-src data:;"), "{policy}");
        assert!(policy.contains(&sha256_source(&inline("<script>", "</script>"))), "{policy}");
        assert!(policy.contains(&sha256_source(&inline("<style>", "</style>"))), "{policy}");
    }

    /// The headline: the verdict paragraph's text.
    fn headline(page: &str) -> &str {
        let start = page.find("<p class=\"verdict\"").expect("a verdict");
        let start = start + page[start..].find('>').expect("its tag's end") + 1;
        &page[start..start + page[start..].find("</p>").expect("its end")]
    }

    #[test]
    fn the_headline_follows_the_exit_code_with_a_stale_baseline_entry_and_under_strict() {
        let passing =
            vec![verdict("health.shape", "3.1", Outcome::Pass), verdict("errors.json-404", "3.4", Outcome::Pass)];
        let page = html(&facts(None), &passing, None);
        assert_eq!(headline(&page), "Passed (exit 0): no MUST case failed");
        let stale = crate::baseline::compare(&passing, &["errors.json-404".to_string()].into());
        let page = html(&facts(None), &passing, Some(&stale));
        assert!(page.contains("<p class=\"verdict\" data-verdict=\"failed\">"), "{page}");
        assert!(headline(&page).starts_with("Failed (exit 1): 1 baseline entry is stale"), "{}", headline(&page));
        let mut partial = passing.clone();
        partial.push(verdict("page.fits-every-width", "13.5", Outcome::NotRun));
        assert!(headline(&html(&facts(None), &partial, None)).starts_with("Passed (exit 0)"));
        let page = html(&facts(None).with_strict(true), &partial, None);
        assert!(
            headline(&page).starts_with("Failed (exit 1): 1 case was not run, and --strict"),
            "{}",
            headline(&page)
        );
        let expected = crate::baseline::compare(&run(), &["tool-media.name".into(), "gen.lifting-model".into()].into());
        let page = html(&facts(None), &run(), Some(&expected));
        assert_eq!(headline(&page), "Passed (exit 0): no MUST case failed but the 2 the baseline lists");
    }

    #[test]
    fn an_answer_of_10_mb_becomes_a_bounded_excerpt_that_says_what_it_left_out() {
        let mut huge = verdict("tool-media.name", "9.2", Outcome::Fail);
        huge.actual = Some("A".repeat(10 << 20));
        huge.expected = Some(format!("x{}", "é".repeat(6 << 20)));
        huge.transcript = vec![Exchange {
            request: format!("GET /{}", "r".repeat(1 << 20)),
            status: 200,
            headers: Vec::new(),
            body: "b".repeat(1 << 20),
        }];
        let page = html(&facts(None), &[huge], None);
        assert!(page.len() < 512 * 1024, "{} bytes", page.len());
        assert!(page.contains("… 10,420,224 bytes more not shown (of 10,485,760"), "the actual");
        assert!(page.contains("… 12,517,378 bytes more not shown (of 12,582,913"), "the expected, never half an é");
        assert_eq!(page.matches("bytes more not shown").count(), 4, "the exchange's request and body too");
    }

    #[test]
    fn a_screenshots_folder_used_again_shows_only_this_runs_pictures_and_counts_the_older() {
        let dir = tempfile::tempdir().expect("a folder");
        let case = dir.path().join("page.fits-every-width");
        std::fs::create_dir_all(&case).expect("case folder");
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(600, 7);
        std::fs::write(case.join("320-collapsed.png"), &png).expect("an earlier run's");
        let earlier = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(case.join("320-collapsed.png"))
            .and_then(|f| f.set_modified(earlier))
            .expect("its time set");
        let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        std::fs::write(case.join("390-collapsed.png"), &png).expect("this run's");
        let page = html(&facts(Some(dir.path().to_path_buf())).started_at(started), &run(), None);
        assert_eq!(page.matches("<img src=\"data:image/png;base64,").count(), 1, "{page}");
        assert!(page.contains("alt=\"page.fits-every-width at 390 px, collapsed\""), "{page}");
        assert!(page.contains("1 screenshots in ") && page.contains("are from an earlier run"), "{page}");
    }

    #[test]
    fn screenshots_are_inlined_within_the_budget_and_the_rest_is_named() {
        let dir = tempfile::tempdir().expect("a folder");
        let case = dir.path().join("page.fits-every-width");
        std::fs::create_dir_all(&case).expect("case folder");
        for name in ["320-collapsed.png", "390-collapsed.png"] {
            let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
            png.resize(600, 7);
            std::fs::write(case.join(name), png).expect("a PNG");
        }
        let page = html_with_budget(&facts(Some(dir.path().to_path_buf())), &run(), None, 1000);
        assert_eq!(page.matches("<img src=\"data:image/png;base64,iVBORw0KGgo").count(), 1, "{page}");
        assert!(page.contains("alt=\"page.fits-every-width at 320 px, collapsed\""), "{page}");
        assert!(page.contains("1 screenshots (0.0 MiB) are not in this page"), "{page}");
        assert!(page.contains("1 more not in this page"), "{page}");
    }
}
