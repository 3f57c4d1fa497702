#!/usr/bin/env python3
"""An independent check of `mediacheck load merge`: the Python `hdrhistogram` package (module `hdrh`,
not written by this team) reads every segment's interval logs, adds them, and its sums must equal the
merged report exactly.

Usage: hdr_oracle.py MERGED_JSON DIR...

For each series (request kind and phase) in the merged report, from the `*.<op>.<phase>.hlog` files
under the DIRs:
- every interval decoded and added with hdrh's HistogramLogReader / HdrHistogram.add;
- total count, min and max equal the report's;
- the merged histogram the report carries (`histograms_v2`, decoded by hdrh) equals hdrh's sum, count
  for count at every index;
- p50, p90, p99 and p99.9 equal the report's. HdrHistogram's percentile rule (Java 2.1.10 and later, and
  the Rust crate) is the nearest rank: the first value whose cumulative count reaches
  ceil(q * total). hdrh 0.10's get_value_at_percentile still rounds the rank half up
  (int(q * total + 0.5)); so each percentile is computed here by the nearest rank from hdrh's counts, and
  hdrh's own get_value_at_percentile is compared too wherever the two rules pick the same rank.
Prints one line per series and "N passed, N failed"; exits 1 on any difference.
"""
import glob
import json
import math
import os
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

LOWEST, HIGHEST, FIGURES = 1, 3_600_000_000, 3
QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


def added(paths):
    total = HdrHistogram(LOWEST, HIGHEST, FIGURES)
    intervals = 0
    for path in paths:
        reader = HistogramLogReader(path, HdrHistogram(LOWEST, HIGHEST, FIGURES))
        while True:
            interval = reader.get_next_interval_histogram()
            if interval is None:
                break
            total.add(interval)
            intervals += 1
        reader.close()
    return total, intervals


def nearest_rank(histogram, quantile):
    rank = max(1, math.ceil(quantile * histogram.get_total_count()))
    seen = 0
    for index in range(histogram.counts_len):
        seen += histogram.get_count_at_index(index)
        if seen >= rank:
            return histogram.get_highest_equivalent_value(histogram.get_value_from_index(index))
    return 0


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    merged = json.load(open(sys.argv[1]))
    dirs = sys.argv[2:]
    passed, failed = 0, 0
    for entry in merged["latency"]:
        series = entry["series"]
        paths = sorted(p for d in dirs for p in glob.glob(os.path.join(d, "**", f"*.{series}.hlog"), recursive=True))
        ours, intervals = added(paths)
        theirs = entry["us"]
        problems = []
        if ours.get_total_count() != theirs["count"]:
            problems.append(f"count {ours.get_total_count()} != {theirs['count']}")
        if ours.get_max_value() != theirs["max"]:
            problems.append(f"max {ours.get_max_value()} != {theirs['max']}")
        if ours.get_min_value() != theirs["min"]:
            problems.append(f"min {ours.get_min_value()} != {theirs['min']}")
        carried = HdrHistogram.decode(merged["histograms_v2"][series])
        differing = [i for i in range(ours.counts_len) if ours.get_count_at_index(i) != carried.get_count_at_index(i)]
        if differing:
            problems.append(f"{len(differing)} counts differ from the report's histogram, first at index {differing[0]}")
        same_rank = 0
        for name, quantile in QUANTILES.items():
            value = nearest_rank(ours, quantile)
            if value != theirs[name]:
                problems.append(f"{name} {value} != {theirs[name]}")
            total = ours.get_total_count()
            if max(1, int(quantile * 100 * total / 100 + 0.5)) == max(1, math.ceil(quantile * total)):
                same_rank += 1
                if ours.get_value_at_percentile(quantile * 100) != theirs[name]:
                    problems.append(f"hdrh's {name} {ours.get_value_at_percentile(quantile * 100)} != {theirs[name]}")
        verdict = "equal" if not problems else "DIFFERENT: " + "; ".join(problems)
        print(
            f"{series}: {len(paths)} logs, {intervals} intervals, {ours.get_total_count()} latencies, "
            f"p50 {theirs['p50']} p90 {theirs['p90']} p99 {theirs['p99']} p99.9 {theirs['p999']} "
            f"max {theirs['max']} µs ({same_rank} of 4 also by hdrh's own percentile rule): {verdict}"
        )
        if problems:
            failed += 1
        else:
            passed += 1
    if passed + failed == 0:
        print("no series in the merged report", file=sys.stderr)
        failed = 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
