#!/usr/bin/env bash
# Prepares a machine and the build: installs the Debian packages NineToothed
# needs (when missing), then configures and builds the C++ core, the Python
# module (into python/ninetoothed/) and the GoogleTest suite in build/.
# Incremental: a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make ccache pybind11-dev python3-dev python3-numpy python3-torch python3-pytest
          python3-pytest-xdist python3-setuptools python3-pip python3-matplotlib ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
          libgtest-dev)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=/usr/bin/python3
BUILD_DIR=${NINETOOTHED_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "[setup] configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PYTHON" >/dev/null
fi
echo "[setup] building (2 jobs)"
cmake --build "$BUILD_DIR" -j2
