//! SPEC 12.4 on libtorch (cargo feature `torch`): the same token counts as the geometry backend for
//! every fixture picture, embeddings checked against values computed without libtorch, a known
//! picture's known mean, the whole request path, and the refusals.
#![cfg(feature = "torch")]

mod support;

use fixtures::images::{PictureFormat, noise_png, picture};
use reference_server::config::{VisionDevice, VisionSettings};
use reference_server::vision::torch::{EMBED, MEAN, STD, TorchBackend, weight};
use reference_server::vision::{Geometry, VisionBackend};
use serde_json::json;
use support::{chat, prompts, start};

fn geometry() -> Geometry {
    Geometry::new(56 * 56, 28 * 28 * 1280)
}

/// The device under test: the CPU, or CUDA in the GPU nightly (`MEDIACHECK_TORCH_DEVICE=cuda`).
fn device() -> VisionDevice {
    match std::env::var("MEDIACHECK_TORCH_DEVICE").as_deref() {
        Ok("cuda") => VisionDevice::Cuda,
        _ => VisionDevice::Cpu,
    }
}

fn torch() -> TorchBackend {
    TorchBackend::new(geometry(), device()).expect("libtorch on the device under test")
}

fn geometry_backend() -> std::sync::Arc<dyn VisionBackend> {
    let settings = VisionSettings {
        backend: reference_server::config::VisionBackendKind::Geometry,
        device: VisionDevice::Cpu,
        min_pixels: 56 * 56,
        max_pixels: 28 * 28 * 1280,
    };
    reference_server::vision::backend_for(&settings).expect("geometry")
}

#[test]
fn spec_12_4_token_counts_match_the_geometry_backend_for_every_fixture_picture() {
    let torch = torch();
    let geometry = geometry_backend();
    let mut pictures: Vec<(String, Vec<u8>)> = Vec::new();
    // 3000×2000 and 4000×900 are more than 4× their grid: shrunk in 8-bit pixels first, same grid.
    for (w, h) in [
        (640, 360),
        (1920, 1080),
        (28, 28),
        (8, 8),
        (300, 1200),
        (2000, 1000),
        (97, 131),
        (1280, 720),
        (3000, 2000),
        (4000, 900),
    ] {
        for format in [PictureFormat::Png, PictureFormat::Jpeg, PictureFormat::Webp] {
            pictures.push((format!("{w}x{h} {format:?}"), picture(format, w, h, 1)));
        }
    }
    pictures.push(("noise 800x625".into(), noise_png(800, 625, 5)));
    for (name, bytes) in pictures {
        let expected = geometry.prepare(&bytes).expect("geometry").tokens;
        let prepared = torch.prepare(&bytes).expect("torch");
        assert_eq!(prepared.tokens, expected, "{name}");
        let embeddings = prepared.embeddings.expect("embeddings");
        assert_eq!((embeddings.rows, embeddings.width), (expected, 4 * EMBED as usize), "{name}");
        assert!(embeddings.values.iter().all(|v| v.is_finite()), "{name}");
    }
}

/// For a picture of one colour every patch is that colour, so every embedding row is
/// Σ_c n_c · Σ_ij W[k,c,i,j], four times over — computed here without libtorch.
#[test]
fn spec_12_4_embeddings_of_a_flat_colour_are_what_the_formula_says() {
    let colour = [200u8, 100, 50];
    let rgb: Vec<u8> = std::iter::repeat_n(colour, 84 * 56).flatten().collect();
    let embeddings = torch().embed(&rgb, 84, 56).expect("embedded");
    let normalized: Vec<f64> =
        (0..3).map(|c| (f64::from(colour[c]) / 255.0 - f64::from(MEAN[c])) / f64::from(STD[c])).collect();
    let expected: Vec<f64> = (0..EMBED)
        .map(|k| {
            (0..3)
                .map(|c| {
                    normalized[c as usize] * (0..196).map(|p| f64::from(weight(k, c, p / 14, p % 14))).sum::<f64>()
                })
                .sum()
        })
        .collect();
    assert_eq!((embeddings.rows, embeddings.width), (6, 4 * EMBED as usize), "84x56 → 3x2 tokens");
    for row in embeddings.values.chunks(embeddings.width) {
        for (index, value) in row.iter().enumerate() {
            let want = expected[index % EMBED as usize];
            assert!((f64::from(*value) - want).abs() < 1e-3, "row value {index}: {value} vs {want}");
        }
    }
}

#[test]
fn spec_12_4_a_known_picture_has_its_known_shape_and_mean() {
    let prepared = torch().prepare(&picture(PictureFormat::Png, 640, 360, 1)).expect("prepared");
    let embeddings = prepared.embeddings.expect("embeddings");
    assert_eq!((embeddings.rows, embeddings.width), (299, 256));
    let mean = embeddings.values.iter().map(|v| f64::from(*v)).sum::<f64>() / embeddings.values.len().max(1) as f64;
    assert!((mean - KNOWN_MEAN).abs() < 1e-4, "mean {mean}, expected {KNOWN_MEAN}");
}

/// The mean embedding of fixture picture 640x360 seed 1 (pinned when the backend was written; a change
/// means the pipeline or the fixture changed).
const KNOWN_MEAN: f64 = 0.027_403_670;

#[tokio::test]
async fn spec_12_1_the_request_path_hands_the_engine_embeddings() {
    let device = if device() == VisionDevice::Cuda { "cuda" } else { "cpu" };
    let server = start(json!({"vision": {"backend": "torch", "device": device}})).await;
    let data =
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, picture(PictureFormat::Png, 640, 360, 1));
    let body = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}},
    ]}]});
    let answer: serde_json::Value = chat(&server, &body).await.json().await.expect("json");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(support::last_prompt_pads(&server), 299);
    let embeddings = server.server.state.engine.recent_embeddings().pop().expect("a pass");
    assert_eq!(embeddings.len(), 1);
    assert_eq!((embeddings[0].rows, embeddings[0].width), (299, 256));
    let status: serde_json::Value =
        support::client().get(server.url("/v1/status")).send().await.expect("s").json().await.expect("j");
    assert_eq!(status["vision"]["backend"], "torch");
    assert_eq!(status["vision"]["device"], device);
}

#[tokio::test]
async fn spec_12_3_a_picture_libtorch_cannot_read_is_a_note() {
    let device = if device() == VisionDevice::Cuda { "cuda" } else { "cpu" };
    let server = start(json!({"vision": {"backend": "torch", "device": device}})).await;
    let corrupt = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, fixtures::images::corrupt_png());
    let body = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{corrupt}")}}]},
    ]});
    assert_eq!(chat(&server, &body).await.status(), 200);
    assert!(prompts(&server).pop().expect("p").contains("[image omitted: the png picture could not be decoded]"));
}

#[test]
fn spec_12_3_a_canvas_past_64_megapixels_is_refused_from_its_header() {
    // Only a header claiming 20000×20000: nothing is decoded, so the refusal comes from the header.
    let header = fixtures::images::png_claiming(20_000, 20_000);
    let refused = torch().prepare(&header).expect_err("refused");
    assert_eq!(refused.to_string(), "the picture has more than 64 megapixels");
}

#[test]
fn spec_1_10_cuda_where_there_is_none_names_the_setting() {
    if tch::Cuda::is_available() {
        return; // the GPU nightly: CUDA is there, so nothing to refuse
    }
    let error = TorchBackend::new(geometry(), VisionDevice::Cuda).expect_err("no CUDA here");
    assert!(error.to_string().starts_with("config vision.device=\"cuda\": "), "{error}");
}
