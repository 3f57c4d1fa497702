//! `gen.page-turns-model`: generated tool turns through the chat page (SPEC §13), at 768 px, against
//! `generate::page`'s model. A session is a third of `--gen-budget` turns (16 at most a visit) drawn from `--seed`, run in
//! one browser visit on a server of the case's own (the mock engine's scripts are the session's
//! passes; the fixture MCP server's `staged` tool returns each call's result by slot): each turn
//! sent, and stopped where it is to be; then the blocks read collapsed and opened, the pictures and
//! downloads, the storage; a reload with the HTTP cache emptied and the same read again; then a probe
//! turn. Every chat request must send the conversation before it as it streamed. A failure names its
//! turn, which is then shrunk alone (each try a fresh visit with that turn only) and printed with the
//! `--seed … --gen-budget …` that replays it.

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use serde_json::{Value, json};

use super::generated_page_judge::{self as judge, Miss, said};
use super::page_visit::{Visit, open};
use crate::browser::driver;
use crate::browser::page::{
    base64_in_storage, downloads, idle, js, loaded_pictures, open_every_tool, reload, sel, send, stop, tools_settled,
    wait_until,
};
use crate::browser::proxy::Framing;
use crate::case::{Case, CheckError, CheckResult};
use crate::cases::case;
use crate::context::Ctx;
use crate::generate::page::{self as model, PROBE_ANSWER, SHARE, Turn};
use crate::generate::{SHRUNK_HEADING, runner, settings};
use crate::scenario::{FIXTURE_SERVER, HARNESS_KEY, LAUNCHES};

const CASE: &str = "gen.page-turns-model";
/// Shrinking tries at most, and for at most this long (each is a browser visit).
const SHRINK_TRIES: u32 = 40;
/// Turns in one visit at most (a larger budget makes more visits, each conversation bounded).
const SESSION_TURNS: usize = 16;
const SHRINK_TIME: Duration = Duration::from_secs(45);
/// How long the pictures may take to show (loopback; the reference takes well under a second).
const PICTURES_S: u64 = 4;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.page-turns-model",
        "13.2",
        Must,
        LAUNCHES,
        "generated tool turns through the page at 768 px (a third of --gen-budget, 16 a visit): 1-3 rounds of 1-3 calls (a round past max_rounds 2 not run), results of 0 to past max_result_chars characters with hostile markup and non-ASCII text, 0-4 PNG, JPEG and WebP pictures, resource links, errors, Stop while a call runs; each block collapsed then opened shows what the 13.2 model says (state, tool, server, result text exactly, its label, length and cut), each picture previewed and downloadable by its SHA-256 name, storage holds their references and no base64, a reload shows the same, and every next turn sends the conversation as it streamed (13.14); a failure shrinks to a smallest turn",
        page_turns_model,
        ["page-webp-not-drawn", "page-result-as-html"]
    )]
}

/// Why a session did not pass: the page missed the model (shrinkable), or it could not be run.
enum Outcome {
    Missed(Miss),
    Broken(CheckError),
}

impl From<CheckError> for Outcome {
    fn from(error: CheckError) -> Self {
        Outcome::Broken(error)
    }
}

/// A step's failure during turn `turn`, as a miss of that turn.
fn at_turn(turn: usize) -> impl Fn(CheckError) -> Outcome {
    move |error| match error {
        CheckError::Fail { .. } => Outcome::Missed(Miss { turn, why: said(&error) }),
        not_run => Outcome::Broken(not_run),
    }
}

async fn page_turns_model(ctx: Ctx) -> CheckResult {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || search(&ctx, &handle))
        .await
        .map_err(|e| crate::check::broken(format!("the generator stopped: {e}")))?
}

/// Draws a session, runs it, and on a miss shrinks the turn it names.
fn search(ctx: &Ctx, handle: &tokio::runtime::Handle) -> CheckResult {
    let crate::generate::Settings { seed, budget, shrink: shrinking } = settings();
    let count = (budget / SHARE).max(1) as usize;
    let mut runner = runner("page-turns");
    let strategy = model::turns();
    let mut trees = Vec::new();
    for _ in 0..count {
        trees.push(strategy.new_tree(&mut runner).map_err(|e| crate::check::broken(format!("the generator: {e}")))?);
    }
    let turns: Vec<Turn> = trees.iter().map(ValueTree::current).collect();
    let mut first = None;
    for visit in model::sessions(&turns, SESSION_TURNS) {
        match handle.block_on(session(ctx, &turns[visit.clone()])) {
            Ok(()) => continue,
            Err(Outcome::Broken(error)) => return Err(error),
            Err(Outcome::Missed(miss)) => {
                first = Some(Miss { turn: visit.start + miss.turn, why: miss.why });
                break;
            }
        }
    }
    let Some(first) = first else { return Ok(()) };
    let expected = format!(
        "{count} generated turns through the page as the model says (seed {seed:#x}; replay: --seed {seed:#x} --gen-budget {budget})"
    );
    let tree = &mut trees[first.turn.min(count - 1)];
    if !shrinking {
        let turn = model::describe(&tree.current());
        let actual = format!("turn {}: {}\n(not shrunk: MEDIACHECK_GEN_SHRINK=0)\n{turn}", first.turn + 1, first.why);
        return Err(CheckError::Fail { expected, actual });
    }
    let (smallest, why) = shrink(ctx, handle, tree.as_mut());
    let actual = match smallest {
        Some(turn) => format!(
            "turn {}: {}\n{SHRUNK_HEADING}\n{}\nwhich fails alone: {why}",
            first.turn + 1,
            first.why,
            model::describe(&turn)
        ),
        None => format!(
            "turn {}: {}\n(it passes alone: the failure needs the turns before it)\n{}",
            first.turn + 1,
            first.why,
            model::describe(&turns[first.turn.min(count - 1)])
        ),
    };
    Err(CheckError::Fail { expected, actual })
}

/// The smallest turn of `tree` that still fails alone, and why; none when the turn passes alone.
fn shrink(
    ctx: &Ctx,
    handle: &tokio::runtime::Handle,
    tree: &mut dyn ValueTree<Value = Turn>,
) -> (Option<Turn>, String) {
    let alone = |turn: &Turn| match handle.block_on(session(ctx, std::slice::from_ref(turn))) {
        Ok(()) => None,
        Err(Outcome::Missed(miss)) => Some(miss.why),
        Err(Outcome::Broken(error)) => Some(said(&error)),
    };
    let Some(mut why) = alone(&tree.current()) else { return (None, String::new()) };
    let mut smallest = tree.current();
    let started = Instant::now();
    let mut tries = 0;
    let mut more = tree.simplify();
    while more && tries < SHRINK_TRIES && started.elapsed() < SHRINK_TIME {
        tries += 1;
        let turn = tree.current();
        match alone(&turn) {
            Some(failed) => {
                (smallest, why) = (turn, failed);
                more = tree.simplify();
            }
            None => more = tree.complicate(),
        }
    }
    (Some(smallest), why)
}

/// One session: a fixture MCP server with every result staged, a server on the session's scripts, a
/// browser visit through the recording proxy, judged against the model.
async fn session(ctx: &Ctx, turns: &[Turn]) -> Result<(), Outcome> {
    let plan = model::plan(turns);
    let options = fixtures::mcp_server::FixtureOptions::default();
    for (slot, result) in &plan.staged {
        options.stage.set_slot(*slot, result.clone());
    }
    let fixture = fixtures::http::serve_http(options, 0, None)
        .await
        .map_err(|e| crate::check::broken(format!("the fixture MCP server: {e}")))?;
    let config = json!({
        "api_key": HARNESS_KEY,
        "mcp_servers": {FIXTURE_SERVER: {"url": fixture.url}},
        "mcp": {"image_results": true, "max_result_chars": model::CAP, "max_rounds": model::MAX_ROUNDS},
        "engine": {"max_context": model::CONTEXT},
    });
    let server = ctx.start_running(&config, &plan.scripts, &[]).await?;
    let driver = driver::driver().await?;
    let visit = open(ctx, &driver, CASE, 768, server.http.base(), Framing::AsServed).await?;
    let outcome = walk(&visit, turns, &plan).await;
    if outcome.is_err() {
        visit.session.screenshot("failed").await;
    }
    visit.session.close().await;
    drop(server);
    drop(fixture);
    outcome
}

/// The page read through the contract: each block (state, open, its text, tool-name, tool-result,
/// its bubble), each bubble's text, and each picture (its preview's size, and its download's name).
fn read_script() -> String {
    format!(
        r#"const tools = [...document.querySelectorAll('{tool}')];
        const bubbles = [...document.querySelectorAll('{bubble}')];
        const open = (t) => t.tagName === 'DETAILS' ? t.open : t.getAttribute('aria-expanded') === 'true';
        return {{
            blocks: tools.map(t => {{
                const r = t.querySelector('{result}'), n = t.querySelector('{name}');
                return {{ state: t.dataset.state, open: open(t), text: t.innerText, name: n ? n.textContent.trim() : null,
                         result: r ? r.textContent : null, bubble: bubbles.indexOf(t.closest('{bubble}')) }};
            }}),
            bubbles: arguments[0] ? bubbles.map(b => b.innerText) : [],
            pictures: [...document.querySelectorAll('{picture}')].map(p => {{
                const i = p.querySelector('img'), a = p.querySelector('a[download]');
                return {{ w: i ? i.naturalWidth : 0, h: i ? i.naturalHeight : 0, loaded: !!i && i.complete && i.naturalWidth > 0,
                         name: a ? a.getAttribute('download') : null }};
            }}),
        }};"#,
        tool = sel("tool"),
        bubble = sel("bubble"),
        result = sel("tool-result"),
        name = sel("tool-name"),
        picture = sel("picture"),
    )
}

async fn read(visit: &Visit<'_>, bubbles: bool) -> Result<Value, CheckError> {
    visit
        .client()
        .execute(&read_script(), vec![json!(bubbles)])
        .await
        .map_err(|e| CheckError::Fail { expected: "the page to be read".into(), actual: e.to_string() })
}

/// A JS expression: every picture's preview loaded or failed, and `count` of them.
fn pictures_settled(count: usize) -> String {
    format!(
        "document.querySelectorAll('{picture}').length === {count} && [...document.querySelectorAll('{picture} img')].every(i => i.complete)",
        picture = sel("picture")
    )
}

/// Sends turn `t` and waits for it to end: stopped once its held call runs (and every block before
/// it settled), else settled on its own.
async fn turn(visit: &Visit<'_>, t: usize, total: usize, held: Option<usize>) -> Result<(), CheckError> {
    let client = visit.client();
    send(client, &model::message(t)).await?;
    if let Some(held) = held {
        let running = format!(
            "(() => {{ const t = [...document.querySelectorAll('{}')]; return t.length > {held} && t[{held}].dataset.state === 'running' && t.slice(0, {held}).every(b => ['done', 'error', 'skipped'].includes(b.dataset.state)); }})()",
            sel("tool")
        );
        wait_until(
            client,
            &running,
            20,
            &format!("the held call (block {}) running, every block before it settled", held + 1),
        )
        .await?;
        stop(client).await?;
    }
    let what = format!("{total} tool blocks settled and the turn over");
    match wait_until(client, &tools_settled(total), 20, &what).await {
        // What the turn's bubble ends with says why (a refusal's message, 13.15), where a count cannot.
        Err(CheckError::Fail { expected, actual }) => {
            let script = format!(
                "const b = [...document.querySelectorAll('{}')]; return b.length ? b[b.length - 1].innerText.slice(-240) : '';",
                sel("bubble")
            );
            let tail = js(client, &script).await.ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            Err(CheckError::Fail { expected, actual: format!("{actual}; its bubble ends: {tail:?}") })
        }
        settled => settled,
    }
}

async fn walk(visit: &Visit<'_>, turns: &[Turn], plan: &model::Plan) -> Result<(), Outcome> {
    let client = visit.client();
    let last = turns.len() - 1;
    let mut total = 0;
    for (t, blocks) in plan.blocks.iter().enumerate() {
        total += blocks.len();
        turn(visit, t, total, plan.stops[t]).await.map_err(at_turn(t))?;
    }
    let pictures: usize = plan.blocks.iter().flatten().map(|b| b.pictures.len()).sum();
    // Pictures come from loopback: a page that draws too few or too many is judged after a short
    // wait, by what it shows (the judge names the picture), not failed here at length.
    let settled = format!("{} && {} === {pictures}", pictures_settled(pictures), loaded_pictures());
    let _ = wait_until(client, &settled, PICTURES_S, "the pictures drawn").await;
    let summaries = read(visit, true).await?;
    judge::collapsed(turns, &plan.blocks, &summaries).map_err(Outcome::Missed)?;
    for at in ["after the turns", "after a reload"] {
        if at == "after a reload" {
            visit.session.clear_http_cache().await?;
            reload(client).await?;
            let back = tools_settled(total);
            wait_until(client, &back, 15, "the conversation drawn again after a reload")
                .await
                .map_err(at_turn(last))?;
            let _ = wait_until(client, &settled, PICTURES_S, "the pictures drawn again").await;
        }
        open_every_tool(client).await?;
        let facts = read(visit, false).await?;
        judge::opened(at, &plan.blocks, &facts, &summaries).map_err(Outcome::Missed)?;
        judge::pictures(at, &plan.blocks, &facts, &downloads(client).await?).map_err(Outcome::Missed)?;
        let stored = js(client, "return localStorage.getItem('strata.chat') || '';").await?;
        let runs = base64_in_storage(client).await?;
        judge::storage(&plan.blocks, &runs, stored.as_str().unwrap_or_default()).map_err(Outcome::Missed)?;
    }
    send(client, &model::message(turns.len())).await?;
    let answered = format!(
        "[...document.querySelectorAll('{}')].some(b => b.textContent.includes({PROBE_ANSWER:?})) && {}",
        sel("bubble"),
        idle()
    );
    wait_until(client, &answered, 20, "the probe turn answered").await.map_err(at_turn(last))?;
    let chats: Vec<(Value, String)> = visit
        .proxy
        .log()
        .iter()
        .filter(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .map(|r| (r.body.as_deref().and_then(|b| serde_json::from_str(b).ok()).unwrap_or_default(), r.answer_text()))
        .collect();
    judge::sent(turns.len(), &chats).map_err(Outcome::Missed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_case_names_only_variants_whose_needs_its_odds_test_checks() {
        let case = super::cases().into_iter().find(|c| c.id == "gen.page-turns-model").expect("the case");
        let checked: Vec<&str> = crate::generate::page::odds::variants().collect();
        assert!(!case.broken_by.is_empty());
        for named in case.broken_by {
            assert!(checked.contains(named), "{named} is named by the case but its need is not checked");
        }
    }
}
