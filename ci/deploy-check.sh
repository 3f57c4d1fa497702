#!/usr/bin/env bash
# Checks what deploy/ ships, offline, with tools nobody on this team wrote (pinned in
# ci/install-interop.sh): every Kubernetes manifest against the Kubernetes schemas (kubernetes-validate,
# strict: an unknown field fails), the CI-matrix workflow against GitHub's workflow schema
# (check-jsonschema's vendored copy); then that the segment counts agree (the Job's completions,
# parallelism and --segments; the matrix's entries and SEGMENTS), and that each validator can fail.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=ci/interop/.venv/bin
say() { printf 'deploy-check: %s\n' "$*"; }

"$bin/kubernetes-validate" --strict --quiet deploy/kubernetes/*.yaml
"$bin/check-jsonschema" --builtin-schema vendor.github-workflows deploy/github-actions/*.yml

"$bin/python" - <<'PY'
import sys, yaml
job = [d for d in yaml.safe_load_all(open("deploy/kubernetes/load-job.yaml")) if d["kind"] == "Job"][0]
spec = job["spec"]
args = spec["template"]["spec"]["containers"][0]["args"]
segments = int(args[args.index("--segments") + 1])
problems = []
if not (spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == segments):
    problems.append(f"load-job.yaml: completions {spec['completions']}, parallelism {spec['parallelism']}, --segments {segments}")
for flag in ("--start-at", "--out", "--run-id"):
    if flag not in args:
        problems.append(f"load-job.yaml: no {flag}")
flow = yaml.safe_load(open("deploy/github-actions/load-matrix.yml"))
matrix = flow["jobs"]["segment"]["strategy"]["matrix"]["index"]
if matrix != list(range(1, int(flow["env"]["SEGMENTS"]) + 1)):
    problems.append(f"load-matrix.yml: matrix {matrix} is not 1..SEGMENTS ({flow['env']['SEGMENTS']})")
for p in problems:
    print("deploy-check:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

broken=$(mktemp -d)
trap 'rm -rf "$broken"' EXIT
sed 's/^  completionMode: Indexed$/  completionMode: Indexed\n  completionModes: Indexed/' deploy/kubernetes/load-job.yaml > "$broken/unknown-field.yaml"
sed 's/^  parallelism: 4$/  parallelism: "four"/' deploy/kubernetes/load-job.yaml > "$broken/wrong-type.yaml"
for file in "$broken"/*.yaml; do
    if "$bin/kubernetes-validate" --strict --quiet "$file" >/dev/null 2>&1; then
        say "kubernetes-validate passed a broken manifest: $(basename "$file")"; exit 1
    fi
done
sed 's/^    runs-on: ubuntu-latest$/    runs_on: ubuntu-latest/' deploy/github-actions/load-matrix.yml > "$broken/workflow.yml"
if "$bin/check-jsonschema" --builtin-schema vendor.github-workflows "$broken/workflow.yml" >/dev/null 2>&1; then
    say "check-jsonschema passed a broken workflow"; exit 1
fi
say "$(ls deploy/kubernetes/*.yaml | wc -l) manifests and $(ls deploy/github-actions/*.yml | wc -l) workflow valid, segment counts agree, 3 broken copies refused"
