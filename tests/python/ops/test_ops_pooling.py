"""Pooling operators of the corpus against torch.nn.functional, element by element.

max_pool and avg_pool over 1-D, 2-D and 3-D inputs (batched and unbatched), with ceil_mode on
and off, zero and non-zero padding, strides other than the kernel size, dilation (max_pool)
and count_include_pad (avg_pool); lp_pool (1-D and 2-D, norm_type 1, 2, 3); adaptive avg and
max pooling (1-D and 2-D), shrinking, keeping and growing sizes. References are computed in
float32 and rounded to the output's dtype.

Kernel sizes, strides, padding and dilation are constexpr, so every configuration compiles
kernels: each list below names the configurations worth one, and float16 runs on a few of
them per dimensionality.
"""

import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import pooling, pooling_adaptive
from ops_testing import assert_matches, poisoned

FLOAT32, FLOAT16 = torch.float32, torch.float16


@pytest.fixture(autouse=True)
def seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def check(function, reference, input, *args, exact=False, **keywords):
    """Run `function` into a poisoned `out` and compare every element with `reference`."""
    expected = reference(input.float(), *args, **keywords)
    out = poisoned(expected.shape, input.dtype)

    result = function(input, *args, **keywords, out=out)

    assert result is out
    if exact:
        assert_matches(out, expected, rtol=0, atol=0)
    else:
        assert_matches(out, expected)


def params(cases):
    return [pytest.param(*case, id="-".join(str(value).replace(" ", "") for value in case)) for case in cases]


MAX_POOLS = {
    1: (pooling.max_pool1d, F.max_pool1d),
    2: (pooling.max_pool2d, F.max_pool2d),
    3: (pooling.max_pool3d, F.max_pool3d),
}

# (dims, shape, kernel_size, stride, padding, dilation, ceil_mode, dtype); shapes are
# (N, C, *spatial) or (C, *spatial).
MAX_POOL_CASES = (
    (1, (2, 3, 17), 3, 2, 1, 1, False, FLOAT32),
    (1, (2, 3, 17), 3, 2, 1, 1, True, FLOAT32),
    (1, (4, 17), 4, 3, 2, 2, True, FLOAT16),
    # ceil_mode: the last window would start in the right padding; torch drops it.
    (1, (1, 2, 5), 2, 2, 1, 1, True, FLOAT32),
    (2, (2, 3, 9, 7), 3, 2, 1, 1, True, FLOAT32),
    (2, (2, 3, 9, 7), 3, 2, 1, 1, False, FLOAT16),
    (2, (1, 2, 11, 13), (2, 3), (3, 1), (1, 0), (2, 1), False, FLOAT32),
    (2, (1, 2, 11, 13), (2, 3), (3, 1), (1, 0), (2, 1), True, FLOAT32),
    (2, (3, 5, 5), 2, 2, 1, 1, True, FLOAT32),
    (2, (2, 4, 6, 6), 2, None, 0, 1, False, FLOAT32),
    (3, (2, 2, 5, 6, 7), 2, (2, 1, 3), 1, 1, True, FLOAT32),
    (3, (2, 2, 5, 6, 7), 2, (2, 1, 3), 1, 1, True, FLOAT16),
    (3, (3, 7, 5, 9), (3, 2, 2), (2, 2, 1), (1, 0, 1), (1, 2, 1), False, FLOAT32),
)


@pytest.mark.parametrize(
    "num_spatial_dims, shape, kernel_size, stride, padding, dilation, ceil_mode, dtype", params(MAX_POOL_CASES)
)
def test_max_pool(num_spatial_dims, shape, kernel_size, stride, padding, dilation, ceil_mode, dtype):
    function, reference = MAX_POOLS[num_spatial_dims]
    input = torch.randn(shape).to(dtype)

    # The maximum is one of the inputs: exactly torch's.
    check(function, reference, input, kernel_size, stride, padding, dilation, ceil_mode, exact=True)


AVG_POOLS = {
    1: (pooling.avg_pool1d, F.avg_pool1d),
    2: (pooling.avg_pool2d, F.avg_pool2d),
    3: (pooling.avg_pool3d, F.avg_pool3d),
}

# (dims, shape, kernel_size, stride, padding, ceil_mode, count_include_pad, dtype)
AVG_POOL_CASES = (
    (1, (2, 3, 17), 3, 2, 1, False, True, FLOAT32),
    (1, (2, 3, 17), 3, 2, 1, True, False, FLOAT32),
    (1, (2, 3, 17), 3, 2, 1, True, False, FLOAT16),
    # ceil_mode: a dropped window, and a last window reaching past the padding.
    (1, (3, 5), 2, 2, 1, True, True, FLOAT32),
    (1, (3, 6), 3, 2, 1, True, True, FLOAT32),
    (1, (3, 6), 3, 2, 1, True, False, FLOAT32),
    (2, (2, 3, 9, 7), 3, 2, 1, False, False, FLOAT32),
    (2, (2, 3, 9, 7), 3, 2, 1, True, True, FLOAT32),
    (2, (2, 3, 9, 7), 3, 2, 1, True, True, FLOAT16),
    (2, (1, 2, 11, 13), (2, 3), (3, 1), (1, 0), False, True, FLOAT32),
    (2, (1, 2, 11, 13), (2, 3), (3, 1), (1, 0), True, False, FLOAT32),
    (2, (2, 4, 6, 6), 2, None, 0, False, True, FLOAT32),
    (3, (2, 2, 5, 6, 7), 2, (2, 1, 3), 1, True, False, FLOAT32),
    (3, (2, 2, 5, 6, 7), 2, (2, 1, 3), 1, False, True, FLOAT32),
    (3, (3, 7, 5, 9), (3, 2, 2), (2, 2, 1), (1, 0, 1), True, True, FLOAT32),
    (3, (3, 7, 5, 9), (3, 2, 2), (2, 2, 1), (1, 0, 1), False, False, FLOAT16),
)


@pytest.mark.parametrize(
    "num_spatial_dims, shape, kernel_size, stride, padding, ceil_mode, count_include_pad, dtype",
    params(AVG_POOL_CASES),
)
def test_avg_pool(num_spatial_dims, shape, kernel_size, stride, padding, ceil_mode, count_include_pad, dtype):
    function, reference = AVG_POOLS[num_spatial_dims]
    input = torch.randn(shape).to(dtype)

    check(function, reference, input, kernel_size, stride, padding, ceil_mode, count_include_pad)


@pytest.mark.parametrize("dtype", (FLOAT32, FLOAT16))
def test_pools_of_a_transposed_input(dtype):
    # Kernels take any strides: here H and W of a contiguous (N, C, W, H) swapped.
    input = torch.randn(2, 3, 13, 9).transpose(-1, -2).to(dtype)

    check(pooling.max_pool2d, F.max_pool2d, input, 3, 2, 1, 2, True, exact=True)
    check(pooling.avg_pool2d, F.avg_pool2d, input, 3, 2, 1, True, False)


LP_POOLS = {1: (pooling.lp_pool1d, F.lp_pool1d), 2: (pooling.lp_pool2d, F.lp_pool2d)}

# (dims, shape, kernel_size, stride, ceil_mode, dtype); norm_type is a run-time value.
LP_POOL_CASES = (
    (1, (2, 3, 17), 3, 2, False, FLOAT32),
    (1, (2, 3, 17), 3, 2, True, FLOAT32),
    (1, (4, 10), 4, None, True, FLOAT16),
    (2, (2, 3, 9, 7), (3, 2), (2, 2), False, FLOAT32),
    (2, (2, 3, 9, 7), (3, 2), (2, 2), True, FLOAT32),
    (2, (3, 8, 11), 2, (1, 3), True, FLOAT16),
)


@pytest.mark.parametrize("norm_type", (1, 2, 3))
@pytest.mark.parametrize("num_spatial_dims, shape, kernel_size, stride, ceil_mode, dtype", params(LP_POOL_CASES))
def test_lp_pool(num_spatial_dims, shape, kernel_size, stride, ceil_mode, dtype, norm_type):
    function, reference = LP_POOLS[num_spatial_dims]
    input = torch.randn(shape)

    if norm_type == 3:
        # torch takes the cube root of a negative sum as NaN (pow of a negative base); keep
        # the sums positive so that every element is a number to compare.
        input = input.abs()

    check(function, reference, input.to(dtype), norm_type, kernel_size, stride, ceil_mode)


ADAPTIVE_POOLS = {
    ("avg", 1): (pooling_adaptive.adaptive_avg_pool1d, F.adaptive_avg_pool1d),
    ("avg", 2): (pooling_adaptive.adaptive_avg_pool2d, F.adaptive_avg_pool2d),
    ("max", 1): (pooling_adaptive.adaptive_max_pool1d, F.adaptive_max_pool1d),
    ("max", 2): (pooling_adaptive.adaptive_max_pool2d, F.adaptive_max_pool2d),
}

# (dims, shape, output_size); None keeps the input's size along that dim. Sizes are not
# constexpr here, so every case runs in both dtypes.
ADAPTIVE_POOL_CASES = (
    (1, (2, 3, 17), 5),
    (1, (2, 3, 16), 4),
    (1, (4, 10), 17),
    (2, (2, 3, 13, 10), (5, 3)),
    (2, (3, 9, 9), (4, None)),
    (2, (1, 2, 7, 8), (7, 8)),
    (2, (2, 1, 5, 17), 1),
)


@pytest.mark.parametrize("dtype", (FLOAT32, FLOAT16))
@pytest.mark.parametrize("mode", ("avg", "max"))
@pytest.mark.parametrize("num_spatial_dims, shape, output_size", params(ADAPTIVE_POOL_CASES))
def test_adaptive_pool(num_spatial_dims, shape, output_size, mode, dtype):
    function, reference = ADAPTIVE_POOLS[(mode, num_spatial_dims)]
    input = torch.randn(shape).to(dtype)

    check(function, reference, input, output_size, exact=mode == "max")
