"""Imported first by the layout scripts (run as programs, this folder first on sys.path): puts the
package, the examples and the tests on sys.path, as pytest's run of the tests has them, and caps
tuning's candidates at NINETOOTHED_TEST_MAX_NUM_CONFIGS where the test running the script asks (as
tests/python/conftest.py caps them in the tests' own processes)."""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
for path in (ROOT / "python", ROOT / "examples", ROOT / "tests" / "python"):
    sys.path.insert(0, str(path))

if os.environ.get("NINETOOTHED_TEST_MAX_NUM_CONFIGS"):
    from ninetoothed import _core

    _core.set_default_max_num_configs_for_testing(int(os.environ["NINETOOTHED_TEST_MAX_NUM_CONFIGS"]))
