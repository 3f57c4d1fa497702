#!/usr/bin/env bash
# The mutation score of vision-mcp against its own tests (vision-mcp/tests: the running binary over
# stdio and HTTP, wiremock in place of OpenAI, real SQLite): cargo-mutants changes every module of
# vision-mcp/src and every change should make `cargo test` fail there.
#
# On demand, never by CI (an incremental build and the 12 s of tests per mutant, about 290 mutants):
#   ci/mutants-vision.sh                           # every module
#   ci/mutants-vision.sh --file src/budget.rs      # one module (cargo-mutants options pass through)
#   ci/mutants-vision.sh --shard 1/4               # a quarter (k/n from 0), on as many machines
#   ci/mutants-vision.sh --iterate                 # again, only what the last run did not catch
# Prints the kill rate per module and in all, and every survivor compared with
# ci/mutants-vision-surviving.txt ("name — killed by …", "— open: …" or "— equivalent: …"; the
# equivalent ones are left out of a run by their exact names).
set -euo pipefail
cd "$(dirname "$0")/.."
MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]; then
    cargo install cargo-mutants --version "$MUTANTS_VERSION" --locked
fi
root=$PWD
out=$root/target/mutants-vision
known=$root/ci/mutants-vision-surviving.txt
mkdir -p "$out"
cd vision-mcp
cargo mutants --list > "$out/all.txt"
excluded=()
while IFS= read -r re; do excluded+=(--exclude-re "$re"); done < <(python3 -c '
import sys
for line in open(sys.argv[1]):
    name, _, why = line.partition(" — ")
    if not line.startswith("#") and why.startswith("equivalent"):
        print("^" + "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in name.strip()) + "$")
' "$known")
if ! printf '%s\n' "$@" | grep -qx -- '--iterate'; then rm -rf "$out/mutants.out"; fi
# No debug information: a mutant's build relinks the test binaries, which is most of its cost.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0
cargo mutants --no-shuffle --timeout 120 --gitignore true --output "$out" "${excluded[@]}" "$@" \
    || true   # missed mutants make cargo-mutants exit non-zero; the summary below says what
[ -f "$out/mutants.out/caught.txt" ] || { echo "ci/mutants-vision.sh: cargo-mutants tested nothing (see above)" >&2; exit 2; }
cd "$root"
python3 ci/mutants_summary.py "$out/mutants.out" "$known" "$out/all.txt" "$out/unviable-earlier.txt" src/
