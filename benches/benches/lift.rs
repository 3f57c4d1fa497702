//! `lift/*`: lifting pictures out of tool text (SPEC §11), beside its limits measured in the same run:
//! one `memchr` pass over the same bytes, and one base64 decode of the picture.

use base64::Engine;
use benches::inputs;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn lift(c: &mut Criterion) {
    let one = inputs::two_mb_one_picture();
    let none = inputs::two_mb_none();
    let small = inputs::twenty_kb();
    let decoys = inputs::two_mb_picture_decoys();
    let decoy_sized = inputs::base64_like_decoys();
    let picture = inputs::picture_base64(&inputs::picture_1_5mb());
    let mut group = c.benchmark_group("lift");
    for (name, text) in
        [("2mb-one-picture", &one), ("2mb-none", &none), ("20kb", &small), ("2mb-picture-decoys", &decoys)]
    {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("scan", name), text, |b, text| {
            b.iter(|| {
                black_box(reference_server::lift::lift_at_most(black_box(text), reference_server::lift::MAX_PICTURES))
            })
        });
        group.bench_with_input(BenchmarkId::new("memchr", name), text, |b, text| {
            b.iter(|| black_box(memchr::memchr(0, black_box(text.as_bytes()))))
        });
    }
    group.throughput(Throughput::Bytes(picture.len() as u64));
    group.bench_with_input(BenchmarkId::new("base64-decode", "2mb-one-picture"), &picture, |b, picture| {
        b.iter(|| black_box(base64::engine::general_purpose::STANDARD.decode(black_box(picture.as_bytes()))))
    });
    // The decoys' limit: one decode of as many base64 bytes as the decoy text holds.
    group.throughput(Throughput::Bytes(decoy_sized.len() as u64));
    group.bench_with_input(BenchmarkId::new("base64-decode", "2mb-picture-decoys"), &decoy_sized, |b, text| {
        b.iter(|| black_box(base64::engine::general_purpose::STANDARD.decode(black_box(text.as_bytes()))))
    });
    group.finish();
}

criterion_group!(benches, lift);
criterion_main!(benches);
