#!/usr/bin/env bash
# The mutation score of the reference server against the conformance suite: cargo-mutants changes the
# reference server's code — every module of reference-server/src but vision/torch.rs (behind the
# `torch` feature; reference-server/tests/torch.rs judges it against the geometry backend) — and every
# change should make some mediacheck case fail. Each mutant is judged by a prebuilt mediacheck built
# WITHOUT the reference server inside (--no-default-features), so a mutation can never reach the
# verdicts (reference-server/tests/mediacheck.rs): every case but the page cases against the mutated
# binary with --fail-fast, then the process and restart cases, then the many-pictures attack — so a
# caught mutant costs only the cases up to its first failure.
#
# Long — an incremental build and a run per mutant, 12–20 s each on 2 cores — so it is run on
# demand, never by CI: a file or a shard at a time, on as many machines as there are shards.
#   ci/mutants.sh                          # every module: about 1,240 mutants, about 5 hours
#   ci/mutants.sh --file reference-server/src/auth.rs   # one module (cargo-mutants options pass through)
#   ci/mutants.sh --shard 1/8              # one eighth of them (cargo-mutants' --shard, k/n from 0)
#   ci/mutants.sh --iterate                # again, only the mutants the last run did not catch
#   ci/mutants.sh --with-equivalents       # test the mutants listed as equivalent too (see below)
#   MEDIACHECK_BIN=/path/mediacheck ci/mutants.sh …    # a judge built before (not rebuilt; copied)
# Prints the kill rate (caught / (caught + missed); unviable mutants do not count), per module and in
# all, and the survivors, compared with ci/mutants-surviving.txt.
#
# ci/mutants-surviving.txt lists every mutant a run did not catch: "killed by <case>" (a case added
# since), "open" (what would settle it), or "equivalent" — a change no client can see, such as the
# stride of the lifting scan or the size of a buffer (cost, not outcome), each with the reason. The
# equivalent ones are left out of a run (--exclude-re, by their exact names) unless --with-equivalents
# is given, so the rate is over the mutants a case could catch; the summary says how many were left
# out, and a listed name that no longer names a mutant (the code moved) is reported, to be re-read.
set -euo pipefail
cd "$(dirname "$0")/.."
MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]; then
    cargo install cargo-mutants --version "$MUTANTS_VERSION" --locked
fi
# The judge is a copy, so a rebuild of mediacheck during a long run cannot change it half-way.
judge="${MEDIACHECK_BIN:-}"
if [ -z "$judge" ]; then
    cargo build --release --locked -p harness --no-default-features
    judge=target/release/mediacheck
fi
mkdir -p target/mutants-judge
cp "$judge" target/mutants-judge/mediacheck.new && mv target/mutants-judge/mediacheck.new target/mutants-judge/mediacheck
export MEDIACHECK_BIN="$PWD/target/mutants-judge/mediacheck"

files=()
if ! printf '%s\n' "$@" | grep -q -- '^--file'; then
    while IFS= read -r f; do
        files+=(--file "$f")
    done < <(find reference-server/src -name '*.rs' ! -path reference-server/src/vision/torch.rs | sort)
fi
out=target/mutants
# Every mutant of the chosen files, named as cargo-mutants names them: what the summary counts against.
listed=("${files[@]}")
args=("$@")
for i in "${!args[@]}"; do
    case "${args[$i]}" in
        --file) listed+=(--file "${args[$((i + 1))]}") ;;
        --file=*) listed+=("${args[$i]}") ;;
    esac
done
mkdir -p target
cargo mutants --package reference-server --list "${listed[@]}" > target/mutants-all.txt
# The mutants explained as equivalent, by exact name (regex meta characters escaped, anchored): left out.
mapfile -t equivalent < <(python3 -c '
import sys
for line in open(sys.argv[1]):
    name, _, why = line.partition(" — ")
    if not line.startswith("#") and why.startswith("equivalent"):
        print("^" + "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in name.strip()) + "$")
' ci/mutants-surviving.txt)
with_equivalents=false
passed=()
for arg in "$@"; do
    if [ "$arg" = --with-equivalents ]; then with_equivalents=true; else passed+=("$arg"); fi
done
set -- "${passed[@]}"
excluded=()
if ! $with_equivalents; then
    for re in "${equivalent[@]}"; do excluded+=(--exclude-re "$re"); done
fi
# Gitignored files (node_modules, .libtorch) are not copied to the scratch tree.
# --in-place (mutating this tree, whose target folder is warm: ~12 s a mutant here) cannot be combined
# with --gitignore.
copy=(--gitignore true)
if printf '%s\n' "$@" | grep -qx -- '--in-place'; then copy=(); fi
# --iterate tests again only what the last run did not catch (after new cases): keep its output. It
# carries earlier unviable mutants over among the "previously caught", so they are kept apart here.
if ! printf '%s\n' "$@" | grep -qx -- '--iterate'; then rm -rf "$out"; fi
if [ -f "$out/mutants.out/unviable.txt" ]; then
    cat "$out/mutants.out/unviable.txt" "$out/unviable-earlier.txt" 2>/dev/null | sort -u > "$out/unviable.tmp"
    mv "$out/unviable.tmp" "$out/unviable-earlier.txt"
fi
# Only the conformance test target is built (--cargo-arg reaches the build and the test), without debug
# information: a mutant's incremental build is a few seconds instead of relinking every test binary.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0
cargo mutants --package reference-server --no-shuffle --timeout 300 "${copy[@]}" --output "$out" \
    --cargo-arg=--test=mediacheck "${files[@]}" "${excluded[@]}" "$@" \
    || true   # missed mutants make cargo-mutants exit non-zero; the summary below says what
[ -f "$out/mutants.out/caught.txt" ] || { echo "ci/mutants.sh: cargo-mutants tested nothing (see above)" >&2; exit 2; }

python3 ci/mutants_summary.py "$out/mutants.out" ci/mutants-surviving.txt target/mutants-all.txt \
    "$out/unviable-earlier.txt" reference-server/src/
