"""The work-group program layout (lower/program_layout.h): a program on a work-group of work-items.

Element-wise kernels have one body that runs a program on a work-item or a work-group; kernels with
reductions, dots or blocks held in memory have a second body for work-groups (tile layouts, values
shared through local memory). NINETOOTHED_PROGRAM_LAYOUT chooses for every device (GPUs default to
the work-group layout, CPUs to the work-item one). CI runs the kernel tests a second time with the
work-group layout forced; these tests check the choice itself, and layout_scripts/ runs kernels of
every kind in both layouts.
"""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from emulated_layouts import work_group_environment
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


def bodies(source):
    """The work-group and the work-item body of a kernel that has two."""
    work_group = source.split("// A program on a work-group of NT_WORK_ITEMS work-items.\n", 1)[1]
    return tuple(work_group.split("// A program on one work-item.\n", 1))


def test_kernels_that_hold_or_reduce_blocks_have_a_work_group_body():
    x = torch.randn(5, 64)
    softmax_kernel(x, torch.empty_like(x), BLOCK_SIZE=64)
    work_group, work_item = bodies(softmax_kernel.source)
    assert "__local" in work_group and "NT_BARRIER();" in work_group
    assert "NT_LANE" not in work_item and "get_global_id(0)" in work_item


def accumulate_application(x, y):
    y = y + x  # noqa: F841 - reads and writes y


accumulate = ninetoothed.make(scale_shift_arrangement, accumulate_application, (Tensor(2), Tensor(2)))


def test_a_parameter_both_stored_and_loaded_is_stored_before_a_barrier():
    # What one work-item stored another could load: a barrier orders them.
    x, y = torch.randn(37, 300), torch.randn(37, 300)
    expected = y + x
    accumulate(x, y, BLOCK_M=16, BLOCK_N=128)
    assert torch.equal(y, expected)
    work_group, _ = bodies(accumulate.source)
    assert "NT_BARRIER();" in work_group


# Kernels whose work-items share values, for layout_scripts/work_group_launches.py.
BLOCK = Symbol("BLOCK", constexpr=True)


def square_blocks_arrangement(x, y):
    return x.tile((BLOCK, BLOCK)), y.tile((BLOCK, BLOCK))


def transpose_blocks_application(x, y):
    t = x * 2 + 1  # read transposed: shared between work-items
    y = ntl.trans(t) + t * 0  # noqa: F841


transpose_blocks = ninetoothed.make(square_blocks_arrangement, transpose_blocks_application, (Tensor(2), Tensor(2)))


def transpose_blocks_reference(x, block):
    n = x.shape[0]
    padded = -(-n // block) * block
    p = torch.zeros(padded, padded, dtype=torch.float64)
    p[:n, :n] = x.double()
    t = (p * 2 + 1).reshape(padded // block, block, padded // block, block).transpose(1, 3).reshape(padded, padded)
    return t[:n, :n].float()  # elements read from outside x: its padding (0) doubled plus one


def row_statistics_arrangement(x, index, centered):
    return x.tile((BLOCK_M, BLOCK_N)), index.tile((BLOCK_M,)), centered.tile((BLOCK_M, BLOCK_N))


def row_statistics_application(x, index, centered):
    index = ntl.argmax(x, 1)  # noqa: F841 - ties: the first index
    centered = ntl.cumsum(x - ntl.max(x, 1)[:, None], 1)  # noqa: F841 - a block operation on work-item 0


row_statistics = ninetoothed.make(row_statistics_arrangement, row_statistics_application, (Tensor(2), Tensor(1), Tensor(2)))


def run(layout):
    # The script checks results in a layout, not tuning: two candidates (as conftest.py's cap).
    env = work_group_environment() if layout == "work-group" else dict(os.environ)
    env.update(PYTHONUNBUFFERED="1", NINETOOTHED_TEST_MAX_NUM_CONFIGS="2")
    if layout is None:
        env.pop("NINETOOTHED_PROGRAM_LAYOUT", None)
    elif layout != "work-group":
        env["NINETOOTHED_PROGRAM_LAYOUT"] = layout
    return subprocess.run([sys.executable, str(SCRIPTS / "work_group_launches.py")], env=env,
                          capture_output=True, text=True, timeout=1200)


@pytest.mark.parametrize("layout", ("work-group", "work-item", None))
def test_the_layout_variable_chooses_and_results_are_exact(layout):
    # Unset: work-groups on GPUs and accelerators, work-items on CPUs.
    device = ninetoothed._core.current_device()
    group = 1 << (min(128, device["max_work_group_size"]).bit_length() - 1)  # a power of two
    work_items = {"work-group": group, "work-item": 1, None: 1 if device["is_cpu"] else group}[layout]
    result = run(layout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == [str(work_items), "ok"]


def test_an_unknown_layout_is_a_value_error():
    result = run("warp")
    assert result.returncode != 0
    assert "NINETOOTHED_PROGRAM_LAYOUT is 'warp'; use 'work-group' or 'work-item'" in result.stderr


def argmax_and_double_arrangement(x, index, y):
    return x.tile((BLOCK_M, BLOCK_N)), index.tile((BLOCK_M,)), y.tile((BLOCK_M, BLOCK_N))


def argmax_and_double_application(x, index, y):
    index = ntl.argmax(x, 1)  # noqa: F841 - loads x once for this and the next statement
    y = x * 2  # noqa: F841


argmax_and_double = ninetoothed.make(
    argmax_and_double_arrangement, argmax_and_double_application, (Tensor(2), Tensor(1), Tensor(2))
)


def recenter_application(x, y):
    m = ntl.max(x, 1)
    x = x - m[:, None]  # a store to what the reduction loaded
    y = x + m[:, None] * 0  # noqa: F841 - reads what was stored


recenter = ninetoothed.make(scale_shift_arrangement, recenter_application, (Tensor(2), Tensor(2)))


def transpose_in_place_application(x):
    t = ntl.trans(x)
    x = t + t  # noqa: F841 - overwrites what other work-items read


transpose_in_place = ninetoothed.make(lambda x: x.tile((BLOCK, BLOCK)), transpose_in_place_application, (Tensor(2),))


def test_num_warps_sets_the_work_items_of_a_program(tmp_path):
    # Upstream's num_warps: programs on work-groups of num_warps x 32 work-items, rounded down to a
    # power of two (layout_scripts/num_warps.py, with the work-group layout forced; a cache of its
    # own, so that tuning runs).
    env = work_group_environment(NINETOOTHED_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, str(SCRIPTS / "num_warps.py")], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    largest = ninetoothed._core.current_device()["max_work_group_size"]
    expected = [f"{w} {min(n, 1 << (largest.bit_length() - 1))}" for w, n in ((1, 32), (2, 64), (3, 64), (8, 256))]
    # Tuned without num_warps: the two fastest block sizes on 2 and 8 warps too.
    assert result.stdout.split("\n")[:-1] == expected + ["tuned warps None 2 2 8 8", "tuned warps 2", "capped 2 4 8", "ok"]


def test_num_warps_leaves_cpu_programs_on_one_work_item():
    kernel = ninetoothed.make(scale_shift_arrangement, scale_shift_application, (Tensor(2), Tensor(2)), num_warps=8)
    x = torch.randn(37, 300)
    y = torch.full_like(x, float("nan"))
    kernel(x, y, BLOCK_M=16, BLOCK_N=128)
    torch.testing.assert_close(y, scale_shift_reference(x), rtol=3e-7, atol=0)
    device = ninetoothed._core.current_device()
    layout = os.environ.get("NINETOOTHED_PROGRAM_LAYOUT")
    if layout == "work-item" or (device["is_cpu"] and not layout):
        assert kernel._binder.last.last_work_items == 1
    else:  # 8 warps of 32
        assert kernel._binder.last.last_work_items == min(256, 1 << (device["max_work_group_size"].bit_length() - 1))
