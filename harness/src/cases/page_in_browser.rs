//! SPEC 13.2–13.4 and 13.13 in a real browser (13.5 is `page_layout`'s, on its tour; 13.6 is
//! `page_stop`'s and 13.7 `page_contract`'s): headless Chromium at 320, 390, 640, 768 and 1280 px,
//! loading the page from a recording proxy in front of the server ([`super::page_visit`]), finding
//! things only by the page contract of 13.7. Each width gets a fresh browser and a restarted server
//! (the mock engine's scripts start over; the picture cache stays). Expected picture names are
//! computed here from the fixture's pictures.

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::common::{answer, call};
use super::page_visit::{AFTER_RELOAD_S, Visit, at_768, gone_settled, page, pictures, pictures_and_more};
use super::page_walk::{Verdicts, Walk, every_width_cases, judged};
use crate::browser::page::{
    base64_in_storage, downloads, idle, js, loaded_pictures, no_debris, reload, sel, send, wait_until,
};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Reach, Scenario, Serving, own};

/// One server for the four cases that share [`THE_PICTURES_WALK`]: the first walks it (restarting the
/// server for each width), the others read what it found.
const PICTURES: Scenario =
    Scenario { name: "page-pictures", build: pictures, serving: Serving::Shared(Reach::Configured) };
const GONE: Scenario = own("page-gone", || {
    page(vec![pictures_and_more(), answer("Here are the pictures, and more."), answer("Still here.")])
});

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
    ]
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

every_width_cases! {
    gone_picture = "page.gone-picture-note-and-next-turn", gone_picture_at;
}
