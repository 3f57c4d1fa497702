#!/usr/bin/env bash
# The mediacheck GitHub Action's run (action/action.yml calls it), a script that runs anywhere: the
# inputs come as INPUT_* variables, the way GitHub passes them. It runs `mediacheck run` with every
# report written into one folder, appends the Markdown summary to $GITHUB_STEP_SUMMARY, writes the
# outputs (passed, failed, warnings, not-run, report, report-dir, screenshots, exit-code) to $GITHUB_OUTPUT, and exits as
# mediacheck did: 0 when every MUST passed (or failed as the baseline expects), 1 when one failed, a
# baseline entry is stale or (strict) a case was not run, 2 (with the message, as a GitHub error
# annotation) when the inputs could not be used. An output value with a line break is refused (exit 2):
# in $GITHUB_OUTPUT it would set another output.
#
#   INPUT_SPAWN       a --spawn template ({config}, {port}, {scripts}); or
#   INPUT_URL         a running server's URL, with INPUT_API_KEY (handed over in MEDIACHECK_API_KEY,
#                     never on a command line); neither: the embedded reference server
#   INPUT_BASELINE    a file of case ids the server is known to fail
#   INPUT_ONLY        a glob of case ids; INPUT_SKIP: globs to leave out (whitespace or commas between)
#   INPUT_STRICT      true: cases that did not run fail the run
#   INPUT_SEED, INPUT_GEN_BUDGET   the generated cases' seed and requests per case
#   INPUT_SCREENSHOTS where the page cases' screenshots go (default: screenshots/ in the report folder)
#   INPUT_REPORT_DIR  the report folder (default: $RUNNER_TEMP/mediacheck-report, else a new temp folder)
#   INPUT_BROWSER     false: start no browser (--no-browser), the page cases are not run, with the reason
#   MEDIACHECK        the mediacheck binary (default: `mediacheck` on PATH)
set -euo pipefail

say() { printf 'mediacheck action: %s\n' "$*" >&2; }
# A GitHub annotation's message: %, CR and LF escaped (outside GitHub it reads as a plain line).
annotate() { # level message
    local message=${2//'%'/'%25'}
    message=${message//$'\r'/'%0D'}
    message=${message//$'\n'/'%0A'}
    printf '::%s title=mediacheck::%s\n' "$1" "$message"
}
# One output as a `name=value` line; a value with a line break would write a line of its own (another
# output, set by whoever chose the value), so it is refused.
output() {
    case "$2" in
        *$'\n'* | *$'\r'*) usage "the output $1 would hold a line break (from an input?): refused: $2" ;;
    esac
    [ -n "${GITHUB_OUTPUT:-}" ] && printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT" || true
}
summary() { [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat >> "$GITHUB_STEP_SUMMARY" || cat > /dev/null; }
usage() { # message [exit code]: refuse the inputs as mediacheck refuses a command line (exit 2)
    annotate error "$1"
    # An indented block: a line of the message cannot close a fence and write Markdown of its own.
    { printf '## mediacheck could not run\n\n'; sed 's/^/    /' <<< "$1"; } | summary
    output exit-code "${2:-2}"
    exit "${2:-2}"
}

out=${INPUT_REPORT_DIR:-}
if [ -z "$out" ]; then
    if [ -n "${RUNNER_TEMP:-}" ]; then out=$RUNNER_TEMP/mediacheck-report; else out=$(mktemp -d); fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
output report-dir "$out"
screenshots=${INPUT_SCREENSHOTS:-$out/screenshots}
# Screenshots elsewhere than in the report folder are uploaded beside it.
case "$screenshots" in
    "$out"/*) ;;
    *) output screenshots "$screenshots" ;;
esac
mediacheck=${MEDIACHECK:-mediacheck}
command -v "$mediacheck" > /dev/null || usage "no mediacheck binary at '$mediacheck' (set MEDIACHECK)"

args=(run --json "$out/report.json" --junit "$out/report.xml" --markdown "$out/summary.md" --html "$out/report.html")
args+=(--screenshots "$screenshots")
[ -n "${INPUT_SPAWN:-}" ] && args+=(--spawn "$INPUT_SPAWN")
[ -n "${INPUT_URL:-}" ] && args+=(--url "$INPUT_URL")
if [ -n "${INPUT_API_KEY:-}" ]; then
    [ -n "${INPUT_URL:-}" ] || usage "api-key is given without url (a spawned server's key is in its configuration)"
    export MEDIACHECK_API_KEY=$INPUT_API_KEY
fi
[ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")
[ -n "${INPUT_ONLY:-}" ] && args+=(--only "$INPUT_ONLY")
# Split on whitespace and commas, never expanded against file names (`page.*` stays a glob of ids).
read -r -d '' -a skips < <(tr ',' ' ' <<< "${INPUT_SKIP:-}") || true
for glob in ${skips[@]+"${skips[@]}"}; do
    args+=(--skip "$glob")
done
case "${INPUT_STRICT:-false}" in
    true) args+=(--strict) ;;
    false | '') ;;
    *) usage "strict must be true or false, not '$INPUT_STRICT'" ;;
esac
case "${INPUT_BROWSER:-true}" in
    true | '') ;;
    false) args+=(--no-browser) ;;
    *) usage "browser must be true or false, not '$INPUT_BROWSER'" ;;
esac
[ -n "${INPUT_SEED:-}" ] && args+=(--seed "$INPUT_SEED")
[ -n "${INPUT_GEN_BUDGET:-}" ] && args+=(--gen-budget "$INPUT_GEN_BUDGET")

# The browser for the page cases: Debian's Chromium where it is, else a runner's own Chrome and its
# matching ChromeDriver (GitHub's Ubuntu images: google-chrome and $CHROMEWEBDRIVER).
if [ -z "${MEDIACHECK_CHROMIUM:-}" ] && [ ! -x /usr/lib/chromium/chromium ] && command -v google-chrome > /dev/null \
    && [ -x "${CHROMEWEBDRIVER:-}/chromedriver" ]; then
    export MEDIACHECK_CHROMIUM=$(command -v google-chrome) MEDIACHECK_CHROMEDRIVER=$CHROMEWEBDRIVER/chromedriver
fi

rm -f "$out/summary.md" "$out/report.html" "$out/report.json"
say "$mediacheck ${args[*]}"
# stderr is shown as it comes (the progress lines) and kept for the message of a refusal.
# What the server under test says reaches the job's log through the report: no line of it may act as
# a workflow command (::add-mask::, ::error::, ::stop-commands::), so they are off while it runs.
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
echo "::stop-commands::$token"
set +e
{ "$mediacheck" "${args[@]}" 2>&1 1>&3 3>&- | tee "$out/stderr.txt" >&2; } 3>&1
code=$?
set -e
echo "::$token::"

if [ "$code" -ne 0 ] && [ "$code" -ne 1 ] || [ ! -s "$out/report.json" ]; then
    message=$(grep -E '^(mediacheck:|error:)' "$out/stderr.txt" | head -5 || true)
    [ "$code" -eq 0 ] && code=2
    usage "mediacheck run exited with $code: ${message:-$(tail -5 "$out/stderr.txt")}" "$code"
fi
output exit-code "$code"

# The counts from the JSON report's summary (serde_json's compact form; a string inside the report
# cannot match, its quotes are escaped).
counts=$(grep -oE '"summary":\{"pass":[0-9]+,"fail":[0-9]+,"warn":[0-9]+,"not_run":[0-9]+\}' "$out/report.json" | head -1 || true)
[ -n "$counts" ] || usage "the JSON report has no summary: $out/report.json"
count() { sed -E "s/.*\"$1\":([0-9]+).*/\\1/" <<< "$counts"; }
output passed "$(count pass)"
output failed "$(count fail)"
output warnings "$(count warn)"
output not-run "$(count not_run)"
output report "$out/report.html"
summary < "$out/summary.md"
say "report: $out/report.html (summary: $out/summary.md)"

if [ "$code" -eq 1 ]; then
    # The headline the reports show (mediacheck's own words, no quote or backslash in them).
    headline=$(grep -oE '"headline":"[^"\\]*"' "$out/report.json" | head -1 | sed -E 's/^"headline":"(.*)"$/\1/' || true)
    annotate error "mediacheck ${headline:-failed (exit 1)}: see the job summary and $out/report.html"
    exit 1
fi
exit 0
