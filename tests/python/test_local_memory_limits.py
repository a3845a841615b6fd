"""Work-groups fitted to a device's local memory (driver/work_group.h), on any device: a subprocess
(layout_scripts/local_memory_limits.py) forces the work-group layout and caps local memory at
NVIDIA's OpenCL's 48 KiB and less, where the corpus's attention failed at enqueue on the GPU
(issue 28). Its own file, so that test runs spread it over another process than
test_program_layout.py's."""

import os
import pathlib
import subprocess
import sys

from emulated_layouts import work_group_environment

SCRIPTS = pathlib.Path(__file__).resolve().parent / "layout_scripts"


def test_small_local_memory_takes_fewer_work_items_and_tunes_to_what_runs():
    env = work_group_environment()
    result = subprocess.run([sys.executable, str(SCRIPTS / "local_memory_limits.py")], env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split("\n")[-2:] == ["ok", ""]
