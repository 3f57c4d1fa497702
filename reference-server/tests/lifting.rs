//! SPEC §11: pictures a client hands back as base64 in tool text — the AI SDK (Chatbox) shape end to
//! end, base64 that is not a picture, and users' messages left exactly as sent.

mod support;

use base64::Engine;
use fixtures::images::noise_png;
use fixtures::payloads::chatbox_conversation;
use serde_json::{Value, json};
use support::{chat, prompts, start};

#[tokio::test]
async fn spec_11_2_the_chatbox_shape_goes_from_megabytes_of_base64_to_a_note_and_a_picture() {
    let png = noise_png(640, 600, 9);
    let base64_len = base64::engine::general_purpose::STANDARD.encode(&png).len();
    assert!(base64_len > 1_400_000, "a photo-sized picture: {base64_len} characters");
    let body = chatbox_conversation(&png);
    let with_vision = start(json!({"vision": {"backend": "geometry"}})).await;
    let answer: Value = chat(&with_vision, &body).await.json().await.expect("json");
    let prompt_tokens = answer["usage"]["prompt_tokens"].as_u64().expect("usage");
    assert_eq!(support::last_prompt_pads(&with_vision), 644 * 588 / 784, "640x600 → 644x588 tokens");
    assert!(prompt_tokens < 1_000 + 483, "{prompt_tokens} tokens instead of ~{base64_len}");
    let prompt = prompts(&with_vision).pop().expect("prompt");
    let note = format!("\"data\":\"[image (image/png, {} bytes)]", reference_server::result_text::thousands(png.len()));
    assert!(prompt.contains(&note), "the note stays where the base64 was");
    let without_vision = start(json!({})).await;
    let answer: Value = chat(&without_vision, &body).await.json().await.expect("json");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(support::last_prompt_pads(&without_vision), 0, "11.5: without an encoder the base64 is dropped");
    assert!(prompts(&without_vision).pop().expect("p").contains(&note));
}

#[tokio::test]
async fn spec_11_1_a_user_s_base64_is_never_read() {
    let png = noise_png(640, 600, 9);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    let server = start(json!({"vision": {}})).await;
    let body = json!({"messages": [{"role": "user", "content": format!("look: {encoded}")}]});
    let response = chat(&server, &body).await;
    assert_eq!(response.status(), 400, "left as sent, so it does not fit the context");
    let body: Value = response.json().await.expect("json");
    assert!(body["error"]["message"].as_str().expect("m").contains("exceeds the context"));
}

#[tokio::test]
async fn spec_11_3_base64_that_is_not_a_picture_is_left_exactly_as_sent() {
    let blob = base64::engine::general_purpose::STANDARD.encode(vec![42u8; 3000]);
    let server = start(json!({"vision": {}})).await;
    let body = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": format!("archive: {blob} end")},
    ]});
    assert_eq!(chat(&server, &body).await.status(), 200);
    assert!(prompts(&server).pop().expect("p").contains(&format!("archive: {blob} end")));
}

#[tokio::test]
async fn spec_11_4_at_most_eight_pictures_a_message() {
    let small = fixtures::images::picture(fixtures::images::PictureFormat::Png, 300, 300, 1);
    assert!(base64::engine::general_purpose::STANDARD.encode(&small).len() >= 1024);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&small);
    let server = start(json!({"vision": {}})).await;
    let text = vec![encoded.clone(); 9].join(" | ");
    let body = json!({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": text}]});
    assert_eq!(chat(&server, &body).await.status(), 200);
    let pads = support::last_prompt_pads(&server);
    assert_eq!(pads, 8 * 121, "eight pictures of 308x308 → 121 tokens each");
    assert!(prompts(&server).pop().expect("p").contains(&encoded), "the ninth stays as sent");
}
