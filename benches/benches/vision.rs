//! `vision/*` and `request/*` (feature `torch`): preparing a 640×360 and a 1920×1080 picture on libtorch
//! (CPU; CUDA too when `MEDIACHECK_TORCH_DEVICE=cuda`, as in the GPU nightly), and preparing a whole
//! request with one picture, libtorch beside the plain-Rust geometry backend.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use fixtures::images::{PictureFormat, picture};
use reference_server::config::{Overrides, RunConfig, VisionDevice};
use reference_server::messages::{ImageSource, Message, Part, Role};
use reference_server::vision::torch::TorchBackend;
use reference_server::vision::{Geometry, VisionBackend};
use serde_json::json;

fn devices() -> Vec<(&'static str, VisionDevice)> {
    let mut devices = vec![("cpu", VisionDevice::Cpu)];
    if std::env::var("MEDIACHECK_TORCH_DEVICE").as_deref() == Ok("cuda") {
        devices.push(("cuda", VisionDevice::Cuda));
    }
    devices
}

fn state(backend: &str, device: &str, runtime: &tokio::runtime::Runtime) -> Arc<reference_server::state::AppState> {
    let config = json!({"vision": {"backend": backend, "device": device}});
    let loaded = RunConfig::from_json(std::path::Path::new("/tmp/bench-vision.json"), &config, &Overrides::default())
        .expect("config");
    runtime.block_on(async { reference_server::server::build_state(loaded.config).expect("state") })
}

fn vision(c: &mut Criterion) {
    let geometry = Geometry::new(56 * 56, 28 * 28 * 1280);
    let pictures = [
        ("640x360", picture(PictureFormat::Png, 640, 360, 1)),
        ("1920x1080", picture(PictureFormat::Png, 1920, 1080, 1)),
    ];
    let mut group = c.benchmark_group("vision");
    for (device_name, device) in devices() {
        let backend = TorchBackend::new(geometry, device).expect("libtorch");
        for (size, bytes) in &pictures {
            group.bench_with_input(BenchmarkId::new("prepare", format!("{size}-{device_name}")), bytes, |b, bytes| {
                b.iter(|| black_box(backend.prepare(black_box(bytes)).expect("prepared")))
            });
        }
    }
    group.finish();

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pictures[0].1);
    let messages = vec![Message {
        role: Role::User,
        parts: vec![
            Part::Text("what is this?".into()),
            Part::Image(ImageSource::Url(format!("data:image/png;base64,{data}"))),
        ],
        tool_calls: Vec::new(),
    }];
    let mut group = c.benchmark_group("request");
    let mut backends = vec![("geometry".to_string(), state("geometry", "cpu", &runtime))];
    for (device_name, _) in devices() {
        backends.push((format!("torch-{device_name}"), state("torch", device_name, &runtime)));
    }
    for (name, state) in &backends {
        group.bench_with_input(BenchmarkId::new("prepare-one-picture", name), &messages, |b, messages| {
            b.iter(|| {
                black_box(
                    reference_server::chat::prepare::prepare(state, black_box(messages), &[], None).expect("prepared"),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, vision);
criterion_main!(benches);
