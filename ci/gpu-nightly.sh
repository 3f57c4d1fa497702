#!/usr/bin/env bash
# The GPU nightly: vision preparation on CUDA.
#
#   ci/gpu-nightly.sh build   here (Rust toolchain, no GPU): builds the libtorch test and benchmark
#                             binaries (release) into target/gpu-nightly/, small enough to carry over.
#   ci/gpu-nightly.sh run     on the GPU machine (no Rust; PyTorch 2.11 in /opt/torch/.venv): runs the
#                             torch tests and the vision benchmarks with MEDIACHECK_TORCH_DEVICE=cuda,
#                             against that PyTorch's own libtorch, and prints the figures.
#   ci/gpu-nightly.sh         both, when this machine has the GPU and the toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=target/gpu-nightly

build() {
    bash ci/install-libtorch.sh
    rm -rf "$OUT" && mkdir -p "$OUT"
    local tests bench
    tests=$(cargo test --locked --release -p reference-server --features torch --test torch --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m["target"]["name"] == "torch"][0])')
    bench=$(cargo bench --locked -p benches --features torch --bench vision --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m["target"]["name"] == "vision"][0])')
    cp "$tests" "$OUT/torch-tests"
    cp "$bench" "$OUT/vision-bench"
    strip "$OUT/torch-tests" "$OUT/vision-bench"
    du -sh "$OUT"/*
}

run() {
    local venv=${TORCH_VENV:-/opt/torch/.venv}
    local torch_lib
    torch_lib=$("$venv/bin/python" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
    local nvidia_libs
    nvidia_libs=$(find "$(dirname "$(dirname "$torch_lib")")/nvidia" -name lib -type d 2>/dev/null | tr '\n' ':')
    export LD_LIBRARY_PATH="$torch_lib:$nvidia_libs${LD_LIBRARY_PATH:-}"
    # A binary linked on a machine without CUDA does not name libtorch_cuda.so: load it first, so
    # libtorch registers its CUDA kernels and sees the device.
    export LD_PRELOAD="$torch_lib/libtorch_cuda.so"
    export MEDIACHECK_TORCH_DEVICE=cuda
    "$venv/bin/python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
    echo "== torch tests on CUDA"
    "$OUT/torch-tests" --test-threads 1
    echo "== vision benchmarks (CPU and CUDA)"
    "$OUT/vision-bench" --bench --warm-up-time 1 --measurement-time 3 2>&1 | grep -E '^(vision|request)/|time:'
}

case "${1:-all}" in
    build) build ;;
    run) run ;;
    all) build && run ;;
    *) echo "usage: ci/gpu-nightly.sh [build|run]" >&2; exit 2 ;;
esac
