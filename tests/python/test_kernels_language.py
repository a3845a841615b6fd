"""Acceptance tests: functions of the application language (`ninetoothed.language`).

Small kernels, one language feature each: elementwise math, `where`, casts, Python-number operands,
`full`, `arange`, `x[:, None]` broadcasting, `trans` and reductions along an axis. Block sizes
are constexpr symbols passed at launch and chosen so that the sizes leave partial blocks. Every
output is poisoned before the launch and every element is checked against a float64 reference.
"""

import collections
import functools
import zlib

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)
TILE_M = Symbol("TILE_M", constexpr=True)
TILE_N = Symbol("TILE_N", constexpr=True)

BLOCK = 256  # the BLOCK_SIZE the 1-D kernels are launched with
INT_POISON = -123456789


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def poisoned(shape, dtype):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    fill = float("nan") if dtype.is_floating_point else INT_POISON
    return torch.full(shape, fill, dtype=dtype)


def assert_close(actual, expected, rtol=0.0, atol=0.0):
    torch.testing.assert_close(
        actual.to(torch.float64), expected.to(torch.float64), rtol=rtol, atol=atol
    )


# --- 1-D elementwise kernels ----------------------------------------------------------------


def unary_arrangement(input, output):
    return input.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def binary_arrangement(input, other, output):
    return input.tile((BLOCK_SIZE,)), other.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def exp_application(input, output):
    output = ntl.exp(input)  # noqa: F841


def exp2_application(input, output):
    output = ntl.exp2(input)  # noqa: F841


def log_application(input, output):
    output = ntl.log(input)  # noqa: F841


def log2_application(input, output):
    output = ntl.log2(input)  # noqa: F841


def sqrt_application(input, output):
    output = ntl.sqrt(input)  # noqa: F841


def rsqrt_application(input, output):
    output = ntl.rsqrt(input)  # noqa: F841


def abs_application(input, output):
    output = ntl.abs(input)  # noqa: F841


def sigmoid_application(input, output):
    output = ntl.sigmoid(input)  # noqa: F841


def maximum_application(input, other, output):
    output = ntl.maximum(input, other)  # noqa: F841


def minimum_application(input, other, output):
    output = ntl.minimum(input, other)  # noqa: F841


def where_application(input, other, output):
    output = ntl.where(input > 0, input, other)  # noqa: F841


def cast_application(input, output):
    # The division happens in float64: a float32 division would be off by far more than 1e-15.
    output = ntl.cast(input, ntl.float64) / 3  # noqa: F841


def to_application(input, output):
    output = input.to(ntl.float64) / 3  # noqa: F841


def python_numbers_application(input, output):
    output = input * 2 + 1  # noqa: F841


def weak_float_application(input, output):
    # 0.1 takes the block's dtype (float32); the float32 product is widened when stored.
    output = input * 0.1  # noqa: F841


def full_application(input, output):
    output = input + ntl.full(input.shape, 2.5, dtype=ntl.float32)  # noqa: F841


def arange_application(input, output):
    output = input + ntl.arange(0, input.shape[0])  # noqa: F841


@functools.lru_cache(maxsize=None)
def elementwise_kernel(application, num_tensors):
    arrangement = {2: unary_arrangement, 3: binary_arrangement}[num_tensors]
    return ninetoothed.make(arrangement, application, tuple(Tensor(1) for _ in range(num_tensors)))


def normal(n):
    return torch.randn(n) * 3


def positive(n):
    return torch.rand(n) * 10 + 0.01


def integers(n):
    return torch.randint(-1000, 1000, (n,), dtype=torch.int32)


def float32_product(x, scalar):
    # x * float32(scalar) is exact in float64; rounding it to float32 is IEEE float32 multiply.
    return (x.double() * torch.tensor(scalar, dtype=torch.float32).item()).float()


Case = collections.namedtuple("Case", "application inputs output_dtype reference rtol atol")

MATH = dict(rtol=1e-5, atol=1e-6)  # float32 math functions (a few ulp) against float64
EXACT = dict(rtol=0.0, atol=0.0)

CASES = {
    "exp": Case(exp_application, [normal], torch.float32, torch.exp, **MATH),
    "exp2": Case(exp2_application, [normal], torch.float32, torch.exp2, **MATH),
    "log": Case(log_application, [positive], torch.float32, torch.log, **MATH),
    "log2": Case(log2_application, [positive], torch.float32, torch.log2, **MATH),
    "sqrt": Case(sqrt_application, [positive], torch.float32, torch.sqrt, **MATH),
    "rsqrt": Case(rsqrt_application, [positive], torch.float32, torch.rsqrt, **MATH),
    "abs": Case(abs_application, [normal], torch.float32, torch.abs, **EXACT),
    "sigmoid": Case(sigmoid_application, [normal], torch.float32, torch.sigmoid, **MATH),
    "maximum": Case(maximum_application, [normal, normal], torch.float32, torch.maximum, **EXACT),
    "minimum": Case(minimum_application, [normal, normal], torch.float32, torch.minimum, **EXACT),
    "where": Case(
        where_application, [normal, normal], torch.float32,
        lambda x, y: torch.where(x > 0, x, y), **EXACT,
    ),
    "cast": Case(cast_application, [normal], torch.float64, lambda x: x / 3, rtol=1e-15, atol=0.0),
    "to": Case(to_application, [normal], torch.float64, lambda x: x / 3, rtol=1e-15, atol=0.0),
    "python_numbers_float32": Case(
        python_numbers_application, [normal], torch.float32, lambda x: (x * 2 + 1).float(), **EXACT
    ),
    "python_numbers_int32": Case(
        python_numbers_application, [integers], torch.int32, lambda x: x * 2 + 1, **EXACT
    ),
    "weak_float": Case(
        weak_float_application, [normal], torch.float64, lambda x: float32_product(x, 0.1), **EXACT
    ),
    "full": Case(full_application, [normal], torch.float32, lambda x: (x + 2.5).float(), **EXACT),
    "arange": Case(
        arange_application, [normal], torch.float32,
        lambda x: (x + torch.arange(x.numel(), dtype=torch.float64) % BLOCK).float(), **EXACT,
    ),
}


@pytest.mark.parametrize("size", (1, 1000))
@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise(name, size):
    case = CASES[name]
    inputs = [make(size) for make in case.inputs]
    output = poisoned(size, case.output_dtype)

    elementwise_kernel(case.application, len(inputs) + 1)(*inputs, output, BLOCK_SIZE=BLOCK)

    # References take float64 (int64 for integers) copies of the inputs.
    wide = [x.double() if x.is_floating_point() else x.long() for x in inputs]
    assert output.dtype == case.output_dtype
    assert_close(output, case.reference(*wide), rtol=case.rtol, atol=case.atol)


# --- 2-D kernels: broadcasting, transposition, reductions -----------------------------------


def outer_sum_arrangement(column, row, output):
    output_arranged = output.tile((TILE_M, TILE_N))
    column_arranged = column.tile((TILE_M,)).unsqueeze(1).expand((-1, output_arranged.shape[1]))
    row_arranged = row.tile((TILE_N,)).unsqueeze(0).expand((output_arranged.shape[0], -1))
    return column_arranged, row_arranged, output_arranged


def outer_sum_application(column, row, output):
    output = column[:, None] + row[None, :]  # noqa: F841


@functools.lru_cache(maxsize=None)
def outer_sum_kernel():
    return ninetoothed.make(
        outer_sum_arrangement, outer_sum_application, (Tensor(1), Tensor(1), Tensor(2))
    )


@pytest.mark.parametrize("m, n", ((37, 45), (1, 1), (16, 64)))
def test_broadcasting_with_none(m, n):
    column, row = torch.randn(m), torch.randn(n)
    output = poisoned((m, n), torch.float32)
    outer_sum_kernel()(column, row, output, TILE_M=16, TILE_N=32)
    assert_close(output, (column.double()[:, None] + row.double()[None, :]).float())


def transpose_arrangement(input, output):
    return input.tile((TILE_M, TILE_N)), output.tile((TILE_N, TILE_M)).permute((1, 0))


def transpose_application(input, output):
    output = ntl.trans(input)  # noqa: F841


@functools.lru_cache(maxsize=None)
def transpose_kernel():
    return ninetoothed.make(transpose_arrangement, transpose_application, (Tensor(2), Tensor(2)))


@pytest.mark.parametrize("m, n", ((37, 45), (1, 9), (32, 8)))
def test_trans(m, n):
    input = torch.randn((m, n))
    output = poisoned((n, m), torch.float32)
    transpose_kernel()(input, output, TILE_M=16, TILE_N=8)
    assert_close(output, input.t())


def row_reduction_arrangement(input, output):
    # One block spans whole rows (TILE_N >= columns), so the input's outer shape is (blocks, 1).
    return input.tile((TILE_M, TILE_N)), output.tile((TILE_M,)).unsqueeze(1)


def column_reduction_arrangement(input, output):
    # One block spans whole columns (TILE_M >= rows), so the input's outer shape is (1, blocks).
    return input.tile((TILE_M, TILE_N)), output.tile((TILE_N,)).unsqueeze(0)


def sum_axis_1_application(input, output):
    output = ntl.sum(input, axis=1)  # noqa: F841


def max_axis_1_application(input, output):
    output = ntl.max(input, axis=1)  # noqa: F841


def min_axis_1_application(input, output):
    output = ntl.min(input, axis=1)  # noqa: F841


def sum_axis_0_application(input, output):
    output = ntl.sum(input, axis=0)  # noqa: F841


def max_axis_0_application(input, output):
    output = ntl.max(input, axis=0)  # noqa: F841


def min_axis_0_application(input, output):
    output = ntl.min(input, axis=0)  # noqa: F841


REDUCTIONS = {
    # name: (value read at masked positions, shift of the data, reference, tolerance).
    # The data is shifted so that a masked 0 would change a max (all negative) or a min (all
    # positive): only the right `other` gives the right answer at partial blocks.
    "sum": (0.0, 0.0, torch.sum, dict(rtol=1e-5, atol=1e-5)),
    "max": (float("-inf"), -10.0, torch.amax, EXACT),
    "min": (float("inf"), 10.0, torch.amin, EXACT),
}


@functools.lru_cache(maxsize=None)
def reduction_kernel(name, axis):
    application = globals()[f"{name}_axis_{axis}_application"]
    arrangement = row_reduction_arrangement if axis == 1 else column_reduction_arrangement
    other = REDUCTIONS[name][0]
    return ninetoothed.make(arrangement, application, (Tensor(2, other=other), Tensor(1)))


@pytest.mark.parametrize("m, n", ((37, 45), (1, 1), (8, 64)))
@pytest.mark.parametrize("axis", (0, 1))
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_along_axis(name, axis, m, n):
    _, shift, reference, tolerance = REDUCTIONS[name]
    input = torch.randn((m, n)).clamp(-3, 3) + shift
    output = poisoned(n if axis == 0 else m, torch.float32)
    tiles = dict(TILE_M=64, TILE_N=16) if axis == 0 else dict(TILE_M=8, TILE_N=64)

    reduction_kernel(name, axis)(input, output, **tiles)

    assert_close(output, reference(input.double(), dim=axis), **tolerance)


# --- Control flow: runtime loops and branches on scalars, helpers with return values ---------

CF_BLOCK = Symbol("CF_BLOCK", constexpr=True)


def _scale_and_shift(value, scale):
    return value * scale + 1


def control_flow_arrangement(x, n, z):
    return x.tile((1, CF_BLOCK)), n, z.tile((1, CF_BLOCK))


def control_flow_application(x, n, z):
    total = 0.0
    for i in range(n):
        total += ntl.sum(x)
    y = _scale_and_shift(x, 2)
    if total > 0:
        z = y + total
    else:
        z = y - total
    z = ntl.where(x > 0, z, 0.0) if n > 1 else z  # reads back what was stored


@pytest.mark.parametrize("rows, cols, n", ((5, 7, 3), (9, 16, 1), (1, 3, 0)))
def test_control_flow_and_helpers(rows, cols, n):
    kernel = ninetoothed.make(
        control_flow_arrangement, control_flow_application, (Tensor(2), Tensor(0), Tensor(2))
    )
    x = torch.randn(rows, cols)
    z = torch.full((rows, cols), float("nan"))
    kernel(x, n, z, CF_BLOCK=16)
    wide = x.double()
    total = n * wide.sum(1, keepdim=True)
    reference = torch.where(total > 0, wide * 2 + 1 + total, wide * 2 + 1 - total)
    if n > 1:
        reference = torch.where(wide > 0, reference, torch.zeros((), dtype=torch.float64))
    torch.testing.assert_close(z.double(), reference, rtol=1e-5, atol=1e-5)


# --- Boolean tensors: masks read and written -----------------------------------------------


def _select_arrangement(m, x, z, BLOCK_SIZE=ninetoothed.block_size()):
    return m.tile((BLOCK_SIZE,)), x.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def _select_application(m, x, z):
    z = ntl.where(m, x, -x)  # noqa: F841


def _compare_application(x, y, m):
    m = x > y  # noqa: F841


@pytest.mark.parametrize("n", (1, 1001, 4099))
def test_boolean_tensors(n):
    select = ninetoothed.make(_select_arrangement, _select_application, (Tensor(1), Tensor(1), Tensor(1)))
    compare = ninetoothed.make(_select_arrangement, _compare_application, (Tensor(1), Tensor(1), Tensor(1)))
    mask = torch.rand(n) > 0.5
    x, y = torch.randn(n), torch.randn(n)
    z = torch.full((n,), float("nan"))
    select(mask, x, z)
    assert torch.equal(z, torch.where(mask, x, -x))
    out = ~(x > y)  # poisoned: the opposite of the answer
    compare(x, y, out)
    assert torch.equal(out, x > y)


# --- Program indices, fma, cdiv and compile-time branches on constexpr scalars ------------------

PID_BLOCK = Symbol("PID_BLOCK", constexpr=True)


def _pid_arrangement(x, y, z, flag):
    return x.tile((2, PID_BLOCK)), y.tile((2, PID_BLOCK)), z.tile((2, PID_BLOCK)), flag


def _pid_application(x, y, z, flag):
    if flag:
        z = ntl.fma(x, y, 1.0) + ntl.program_id(0) * 100 + ntl.program_id(-1) * 1000 + ntl.num_programs(1) * 10000
    else:
        z = ntl.cdiv(ntl.program_id(1) + 5, 2)  # noqa: F841


@pytest.mark.parametrize("rows, cols", ((5, 9), (1, 1), (8, 12)))
def test_program_ids_fma_cdiv_and_constexpr_branches(rows, cols):
    kernel = ninetoothed.make(
        _pid_arrangement, _pid_application, (Tensor(2), Tensor(2), Tensor(2), Tensor(0, constexpr=True))
    )
    x, y = torch.randn(rows, cols), torch.randn(rows, cols)
    block_rows = torch.arange(rows)[:, None] // 2
    block_cols = torch.arange(cols)[None, :] // 4
    z = torch.full((rows, cols), float("nan"))
    kernel(x, y, z, True, PID_BLOCK=4)
    reference = x.double() * y.double() + 1 + block_rows * 100 + block_cols * 1000 + ((cols + 3) // 4) * 10000
    torch.testing.assert_close(z.double(), reference, rtol=1e-6, atol=1e-4)
    z = torch.full((rows, cols), float("nan"))
    kernel(x, y, z, False, PID_BLOCK=4)
    assert torch.equal(z, ((block_cols + 6) // 2).float().expand(rows, cols))


# --- More math and index reductions ---------------------------------------------------------------

MATH_BLOCK = Symbol("MATH_BLOCK", constexpr=True)


def _rows_arrangement(x, values, indices):
    return x.tile((1, MATH_BLOCK)), values.tile((1, MATH_BLOCK)), indices.tile((1, 1))


def _rows_application(x, values, indices):
    values = ntl.sin(x) + ntl.cos(x) * ntl.erf(x) + ntl.floor(x) - ntl.ceil(x)
    indices = ntl.argmax(x, axis=1, keep_dims=True) * 1000 + ntl.argmin(x, axis=1, keep_dims=True)  # noqa: F841


@pytest.mark.parametrize("rows, cols", ((3, 7), (1, 1), (6, 16)))
def test_more_math_and_index_reductions(rows, cols):
    kernel = ninetoothed.make(_rows_arrangement, _rows_application, (Tensor(2, other=float("nan")), Tensor(2), Tensor(2)))
    x = torch.randn(rows, cols) * 3
    values = torch.full((rows, cols), float("nan"))
    indices = torch.full((rows, 1), -1, dtype=torch.int32)
    kernel(x, values, indices, MATH_BLOCK=cols)
    wide = x.double()
    reference = torch.sin(wide) + torch.cos(wide) * torch.erf(wide) + torch.floor(wide) - torch.ceil(wide)
    torch.testing.assert_close(values.double(), reference, rtol=1e-5, atol=1e-5)
    expected = x.argmax(dim=1, keepdim=True) * 1000 + x.argmin(dim=1, keepdim=True)
    assert torch.equal(indices.long(), expected)


# --- More libdevice math ---------------------------------------------------------------------

LIBDEVICE_CASES = {
    "tan": (lambda x: torch.tan(x), lambda: torch.rand(1000) * 2 - 1),
    "asin": (torch.asin, lambda: torch.rand(1000) * 1.8 - 0.9),
    "acos": (torch.acos, lambda: torch.rand(1000) * 1.8 - 0.9),
    "atan": (torch.atan, lambda: torch.randn(1000) * 3),
    "sinh": (torch.sinh, lambda: torch.randn(1000)),
    "cosh": (torch.cosh, lambda: torch.randn(1000)),
    "log1p": (torch.log1p, lambda: torch.rand(1000) * 5),
    "expm1": (torch.expm1, lambda: torch.randn(1000)),
    "cbrt": (lambda x: x.sign() * x.abs() ** (1 / 3), lambda: torch.randn(1000) * 10),
    "log10": (torch.log10, lambda: torch.rand(1000) * 100 + 0.01),
    "exp10": (lambda x: 10**x, lambda: torch.randn(1000)),
    "trunc": (torch.trunc, lambda: torch.randn(1000) * 10),
    "round": (lambda x: x.sign() * torch.floor(x.abs() + 0.5), lambda: torch.randn(1000) * 10),
}


@pytest.mark.parametrize("name", sorted(LIBDEVICE_CASES))
def test_more_libdevice_math(name):
    from ninetoothed.language import libdevice

    reference, data = LIBDEVICE_CASES[name]
    function = getattr(libdevice, name)

    def arrangement(x, y, BLOCK=ninetoothed.block_size()):
        return x.tile((BLOCK,)), y.tile((BLOCK,))

    def application(x, y):
        y = function(x)  # noqa: F841

    kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)))
    x = data()
    y = torch.full_like(x, float("nan"))
    kernel(x, y)
    torch.testing.assert_close(y.double(), reference(x.double()), rtol=2e-6, atol=2e-6)
