//! SPEC §10 and §12: pictures referenced in later turns, resolved only inside the cache, and measured
//! by the vision path so `usage.prompt_tokens` shows from outside that they arrived.

mod support;

use fixtures::images::{PictureFormat, picture};
use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};
use support::{chat, chat_stream, opt_in, prompts, results, with_fixture};

/// A conversation whose tool message carries `reference` after its text, as the page sends it.
fn later_turn(reference: &str) -> Value {
    json!({"messages": [
        {"role": "user", "content": "take a picture"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "fake__picture", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": [
            {"type": "text", "text": "1 picture of 640x360"},
            {"type": "image_url", "image_url": {"url": reference}},
        ]},
        {"role": "user", "content": "what is in it?"},
    ]})
}

fn vision_config(image_results: bool, scripts: Vec<String>) -> Value {
    json!({"mcp": {"image_results": image_results}, "vision": {"backend": "geometry"}, "engine": {"scripts": scripts}})
}

async fn cached_reference(setup: &support::WithFixture) -> String {
    let sse = chat_stream(&setup.server, opt_in()).await;
    results(&sse)[0]["media"][0]["ref"].as_str().expect("ref").to_string()
}

fn scripts_640() -> Vec<String> {
    vec![call_script("fake__picture", &[("width", "640"), ("height", "360")]), answer_script("seen")]
}

#[tokio::test]
async fn spec_12_2_an_mcp_picture_reaches_the_prompt_as_its_image_tokens() {
    let setup = with_fixture(vision_config(true, scripts_640())).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    assert_eq!(support::last_prompt_pads(&setup.server), 299, "640x360 → 644x364 → 299 tokens");
    let usage = sse.last()["usage"]["prompt_tokens"].as_u64().expect("usage");
    let prompt = setup.server.server.state.engine.recent_prompts().pop().expect("prompt");
    assert_eq!(usage as usize, prompt.len());
    let status: Value =
        support::client().get(setup.server.url("/v1/status")).send().await.expect("s").json().await.expect("j");
    assert_eq!(
        status["vision"]["geometry"],
        json!({"patch_size": 14, "merge_size": 2, "min_pixels": 3136, "max_pixels": 1003520})
    );
}

#[tokio::test]
async fn spec_8_8_without_an_encoder_the_model_gets_the_picture_s_text() {
    let setup = with_fixture(json!({"mcp": {"image_results": true}, "engine": {"scripts": scripts_640()}})).await;
    chat_stream(&setup.server, opt_in()).await;
    assert_eq!(support::last_prompt_pads(&setup.server), 0);
    let prompt = prompts(&setup.server).pop().expect("prompt");
    assert!(prompt.contains("<tool_response>\n1 picture of 640x360\n[image (image/png, "), "{prompt}");
}

#[tokio::test]
async fn spec_10_1_and_10_4_a_reference_resolves_to_its_picture() {
    let setup = with_fixture(vision_config(true, scripts_640())).await;
    let reference = cached_reference(&setup).await;
    let answer: Value = chat(&setup.server, &later_turn(&reference)).await.json().await.expect("json");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop", "{answer}");
    assert_eq!(support::last_prompt_pads(&setup.server), 299);
    let without: Value = chat(&setup.server, &later_turn_text_only()).await.json().await.expect("json");
    let with_tokens = answer["usage"]["prompt_tokens"].as_u64().expect("n");
    let text_tokens = without["usage"]["prompt_tokens"].as_u64().expect("n");
    assert_eq!(with_tokens - text_tokens, 299 + 2, "the picture's pads plus vision start and end");
}

fn later_turn_text_only() -> Value {
    let mut body = later_turn("x");
    body["messages"][2]["content"] = json!([{"type": "text", "text": "1 picture of 640x360"}]);
    body
}

#[tokio::test]
async fn spec_10_2_malformed_references_are_400() {
    let setup = with_fixture(vision_config(true, scripts_640())).await;
    let reference = cached_reference(&setup).await;
    let name = reference.trim_start_matches("strata-tool-media:");
    let hash = &name[..64];
    let malformed = [
        format!("strata-tool-media:../{name}"),
        format!("strata-tool-media:{hash}/x.png"),
        format!("strata-tool-media:{hash}%2Epng"),
        format!("strata-tool-media:{}.png", hash.to_uppercase()),
        format!("strata-tool-media:{hash}.gif"),
        format!("strata-tool-media:{hash}.png "),
        format!("strata-tool-media:{hash}.png\\"),
        format!("strata-tool-media:{hash}\u{FF0E}png"),
        format!("strata-tool-media:/{name}"),
        "strata-tool-media:".to_string(),
    ];
    for reference in malformed {
        let response = chat(&setup.server, &later_turn(&reference)).await;
        assert_eq!(response.status(), 400, "{reference}");
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["error"]["type"], "invalid_request_error", "{reference}");
    }
    let mut in_user = later_turn(&reference);
    in_user["messages"][3]["content"] = json!([{"type": "image_url", "image_url": {"url": reference}}]);
    assert_eq!(chat(&setup.server, &in_user).await.status(), 400, "a reference outside a tool message");
}

#[tokio::test]
async fn spec_10_3_a_missing_file_becomes_a_note_and_the_turn_goes_on() {
    let setup = with_fixture(vision_config(true, scripts_640())).await;
    let reference = cached_reference(&setup).await;
    let name = reference.trim_start_matches("strata-tool-media:");
    std::fs::remove_file(setup.server.dir.path().join("run.tool-media").join(name)).expect("removed");
    let response = chat(&setup.server, &later_turn(&reference)).await;
    assert_eq!(response.status(), 200);
    let prompt = prompts(&setup.server).pop().expect("prompt");
    assert!(prompt.contains("1 picture of 640x360[image omitted: the picture is no longer in the cache]"), "{prompt}");
}

#[tokio::test]
async fn spec_10_3_feature_off_or_no_mcp_become_notes() {
    let on = with_fixture(vision_config(true, scripts_640())).await;
    let reference = cached_reference(&on).await;
    let off = with_fixture(vision_config(false, vec![answer_script("ok")])).await;
    assert_eq!(chat(&off.server, &later_turn(&reference)).await.status(), 200);
    assert!(prompts(&off.server).pop().expect("p").contains("[image omitted: tool pictures are switched off]"));
    let no_mcp = support::start(json!({"mcp": {"image_results": true}, "vision": {}})).await;
    assert_eq!(chat(&no_mcp, &later_turn(&reference)).await.status(), 200);
    assert!(prompts(&no_mcp).pop().expect("p").contains("[image omitted: MCP is not configured]"));
    let no_encoder = with_fixture(json!({"mcp": {"image_results": true}})).await;
    assert_eq!(chat(&no_encoder.server, &later_turn(&reference)).await.status(), 200);
    assert!(
        prompts(&no_encoder.server).pop().expect("p").contains("[image omitted: this server has no image encoder]")
    );
}

#[tokio::test]
async fn spec_12_3_an_undecodable_picture_is_a_note_in_a_tool_message_and_400_from_a_user() {
    let setup = with_fixture(vision_config(true, vec![answer_script("ok")])).await;
    let bad = "data:image/png;base64,iVBORw0KGgoAAAAAAAAA";
    let mut body = later_turn(bad);
    assert_eq!(chat(&setup.server, &body).await.status(), 200);
    assert!(prompts(&setup.server).pop().expect("p").contains("[image omitted: the png picture could not be read"));
    body["messages"][3]["content"] = json!([{"type": "image_url", "image_url": {"url": bad}}]);
    assert_eq!(chat(&setup.server, &body).await.status(), 400);
    let good = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, picture(PictureFormat::Png, 640, 360, 1))
    );
    body["messages"][3]["content"] = json!([{"type": "image_url", "image_url": {"url": good}}]);
    assert_eq!(chat(&setup.server, &body).await.status(), 200, "a user's readable picture is fine with an encoder");
    assert_eq!(support::last_prompt_pads(&setup.server), 299);
}
