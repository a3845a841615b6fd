"""Shared setup of the Python tests: import `ninetoothed` from this checkout."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"

if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def pytest_runtest_setup(item):
    """Re-arms faulthandler before every test.

    PoCL compiles kernels with LLVM, which installs its own SIGABRT/SIGSEGV handlers over
    faulthandler's: a crash would then end the run without naming the test or printing a
    traceback. (enable() alone keeps handlers it believes installed, hence disable() first.)
    """
    import faulthandler

    from _pytest.faulthandler import fault_handler_stderr_key

    stream = item.config.stash.get(fault_handler_stderr_key, None)
    if stream is not None:
        faulthandler.disable()
        faulthandler.enable(file=stream, all_threads=True)
