#!/usr/bin/env bash
# The suite against a server that is not ours (issue 56): peers/python-server, written from SPEC.md,
# strata-wire.md and the seeds alone, installed into its own venv from its pinned requirements.txt,
# then `mediacheck run --spawn` against it with every case (page cases included when Chromium is
# there), its verdicts in target/second-implementation.{json,txt}. The cases it is known to fail, each
# with its reason, are peers/python-server/baseline.txt (a listed case that passes is stale and fails
# the run: the list only shrinks). Usage: ci/second-implementation.sh [mediacheck run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
peer=peers/python-server
venv=$peer/.venv
stamp=$venv/requirements.installed
if ! cmp -s "$peer/requirements.txt" "$stamp" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$peer/requirements.txt"
    cp "$peer/requirements.txt" "$stamp"
fi
"$venv/bin/python" -c "import mcp, starlette, uvicorn, PIL" # fails loudly when the install is short

mediacheck=${MEDIACHECK:-target/debug/mediacheck}
[ -x "$mediacheck" ] || cargo build --locked -p harness --bin mediacheck
mkdir -p target
baseline=()
[ -f "$peer/baseline.txt" ] && baseline=(--baseline "$peer/baseline.txt")
set +e
"$mediacheck" run --spawn "bash $PWD/$peer/run.sh --config {config} --port {port} {scripts}" \
    "${baseline[@]}" --json target/second-implementation.json "$@" | tee target/second-implementation.txt
code=${PIPESTATUS[0]}
set -e
echo "ci/second-implementation.sh: mediacheck exited $code against $peer"
exit "$code"
