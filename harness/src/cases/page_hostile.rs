//! SPEC 13.22 in a real browser: hostile text on every surface the page draws, shown as its characters.
//!
//! One server and one visit at 768 px serve the five cases (`page_once`): a turn whose
//! reasoning and answer (before and after the calls) are the payloads of `fixtures::hostile_text`,
//! whose five calls go to an MCP server named with them, to tools named and described with them, with
//! an argument, a result, an error and a resource link made of them and two results that are a bare
//! `javascript:` or `data:` URL, on a server whose model is named with them;
//! then a turn the recording proxy refuses with them as the refusal's message; then a reload, which
//! draws the conversation from storage. At each point the page is read by the contract's marks: the
//! text each surface must show (computed here from SPEC 7.1 and 5.6), every element, handler or link
//! a payload would have made (each payload carries its surface's token in them), and the globals the
//! payloads would set. The proxy's log must hold no request a payload would have made. Each case reads
//! its own surfaces in what the visit saw; the page's policy is 13.23's own case (`page_policy`), so a
//! page without one fails that case, not every surface's.

use std::sync::LazyLock;

use fixtures::hostile_text::{RESULT_SURFACE, TOOL_SURFACE, bare_urls, hostile_text, link_uri, token, tool_names};
use serde_json::{Value, json};

use futures::future::BoxFuture;

use super::page_once::{Point, visited};
use super::page_visit::Visit;
use crate::browser::page::{idle, js, open_every_tool_with_results, reload, sel, send, tools_settled, wait_until};
use crate::browser::proxy::Framing;
use crate::case::{Case, CheckError, CheckResult, expect};
use crate::cases::case;
use crate::context::Ctx;
use crate::generate::tool_listing::offered_names;
use crate::scenario::{Reach, Scenario, Serving, Setup};

const ANSWER: &str = "answer";
const REASONING: &str = "reasoning";
const SERVER: &str = "server";
const MODEL: &str = "model";
const NOTE: &str = "note";

/// The refused turn's message: the proxy refuses the request that holds it.
const REFUSED: &str = "Refuse this turn";
/// The refusal's message: the note surface's payloads.
static REFUSAL: LazyLock<String> = LazyLock::new(|| hostile_text(NOTE));

/// The server: the hostile-text MCP server under a hostile name, a model named with payloads, and a
/// pass whose reasoning, text and three calls carry them, then a pass with more text.
fn hostile() -> Setup {
    let exe = crate::running::mediacheck_exe().map_or_else(|_| "mediacheck".to_string(), |p| p.display().to_string());
    let server = hostile_text(SERVER);
    let [echo, fail, link, bare]: [String; 4] =
        offered_names(&server, &tool_names()).try_into().expect("the fixture offers four tools");
    let argument = hostile_text(RESULT_SURFACE);
    let [javascript, data] = bare_urls();
    let calls = fixtures::scripts::calls_script(&[
        (&echo, &[("text", &argument)]),
        (&fail, &[]),
        (&link, &[]),
        (&bare, &[("url", &javascript)]),
        (&bare, &[("url", &data)]),
    ]);
    let first = format!("{}{}", hostile_text(REASONING), calls.replacen("Let me check.", &hostile_text(ANSWER), 1));
    let second = fixtures::scripts::answer_script(&format!("After the calls: {}", hostile_text(ANSWER)));
    let mut setup = Setup::plain().with_key().set("mcp", "image_results", json!(true)).scripts(vec![first, second]);
    setup.config["mcp_servers"] = json!({ server: {"command": exe, "args": ["hostile-text-mcp"]} });
    setup.config["model"] = json!(hostile_text(MODEL));
    setup
}

/// One server for the five cases: the first to run makes the visit, the others read what it saw.
const HOSTILE: Scenario =
    Scenario { name: "page-hostile", build: hostile, serving: Serving::Shared(Reach::Configured) };

const ANSWER_CASE: &str = "page.hostile-answer-shown-as-text";
const REASONING_CASE: &str = "page.hostile-reasoning-shown-as-text";
const NAMES_CASE: &str = "page.hostile-names-shown-as-text";
const RESULTS_CASE: &str = "page.hostile-results-shown-as-text";
const NOTES_CASE: &str = "page.hostile-notes-shown-as-text";

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.hostile-answer-shown-as-text",
            "13.22",
            Must,
            HOSTILE,
            "an answer holding markup, handlers, javascript: and data: links, Markdown, closing tags, entities, bidi and zero-width characters, before and after the calls, is shown as its characters while streamed and after a reload: no element, handler or link made of it, nothing it would fetch fetched, nothing it would set set (whatever the page's policy: 13.23 is judged apart)",
            answer_shown_as_text,
            ["page-answer-as-html", "page-answer-markdown-links", "page-answer-entities-decoded"]
        ),
        case!(
            "page.hostile-reasoning-shown-as-text",
            "13.22",
            Must,
            HOSTILE,
            "reasoning holding the hostile payloads is shown as its characters while streamed and when drawn again from storage after a reload; no element, handler or link made of it, nothing fetched or set",
            reasoning_shown_as_text,
            ["page-reasoning-as-html", "page-stored-reasoning-decoded"]
        ),
        case!(
            "page.hostile-names-shown-as-text",
            "13.22",
            Must,
            HOSTILE,
            "tool names and a server name holding the hostile payloads are shown as their characters, while streamed and after a reload; a model, tool descriptions (GET /mcp) and a server's own name made of them make nothing either, wherever the page shows them; nothing fetched or set",
            names_shown_as_text,
            [
                "page-tool-name-as-html",
                "page-server-as-html",
                "page-model-name-as-html",
                "page-tool-descriptions-as-html"
            ]
        ),
        case!(
            "page.hostile-results-shown-as-text",
            "13.22",
            Must,
            HOSTILE,
            "a call's arguments, result, error and resource link (its name, and a javascript: URI) holding the hostile payloads, and results that are a bare javascript: or data: URL and nothing else, are shown as their characters, while streamed and after a reload; no element, handler or link made of them, nothing fetched or set",
            results_shown_as_text,
            ["page-result-as-html", "page-arguments-as-html", "page-bare-urls-linked"]
        ),
        case!(
            "page.hostile-notes-shown-as-text",
            "13.22",
            Must,
            HOSTILE,
            "a refusal whose message holds the hostile payloads is said as its characters with the word failed, as it came and when drawn again from storage after a reload; no element, handler or link made of it, nothing fetched or set",
            notes_shown_as_text,
            ["page-notice-as-html", "page-stored-notice-decoded"]
        ),
    ]
}

/// The hostile turn's calls: `echo`, `fail`, `link`, and `bare` twice (a `javascript:` and a `data:` URL).
const CALLS: usize = 5;

const STREAMED: &str = "after the turn";
const REFUSAL_SHOWN: &str = "after the refused turn";
const RELOADED: &str = "after a reload";

/// The visit's steps: the turn, the refused turn, a reload — the page read after each.
fn walk<'a>(visit: &'a Visit<'a>, points: &'a mut Vec<Point>) -> BoxFuture<'a, CheckResult> {
    Box::pin(walk_on(visit, points))
}

async fn walk_on(visit: &Visit<'_>, points: &mut Vec<Point>) -> CheckResult {
    let client = visit.client();
    send(client, "Show me what the tools say").await?;
    wait_until(client, &tools_settled(CALLS), 30, "five tool blocks settled and the turn over").await?;
    open_every_tool_with_results(client).await?;
    points.push(Point { name: STREAMED, facts: look(visit).await? });
    visit.session.screenshot("hostile-turn").await;
    send(client, REFUSED).await?;
    let refused = format!("document.querySelectorAll('{}').length >= 4 && {}", sel("bubble"), idle());
    wait_until(client, &refused, 30, "the refused turn's bubble and the turn over").await?;
    points.push(Point { name: REFUSAL_SHOWN, facts: look(visit).await? });
    visit.session.screenshot("hostile-refusal").await;
    reload(client).await?;
    wait_until(client, &tools_settled(CALLS), 15, "the conversation drawn again after a reload").await?;
    open_every_tool_with_results(client).await?;
    points.push(Point { name: RELOADED, facts: look(visit).await? });
    visit.session.screenshot("hostile-reloaded").await;
    Ok(())
}

/// Every surface's token.
fn all_tokens() -> Vec<String> {
    [ANSWER, REASONING, TOOL_SURFACE, SERVER, MODEL, RESULT_SURFACE, NOTE].map(token).to_vec()
}

/// The page as it is now, once every picture it started has loaded or failed: for each token, the
/// elements made of its payloads (one carrying it as a class, in a handler, in a URL it links or
/// loads, or in a script's text) and whether its global is set; the text of each bubble, tool block,
/// tool name and result, and of the bubble that holds the tool blocks.
async fn look(visit: &Visit<'_>) -> Result<Value, CheckError> {
    let settled = "[...document.images].every(i => i.complete)";
    wait_until(visit.client(), settled, 10, "every picture on the page loaded or failed").await?;
    let script = format!(
        r#"const tokens = {tokens};
        const made = {{}}, globals = {{}};
        for (const t of tokens) {{ made[t] = []; globals[t] = window[t] !== undefined; }}
        const urls = ['href', 'src', 'srcdoc', 'xlink:href', 'data', 'action', 'formaction', 'poster'];
        for (const el of document.querySelectorAll('*')) {{
            for (const t of tokens) {{
                const handler = [...el.attributes].some(a => a.name.toLowerCase().startsWith('on') && a.value.includes(t));
                const url = urls.some(n => (el.getAttribute(n) || '').includes(t));
                const script = el.tagName === 'SCRIPT' && el.textContent.includes(t);
                if (handler || url || script || el.classList.contains(t)) made[t].push(el.outerHTML.slice(0, 160));
            }}
        }}
        const texts = (name) => [...document.querySelectorAll(`[data-strata="${{name}}"]`)].map(e => e.textContent);
        const bubbles = [...document.querySelectorAll('{bubble}')];
        const answer = bubbles.find(b => b.querySelector('{tool}'));
        return {{ made, globals, bubbles: texts('bubble'), blocks: texts('tool'), names: texts('tool-name'),
                  results: texts('tool-result'), answer: answer ? answer.textContent : null }};"#,
        tokens = json!(all_tokens()),
        bubble = sel("bubble"),
        tool = sel("tool"),
    );
    js(visit.client(), &script).await
}

/// The case `case`'s verdict: the group's visit, then `rule` at each point, and the
/// rules every case holds for its `surfaces`.
async fn judged(ctx: &Ctx, case: &'static str, surfaces: &[&str], rule: fn(&Point) -> CheckResult) -> CheckResult {
    let framing = Framing::Refuses { marker: REFUSED, message: REFUSAL.as_str() };
    let visited = visited(ctx, "page hostile visit", case, framing, walk).await;
    for point in &visited.points {
        nothing_made(point, surfaces)?;
        rule(point)?;
    }
    if let Some(error) = &visited.broke {
        return Err(error.clone());
    }
    // The page's policy is 13.23's case (page.policy): a page without one still shows each surface
    // here as its characters or not, and is judged on that alone.
    for surface in surfaces {
        let canary = format!("{}{}", fixtures::hostile_text::CANARY_PATH, token(surface));
        let fetched: Vec<&String> =
            visited.log.iter().map(|r| &r.target).filter(|target| target.contains(&token(surface))).collect();
        expect(
            fetched.is_empty(),
            format!("no request a {surface} payload makes (to {canary}/…)"),
            format!("{fetched:?}"),
        )?;
    }
    Ok(())
}

/// No element, handler or link made of a payload for `surfaces`, and none of their globals set.
fn nothing_made(point: &Point, surfaces: &[&str]) -> CheckResult {
    for surface in surfaces {
        let t = token(surface);
        let made = point.facts["made"][&t].as_array().cloned().unwrap_or_default();
        expect(
            made.is_empty(),
            format!("{}: no element, handler or link made of the {surface}'s text", point.name),
            format!("{} of them: {made:?}", made.len()),
        )?;
        expect(
            point.facts["globals"][&t] == json!(false),
            format!("{}: window.{t} never set (the {surface}'s text never ran)", point.name),
            "it was set",
        )?;
    }
    Ok(())
}

/// `texts[i]` holds `wanted` for each `(i, wanted)`, at `point`.
fn shows(point: &Point, key: &str, what: &str, wanted: &[String]) -> CheckResult {
    let texts = point.facts[key].as_array().cloned().unwrap_or_default();
    for (i, wanted) in wanted.iter().enumerate() {
        let text = texts.get(i).and_then(Value::as_str).unwrap_or_default();
        expect(
            text.contains(wanted.as_str()),
            format!("{}: {what} {} showing as its characters: {wanted:?}", point.name, i + 1),
            text,
        )?;
    }
    Ok(())
}

/// The text of the bubble that holds the tool blocks, at `point`.
fn answer_bubble(point: &Point) -> &str {
    point.facts["answer"].as_str().unwrap_or_default()
}

fn answer_rule(point: &Point) -> CheckResult {
    if point.name == REFUSAL_SHOWN {
        return Ok(());
    }
    let wanted = hostile_text(ANSWER);
    let text = answer_bubble(point);
    expect(
        text.matches(&wanted).count() >= 2,
        format!("{}: the answer's text, before the calls and after them, as its characters: {wanted:?}", point.name),
        text,
    )
}

/// The reasoning, as streamed and as drawn again from storage after the reload (and in between).
fn reasoning_rule(point: &Point) -> CheckResult {
    let wanted = hostile_text(REASONING);
    let text = answer_bubble(point);
    expect(text.contains(&wanted), format!("{}: the reasoning as its characters: {wanted:?}", point.name), text)
}

fn names_rule(point: &Point) -> CheckResult {
    if point.name == REFUSAL_SHOWN {
        return Ok(());
    }
    let [echo, fail, link, bare] = tool_names();
    shows(point, "names", "tool-name", &[echo, fail, link, bare.clone(), bare])?;
    shows(point, "blocks", "tool block, its server's name,", &vec![hostile_text(SERVER); CALLS])
}

fn results_rule(point: &Point) -> CheckResult {
    if point.name == REFUSAL_SHOWN {
        return Ok(());
    }
    let hostile = hostile_text(RESULT_SURFACE);
    // SPEC 7.1: a resource link is `[resource link: <name> <uri>]`, each pair of spaces then one.
    let link = format!("[resource link: {hostile} {}]", link_uri()).replace("  ", " ");
    // `bare`'s results are a URL each and nothing else: shown as their characters, never a link.
    let [javascript, data] = bare_urls();
    shows(point, "results", "tool-result", &[hostile.clone(), format!("error: {hostile}"), link, javascript, data])?;
    let first = point.facts["blocks"][0].as_str().unwrap_or_default();
    expect(
        first.matches(&hostile).count() >= 2,
        format!("{}: the first block's arguments (its text) and result, each as its characters", point.name),
        first,
    )
}

/// The refused turn's note, as it came and as drawn again from storage after the reload.
fn notes_rule(point: &Point) -> CheckResult {
    if point.name == STREAMED {
        return Ok(());
    }
    let bubbles = point.facts["bubbles"].as_array().cloned().unwrap_or_default();
    let last = bubbles.last().and_then(Value::as_str).unwrap_or_default();
    expect(
        last.contains(REFUSAL.as_str()) && last.to_lowercase().contains("failed"),
        format!("{}: the refusal's message as its characters, and the word failed: {:?}", point.name, *REFUSAL),
        last,
    )
}

async fn answer_shown_as_text(ctx: Ctx) -> CheckResult {
    judged(&ctx, ANSWER_CASE, &[ANSWER], answer_rule).await
}

async fn reasoning_shown_as_text(ctx: Ctx) -> CheckResult {
    judged(&ctx, REASONING_CASE, &[REASONING], reasoning_rule).await
}

async fn names_shown_as_text(ctx: Ctx) -> CheckResult {
    judged(&ctx, NAMES_CASE, &[TOOL_SURFACE, SERVER, MODEL], names_rule).await
}

async fn results_shown_as_text(ctx: Ctx) -> CheckResult {
    judged(&ctx, RESULTS_CASE, &[RESULT_SURFACE], results_rule).await
}

async fn notes_shown_as_text(ctx: Ctx) -> CheckResult {
    judged(&ctx, NOTES_CASE, &[NOTE], notes_rule).await
}
