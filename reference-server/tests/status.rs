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
