#!/usr/bin/env bash
# Runs every test: the GoogleTest suite (ctest) and the pytest suite, then the kernel tests whose
# kernels can run a program on a work-group again with that layout forced (on a CPU the default is
# a program per work-item; see docs/architecture.md, "Programs and work-items").
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR=${NINETOOTHED_BUILD_DIR:-build}
echo "[test] GoogleTest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 | tail -n 5
echo "[test] pytest"
# --capture=sys: what C code writes to the process's stderr (glibc, libstdc++, PoCL, LLVM) goes
# straight to the log, so a crash's last words are not lost with pytest's captured file.
PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest tests/python -q --capture=sys "$@"
echo "[test] pytest, work-group layout forced"
# Kernels that need a program on one work-item (reductions, dots, held blocks) run the same code in
# both passes; these files hold the element-wise kernels, which run differently.
NINETOOTHED_PROGRAM_LAYOUT=work-group PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest -q --capture=sys \
  tests/python/test_program_layout.py tests/python/test_kernels_tutorial.py tests/python/test_kernels_math.py \
  tests/python/test_kernels_arrangements.py tests/python/test_kernels_random.py \
  tests/python/test_kernels_language.py tests/python/ops/test_ops_elementwise.py "$@"
