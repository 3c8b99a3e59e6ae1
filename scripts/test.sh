#!/usr/bin/env bash
# Builds Prism with AddressSanitizer and UndefinedBehaviorSanitizer and runs
# every ctest suite.
#
#   scripts/test.sh                    dependencies, clang-format check,
#                                      sanitized build, ctest
#   scripts/test.sh --no-clang-format  skip the clang-format check
#
# PRISM_TEST_BENCH=1 additionally builds a Release prism_bench and runs its
# short --smoke pass.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

check_format=1
for arg in "$@"; do
  case "$arg" in
    --clang-format) check_format=1 ;;
    --no-clang-format) check_format=0 ;;
    -h | --help)
      sed -n '2,10p' "$0"
      exit 0
      ;;
    *)
      echo "test.sh: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

# Each stage says how long it took, for the times in README's "Tests".
stage_start=$SECONDS
stage_done() {
  echo "test.sh: stage '$1' took $((SECONDS - stage_start)) s"
  stage_start=$SECONDS
}

bash scripts/install-deps.sh
stage_done dependencies

if [[ $check_format -eq 1 ]]; then
  echo "test.sh: checking clang-format"
  dirs=()
  for d in framework actors persistence examples tests tools; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  if [[ ${#dirs[@]} -gt 0 ]]; then
    # Null-separated so odd file names survive; no files means nothing to do.
    find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 \
      | xargs -0 -r clang-format --dry-run -Werror
  fi
  stage_done clang-format
fi

echo "test.sh: checking the include graph against the house"
python3 scripts/check-house.py
stage_done house

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# The benchmark is a Release program: it is built (and its --smoke pass
# run) with PRISM_TEST_BENCH=1 below, not in the sanitized build. The
# sanitized build is a unity build (sources compiled in batches) at -O1
# with line tables, linked with lld: see README, "Tests", for what each
# saves.
cmake -S . -B build/asan -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPRISM_SANITIZE=ON \
  -DPRISM_UNITY_BUILD=ON \
  -DPRISM_BUILD_BENCH=OFF
stage_done configure
cmake --build build/asan -j "$(nproc)"
stage_done build
status=0
# Two suites at a time: the multi-process ones spend much of their time
# waiting on their processes (README, "Tests").
ctest --test-dir build/asan --output-on-failure -j "$(nproc)" --timeout 900 \
  || status=$?
stage_done ctest
if [[ $status -ne 0 ]]; then
  # The failures in brief, last, where a reader of a long log looks first.
  echo "test.sh: ctest failed ($status); the failing checks and crashes:"
  grep -a -E "error: in |fatal error|ERROR: (Address|Leak)Sanitizer|runtime error|terminate called|SUMMARY:|#[0-9]+ 0x|\*\*\*(Failed|Exception|Timeout)" \
    build/asan/Testing/Temporary/LastTest.log | head -80 || true
  exit "$status"
fi

if [[ "${PRISM_TEST_BENCH:-0}" == "1" ]]; then
  echo "test.sh: prism_bench --smoke (Release)"
  cmake -S . -B build/release -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DPRISM_UNITY_BUILD=ON \
    -DPRISM_BUILD_TESTS=ON \
    -DPRISM_BUILD_BENCH=ON
  cmake --build build/release --target prism_bench -j "$(nproc)"
  ./build/release/tests/bench/prism_bench --smoke
fi
