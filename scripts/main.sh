#!/usr/bin/env bash
# The main job: builds NineToothed, then runs the tutorial's examples.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
PYTHONPATH="$PWD/python" /usr/bin/python3 examples/basics.py "$@"
