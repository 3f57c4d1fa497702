//! What a user does on the chat page, and waiting on the DOM for what should follow (a condition
//! polled until it holds or a deadline passes — never a fixed sleep).

use std::time::Duration;

use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// Runs `script` (a function body that returns a value) in the page.
pub async fn js(client: &Client, script: &str) -> Value {
    client.execute(script, vec![]).await.unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
}

/// Waits until `condition` (a JS expression) is true, at most `seconds`.
pub async fn wait_until(client: &Client, condition: &str, seconds: u64, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if js(client, &format!("return !!({condition});")).await == json!(true) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "waited {seconds} s for {what}: {condition}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Stores the API key the way the settings dialog does, and reloads.
pub async fn use_key(client: &Client, key: &str) {
    js(client, &format!("localStorage.setItem('strata.apikey', JSON.stringify({})); return true;", json!(key))).await;
    client.refresh().await.expect("reload");
}

/// Types a message and presses Send.
pub async fn send(client: &Client, text: &str) {
    let input = client.find(Locator::Id("input")).await.expect("the message box");
    input.send_keys(text).await.expect("typing");
    client.find(Locator::Id("send-btn")).await.expect("Send").click().await.expect("click Send");
}

/// Clicks Stop.
pub async fn stop(client: &Client) {
    client.find(Locator::Id("stop-btn")).await.expect("Stop").click().await.expect("click Stop");
}

/// Opens every tool's details.
pub async fn expand_tools(client: &Client) {
    for summary in client.find_all(Locator::Css(".tool-call:not([open]) > summary")).await.expect("summaries") {
        // As a user would: bring it out from under the sticky message box first.
        let element = serde_json::to_value(&summary).expect("an element reference");
        client.execute("arguments[0].scrollIntoView({block: 'center'});", vec![element]).await.expect("scrolled");
        summary.click().await.expect("click a summary");
    }
}

/// The number of previews whose picture has loaded.
pub const LOADED_PREVIEWS: &str =
    "[...document.querySelectorAll('.preview img')].filter(i => i.complete && i.naturalWidth > 0).length";

/// The SHA-256 (hex) of what the first download link yields, computed in the page.
pub async fn first_download_sha256(client: &Client) -> String {
    let script = r#"
        const done = arguments[arguments.length - 1];
        const link = document.querySelector('.preview a.download');
        if (!link || !link.href) { done('no link'); return; }
        fetch(link.href).then(r => r.arrayBuffer()).then(b => crypto.subtle.digest('SHA-256', b)).then(d => {
            done([...new Uint8Array(d)].map(x => x.toString(16).padStart(2, '0')).join(''));
        }).catch(e => done('error: ' + e));
    "#;
    let value = client.execute_async(script, vec![]).await.expect("the download is read");
    value.as_str().unwrap_or_default().to_string()
}
