"""The work-group program layout (lower/program_layout.h): a program on a work-group of work-items.

Element-wise kernels can run each program on a work-group (every element computed and stored by
one work-item, nothing shared); kernels with reductions, dots or blocks held in memory run one
program per work-item. NINETOOTHED_PROGRAM_LAYOUT chooses for every device (GPUs default to the
work-group layout, CPUs to the work-item one). CI runs the kernel tests a second time with the
work-group layout forced; these tests check the choice itself.
"""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

SCRIPTS = pathlib.Path(__file__).resolve().parent / "layout_scripts"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

from tutorial_kernels import add_kernel, softmax_kernel  # noqa: E402

BLOCK_M = Symbol("BLOCK_M", constexpr=True)
BLOCK_N = Symbol("BLOCK_N", constexpr=True)


def scale_shift_arrangement(x, y):
    return x.tile((BLOCK_M, BLOCK_N)), y.tile((BLOCK_M, BLOCK_N))


def scale_shift_application(x, y):
    y = ntl.where(x > 0, x * 3 - 1, ntl.exp(x))  # noqa: F841


scale_shift = ninetoothed.make(scale_shift_arrangement, scale_shift_application, (Tensor(2), Tensor(2)))


def scale_shift_reference(x):
    x = x.double()
    return torch.where(x > 0, x * 3 - 1, torch.exp(x)).float()


def test_element_wise_kernels_can_run_a_program_on_a_work_group():
    x = torch.randn(300)
    add_kernel(x, x, torch.empty(300))
    assert "NT_LANE" in add_kernel.source
    x = torch.randn(37, 300)
    scale_shift(x, torch.empty_like(x), BLOCK_M=16, BLOCK_N=128)
    assert "NT_LANE" in scale_shift.source


def test_kernels_that_hold_or_reduce_blocks_run_a_program_on_a_work_item():
    x = torch.randn(5, 64)
    softmax_kernel(x, torch.empty_like(x), BLOCK_SIZE=64)
    assert "NT_LANE" not in softmax_kernel.source
    assert "get_global_id(0)" in softmax_kernel.source


def accumulate_application(x, y):
    y = y + x  # noqa: F841 - reads and writes y


accumulate = ninetoothed.make(scale_shift_arrangement, accumulate_application, (Tensor(2), Tensor(2)))


def test_a_parameter_both_stored_and_loaded_runs_a_program_on_a_work_item():
    # What one work-item stored another could load (no barrier orders them).
    x, y = torch.randn(37, 300), torch.randn(37, 300)
    expected = y + x
    accumulate(x, y, BLOCK_M=16, BLOCK_N=128)
    assert torch.equal(y, expected)
    assert "NT_LANE" not in accumulate.source


def run(layout):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("NINETOOTHED_PROGRAM_LAYOUT", None)
    if layout is not None:
        env["NINETOOTHED_PROGRAM_LAYOUT"] = layout
    return subprocess.run([sys.executable, str(SCRIPTS / "work_group_launches.py")], env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("layout", ("work-group", "work-item", None))
def test_the_layout_variable_chooses_and_results_are_exact(layout):
    # Unset: work-groups on GPUs and accelerators, work-items on CPUs.
    device = ninetoothed._core.current_device()
    group = min(128, device["max_work_group_size"])
    work_items = {"work-group": group, "work-item": 1, None: 1 if device["is_cpu"] else group}[layout]
    result = run(layout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == [str(work_items), "ok"]


def test_an_unknown_layout_is_a_value_error():
    result = run("warp")
    assert result.returncode != 0
    assert "NINETOOTHED_PROGRAM_LAYOUT is 'warp'; use 'work-group' or 'work-item'" in result.stderr
