"""float8 dtypes (issue 26, item 4): torch's float8_e5m2 and float8_e4m3fn, held as bytes.

`.to()` rounds as torch converts (to nearest even; past the largest finite value e5m2 goes to
infinity and e4m3fn, which has none, to NaN), checked on every code, every tie and the values around
them against a reference that finds the nearest representable value by search, not by the kernels'
bit arithmetic. Dots of float8 blocks accumulate in float. Tensors of float8 dtypes (torch 2.1 on) are
loaded and stored as bytes; upstream's float8 matmul is run as its test writes it.
"""

import math

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

# The tiled matmul test_cuda_source.py makes, with its block-size symbols BM, BN, BK.
from test_cuda_source import matmul_arrangement  # noqa: E402

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)

FORMATS = {  # name: (exponent bits, mantissa bits, bias, has infinities)
    "float8_e5m2": (5, 2, 15, True),
    "float8_e4m3fn": (4, 3, 7, False),
}


def decode(code, name):
    """The value of a float8 byte."""
    exponent_bits, mantissa_bits, bias, infinities = FORMATS[name]
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code & 0x7F) >> mantissa_bits, code & ((1 << mantissa_bits) - 1)
    top = (1 << exponent_bits) - 1
    if infinities and exponent == top:
        return sign * math.inf if mantissa == 0 else math.nan
    if not infinities and exponent == top and mantissa == (1 << mantissa_bits) - 1:
        return math.nan
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - mantissa_bits)
    return sign * (mantissa + (1 << mantissa_bits)) * 2.0 ** (exponent - bias - mantissa_bits)


def nearest(x, name):
    """x rounded to the format by search: the nearest finite value, ties to the even code; past the
    largest finite value (halfway up to the next power of the step), infinity or NaN."""
    if math.isnan(x):
        return math.nan
    codes = [c for c in range(128) if math.isfinite(decode(c, name))]
    largest = max(decode(c, name) for c in codes)
    _, mantissa_bits, _, infinities = FORMATS[name]
    step = largest / ((1 << mantissa_bits) + (1 << mantissa_bits) - 1) * 1  # the last place at the top
    step = 2.0 ** (math.floor(math.log2(largest)) - mantissa_bits)
    magnitude = abs(x)
    if magnitude >= largest + step / 2:
        if magnitude == largest + step / 2 and (max(codes, key=lambda c: decode(c, name)) & 1) == 0:
            return math.copysign(largest, x)
        return math.copysign(math.inf, x) if infinities else math.nan
    best = min(codes, key=lambda c: (abs(decode(c, name) - magnitude), c & 1))
    return math.copysign(decode(best, name), x)


def round_arrangement(input, output, BLOCK_SIZE=BLOCK_SIZE):
    return input.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def to_e5m2(input, output):
    output = input.to(ntl.float8_e5m2)  # noqa: F841


def to_e4m3fn(input, output):
    output = input.to(ntl.float8_e4m3fn)  # noqa: F841


APPLICATIONS = {"float8_e5m2": to_e5m2, "float8_e4m3fn": to_e4m3fn}


def probes(name):
    """Every code's value, the ties between neighbours and the floats either side of each, the
    values past the largest finite one, infinities, NaN, and fresh random values of every scale."""
    values = sorted({decode(c, name) for c in range(256) if not math.isnan(decode(c, name))})
    finite = [v for v in values if math.isfinite(v)]
    out = list(values)
    for low, high in zip(finite, finite[1:]):
        middle = np.float32((low + high) / 2)
        out += [float(middle), float(np.nextafter(middle, np.float32(-np.inf))),
                float(np.nextafter(middle, np.float32(np.inf)))]
    largest = max(finite)
    out += [largest * 1.02, largest * 1.05, largest * 1.09, largest * 1.2, 1e6, -1e6, 3e38, -3e38,
            math.inf, -math.inf, math.nan, 1e-30, -1e-30, 0.0, -0.0]
    rng = np.random.default_rng()
    out += list((rng.standard_normal(2000) * 2.0 ** rng.integers(-20, 20, 2000)).astype(np.float32))
    return np.array(out, dtype=np.float32)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("source", (torch.float32, torch.float16))
def test_to_rounds_as_torch_converts(name, source):
    kernel = ninetoothed.make(round_arrangement, APPLICATIONS[name], (Tensor(1), Tensor(1, dtype=ninetoothed.float32)))
    x = torch.from_numpy(probes(name)).to(source)
    out = torch.full(x.shape, 12345.0)
    kernel(x, out, BLOCK_SIZE=64)
    expected = torch.tensor([nearest(float(v), name) for v in x.float()])
    assert torch.equal(torch.isnan(out), torch.isnan(expected))
    keep = ~torch.isnan(expected)
    assert torch.equal(out[keep], expected[keep])
    assert torch.equal(torch.signbit(out[keep]), torch.signbit(expected[keep]))  # -0.0 stays negative


def matmul_of_e5m2(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k].to(ntl.float8_e5m2), b[k].to(ntl.float8_e5m2))
    c = accumulator  # noqa: F841


def test_names_and_queries():
    assert ninetoothed.float8_e5m2 is ntl.float8_e5m2 is ntl.float8e5
    assert ninetoothed.float8_e4m3fn is ntl.float8_e4m3fn is ntl.float8e4nv
    for dtype in (ntl.float8_e5m2, ntl.float8_e4m3fn):
        assert dtype.is_fp8() and dtype.is_floating() and not dtype.is_fp16() and dtype.primitive_bitwidth == 8
    assert ntl.float8_e5m2.is_fp8e5() and ntl.float8_e4m3fn.is_fp8e4nv() and not ntl.float16.is_fp8()
    assert (ntl.float8_e5m2.fp_mantissa_width, ntl.float8_e4m3fn.fp_mantissa_width) == (2, 3)


def rounded(x, name):
    return torch.tensor([nearest(float(v), name) for v in x.flatten()], dtype=torch.float64).reshape(x.shape)


def test_dots_of_float8_blocks_accumulate_in_float():
    kernel = ninetoothed.make(matmul_arrangement, matmul_of_e5m2,
                              (Tensor(2), Tensor(2), Tensor(2, dtype=ninetoothed.float32)))
    a, b = torch.randn(37, 70).half(), torch.randn(70, 45).half()
    c = torch.full((37, 45), float("nan"))
    kernel(a, b, c, BM=16, BN=16, BK=32)
    expected = rounded(a.float(), "float8_e5m2") @ rounded(b.float(), "float8_e5m2")
    # Every product of two float8 values is exact in float; their sums round in float.
    torch.testing.assert_close(c.double(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not ninetoothed._core.nvrtc_available(), reason="NVRTC (libnvrtc.so) is not installed")
@pytest.mark.parametrize("name", FORMATS)
def test_cuda_source_with_float8_builds_with_nvrtc(name):
    """The conversions are the same text in CUDA C (hex float literals, as_uint and as_float)."""
    kernel = ninetoothed.make(round_arrangement, APPLICATIONS[name], (Tensor(1), Tensor(1, dtype=ninetoothed.float32)))
    source = kernel.cuda_source
    assert "nt_float_to_f8e" in source and "nt_float_to_f8e" not in ninetoothed.make(
        round_arrangement, copy_application, (Tensor(1), Tensor(1))).cuda_source  # only where called
    assert len(ninetoothed._core.compile_cuda(source, "-DBLOCK_SIZE=64 -DNT_WORK_ITEMS=128", "sm_80")) > 0


# --- float8 tensors (torch 2.1 and later) ---------------------------------------------------------

needs_float8 = pytest.mark.skipif(not hasattr(torch, "float8_e5m2"), reason="this torch has no float8 dtypes")


def copy_application(input, output):
    output = input  # noqa: F841


@needs_float8
@pytest.mark.parametrize("name", FORMATS)
def test_float8_tensors_are_loaded_and_stored_as_bytes(name):
    dtype = getattr(torch, name)
    kernel = ninetoothed.make(round_arrangement, copy_application, (Tensor(1), Tensor(1)))
    codes = torch.arange(256, dtype=torch.uint8)
    x = codes.view(dtype)
    # float8 to float8: every code through a float and back (NaNs to the format's NaN).
    out = torch.zeros(256, dtype=torch.uint8).view(dtype)
    kernel(x, out, BLOCK_SIZE=64)
    same = out.view(torch.uint8) == codes
    nan = torch.isnan(x.float())
    assert bool(same[~nan].all()) and bool(torch.isnan(out.float()[nan]).all())
    # float32 to float8 and back, as torch converts.
    y = torch.randn(1000) * 40
    to8 = torch.zeros(1000, dtype=torch.uint8).view(dtype)
    kernel(y, to8, BLOCK_SIZE=64)
    assert torch.equal(to8.view(torch.uint8), y.to(dtype).view(torch.uint8))
    back = torch.full((1000,), float("nan"))
    kernel(to8, back, BLOCK_SIZE=64)
    assert torch.equal(back, to8.float())


def upstream_matmul_application(lhs, rhs, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(lhs.shape[0]):
        accumulator += ntl.dot(lhs[k], rhs[k])
    output = accumulator.to(ntl.float16)  # noqa: F841


@needs_float8
def test_upstream_float8_matmul():
    """Upstream's tests/test_matmul.py with float8_e5m2, as it writes it."""
    kernel = ninetoothed.make(matmul_arrangement, upstream_matmul_application, (Tensor(2), Tensor(2), Tensor(2)))
    input = torch.randn((96, 80), dtype=torch.float16).to(torch.float8_e5m2)
    other = torch.randn((80, 72), dtype=torch.float16).T.to(torch.float8_e5m2).T
    output = torch.empty((96, 72), dtype=torch.float16)
    kernel(input, other, output, BM=32, BN=32, BK=32)
    expected = torch.matmul(input.to(torch.float16).float(), other.to(torch.float16).float()).half()
    assert torch.allclose(output, expected, atol=0.125)
