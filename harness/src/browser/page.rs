//! What a user does on a chat page, through the page contract of SPEC 13.7 (`data-strata`
//! attributes), and waiting on the DOM for what should follow: a condition polled until it holds or a
//! deadline passes. A missing attribute fails the check and names it.

use std::time::Duration;

use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use crate::check::CheckError;

/// The CSS selector of a contract name.
pub fn sel(name: &str) -> String {
    format!("[data-strata=\"{name}\"]")
}

/// Runs `script` (a function body that returns a value) in the page.
pub async fn js(client: &Client, script: &str) -> Result<Value, CheckError> {
    client.execute(script, vec![]).await.map_err(|e| CheckError::Fail {
        expected: "a script to run in the page".into(),
        actual: format!("{e}: {}", script.chars().take(120).collect::<String>()),
    })
}

/// The environment variable that caps every page wait, in seconds: a quick judge (the page's
/// mutation run, ci/stryker/judge.sh) fails a broken page sooner. Unset, each wait keeps its own bound.
pub const WAIT_CAP_VARIABLE: &str = "MEDIACHECK_PAGE_WAIT_S";

/// Waits until `condition` (a JS expression) is true, at most `seconds` (or the cap above).
pub async fn wait_until(client: &Client, condition: &str, seconds: u64, what: &str) -> Result<(), CheckError> {
    let cap = std::env::var(WAIT_CAP_VARIABLE).ok().and_then(|v| v.parse::<u64>().ok()).filter(|&cap| cap > 0);
    let seconds = cap.map_or(seconds, |cap| seconds.min(cap));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if js(client, &format!("return !!({condition});")).await? == json!(true) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(CheckError::Fail { expected: what.to_string(), actual: format!("not within {seconds} s") });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn find(client: &Client, name: &str) -> Result<fantoccini::elements::Element, CheckError> {
    client.find(Locator::Css(&sel(name))).await.map_err(|_| CheckError::Fail {
        expected: format!("an element marked {} (SPEC 13.7)", sel(name)),
        actual: "the page has none".into(),
    })
}

async fn click(client: &Client, name: &str) -> Result<(), CheckError> {
    let element = find(client, name).await?;
    element
        .click()
        .await
        .map_err(|e| CheckError::Fail { expected: format!("to click {}", sel(name)), actual: e.to_string() })
}

/// Whether the element marked `name` is shown.
pub async fn shown(client: &Client, name: &str) -> Result<bool, CheckError> {
    let script = format!(
        "const e = document.querySelector('{}'); return !!e && !e.hidden && e.getClientRects().length > 0;",
        sel(name)
    );
    Ok(js(client, &script).await? == json!(true))
}

/// Enters the key the way a user does: opens the settings when the key field is not shown, types the
/// key, keeps it.
pub async fn enter_key(client: &Client, key: &str) -> Result<(), CheckError> {
    open_settings(client).await?;
    let field = find(client, "api-key").await?;
    let typed = async {
        field.clear().await?;
        field.send_keys(key).await
    };
    typed.await.map_err(|e| CheckError::Fail { expected: "to type the key".into(), actual: e.to_string() })?;
    click(client, "save-key").await
}

/// Opens the settings when the key field is not shown, and waits for the field.
pub async fn open_settings(client: &Client) -> Result<(), CheckError> {
    if shown(client, "api-key").await? {
        return Ok(());
    }
    click(client, "open-settings").await?;
    let field_shown = format!("document.querySelector('{}').getClientRects().length > 0", sel("api-key"));
    wait_until(client, &field_shown, 5, "the key field to show").await
}

/// Types a message and sends it.
pub async fn send(client: &Client, text: &str) -> Result<(), CheckError> {
    let input = find(client, "message").await?;
    input
        .send_keys(text)
        .await
        .map_err(|e| CheckError::Fail { expected: "to type a message".into(), actual: e.to_string() })?;
    click(client, "send").await
}

/// Puts a long message into the message box at once, as a paste does (the value set through the
/// element's own setter, then an `input` event), and sends it: typing thousands of characters key by
/// key takes the driver seconds.
pub async fn send_pasted(client: &Client, text: &str) -> Result<(), CheckError> {
    let script = format!(
        "const box = document.querySelector('{}');          Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), 'value').set.call(box, arguments[0]);          box.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
        sel("message")
    );
    client
        .execute(&script, vec![serde_json::Value::from(text)])
        .await
        .map_err(|e| CheckError::Fail { expected: "to paste a message".into(), actual: e.to_string() })?;
    click(client, "send").await
}

/// Clicks Stop.
pub async fn stop(client: &Client) -> Result<(), CheckError> {
    click(client, "stop").await
}

/// Opens every tool block: a `<details>` is opened, an `aria-expanded` control clicked.
pub async fn open_every_tool(client: &Client) -> Result<(), CheckError> {
    let script = format!(
        "for (const t of document.querySelectorAll('{}')) {{ if (t.tagName === 'DETAILS') t.open = true; \
         else if (t.getAttribute('aria-expanded') !== 'true') t.click(); }} return true;",
        sel("tool")
    );
    js(client, &script).await.map(|_| ())
}

/// Opens every tool block and waits until each shows its result (a `tool-result` inside it).
pub async fn open_every_tool_with_results(client: &Client) -> Result<(), CheckError> {
    open_every_tool(client).await?;
    let results = format!(
        "[...document.querySelectorAll('{}')].every(t => t.querySelector('{}'))",
        sel("tool"),
        sel("tool-result")
    );
    wait_until(client, &results, 5, "a tool-result in every opened tool block").await
}

/// Reloads the page.
pub async fn reload(client: &Client) -> Result<(), CheckError> {
    client
        .refresh()
        .await
        .map_err(|e| CheckError::Fail { expected: "the page to reload".into(), actual: e.to_string() })
}

/// A JS expression: the number of pictures whose `img` has loaded.
pub fn loaded_pictures() -> String {
    format!(
        "[...document.querySelectorAll('{} img')].filter(i => i.complete && i.naturalWidth > 0).length",
        sel("picture")
    )
}

/// A JS expression: `count` tool blocks, each settled (done, error or not run), and no turn running.
pub fn tools_settled(count: usize) -> String {
    format!(
        "document.querySelectorAll('{tool}').length === {count} && \
         [...document.querySelectorAll('{tool}')].every(t => ['done', 'error', 'skipped'].includes(t.dataset.state)) && {idle}",
        tool = sel("tool"),
        idle = idle()
    )
}

/// A JS expression: no turn is running (Stop is not shown).
pub fn idle() -> String {
    format!(
        "(() => {{ const s = document.querySelector('{}'); return !s || s.hidden || s.getClientRects().length === 0; }})()",
        sel("stop")
    )
}

/// The SHA-256 (hex) of what each picture's download link yields, computed in the page, with the
/// link's `download` name and `href`.
pub async fn downloads(client: &Client) -> Result<Vec<(String, String, String)>, CheckError> {
    let script = format!(
        r#"
        const done = arguments[arguments.length - 1];
        const links = [...document.querySelectorAll('{} a[download]')];
        Promise.all(links.map(a => fetch(a.href).then(r => r.arrayBuffer())
            .then(b => crypto.subtle.digest('SHA-256', b))
            .then(d => [[...new Uint8Array(d)].map(x => x.toString(16).padStart(2, '0')).join(''), a.getAttribute('download') || '', a.href])
            .catch(e => ['error: ' + e, a.getAttribute('download') || '', a.href])))
          .then(done);
        "#,
        sel("picture")
    );
    let value = client
        .execute_async(&script, vec![])
        .await
        .map_err(|e| CheckError::Fail { expected: "the downloads to be read".into(), actual: e.to_string() })?;
    let rows = value.as_array().cloned().unwrap_or_default();
    Ok(rows
        .iter()
        .map(|r| {
            let text = |i: usize| r[i].as_str().unwrap_or_default().to_string();
            (text(0), text(1), text(2))
        })
        .collect())
}

/// Every base64 run in the page's localStorage, sessionStorage and IndexedDB, as `where: length`: 1024
/// or more characters of the base64 alphabet with at least 16 different ones (a long run of one letter,
/// a tool's "yyyy…", is text).
pub async fn base64_in_storage(client: &Client) -> Result<Vec<String>, CheckError> {
    let script = r#"
        const done = arguments[arguments.length - 1];
        const found = [];
        const scan = (where, text) => {
            for (const m of String(text).matchAll(/[A-Za-z0-9+\/=_-]{1024,}/g)) {
                if (new Set(m[0]).size >= 16) found.push(where + ': ' + m[0].length);
            }
        };
        for (const [name, store] of [['localStorage', localStorage], ['sessionStorage', sessionStorage]]) {
            for (let i = 0; i < store.length; i++) { const k = store.key(i); scan(name + '[' + k + ']', store.getItem(k)); }
        }
        const idb = async () => {
            if (!indexedDB.databases) return;
            for (const info of await indexedDB.databases()) {
                const db = await new Promise((ok, no) => { const r = indexedDB.open(info.name); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
                for (const storeName of db.objectStoreNames) {
                    const all = await new Promise((ok) => { const r = db.transaction(storeName).objectStore(storeName).getAll(); r.onsuccess = () => ok(r.result); r.onerror = () => ok([]); });
                    for (const value of all) {
                        let text;
                        try { text = JSON.stringify(value); } catch { text = String(value); }
                        scan('IndexedDB ' + info.name + '/' + storeName, text);
                    }
                }
                db.close();
            }
        };
        idb().then(() => done(found), (e) => done(found.concat(['IndexedDB could not be read: ' + e])));
    "#;
    let value = client
        .execute_async(script, vec![])
        .await
        .map_err(|e| CheckError::Fail { expected: "the page's storage to be read".into(), actual: e.to_string() })?;
    Ok(value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()).unwrap_or_default())
}

/// WebDriver's key codes, for `send_keys`: Shift stays down until [`KEY_RELEASE`].
pub const KEY_SHIFT: char = '\u{E008}';
/// Enter.
pub const KEY_ENTER: char = '\u{E007}';
/// Escape.
pub const KEY_ESCAPE: char = '\u{E00C}';
/// Releases every modifier key held down.
pub const KEY_RELEASE: char = '\u{E000}';

/// Types `keys` (text and the key codes above) into the element marked `name`.
pub async fn type_keys(client: &Client, name: &str, keys: &str) -> Result<(), CheckError> {
    find(client, name)
        .await?
        .send_keys(keys)
        .await
        .map_err(|e| CheckError::Fail { expected: format!("to type into {}", sel(name)), actual: e.to_string() })
}

/// Clicks the element marked `name`.
pub async fn click_mark(client: &Client, name: &str) -> Result<(), CheckError> {
    click(client, name).await
}

/// SPEC 13.13: no text the page draws reads `undefined`, `NaN` or `[object Object]` (what a page
/// shows when it draws a value it does not have). `when` names the moment in the failure.
pub async fn no_debris(client: &Client, when: &str) -> Result<(), CheckError> {
    let text = js(client, "return document.body.innerText;").await?;
    let text = text.as_str().unwrap_or_default();
    for debris in ["undefined", "NaN", "[object Object]"] {
        if let Some(at) = text.find(debris) {
            let from = text[..at].char_indices().rev().nth(60).map_or(0, |(i, _)| i);
            let shown: String = text[from..].chars().take(120).collect();
            return Err(CheckError::Fail {
                expected: format!("{when}: no text reading {debris:?} (SPEC 13.13)"),
                actual: shown,
            });
        }
    }
    Ok(())
}
