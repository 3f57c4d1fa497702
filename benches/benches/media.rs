//! `parts/*`, `cache/*`, `http/*`, `prepare/*`: a tool result cut into parts, SHA-256 plus the atomic
//! cache write of a 1.5 MB picture, `GET /tool-media` served in-process, and preparing a request whose
//! tool message carries a `strata-tool-media:` reference.

use std::hint::black_box;
use std::sync::Arc;

use axum::body::Body;
use benches::inputs;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use http_body_util::BodyExt;
use reference_server::config::{Overrides, RunConfig};
use reference_server::media::Format;
use reference_server::messages::{ImageSource, Message, Part, Role};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use tower::ServiceExt;

fn state(dir: &std::path::Path, runtime: &tokio::runtime::Runtime) -> Arc<reference_server::state::AppState> {
    let config = json!({
        "api_key": "bench-key",
        "mcp": {"image_results": true},
        "vision": {"backend": "geometry"},
        "mcp_servers": {"unused": {"url": "http://127.0.0.1:9/mcp"}},
    });
    let path = dir.join("bench.json");
    let loaded = RunConfig::from_json(&path, &config, &Overrides::default()).expect("config");
    runtime.block_on(async { reference_server::server::build_state(loaded.config).expect("state") })
}

fn media(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("dir");
    let state = state(dir.path(), &runtime);
    let picture = inputs::picture_1_5mb();
    let encoded = inputs::picture_base64(&picture);

    let mut parts = c.benchmark_group("parts");
    let result =
        CallToolResult::success(vec![ContentBlock::text("a screenshot"), ContentBlock::image(encoded, "image/png")]);
    parts.throughput(Throughput::Bytes(picture.len() as u64));
    parts.bench_with_input(BenchmarkId::new("result-to-parts", "1.5mb-picture"), &result, |b, result| {
        b.iter(|| black_box(reference_server::media::parts::result_parts(black_box(result), Default::default())))
    });
    parts.finish();

    let mut cache = c.benchmark_group("cache");
    cache.throughput(Throughput::Bytes(picture.len() as u64));
    let mut serial = 0u32;
    cache.bench_function(BenchmarkId::new("store", "1.5mb"), |b| {
        b.iter_batched(
            || {
                // A picture the cache has never seen, so every iteration hashes and writes.
                serial += 1;
                let mut bytes = picture.clone();
                let at = bytes.len() - 20;
                bytes[at..at + 4].copy_from_slice(&serial.to_le_bytes());
                bytes
            },
            |bytes| black_box(state.media.store(Format::Png, &bytes).expect("stored")),
            BatchSize::LargeInput,
        )
    });
    cache.finish();

    let name = state.media.store(Format::Png, &picture).expect("stored");
    let app = reference_server::app(Arc::clone(&state));
    let mut http = c.benchmark_group("http");
    http.throughput(Throughput::Bytes(picture.len() as u64));
    http.bench_function(BenchmarkId::new("tool-media-get", "1.5mb"), |b| {
        b.iter(|| {
            runtime.block_on(async {
                let request = axum::http::Request::get(name.url())
                    .header("authorization", "Bearer bench-key")
                    .body(Body::empty())
                    .expect("request");
                let response = app.clone().oneshot(request).await.expect("response");
                assert_eq!(response.status(), 200);
                black_box(response.into_body().collect().await.expect("body").to_bytes())
            })
        })
    });
    http.finish();

    let small = fixtures::images::picture(fixtures::images::PictureFormat::Png, 640, 360, 1);
    let reference = state.media.store(Format::Png, &small).expect("stored").reference();
    let messages = vec![
        Message::text(Role::User, "take a picture"),
        Message {
            role: Role::Tool,
            parts: vec![Part::Text("1 picture of 640x360".into()), Part::Image(ImageSource::Url(reference))],
            tool_calls: Vec::new(),
        },
        Message::text(Role::User, "what is in it?"),
    ];
    let mut prepare = c.benchmark_group("prepare");
    prepare.bench_with_input(BenchmarkId::new("reference", "640x360"), &messages, |b, messages| {
        b.iter(|| {
            let prepared =
                reference_server::chat::prepare::prepare(&state, black_box(messages), &[], None).expect("prepared");
            assert_eq!(prepared.pictures, 1);
            black_box(prepared)
        })
    });
    prepare.finish();
}

criterion_group!(benches, media);
criterion_main!(benches);
