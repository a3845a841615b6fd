"""32-bit index arithmetic (driver/index_width.h): a launch whose tensors, the memory they span and
their arrangements lie within 2^30 elements builds with -DNT_INDEX32, its sizes, strides and
offsets passed as int; any other launch, or one whose NINETOOTHED_OPENCL_OPTIONS hold
-DNT_NO_INDEX32, keeps long. Every element is checked either way. OpenCL's launches: a CUDA launch
passes every argument in 8 bytes and reads NINETOOTHED_NVRTC_OPTIONS (test_cuda_source.py)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ninetoothed
from ninetoothed import Symbol, Tensor
from test_kernels_convolution import BLOCK_SIZE_K, BLOCK_SIZE_M, BLOCK_SIZE_N, _conv2d_kernel

pytestmark = pytest.mark.host_tensors

BLOCK = Symbol("BLOCK", constexpr=True)


def _add_arrangement(x, y, z):
    return x.tile((1, BLOCK)), y.tile((1, BLOCK)), z.tile((1, BLOCK))


def _add_application(x, y, z):
    z = x + y  # noqa: F841


ADD = ninetoothed.make(_add_arrangement, _add_application, (Tensor(2), Tensor(2), Tensor(2)))


def _options(kernel):
    return kernel._binder.last.last_options


@pytest.mark.parametrize("index64", (False, True))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_conv2d_indexes_in_int_unless_asked_for_long(monkeypatch, dtype, index64):
    # The implicit GEMM's gathers: offsets and padding masks from tables of divided indices.
    if index64:
        monkeypatch.setenv("NINETOOTHED_OPENCL_OPTIONS", "-DNT_NO_INDEX32")
    n, c, h, w, k = 2, 5, 13, 11, 7
    input = torch.randn(n, c, h, w).to(dtype)
    filter = torch.randn(k, c, 3, 3).to(dtype)
    expected = F.conv2d(input.double(), filter.double(), padding=(1, 2))
    output = torch.full(expected.shape, float("nan"), dtype=dtype)
    kernel = _conv2d_kernel(True)
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    kernel(input, filter, output, padding_h=1, padding_w=2)
    assert ("-DNT_INDEX32" in _options(kernel)) != index64
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance * (c * 9) ** 0.5)


@pytest.mark.parametrize("flipped", (False, True))
def test_rows_two_to_the_30_elements_apart_keep_long(flipped):
    # Ten elements whose rows lie 2^31 + 37 bytes apart in one allocation (untouched between them):
    # offsets that an int would wrap.
    # Flipped: the rows' stride negative (numpy's view; torch's flip copies).
    stride = 2**31 + 37
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
    assert "-DNT_INDEX32" in _options(ADD)
    assert torch.equal(z, expected)
