"""32-bit index arithmetic (driver/index_width.h): a launch whose tensors, the memory they span and
their arrangements lie within 2^30 elements builds with -DNT_INDEX32, its sizes, strides and
offsets passed as int; any other launch, or one whose NINETOOTHED_OPENCL_OPTIONS hold
-DNT_NO_INDEX32, keeps long. Every element is checked either way. OpenCL's launches: a CUDA launch
passes every argument in 8 bytes and reads NINETOOTHED_NVRTC_OPTIONS (test_cuda_source.py)."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from test_kernels_convolution import BLOCK_SIZE_K, BLOCK_SIZE_M, BLOCK_SIZE_N, _conv2d_kernel

pytestmark = pytest.mark.host_tensors

HERE = pathlib.Path(__file__).resolve().parent

BLOCK = Symbol("BLOCK", constexpr=True)
SCALE = Symbol("SCALE", constexpr=True)  # in an application only


def _add_arrangement(x, y, z):
    return x.tile((1, BLOCK)), y.tile((1, BLOCK)), z.tile((1, BLOCK))


def _add_application(x, y, z):
    z = x + y  # noqa: F841


ADD = ninetoothed.make(_add_arrangement, _add_application, (Tensor(2), Tensor(2), Tensor(2)))


def _options(kernel):
    return kernel._binder.last.last_options


def _conv2d_in(dtype):
    """A padded conv2d (the implicit GEMM's gathers: offsets and masks from tables of divided indices)
    checked against float64; returns the launch's build options."""
    n, c, h, w, k = 2, 5, 13, 11, 7
    input = torch.randn(n, c, h, w).to(dtype)
    filter = torch.randn(k, c, 3, 3).to(dtype)
    expected = F.conv2d(input.double(), filter.double(), padding=(1, 2))
    output = torch.full(expected.shape, float("nan"), dtype=dtype)
    kernel = _conv2d_kernel(True)
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    kernel(input, filter, output, padding_h=1, padding_w=2)
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance * (c * 9) ** 0.5)
    return _options(kernel)


def _asked_for_long():
    return re.search(r"-D\s*NT_NO_INDEX32\b", os.environ.get("NINETOOTHED_OPENCL_OPTIONS", "")) is not None


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_conv2d_indexes_in_int(dtype):
    assert ("-DNT_INDEX32" in _conv2d_in(dtype)) != _asked_for_long()


def test_conv2d_indexes_in_long_where_the_options_ask():
    # NINETOOTHED_OPENCL_OPTIONS is read once a process: a process of its own.
    code = "import torch, test_index_width as t; print('-DNT_INDEX32' in t._conv2d_in(torch.float32))"
    given = os.environ.get("NINETOOTHED_OPENCL_OPTIONS", "")  # the suite's own, kept
    env = dict(os.environ, NINETOOTHED_OPENCL_OPTIONS=f"{given} -D NT_NO_INDEX32",
               PYTHONPATH=os.pathsep.join([str(HERE.parent.parent / "python"), str(HERE)]))
    completed = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize("flipped", (False, True))
def test_rows_two_to_the_30_elements_apart_keep_long(flipped):
    # Ten elements whose rows lie 2^31 + 37 bytes apart in one allocation (untouched between them):
    # offsets that an int would wrap.
    # Flipped: the rows' stride negative (numpy's view; torch's flip copies).
    stride = 2**31 + 37
    if stride + 5 > ninetoothed.current_device()["max_allocation"]:
        pytest.skip("the device allocates less than 2 GiB at once")
    storage = np.empty(stride + 5, dtype=np.int8)
    x = np.lib.stride_tricks.as_strided(storage[stride:] if flipped else storage, (2, 5),
                                        (-stride if flipped else stride, 1))
    x[...] = np.random.randint(-60, 60, (2, 5))
    x = torch.from_numpy(x) if not flipped else x
    y = torch.randint(-60, 60, (2, 5), dtype=torch.int8)
    z = torch.full((2, 5), 99, dtype=torch.int8)
    ADD(x, y, z, BLOCK=4)
    expected = torch.as_tensor(x.copy() if flipped else x) + y
    assert torch.equal(z, expected)
    assert "-DNT_INDEX32" not in _options(ADD)
    # The same values, packed: int.
    z.fill_(99)
    ADD(torch.as_tensor(x.copy() if flipped else x).contiguous(), y, z, BLOCK=4)
    assert ("-DNT_INDEX32" in _options(ADD)) != _asked_for_long()
    assert torch.equal(z, expected)


def _wide_values_arrangement(x, y):
    return x.tile((BLOCK,)), y.tile((BLOCK,))


def _wide_values_application(x, y):
    # int64 values over sizes and strides, each 64-bit however indices are computed: a size times
    # 1000 (past 2^31 here), the greater of a program's id and the number of programs, the smaller of
    # a stride and 1 (OpenCL's max and min of a long and an int do not compile), and a constexpr
    # symbol the arrangement does not use (its value still given to the build).
    y = x + x.source.shape[0] * 1000 + ntl.maximum(ntl.program_id(0), ntl.num_programs(0)) * 10  # noqa: F841
    y = y + ntl.minimum(x.source.stride(0), 1) + SCALE * 3  # noqa: F841


def test_int64_values_over_sizes_stay_64_bit():
    kernel = ninetoothed.make(_wide_values_arrangement, _wide_values_application, (Tensor(1), Tensor(1)))
    size = 3_000_001  # 3 * 10^9 after * 1000
    x = torch.randint(-5, 5, (size,), dtype=torch.int64)
    y = torch.full((size,), -1, dtype=torch.int64)
    kernel(x, y, BLOCK=1 << 16, SCALE=7)
    assert ("-DNT_INDEX32" in _options(kernel)) != _asked_for_long()
    programs = -(-size // (1 << 16))
    assert torch.equal(y, x + size * 1000 + programs * 10 + 1 + 21)
