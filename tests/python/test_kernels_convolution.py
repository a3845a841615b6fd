"""Convolution as an implicit GEMM and pooling, written in the arrange-and-apply style."""

import pytest
import torch
import torch.nn.functional as F

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE_M = ninetoothed.block_size()
BLOCK_SIZE_N = ninetoothed.block_size()
BLOCK_SIZE_K = ninetoothed.block_size()


def matmul_arrangement(input, other, output):
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))
    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K)).tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N)).tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged


def matmul_application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator  # noqa: F841


PADDING_H = Symbol("padding_h", constexpr=True)
PADDING_W = Symbol("padding_w", constexpr=True)


def conv2d_arrangement(input, filter, output, padded=False):
    if padded:
        input = input.pad(((0, 0), (0, 0), (PADDING_H, PADDING_H), (PADDING_W, PADDING_W)))
    # One window of the filter's shape per output position, as the rows of a GEMM.
    windows = input.tile((1, *filter.shape[1:]), strides=(-1, -1, 1, 1)).squeeze(1)
    windows.dtype = windows.dtype.squeeze(0)
    rows = windows.ravel().flatten(end_dim=3).flatten(start_dim=1)
    columns = filter.flatten(start_dim=1).permute((1, 0))
    output_rows = output.permute((0, 2, 3, 1)).flatten(end_dim=3)
    return matmul_arrangement(rows, columns, output_rows)


def _conv2d_kernel(padded):
    return ninetoothed.make(
        lambda input, filter, output: conv2d_arrangement(input, filter, output, padded),
        matmul_application,
        (Tensor(4), Tensor(4, shape_options={"constexpr": True}), Tensor(4)),
    )


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("padding", (None, (1, 2)))
@pytest.mark.parametrize("n, c, h, w, k, r, s", ((2, 5, 11, 9, 7, 3, 2), (1, 3, 8, 8, 16, 3, 3)))
def test_conv2d(dtype, padding, n, c, h, w, k, r, s):
    input = torch.randn(n, c, h, w).to(dtype)
    filter = torch.randn(k, c, r, s).to(dtype)
    expected = F.conv2d(input.float(), filter.float(), padding=padding or 0)
    output = torch.full(expected.shape, float("nan"), dtype=dtype)
    if padding is None:
        _conv2d_kernel(False)(input, filter, output)
    else:
        _conv2d_kernel(True)(input, filter, output, padding_h=padding[0], padding_w=padding[1])
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.float(), expected, rtol=tolerance, atol=tolerance * (c * r * s) ** 0.5)


@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16))
@pytest.mark.parametrize("channels_last", (False, True))
@pytest.mark.parametrize("blocks", ((64, 32, 32), (32, 64, 64), (64, 32, 48), (32, 64, 40)))
def test_conv2d_16_bit(dtype, channels_last, blocks):
    """16-bit operands gathered into a GPU's shared memory (CUDA C) go in runs of 8 columns of a
    block's row, one 16-byte store each (emitter_mma_staging.cpp). Runs cross filter rows and
    channels (r, s = 3, 3) and the blocks' ends (C R S = 99 filter steps); the blocks' rows cross
    output rows (q = 13) and end partly past the 182 output positions; a channels-last input has no
    unit stride along a run's rows. Filter steps of 48 and 40 a block make rows of 6 and 5 runs, which
    a work-group's work-items do not divide: a work-item's runs there change column."""
    n, c, h, w, k, r, s = 2, 11, 7, 15, 21, 3, 3
    shape = (n, h, w, c) if channels_last else (n, c, h, w)
    input = torch.randn(shape)
    input = (input.permute(0, 3, 1, 2) if channels_last else input).to(dtype)
    filter = torch.randn(k, c, r, s).to(dtype)
    expected = F.conv2d(input.double(), filter.double(), padding=(1, 0))
    output = torch.full(expected.shape, float("nan"), dtype=dtype)
    kernel = _conv2d_kernel(True)
    kernel.pin(dict(zip((BLOCK_SIZE_M.name, BLOCK_SIZE_N.name, BLOCK_SIZE_K.name), blocks)))
    kernel(input, filter, output, padding_h=1, padding_w=0)
    tolerance = 2e-2 if dtype == torch.float16 else 8e-2
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance * (c * r * s) ** 0.5)


WINDOW_H = Symbol("window_h", constexpr=True)
WINDOW_W = Symbol("window_w", constexpr=True)


def pool_arrangement(input, output, ceil_mode=False):
    windows = input.tile((1, 1, WINDOW_H, WINDOW_W), floor_mode=not ceil_mode)
    windows.dtype = windows.dtype.squeeze((0, 1))
    return windows, output.tile((1, 1, 1, 1))


def max_pool_application(input, output):
    output = ntl.max(input)  # noqa: F841


def avg_pool_application(input, output):
    output = ntl.sum(input) / (input.shape[0] * input.shape[1])  # noqa: F841


@pytest.mark.parametrize("ceil_mode", (False, True))
@pytest.mark.parametrize("shape, window", (((2, 3, 9, 7), (2, 3)), ((1, 1, 4, 4), (2, 2)), ((1, 2, 5, 1), (3, 1))))
def test_max_pool2d(ceil_mode, shape, window):
    kernel = ninetoothed.make(
        lambda input, output: pool_arrangement(input, output, ceil_mode),
        max_pool_application,
        (Tensor(4, other=float("-inf")), Tensor(4)),
    )
    input = torch.randn(shape)
    expected = F.max_pool2d(input, window, ceil_mode=ceil_mode)
    output = torch.full(expected.shape, float("nan"))
    kernel(input, output, window_h=window[0], window_w=window[1])
    assert torch.equal(output, expected)


@pytest.mark.parametrize("shape, window", (((2, 3, 9, 7), (2, 3)), ((1, 2, 6, 6), (3, 3))))
def test_avg_pool2d(shape, window):
    kernel = ninetoothed.make(
        pool_arrangement, avg_pool_application, (Tensor(4), Tensor(4))
    )
    input = torch.randn(shape)
    expected = F.avg_pool2d(input.double(), window)
    output = torch.full(expected.shape, float("nan"))
    kernel(input, output, window_h=window[0], window_w=window[1])
    torch.testing.assert_close(output.double(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("filter_layout", ("contiguous", "channels last", "sliced"))
def test_conv2d_filter_packed_by_transposes(dtype, filter_layout):
    """The filter's blocks unravel a flattened (c, r, s) with `//` and `%`: where a run-time
    check finds a block's rows consecutive (the filter contiguous), they are packed by 16 x 16
    register transposes, element by element otherwise and at the edges. Whole and partial
    blocks of 32 filters and 32 filter steps (K = 72, 40 filters)."""
    n, c, h, w, k, r, s = 2, 8, 9, 7, 40, 3, 3
    input = torch.randn(n, c, h, w).to(dtype)
    if filter_layout == "contiguous":
        filter = torch.randn(k, c, r, s)
    elif filter_layout == "channels last":
        filter = torch.randn(k, r, s, c).permute(0, 3, 1, 2)
    else:
        filter = torch.randn(k, c, r, s + 1)[..., 1:]
    filter = filter.to(dtype)
    expected = F.conv2d(input.double(), filter.double(), padding=1)
    output = torch.full(expected.shape, float("nan"), dtype=dtype)
    kernel = _conv2d_kernel(True)
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    kernel(input, filter, output, padding_h=1, padding_w=1)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance * (c * r * s) ** 0.5)
    assert "nt_transpose16(" in kernel.source and "nt_kunit" in kernel.source


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("layout", ("contiguous", "channels last", "channels last output"))
@pytest.mark.parametrize("block_m", (64, 40))
def test_conv2d_in_runs(dtype, layout, block_m):
    """The input's blocks (rows: output positions (n, p, q) unravelled by `//` and `%`) are
    packed 16 output positions at a time, one masked vector load per filter step, and the
    output's stored so, one vector store per filter, where a run-time check finds the 16
    positions consecutive in memory (along one output row of a contiguous tensor); element by
    element where they cross a row or the tensor is channels last, in chunks shorter than 16
    (block_m 40) and in blocks that leave the output. Output rows of 39 with padding (1, 2):
    runs, row crossings and padded lanes all occur; K = 72 has whole blocks of 32 filter steps
    and a partial one."""
    n, c, h, w, k, r, s = 2, 8, 5, 37, 20, 3, 3
    if layout == "channels last":
        input = torch.randn(n, h, w, c).permute(0, 3, 1, 2)
    else:
        input = torch.randn(n, c, h, w)
    input = input.to(dtype)
    filter = torch.randn(k, c, r, s).to(dtype)
    expected = F.conv2d(input.double(), filter.double(), padding=(1, 2))
    if layout == "contiguous":
        output = torch.full(expected.shape, float("nan"), dtype=dtype)
    else:
        output = torch.full(expected.permute(0, 2, 3, 1).shape, float("nan"), dtype=dtype).permute(0, 3, 1, 2)
    kernel = _conv2d_kernel(True)
    kernel.pin({BLOCK_SIZE_M.name: block_m, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    kernel(input, filter, output, padding_h=1, padding_w=2)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance * (c * r * s) ** 0.5)
    # float32 takes the runs (input: parameter 0, output: 2); float16 the element-wise nests.
    for pointer in ("nt_p0[nt_base", "nt_p2[nt_base"):
        assert (pointer in kernel.source) == (dtype == torch.float32)
