#!/usr/bin/env bash
# `mediacheck load` beside wrk and oha on the same reference server, in one run (on demand; not part of
# ci/test.sh): GET /tool-media/<name> for pictures of 67 bytes, 50 KB and 1 MiB at 32 and 256
# connections, each cell run by the three tools in turn and repeated (the order rotates each round),
# then the open loop at fixed rates, where mediacheck's p50/p99 are set beside oha's. Prints one
# Markdown table per part (the README's and docs/load.md's). Installs wrk (Debian) and oha (crates.io,
# pinned) when missing.
#   DURATION=10 ROUNDS=2 bash ci/bench-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OHA_VERSION=1.16.0
if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
OHA=target/bench-tools/bin/oha
if [ "$("$OHA" --version 2>/dev/null)" != "oha $OHA_VERSION" ]; then
    cargo install oha --version "$OHA_VERSION" --locked --root target/bench-tools
fi
cargo build --locked --release -q -p reference-server -p harness
exec python3 ci/bench_load.py --oha "$OHA" --wrk "$(command -v wrk)" \
    --server target/release/reference-server --mediacheck target/release/mediacheck "$@"
