"""Dots of 16-bit floats in the mma tile layout (lower/program_layout.h): layout_scripts/mma_layout.py
in a subprocess with the work-group layout forced. On NVIDIA GPUs of compute capability 8.0+ the dots
run on tensor cores; elsewhere the script forces their layout, so that every device checks it. Its own
file (the suite's slowest test: minutes of PoCL builds here), so that test runs spread it over another
process than test_program_layout.py's."""

import os
import pathlib
import subprocess
import sys

import ninetoothed
from emulated_layouts import work_group_environment

SCRIPTS = pathlib.Path(__file__).resolve().parent / "layout_scripts"


def test_dots_of_16_bit_floats_in_the_mma_layout():
    env = work_group_environment()
    result = subprocess.run([sys.executable, str(SCRIPTS / "mma_layout.py")], env=env, capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    used = "tensor cores" if ninetoothed._core.tensor_cores() else "mma layout"
    assert result.stdout.split("\n")[-3:] == [used, "ok", ""]
