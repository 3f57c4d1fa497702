//! `load-check/*`: what `mediacheck load` does to every picture body it fetches, per picture size
//! (67 bytes, 50 KB, 1 MiB): `hash` — SHA-256 against the name, as for a name's first body (and every
//! body past the proven-copy cap); `compare` — byte for byte with the name's proven copy, as for every
//! later body; both fed in 16 KiB chunks, as bodies arrive from the socket.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harness::load::integrity::{How, Proven};

/// The sizes the load comparison (ci/bench-load.sh) fetches.
const SIZES: [(&str, usize); 3] = [("67b", 67), ("50kb", 50_079), ("1mib", 1 << 20)];
/// A typical socket read.
const CHUNK: usize = 16 << 10;

fn check(proven: &Proven, name: &str, body: &[u8]) -> (bool, How) {
    let mut check = proven.check(name);
    for chunk in body.chunks(CHUNK) {
        check.feed(black_box(chunk));
    }
    check.finish()
}

fn body_check(c: &mut Criterion) {
    let mut group = c.benchmark_group("load-check");
    for (label, size) in SIZES {
        let body = benches::inputs::noise(size);
        let name = format!("{}.png", fixtures::images::sha256_hex(&body));
        group.throughput(Throughput::Bytes(size as u64));
        // No proven copy may be kept (cap 0): every body is hashed.
        let hashing = Proven::new([name.as_str()], 0);
        group.bench_with_input(BenchmarkId::new("hash", label), &body, |b, body| {
            b.iter(|| assert_eq!(check(&hashing, &name, body), (true, How::Hashed)))
        });
        let comparing = Proven::new([name.as_str()], 1 << 30);
        assert_eq!(check(&comparing, &name, &body), (true, How::Hashed));
        group.bench_with_input(BenchmarkId::new("compare", label), &body, |b, body| {
            b.iter(|| assert_eq!(check(&comparing, &name, body), (true, How::Compared)))
        });
    }
    group.finish();
}

criterion_group!(benches, body_check);
criterion_main!(benches);
