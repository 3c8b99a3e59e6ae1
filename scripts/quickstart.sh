#!/usr/bin/env bash
# From a fresh Debian 12 to a running Prism program: installs the
# dependencies, builds the quickstart example (Release) and runs it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

cmake -S . -B build/release -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DPRISM_UNITY_BUILD=ON \
  -DPRISM_BUILD_TESTS=OFF
cmake --build build/release --target quickstart -j "$(nproc)"

./build/release/examples/quickstart
