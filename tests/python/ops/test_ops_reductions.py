"""Reductions of the corpus against torch: sum, mean, amax, amin, logsumexp, softmax, log_softmax, var, std.

Each reduces along a chosen dim (first, middle, last, several) of 1-D to 4-D inputs, some of them
transposed views. Outputs are poisoned first; references come from float32 copies of the inputs.
"""

import math
import os
import pathlib
import subprocess
import sys
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


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64, torch.bool), ids=dtype_id)
@pytest.mark.parametrize("shape, dim", (((1023,), 0), ((5, 257, 3), 1), ((5, 7, 3), (0, 2))))
def test_sum_of_integers_is_int64(shape, dim, dtype):
    if dtype == torch.bool:
        input = torch.randn(shape) > 0
    else:
        input = torch.randint(-(2**20), 2**20, shape, dtype=dtype)
    out = poisoned(reduced_shape(shape, dim, False), torch.int64)

    sum_ops.sum(input, dim, out=out)

    assert torch.equal(out, input.sum(dim))


@pytest.mark.parametrize("shape, dim", (((1023,), 0), ((7, 257), 1)))
def test_sum_of_float16_into_float32(shape, dim):
    input = randn(shape, torch.float16) * 10
    out = poisoned(reduced_shape(shape, dim, False), torch.float32)

    sum_ops.sum(input, dim, dtype=torch.float32, out=out)

    assert_matches(out, input.float().sum(dim), **sum_tolerance(torch.float32, shape, dim))


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
@pytest.mark.parametrize("keepdim", (False, True))
@pytest.mark.parametrize("shape, dim, transposed", (((1,), 0, False), ((1023,), 0, False), ((5, 257, 3), 1, False), ((9, 33), 1, True)))
def test_max_along_a_dim(shape, dim, transposed, keepdim, dtype):
    input = randn(shape, dtype, transposed) - 10
    values = poisoned(reduced_shape(shape, dim, keepdim), dtype)
    indices = poisoned(reduced_shape(shape, dim, keepdim), torch.int64)

    result = amax.max_dim(input, dim, keepdim, out=(values, indices))

    assert result[0] is values and result[1] is indices
    expected_values, expected_indices = torch.max(input.float(), dim, keepdim)
    assert torch.equal(values, expected_values.to(dtype))
    # float16 data may hold equal values: any index of a maximum is right, torch.max's among them.
    assert torch.equal(input.float().gather(dim, indices if keepdim else indices.unsqueeze(dim)).to(dtype),
                       expected_values.to(dtype) if keepdim else expected_values.unsqueeze(dim).to(dtype))
    assert ((indices >= 0) & (indices < shape[dim])).all()
    if dtype == torch.float32:
        assert torch.equal(indices, expected_indices)


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
def test_softmax_into_a_transposed_out(dtype):
    input = randn((7, 257), dtype)
    out = poisoned((257, 7), dtype).t()

    softmax.softmax(input, 1, out=out)

    assert_matches(out, torch.softmax(input.float(), 1))


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


SOURCE_DIGEST = """
import hashlib, torch
from corpus import amax, caching
caching.set_default_max_num_configs(1)
amax.max_dim(torch.randn(3, 40), 1)
kernel = caching.cached_make(amax.premake, 2, 1, "max")
print(hashlib.sha256(kernel.source.encode()).hexdigest())
"""


def test_a_kernel_is_the_same_program_in_every_process(tmp_path):
    # Operator libraries rely on the disk cache: a new process must generate the same source
    # (here: max's two loop-carried blocks), whatever its string-hash seed.
    ops_dir = pathlib.Path(__file__).resolve().parent
    python_dir = ops_dir.parents[2] / "python"
    digests = set()

    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, NINETOOTHED_CACHE_DIR=str(tmp_path))
        env["PYTHONPATH"] = os.pathsep.join((str(python_dir), str(ops_dir)))
        result = subprocess.run(
            [sys.executable, "-c", SOURCE_DIGEST], env=env, capture_output=True, text=True, check=True
        )
        digests.add(result.stdout.split()[-1])

    assert len(digests) == 1
