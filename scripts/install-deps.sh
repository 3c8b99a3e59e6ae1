#!/usr/bin/env bash
# Installs what building and testing Prism needs on Debian 12. Safe to run
# again: when every package is already installed it returns at once.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
  build-essential
  cmake
  ninja-build
  ccache
  git
  pkg-config
  libcaf-dev
  librocksdb-dev
  libprotobuf-dev
  protobuf-compiler
  libspdlog-dev
  libfmt-dev
  libboost-test-dev
  libcli11-dev
  nlohmann-json3-dev
  libjemalloc-dev
  libssl-dev
  libboost-dev
  prometheus-cpp-dev
  clang-format
  lld
  python3
  iproute2
  # The status page's browser test (tests/browser/status_page.py).
  chromium
  chromium-driver
  python3-selenium
  fonts-dejavu-core
)

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${packages[@]}"
