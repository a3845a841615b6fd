"""Reductions of the corpus against torch: sum, mean, amax, amin, logsumexp, softmax, log_softmax, var, std.

Each reduces along a chosen dim (first, middle, last, several) of 1-D to 4-D inputs, some of them
transposed views. Outputs are poisoned first; references come from float32 copies of the inputs.
"""

import math
import zlib

import pytest
import torch

from corpus import amax, caching, logsumexp, softmax, var
from corpus import sum as sum_ops
from ops_testing import DTYPES, assert_matches, poisoned

caching.set_default_max_num_configs(1)


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)


def randn(shape, dtype, transposed=False):
    """Normal data of `shape`; `transposed` gives a view with its last two dims swapped."""
    if transposed:
        return torch.randn(*shape[:-2], shape[-1], shape[-2]).to(dtype).transpose(-1, -2)

    return torch.randn(shape).to(dtype)


def reduced_shape(shape, dim, keepdim):
    dims = {d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)}

    if keepdim:
        return tuple(1 if d in dims else size for d, size in enumerate(shape))

    return tuple(size for d, size in enumerate(shape) if d not in dims)


def sum_tolerance(dtype, shape, dim):
    """Sums of n float32 terms in another order differ by about sqrt(n) roundings of the terms."""
    if dtype != torch.float32:
        return {}

    dims = (dim,) if isinstance(dim, int) else dim
    n = math.prod(shape[d] for d in dims)

    return {"rtol": 1e-5, "atol": 2e-6 * math.sqrt(n)}


REDUCTION_CASES = (
    # shape, dim, transposed
    ((1,), 0, False),
    ((1023,), 0, False),
    ((5, 257, 3), 1, False),
    ((7, 1, 33), 1, False),
    ((5, 257, 3), (0, 2), False),
    ((33, 7), -1, True),
    ((2, 3, 4, 9), (1, 3), False),
)


@dtypes
@pytest.mark.parametrize("keepdim", (False, True))
@pytest.mark.parametrize("shape, dim, transposed", REDUCTION_CASES)
def test_sum(shape, dim, transposed, keepdim, dtype):
    input = randn(shape, dtype, transposed)
    out = poisoned(reduced_shape(shape, dim, keepdim), dtype)

    assert sum_ops.sum(input, dim, keepdim, out=out) is out

    assert_matches(out, input.float().sum(dim, keepdim=keepdim), **sum_tolerance(dtype, shape, dim))


@dtypes
@pytest.mark.parametrize("shape, dim, transposed", (((7, 33), 1, False), ((3, 257), 1, False), ((257, 5, 2), 0, False)))
def test_mean(shape, dim, transposed, dtype):
    input = randn(shape, dtype, transposed)
    out = poisoned(reduced_shape(shape, dim, False), dtype)

    sum_ops.mean(input, dim, out=out)

    assert_matches(out, input.float().mean(dim))


@dtypes
@pytest.mark.parametrize(
    "op, shape, dim",
    (
        ("amax", (7, 1023), 1),
        ("amax", (1, 7), 1),
        ("amax", (4, 5, 6), (0, 1)),
        ("amin", (257, 7), 0),
        ("amin", (33, 3), 0),
    ),
)
def test_amax_and_amin(op, shape, dim, dtype):
    input = randn(shape, dtype) - 10  # all negative: a padding of 0 would win the maximum
    if op == "amin":
        input = -input
    out = poisoned(reduced_shape(shape, dim, True), dtype)

    getattr(amax, op)(input, dim, keepdim=True, out=out)

    assert torch.equal(out, getattr(torch, op)(input.float(), dim, keepdim=True).to(dtype))


@dtypes
@pytest.mark.parametrize("shape, dim", (((7, 257), 1), ((1, 7), 1), ((33, 5, 3), 0), ((1023, 2, 2), 0)))
def test_logsumexp(shape, dim, dtype):
    input = randn(shape, dtype) * 4
    out = poisoned(reduced_shape(shape, dim, False), dtype)

    logsumexp.logsumexp(input, dim, out=out)

    assert_matches(out, torch.logsumexp(input.float(), dim))


SOFTMAX_CASES = (
    # shape, dim, transposed
    ((1,), 0, False),
    ((1023,), 0, False),
    ((5, 257, 3), 1, False),
    ((5, 257, 3), 0, False),
    ((33, 7), 1, True),
    ((2, 3, 4, 33), -1, False),
)


@dtypes
@pytest.mark.parametrize("shape, dim, transposed", SOFTMAX_CASES)
def test_softmax(shape, dim, transposed, dtype):
    input = randn(shape, dtype, transposed) * 5
    out = poisoned(shape, dtype)

    softmax.softmax(input, dim, out=out)

    assert_matches(out, torch.softmax(input.float(), dim))


@dtypes
@pytest.mark.parametrize("shape, dim, transposed", SOFTMAX_CASES[1:3] + SOFTMAX_CASES[4:5])
def test_log_softmax(shape, dim, transposed, dtype):
    input = randn(shape, dtype, transposed) * 5
    out = poisoned(shape, dtype)

    softmax.log_softmax(input, dim, out=out)

    assert_matches(out, torch.log_softmax(input.float(), dim))


@dtypes
@pytest.mark.parametrize("correction", (1, 0))
@pytest.mark.parametrize("op", ("var", "std"))
@pytest.mark.parametrize("shape, dim", (((7, 257), 1), ((3, 33), 1), ((257, 5), 0), ((2, 5), 0)))
def test_var_and_std(shape, dim, op, correction, dtype):
    input = randn(shape, dtype) * 3 + 1
    out = poisoned(reduced_shape(shape, dim, False), dtype)

    getattr(var, op)(input, dim, correction=correction, out=out)

    assert_matches(out, getattr(torch, op)(input.float(), dim, unbiased=bool(correction)))


@dtypes
def test_var_of_one_element_without_correction(dtype):
    input = randn((4, 3), dtype)[:, :1]  # a slice: rows of one element, strides (3, 1)
    out = poisoned((4,), dtype)

    var.var(input, 1, correction=0, out=out)

    assert torch.equal(out, torch.zeros(4, dtype=dtype))
