//! SPEC 13.2's tool block in a real browser, read once at 768 px through the contract's marks only:
//! what each block says collapsed (its visible text: the summary of a `<details>`, or what an
//! `aria-expanded` element shows) and opened, compared with the `start`/`result` events of the stream
//! the page was sent (which the recording proxy keeps): the tool's own name, its server, its state as
//! a word, its time against the result's `ms`, the labels, the result's length and whether it was cut.

use serde_json::{Value, json};

use super::common::call;
use super::page_visit::{ECHOED, Visit, at_768, page};
use crate::browser::page::{js, no_debris, open_every_tool_with_results, sel, send, tools_settled, wait_until};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{Scenario, own};
use crate::sse::EventStream;

/// The cap the scenario sets on result text: `big`'s 3,000 characters are cut, no other result is.
const CAP: u64 = 2000;

/// One round of five calls (echo, which answers its text; add, whose answer is not its arguments;
/// fail, an error result; sleep, which takes 1.45 s (over a second, with a fraction: a whole-seconds time is seen); big, cut for the model), then a pass that calls
/// echo again past `max_rounds` 1: four Done blocks, an Error and a Not run.
const TOOL_BLOCKS: Scenario = own("page-tool-blocks", || {
    page(vec![
        fixtures::scripts::calls_script(&[
            ("fake__echo", &[("text", ECHOED)]),
            ("fake__add", &[("a", "1234567"), ("b", "7654321")]),
            ("fake__fail", &[]),
            ("fake__sleep", &[("seconds", "1.45")]),
            ("fake__big", &[("n", "3000")]),
        ]),
        call("echo", &[("text", "past the limit")]),
    ])
    .set("mcp", "max_rounds", json!(1))
    .set("mcp", "max_result_chars", json!(CAP))
});

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.tool-blocks-show-the-call",
        "13.2",
        Must,
        TOOL_BLOCKS,
        "four Done calls, an Error and a Not run: each collapsed block shows its tool by its own name, its server, its state as a word (Done, Error, Not run) and, when it ran, its time as the result's ms (a 1.45 s sleep); opened, its arguments and result text (non-ASCII intact) under the labels Arguments and Result or Error, the result's length in characters and, for the one cut for the model, the word cut; nothing reads undefined or NaN",
        tool_blocks_show_the_call,
        [
            "page-tool-server-hidden",
            "page-error-shown-done",
            "page-arguments-hidden",
            "page-time-hidden",
            "page-time-in-thousands",
            "page-time-whole-seconds",
            "page-skipped-calls-timed",
            "page-tool-named-as-the-model-wrote",
            "page-result-labels-missing",
            "page-result-length-missing",
            "page-cut-results-not-said",
            "page-result-length-unworded",
            "page-error-result-unlabelled"
        ]
    )]
}

async fn tool_blocks_show_the_call(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.tool-blocks-show-the-call", |visit| Box::pin(tool_blocks_at(visit))).await
}

/// What the stream said of one call: its `ms`, `chars` and `truncated`, from its `result` event.
#[derive(Debug, Default, Clone)]
struct Said {
    ms: f64,
    chars: u64,
    truncated: bool,
}

/// The calls of the page's first chat request, in the order their `start` events came, with what
/// their `result` events said.
fn calls_said(visit: &Visit<'_>) -> Vec<Said> {
    let answer = visit
        .proxy
        .log()
        .iter()
        .find(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .map(|r| r.answer_text())
        .unwrap_or_default();
    let events = EventStream::parse(&answer).mcp_events();
    let ids: Vec<Value> = events.iter().filter(|e| e["event"] == "start").map(|e| e["id"].clone()).collect();
    ids.iter()
        .map(|id| {
            events.iter().find(|e| e["event"] == "result" && &e["id"] == id).map_or_else(Said::default, |e| Said {
                ms: e["ms"].as_f64().unwrap_or(f64::NAN),
                chars: e["chars"].as_u64().unwrap_or(0),
                truncated: e["truncated"] == json!(true),
            })
        })
        .collect()
}

async fn tool_blocks_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Echo and fail").await?;
    wait_until(visit.client(), &tools_settled(6), 30, "six tool blocks settled and the turn over").await?;
    no_debris(visit.client(), "the tool blocks, collapsed").await?;
    let read = format!(
        "return [...document.querySelectorAll('{}')].map(t => ({{ state: t.dataset.state, text: t.innerText, \
         name: (t.querySelector('{}') || {{ textContent: '' }}).textContent.trim() }}));",
        sel("tool"),
        sel("tool-name")
    );
    let collapsed = js(visit.client(), &read).await?;
    open_every_tool_with_results(visit.client()).await?;
    no_debris(visit.client(), "the tool blocks, opened").await?;
    let opened = js(visit.client(), &read).await?;
    let said = calls_said(visit);
    expect_eq("calls the stream started", 6, said.len())?;
    // (state, tool, the state's word, ran, an argument's text, the result's text); a call past the
    // limit was never run, so the page was never sent its arguments or its server's name for it.
    let expected = [
        ("done", "echo", "Done", true, ECHOED, ECHOED),
        ("done", "add", "Done", true, "7654321", "8888888"),
        ("error", "fail", "Error", true, "", "it failed on purpose"),
        ("done", "sleep", "Done", true, "1.45", "slept"),
        ("done", "big", "Done", true, "3000", "yyyyyyyy"),
        ("skipped", "echo", "Not run", false, "", ""),
    ];
    for (i, (state, tool, word, ran, argument, result)) in expected.into_iter().enumerate() {
        let block = format!("tool block {} ({tool}, {state})", i + 1);
        expect_eq(&format!("{block}: data-state"), json!(state), collapsed[i]["state"].clone())?;
        let summary = collapsed[i]["text"].as_str().unwrap_or_default();
        let whole = opened[i]["text"].as_str().unwrap_or_default();
        if !ran {
            expect(summary.contains(tool), format!("{block}, collapsed, names the tool: {tool:?}"), summary)?;
            expect(summary.contains(word), format!("{block}, collapsed, shows its state: {word:?}"), summary)?;
            expect(
                seconds_shown(summary).is_none(),
                format!("{block}, collapsed, shows no time (it never ran)"),
                summary,
            )?;
            continue;
        }
        let name = collapsed[i]["name"].as_str().unwrap_or_default();
        expect_eq(&format!("{block}: its tool-name, the tool's own name"), tool, name)?;
        for (what, wanted) in [("its server", crate::scenario::FIXTURE_SERVER), ("its state", word)] {
            expect(summary.contains(wanted), format!("{block}, collapsed, shows {what}: {wanted:?}"), summary)?;
        }
        let ms = said[i].ms;
        let shown = seconds_shown(summary);
        expect(
            shown.is_some_and(|s| (s - ms / 1000.0).abs() <= 0.1),
            format!("{block}, collapsed, shows its time: the result's {ms} ms, within a tenth of a second"),
            summary,
        )?;
        for (what, wanted) in [("its arguments", argument), ("its result text", result)] {
            expect(whole.contains(wanted), format!("{block}, opened, shows {what}: {wanted:?}"), whole)?;
        }
        // The labels are read in what opening added: the collapsed line already says "Error" as the
        // state, and a result shown without its label must not pass on that word.
        let added = whole.replacen(summary.trim(), "", 1);
        let label = if state == "error" { "Error" } else { "Result" };
        for wanted in ["Arguments", label] {
            expect(
                has_word(&added, wanted),
                format!("{block}, opened, labels its text: {wanted:?} (besides the collapsed line)"),
                whole,
            )?;
        }
        let chars = said[i].chars;
        expect(
            numbers_shown(whole).contains(&chars) && has_word(whole, "characters"),
            format!("{block}, opened, gives the result's length: {chars} characters"),
            whole,
        )?;
        let cut = said[i].truncated;
        expect(
            has_word(&whole.to_lowercase(), "cut") == cut,
            if cut {
                format!("{block}, opened, says its result was cut for the model (\"cut\"; {CAP} of {chars})")
            } else {
                format!("{block}, opened, does not say cut (its result was not)")
            },
            whole,
        )?;
    }
    expect(
        said[4].truncated,
        "the stream's big result cut at the scenario's cap (or the check proves nothing)",
        "not cut",
    )
}

/// Whether `text` holds `word` with no letter or digit right before or after it.
pub(super) fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Every whole number in `text`, digit groups joined (`3,000`, `3 000`, `3.000` and `3000` are 3000).
pub(super) fn numbers_shown(text: &str) -> Vec<u64> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut digits = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let grouping = [',', '.', ' ', '\u{a0}', '\u{202f}', '\''].contains(&c)
            && !digits.is_empty()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit)
            && chars.get(i + 1..i + 4).is_some_and(|g| g.iter().all(char::is_ascii_digit))
            && chars.get(i + 4).is_none_or(|c| !c.is_ascii_digit());
        if c.is_ascii_digit() {
            digits.push(c);
        } else if !grouping {
            numbers.extend(digits.parse::<u64>());
            digits.clear();
        }
    }
    numbers.extend(digits.parse::<u64>());
    numbers
}

/// The first duration in `text`, in seconds: digits (with a decimal part or not), an optional space,
/// then `s` or `ms` as a word of its own.
fn seconds_shown(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).filter(|&i| chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric())).find_map(
        |start| {
            let mut i = start;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let number: f64 = chars[start..i].iter().collect::<String>().parse().ok()?;
            if chars.get(i) == Some(&' ') {
                i += 1;
            }
            let (unit, scale) = if chars.get(i) == Some(&'m') && chars.get(i + 1) == Some(&'s') {
                (2, 0.001)
            } else if chars.get(i) == Some(&'s') {
                (1, 1.0)
            } else {
                return None;
            };
            chars.get(i + unit).is_none_or(|c| !c.is_alphanumeric()).then_some(number * scale)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::{has_word, numbers_shown, seconds_shown};

    #[test]
    fn a_time_is_digits_and_a_unit_as_a_word() {
        for (shown, seconds) in [("0.1 s", 0.1), ("echo fake Done 12 ms", 0.012), ("3s", 3.0), ("Done 0.4 s", 0.4)] {
            assert!(seconds_shown(shown).is_some_and(|s| (s - seconds).abs() < 1e-9), "{shown}");
        }
        for not_shown in ["echo fake Done", "x2s", "12 seconds", "fake2 Done", "5 msg", "s 1"] {
            assert_eq!(seconds_shown(not_shown), None, "{not_shown}");
        }
    }

    #[test]
    fn numbers_join_their_digit_groups_and_words_stand_alone() {
        assert_eq!(numbers_shown("Result · 3,000 characters"), vec![3000]);
        assert_eq!(numbers_shown("3 000 and 3.000 and 0.4 s and 1,5"), vec![3000, 3000, 0, 4, 1, 5]);
        assert_eq!(numbers_shown("a1234567b 21"), vec![1234567, 21]);
        assert!(has_word("Error · 20 characters", "Error"));
        assert!(!has_word("Result6,000", "Result"));
        assert!(!has_word("cutting", "cut"));
    }
}
