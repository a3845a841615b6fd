"""The register-blocked dot (codegen/c/dot_kernel.h) against float64 references.

The micro-kernel cuts a block's product into tiles of R rows by two vectors
(V floats, or V / 2 doubles, each), then one vector, then half a vector (of 4 lanes or
more), then single columns; rows left
over take a 4-row tile where 4 are left, then run one at a time. R and V follow the
device's vector registers: 8 and 16 for 64-byte ones (AVX-512), 6 and 8 for 32-byte
ones (AVX2). With 64-byte ones, the block sizes below run each of those
variants: (BM, BN) = (11, 49) has full 8-row tiles and a 3-row rest, each
with two-vector, one-vector and scalar columns (49 = 32 + 16 + 1); (8, 32) only
the full tile; (1, 1) only the scalar one-row tile; (16, 24) a one-vector tile
and scalar columns. test_dot_micro_kernels_of_both_widths builds both widths on any
machine. The matrix sizes are odd, so blocks are partial too. Every
output is poisoned first and every element compared.
"""

import os

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BM = Symbol("BM", constexpr=True)
BN = Symbol("BN", constexpr=True)
BK = Symbol("BK", constexpr=True)


def arrangement(input, other, output):
    output_arranged = output.tile((BM, BN))
    input_arranged = input.tile((BM, BK)).tile((1, -1)).expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BK, BN)).tile((-1, 1)).expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged


def transposed_arrangement(input, other, output):
    """`other` is given as (N, K): its blocks are (BN, BK), transposed in the application."""
    output_arranged = output.tile((BM, BN))
    input_arranged = input.tile((BM, BK)).tile((1, -1)).expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BN, BK)).tile((1, -1)).permute((1, 0))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(0)
    return input_arranged, other_arranged, output_arranged


def accumulate(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])  # into the accumulator's array
    output = accumulator  # noqa: F841


def plain(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator = ntl.dot(input[k], other[k]) + accumulator  # a dot result of its own
    output = accumulator  # noqa: F841


def transposed(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], ntl.trans(other[k]))
    output = accumulator  # noqa: F841


def accumulate_float64(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float64)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator  # noqa: F841


def accumulate_int(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.int32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator  # noqa: F841


KERNELS = {
    "accumulate": (arrangement, accumulate),
    "plain": (arrangement, plain),
    "transposed": (transposed_arrangement, transposed),
}
SHAPES = ((33, 65, 17), (1, 1, 1), (127, 129, 127), (64, 32, 96))  # (M, K, N)
BLOCKS = ((11, 49, 16), (8, 32, 8), (1, 1, 1), (16, 24, 32))  # (BM, BN, BK)


def poisoned(shape, dtype):
    fill = float("nan") if dtype.is_floating_point else -12345
    return torch.full(shape, fill, dtype=dtype)


def make(name, arrangement, application, dtypes):
    tensors = tuple(Tensor(2, dtype=dtype) for dtype in dtypes)
    return ninetoothed.make(arrangement, application, tensors, kernel_name=name)


_kernels = {}


def kernel(name, arrangement, application, dtypes):
    key = (name, dtypes)
    if key not in _kernels:
        _kernels[key] = make(name, arrangement, application, dtypes)
    return _kernels[key]


def check_close(output, expected, k, eps):
    """Each element within the float32 summation error bound of its float64 value."""
    bound = 2 * k * eps * expected[1] + 1e-30
    error = (output.double() - expected[0]).abs()
    assert not torch.isnan(output).any()
    worst = (error / bound).max().item()
    assert worst <= 1, f"error {worst:.3g} times the bound"


def reference(a, b):
    """The float64 product and, per element, the sum of |a_ik * b_kj| (for the error bound)."""
    a, b = a.double(), b.double()
    return a @ b, a.abs() @ b.abs()


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("bm, bn, bk", BLOCKS)
@pytest.mark.parametrize("variant", sorted(KERNELS))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16), ids=("f32", "f16"))
def test_dot_micro_tiles(dtype, variant, bm, bn, bk, m, k, n):
    arrange, application = KERNELS[variant]
    dt = {torch.float32: ninetoothed.float32, torch.float16: ninetoothed.float16}[dtype]
    f = kernel(variant, arrange, application, (dt, dt, ninetoothed.float32))
    a = torch.randn(m, k).to(dtype)
    b = torch.randn(k, n).to(dtype)
    output = poisoned((m, n), torch.float32)
    f(a, b.t().contiguous() if variant == "transposed" else b, output, BM=bm, BN=bn, BK=bk)
    # float16 products are exact in float32: the sums' rounding is the only error.
    check_close(output, reference(a, b), k, 2.0**-24)


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("bm, bn, bk", BLOCKS)
def test_dot_mixed_dtypes(bm, bn, bk, m, k, n):
    """float16 @ float32: the float16 block is converted to float once, then multiplied."""
    f = kernel("mixed", arrangement, accumulate, (ninetoothed.float16, ninetoothed.float32, ninetoothed.float32))
    a = torch.randn(m, k).half()
    b = torch.randn(k, n)
    output = poisoned((m, n), torch.float32)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    check_close(output, reference(a, b), k, 2.0**-24)


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("bm, bn, bk", ((11, 21, 8), (8, 16, 16), (1, 1, 1)))
def test_dot_float64(bm, bn, bk, m, k, n):
    """Vectors of 8 doubles: (11, 21) runs two-vector, one-vector and scalar columns."""
    f = kernel("f64", arrangement, accumulate_float64, (ninetoothed.float64,) * 3)
    a = torch.randn(m, k, dtype=torch.float64)
    b = torch.randn(k, n, dtype=torch.float64)
    output = poisoned((m, n), torch.float64)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    expected = (a.to(torch.float64) @ b, a.abs() @ b.abs())
    check_close(output, expected, k, 2.0**-53)


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("bm, bn, bk", ((11, 49, 16), (1, 1, 1)))
def test_dot_int(bm, bn, bk, m, k, n):
    """Integer dots multiply and add in vectors of int: exact."""
    f = kernel("int", arrangement, accumulate_int, (ninetoothed.int32,) * 3)
    a = torch.randint(-100, 100, (m, k), dtype=torch.int32)
    b = torch.randint(-100, 100, (k, n), dtype=torch.int32)
    output = poisoned((m, n), torch.int32)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    assert torch.equal(output.long(), a.long() @ b.long())


# Whole tiles with edges and partial blocks (the first shape), whole tiles only (the second block);
# each configuration is a kernel build, slow in the work-group pass: kept to these.
@pytest.mark.parametrize("m, k, n", ((33, 65, 17), (127, 129, 127)))
@pytest.mark.parametrize("bm, bn, bk", ((48, 40, 24), (16, 32, 16)))
@pytest.mark.parametrize("transposed", ("a", "b", "a and b"))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16), ids=("f32", "f16"))
def test_dot_of_transposed_views(dtype, transposed, bm, bn, bk, m, k, n):
    """Operands given as transposed views (`x @ w.t()`, a linear layer's weight): the blocks
    read with unit stride down their columns are packed by 16 x 16 register transposes where
    whole tiles fit, element by element at the edges and where the block leaves the tensor."""
    dt = {torch.float32: ninetoothed.float32, torch.float16: ninetoothed.float16}[dtype]
    f = kernel("accumulate", arrangement, accumulate, (dt, dt, ninetoothed.float32))
    a = (torch.randn(k, m).t() if "a" in transposed.split() else torch.randn(m, k)).to(dtype)
    b = (torch.randn(n, k).t() if "b" in transposed.split() else torch.randn(k, n)).to(dtype)
    output = poisoned((m, n), torch.float32)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    # float16 products are exact in float32: the sums' rounding is the only error.
    check_close(output, reference(a, b), k, 2.0**-24)
    assert "nt_transpose16(" in f.source and "nt_transpose8(" in f.source


# 64-byte registers: 16 x 16 tiles with edges of 8 (48 x 40 x 24) and of 5 (20 x 37 x 21);
# 32-byte ones: 8 x 8 tiles, whole (48 x 40 x 24) and with edges of 5.
@pytest.mark.parametrize("bm, bn, bk", ((48, 40, 24), (20, 37, 21)))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16), ids=("f32", "f16"))
def test_transposed_packing_of_both_widths(vector_bytes, dtype, bm, bn, bk):
    """`x @ w.t()` with the register transposes of each width: 16 x 16 tiles (64-byte
    registers) and 8 x 8 (32-byte ones), whole and with edges, over partial blocks."""
    dt = {torch.float32: ninetoothed.float32, torch.float16: ninetoothed.float16}[dtype]
    f = make(f"transposed_{vector_bytes}", arrangement, accumulate, (dt, dt, ninetoothed.float32))
    m, k, n = 67, 101, 83
    a, b = torch.randn(m, k).to(dtype), torch.randn(n, k).t().to(dtype)
    output = poisoned((m, n), torch.float32)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    check_close(output, reference(a, b), k, 2.0**-24)


def test_dot_of_trans_packs_by_transposes():
    """`dot(a, trans(b))` with b's blocks read along their rows (test_dot_micro_tiles checks its
    values): packed by the same register transposes."""
    f = kernel("transposed", transposed_arrangement, transposed, (ninetoothed.float32,) * 3)
    a, b = torch.randn(40, 48), torch.randn(36, 48)
    output = poisoned((40, 36), torch.float32)
    f(a, b, output, BM=16, BN=32, BK=16)
    check_close(output, reference(a, b.t()), 48, 2.0**-24)
    assert "nt_transpose16(" in f.source and "nt_transpose8(" in f.source


def test_dot_source_keeps_accumulators_in_vectors():
    """The generated C holds the micro-tile in vector variables (float16 for 64-byte registers,
    float8 for 32-byte ones) and uses fma."""
    source = kernel("accumulate", arrangement, accumulate,
                    (ninetoothed.float32, ninetoothed.float32, ninetoothed.float32)).source
    assert "#if NT_VECTOR_BYTES >= 64" in source
    assert "float16 nt_c" in source and "float8 nt_c" in source
    assert "fma(" in source
    assert "vstore16(" in source and "vstore8(" in source


@pytest.fixture(params=(32, 64), ids=("32-byte", "64-byte"))
def vector_bytes(request):
    """Sources built for this register width, whatever the device's."""
    if os.environ.get("NINETOOTHED_PROGRAM_LAYOUT") == "work-group":
        # The micro-kernels and transposes are the work-item form's; the work-group form's dot
        # (test_dot_micro_tiles covers it in that layout) does not depend on the width.
        pytest.skip("the work-group form has no register-sized micro-kernels")
    ninetoothed._core.set_vector_bytes_for_testing(request.param)
    try:
        yield request.param
    finally:
        ninetoothed._core.set_vector_bytes_for_testing(0)


# (13, 57): 64-byte: 8 + 4 + 1 rows, 32 + 16 + 8 + 1 columns; 32-byte: 6 + 6 + 1 rows, 48 + 8 + 1.
# (11, 61): 64-byte: 8 + 3 x 1 rows, 32 + 16 + 8 + 5 columns (doubles 48 + 8 + 4 + 1); 32-byte:
# 6 + 4 + 1 rows, 48 + 8 + 4 + 1 columns (doubles 56 + 4 + 1: no half of 2 lanes).
@pytest.mark.parametrize("bm, bn, bk", ((13, 57, 16), (11, 61, 8)))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.float64, torch.int32),
                         ids=("f32", "f16", "f64", "i32"))
def test_dot_micro_kernels_of_both_widths(vector_bytes, dtype, bm, bn, bk):
    """Each register width's micro-tiles (and their 4-row and single-row rests, one-vector,
    half-vector and scalar columns) over partial blocks of odd sizes, in each compute type
    (doubles have half the lanes)."""
    dt = {torch.float32: ninetoothed.float32, torch.float16: ninetoothed.float16,
          torch.float64: ninetoothed.float64, torch.int32: ninetoothed.int32}[dtype]
    application, out_dtype = {torch.float64: (accumulate_float64, torch.float64),
                              torch.int32: (accumulate_int, torch.int32)}.get(dtype, (accumulate, torch.float32))
    out_dt = {torch.float32: ninetoothed.float32, torch.float64: ninetoothed.float64,
              torch.int32: ninetoothed.int32}[out_dtype]
    # A kernel of its own per width: a kernel keeps the builds it prepared.
    f = make(f"dot_{vector_bytes}", arrangement, application, (dt, dt, out_dt))
    m, k, n = 41, 37, 127
    if dtype == torch.int32:
        a = torch.randint(-100, 100, (m, k), dtype=torch.int32)
        b = torch.randint(-100, 100, (k, n), dtype=torch.int32)
    else:
        a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    output = poisoned((m, n), out_dtype)
    f(a, b, output, BM=bm, BN=bn, BK=bk)
    if dtype == torch.int32:
        assert torch.equal(output.long(), a.long() @ b.long())
    else:
        check_close(output, reference(a, b), k, 2.0**-53 if dtype == torch.float64 else 2.0**-24)
