#!/usr/bin/env bash
# On a lent NVIDIA machine (see docs/performance.md): builds the module against the CUDA toolkit's
# OpenCL, registers NVIDIA's OpenCL driver, and runs the given pytest files on that device
# (NINETOOTHED_DEVICE=NVIDIA). Usage: scripts/gpu_check.sh tests/python/test_kernels_*.py
set -euo pipefail
cd "$(dirname "$0")/.."
DRIVER=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 2>/dev/null || find / -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
mkdir -p /etc/OpenCL/vendors
echo "$DRIVER" > /etc/OpenCL/vendors/nvidia.icd
PYTHON=${PYTHON:-python3}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DNINETOOTHED_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE="$(command -v "$PYTHON")" -Dpybind11_DIR="$("$PYTHON" -m pybind11 --cmakedir)" \
  -DOpenCL_INCLUDE_DIR=/usr/local/cuda/include -DOpenCL_LIBRARY=/usr/local/cuda/lib64/libOpenCL.so.1 >/dev/null
cmake --build build-gpu -j16 >/dev/null
export NINETOOTHED_DEVICE=${NINETOOTHED_DEVICE:-NVIDIA} NINETOOTHED_CACHE_DIR=$(mktemp -d)
PYTHONPATH=$PWD/python "$PYTHON" -c "import ninetoothed; print(ninetoothed.current_device())"
PYTHONPATH=$PWD/python "$PYTHON" -m pytest -q -p no:cacheprovider -x "$@" 2>&1 | tail -25
