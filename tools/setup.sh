#!/usr/bin/env bash
# Installs clustersim's build dependencies from Debian 12 packages. Idempotent; run as root
# (or with sudo available). Used by the README's first command and by .ci/run.
set -euo pipefail
packages=(build-essential cmake ninja-build libeigen3-dev libyaml-cpp-dev libboost-graph-dev
          libcli11-dev catch2 libfmt-dev librsvg2-bin
          libtomlplusplus-dev nlohmann-json3-dev pybind11-dev python3-dev  # rsvg-convert: tests render the SVG charts
          libjemalloc-dev)  # the executables' allocator (tools/CMakeLists.txt says why)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi
