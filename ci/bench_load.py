"""mediacheck load beside wrk and oha on one reference server (ci/bench-load.sh builds and installs).

Closed loop: for each picture size and connection count, the three tools run in turn (the order
rotates each round); each cell reports requests/s (the range over rounds), mediacheck over wrk round by
round (each pair ran back to back, so a disturbance of the shared machine lowers both) and on the
means, and each tool's own CPU
seconds per 1,000 requests, measured the same way for all three (the children's getrusage around the
run; mediacheck also reports its own, which should agree). mediacheck's runs must end with `lost: 0`
and every body checked. Open loop: mediacheck --rate R beside oha -q R --latency-correction (both count
latency from the intended send time) at half of wrk's best rate for the size, p50 and p99 of each.
"""

import argparse
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

KEY = "bench-load-key"
SIZES = [("67 B", 67), ("50 KB", 50_079), ("1 MiB", 1 << 20)]


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command):
    """Runs a command; its stdout and the CPU seconds it spent."""
    before = children_cpu()
    done = subprocess.run(command, capture_output=True, text=True)
    return done, children_cpu() - before


def picture(work, size):
    body = b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)
    name = hashlib.sha256(body).hexdigest() + ".png"
    with open(os.path.join(work, "bench.tool-media", name), "wb") as f:
        f.write(body)
    return name


def start_server(args, work):
    with open(os.path.join(work, "bench.json"), "w") as f:
        json.dump({"api_key": KEY, "mcp": {"image_results": True}}, f)
    out = open(os.path.join(work, "server.out"), "w+")
    server = subprocess.Popen([args.server, "--config", os.path.join(work, "bench.json"), "--port", "0"],
                              stdout=out, stderr=subprocess.DEVNULL)
    for _ in range(200):
        out.seek(0)
        line = out.read()
        if "listening on" in line:
            return server, line.split("listening on", 1)[1].split()[0]
        time.sleep(0.05)
    server.kill()
    sys.exit("bench_load: the reference server did not start")


def run_wrk(args, url, connections, _size):
    done, cpu = timed([args.wrk, "-t2", f"-c{connections}", f"-d{args.duration}s", "-H", f"Authorization: Bearer {KEY}", url])
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", done.stdout).group(1))
    bad = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", done.stdout))
    return {"rps": rps, "cpu": cpu, "requests": rps * args.duration, "errors": bad}


def run_oha(args, url, connections, _size, rate=None):
    command = [args.oha, "--no-tui", "--output-format", "json", "-z", f"{args.duration}s", "-c", str(connections),
               "-H", f"Authorization: Bearer {KEY}"]
    if rate:
        command += ["-q", str(rate), "--latency-correction"]
    done, cpu = timed(command + [url])
    report = json.loads(done.stdout)
    codes = report.get("statusCodeDistribution", {})
    ok = codes.get("200", 0)
    percentiles = report.get("latencyPercentiles", {})
    # Requests still in flight when the duration ends are "aborted due to deadline": not errors.
    failed = sum(n for kind, n in report.get("errorDistribution", {}).items() if "deadline" not in kind)
    return {"rps": report["summary"]["requestsPerSec"], "cpu": cpu, "requests": sum(codes.values()),
            "errors": sum(codes.values()) - ok + failed,
            "p50_ms": (percentiles.get("p50") or 0) * 1000, "p99_ms": (percentiles.get("p99") or 0) * 1000}


def run_mediacheck(args, url, connections, _size, rate=None, work=None):
    base, name = url.rsplit("/tool-media/", 1)
    out = os.path.join(work, "mediacheck.json")
    pace = ["--rate", str(rate), "--connections", str(connections)] if rate else ["--concurrency", str(connections)]
    done, cpu = timed([args.mediacheck, "load", "--scenario", "media-get", "--url", base, "--api-key", KEY,
                       "--media", name, "--duration", f"{args.duration}s", "--json", out] + pace)
    report = json.load(open(out))
    latency = next(l for l in report["latency"] if l["op"] == "media-get" and l["phase"] == "total")
    by = report["pictures_checked_by"]
    return {"rps": report["completed"] / report["seconds"], "cpu": cpu, "requests": report["sent"],
            "errors": sum(report["errors"].values()), "lost": report["lost"], "checked": report["pictures_checked"],
            "compared": by["compared_with_proven_copy"], "own_cpu_per_1000": report["cpu"]["per_1000_requests_s"],
            "p50_ms": latency["p50_ms"], "p99_ms": latency["p99_ms"], "exit": done.returncode}


def span(values, fmt="{:,.0f}"):
    low, high = min(values), max(values)
    return fmt.format(low) if fmt.format(low) == fmt.format(high) else f"{fmt.format(low)}–{fmt.format(high)}"


def main():
    parser = argparse.ArgumentParser()
    for tool in ("oha", "wrk", "server", "mediacheck"):
        parser.add_argument(f"--{tool}", required=True)
    parser.add_argument("--duration", type=int, default=int(os.environ.get("DURATION", 10)))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 2)))
    parser.add_argument("--connections", default=os.environ.get("CONNECTIONS", "32,256"))
    parser.add_argument("--sizes", default=os.environ.get("SIZES", "67 B,50 KB,1 MiB"))
    args = parser.parse_args()
    sizes = [s for s in SIZES if s[0] in args.sizes.split(",")]
    connections = [int(c) for c in args.connections.split(",")]
    tools = [("wrk", run_wrk), ("oha", run_oha), ("mediacheck", run_mediacheck)]
    versions = {
        "wrk": subprocess.run([args.wrk, "-v"], capture_output=True, text=True).stdout.split()[1],
        "oha": subprocess.run([args.oha, "--version"], capture_output=True, text=True).stdout.split()[1],
    }
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "bench.tool-media"), mode=0o700)
        names = {label: picture(work, size) for label, size in sizes}
        server, base = start_server(args, work)
        try:
            closed, failures = {}, []
            for round_ in range(args.rounds):
                order = tools[round_ % 3:] + tools[:round_ % 3]
                for label, size in sizes:
                    for c in connections:
                        url = f"{base}/tool-media/{names[label]}"
                        for tool, run in order:
                            extra = {"work": work} if tool == "mediacheck" else {}
                            result = run(args, url, c, size, **extra)
                            closed.setdefault((label, c, tool), []).append(result)
                            if result["errors"] or result.get("lost") or result.get("exit"):
                                failures.append(f"{tool} {label} c={c}: {result}")
                            print(f"round {round_ + 1} {label:>6} c={c:<3} {tool:<10} {result['rps']:>10,.0f} req/s",
                                  file=sys.stderr)
            open_rows = []
            for label, size in sizes:
                rate = int(max(r["rps"] for r in closed[(label, connections[0], "wrk")]) / 2)
                url = f"{base}/tool-media/{names[label]}"
                m = run_mediacheck(args, url, connections[0], size, rate=rate, work=work)
                o = run_oha(args, url, connections[0], size, rate=rate)
                if m["errors"] or m["lost"] or o["errors"]:
                    failures.append(f"open loop {label}: mediacheck {m}, oha {o}")
                open_rows.append((label, rate, m, o))
        finally:
            server.kill()

    print(f"GET /tool-media, closed loop, {args.duration} s a run, {args.rounds} rounds, tools in rotating order; "
          f"{os.cpu_count()} cores shared by the server and the tool; wrk {versions['wrk']} (-t2), oha {versions['oha']}")
    print()
    print("| picture | connections | wrk req/s | oha req/s | mediacheck req/s | mediacheck ÷ wrk, each round (median) | "
          "÷ wrk, means | CPU s per 1,000 requests: wrk / oha / mediacheck | bodies checked (compared with a proven copy) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, _ in sizes:
        for c in connections:
            w, o, m = (closed[(label, c, t)] for t in ("wrk", "oha", "mediacheck"))
            # Each round's mediacheck run over the same round's wrk run (the two ran back to back, so a
            # disturbance of the shared machine mostly lowers both), then the ratio of the means.
            paired = sorted(mx["rps"] / wx["rps"] for mx, wx in zip(m, w))
            median = statistics.median(paired)
            mean_ratio = (sum(x["rps"] for x in m) / len(m)) / (sum(x["rps"] for x in w) / len(w))
            cpu = " / ".join(f"{sum(x['cpu'] for x in runs) * 1000 / max(1, sum(x['requests'] for x in runs)):.3f}"
                             for runs in (w, o, m))
            checked = sum(x["checked"] for x in m)
            compared = sum(x["compared"] for x in m)
            print(f"| {label} | {c} | {span([x['rps'] for x in w])} | {span([x['rps'] for x in o])} | "
                  f"{span([x['rps'] for x in m])} (lost: {sum(x['lost'] for x in m)}) | {span(paired, '{:.2f}')} ({median:.2f}×) | "
                  f"{mean_ratio:.2f}× | {cpu} | "
                  f"{checked:,} ({compared:,}) |")
    print()
    print(f"Open loop at half of wrk's best rate, {connections[0]} connections for both; latency from the intended "
          "send time in both (oha --latency-correction)")
    print()
    print("| picture | rate req/s | mediacheck p50 / p99 ms | oha p50 / p99 ms | mediacheck lost |")
    print("|---|---:|---:|---:|---:|")
    for label, rate, m, o in open_rows:
        print(f"| {label} | {rate:,} | {m['p50_ms']:.2f} / {m['p99_ms']:.2f} | {o['p50_ms']:.2f} / {o['p99_ms']:.2f} "
              f"| {m['lost']} |")
    own = [x["own_cpu_per_1000"] for k, runs in closed.items() if k[2] == "mediacheck" for x in runs]
    print()
    print(f"mediacheck's own CPU report (getrusage inside it), s per 1,000 requests: {min(own):.3f}–{max(own):.3f}")
    for failure in failures:
        print(f"FAILED: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
