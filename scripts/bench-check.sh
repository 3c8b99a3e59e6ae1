#!/usr/bin/env bash
# Runs the benchmark (Release) against the committed baseline and fails if a
# metric dropped by more than 15%: each metric is compared as its ratio to a
# floor measured in the same run (or as its value where it has none), so the
# machine's speed cancels out. Run it after any change to a hot path, on an
# otherwise idle machine (README, "Benchmarks").
#
#   scripts/bench-check.sh                  every metric (5 to 10 minutes)
#   scripts/bench-check.sh --filter REGEX   some metrics, with their floors
#   scripts/bench-check.sh --update         a new baseline: every metric,
#                                           three times, the median figure
#                                           of each (README says when)
#
# A metric that looks dropped is measured twice more beside its floor and
# keeps its best figure. The run's results are written
# to build/bench-latest.json. Not part of CI, which cannot time reliably.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

cmake -S . -B build/release -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DPRISM_UNITY_BUILD=ON \
  -DPRISM_BUILD_TESTS=ON \
  -DPRISM_BUILD_BENCH=ON >/dev/null
cmake --build build/release --target prism_bench -j "$(nproc)"

if [[ "${1:-}" == "--update" ]]; then
  exec ./build/release/tests/bench/prism_bench --runs 3 \
    --json tests/bench/baseline.json
fi
exec ./build/release/tests/bench/prism_bench \
  --baseline tests/bench/baseline.json --check \
  --json build/bench-latest.json "$@"
