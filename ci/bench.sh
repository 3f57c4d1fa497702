#!/usr/bin/env bash
# The criterion benchmarks (benches/): runs them, compares with the last saved run, prints what
# regressed beyond the noise and the DESIGN §7 targets, then keeps this run as the next baseline.
# Extra arguments go to criterion (e.g. a filter: ci/bench.sh lift). Exit code 1 on a regression.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --locked -p benches --benches -- --save-baseline latest "$@"
status=0
python3 ci/bench_compare.py target/criterion || status=$?
# The run just made becomes the baseline of the next one.
for dir in target/criterion/*/*/*/latest; do
    [ -d "$dir" ] || continue
    rm -rf "$(dirname "$dir")/previous"
    cp -r "$dir" "$(dirname "$dir")/previous"
done
exit $status
