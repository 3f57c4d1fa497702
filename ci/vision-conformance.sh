#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in ci/interop) against
# vision-mcp's Streamable HTTP transport, for the scenarios that apply to a server with one tool and no
# resources or prompts. The suite sends no headers, so a loopback proxy adds the Bearer token.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-interop.sh >/dev/null
cargo build --locked -q -p vision-mcp
work=$(mktemp -d)
cleanup() { kill "${server_pid:-}" "${proxy_pid:-}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/images"
export OPENAI_API_KEY=sk-conformance-never-called
export VISION_MCP_TOKEN=conformance-token-0123456789-0123456789
export VISION_IMAGE_ROOT="$work/images" VISION_USAGE_DB="$work/usage.sqlite3"
./target/debug/vision-mcp --http --port 0 > "$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 200); do grep -q listening "$work/server.out" && break; sleep 0.05; done
upstream=$(sed -n 's#listening on \(http://[^/]*\)/mcp#\1#p' "$work/server.out")
[ -n "$upstream" ] || { echo "vision-conformance: vision-mcp did not start" >&2; cat "$work/server.err" >&2; exit 1; }
python3 ci/interop/bearer_proxy.py "$upstream" "$VISION_MCP_TOKEN" > "$work/proxy.out" &
proxy_pid=$!
for _ in $(seq 200); do grep -q listening "$work/proxy.out" && break; sleep 0.05; done
proxy=$(sed 's/listening on //' "$work/proxy.out")
status=0
for scenario in server-initialize tools-list ping; do
    if node ci/interop/node_modules/@modelcontextprotocol/conformance/dist/index.js server \
        --url "$proxy/mcp" --scenario "$scenario" --output-dir "$work/results" > "$work/$scenario.log" 2>&1; then
        echo "conformance $scenario: passed"; sed "s/^/    /" "$work/$scenario.log" | grep -v "^ *$" | head -8
    else
        echo "conformance $scenario: FAILED"; cat "$work/$scenario.log"; status=1
    fi
done
exit $status
