//! The chat page at 320, 390, 640, 768 and 1280 px (SPEC §13, seed 000's browser checks), against the
//! reference server with the picture fixture and the mock engine: pictures with a very long tool name
//! and a very long result; details expanded; a running call with Stop visible; a reload (previews and
//! download links come back, the download's SHA-256 checked); a picture removed from the cache (the
//! next text turn still works). Geometry and DOM only; a screenshot per width and step.

use std::path::PathBuf;

use fixtures::images::{PictureFormat, picture, sha256_hex};
use fixtures::scripts::{answer_script, call_script, calls_script};
use fixtures::tools::LONG_NAME;
use layout_tests::browser::{Driver, clear_browser_cache, screenshot, set_viewport};
use layout_tests::geometry::assert_fits;
use layout_tests::page::{LOADED_PREVIEWS, expand_tools, first_download_sha256, js, send, stop, use_key, wait_until};
use serde_json::json;

const KEY: &str = "layout-key";
const WIDTHS: [u32; 5] = [320, 390, 640, 768, 1280];

struct Server {
    server: reference_server::RunningServer,
    cache: PathBuf,
    _fixture: fixtures::http::HttpFixture,
    _dir: tempfile::TempDir,
}

async fn server() -> Server {
    let fixture = fixtures::http::serve_http(Default::default(), 0, None).await.expect("fixture");
    let dir = tempfile::tempdir().expect("dir");
    let long_name = format!("fake__{LONG_NAME}");
    let pictures_and_more = calls_script(&[
        ("fake__picture", &[("width", "640"), ("height", "360"), ("count", "2")]),
        (&long_name[..64], &[]),
        ("fake__big", &[("n", "6000")]),
    ]);
    let config = json!({
        "api_key": KEY,
        "mcp": {"image_results": true},
        "mcp_servers": {"fake": {"url": fixture.url}},
        "engine": {"scripts": [
            pictures_and_more,
            answer_script("Here are the pictures, and a tool with a very long name."),
            call_script("fake__slow_picture", &[("seconds", "60")]),
            answer_script("Still here."),
        ]},
    });
    let path = dir.path().join("layout.json");
    std::fs::write(&path, config.to_string()).expect("config");
    let overrides = reference_server::config::Overrides { port: Some(0), ..Default::default() };
    let loaded = reference_server::config::RunConfig::load(&path, &overrides).expect("config");
    let cache = loaded.config.media_dir();
    let server = reference_server::start(loaded.config).await.expect("server");
    Server { server, cache, _fixture: fixture, _dir: dir }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_page_fits_every_width_through_a_whole_conversation() {
    let driver = Driver::start().await;
    for width in WIDTHS {
        let server = server().await;
        let client = driver.session().await;
        set_viewport(&client, width, 800).await;
        client.goto(&server.server.url()).await.expect("the page loads");
        use_key(&client, KEY).await;
        wait_until(&client, "!document.getElementById('mcp-toggle').hidden", 20, "the MCP toggle").await;

        // Pictures, a very long tool name and a very long text result.
        send(&client, "Show me two pictures").await;
        wait_until(
            &client,
            &format!("{LOADED_PREVIEWS} === 2 && document.getElementById('stop-btn').hidden"),
            30,
            "two previews",
        )
        .await;
        let meta = js(&client, "return document.querySelector('.msg.assistant .meta').textContent;").await;
        assert_eq!(meta, json!("3 tool calls"), "at {width}px");
        let outside = js(&client, "return document.querySelectorAll('.tool > .tool-media .preview').length;").await;
        assert_eq!(outside, json!(2), "previews sit outside the collapsed details at {width}px");
        let collapsed = js(&client, "return [...document.querySelectorAll('.tool-call')].every(d => !d.open);").await;
        assert_eq!(collapsed, json!(true), "tool blocks are collapsed by default");
        assert_fits(&client, width, "pictures").await;
        screenshot(&client, width, "1-pictures").await;

        // The details opened: arguments and the long result scroll inside their own boxes.
        expand_tools(&client).await;
        wait_until(&client, "[...document.querySelectorAll('.tool-call')].every(d => d.open)", 5, "every detail open")
            .await;
        assert_fits(&client, width, "expanded").await;
        screenshot(&client, width, "2-expanded").await;

        // A running call, Stop visible; then Stop.
        send(&client, "Take your time").await;
        wait_until(&client, "document.querySelector('.tool-call[data-state=\"running\"]') && !document.getElementById('stop-btn').hidden", 20, "a running call").await;
        assert_fits(&client, width, "running").await;
        screenshot(&client, width, "3-running").await;
        stop(&client).await;
        wait_until(&client, "document.getElementById('stop-btn').hidden && document.querySelectorAll('.tool-call[data-state=\"skipped\"]').length === 1", 10, "the stopped call skipped").await;

        // A reload: the previews and download links come back from references alone.
        client.refresh().await.expect("reload");
        wait_until(&client, &format!("{LOADED_PREVIEWS} === 2"), 20, "the previews after a reload").await;
        let stored = js(&client, "return localStorage.getItem('strata.chat');").await;
        let stored = stored.as_str().unwrap_or_default();
        assert!(
            stored.contains("strata-tool-media:") && !stored.contains("iVBOR"),
            "history keeps references, never base64"
        );
        let hrefs = js(
            &client,
            "return [...document.querySelectorAll('.preview a.download')].map(a => a.href.startsWith('blob:'));",
        )
        .await;
        assert_eq!(hrefs, json!([true, true]), "download links are blob URLs at {width}px");
        let expected = sha256_hex(&picture(PictureFormat::Png, 640, 360, 1));
        assert_eq!(first_download_sha256(&client).await, expected, "the download yields the tool's bytes");
        assert_fits(&client, width, "reloaded").await;
        screenshot(&client, width, "4-reloaded").await;

        // The first picture removed from the cache: a note in its place, and the next turn works.
        let gone = format!("{}.png", expected);
        std::fs::remove_file(server.cache.join(&gone)).expect("the cached file is removed");
        clear_browser_cache(&client).await;
        client.refresh().await.expect("reload");
        wait_until(
            &client,
            &format!("document.querySelectorAll('.media-gone').length === 1 && {LOADED_PREVIEWS} === 1"),
            20,
            "a note for the missing picture",
        )
        .await;
        js(&client, "document.querySelector('.media-gone').scrollIntoView({block: 'center'}); return true;").await;
        assert_fits(&client, width, "picture-gone").await;
        screenshot(&client, width, "5-picture-gone").await;
        send(&client, "Are you there?").await;
        wait_until(
            &client,
            "[...document.querySelectorAll('.msg.assistant .text')].some(t => t.textContent === 'Still here.')",
            20,
            "the next answer",
        )
        .await;
        // The page sent its pictures back as strata-tool-media references in the tool message: this
        // server has no vision encoder, so each became a note in the prompt.
        let prompt = server.server.state.engine.recent_prompts().pop().expect("a prompt");
        let prompt = reference_server::tokenizer::decode(&prompt);
        assert_eq!(prompt.matches("[image omitted: this server has no image encoder]").count(), 2, "{prompt}");
        assert!(!prompt.contains("iVBOR"), "no base64 went back");
        assert_fits(&client, width, "after-removal").await;
        screenshot(&client, width, "6-next-turn").await;

        client.close().await.expect("session closed");
        server.server.stop().await;
    }
}
