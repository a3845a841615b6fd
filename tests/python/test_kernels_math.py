"""exp, exp2 and log of float32 (codegen/c/math_calls.cpp) within 2 ulp of float64.

The generated helpers replace OpenCL's builtins with range reduction and a
polynomial. Each test runs a kernel over a large random sample of all float32
bit patterns plus dense ranges around the edges (denormal inputs and results,
overflow and underflow thresholds, the reduction's interval ends, log near 1),
and the special values, and checks every result (outputs poisoned first):
within 2 ulp of numpy's float64 value, NaN, infinities and zeros exactly.
benchmarks/exp_accuracy.py runs the same check over every float32.

On CUDA tensors CUDA's own functions replace the polynomials, and exp2 is Triton's (upstream's):
the special function unit's ex2.approx.f32, whose bound is its own (ULP_BOUNDS).
"""

import os
import sys

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from math_kernels import KERNELS, REFERENCES, ulp_errors  # noqa: E402

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, 0.5,
                     np.finfo(np.float32).max, -np.finfo(np.float32).max,
                     np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal,
                     -np.finfo(np.float32).smallest_subnormal, np.float32(np.log(2) / 2),
                     88.72283, 88.72284, -87.33655, -103.27893, -103.97208, -104.0, 89.0,
                     127.99999, 128.0, -126.0, -149.0, -149.5, -150.0, -151.0, 1e30, -1e30],
                    dtype=np.float32)


def around(value, count=1 << 16):
    """`count` consecutive float32 values centred on `value` (bit patterns, same sign)."""
    bits = int(np.float32(value).view(np.uint32))
    start = max(bits - count // 2, (bits >> 31) << 31)
    return np.arange(start, start + count, dtype=np.uint32).view(np.float32)


EDGES = {
    # exp: also where 2^k leaves the normal range (-86: the 2^-32 step) and k reaches 128 (88.376).
    "exp": (0.0, -0.0, 88.72283, -87.33655, -103.27893, -103.97, np.log(2) / 2, -np.log(2) / 2, 1e-30, 10.0,
            -86.0, 88.376),
    "exp2": (0.0, 128.0, -126.0, -149.0, -150.0, 0.5, -0.5, 1e-30, 10.5, -124.0, -124.5, 127.5, -151.0),
    "log": (1.0, np.sqrt(2), np.sqrt(0.5), 1e-40, np.finfo(np.float32).tiny, 2.0, 0.5, 3e38, 1e-45),
}


# The largest error allowed, in ulp: 2 for ours and CUDA's; on CUDA tensors (tests/python/conftest.py)
# exp2 is ex2.approx.f32, an approximation to a relative error (about 2^-22), which is up to 4 ulp
# of a result at the bottom of its binade.
ULP_BOUNDS = {"exp": 2, "exp2": 4 if os.environ.get("NINETOOTHED_TEST_DEVICE") == "cuda" else 2, "log": 2}


def inputs(name):
    rng = np.random.default_rng(list(KERNELS).index(name))
    sample = rng.integers(0, 1 << 32, size=1 << 22, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = [around(value) for value in EDGES[name]]
    # Every denormal input, positive and negative, in steps of 7 bit patterns.
    denormals = np.arange(0, 1 << 23, 7, dtype=np.uint32)
    denormals = np.concatenate([denormals, denormals | np.uint32(1 << 31)]).view(np.float32)
    return np.concatenate([SPECIALS, sample, denormals, *edges])


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_within_two_ulp_of_float64(name):
    x = inputs(name)
    y = np.full(x.shape, np.nan, dtype=np.float32)
    KERNELS[name](x, y)
    with np.errstate(invalid="ignore"):  # signalling NaNs among the inputs
        exact = REFERENCES[name](x.astype(np.float64))
    errors, specials_ok = ulp_errors(y, exact)
    assert specials_ok.all(), f"wrong special values at x = {x[~specials_ok][:8]} (got {y[~specials_ok][:8]})"
    worst = int(np.argmax(errors))
    print(f"{name}: largest error {errors[worst]:.3f} ulp at {x[worst]!r}")
    assert errors[worst] <= ULP_BOUNDS[name], f"{name}({x[worst]!r}) = {y[worst]!r}: {errors[worst]:.3f} ulp"


def test_ulp_errors_measures_what_it_says():
    """The measure itself: one float32 step off is 1 ulp; a wrong special value is infinite."""
    exact = np.array([1.0, 1.0, 2.0**-140, np.inf, np.nan, 0.0])
    y = np.array([1.0, np.nextafter(np.float32(1), np.float32(2)), 2.0**-140 + 2.0**-149, np.inf, 1.0, 1e-45],
                 dtype=np.float32)
    errors, specials_ok = ulp_errors(y, exact)
    assert errors[0] == 0 and errors[1] == 1 and errors[2] == 1
    assert errors[3] == 0 and specials_ok[3]
    assert np.isinf(errors[4]) and not specials_ok[4]
    assert np.isinf(errors[5]) and not specials_ok[5]


def half_arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def half_application(x, y, z):
    z = ntl.exp(x) + ntl.log(y) + ntl.exp2(x) + ntl.sigmoid(x)  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.float32))
def test_in_expressions_of_every_float_storage(dtype):
    """float16 and bfloat16 compute in float: the same helpers, one rounding on store."""
    kernel = ninetoothed.make(half_arrangement, half_application, (Tensor(1), Tensor(1), Tensor(1)))
    x = (torch.rand(10007) * 20 - 10).to(dtype)
    y = (torch.rand(10007) * 100 + 1e-3).to(dtype)
    z = torch.full_like(x, float("nan"))
    kernel(x, y, z)
    xd, yd = x.double(), y.double()
    expected = torch.exp(xd) + torch.log(yd) + torch.exp2(xd) + torch.sigmoid(xd)
    eps = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-23}[dtype]
    # One rounding of the stored sum plus a few float32 roundings inside.
    bound = eps * expected.abs() + 1e-5 * (xd.exp() + xd.exp2() + yd.log().abs() + 1)
    assert ((z.double() - expected).abs() <= bound).all()
