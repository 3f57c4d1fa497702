//! SPEC §2: which routes need the key, how it is sent, the 401 body, the Host and Origin rules.

mod support;

use serde_json::{Value, json};
use support::{client, start, user};

const KEY: &str = "s3cret-key";

fn exact_401() -> Value {
    json!({"error": {"type": "authentication_error", "message": "missing or wrong API key"}})
}

#[tokio::test]
async fn spec_2_3_and_2_4_every_protected_route_needs_the_key() {
    let server = start(json!({"api_key": KEY})).await;
    let protected = [
        ("GET", "/v1/models"),
        ("GET", "/v1/status"),
        ("GET", "/mcp"),
        ("GET", "/tool-media/0000000000000000000000000000000000000000000000000000000000000000.png"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/health"),
    ];
    for (method, path) in protected {
        for key in [None, Some("wrong"), Some("s3cret-keyX")] {
            let mut request = client().request(method.parse().expect("method"), server.url(path));
            if let Some(key) = key {
                request = request.bearer_auth(key);
            }
            let response = request.json(&user("hi")).send().await.expect("sent");
            assert_eq!(response.status(), 401, "{method} {path} with {key:?}");
            let body: Value = response.json().await.expect("json");
            assert_eq!(body, exact_401(), "{method} {path}");
        }
    }
}

#[tokio::test]
async fn spec_2_3_health_is_public_and_2_2_both_header_forms_work() {
    let server = start(json!({"api_key": KEY})).await;
    assert_eq!(client().get(server.url("/health")).send().await.expect("sent").status(), 200);
    assert_eq!(client().get(server.url("/api/health")).send().await.expect("sent").status(), 200);
    let bearer = client().get(server.url("/v1/models")).header("Authorization", format!("BEARER {KEY}"));
    assert_eq!(bearer.send().await.expect("sent").status(), 200);
    let x_api_key = client().get(server.url("/v1/models")).header("x-api-key", KEY);
    assert_eq!(x_api_key.send().await.expect("sent").status(), 200);
    let options = client().request(reqwest::Method::OPTIONS, server.url("/v1/chat/completions"));
    assert_ne!(options.send().await.expect("sent").status(), 401);
}

#[tokio::test]
async fn spec_2_2_a_latin1_key_matches_its_latin1_bytes() {
    let server = start(json!({"api_key": "clé"})).await;
    let latin1 = reqwest::header::HeaderValue::from_bytes(b"Bearer cl\xe9").expect("header");
    let response = client().get(server.url("/v1/models")).header("Authorization", latin1).send().await.expect("sent");
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn spec_2_5_a_foreign_host_is_refused_without_a_key() {
    let server = start(json!({})).await;
    let response = client().get(server.url("/v1/models")).header("Host", "evil.example").send().await.expect("sent");
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["type"], "forbidden");
    assert!(body["error"]["message"].as_str().expect("text").contains("DNS rebinding protection"));
    for host in ["localhost:1234", "app.localhost", "10.1.2.3"] {
        let ok = client().get(server.url("/v1/models")).header("Host", host).send().await.expect("sent");
        assert_eq!(ok.status(), 200, "{host}");
    }
    let allowed = start(json!({"allowed_hosts": ["chat.example"]})).await;
    let ok = client().get(allowed.url("/v1/models")).header("Host", "chat.example").send().await.expect("sent");
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn spec_2_5_the_host_check_is_skipped_with_a_key() {
    let server = start(json!({"api_key": KEY})).await;
    let response = client()
        .get(server.url("/v1/models"))
        .header("Host", "evil.example")
        .bearer_auth(KEY)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn spec_2_6_a_foreign_origin_cannot_post_without_a_key() {
    let server = start(json!({"trusted_origins": ["https://trusted.example"]})).await;
    let post = |origin: &str| {
        client().post(server.url("/v1/chat/completions")).header("Origin", origin.to_string()).json(&user("hi")).send()
    };
    let response = post("https://evil.example").await.expect("sent");
    assert_eq!(response.status(), 403);
    assert_eq!(response.json::<Value>().await.expect("json")["error"]["type"], "forbidden");
    assert_eq!(post("https://trusted.example").await.expect("sent").status(), 200);
    assert_eq!(post("http://localhost:3000").await.expect("sent").status(), 200);
    assert_eq!(post("chrome-extension://abc").await.expect("sent").status(), 200);
}

#[tokio::test]
async fn spec_2_8_errors_are_json_and_say_nothing_about_paths() {
    let server = start(json!({"api_key": KEY})).await;
    let response = client().get(server.url("/no/such/route")).bearer_auth(KEY).send().await.expect("sent");
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body, json!({"error": {"type": "not_found", "message": "not found"}}));
    let response = client().delete(server.url("/health")).send().await.expect("sent");
    assert_eq!(response.status(), 401, "a DELETE needs the key");
    let response = client().delete(server.url("/v1/models")).bearer_auth(KEY).send().await.expect("sent");
    assert_eq!(response.status(), 405);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body, json!({"error": {"type": "invalid_request_error", "message": "method not allowed"}}));
}
