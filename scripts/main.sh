#!/usr/bin/env bash
# The main job: builds NineToothed, then runs the tutorial's examples: the symbolic part
# (examples/basics.py), then the tutorial's kernels on the OpenCL device, each checked
# against torch (examples/tutorial_kernels.py exits non-zero if any result disagrees).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PYTHONPATH="$PWD/python"
/usr/bin/python3 examples/basics.py "$@"
echo
/usr/bin/python3 examples/tutorial_kernels.py
