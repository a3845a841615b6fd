#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and driver but none of our Debian packages (the lent H100/H200
# machines): builds the module with that machine's Python (pybind11 from its site-packages, OpenCL
# headers and libOpenCL.so.1 from the CUDA toolkit), registers NVIDIA's OpenCL driver in
# /etc/OpenCL/vendors/nvidia.icd when missing, runs kernel tests on the NVIDIA device
# (NINETOOTHED_DEVICE=NVIDIA), then prints the GPU benchmark table (benchmarks/gpu.py).
# Usage: [GPU_TEST_SECONDS=n] [GPU_BENCHMARK=0] [GPU_TEST_JOBS=n] [NINETOOTHED_TEST_DEVICE=cuda]
#        [GPU_JUNIT=file.xml] scripts/gpu/run.sh [pytest files...]
#   (default: the tutorial's and the AOT tests; GPU_BENCHMARK=0 skips the benchmark, =cuda runs
#   benchmarks/gpu_cuda.py instead of benchmarks/gpu.py, =attention benchmarks/gpu_attention_conv.py; GPU_TEST_JOBS
#   runs test files on n processes where pytest-xdist is installed; NINETOOTHED_TEST_DEVICE=cuda
#   runs every kernel call of the tests on CUDA tensors, tests/python/conftest.py; GPU_JUNIT writes
#   pytest's JUnit XML there, which scripts/gpu/per_file.py counts per file)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  DRIVER=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 2>/dev/null ||
           find / -name 'libnvidia-opencl.so.1' -not -path '/proc/*' 2>/dev/null | head -1)
  mkdir -p /etc/OpenCL/vendors
  echo "$DRIVER" > /etc/OpenCL/vendors/nvidia.icd
fi
PYTHON=${PYTHON:-python3}
CUDA=${CUDA_HOME:-/usr/local/cuda}
echo "[gpu] building"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DNINETOOTHED_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE="$(command -v "$PYTHON")" -Dpybind11_DIR="$("$PYTHON" -m pybind11 --cmakedir)" \
  -DOpenCL_INCLUDE_DIR="$CUDA/include" -DOpenCL_LIBRARY="$CUDA/lib64/libOpenCL.so.1" >/dev/null
cmake --build build-gpu -j"$(nproc)" >/dev/null
# Ahead-of-time tests compile C programs with -lOpenCL and <CL/cl.h>: the toolkit's.
mkdir -p /tmp/ninetoothed-opencl && ln -sf "$CUDA/lib64/libOpenCL.so.1" /tmp/ninetoothed-opencl/libOpenCL.so
export LIBRARY_PATH=/tmp/ninetoothed-opencl${LIBRARY_PATH:+:$LIBRARY_PATH} CPATH=$CUDA/include${CPATH:+:$CPATH}
export NINETOOTHED_DEVICE=${NINETOOTHED_DEVICE:-NVIDIA} NINETOOTHED_CACHE_DIR=${NINETOOTHED_CACHE_DIR:-$(mktemp -d)}
export PYTHONPATH=$PWD/python
"$PYTHON" -c "import ninetoothed; print('[gpu] device:', ninetoothed.current_device())"
if [ $# -eq 0 ]; then set -- tests/python/test_kernels_tutorial.py tests/python/test_aot.py; fi
echo "[gpu] tests: $*"
# GPU_TEST_SECONDS bounds the tests (then interrupted, so that their report is written), so that the
# benchmark still runs within a lent machine's limit.
status=0
PARALLEL=()
if [ -n "${GPU_TEST_JOBS:-}" ] && "$PYTHON" -c "import xdist" 2>/dev/null; then
  PARALLEL=(-n "$GPU_TEST_JOBS" --dist loadfile)
fi
JUNIT=()
[ -n "${GPU_JUNIT:-}" ] && JUNIT=(--junitxml "$GPU_JUNIT" -o junit_family=xunit1)
timeout -s INT -k 60 "${GPU_TEST_SECONDS:-86400}" "$PYTHON" -m pytest -q -p no:cacheprovider "${PARALLEL[@]}" "${JUNIT[@]}" "$@" ||
  status=$?
[ $status -eq 0 ] || echo "[gpu] tests failed or timed out (exit $status)"
[ "${GPU_BENCHMARK:-1}" = 0 ] && exit $status
echo "[gpu] benchmark"
if [ "${GPU_BENCHMARK:-1}" = cuda ]; then
  "$PYTHON" benchmarks/gpu_cuda.py  # CUDA tensors: ours, upstream NineToothed (.upstream/src), torch
elif [ "${GPU_BENCHMARK:-1}" = attention ]; then
  "$PYTHON" benchmarks/gpu_attention_conv.py  # flash attention and conv2d, the same three
else
  "$PYTHON" benchmarks/gpu.py
fi
exit $status
