#!/usr/bin/env bash
# Checks the GitHub Action (action/), offline, in seconds: action.yml against GitHub's action schema
# (check-jsonschema's vendored copy, pinned in ci/install-interop.sh), and that the validator refuses
# broken copies; its steps' order and conditions (ci/action_steps.py: the build cache restored before
# the build and saved after the run whatever its verdict, every input handed to run.sh), and that
# those rules refuse broken copies; then action/run.sh as the action runs it — $GITHUB_STEP_SUMMARY
# and $GITHUB_OUTPUT in temp files, the debug binaries — against the reference server (exit 0, passed
# > 0, failed = 0, a summary), a broken variant (exit 1, failed > 0, the failure in the summary), a
# stale baseline entry (exit 1, a failed headline), browser: false (page cases not run, with the
# reason; with strict, exit 1) and inputs it cannot use (exit 2, the message annotated; an output
# value with a line break refused). Needs target/debug/mediacheck and broken-server (cargo build
# --workspace --bins) and ci/interop/.venv.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=ci/interop/.venv/bin
say() { printf 'action-check: %s\n' "$*"; }
fail() { say "$*"; exit 1; }
mediacheck=${MEDIACHECK:-$PWD/target/debug/mediacheck}
broken_server=${BROKEN_SERVER:-$PWD/target/debug/broken-server}
for binary in "$mediacheck" "$broken_server"; do
    [ -x "$binary" ] || fail "$binary is missing (cargo build --workspace --bins)"
done

"$bin/check-jsonschema" --builtin-schema vendor.github-actions action/action.yml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed '0,/^      shell: bash$/{/^      shell: bash$/d}' action/action.yml > "$work/no-shell.yml"
sed 's/^  using: composite$/  using: compsite/' action/action.yml > "$work/wrong-using.yml"
for file in "$work"/*.yml; do
    cmp -s "$file" action/action.yml && fail "the broken copy $(basename "$file") is not broken: action.yml changed shape"
    if "$bin/check-jsonschema" --builtin-schema vendor.github-actions "$file" > /dev/null 2>&1; then
        fail "check-jsonschema passed a broken action: $(basename "$file")"
    fi
done

# The steps' order and conditions, which the schema cannot see; and copies that break each rule.
"$bin/python" ci/action_steps.py action/action.yml
mkdir "$work/steps"
sed 's|uses: actions/cache/restore@|uses: actions/cache@|' action/action.yml > "$work/steps/combined-cache.yml"
sed "s/if: always() \&\& steps.build.outcome == 'success'/if: steps.build.outcome == 'success'/" action/action.yml \
    > "$work/steps/saved-on-success-only.yml"
sed "s/if: always() \&\& steps.build.outcome == 'success'/if: always()/" action/action.yml > "$work/steps/saved-unbuilt.yml"
sed '/INPUT_BROWSER:/d' action/action.yml > "$work/steps/browser-dropped.yml"
for file in "$work"/steps/*.yml; do
    cmp -s "$file" action/action.yml && fail "the broken copy $(basename "$file") is not broken: action.yml changed shape"
    if "$bin/python" ci/action_steps.py "$file" > /dev/null; then
        fail "ci/action_steps.py passed a broken action: $(basename "$file")"
    fi
done

# A few fast cases that need no browser; the broken variant fails them all.
only='errors.*'
run() { # name, then VAR=value... for action/run.sh
    local name=$1
    shift
    : > "$work/$name.summary"
    : > "$work/$name.output"
    set +e
    env GITHUB_STEP_SUMMARY="$work/$name.summary" GITHUB_OUTPUT="$work/$name.output" MEDIACHECK="$mediacheck" \
        INPUT_ONLY="$only" INPUT_REPORT_DIR="$work/$name" "$@" bash action/run.sh > "$work/$name.log" 2>&1
    code=$?
    set -e
}
output() { sed -n "s/^$2=//p" "$work/$1.output"; }
show() { cat "$work/$1.log" "$work/$1.output" "$work/$1.summary"; }

run reference INPUT_SPAWN="$mediacheck serve-reference --config {config} --port {port} {scripts}"
[ "$code" = 0 ] || { show reference; fail "against the reference server run.sh exited $code"; }
passed=$(output reference passed)
[ "${passed:-0}" -gt 0 ] && [ "$(output reference failed)" = 0 ] && [ "$(output reference exit-code)" = 0 ] \
    || { show reference; fail "against the reference server the outputs are not passed > 0, failed = 0"; }
[ -s "$(output reference report)" ] || { show reference; fail "no HTML report at '$(output reference report)'"; }
grep -q '^## mediacheck passed: ' "$work/reference.summary" || { show reference; fail "no summary written"; }

run broken INPUT_SPAWN="$broken_server --variant plain-errors --config {config} --port {port} {scripts}"
[ "$code" = 1 ] || { show broken; fail "against the broken variant plain-errors run.sh exited $code, not 1"; }
failed=$(output broken failed)
[ "${failed:-0}" -gt 0 ] && [ "$(output broken exit-code)" = 1 ] || { show broken; fail "failed is '$failed'"; }
grep -q '^#### `errors.json-404` — SPEC 3.4 MUST' "$work/broken.summary" \
    && grep -q '^mediacheck run --only errors.json-404 --spawn ' "$work/broken.summary" \
    || { show broken; fail "the summary does not list the failure with its replay"; }
grep -q '^::error title=mediacheck::' "$work/broken.log" || { show broken; fail "no error annotation"; }

# A baseline entry whose case passes is stale: the run fails (exit 1) with no case failed, and the
# headline says failed, as the exit code does.
reference_spawn="$mediacheck serve-reference --config {config} --port {port} {scripts}"
printf 'errors.json-404   # passes against the reference server\n' > "$work/stale.txt"
run stale INPUT_SPAWN="$reference_spawn" INPUT_BASELINE="$work/stale.txt"
[ "$code" = 1 ] && [ "$(output stale failed)" = 0 ] || { show stale; fail "a stale baseline entry: exit $code, failed '$(output stale failed)'"; }
grep -q '^## mediacheck failed: ' "$work/stale.summary" && grep -q '1 baseline entry is stale' "$work/stale.summary" \
    || { show stale; fail "a stale baseline entry: the summary's headline is not failed"; }
grep -q '^mediacheck failed (exit 1): 1 baseline entry is stale' "$work/stale.log" \
    && grep -q '^::error title=mediacheck::mediacheck failed (exit 1): 1 baseline entry is stale' "$work/stale.log" \
    || { show stale; fail "a stale baseline entry: the terminal's headline or the annotation is not failed"; }

# browser: false starts no browser: a page case is not run, with the reason; with strict that fails.
page_case='page.contract-marks'
run nobrowser INPUT_SPAWN="$reference_spawn" INPUT_ONLY="$page_case" INPUT_BROWSER=false
[ "$code" = 0 ] && [ "$(output nobrowser not-run)" = 1 ] && [ "$(output nobrowser passed)" = 0 ] \
    || { show nobrowser; fail "browser: false: exit $code, not-run '$(output nobrowser not-run)', not 0 and 1"; }
grep -q "the browser is turned off \\\\(--no-browser" "$work/nobrowser.summary" \
    || { show nobrowser; fail "browser: false: the summary does not give the reason"; }
run nobrowser-strict INPUT_SPAWN="$reference_spawn" INPUT_ONLY="$page_case" INPUT_BROWSER=false INPUT_STRICT=true
[ "$code" = 1 ] && grep -q '^## mediacheck failed: 0 passed, 0 failed, 0 warnings, 1 not run' "$work/nobrowser-strict.summary" \
    || { show nobrowser-strict; fail "browser: false with strict: exit $code, or the headline is not failed"; }
run browser-maybe INPUT_SPAWN="$reference_spawn" INPUT_BROWSER=maybe
[ "$code" = 2 ] || { show browser-maybe; fail "browser: maybe: run.sh exited $code, not 2"; }

# An output value with a line break is refused: in $GITHUB_OUTPUT it would set an output of its own.
run newline INPUT_SPAWN="$reference_spawn" INPUT_REPORT_DIR="$work/dir"$'\n'"failed=0"
[ "$code" = 2 ] || { show newline; fail "a report-dir with a line break: run.sh exited $code, not 2"; }
! grep -q '^failed=' "$work/newline.output" && grep -q "^::error title=mediacheck::the output report-dir would hold a line break" \
    "$work/newline.log" || { show newline; fail "a report-dir with a line break reached \$GITHUB_OUTPUT or was not said"; }

run refused INPUT_SPAWN="$mediacheck serve-reference --config {config} --port {port}" INPUT_GEN_BUDGET=0
[ "$code" = 2 ] || { show refused; fail "--gen-budget 0: run.sh exited $code, not 2"; }
grep -q "^::error title=mediacheck::mediacheck run exited with 2: error: invalid value '0' for '--gen-budget" \
    "$work/refused.log" || { show refused; fail "a refused input's message is not annotated"; }
grep -q "^## mediacheck could not run" "$work/refused.summary" || { show refused; fail "no summary of the refusal"; }
[ -z "$(output refused failed)" ] || { show refused; fail "a refused run has counts"; }

# A binary that crashes without a word (a panic's 101): the step fails with its code, says so, and a
# report line that looks like a workflow command is not one while mediacheck runs.
printf '#!/bin/sh\necho "::add-mask::leaked"\nexit 101\n' > "$work/crashing"
chmod +x "$work/crashing"
run crashed MEDIACHECK="$work/crashing" INPUT_SPAWN="x {config} {port}"
[ "$code" = 101 ] || { show crashed; fail "a binary that crashed silently: run.sh exited $code, not 101"; }
grep -q "^::error title=mediacheck::mediacheck run exited with 101" "$work/crashed.log" \
    && grep -q "^## mediacheck could not run" "$work/crashed.summary" \
    || { show crashed; fail "a silent crash is not annotated and summarised"; }
awk '/^::stop-commands::/ { stopped = 1 } /^::add-mask::leaked/ { exit !stopped } END { exit !stopped }' "$work/crashed.log" \
    || { show crashed; fail "workflow commands were not stopped around mediacheck's output"; }

say "action.yml valid and 2 broken copies refused, its steps in order and 4 broken copies refused; run.sh: reference $passed passed (exit 0), plain-errors $failed failed (exit 1), a stale baseline entry failed (exit 1), browser: false not run (exit 0; strict, exit 1), a bad input and a line break in an output refused (exit 2), a silent crash said (exit 101)"
