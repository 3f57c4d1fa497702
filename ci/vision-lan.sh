#!/usr/bin/env bash
# vision-mcp on a LAN, as its README sets it up, seen from another machine: the "NAS" is a network
# namespace this script creates (10.231.7.1, joined to this host's 10.231.7.2 by a veth pair), the
# server runs there with the README's LAN settings, and `vision-mcp check` runs from this host.
#   1. the shipped defaults (SERVER_IP empty): check fails in one line naming SERVER_IP, the server logs it;
#   2. SERVER_IP set as the README says: check initializes and lists analyze_image, exit 0;
#   3. a wrong token: one line naming VISION_MCP_TOKEN, exit 1;
#   4. a picture the server's user may not read: check --image exits 1 with "permission denied".
# Needs root (ip netns, setpriv). Only the test addresses above are used; everything is removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
# Built as `cargo test` builds it: after CI's test step nothing is compiled again.
cargo test --locked -q --no-run --manifest-path vision-mcp/Cargo.toml --target-dir target
bin=$PWD/target/debug/vision-mcp
id=$$
ns=vmcp-nas-$id host_if=vmh$id nas_if=vmn$id
nas_ip=10.231.7.1 host_ip=10.231.7.2 port=8102
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
    ip link del "$host_if" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns"
ip link add "$host_if" type veth peer name "$nas_if"
ip link set "$nas_if" netns "$ns"
ip addr add "$host_ip/24" dev "$host_if"
ip link set "$host_if" up
ip netns exec "$ns" ip addr add "$nas_ip/24" dev "$nas_if"
ip netns exec "$ns" ip link set "$nas_if" up
ip netns exec "$ns" ip link set lo up

mkdir -m 755 "$work/images" "$work/data"
chown 10001:10001 "$work/data"
python3 - "$work/images" <<'EOF'
import struct, sys, zlib
def png(path, mode):
    raw = b"".join(b"\x00" + b"\x80\x40\x20" * 8 for _ in range(8))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png(sys.argv[1] + "/private.png", 0o600)
EOF
chmod 600 "$work/images/private.png"

token=lan-test-token-0123456789-0123456789
# The README's LAN step, without Docker: MCP_BIND_IP is where it listens, SERVER_IP joins the allowed hosts.
start() { # SERVER_IP
    ip netns exec "$ns" setpriv --reuid=10001 --regid=10001 --clear-groups -- env -i \
        OPENAI_API_KEY=sk-lan-test-never-called VISION_MCP_TOKEN=$token \
        VISION_IMAGE_ROOT="$work/images" VISION_USAGE_DB="$work/data/usage.sqlite3" \
        MCP_ALLOWED_HOSTS='localhost:*,127.0.0.1:*' SERVER_IP="$1" \
        "$bin" --http --host "$nas_ip" --port "$port" > "$work/server.out" 2> "$work/server.err" &
    server_pid=$!
    for _ in $(seq 200); do grep -q listening "$work/server.out" 2>/dev/null && return; sleep 0.05; done
    echo "vision-lan: the server did not start"; cat "$work/server.err"; exit 1
}
stop() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=; }
check() { VISION_MCP_TOKEN=$1 "$bin" check "http://$nas_ip:$port/mcp" "${@:2}" > "$work/check.out" 2> "$work/check.err"; }
fail() { echo "vision-lan: FAILED: $*"; echo "--- check stdout"; cat "$work/check.out"; echo "--- check stderr"; cat "$work/check.err"; echo "--- server log"; cat "$work/server.err"; exit 1; }

start ""
if check "$token"; then fail "the shipped defaults let a LAN client in without SERVER_IP"; fi
[ "$(wc -l < "$work/check.err")" = 1 ] || fail "the refusal is not one line"
grep -q "HTTP 403" "$work/check.err" && grep -q SERVER_IP "$work/check.err" || fail "the refusal does not name SERVER_IP"
grep -q "refused a request" "$work/server.err" && grep -q "$nas_ip:$port" "$work/server.err" || fail "the server did not log the refused Host"
echo "vision-lan: defaults: refused, naming SERVER_IP: $(cat "$work/check.err")"
stop

start "$nas_ip"
check "$token" || fail "check with SERVER_IP set"
grep -q "tool: analyze_image" "$work/check.out" || fail "analyze_image was not listed"
echo "vision-lan: SERVER_IP=$nas_ip: $(tr '\n' ' ' < "$work/check.out")"
if check wrong-token; then fail "a wrong token was accepted"; fi
grep -q "HTTP 401" "$work/check.err" && grep -q VISION_MCP_TOKEN "$work/check.err" || fail "the 401 does not name VISION_MCP_TOKEN"
echo "vision-lan: wrong token: $(cat "$work/check.err")"
if check "$token" --image private.png; then fail "an unreadable picture passed the check"; fi
grep -q "permission denied" "$work/check.out" || fail "the unreadable picture was not reported as permission denied"
echo "vision-lan: unreadable picture: $(grep -m1 'permission denied' "$work/check.out" | cut -c1-120)…"
stop
echo "vision-lan: 4 passed, 0 failed"
