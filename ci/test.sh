#!/usr/bin/env bash
# Every test of the workspace, on a fresh machine or a warm one. Installs what it needs when missing
# (idempotent) and fails loudly when something cannot be had. `.ci/run` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's time is printed when the next begins (CI's budget is watched step by step).
step= step_started=$SECONDS
say() {
    [ -n "$step" ] && printf -- '-- %s: %d s (total %d s)\n' "$step" $((SECONDS - step_started)) "$SECONDS"
    step=$* step_started=$SECONDS
    printf '\n== %s\n' "$*"
}

say "toolchain"
cargo --version
command -v rustfmt >/dev/null || { echo "ci/test.sh: rustfmt is missing (rustup component add rustfmt)" >&2; exit 1; }

# The downloads (npm and pip MCP peers and oracles, Chromium from Debian, the libtorch wheels) go on in
# the background while the Rust steps below compile; each is awaited, its log printed, before the
# first step that needs it, and a failed one fails the run there.
mkdir -p target/ci-installs
background() { # name command...
    local name=$1
    shift
    ("$@") > "target/ci-installs/$name.log" 2>&1 &
    printf -v "pid_$name" '%s' "$!"
}
await() { # name
    local pid_var="pid_$1" waited=$SECONDS
    if ! wait "${!pid_var}"; then
        echo "ci/test.sh: the background step '$1' failed:" >&2
        cat "target/ci-installs/$1.log" >&2
        exit 1
    fi
    sed "s/^/[$1] /" "target/ci-installs/$1.log"
    printf -- '-- waited %d s for the background step %s\n' $((SECONDS - waited)) "$1"
}
say "background: MCP peers (npm, pip; pinned) then deploy/ against its schemas; Chromium; libtorch wheels"
background interop bash -c 'bash ci/install-interop.sh && bash ci/deploy-check.sh'
background browser bash ci/install-browser.sh
background libtorch bash ci/install-libtorch.sh

say "JavaScript syntax (node --check)"
find . -name '*.js' -not -path './target/*' -not -path '*/node_modules/*' -print0 | xargs -0 -n1 node --check

say "format"
cargo fmt --all -- --check
cargo fmt --manifest-path vision-mcp/Cargo.toml -- --check

say "the house: no source file over 600 lines, no two Rust files that import each other (ci/house.py)"
python3 ci/house.py --self-test
python3 ci/house.py

say "independent verdicts: mediacheck builds without the reference server (--no-default-features)"
# Every workspace crate below is compiled by clippy-driver (the way `cargo clippy` runs it, warnings as
# errors), so one build both lints and makes what the tests run: `cargo clippy` followed by `cargo build`
# compiled every dependency twice (metadata, then code), which was a fifth of CI. Exported once, so every
# cargo command after it (and the scripts it calls) sees the same wrapper and reuses the same artifacts.
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
[ -x "$clippy_driver" ] || { echo "ci/test.sh: clippy-driver is missing (rustup component add clippy)" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Built before the workspace, whose build then makes target/debug/mediacheck again with the reference
# server in it (the one the steps below run).
cargo build -p harness --no-default-features --locked
independent_tree=$(cargo tree -p harness --no-default-features -e normal --locked)
if grep -q "reference-server" <<<"$independent_tree"; then
    echo "ci/test.sh: harness --no-default-features still depends on reference-server" >&2
    exit 1
fi

say "build and lints: every target of both workspaces, once, through clippy-driver; unused dependencies (cargo-machete)"
# Binaries and tests in one feature resolution (dev-dependencies turn on more features of shared
# crates): every later `cargo test` finds them built.
cargo build --workspace --bins --locked
cargo test --workspace --all-targets --no-run --locked
cargo test --manifest-path vision-mcp/Cargo.toml --all-targets --no-run --locked --target-dir target
MACHETE_VERSION=0.9.2
if [ "$(cargo machete --version 2>/dev/null)" != "$MACHETE_VERSION" ]; then
    cargo install cargo-machete --version "$MACHETE_VERSION" --locked
fi
cargo machete

say "tests"
await interop
await browser
# The layout rules at every width (Chromium, mostly waiting on the page) run beside the other tests,
# which mostly wait on servers: on two cores the two together take little longer than the slower one.
layout_test=the_reference_page_passes_every_rule_at_every_width
background layout cargo test --workspace --locked --test reference -- --exact "$layout_test"
# broken_variants' every_case_passes_against_the_reference_server runs every case against the embedded
# reference server: exactly the README's main job, which this script runs last. CI runs it once.
cargo test --workspace --locked -- --skip every_case_passes_against_the_reference_server --skip "$layout_test"
await layout

say "the GitHub Action: action.yml against GitHub's action schema, action/run.sh against the reference server and a broken variant"
bash ci/action-check.sh

say "vision-mcp: its own workspace and lock file (the folder a NAS builds alone), same target folder"
cargo test --locked --manifest-path vision-mcp/Cargo.toml --target-dir target

say "vision-mcp on a LAN: check from another host (a network namespace) with the README's settings"
bash ci/vision-lan.sh

say "libtorch 2.11 from hash-pinned PyPI wheels, and the torch vision tests (CPU), beside the official MCP conformance suite (Node 22): vision-mcp as the server, the hub as the client"
await libtorch
# The torch tests compile libtorch's C++ shim and the crates tch brings (about 2½ minutes of CPU) while the
# conformance suite mostly starts Node and waits on it; the suite's hub is a copy of the plain
# reference-server binary, which the torch build replaces with its own.
mkdir -p target/ci-installs/plain
cp target/debug/reference-server target/ci-installs/plain/reference-server
# The workspace's feature resolution with torch added, so only reference-server and the torch crates are
# compiled again (`-p reference-server` resolved features for it alone and rebuilt 67 crates: 184 s).
background torch cargo test --workspace --locked --features reference-server/torch --test torch
MCP_CONFORMANCE_BUILT=1 REFERENCE_SERVER="$PWD/target/ci-installs/plain/reference-server" bash ci/mcp-conformance.sh
await torch

say "a short load smoke test (every picture fetched back and checked)"
target/debug/mediacheck load --scenario mixed --concurrency 4 --duration 3s

say "the attack run, short form: hostile traffic beside an honest client, vision-mcp fed bombs"
target/debug/mediacheck attack --duration 2s --vision-mcp target/debug/vision-mcp

say "the README's main job (mediacheck against the embedded reference server, less the layout cases), its JUnit report read by junitparser"
# The layout cases (page.layout.*, page.fits-every-width) ran above in `cargo test -p layout-tests`, with
# their contact sheets; every other case runs here.
target/debug/mediacheck run --skip 'page.layout.*' --skip page.fits-every-width \
    --json target/mediacheck.json --junit target/mediacheck.xml
ci/interop/.venv/bin/python ci/junit_check.py target/mediacheck.xml target/mediacheck.json

say "all green"
printf -- '-- total: %d s\n' "$SECONDS"
