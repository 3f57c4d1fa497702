#!/usr/bin/env bash
# Stryker's command runner runs this once per mutant of the chat page (and once with none, its dry
# run), in its sandbox: ./web holds the page with every mutant compiled in, switched by
# $__STRYKER_ACTIVE_MUTANT__. The browser cannot see this process's environment, so each served
# script first sets globalThis.__stryker__.activeMutant, which Stryker's own switch reads. The
# reference server serves that copy (--web-dir, no rebuild) to mediacheck's page cases.
#
# Cheap first, so that a caught mutant costs little: page.contract-marks (one visit that runs a tool
# turn and reads every mark the other cases rely on), then every page case with --fail-fast, at 390
# px only (MEDIACHECK_PAGE_WIDTHS; $STRYKER_JUDGE_WIDTHS names others, e.g. all five to re-check a
# survivor by hand) and with every wait capped at 15 s (MEDIACHECK_PAGE_WAIT_S; the reference needs
# a few seconds at most, the dry run proves it, and a broken page fails in 15 s instead of 60). The
# score is over this judge: a lower bound on what the whole suite at every width catches.
#
# Exit 1 (killed) when a page case fails or warns; 0 (survived) when every case ran and passed. A run
# where cases did not run without any failing (the browser did not start, say) is tried once more,
# and if it still cannot run it counts as survived and is logged — a mutant is never counted as
# caught by a broken environment. Every mutant's verdict, the stage that caught it and its time are
# appended to $STRYKER_JUDGE_LOG.
set -uo pipefail
bin="${STRYKER_JUDGE_BIN:?set by ci/stryker.sh: the folder of mediacheck and reference-server}"
page=$(mktemp -d)
report=$(mktemp)
trap 'rm -rf "$page" "$report"' EXIT
cp web/* "$page"/
if [ -n "${__STRYKER_ACTIVE_MUTANT__:-}" ]; then
    for script in "$page"/*.js; do
        {
            printf 'globalThis.__stryker__ = Object.assign(globalThis.__stryker__ || {}, { activeMutant: "%s" });\n' \
                "$__STRYKER_ACTIVE_MUTANT__"
            cat "$script"
        } >"$script.new"
        mv "$script.new" "$script"
    done
fi

judge_once() {
    # In a process group of its own, ended whole afterwards: a mutant that hangs the page (a loop that
    # never yields) leaves its Chromium renderer spinning after mediacheck gives up on it, and a few of
    # those slow every later verdict down.
    MEDIACHECK_PAGE_WIDTHS="$1" MEDIACHECK_PAGE_WAIT_S=15 setsid "$bin/mediacheck" run --only "$2" --fail-fast --seed 1 --json "$report" \
        --screenshots "$page/screenshots" \
        --spawn "$bin/reference-server --config {config} --port {port} {scripts} --web-dir $page" \
        >/dev/null 2>&1 &
    local group=$!
    wait "$group"
    kill -KILL -- "-$group" 2>/dev/null
    python3 - "$report" <<'PY'
import json, sys
try:
    summary = json.load(open(sys.argv[1]))["summary"]
except Exception:
    sys.exit(3)  # no report: mediacheck itself could not run
if summary["fail"] or summary["warn"]:
    sys.exit(1)
sys.exit(3 if summary["not_run"] else 0)
PY
}

# One stage (widths, cases): 0 passed, 1 caught, 3 could not run twice (logged).
judge_stage() {
    local verdict
    for _ in 1 2; do
        judge_once "$1" "$2"
        verdict=$?
        [ "$verdict" -ne 3 ] && return "$verdict"
    done
    echo "mutant ${__STRYKER_ACTIVE_MUTANT__:-none}: page cases at $1 px could not run twice; counted as survived" \
        >>"${STRYKER_JUDGE_LOG:-/dev/stderr}"
    return 3
}

started=$SECONDS
verdict=survived
for stage in "390 page.contract-marks" "${STRYKER_JUDGE_WIDTHS:-390} page.*"; do
    judge_stage $stage
    if [ $? -eq 1 ]; then verdict="caught at ${stage// / by }"; break; fi
done
echo "mutant ${__STRYKER_ACTIVE_MUTANT__:-none}: $verdict in $((SECONDS - started)) s" >>"${STRYKER_JUDGE_LOG:-/dev/stderr}"
[ "$verdict" = survived ] || exit 1
exit 0
