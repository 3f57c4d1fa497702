//! SPEC §3: health, models and status shapes.

mod support;

use serde_json::{Value, json};
use support::{client, start};

#[tokio::test]
async fn spec_3_1_health_has_strata_s_keys_in_order() {
    let server = start(json!({"model": "tiny"})).await;
    let text = client().get(server.url("/health")).send().await.expect("sent").text().await.expect("body");
    assert_eq!(
        text,
        r#"{"status":"ok","max_context":262144,"model":"tiny","images":false,"api_key":false,"loaded":true,"service":"reference-server"}"#
    );
    let with_vision = start(json!({"api_key": "k", "vision": {}})).await;
    let health: Value =
        client().get(with_vision.url("/health")).send().await.expect("sent").json().await.expect("json");
    assert_eq!(health["images"], true);
    assert_eq!(health["api_key"], true);
}

#[tokio::test]
async fn spec_3_2_models_list_the_input_modalities() {
    let plain = start(json!({})).await;
    let models: Value = client().get(plain.url("/v1/models")).send().await.expect("sent").json().await.expect("json");
    assert_eq!(models["data"][0]["id"], "mock");
    assert_eq!(models["data"][0]["architecture"]["input_modalities"], json!(["text"]));
    let vision = start(json!({"vision": {"backend": "geometry"}})).await;
    let models: Value = client().get(vision.url("/v1/models")).send().await.expect("sent").json().await.expect("json");
    assert_eq!(models["data"][0]["architecture"]["input_modalities"], json!(["text", "image"]));
}

#[tokio::test]
async fn spec_3_3_status_reports_activity_and_vision() {
    let server = start(json!({})).await;
    let status: Value = client().get(server.url("/v1/status")).send().await.expect("sent").json().await.expect("json");
    assert_eq!(status["busy"], false);
    assert_eq!(status["requests"], json!({"running": 0, "finished": 0, "cancelled": 0}));
    assert_eq!(status["vision"]["enabled"], false);
}

/// Development (`--web-dir`): the page's names are read from the folder on every request, so an edited
/// file is served at once without a rebuild; a name the page does not have is still the JSON 404, and so
/// is one of its names missing from the folder. Without the flag the compiled-in page is served.
#[tokio::test]
async fn web_dir_serves_the_page_from_a_folder_on_every_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let web = dir.path().join("web");
    std::fs::create_dir(&web).expect("web folder");
    std::fs::write(web.join("index.html"), "<!doctype html><p>first</p>").expect("index");
    std::fs::write(web.join("app.js"), "export const v = 1;").expect("app.js");
    std::fs::write(web.join("secret.txt"), "not the page's").expect("other file");
    let config = support::write_config(dir.path(), &json!({}));
    let overrides =
        reference_server::config::Overrides { port: Some(0), web_dir: Some(web.clone()), ..Default::default() };
    let loaded = reference_server::config::RunConfig::load(&config, &overrides).expect("valid configuration");
    let server = reference_server::start(loaded.config).await.expect("server starts");
    let get = |path: &str| client().get(format!("{}{path}", server.url())).send();
    let index = get("/").await.expect("sent");
    assert_eq!(index.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(index.text().await.expect("body"), "<!doctype html><p>first</p>");
    std::fs::write(web.join("index.html"), "<!doctype html><p>edited</p>").expect("edited");
    assert_eq!(get("/").await.expect("sent").text().await.expect("body"), "<!doctype html><p>edited</p>");
    let script = get("/web/app.js").await.expect("sent");
    assert_eq!(script.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(script.headers()["cache-control"], "no-cache");
    assert_eq!(script.text().await.expect("body"), "export const v = 1;");
    // A name that is not UTF-8 once decoded, or not percent-encoding at all, is no asset: the JSON 404.
    for missing in
        ["/web/secret.txt", "/web/state.js", "/web/..%2Fweb%2Fapp.js", "/web/%FF", "/web/%", "/web/%zz", "/web/%C0%AE"]
    {
        let answer = get(missing).await.expect("sent");
        assert_eq!(answer.status(), 404, "{missing}");
        let body: Value = answer.json().await.expect("the JSON error");
        assert_eq!(body["error"]["type"], "not_found", "{missing}");
    }
    let compiled = start(json!({})).await;
    let page = client().get(compiled.url("/")).send().await.expect("sent").text().await.expect("body");
    assert!(page.contains("data-strata"), "the compiled-in page: {page}");
}

/// SPEC 13.23: the page comes with its Content-Security-Policy (its own scripts only, nothing embedded,
/// no `<base>`, no framing); a refusal of the page's route is JSON and needs none.
#[tokio::test]
async fn spec_13_23_the_page_comes_with_its_policy() {
    let server = start(json!({})).await;
    let page = client().get(server.url("/")).send().await.expect("sent");
    let policy = page.headers()["content-security-policy"].to_str().expect("ASCII").to_string();
    for directive in ["script-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"] {
        assert!(policy.split(';').any(|d| d.trim() == directive), "{directive} in {policy}");
    }
    assert!(!policy.contains("unsafe"), "{policy}");
}
