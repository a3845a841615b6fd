#!/usr/bin/env bash
# Runs every test: the GoogleTest suite (ctest) and the pytest suite.
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
