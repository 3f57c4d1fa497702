#!/usr/bin/env bash
# The "1 worker vs 4 segments" figures of docs/load.md: one reference server (release build, the fixture MCP
# server on stdio, three pictures cached by a warm-up turn), loaded by one `mediacheck load` process
# and then by four segment processes with the environment a Kubernetes Indexed Job gives its pods
# (JOB_COMPLETION_INDEX 0-3, one --start-at), merged. Same open-loop total, same duration.
# Usage: ci/load-segments.sh [RATE] [DURATION]   (default 400 and 20s)
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-400} duration=${2:-20s}
cargo build --locked --release -q -p harness --bin mediacheck -p reference-server --bin reference-server
bin=$PWD/target/release
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
key=load-segments-key
python3 - "$work/config.json" "$bin/mediacheck" "$key" <<'PY'
import json, sys
calls = "".join(f"\n<tool_call>\n<function=fake__picture>\n<parameter=width>\n{w}\n</parameter>\n<parameter=height>\n{h}\n</parameter>\n<parameter=seed>\n{s}\n</parameter>\n</function>\n</tool_call>"
                for w, h, s in [(640, 360, 40), (1280, 720, 41), (800, 600, 42)])
config = {"api_key": sys.argv[3], "mcp": {"image_results": True},
          "mcp_servers": {"fake": {"command": sys.argv[2], "args": ["fixture-mcp"]}},
          "engine": {"scripts": ["</think>\n\nLet me check.\n" + calls, "</think>\n\nWarm."]}}
json.dump(config, open(sys.argv[1], "w"))
PY
"$bin/reference-server" --config "$work/config.json" --port 0 > "$work/ready" 2> "$work/server.log" &
server=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/ready" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/ready")
media=$(python3 - "$url" "$key" <<'PY'
import json, sys, time, urllib.request
url, key = sys.argv[1], sys.argv[2]
for _ in range(100):
    status = json.load(urllib.request.urlopen(urllib.request.Request(url + "/mcp", headers={"Authorization": "Bearer " + key})))
    if all(s.get("status") == "ready" for s in status["servers"]): break
    time.sleep(0.1)
body = json.dumps({"model": "m", "stream": True, "strata_mcp": True, "messages": [{"role": "user", "content": "warm up"}]}).encode()
request = urllib.request.Request(url + "/v1/chat/completions", body, {"Authorization": "Bearer " + key, "Content-Type": "application/json"})
names = []
for line in urllib.request.urlopen(request).read().decode().splitlines():
    if line.startswith("data:") and '"strata_mcp"' in line:
        event = json.loads(line[5:])["strata_mcp"]
        names += [m["url"].rsplit("/", 1)[1] for m in event.get("media", [])]
print(" ".join("--media " + n for n in names))
PY
)
[ "$(wc -w <<<"$media")" = 6 ] || { echo "load-segments: the warm-up cached: $media" >&2; exit 1; }
common=(load --scenario media-get --url "$url" --api-key "$key" $media --rate "$rate" --duration "$duration")
echo "== 1 worker"
"$bin/mediacheck" "${common[@]}" --out "$work/one" 2>/dev/null
echo "== 4 segments (JOB_COMPLETION_INDEX 0-3, one --start-at)"
start=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
workers=()
for index in 0 1 2 3; do
    JOB_COMPLETION_INDEX=$index "$bin/mediacheck" "${common[@]}" --segments 4 --start-at "$start" --out "$work/four" \
        > "$work/segment-$index.txt" 2>&1 &
    workers+=($!)
done
for pid in "${workers[@]}"; do wait "$pid" || echo "load-segments: a segment exited $?" >&2; done
"$bin/mediacheck" load merge "$work/four" --json "$work/merged.json"
