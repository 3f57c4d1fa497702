//! SPEC 13.4 and 13.17–13.19 in a real browser: what the page holds and for how long. A picture the
//! server refuses for the key is not gone. A picture is fetched
//! once however often the page draws it (counted by the browser's own Resource Timing entries, since
//! the HTTP cache may answer repeats without reaching the proxy), a failed fetch is asked again, the
//! pictures' `blob:` URLs are revoked after New chat and a new key, and a stored conversation that is
//! not JSON starts a new one instead of breaking the page.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::common::{answer, call};
use super::page_visit::{Visit, at_768, page};
use crate::browser::page::{downloads, enter_key, idle, js, loaded_pictures, reload, sel, send, shown, wait_until};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Scenario, Setup, own};

/// The closing text of the first turn: long, so it streams in many reads after the picture.
fn long_answer() -> String {
    let words: Vec<String> = (1..=120).map(|i| format!("Wort{i}")).collect();
    format!("{} ONCE-END", words.join(" "))
}

/// One picture, then a long text; the same picture again, then a short text. Every token 2 ms apart,
/// so the first turn's text is many reads and the second call comes well after its turn starts.
const ONCE: Scenario = own("page-fetched-once", || {
    let picture = call("picture", &[("width", "640"), ("height", "360"), ("count", "1")]);
    page(vec![picture.clone(), answer(&long_answer()), picture, answer("Shown again: AGAIN-END")]).set(
        "engine",
        "delay_ms",
        json!(2),
    )
});

const LET_GO: Scenario = own("page-let-go", || {
    page(vec![call("picture", &[("width", "320"), ("height", "200"), ("count", "2")]), answer("Two pictures.")])
});

/// No tools: a turn is one answer.
const FRESH: Scenario =
    own("page-fresh-start", || Setup::plain().with_key().scripts(vec![answer("A fresh start: ñ FRESH-END")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.pictures-refused-for-the-key-are-not-gone",
            "13.4",
            Must,
            LET_GO,
            "after a wrong key is saved the two pictures cannot be fetched (401) and are not noted gone (no picture-gone mark, no \"no longer available\"); the right key saved again shows them",
            refused_not_gone,
            ["page-refused-pictures-noted-gone", "page-key-note-silent"]
        ),
        case!(
            "page.pictures-fetched-once-and-again-after-a-failure",
            "13.17",
            Must,
            ONCE,
            "a picture followed by 120 words streamed token by token is fetched once (Resource Timing); deleted from the cache and reloaded it is noted gone; a later call that writes it again shows it in the new answer, not the note",
            fetched_once_and_again,
            ["page-pictures-fetched-every-redraw", "page-failed-pictures-kept"]
        ),
        case!(
            "page.pictures-let-go-after-new-chat-and-a-new-key",
            "13.18",
            Must,
            LET_GO,
            "after the key is saved again, the blob: URLs of the two pictures no longer resolve and the pictures are shown from new ones; after New chat (when marked) the new ones no longer resolve either",
            let_go,
            ["page-pictures-never-released", "page-new-chat-keeps-pictures"]
        ),
        case!(
            "page.unreadable-storage-starts-a-new-conversation",
            "13.19",
            Must,
            FRESH,
            "with strata.chat and every other localStorage entry set to text that is not JSON, a reloaded page (its key entered again) sends a turn and shows the answer",
            unreadable_storage,
            ["page-unreadable-storage-breaks"]
        ),
    ]
}

async fn fetched_once_and_again(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.pictures-fetched-once-and-again-after-a-failure", |visit| Box::pin(once_and_again(visit))).await
}

/// A JS expression: the last bubble holds `text` and no turn runs.
fn last_bubble_done(text: &str) -> String {
    format!(
        "(() => {{ const b = [...document.querySelectorAll('{}')].pop(); return !!b && b.textContent.includes({text:?}); }})() && {}",
        sel("bubble"),
        idle()
    )
}

/// How often this page load asked for each `/tool-media/` URL, by the browser's Resource Timing.
async fn picture_fetches(visit: &Visit<'_>) -> Result<BTreeMap<String, u64>, CheckError> {
    let entries = js(
        visit.client(),
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/tool-media/'));",
    )
    .await?;
    let mut counts = BTreeMap::new();
    for name in entries.as_array().into_iter().flatten().filter_map(Value::as_str) {
        let name = name.rsplit('/').next().unwrap_or(name).split('?').next().unwrap_or_default();
        *counts.entry(name.to_string()).or_insert(0) += 1;
    }
    Ok(counts)
}

/// Room for every Resource Timing entry of a page load (250 by default; a page asking again at
/// every read would fill it).
async fn room_for_entries(visit: &Visit<'_>) -> CheckResult {
    js(visit.client(), "performance.setResourceTimingBufferSize(100000); return true;").await.map(|_| ())
}

async fn once_and_again(visit: &Visit<'_>) -> CheckResult {
    room_for_entries(visit).await?;
    send(visit.client(), "Show me a picture").await?;
    let shown_once = format!("{} && {} === 1", last_bubble_done("ONCE-END"), loaded_pictures());
    wait_until(visit.client(), &shown_once, 30, "the picture shown and the 120 words after it").await?;
    let fetches = picture_fetches(visit).await?;
    expect_eq("pictures fetched", 1, fetches.len())?;
    let (name, count) = fetches.iter().next().map(|(n, c)| (n.clone(), *c)).unwrap_or_default();
    expect_eq(&format!("fetches of {name} while its turn streamed"), 1, count)?;
    let removed = std::fs::remove_file(visit.ctx.cache_dir()?.join(&name));
    expect(removed.is_ok(), "the picture deleted from the cache", format!("{removed:?}"))?;
    visit.session.clear_http_cache().await?;
    reload(visit.client()).await?;
    room_for_entries(visit).await?;
    let noted = format!("document.querySelectorAll('{}').length === 1", sel("picture-gone"));
    wait_until(visit.client(), &noted, 15, "the deleted picture noted as gone after a reload").await?;
    send(visit.client(), "Show it again").await?;
    wait_until(visit.client(), &last_bubble_done("AGAIN-END"), 30, "the second turn over").await?;
    let in_last = format!(
        "(() => {{ const b = [...document.querySelectorAll('{bubble}')].pop(); \
         return [...b.querySelectorAll('{picture} img')].filter(i => i.complete && i.naturalWidth > 0).length === 1 \
         && !b.querySelector('{gone}'); }})()",
        bubble = sel("bubble"),
        picture = sel("picture"),
        gone = sel("picture-gone"),
    );
    let outcome =
        wait_until(visit.client(), &in_last, 10, "the picture the second call wrote again shown in its answer").await;
    if outcome.is_err() {
        let notes = js(
            visit.client(),
            &format!(
                "return [...document.querySelectorAll('{}')].pop().querySelectorAll('{}').length;",
                sel("bubble"),
                sel("picture-gone")
            ),
        )
        .await?;
        let on_disk = visit.ctx.cache_dir()?.join(&name).is_file();
        return Err(CheckError::Fail {
            expected: "the picture the second call wrote again shown in its answer (its fetch asked again)".into(),
            actual: format!("{notes} gone-picture note(s) in the answer; the file is back in the cache: {on_disk}"),
        });
    }
    Ok(())
}

async fn let_go(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.pictures-let-go-after-new-chat-and-a-new-key", |visit| Box::pin(let_go_at(visit))).await
}

/// The `blob:` URLs the page's pictures are shown and downloaded from.
async fn blob_urls(visit: &Visit<'_>) -> Result<Vec<String>, CheckError> {
    let srcs = js(
        visit.client(),
        &format!("return [...document.querySelectorAll('{} img')].map(i => i.src);", sel("picture")),
    )
    .await?;
    let mut urls: Vec<String> =
        srcs.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    urls.extend(downloads(visit.client()).await?.into_iter().map(|(_, _, href)| href));
    urls.retain(|u| u.starts_with("blob:"));
    urls.sort();
    urls.dedup();
    Ok(urls)
}

/// Which of `urls` the page can still read.
async fn still_resolving(visit: &Visit<'_>, urls: &[String]) -> Result<Vec<String>, CheckError> {
    let script = r#"
        const done = arguments[arguments.length - 1];
        Promise.all(arguments[0].map(u => fetch(u).then(r => r.ok ? u : null, () => null)))
            .then(found => done(found.filter(u => u !== null)));
    "#;
    let value = visit
        .client()
        .execute_async(script, vec![json!(urls)])
        .await
        .map_err(|e| CheckError::Fail { expected: "the blob: URLs to be tried".into(), actual: e.to_string() })?;
    Ok(value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect())
}

async fn let_go_at(visit: &Visit<'_>) -> CheckResult {
    visit.turn_with_pictures("Show me two pictures", 2).await?;
    let first = blob_urls(visit).await?;
    expect(first.len() >= 2, "blob: URLs for the two pictures", format!("{first:?}"))?;
    expect_eq("blob: URLs that resolve while shown", first.clone(), still_resolving(visit, &first).await?)?;
    enter_key(visit.client(), HARNESS_KEY).await?;
    let renewed = format!(
        "{} === 2 && [...document.querySelectorAll('{} img')].every(i => !{}.includes(i.src))",
        loaded_pictures(),
        sel("picture"),
        json!(first)
    );
    wait_until(
        visit.client(),
        &renewed,
        15,
        "the two pictures shown again from new blob: URLs after the key was saved",
    )
    .await?;
    expect_eq(
        "blob: URLs of the pictures before the key was saved that still resolve",
        Vec::<String>::new(),
        still_resolving(visit, &first).await?,
    )?;
    if !shown(visit.client(), "new-chat").await? {
        return Ok(());
    }
    let second = blob_urls(visit).await?;
    js(visit.client(), &format!("document.querySelector('{}').click(); return true;", sel("new-chat"))).await?;
    let cleared = format!("document.querySelectorAll('{}').length === 0", sel("picture"));
    wait_until(visit.client(), &cleared, 10, "no picture shown after New chat").await?;
    expect_eq(
        "blob: URLs of the pictures that still resolve after New chat",
        Vec::<String>::new(),
        still_resolving(visit, &second).await?,
    )
}

async fn unreadable_storage(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.unreadable-storage-starts-a-new-conversation", |visit| Box::pin(unreadable_at(visit))).await
}

async fn unreadable_at(visit: &Visit<'_>) -> CheckResult {
    let spoiled = js(
        visit.client(),
        r#"const keys = new Set(["strata.chat"]);
        for (let i = 0; i < localStorage.length; i++) keys.add(localStorage.key(i));
        for (const k of keys) localStorage.setItem(k, '{"cut short');
        return [...keys];"#,
    )
    .await?;
    reload(visit.client()).await?;
    enter_key(visit.client(), HARNESS_KEY).await?;
    send(visit.client(), "Hello again").await?;
    let outcome = wait_until(visit.client(), &last_bubble_done("FRESH-END"), 20, "the turn answered").await;
    outcome.map_err(|error| match error {
        CheckError::Fail { expected, actual } => CheckError::Fail {
            expected: format!("{expected} (with localStorage {spoiled} set to text that is not JSON)"),
            actual,
        },
        other => other,
    })
}

async fn refused_not_gone(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.pictures-refused-for-the-key-are-not-gone", |visit| Box::pin(refused_not_gone_at(visit))).await
}

async fn refused_not_gone_at(visit: &Visit<'_>) -> CheckResult {
    visit.turn_with_pictures("Show me two pictures", 2).await?;
    // Emptied, so that the pictures are asked of the server again (the HTTP cache would answer them
    // without it, whatever the key).
    visit.session.clear_http_cache().await?;
    enter_key(visit.client(), "not-the-key").await?;
    // Wait for the page's answer to the 401s, not for the moment before it: once the key is saved the
    // page draws its pictures again, unloaded, while their fetches are still on their way, so "none
    // shown" holds at once — and read then, the bubbles do not say yet what the 401s will make them
    // say (a slow proxy or network: 2 runs in 31 of a full run). So: none shown, and the page has said
    // something of them — a key needed (right), or gone (wrong, and judged below).
    let answered = format!(
        "{loaded} === 0 && ([...document.querySelectorAll('{bubble}')].some(b => b.innerText.toLowerCase().includes('key')) \
         || document.querySelectorAll('{gone}').length > 0 || document.body.innerText.includes('no longer available'))",
        loaded = loaded_pictures(),
        bubble = sel("bubble"),
        gone = sel("picture-gone"),
    );
    wait_until(
        visit.client(),
        &answered,
        15,
        "the pictures no longer shown once a wrong key is saved (each fetch a 401), and the page saying why",
    )
    .await?;
    let facts = js(
        visit.client(),
        &format!(
            "return {{ gone: document.querySelectorAll('{}').length, text: document.body.innerText }};",
            sel("picture-gone")
        ),
    )
    .await?;
    let text = facts["text"].as_str().unwrap_or_default();
    expect_eq("pictures noted gone (picture-gone) after a 401", json!(0), facts["gone"].clone())?;
    expect(
        !text.contains("no longer available"),
        "no picture said to be no longer available after a 401 (the picture is there; the key is wrong)",
        text,
    )?;
    let bubbles = js(
        visit.client(),
        &format!("return [...document.querySelectorAll('{}')].map(b => b.innerText).join(' ');", sel("bubble")),
    )
    .await?;
    let bubbles = bubbles.as_str().unwrap_or_default();
    expect(bubbles.to_lowercase().contains("key"), "the page says a key is needed where the pictures were", bubbles)?;
    enter_key(visit.client(), HARNESS_KEY).await?;
    let shown = format!("{} === 2", loaded_pictures());
    wait_until(visit.client(), &shown, 15, "the two pictures shown again once the right key is saved").await
}
