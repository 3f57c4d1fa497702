#!/usr/bin/env bash
# The mutation score of the chat page against mediacheck's page cases: Stryker (9.5, its command
# runner) changes reference-server/web/*.js and every change should make a page.* case fail. Each
# mutant is one `mediacheck run --only 'page.*' --fail-fast` against the reference server serving the
# mutated copy with --web-dir (ci/stryker/judge.sh), so no mutant needs a rebuild.
#
# Long — a run of the page cases per mutant — so it is run on demand, never by CI:
#   ci/stryker.sh                         # every mutant of the page
#   ci/stryker.sh --mutate web/render.js  # one file (Stryker's options pass through; paths are web/…)
# Prints Stryker's table (score per file); the reports go to target/stryker/project/reports/
# (mutation.json, mutation.html); each mutant's verdict, the stage that caught it and its time (and any
# whose cases could not run) are in target/stryker/judge.log. A run starts by removing target/stryker.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash ci/install-browser.sh
bash ci/install-interop.sh   # axe-core, for page.layout.accessible
(cd ci/stryker && npm ci --no-audit --no-fund --silent)
cargo build --locked --workspace --bins --tests   # as CI builds, so the two share artifacts
out=target/stryker
work=$out/project   # what Stryker copies to its sandbox: the page and the judge only
rm -rf "$out"
mkdir -p "$work" "$out/bin"
# The judge runs copies, kept outside the sandbox, so a rebuild during a long run cannot change it.
cp target/debug/mediacheck target/debug/reference-server "$out/bin/"
cp -r reference-server/web "$work/web"
cp ci/stryker/stryker.config.json ci/stryker/judge.sh "$work/"
: >"$out/judge.log"
cd "$work"
STRYKER_JUDGE_BIN="$root/$out/bin" STRYKER_JUDGE_LOG="$root/$out/judge.log" \
    node "$root/ci/stryker/node_modules/@stryker-mutator/core/bin/stryker.js" run "$@"
