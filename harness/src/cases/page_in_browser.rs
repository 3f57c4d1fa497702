//! SPEC 13.2–13.4, 13.6 and 13.7 in a real browser (13.5 is `page_layout`'s, on its tour): headless
//! Chromium at 320, 390, 640, 768 and 1280 px, loading the page from a recording proxy in front of
//! the server, finding things only by the page contract of 13.7. Each width gets a fresh browser and a
//! restarted server (the mock engine's scripts start over; the picture cache stays). Expected picture
//! names are computed here from the fixture's pictures.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::common::{answer, call};
use super::page_walk::{Verdicts, Walk, at_every_width, judged};
use crate::browser::Session;
use crate::browser::driver::{self, Driver};
use crate::browser::page::{
    KEY_ESCAPE, base64_in_storage, click_mark, downloads, enter_key, idle, js, loaded_pictures, no_debris,
    open_every_tool_with_results, reload, sel, send, shown, stop, type_keys, wait_until,
};
use crate::browser::proxy::{Framing, Proxy};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Reach, Scenario, Serving, Setup, own};

/// How long a reloaded page (loopback, pictures from the cache) may take to show what it had: the
/// reference takes well under a second; a page that never shows it fails here, not at 30 s.
const AFTER_RELOAD_S: u64 = 15;

/// Two 640×360 pictures (seeds 1 and 2), a tool with a very long name, and a 6,000-character result.
pub(super) fn pictures_and_more() -> String {
    let long = format!("{}__{}", crate::scenario::FIXTURE_SERVER, fixtures::tools::LONG_NAME);
    fixtures::scripts::calls_script(&[
        ("fake__picture", &[("width", "640"), ("height", "360"), ("count", "2")]),
        (&long[..64], &[]),
        ("fake__big", &[("n", "6000")]),
    ])
}

pub(super) fn page(scripts: Vec<String>) -> Setup {
    Setup::mcp(Some(true)).with_key().scripts(scripts)
}

/// Two pictures and more (see [`pictures_and_more`]), then an answer.
fn pictures() -> Setup {
    page(vec![pictures_and_more(), answer("Here are the pictures, and more.")])
}
/// One server for the four cases that share [`THE_PICTURES_WALK`]: the first walks it (restarting the
/// server for each width), the others read what it found.
const PICTURES: Scenario =
    Scenario { name: "page-pictures", build: pictures, serving: Serving::Shared(Reach::Configured) };
/// The same, a server of its own for 13.7's marks.
const CONTRACT: Scenario = own("page-contract", pictures);
const GONE: Scenario = own("page-gone", || {
    page(vec![pictures_and_more(), answer("Here are the pictures, and more."), answer("Still here.")])
});
/// A first round that finishes (echo), then a second that runs for a minute (slow_picture).
const SLOW: Scenario = own("page-stop", || {
    page(vec![call("echo", &[("text", ECHOED)]), call("slow_picture", &[("seconds", "60")]), answer("Done.")])
});
/// A call whose arguments take the mock engine about 30 s to write (6,000 characters at 5 ms each).
const SLOW_WRITING: Scenario = own("page-stop-writing", || {
    page(vec![call("echo", &[("text", &"w".repeat(6000))]), answer("Done.")]).set(
        "engine",
        "delay_ms",
        serde_json::json!(5),
    )
});

/// Text in the echoed argument and its result: non-ASCII, so a page that mangles it shows.
pub(super) const ECHOED: &str = "Grüße, 日本 ECHO-CANARY";
/// Text before the first call, and text the next pass writes before its own call.
const BEFORE: &str = "Zuerst: café ① BEFORE";
const AFTER: &str = "Danach: 日本 AFTER";
/// A round of one call with text before it, then a pass with text and a call past `max_rounds` 1; a
/// token at a time, 3 ms apart, so each text reaches the page in many chunks, as a model writes it.
const ANSWER: Scenario = own("page-answer", || {
    page(vec![
        call("echo", &[("text", "one")]).replacen("Let me check.", BEFORE, 1),
        call("echo", &[("text", "two")]).replacen("Let me check.", AFTER, 1),
    ])
    .set("mcp", "max_rounds", json!(1))
    .set("engine", "delay_ms", json!(3))
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.answer-in-order-and-the-limit-said",
            "13.13",
            Must,
            ANSWER,
            "text before a call above its block and text after it below, each streamed a token at a time and shown as one piece, non-ASCII intact, and a turn ended at the limit says so with a note naming max_rounds",
            answer_in_order,
            [
                "page-text-after-tools-lost",
                "page-limit-silent",
                "page-answers-said-stopped",
                "page-text-split-at-every-chunk"
            ]
        ),
        case!(
            "page.pictures-outside-collapsed-details",
            "13.2",
            Must,
            PICTURES,
            "at every width: tool blocks collapsed, each picture outside them with one blob preview and one blob download whose bytes are the picture",
            pictures_outside_details,
            ["page-previews-inside-details", "page-download-misnamed"]
        ),
        case!(
            "page.pictures-fetched-with-the-key-in-a-header",
            "13.2",
            Must,
            PICTURES,
            "at every width: every /tool-media request carries the key in a header, and no URL the page asks for carries it",
            key_in_a_header,
            ["page-key-in-url"]
        ),
        case!(
            "page.storage-holds-no-base64",
            "13.3",
            Must,
            PICTURES,
            "at every width: no run of 1024+ base64 characters in localStorage, sessionStorage or IndexedDB, before and after a reload",
            no_base64_in_storage,
            ["page-base64-in-storage", "page-chat-stored-elsewhere"]
        ),
        case!(
            "page.reload-brings-pictures-back",
            "13.3",
            Must,
            PICTURES,
            "at every width: after a reload (HTTP cache emptied) the previews and blob download links come back, and a new tab of the same browser shows them too",
            reload_brings_pictures_back,
            ["page-forgets-pictures", "page-conversation-per-tab"]
        ),
        case!(
            "page.gone-picture-note-and-next-turn",
            "13.4",
            Must,
            GONE,
            "at every width: a picture deleted from the cache shows the note, again after a second reload, and the next turn works and sends both pictures' strata-tool-media: references (the gone one too), never base64",
            gone_picture,
            ["page-gone-silent", "page-forgets-pictures", "page-forgets-gone-pictures"]
        ),
        case!(
            "page.stop-marks-calls-not-run",
            "13.6",
            Must,
            SLOW,
            "at every width: Stop during a running call (after a first call that finished) aborts the request (the tool is cancelled), the running call becomes Not run, the finished one stays Done, and the answer says stopped",
            stop_marks_not_run,
            [
                "page-stop-keeps-running",
                "page-stop-marks-finished-calls",
                "page-stop-said-failed",
                "page-running-unnamed",
                "page-nan-time-while-running"
            ]
        ),
        case!(
            "page.stop-marks-writing-calls-not-run",
            "13.6",
            Must,
            SLOW_WRITING,
            "at every width: Stop while a call is still being written makes it Not run (never Writing for good) and the answer says stopped",
            stop_marks_writing_not_run,
            [
                "page-stop-keeps-writing",
                "page-writing-unnamed",
                "page-writing-call-unnamed",
                "page-writing-arguments-shown"
            ]
        ),
        case!(
            "page.contract-marks",
            "13.7",
            Must,
            CONTRACT,
            "the page marks the key field and its save control, the message box, Send, bubbles, tool blocks (with a valid data-state, name and result) and pictures, and sends the key exactly as saved (Bearer and the key; no header before a key is saved)",
            contract_marks,
            ["page-unmarked", "page-bearer-without-a-key", "page-key-saved-by-escape", "page-key-untrimmed"]
        ),
    ]
}

/// One width: a browser on the page through the recording proxy, the key entered.
pub(super) struct Visit<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) session: Session,
    pub(super) proxy: Proxy,
}

impl Visit<'_> {
    pub(super) fn client(&self) -> &fantoccini::Client {
        &self.session.client
    }

    /// Sends a message and waits for the turn to end with `pictures` pictures shown.
    pub(super) async fn turn_with_pictures(&self, text: &str, pictures: usize) -> CheckResult {
        send(self.client(), text).await?;
        let shown = format!("{} === {pictures} && {}", loaded_pictures(), idle());
        wait_until(self.client(), &shown, 60, &format!("{pictures} pictures shown and the turn over")).await
    }

    /// Deletes the first of the two pictures the page fetched from the cache, empties the HTTP cache,
    /// reloads, and waits for its note beside the other picture; the two names.
    pub(super) async fn first_picture_gone(&self) -> Result<Vec<String>, CheckError> {
        let names = self.media_names();
        expect_eq("pictures the page fetched", 2, names.len())?;
        let removed = std::fs::remove_file(self.ctx.cache_dir()?.join(&names[0]));
        expect(removed.is_ok(), "the picture deleted from the cache", format!("{removed:?}"))?;
        self.session.clear_http_cache().await?;
        reload(self.client()).await?;
        wait_until(
            self.client(),
            &gone_settled(),
            AFTER_RELOAD_S,
            "one note for the gone picture and the other picture shown",
        )
        .await?;
        Ok(names)
    }

    /// The names of the pictures the page asked for, in order, without repeats.
    pub(super) fn media_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for request in self.proxy.log() {
            let Some(name) = request.target.strip_prefix("/tool-media/") else { continue };
            let name = name.split('?').next().unwrap_or_default().to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

/// A JS expression: one gone-picture note and one picture shown.
fn gone_settled() -> String {
    format!("document.querySelectorAll('{}').length === 1 && {} === 1", sel("picture-gone"), loaded_pictures())
}

pub(super) type WidthCheck = for<'a> fn(&'a Visit<'a>) -> BoxFuture<'a, CheckResult>;

pub(super) async fn open<'a>(
    ctx: &'a Ctx,
    driver: &Driver,
    case: &'static str,
    width: u32,
    base: &str,
    framing: Framing,
) -> Result<Visit<'a>, CheckError> {
    let proxy = Proxy::start_framing(base, framing).await?;
    let session = driver.session(case, width).await?;
    let loaded = session.client.goto(&format!("{}/", proxy.url)).await;
    if let Err(error) = loaded {
        session.close().await;
        return Err(CheckError::Fail { expected: "the page to load".into(), actual: error.to_string() });
    }
    let visit = Visit { ctx, session, proxy };
    if let Err(error) = enter_key(visit.client(), HARNESS_KEY).await {
        visit.session.close().await;
        return Err(error);
    }
    Ok(visit)
}

pub(super) fn at_width(error: CheckError, width: u32) -> CheckError {
    match error {
        CheckError::Fail { expected, actual } => {
            CheckError::Fail { expected: format!("at {width} px: {expected}"), actual }
        }
        not_run => not_run,
    }
}

/// The names the fixture's two pictures must have: SHA-256 of their bytes, `.png`.
fn expected_names() -> Vec<String> {
    (1..=2)
        .map(|seed| {
            let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, 640, 360, seed);
            format!("{}.png", fixtures::images::sha256_hex(&png))
        })
        .collect()
}

/// The walk the four cases of [`PICTURES`] share, at each width: a turn with two pictures, then each
/// open case's check in turn — the pictures outside the collapsed blocks, nothing in storage (and a
/// plain reload), the pictures back after a reload with the HTTP cache emptied (and in a new tab),
/// and last the key in a header on every request so far. Each check after the first starts with a
/// reload of its own or only reads the proxy's log, so one that fails leaves nothing the next needs.
const THE_PICTURES_WALK: Walk = Walk { name: "page pictures walk", steps: pictures_walk };
const OUTSIDE_DETAILS: &str = "page.pictures-outside-collapsed-details";
const KEY_IN_A_HEADER: &str = "page.pictures-fetched-with-the-key-in-a-header";
const NO_BASE64_STORED: &str = "page.storage-holds-no-base64";
const BACK_AFTER_RELOAD: &str = "page.reload-brings-pictures-back";

fn pictures_walk<'a>(visit: &'a Visit<'a>, verdicts: &'a mut Verdicts) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        visit.turn_with_pictures("Show me two pictures", 2).await?;
        visit.session.screenshot("pictures").await;
        verdicts.check(OUTSIDE_DETAILS, "", || outside_details(visit)).await;
        verdicts.check(NO_BASE64_STORED, "", || no_base64_stored(visit)).await;
        verdicts.check(BACK_AFTER_RELOAD, "", || pictures_back_after_reload(visit)).await;
        verdicts.check(KEY_IN_A_HEADER, "", || key_only_in_headers(visit)).await;
        Ok(())
    })
}

/// `async fn $case(ctx)`: the case `$id`, read on [`THE_PICTURES_WALK`].
macro_rules! pictures_walk_cases {
    ($($case:ident = $id:ident;)*) => {
        $(async fn $case(ctx: Ctx) -> CheckResult {
            judged(&ctx, &THE_PICTURES_WALK, $id, 1).await
        })*
    };
}

pictures_walk_cases! {
    pictures_outside_details = OUTSIDE_DETAILS;
    key_in_a_header = KEY_IN_A_HEADER;
    no_base64_in_storage = NO_BASE64_STORED;
    reload_brings_pictures_back = BACK_AFTER_RELOAD;
}

async fn outside_details(visit: &Visit<'_>) -> CheckResult {
    let facts = js(
        visit.client(),
        &format!(
            r#"const tools = [...document.querySelectorAll('{tool}')];
            const open = (t) => t.tagName === 'DETAILS' ? t.open : t.getAttribute('aria-expanded') === 'true';
            return {{
                tools: tools.length,
                collapsed: tools.every(t => !open(t)),
                pictures: [...document.querySelectorAll('{picture}')].map(p => ({{
                    insideTool: !!p.closest('{tool}'),
                    imgs: [...p.querySelectorAll('img')].map(i => i.src.startsWith('blob:')),
                    links: [...p.querySelectorAll('a[download]')].map(a => a.href.startsWith('blob:')),
                }})),
            }};"#,
            tool = sel("tool"),
            picture = sel("picture"),
        ),
    )
    .await?;
    expect_eq("tool blocks", Some(3), facts["tools"].as_u64())?;
    expect_eq("every tool block collapsed", Some(true), facts["collapsed"].as_bool())?;
    let wanted = json!({"insideTool": false, "imgs": [true], "links": [true]});
    expect_eq("each picture", json!([wanted, wanted]), facts["pictures"].clone())?;
    let links = downloads(visit.client()).await?;
    for (hash, name, _) in &links {
        expect_eq("a download's name: the picture's own, <sha256>.png", format!("{hash}.png"), name.clone())?;
    }
    let mut hashes: Vec<String> = links.into_iter().map(|(hash, _, _)| format!("{hash}.png")).collect();
    hashes.sort();
    let mut names = expected_names();
    names.sort();
    expect_eq("the downloads' SHA-256, as picture names", names, hashes)
}

async fn key_only_in_headers(visit: &Visit<'_>) -> CheckResult {
    let log = visit.proxy.log();
    let media: Vec<_> = log.iter().filter(|r| r.target.starts_with("/tool-media/")).collect();
    expect(media.len() >= 2, "at least 2 picture requests", format!("{} of them", media.len()))?;
    for request in &media {
        let bearer = request.authorization.as_deref().is_some_and(|a| {
            a.split_once(' ').is_some_and(|(scheme, key)| scheme.eq_ignore_ascii_case("bearer") && key == HARNESS_KEY)
        });
        let header = request.api_key.as_deref() == Some(HARNESS_KEY);
        expect(
            bearer || header,
            "the key in Authorization: Bearer or x-api-key",
            format!("{} {}", request.method, request.target),
        )?;
    }
    for request in &log {
        expect(
            !request.target.contains(HARNESS_KEY),
            "no URL carrying the key",
            format!("{} {}", request.method, request.target),
        )?;
    }
    Ok(())
}

async fn no_base64_stored(visit: &Visit<'_>) -> CheckResult {
    expect_eq("base64 runs in storage after the turn", Vec::<String>::new(), base64_in_storage(visit.client()).await?)?;
    // 13.3 names where the conversation is kept: there, with the pictures' references.
    let kept = js(visit.client(), "return localStorage.getItem('strata.chat') || '';").await?;
    let kept = kept.as_str().unwrap_or_default();
    for name in visit.media_names() {
        expect(
            kept.contains(&name),
            format!("localStorage[\"strata.chat\"] holding the reference to {name}"),
            kept.chars().take(200).collect::<String>(),
        )?;
    }
    reload(visit.client()).await?;
    wait_until(visit.client(), &format!("{} === 2", loaded_pictures()), AFTER_RELOAD_S, "2 pictures after the reload")
        .await?;
    expect_eq("base64 runs in storage after a reload", Vec::<String>::new(), base64_in_storage(visit.client()).await?)
}

async fn pictures_back_after_reload(visit: &Visit<'_>) -> CheckResult {
    let before = visit.proxy.log().len();
    visit.session.clear_http_cache().await?;
    reload(visit.client()).await?;
    wait_until(
        visit.client(),
        &format!("{} === 2", loaded_pictures()),
        AFTER_RELOAD_S,
        "2 pictures shown after the reload",
    )
    .await?;
    visit.session.screenshot("reloaded").await;
    let fetched = visit.proxy.log()[before..].iter().filter(|r| r.target.starts_with("/tool-media/")).count();
    expect(fetched >= 2, "the pictures fetched again after the reload", format!("{fetched} picture requests"))?;
    let links = downloads(visit.client()).await?;
    expect_eq("download links", 2, links.len())?;
    for (_, _, href) in &links {
        expect(href.starts_with("blob:"), "a blob: download link", href.clone())?;
    }
    in_a_new_tab(visit).await
}

/// The conversation is the browser's, not the tab's: a new tab of the same browser shows it, pictures
/// and all (a page keeping it in `sessionStorage` starts every tab empty).
async fn in_a_new_tab(visit: &Visit<'_>) -> CheckResult {
    let client = visit.client();
    let failed =
        |what: &str, e: &dyn std::fmt::Display| CheckError::Fail { expected: what.to_string(), actual: e.to_string() };
    let first = client.window().await.map_err(|e| failed("the current tab", &e))?;
    let tab = client.new_window(true).await.map_err(|e| failed("a new tab", &e))?;
    client.switch_to_window(tab.handle.clone()).await.map_err(|e| failed("to switch to the new tab", &e))?;
    let outcome = async {
        client.goto(&format!("{}/", visit.proxy.url)).await.map_err(|e| failed("the page in a new tab", &e))?;
        wait_until(
            client,
            &format!("{} === 2", loaded_pictures()),
            10,
            "the conversation's 2 pictures in a new tab of the same browser",
        )
        .await
    }
    .await;
    let _ = client.close_window().await;
    client.switch_to_window(first).await.map_err(|e| failed("to switch back", &e))?;
    outcome
}

fn gone_picture_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        visit.turn_with_pictures("Show me two pictures", 2).await?;
        let names = visit.first_picture_gone().await?;
        let gone = &names[0];
        let settled = gone_settled();
        let note = js(
            visit.client(),
            &format!("return document.querySelector('{}').textContent.trim();", sel("picture-gone")),
        )
        .await?;
        expect(note.as_str().is_some_and(|n| !n.is_empty()), "a short note", note.to_string())?;
        visit.session.screenshot("picture-gone").await;
        // The stored conversation keeps the gone picture: a second reload notes it again.
        visit.session.clear_http_cache().await?;
        reload(visit.client()).await?;
        wait_until(
            visit.client(),
            &settled,
            AFTER_RELOAD_S,
            "the note again after a second reload (the picture kept in storage)",
        )
        .await?;
        let before = visit.proxy.log().len();
        send(visit.client(), "Are you still there?").await?;
        let answered = format!(
            "[...document.querySelectorAll('{}')].some(b => b.textContent.includes('Still here.')) && {}",
            sel("bubble"),
            idle()
        );
        wait_until(visit.client(), &answered, 30, "the next turn answered").await?;
        let chat: Vec<_> = visit.proxy.log()[before..]
            .iter()
            .filter(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
            .filter_map(|r| r.body.clone())
            .collect();
        expect_eq("chat requests of the next turn", 1, chat.len())?;
        let body = &chat[0];
        let runs = body
            .split(|c: char| !(c.is_ascii_alphanumeric() || "+/=".contains(c)))
            .filter(|w| w.len() >= 1024 && w.chars().collect::<std::collections::HashSet<_>>().len() >= 16)
            .count();
        expect_eq("base64 runs of 1024+ characters in the request", 0, runs)?;
        let request: Value = serde_json::from_str(body).unwrap_or_default();
        let images: Vec<String> = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|p| p["type"] == "image_url")
            .map(|p| p["image_url"]["url"].as_str().unwrap_or_default().to_string())
            .collect();
        for name in [&names[1], gone] {
            let reference = format!("strata-tool-media:{name}");
            expect(
                images.contains(&reference),
                format!("the tool message carries {reference}"),
                format!("{images:?}"),
            )?;
        }
        expect(
            images.iter().all(|u| u.starts_with("strata-tool-media:")),
            "every picture sent as a strata-tool-media: reference",
            format!("{images:?}"),
        )
    })
}

/// Clicks Stop and checks what 13.6 says follows: the call Not run, Stop gone, the answer marked stopped.
async fn stop_and_see_not_run(visit: &Visit<'_>) -> CheckResult {
    stop(visit.client()).await?;
    let skipped = format!("{} && document.querySelector('{}[data-state=\"skipped\"]')", idle(), sel("tool"));
    wait_until(visit.client(), &skipped, 10, "the call marked skipped and Stop gone").await?;
    let texts = js(
        visit.client(),
        &format!(
            "const bubbles = [...document.querySelectorAll('{}')]; return [document.querySelector('{}[data-state=\"skipped\"]').textContent, bubbles[bubbles.length - 1].textContent];",
            sel("bubble"),
            sel("tool")
        ),
    )
    .await?;
    let tool = texts[0].as_str().unwrap_or_default();
    expect(tool.contains("Not run"), "the call shown as Not run", tool.to_string())?;
    let answer = texts[1].as_str().unwrap_or_default().to_lowercase();
    expect(answer.contains("stopped"), "the answer marked stopped", &answer)?;
    expect(!answer.contains("failed"), "a stopped answer not said to have failed (Stop is no failure)", &answer)?;
    expect(
        !answer.contains("max_rounds"),
        "no limit note in a stopped answer (the turn did not reach the limit)",
        &answer,
    )?;
    no_debris(visit.client(), "after Stop").await
}

/// The running or writing block (`state`) of `tool` says so in words and names the tool, has no
/// result yet (nor, being written, arguments: opened, no "Arguments"), and nothing on the page reads
/// undefined or NaN.
async fn block_says(visit: &Visit<'_>, state: &str, word: &str, tool: &str) -> CheckResult {
    let block = format!("document.querySelector('{}[data-state=\"{state}\"]')", sel("tool"));
    let read = format!(
        "const t = {block}; return [t.innerText, !!t.querySelector('{}'), (t.querySelector('{}') || {{ textContent: '' }}).textContent];",
        sel("tool-result"),
        sel("tool-name")
    );
    let facts = js(visit.client(), &read).await?;
    let text = facts[0].as_str().unwrap_or_default();
    expect(text.contains(word), format!("the {state} call shown as {word:?}"), text)?;
    let name = facts[2].as_str().unwrap_or_default();
    expect(name.contains(tool), format!("the {state} call's tool-name naming {tool:?}"), name)?;
    expect_eq(&format!("a tool-result in the {state} block (it has none yet)"), json!(false), facts[1].clone())?;
    if state == "writing" {
        let open = format!(
            "const t = {block}; if (t.tagName === 'DETAILS') t.open = true; else t.click(); return t.innerText;"
        );
        let opened = js(visit.client(), &open).await?;
        let opened = opened.as_str().unwrap_or_default();
        expect(!opened.contains("Arguments"), "no arguments shown for a call still being written", opened)?;
    }
    no_debris(visit.client(), &format!("while a call is {state}")).await
}

fn stop_marks_not_run_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        let log = visit.ctx.fixture()?.clone();
        let cancelled = |entries: &[Value]| entries.iter().filter(|e| e["cancelled"] == "slow_picture").count();
        let before = cancelled(&log.entries());
        send(visit.client(), "Take your time").await?;
        let running = format!(
            "(() => {{ const t = document.querySelectorAll('{}'); return t.length === 2 && t[0].dataset.state === 'done' && t[1].dataset.state === 'running'; }})()",
            sel("tool")
        );
        wait_until(visit.client(), &running, 30, "a finished call, then a running one").await?;
        expect(shown(visit.client(), "stop").await?, "Stop shown while the turn runs", "hidden")?;
        block_says(visit, "running", "Running", "slow_picture").await?;
        visit.session.screenshot("running").await;
        stop_and_see_not_run(visit).await?;
        let first = js(
            visit.client(),
            &format!("const t = document.querySelector('{}'); return [t.dataset.state, t.textContent];", sel("tool")),
        )
        .await?;
        let (state, text) = (first[0].as_str().unwrap_or_default(), first[1].as_str().unwrap_or_default());
        expect(
            state == "done" && text.contains("Done") && !text.contains("Not run"),
            "the call that had finished still Done after Stop",
            format!("data-state {state:?}: {text}"),
        )?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while cancelled(&log.entries()) == before && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        expect(
            cancelled(&log.entries()) > before,
            "the request aborted, so the running tool was cancelled",
            "it ran on",
        )
    })
}

fn stop_marks_writing_not_run_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        send(visit.client(), "Echo a long text").await?;
        let writing = format!("document.querySelector('{}[data-state=\"writing\"]')", sel("tool"));
        wait_until(visit.client(), &writing, 30, "a call being written").await?;
        visit.session.screenshot("writing").await;
        block_says(visit, "writing", "Writing", "echo").await?;
        stop_and_see_not_run(visit).await?;
        let writing = js(
            visit.client(),
            &format!("return document.querySelectorAll('{}[data-state=\"writing\"]').length;", sel("tool")),
        )
        .await?;
        expect_eq("calls still shown as being written", json!(0), writing)
    })
}

/// The contract's marks (SPEC 13.7), read once at 768 px: what every other page case relies on.
async fn contract_marks(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.contract-marks", contract_marks_at).await
}

/// Runs `check` once, at 768 px, in a fresh browser on the scenario's server (a screenshot when it fails).
pub(super) async fn at_768(ctx: &Ctx, case: &'static str, check: WidthCheck) -> CheckResult {
    at_768_framed(ctx, case, Framing::AsServed, check).await
}

/// [`at_768`], with the proxy handing event streams to the page as `framing` says.
pub(super) async fn at_768_framed(ctx: &Ctx, case: &'static str, framing: Framing, check: WidthCheck) -> CheckResult {
    let driver = driver::driver().await?;
    let visit = open(ctx, &driver, case, 768, ctx.http.base(), framing).await?;
    let outcome = check(&visit).await;
    if outcome.is_err() {
        visit.session.screenshot("failed").await;
    }
    visit.session.close().await;
    outcome
}

fn contract_marks_at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
    Box::pin(async move {
        for name in ["api-key", "save-key", "message", "send"] {
            let found = js(visit.client(), &format!("return !!document.querySelector('{}');", sel(name))).await?;
            expect_eq(&format!("an element marked {}", sel(name)), json!(true), found)?;
        }
        expect(!shown(visit.client(), "stop").await?, "Stop not shown while no turn runs", "shown")?;
        visit.turn_with_pictures("Show me two pictures", 2).await?;
        let facts = js(
            visit.client(),
            &format!(
                r#"const tools = [...document.querySelectorAll('{tool}')];
                return {{
                    bubbles: document.querySelectorAll('{bubble}').length,
                    tools: tools.map(t => ({{
                        collapsible: t.tagName === 'DETAILS' || t.hasAttribute('aria-expanded'),
                        state: t.dataset.state || null,
                        named: !!t.querySelector('{name}'),
                    }})),
                    pictures: [...document.querySelectorAll('{picture}')].map(p => [p.querySelectorAll('img').length, p.querySelectorAll('a[download]').length]),
                }};"#,
                tool = sel("tool"),
                bubble = sel("bubble"),
                name = sel("tool-name"),
                picture = sel("picture"),
            ),
        )
        .await?;
        expect(
            facts["bubbles"].as_u64().unwrap_or(0) >= 2,
            "a bubble for the question and one for the answer",
            facts["bubbles"].to_string(),
        )?;
        let tool = json!({"collapsible": true, "state": "done", "named": true});
        expect_eq("the tool blocks", json!([tool, tool, tool]), facts["tools"].clone())?;
        expect_eq("the pictures (img, a[download])", json!([[1, 1], [1, 1]]), facts["pictures"].clone())?;
        open_every_tool_with_results(visit.client()).await?;
        key_changed_only_by_save(visit).await?;
        key_sent_as_saved(&visit.proxy.log())
    })
}

/// 13.7: a key typed and left with Escape is not kept, and one saved with whitespace around it is
/// kept without it — each shown by the next turn's request (the scenario's last script answers it).
async fn key_changed_only_by_save(visit: &Visit<'_>) -> CheckResult {
    let client = visit.client();
    let answered =
        |turns: usize| format!("document.querySelectorAll('{}').length === {} && {}", sel("bubble"), 2 * turns, idle());
    let last_key = || {
        visit
            .proxy
            .log()
            .iter()
            .rev()
            .find(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
            .and_then(|r| r.authorization.clone())
    };
    let bearer = Some(format!("Bearer {HARNESS_KEY}"));
    if !shown(client, "api-key").await? {
        click_mark(client, "open-settings").await?;
        let field = format!("document.querySelector('{}').getClientRects().length > 0", sel("api-key"));
        wait_until(client, &field, 5, "the key field to show").await?;
    }
    type_keys(client, "api-key", &format!("not-the-key{KEY_ESCAPE}")).await?;
    send(client, "Still there?").await?;
    wait_until(client, &answered(2), 30, "a turn after a key typed and left with Escape").await?;
    expect_eq(
        "the key a turn sends after another was typed and left with Escape (never saved)",
        bearer.clone(),
        last_key(),
    )?;
    enter_key(client, &format!("  {HARNESS_KEY}  ")).await?;
    send(client, "Once more").await?;
    wait_until(client, &answered(3), 30, "a turn after the key was saved with spaces around it").await?;
    expect_eq("the key a turn sends after it was saved with spaces around it", bearer, last_key())
}

/// 13.7: every key the page sent is the one saved, as `Bearer <key>` or `x-api-key: <key>` (the page
/// loaded before the key was entered, so a page that sends a header without a key shows it here).
fn key_sent_as_saved(log: &[crate::browser::proxy::Recorded]) -> CheckResult {
    let bearer = format!("Bearer {HARNESS_KEY}");
    for request in log {
        let sent = [
            ("Authorization", &request.authorization, &bearer),
            ("x-api-key", &request.api_key, &HARNESS_KEY.to_string()),
        ];
        for (header, value, wanted) in sent {
            if let Some(value) = value {
                expect(
                    value == wanted,
                    format!("{header} absent or exactly {wanted:?} (the key as saved)"),
                    format!("{header}: {value:?} on {} {}", request.method, request.target),
                )?;
            }
        }
    }
    let keyed = log.iter().filter(|r| r.authorization.is_some() || r.api_key.is_some()).count();
    expect(keyed > 0, "requests carrying the saved key", "none did")
}

/// SPEC 13.13, read once at 768 px: where the answer's text sits among its tool blocks (by document
/// order, through the contract's `bubble` and `tool` marks only), and the limit's note.
async fn answer_in_order(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.answer-in-order-and-the-limit-said", |visit| Box::pin(answer_in_order_at(visit))).await
}

async fn answer_in_order_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Echo twice").await?;
    let settled = format!(
        "document.querySelectorAll('{tool}').length === 2 && \
         [...document.querySelectorAll('{tool}')].every(t => ['done', 'skipped'].includes(t.dataset.state)) && {idle}",
        tool = sel("tool"),
        idle = idle()
    );
    wait_until(visit.client(), &settled, 30, "two tool blocks settled and the turn over").await?;
    // For each text, where it sits against the two tool blocks (-1 before, 1 after) and whether its
    // element holds it and nothing more; null when it is not shown.
    let script = format!(
        r#"const bubbles = [...document.querySelectorAll('{bubble}')];
        const bubble = bubbles[bubbles.length - 1];
        const tools = [...bubble.querySelectorAll('{tool}')];
        const place = (wanted) => {{
            const walker = document.createTreeWalker(bubble, NodeFilter.SHOW_TEXT);
            for (let n = walker.nextNode(); n; n = walker.nextNode()) {{
                if (n.textContent.includes(wanted) && !tools.some(t => t.contains(n)))
                    return {{
                        order: tools.map(t => (t.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_PRECEDING) ? -1 : 1),
                        exact: n.parentElement.textContent.trim() === wanted,
                        shown: n.parentElement.textContent,
                    }};
            }}
            return null;
        }};
        return {{ tools: tools.length, before: place({before:?}), after: place({after:?}), text: bubble.innerText }};"#,
        bubble = sel("bubble"),
        tool = sel("tool"),
        before = BEFORE,
        after = AFTER,
    );
    let facts = js(visit.client(), &script).await?;
    expect_eq("tool blocks in the answer's bubble", json!(2), facts["tools"].clone())?;
    let text = facts["text"].as_str().unwrap_or_default();
    let wanted = [
        (BEFORE, "before", "above both blocks", json!([-1, -1])),
        (AFTER, "after", "below the first block and above the second", json!([1, -1])),
    ];
    for (words, key, place, order) in wanted {
        let found = &facts[key];
        expect_eq(&format!("{words:?} shown {place} (-1: before a block, 1: after)"), order, found["order"].clone())
            .map_err(|e| with_text(e, text))?;
        let exact = found["exact"] == json!(true);
        expect(exact, format!("{words:?} shown as it streamed, nothing added"), found["shown"].to_string())?;
    }
    expect(text.contains("max_rounds"), "a note in the bubble naming max_rounds (the turn ended at the limit)", text)?;
    expect(!text.to_lowercase().contains("stopped"), "a turn nobody stopped not said to be stopped", text)?;
    expect(!text.to_lowercase().contains("failed"), "a turn that streamed to its end not said to have failed", text)?;
    no_debris(visit.client(), "after a turn that ended at the limit").await
}

/// `error` with the bubble's text added to what was seen.
fn with_text(error: CheckError, text: &str) -> CheckError {
    match error {
        CheckError::Fail { expected, actual } => {
            CheckError::Fail { expected, actual: format!("{actual}; the bubble: {text:?}") }
        }
        other => other,
    }
}

/// `async fn $case(ctx)`: the case `$id`, running `$check` at every width.
macro_rules! every_width_cases {
    ($($case:ident = $id:literal, $check:ident;)*) => {
        $(async fn $case(ctx: Ctx) -> CheckResult {
            at_every_width(&ctx, $id, $check).await
        })*
    };
}

every_width_cases! {
    gone_picture = "page.gone-picture-note-and-next-turn", gone_picture_at;
    stop_marks_not_run = "page.stop-marks-calls-not-run", stop_marks_not_run_at;
    stop_marks_writing_not_run = "page.stop-marks-writing-calls-not-run", stop_marks_writing_not_run_at;
}
