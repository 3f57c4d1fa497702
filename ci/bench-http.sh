#!/usr/bin/env bash
# GET /tool-media side by side with nginx serving the same file from disk, on this machine, at
# concurrency 64: both servers, both load tools (wrk, and `mediacheck load --scenario media-get`, which
# also checks every body's SHA-256). Installs nginx and wrk from Debian when missing. Prints one table.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-64}
SIZE=${SIZE:-500000}

if ! command -v nginx >/dev/null || ! command -v wrk >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light wrk >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
cargo build --locked --release -q -p reference-server -p harness

work=$(mktemp -d)
cleanup() { kill "${ref_pid:-}" "${nginx_pid:-}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# One picture-sized file (PNG signature, random body), named by its SHA-256 as the cache names files.
name=$(python3 - "$work" "$SIZE" <<'PY'
import hashlib, os, sys
work, size = sys.argv[1], int(sys.argv[2])
body = b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)
name = hashlib.sha256(body).hexdigest() + ".png"
for folder, mode in (("bench.tool-media", 0o700), ("www/tool-media", 0o755)):
    os.makedirs(os.path.join(work, folder), exist_ok=True)
    os.chmod(os.path.join(work, folder), mode)
    with open(os.path.join(work, folder, name), "wb") as f:
        f.write(body)
    os.chmod(os.path.join(work, folder, name), mode & 0o644)
# nginx's workers run as another user: the folders above the web root must be passable.
os.chmod(work, 0o755)
os.chmod(os.path.join(work, "www"), 0o755)
print(name)
PY
)
KEY=bench-http-key
echo "{\"api_key\": \"$KEY\", \"mcp\": {\"image_results\": true}}" > "$work/bench.json"
./target/release/reference-server --config "$work/bench.json" --port 0 > "$work/ref.out" 2>/dev/null &
ref_pid=$!
for _ in $(seq 100); do grep -q listening "$work/ref.out" && break; sleep 0.05; done
ref_url=$(sed 's/listening on //' "$work/ref.out")

nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<NGINX
worker_processes 2;
daemon off;
error_log $work/nginx-error.log;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    default_type image/png;
    server { listen 127.0.0.1:$nginx_port; root $work/www; }
}
NGINX
"$NGINX" -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$nginx_port/tool-media/$name" -o /dev/null && break; sleep 0.05; done

row() { printf '%-16s %-16s %12s %10s %10s %12s\n' "$@"; }
wrk_row() {
    local server=$1 url=$2
    local out; out=$(wrk -t2 -c"$CONCURRENCY" -d"$DURATION" --latency -H "Authorization: Bearer $KEY" "$url/tool-media/$name")
    local rps p50 p99 mbs
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    mbs=$(awk '/Transfer\/sec/ {print $2}' <<<"$out")
    row "$server" "wrk" "$rps" "$p50" "$p99" "$mbs"
}
mc_row() {
    local server=$1 url=$2
    local json="$work/$server.json"
    ./target/release/mediacheck load --scenario media-get --url "$url" --api-key "$KEY" --media "$name" \
        --concurrency "$CONCURRENCY" --duration "$DURATION" --json "$json" >/dev/null 2>&1 || true
    python3 - "$json" "$server" "$SIZE" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
latency = next(l for l in report["latency"] if l["op"] == "media-get" and l["phase"] == "total")
rps = report["completed"] / report["seconds"]
print(f"{sys.argv[2]:<16} {'mediacheck load':<16} {rps:>12.0f} {latency['p50_ms']:>8.2f}ms {latency['p99_ms']:>8.2f}ms {rps * int(sys.argv[3]) / 2**20:>9.1f}MB/s  lost: {report['lost']}")
PY
}

echo "GET /tool-media/<${SIZE}-byte picture> at concurrency $CONCURRENCY for $DURATION, $(nproc) cores shared by server and load tool"
row "server" "tool" "requests/s" "p50" "p99" "transfer"
wrk_row "reference" "$ref_url"
wrk_row "nginx" "http://127.0.0.1:$nginx_port"
mc_row "reference" "$ref_url"
mc_row "nginx" "http://127.0.0.1:$nginx_port"
peak=$(awk '/VmHWM/ {print $2}' "/proc/$ref_pid/status")
echo "reference-server peak RSS: $((peak / 1024)) MiB"
