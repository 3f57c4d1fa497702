#!/usr/bin/env bash
# The mutation score of the reference server against the conformance suite: cargo-mutants changes the
# reference server's code (the modules of SPEC §2 and §7–§12), and every change should make some
# mediacheck case fail. Each mutant is judged by a prebuilt mediacheck built WITHOUT the reference
# server inside (--no-default-features), so a mutation can never reach the verdicts; the judge runs
# every case but the page cases against the mutated binary with --fail-fast
# (reference-server/tests/mediacheck.rs), so a caught mutant costs only the cases up to its first failure.
#
# Long — an incremental build and a run per mutant, about a minute each on 2 cores — so it is run on
# demand, never by CI: a file or a shard at a time.
#   ci/mutants.sh                          # every listed module: 536 mutants, hours
#   ci/mutants.sh --file reference-server/src/auth.rs   # one module (cargo-mutants options pass through)
#   ci/mutants.sh --shard 1/8              # one eighth of them
#   ci/mutants.sh --iterate                # again, only the mutants the last run did not catch
# Prints the kill rate (caught / (caught + missed); unviable mutants do not count) and the survivors,
# and compares them with ci/mutants-surviving.txt (each survivor there is killed later or explained).
set -euo pipefail
cd "$(dirname "$0")/.."
MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]; then
    cargo install cargo-mutants --version "$MUTANTS_VERSION" --locked
fi
cargo build --release --locked -p harness --no-default-features
# The judge is a copy, so a rebuild of mediacheck during a long run cannot change it half-way.
mkdir -p target/mutants-judge
cp target/release/mediacheck target/mutants-judge/mediacheck
export MEDIACHECK_BIN="$PWD/target/mutants-judge/mediacheck"

files=()
if ! printf '%s\n' "$@" | grep -q -- '^--file'; then
    for f in auth.rs api_key.rs routes/media.rs media/name.rs media/parts.rs media/cache.rs media/format.rs \
             lift.rs vision/geometry.rs chat/prepare.rs mcp/naming.rs result_text.rs; do
        files+=(--file "reference-server/src/$f")
    done
fi
out=target/mutants
# Gitignored files (node_modules, .libtorch) are not copied to the scratch tree.
# --in-place (mutating this tree, whose target folder is warm: ~12 s a mutant here) cannot be combined
# with --gitignore.
copy=(--gitignore true)
if printf '%s\n' "$@" | grep -qx -- '--in-place'; then copy=(); fi
# --iterate tests again only what the last run did not catch (after new cases): keep its output.
if ! printf '%s\n' "$@" | grep -qx -- '--iterate'; then rm -rf "$out"; fi
# Only the conformance test target is built (--cargo-arg reaches the build and the test), without debug
# information: a mutant's incremental build is a few seconds instead of relinking every test binary.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0
cargo mutants --package reference-server --no-shuffle --timeout 300 "${copy[@]}" --output "$out" \
    --cargo-arg=--test=mediacheck "${files[@]}" "$@" \
    || true   # missed mutants make cargo-mutants exit non-zero; the summary below says what
[ -f "$out/mutants.out/caught.txt" ] || { echo "ci/mutants.sh: cargo-mutants tested nothing (see above)" >&2; exit 2; }

python3 - "$out/mutants.out" ci/mutants-surviving.txt <<'PY'
import os, sys
out, known_file = sys.argv[1], sys.argv[2]
def lines(name):
    path = os.path.join(out, name)
    return [l.strip() for l in open(path)] if os.path.exists(path) else []
caught, missed, timeout, unviable = (lines(n) for n in ("caught.txt", "missed.txt", "timeout.txt", "unviable.txt"))
# With --iterate, what earlier runs caught is listed apart and counts as caught.
caught = sorted(set(caught) | set(lines("previously_caught.txt")))
viable = len(caught) + len(missed)
rate = 100.0 * len(caught) / viable if viable else 0.0
print(f"mutants: {len(caught)} caught, {len(missed)} missed, {len(timeout)} timed out, {len(unviable)} unviable: "
      f"kill rate {rate:.1f} %")
known = {l.split(" — ")[0].strip() for l in open(known_file) if l.strip() and not l.startswith("#")}
for mutant in missed:
    print(("  known (ci/mutants-surviving.txt): " if mutant in known else "  NEW survivor: ") + mutant)
PY
