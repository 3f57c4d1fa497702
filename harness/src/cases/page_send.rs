//! SPEC 13.20, 13.21 and 13.2's opened blocks in a real browser: what the page sends — the message
//! as typed (Enter sends, Shift+Enter a new line, whitespace around it dropped, nothing empty and
//! nothing while a turn runs), the model `/health` names, tools only when `GET /mcp` lists some and
//! the reader has not switched them off — read from the recording proxy; that the end of the
//! conversation stays in view unless the reader scrolled up; and that a block the reader opened stays
//! open (and, 13.6, that a reload in the middle of a turn leaves no call running).

use serde_json::{Value, json};

use super::common::{answer, call};
use super::page_visit::{Visit, at_768, page};
use crate::browser::page::{
    KEY_ENTER, KEY_RELEASE, KEY_SHIFT, click_mark, enter_key, idle, js, open_settings, reload, sel, send, shown,
    tools_settled, type_keys, wait_until,
};
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Scenario, Setup, own};

/// The model the server reports, and the only one whose scripts answer with [`MODEL_END`].
const MODEL: &str = "seiten-modell";
const MODEL_END: &str = "MODEL-END";

/// No MCP servers; the server's model has a script set of its own (what a page sending another model
/// name does not get); every token 20 ms apart, so a turn runs for seconds.
const COMPOSER: Scenario = own("page-composer", || {
    let words: Vec<String> = (1..=80).map(|i| format!("w{i}")).collect();
    let mut setup = Setup::plain()
        .with_key()
        .scripts(vec![answer("The default script: a page that sent no model or another one.")])
        .set("engine", "script_sets", json!({ MODEL: [answer(&format!("{} {MODEL_END}", words.join(" ")))] }))
        .set("engine", "delay_ms", json!(20));
    setup.config["model"] = json!(MODEL);
    setup
});

/// A tool call, then an answer (the last script repeats for the later turns).
const TOOLS: Scenario = own("page-tools", || page(vec![call("echo", &[("text", "eins")]), answer("TOOLS-END")]));

/// A long answer, many lines, streamed slowly: taller than the viewport, and seconds long.
const FOLLOW: Scenario = own("page-follow", || {
    let lines: Vec<String> = (1..=70).map(|i| format!("Zeile {i}")).collect();
    Setup::plain().with_key().scripts(vec![answer(&format!("{}\nFOLLOW-END", lines.join("\n")))]).set(
        "engine",
        "delay_ms",
        json!(12),
    )
});

/// A call, then a call that runs for seconds, then an answer; every request starts the scripts over.
const OPENED: Scenario = own("page-opened", || {
    page(vec![call("echo", &[("text", "offen")]), call("sleep", &[("seconds", "2")]), answer("OPENED-END")]).set(
        "engine",
        "restart_per_request",
        json!(true),
    )
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.message-box-sends-what-was-typed",
            "13.20",
            Must,
            COMPOSER,
            "Enter sends and Shift+Enter adds a line: \"  Zeile eins⇧⏎Zeile zwei  ⏎\" goes out as \"Zeile eins\\nZeile zwei\" (shown with its line break), the box empty after; Enter while the turn runs and a message of spaces send nothing; every request names /health's model and streams, and asks for no tools (the server has none; no tools switch shown)",
            message_box,
            [
                "page-enter-does-not-send",
                "page-shift-enter-sends",
                "page-message-untrimmed",
                "page-empty-message-sent",
                "page-sends-while-running",
                "page-box-kept-after-send",
                "page-model-made-up",
                "page-tools-always-asked",
                "page-sent-message-on-one-line"
            ]
        ),
        case!(
            "page.tools-asked-for-only-when-there-are-tools",
            "13.20",
            Must,
            TOOLS,
            "with tools listed the request asks for them; the tools switch (when marked) is shown and on, and off it sends no strata_mcp, through a reload, until it is on again",
            tools_asked_for,
            ["page-tools-switch-ignored", "page-tools-switch-forgotten", "page-tools-switch-shown-unchecked"]
        ),
        case!(
            "page.end-of-the-conversation-in-view",
            "13.21",
            Must,
            FOLLOW,
            "a 70-line answer streamed slowly ends in view; opened again, the page opens at the end; scrolled to the top, sending shows the end; scrolled up while a turn streams (to the top, and 201 px above the end), the page stays where the reader put it, and 40 px above the end it follows; a key saved while scrolled up leaves the page where it is",
            end_in_view,
            [
                "page-end-not-followed",
                "page-opens-at-the-top",
                "page-send-does-not-show-the-end",
                "page-follows-a-reader-who-scrolled-up",
                "page-follows-only-at-the-very-end",
                "page-follows-from-far-above",
                "page-redraw-scrolls-to-the-end"
            ]
        ),
        case!(
            "page.opened-blocks-stay-open",
            "13.2",
            Must,
            OPENED,
            "a tool block opened while its turn streams on stays open to the turn's end, one opened after it and both through a reload and a later turn; a reload in the middle of that turn leaves none of its calls Running",
            opened_blocks,
            ["page-opened-blocks-close", "page-opened-blocks-forgotten", "page-reload-leaves-calls-running"]
        ),
    ]
}

/// The messages the page's chat requests sent, and each request's body.
fn chat_bodies(visit: &Visit<'_>) -> Vec<Value> {
    visit.proxy.chat_bodies()
}

/// The last user message of a chat request.
fn last_user(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].clone())
        .unwrap_or_default()
}

/// A JS expression: the last bubble holds `text` and no turn runs.
fn answered(text: &str) -> String {
    format!(
        "(() => {{ const b = [...document.querySelectorAll('{}')].pop(); return !!b && b.textContent.includes({text:?}); }})() && {}",
        sel("bubble"),
        idle()
    )
}

/// The message box's value.
async fn box_value(visit: &Visit<'_>) -> Result<String, CheckError> {
    let value = js(visit.client(), &format!("return document.querySelector('{}').value;", sel("message"))).await?;
    Ok(value.as_str().unwrap_or_default().to_string())
}

/// Empties the message box as a reader does (the value set through the element's own setter and an
/// `input` event).
async fn clear_box(visit: &Visit<'_>) -> CheckResult {
    let script = format!(
        "const box = document.querySelector('{}'); \
         Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), 'value').set.call(box, ''); \
         box.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
        sel("message")
    );
    js(visit.client(), &script).await.map(|_| ())
}

async fn message_box(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.message-box-sends-what-was-typed", |visit| Box::pin(message_box_at(visit))).await
}

async fn message_box_at(visit: &Visit<'_>) -> CheckResult {
    let typed = format!("  Zeile eins{KEY_SHIFT}{KEY_ENTER}{KEY_RELEASE}Zeile zwei  {KEY_ENTER}");
    type_keys(visit.client(), "message", &typed).await?;
    let running = format!("!({})", idle());
    wait_until(visit.client(), &running, 10, "Enter to send the message (a turn running)").await?;
    let left = box_value(visit).await?;
    expect(left.is_empty(), "the message box empty once the message is sent", format!("{left:?}"))?;
    type_keys(visit.client(), "message", &format!("nicht jetzt{KEY_ENTER}")).await?;
    expect(
        !js(visit.client(), &format!("return {};", idle())).await?.as_bool().unwrap_or(true),
        "the turn still running when Enter was pressed again (the scenario's answer takes seconds)",
        "it had ended: the check below would prove nothing",
    )?;
    wait_until(visit.client(), &answered(MODEL_END), 30, "the first turn answered by the script of /health's model")
        .await?;
    let bodies = chat_bodies(visit);
    expect_eq("chat requests after one message and an Enter while it ran", 1, bodies.len())?;
    expect_eq("the message sent", json!("Zeile eins\nZeile zwei"), last_user(&bodies[0]))?;
    let drawn = js(
        visit.client(),
        &format!(
            "const b = [...document.querySelectorAll('{}')].find(b => b.textContent.includes('Zeile eins')); return b ? b.innerText.trim() : null;",
            sel("bubble")
        ),
    )
    .await?;
    // The bubble may hold more than the message (a label such as "You": 13.7k names the bubble, not
    // its content alone); the message is in it with its line break drawn.
    let drawn_text = drawn.as_str().unwrap_or_default();
    expect(
        drawn_text.contains("Zeile eins\nZeile zwei"),
        "the sent message's bubble holds it, its line break kept (Zeile eins\nZeile zwei)",
        format!("{drawn}"),
    )?;
    clear_box(visit).await?;
    type_keys(visit.client(), "message", &format!("   {KEY_ENTER}")).await?;
    type_keys(visit.client(), "message", &format!("Dritte{KEY_ENTER}")).await?;
    let third = format!("document.querySelectorAll('{}').length >= 4 && {}", sel("bubble"), answered(MODEL_END));
    wait_until(visit.client(), &third, 30, "the next message answered").await?;
    let bodies = chat_bodies(visit);
    let sent: Vec<Value> = bodies.iter().map(last_user).collect();
    expect_eq(
        "the messages sent (none of spaces alone)",
        vec![json!("Zeile eins\nZeile zwei"), json!("Dritte")],
        sent,
    )?;
    for body in &bodies {
        expect_eq("every request's model (as /health names it)", json!(MODEL), body["model"].clone())?;
        expect_eq("every request streams", json!(true), body["stream"].clone())?;
        expect(
            body.get("strata_mcp").is_none_or(|v| v != &json!(true)),
            "no request asks for tools (GET /mcp lists none)",
            body.to_string(),
        )?;
    }
    let switch = js(visit.client(), &format!("return !!document.querySelector('{}');", sel("tools-switch"))).await?;
    if switch == json!(true) {
        expect(
            !shown(visit.client(), "tools-switch").await?,
            "no tools switch shown (the server has no MCP servers)",
            "shown",
        )?;
    }
    Ok(())
}

async fn tools_asked_for(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.tools-asked-for-only-when-there-are-tools", |visit| Box::pin(tools_asked_for_at(visit))).await
}

/// Whether the last chat request asked for tools.
fn last_asked_for_tools(visit: &Visit<'_>) -> Option<bool> {
    chat_bodies(visit).last().map(|b| b["strata_mcp"] == json!(true))
}

async fn tools_asked_for_at(visit: &Visit<'_>) -> CheckResult {
    let turns = |n: usize| format!("document.querySelectorAll('{}').length === {} && {}", sel("bubble"), 2 * n, idle());
    send(visit.client(), "Use a tool").await?;
    wait_until(
        visit.client(),
        &format!("{} && {}", turns(1), tools_settled(1)),
        30,
        "the first turn over, its call done",
    )
    .await?;
    expect_eq("the first request asks for tools (GET /mcp lists them)", Some(true), last_asked_for_tools(visit))?;
    let marked = js(visit.client(), &format!("return !!document.querySelector('{}');", sel("tools-switch"))).await?;
    if marked != json!(true) {
        return Ok(());
    }
    expect(
        shown(visit.client(), "tools-switch").await?,
        "the tools switch shown (the server has MCP servers)",
        "hidden",
    )?;
    let checked = format!("document.querySelector('{}').checked", sel("tools-switch"));
    expect_eq("the tools switch on at first", json!(true), js(visit.client(), &format!("return {checked};")).await?)?;
    click_mark(visit.client(), "tools-switch").await?;
    send(visit.client(), "No tools now").await?;
    wait_until(visit.client(), &turns(2), 30, "the second turn over").await?;
    expect_eq("a request with the tools switched off asks for none", Some(false), last_asked_for_tools(visit))?;
    reload(visit.client()).await?;
    wait_until(visit.client(), &turns(2), 15, "the conversation back after a reload").await?;
    expect_eq(
        "the tools switch still off after a reload",
        json!(false),
        js(visit.client(), &format!("return {checked};")).await?,
    )?;
    send(visit.client(), "Still no tools").await?;
    wait_until(visit.client(), &turns(3), 30, "the third turn over").await?;
    expect_eq(
        "after a reload, a request with the tools switched off asks for none",
        Some(false),
        last_asked_for_tools(visit),
    )?;
    click_mark(visit.client(), "tools-switch").await?;
    send(visit.client(), "Tools again").await?;
    wait_until(visit.client(), &turns(4), 30, "the fourth turn over").await?;
    expect_eq("with the switch on again the request asks for tools", Some(true), last_asked_for_tools(visit))
}

async fn end_in_view(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.end-of-the-conversation-in-view", |visit| Box::pin(end_in_view_at(visit))).await
}

/// A JS expression: the last bubble's end is in view, above the message box.
fn end_shown() -> String {
    format!(
        "(() => {{ const b = [...document.querySelectorAll('{}')].pop(); if (!b) return false; \
         const r = b.getBoundingClientRect(); const box = document.querySelector('{}').getBoundingClientRect(); \
         return r.bottom > 0 && r.bottom <= Math.min(window.innerHeight, box.top) + 2; }})()",
        sel("bubble"),
        sel("message")
    )
}

/// Scrolls the first bubble into view at the top, as a reader scrolling up does; where it then is.
async fn scroll_up(visit: &Visit<'_>) -> Result<f64, CheckError> {
    let script = format!(
        "const b = document.querySelector('{}'); b.scrollIntoView({{ block: 'start' }}); return b.getBoundingClientRect().top;",
        sel("bubble")
    );
    Ok(js(visit.client(), &script).await?.as_f64().unwrap_or(f64::NAN))
}

/// Where the first bubble is now.
async fn first_bubble_top(visit: &Visit<'_>) -> Result<f64, CheckError> {
    let script = format!("return document.querySelector('{}').getBoundingClientRect().top;", sel("bubble"));
    Ok(js(visit.client(), &script).await?.as_f64().unwrap_or(f64::NAN))
}

async fn end_in_view_at(visit: &Visit<'_>) -> CheckResult {
    send(visit.client(), "Erzähl").await?;
    wait_until(visit.client(), &answered("FOLLOW-END"), 30, "the long answer over").await?;
    let tall = js(visit.client(), "return document.documentElement.scrollHeight > 2 * window.innerHeight;").await?;
    expect_eq("the conversation taller than two viewports (or the checks below prove nothing)", json!(true), tall)?;
    wait_until(
        visit.client(),
        &end_shown(),
        2,
        "the end of the answer in view once it streamed (the page followed it)",
    )
    .await?;
    // Drawn again by a saved key, with the reader scrolled up: the page stays where the reader is.
    // The settings opened first, so that a button the driver scrolls to does not move the page.
    open_settings(visit.client()).await?;
    let top = scroll_up(visit).await?;
    enter_key(visit.client(), HARNESS_KEY).await?;
    // That nothing moves can only be seen over a while: the redraw's time, however the page closes
    // its settings (or keeps them open: 13.7 does not say).
    tokio::time::sleep(REDRAW_GRACE).await;
    stayed(visit, top, "once a key was saved").await?;
    // The band's two edges: 40 px above the end is "there" (followed), 201 px is "scrolled up" (left).
    for (turn, above, followed) in [(2, NEAR_THE_END_PX, true), (3, SCROLLED_UP_PX, false)] {
        send(visit.client(), "Weiter").await?;
        let streaming =
            format!("!({}) && document.querySelectorAll('{}').length === {}", idle(), sel("bubble"), 2 * turn);
        wait_until(visit.client(), &streaming, 10, &format!("answer {turn} streaming")).await?;
        let top = scroll_above_the_end(visit, above).await?;
        wait_until(visit.client(), &answered("FOLLOW-END"), 30, &format!("answer {turn} over")).await?;
        if followed {
            let shown = js(visit.client(), &format!("return {};", end_shown())).await?;
            expect_eq(
                &format!("the end in view once the answer streamed, the reader {above} px above the end as it began"),
                json!(true),
                shown,
            )?;
        } else {
            stayed(visit, top, &format!("the reader {above} px above the end as the answer streamed")).await?;
        }
    }
    // Opened anew, not reloaded: a reload puts the page back where it was.
    let opened = visit.client().goto(&format!("{}/", visit.proxy.url)).await;
    opened.map_err(|e| CheckError::Fail { expected: "the page to open again".into(), actual: e.to_string() })?;
    wait_until(visit.client(), &end_shown(), 10, "the page opened at the end of the conversation").await?;
    scroll_up(visit).await?;
    send(visit.client(), "Noch einmal").await?;
    wait_until(visit.client(), &end_shown(), 5, "the end (the message just sent) in view once sent from the top")
        .await?;
    let streaming = format!("!({}) && document.querySelectorAll('{}').length === 8", idle(), sel("bubble"));
    wait_until(visit.client(), &streaming, 10, "the fourth answer streaming").await?;
    let top = scroll_up(visit).await?;
    wait_until(visit.client(), &answered("FOLLOW-END"), 30, "the fourth answer over").await?;
    stayed(visit, top, "scrolled up while the answer streamed").await
}

/// The page left where it was `when`: the first bubble's top still at `top` (within 2 px).
async fn stayed(visit: &Visit<'_>, top: f64, when: &str) -> CheckResult {
    let now = first_bubble_top(visit).await?;
    expect(
        (now - top).abs() <= 2.0,
        format!("the page left where the reader was, {when} (the first bubble's top at {top:.0} px)"),
        format!("at {now:.0} px"),
    )
}

/// Within this many CSS pixels of the end the reader is "there" (13.21 says 40).
const NEAR_THE_END_PX: u32 = 40;
/// How long after a key is saved the page is watched for moving the reader: a redraw, and one that
/// waits a moment, is done well within it.
const REDRAW_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
/// Further than this above the end the reader has "scrolled up" (13.21 says more than 200).
const SCROLLED_UP_PX: u32 = 201;

/// Scrolls to `above` px above the end of the page; where the first bubble then is.
async fn scroll_above_the_end(visit: &Visit<'_>, above: u32) -> Result<f64, CheckError> {
    let script = format!(
        "window.scrollTo(0, document.documentElement.scrollHeight - window.innerHeight - {above}); \
         return document.querySelector('{}').getBoundingClientRect().top;",
        sel("bubble")
    );
    Ok(js(visit.client(), &script).await?.as_f64().unwrap_or(f64::NAN))
}

async fn opened_blocks(ctx: Ctx) -> CheckResult {
    at_768(&ctx, "page.opened-blocks-stay-open", |visit| Box::pin(opened_blocks_at(visit))).await
}

/// A JS expression: which tool blocks are open, in order.
fn open_blocks() -> String {
    format!(
        "[...document.querySelectorAll('{}')].map(t => t.tagName === 'DETAILS' ? t.open : t.getAttribute('aria-expanded') === 'true')",
        sel("tool")
    )
}

/// Opens tool block `i` as a reader does.
async fn open_block(visit: &Visit<'_>, i: usize) -> CheckResult {
    let script = format!(
        "const t = document.querySelectorAll('{}')[{i}]; if (t.tagName === 'DETAILS') t.open = true; else t.click(); return true;",
        sel("tool")
    );
    js(visit.client(), &script).await.map(|_| ())
}

/// A JS expression: the turn's first call done and its second running (in the last bubble).
fn second_running() -> String {
    format!(
        "(() => {{ const t = [...document.querySelectorAll('{}')].pop().querySelectorAll('{}'); \
         return t.length === 2 && t[0].dataset.state === 'done' && t[1].dataset.state === 'running'; }})()",
        sel("bubble"),
        sel("tool")
    )
}

async fn opened_blocks_at(visit: &Visit<'_>) -> CheckResult {
    let read = format!("return {};", open_blocks());
    send(visit.client(), "Open it").await?;
    wait_until(visit.client(), &second_running(), 30, "the first call done while the second runs").await?;
    open_block(visit, 0).await?;
    wait_until(visit.client(), &format!("{}[0]", open_blocks()), 5, "the first block open").await?;
    wait_until(visit.client(), &answered("OPENED-END"), 30, "the turn over").await?;
    expect_eq(
        "the blocks open once the turn streamed on to its end (the first opened while the second ran)",
        json!([true, false]),
        js(visit.client(), &read).await?,
    )?;
    open_block(visit, 1).await?;
    wait_until(visit.client(), &format!("{}[1]", open_blocks()), 5, "the second block open").await?;
    reload(visit.client()).await?;
    let back = format!("document.querySelectorAll('{}').length === 2", sel("tool"));
    wait_until(visit.client(), &back, 10, "the blocks back after a reload").await?;
    expect_eq(
        "the blocks open after a reload (the second opened once the turn was over)",
        json!([true, true]),
        js(visit.client(), &read).await?,
    )?;
    // A second turn, cut short by a reload while its second call runs (13.6), a block of it opened.
    send(visit.client(), "Once more").await?;
    wait_until(visit.client(), &second_running(), 30, "the next turn's second call running").await?;
    open_block(visit, 2).await?;
    wait_until(visit.client(), &format!("{}[2]", open_blocks()), 5, "the next turn's first block open").await?;
    reload(visit.client()).await?;
    wait_until(
        visit.client(),
        &back.replace("=== 2", ">= 2"),
        10,
        "the blocks back after a reload in the middle of a turn",
    )
    .await?;
    let states = format!("return [...document.querySelectorAll('{}')].map(t => t.dataset.state);", sel("tool"));
    let states = js(visit.client(), &states).await?;
    expect(
        states.as_array().into_iter().flatten().all(|s| s != "writing" && s != "running"),
        "no call still Writing or Running once the page is back from a reload in the middle of its turn",
        states.to_string(),
    )?;
    expect(
        js(visit.client(), &format!("return {};", idle())).await? == json!(true),
        "Stop not shown after the reload",
        "shown",
    )?;
    let opened = js(visit.client(), &read).await?;
    expect_eq(
        "the first turn's blocks still open after a later turn",
        json!([true, true]),
        json!(opened.as_array().map(|a| a[..2.min(a.len())].to_vec())),
    )
}
