"""Compares criterion's `latest` run with the `previous` one and checks the lifting targets.

A benchmark regressed when its mean got more than 5% slower and the two runs' confidence intervals do
not overlap (criterion's own noise estimate). Prints one table; exits 1 when anything regressed.
"""

import json
import pathlib
import sys

NOISE = 0.05


def estimate(path):
    data = json.loads(path.read_text())["mean"]
    ci = data["confidence_interval"]
    return data["point_estimate"], ci["lower_bound"], ci["upper_bound"]


def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.1f} ns"


def main(root):
    root = pathlib.Path(root)
    latest = {}
    regressions = []
    print(f"{'benchmark':<44} {'previous':>12} {'latest':>12} {'change':>9}")
    for est in sorted(root.glob("*/*/*/latest/estimates.json")):
        bench = "/".join(est.parts[-5:-2])
        mean, low, high = estimate(est)
        latest[bench] = mean
        prev_path = est.parent.parent / "previous" / "estimates.json"
        if prev_path.exists():
            p_mean, p_low, p_high = estimate(prev_path)
            change = mean / p_mean - 1
            verdict = ""
            if change > NOISE and low > p_high:
                verdict = "REGRESSED"
                regressions.append(bench)
            elif change < -NOISE and high < p_low:
                verdict = "faster"
            print(f"{bench:<44} {fmt(p_mean):>12} {fmt(mean):>12} {change:>+8.1%} {verdict}")
        else:
            print(f"{bench:<44} {'-':>12} {fmt(mean):>12} {'(first run)':>9}")
    print()
    checks = [
        ("lift/scan/2mb-one-picture", ["lift/memchr/2mb-one-picture", "lift/base64-decode/2mb-one-picture"], 2.0,
         "within 2x of one memchr pass + one base64 decode of the picture"),
        ("lift/scan/2mb-none", ["lift/memchr/2mb-none"], 2.0, "within 2x of one memchr pass"),
        ("load-check/compare/50kb", ["load-check/hash/50kb"], 0.1, "a tenth of hashing the body, at most"),
        ("load-check/compare/1mib", ["load-check/hash/1mib"], 0.1, "a tenth of hashing the body, at most"),
    ]
    for bench, limits, factor, what in checks:
        if bench in latest and all(l in latest for l in limits):
            limit = sum(latest[l] for l in limits)
            ratio = latest[bench] / limit
            mark = "ok" if ratio <= factor else "MISSED"
            print(f"target {bench}: {fmt(latest[bench])} = {ratio:.2f}x of {fmt(limit)} ({what}) {mark}")
    if "lift/scan/20kb" in latest:
        value = latest["lift/scan/20kb"]
        print(f"target lift/scan/20kb: {fmt(value)} (under 10 µs) {'ok' if value < 10_000 else 'MISSED'}")
    if regressions:
        print("\nregressed beyond the noise: " + ", ".join(regressions))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "target/criterion"))
