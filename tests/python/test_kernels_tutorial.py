"""Acceptance tests: the tutorial's kernels (and a few classic ones) run on CPU tensors.

Every kernel is written the way a NineToothed user writes it. Kernels are built lazily (one cached
builder per kernel) so that one kernel failing to compile fails only its own tests. Every output is
poisoned (NaN, or a sentinel for integers) before the launch and every element is compared with a
reference computed in higher precision (float64; float32 for float16/bfloat16 data).
"""

import functools
import math
import zlib

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from ninetoothed.language import libdevice

INT_POISON = -123456789


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


def poisoned(shape, dtype):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    fill = float("nan") if dtype.is_floating_point else INT_POISON
    return torch.full(shape, fill, dtype=dtype)


def random_tensor(shape, dtype):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=torch.float32).to(dtype)
    return torch.randint(-1000, 1000, shape, dtype=dtype)


def assert_close(actual, expected, rtol=0.0, atol=0.0):
    """Every element of `actual` against `expected` (NaN anywhere fails)."""
    torch.testing.assert_close(
        actual.to(torch.float64), expected.to(torch.float64), rtol=rtol, atol=atol
    )


# --- Vector addition, four styles ---------------------------------------------------------

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)


def add_arrangement_meta(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_arrangement_fixed(x, y, z, BLOCK_SIZE=1024):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_arrangement_constexpr(x, y, z):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


@functools.lru_cache(maxsize=None)
def add_kernel_of(style):
    if style == "jit":
        BLOCK_SIZE = Symbol("BLOCK_SIZE", meta=True)

        @ninetoothed.jit
        def add_kernel(
            x: Tensor(1).tile((BLOCK_SIZE,)),
            y: Tensor(1).tile((BLOCK_SIZE,)),
            z: Tensor(1).tile((BLOCK_SIZE,)),
        ):
            z = x + y  # noqa: F841

        return add_kernel

    arrangement = {
        "block_size": add_arrangement_meta,
        "integer": add_arrangement_fixed,
        "constexpr": add_arrangement_constexpr,
    }[style]
    return ninetoothed.make(arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))


def run_add(style, x, y, **constexprs):
    z = poisoned(x.shape, x.dtype)
    add_kernel_of(style)(x, y, z, **constexprs)
    return z


ADD_SIZES = (1, 3, 1000, 4097, 100003)


@pytest.mark.parametrize("size", ADD_SIZES)
@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=dtype_id)
@pytest.mark.parametrize("style", ("block_size", "integer", "jit"))
def test_add(style, dtype, size):
    x, y = random_tensor(size, dtype), random_tensor(size, dtype)
    # The sum of two floats rounded once is what IEEE addition gives: compare exactly.
    assert_close(run_add(style, x, y), (x.double() + y.double()).to(dtype))


@pytest.mark.parametrize("block_size", (1024, 100))
@pytest.mark.parametrize("size", ADD_SIZES)
@pytest.mark.parametrize(
    "dtype",
    (torch.float32, torch.float64, torch.float16, torch.int32, torch.bfloat16),
    ids=dtype_id,
)
def test_add_constexpr_block_size(dtype, size, block_size):
    x, y = random_tensor(size, dtype), random_tensor(size, dtype)
    z = run_add("constexpr", x, y, BLOCK_SIZE=block_size)
    # float16/bfloat16 compute in float32 and round (to nearest even, as torch) when stored.
    expected = (x.double() + y.double()).to(dtype)
    if dtype in (torch.float16, torch.bfloat16):
        expected = (x.float() + y.float()).to(dtype)
    assert z.dtype == dtype
    assert_close(z, expected)


def test_add_tutorial_example():
    x = torch.tensor((1, 2, 3), dtype=torch.float16)
    y = torch.tensor((4, 5, 6), dtype=torch.float16)
    z = run_add("block_size", x, y)
    assert torch.equal(z, torch.tensor((5, 7, 9), dtype=torch.float16))


# --- Matrix multiplication ----------------------------------------------------------------

BLOCK_SIZE_M = ninetoothed.block_size()
BLOCK_SIZE_N = ninetoothed.block_size()
BLOCK_SIZE_K = ninetoothed.block_size()


def matmul_arrangement(input, other, output):
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K))
    input_arranged = input_arranged.tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)

    other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N))
    other_arranged = other_arranged.tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)

    return input_arranged, other_arranged, output_arranged


def matmul_application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)

    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])

    output = accumulator  # noqa: F841


@functools.lru_cache(maxsize=None)
def tutorial_matmul_kernel():
    """The tutorial's kernel: the float32 accumulator is stored directly (cast on store)."""
    return ninetoothed.make(
        matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2))
    )


@functools.lru_cache(maxsize=None)
def readme_matmul_kernel():
    """The README-v0.7 kernel: `@ninetoothed.jit`, explicit `.to(float16)`."""
    BLOCK_SIZE_M = Symbol("BLOCK_SIZE_M", meta=True)
    BLOCK_SIZE_N = Symbol("BLOCK_SIZE_N", meta=True)
    BLOCK_SIZE_K = Symbol("BLOCK_SIZE_K", meta=True)

    a_tiled = Tensor(2).tile((BLOCK_SIZE_M, BLOCK_SIZE_K)).tile((1, -1))
    b_tiled = Tensor(2).tile((BLOCK_SIZE_K, BLOCK_SIZE_N)).tile((-1, 1))
    c_tiled = Tensor(2).tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

    a_tiled = a_tiled.expand((-1, c_tiled.shape[1]))
    b_tiled = b_tiled.expand((c_tiled.shape[0], -1))

    a_tiled.dtype = a_tiled.dtype.squeeze(0)
    b_tiled.dtype = b_tiled.dtype.squeeze(1)

    @ninetoothed.jit
    def matmul_kernel(a: a_tiled, b: b_tiled, c: c_tiled):
        accumulator = ninetoothed.language.zeros(c.shape, dtype=ninetoothed.language.float32)
        for k in range(a.shape[0]):
            accumulator += ninetoothed.language.dot(a[k], b[k])
        c = accumulator.to(ninetoothed.language.float16)  # noqa: F841

    return matmul_kernel


MATMUL_SHAPES = ((2, 2, 2), (67, 45, 93), (128, 256, 64), (5, 1, 3))  # (M, K, N)


def float16_matmul_tolerance(k):
    # Products of float16 values are exact in float32; the float32 sums differ from the
    # reference only by summation order, and the result is rounded once to float16.
    return dict(rtol=2e-3, atol=1e-3 * math.sqrt(k))


@pytest.mark.parametrize("m, k, n", MATMUL_SHAPES)
@pytest.mark.parametrize("variant", ("tutorial", "jit"))
def test_matmul_float16(variant, m, k, n):
    input = torch.randn((m, k)).half()
    other = torch.randn((k, n)).half()
    output = poisoned((m, n), torch.float16)

    kernel = tutorial_matmul_kernel() if variant == "tutorial" else readme_matmul_kernel()
    kernel(input, other, output)

    assert output.dtype == torch.float16
    assert_close(output, input.float() @ other.float(), **float16_matmul_tolerance(k))


@pytest.mark.parametrize("m, k, n", MATMUL_SHAPES)
def test_matmul_float32(m, k, n):
    input, other = torch.randn((m, k)), torch.randn((k, n))
    output = poisoned((m, n), torch.float32)
    tutorial_matmul_kernel()(input, other, output)
    assert_close(output, input.double() @ other.double(), rtol=1e-5, atol=2e-6 * k)


@pytest.mark.parametrize("variant", ("tutorial", "jit"))
def test_matmul_tutorial_example(variant):
    input = torch.tensor(((1, 2), (3, 4)), dtype=torch.float16)
    other = torch.tensor(((5, 6), (7, 8)), dtype=torch.float16)
    output = poisoned((2, 2), torch.float16)
    kernel = tutorial_matmul_kernel() if variant == "tutorial" else readme_matmul_kernel()
    kernel(input, other, output)
    assert torch.equal(output, torch.tensor(((19, 22), (43, 50)), dtype=torch.float16))


# --- addmm: an application calling the matmul application as a helper -----------------------


def addmm_arrangement(input, mat1, mat2, beta, alpha, output):
    mat1_arranged, mat2_arranged, output_arranged = matmul_arrangement(mat1, mat2, output)
    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))
    return input_arranged, mat1_arranged, mat2_arranged, beta, alpha, output_arranged


def addmm_application(input, mat1, mat2, beta, alpha, output):
    matmul_output = ntl.zeros(output.shape, dtype=ntl.float32)
    matmul_application(mat1, mat2, matmul_output)
    output = beta * input + alpha * matmul_output  # noqa: F841


@functools.lru_cache(maxsize=None)
def addmm_kernel():
    tensors = (Tensor(2), Tensor(2), Tensor(2), Tensor(0), Tensor(0), Tensor(2))
    return ninetoothed.make(addmm_arrangement, addmm_application, tensors)


@pytest.mark.parametrize("m, k, n", ((37, 29, 53), (1, 1, 1), (64, 100, 17)))
@pytest.mark.parametrize("dtype", (torch.float16, torch.float32), ids=dtype_id)
def test_addmm(dtype, m, k, n):
    input = torch.randn((m, n)).to(dtype)
    mat1, mat2 = torch.randn((m, k)).to(dtype), torch.randn((k, n)).to(dtype)
    beta, alpha = 0.5 + torch.rand(()).item(), 0.5 + torch.rand(()).item()
    output = poisoned((m, n), dtype)

    addmm_kernel()(input, mat1, mat2, beta, alpha, output)

    reference_dtype = torch.float32 if dtype == torch.float16 else torch.float64
    expected = torch.addmm(
        input.to(reference_dtype), mat1.to(reference_dtype), mat2.to(reference_dtype),
        beta=beta, alpha=alpha,
    )
    if dtype == torch.float16:
        assert_close(output, expected, **float16_matmul_tolerance(k))
    else:
        assert_close(output, expected, rtol=1e-5, atol=2e-6 * k)


# --- Row-wise kernels: softmax and RMS norm -------------------------------------------------


def softmax_arrangement(input, output):
    return input.tile((1, BLOCK_SIZE)), output.tile((1, BLOCK_SIZE))


def softmax_application(input, output):
    input_loaded = input
    row_minus_max = input_loaded - ntl.max(input_loaded)
    numerator = ntl.exp(row_minus_max)
    denominator = ntl.sum(numerator)
    output = numerator / denominator  # noqa: F841


@functools.lru_cache(maxsize=None)
def softmax_kernel():
    tensors = (Tensor(2, other=float("-inf")), Tensor(2))
    return ninetoothed.make(softmax_arrangement, softmax_application, tensors)


@pytest.mark.parametrize(
    "shape, block_size",
    (
        ((1823, 781), 781),  # a non-power-of-two block equal to the row length
        ((33, 100), 128),  # a block longer than the row: padding reads -inf
        ((7, 1), 1),
        ((4, 5), 8),
    ),
    ids=("1823x781-781", "33x100-128", "7x1-1", "4x5-8"),
)
def test_softmax(shape, block_size):
    input = torch.randn(shape) * 3
    output = poisoned(shape, torch.float32)
    softmax_kernel()(input, output, BLOCK_SIZE=block_size)
    assert_close(output, torch.softmax(input.double(), dim=-1), rtol=1e-4, atol=1e-7)


def rms_norm_arrangement(input, eps, num_cols, output):
    return input.tile((1, BLOCK_SIZE)), eps, num_cols, output.tile((1, BLOCK_SIZE))


def rms_norm_application(input, eps, num_cols, output):
    # Masked positions read 0, so the sum over the block is the sum over the row.
    output = input * ntl.rsqrt(ntl.sum(input * input) / num_cols + eps)  # noqa: F841


@functools.lru_cache(maxsize=None)
def rms_norm_kernel():
    tensors = (Tensor(2), Tensor(0), Tensor(0), Tensor(2))
    return ninetoothed.make(rms_norm_arrangement, rms_norm_application, tensors)


@pytest.mark.parametrize(
    "shape, block_size",
    (((17, 1000), 1024), ((5, 64), 64), ((300, 333), 512), ((2, 1), 1)),
    ids=("17x1000-1024", "5x64-64", "300x333-512", "2x1-1"),
)
def test_rms_norm(shape, block_size):
    input = torch.randn(shape)
    eps = 1e-6
    output = poisoned(shape, torch.float32)
    rms_norm_kernel()(input, eps, shape[1], output, BLOCK_SIZE=block_size)
    x = input.double()
    expected = x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
    assert_close(output, expected, rtol=1e-5, atol=1e-6)


# --- libdevice ------------------------------------------------------------------------------


def pow_arrangement(input, exponent, output):
    return input.tile((BLOCK_SIZE,)), exponent.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def pow_application(input, exponent, output):
    output = libdevice.pow(input, exponent)  # noqa: F841


@functools.lru_cache(maxsize=None)
def pow_kernel():
    return ninetoothed.make(pow_arrangement, pow_application, (Tensor(1), Tensor(1), Tensor(1)))


@pytest.mark.parametrize("size", (1, 1000, 4097))
@pytest.mark.parametrize(
    "dtype, rtol", ((torch.float32, 1e-5), (torch.float64, 1e-13)), ids=("float32", "float64")
)
def test_libdevice_pow(dtype, rtol, size):
    input = (torch.rand(size, dtype=torch.float64) * 4 + 0.05).to(dtype)  # positive bases
    exponent = (torch.randn(size, dtype=torch.float64) * 2).to(dtype)
    output = poisoned(size, dtype)
    pow_kernel()(input, exponent, output, BLOCK_SIZE=256)
    assert_close(output, torch.pow(input.double(), exponent.double()), rtol=rtol, atol=1e-30)

