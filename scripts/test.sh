#!/usr/bin/env bash
# Runs every test: the GoogleTest suite (ctest) and the pytest suite, then kernel tests of every
# kind again with a program on a work-group of 128 work-items forced (on a CPU the default is a
# program per work-item; see docs/architecture.md, "Programs and work-items"), the device-memory
# tests among them (a GPU's two paths together: work-groups over copies in device memory).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR=${NINETOOTHED_BUILD_DIR:-build}
echo "[test] GoogleTest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 | tail -n 5
# Test files run in parallel, one process per core (pytest-xdist; NINETOOTHED_TEST_JOBS=1 runs them
# in this process): most of the suite's time is PoCL compiling kernels, one core a process. A file
# stays on one process, so its kernels are compiled once.
JOBS=${NINETOOTHED_TEST_JOBS:-$(nproc)}
PARALLEL=()
if [ "$JOBS" -gt 1 ] && /usr/bin/python3 -c "import xdist" 2>/dev/null; then
  PARALLEL=(-n "$JOBS" --dist loadfile)
fi
echo "[test] pytest"
# --capture=sys: what C code writes to the process's stderr (glibc, libstdc++, PoCL, LLVM) goes
# straight to the log, so a crash's last words are not lost with pytest's captured file.
PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest tests/python -q --capture=sys "${PARALLEL[@]}" "$@"
echo "[test] pytest, work-group layout forced"
# Element-wise kernels, reductions, dots, attention, block operations and norms: every way the
# work-group body holds and shares values. (All kernel tests pass so; these keep CI's time down,
# PoCL compiling work-groups with barriers slowly.) On a CPU, where this layout only emulates what
# GPUs run, tests/python/conftest.py builds its kernels with -cl-opt-disable. The tests that start
# processes in a layout of their own choosing ran so in the first pass already: not again.
NINETOOTHED_PROGRAM_LAYOUT=work-group PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest -q --capture=sys "${PARALLEL[@]}" \
  --deselect tests/python/test_program_layout.py::test_the_layout_variable_chooses_and_results_are_exact \
  --deselect tests/python/test_program_layout.py::test_num_warps_sets_the_work_items_of_a_program \
  tests/python/test_program_layout.py tests/python/test_device_memory.py tests/python/test_kernels_tutorial.py \
  tests/python/test_kernels_math.py \
  tests/python/test_kernels_arrangements.py tests/python/test_kernels_random.py \
  tests/python/test_kernels_language.py tests/python/test_kernels_reductions.py tests/python/test_kernels_dot.py \
  tests/python/test_kernels_attention.py tests/python/test_language_triton_blocks.py \
  tests/python/ops/test_ops_norms.py tests/python/ops/test_ops_elementwise.py tests/python/test_jagged.py "$@"
