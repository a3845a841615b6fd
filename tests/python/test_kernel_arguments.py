"""Acceptance tests: what a kernel launch accepts and what it refuses.

numpy arrays work like torch tensors; any strides (transposed, sliced, offset, broadcast, negative
numpy strides) are read and written correctly, and a store into a view never touches the rest of its
base. Bad launches and unsupported application syntax raise Python exceptions a user can act on.
Outputs are poisoned before every launch and every element is checked.
"""

import functools
import inspect
import pathlib
import re
import zlib

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl  # noqa: F401  (the applications' language)
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)
TILE_M = Symbol("TILE_M", constexpr=True)
TILE_N = Symbol("TILE_N", constexpr=True)

INT_POISON = -123456789
TILES = dict(TILE_M=16, TILE_N=32)
M, N = 37, 45  # partial blocks in both dims under TILES


@pytest.fixture(autouse=True)
def _seed(request):
    seed = zlib.crc32(request.node.nodeid.encode())
    torch.manual_seed(seed)
    np.random.seed(seed)


def add_arrangement(x, y, z):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


def add_2d_arrangement(x, y, z):
    return x.tile((TILE_M, TILE_N)), y.tile((TILE_M, TILE_N)), z.tile((TILE_M, TILE_N))


def scale_arrangement(input, alpha, output):
    return input.tile((BLOCK_SIZE,)), alpha, output.tile((BLOCK_SIZE,))


def scale_application(input, alpha, output):
    output = alpha * input  # noqa: F841


@functools.lru_cache(maxsize=None)
def add_kernel():
    return ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))


@functools.lru_cache(maxsize=None)
def add_2d_kernel():
    return ninetoothed.make(add_2d_arrangement, add_application, (Tensor(2), Tensor(2), Tensor(2)))


@functools.lru_cache(maxsize=None)
def scale_kernel():
    return ninetoothed.make(scale_arrangement, scale_application, (Tensor(1), Tensor(0), Tensor(1)))


def as_float64(t):
    if isinstance(t, np.ndarray):
        t = torch.from_numpy(np.ascontiguousarray(t))
    return t.to(torch.float64)


def assert_close(actual, expected):
    """Exact comparison of every element (an addition of two numbers rounds once, as IEEE)."""
    torch.testing.assert_close(as_float64(actual), as_float64(expected), rtol=0, atol=0)


def sum_of(x, y):
    """x + y rounded once to float32 (the kernels' result for float32 tensors)."""
    return (x.double() + y.double()).float()


# --- numpy arrays ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", (1, 1000, 4097))
@pytest.mark.parametrize(
    "dtype", (np.float32, np.float64, np.int64), ids=("float32", "float64", "int64")
)
def test_numpy_arrays(dtype, size):
    if np.issubdtype(dtype, np.integer):
        x, y = (np.random.randint(-10**6, 10**6, size).astype(dtype) for _ in range(2))
        poison = INT_POISON
    else:
        x, y = (np.random.randn(size).astype(dtype) for _ in range(2))
        poison = np.nan
    z = np.full(size, poison, dtype=dtype)

    add_kernel()(x, y, z, BLOCK_SIZE=256)  # writes the numpy array in place

    assert z.dtype == dtype
    assert_close(z, x + y)

    # The same data as torch tensors gives the same result.
    z_torch = torch.from_numpy(np.full(size, poison, dtype=dtype))
    add_kernel()(torch.from_numpy(x), torch.from_numpy(y), z_torch, BLOCK_SIZE=256)
    assert_close(z_torch, z)


@pytest.mark.parametrize("step", (-1, -3))
def test_numpy_negative_strides(step):
    x, y = np.random.randn(3001)[::step], np.random.randn(3001)[::-step]
    z = np.full(x.shape, np.nan)
    add_kernel()(x, y, z, BLOCK_SIZE=128)
    assert_close(z, x + y)


def test_numpy_output_with_negative_strides():
    x, y = np.random.randn(M, N).astype(np.float32), np.random.randn(M, N).astype(np.float32)
    base = np.full((M + 2, N), np.nan, dtype=np.float32)
    z = base[M:0:-1]  # rows M .. 1, reversed
    add_2d_kernel()(x, y, z, **TILES)
    assert_close(base[1 : M + 1][::-1], x + y)
    assert np.isnan(base[0]).all() and np.isnan(base[M + 1]).all()


# --- Strided torch tensors ------------------------------------------------------------------

STRIDED_INPUTS = {
    "transposed": lambda: torch.randn(N, M).t(),
    "every_other_column": lambda: torch.randn(M, 2 * N)[:, 1::2],
    "storage_offset": lambda: torch.randn(M + 3, N)[3:],
    "broadcast_row": lambda: torch.randn(1, N).expand(M, N),
    "transposed_slice": lambda: torch.randn(2 * N + 1, M + 5)[1::2, 5:].t(),
}


@pytest.mark.parametrize("kind", sorted(STRIDED_INPUTS))
def test_strided_inputs(kind):
    x, y = STRIDED_INPUTS[kind](), torch.randn(M, N)
    assert x.shape == (M, N)
    z = torch.full((M, N), float("nan"))
    add_2d_kernel()(x, y, z, **TILES)
    assert_close(z, sum_of(x, y))
    # Both operands strided.
    z = torch.full((M, N), float("nan"))
    add_2d_kernel()(y, x, z, **TILES)
    assert_close(z, sum_of(x, y))


def test_1d_input_with_storage_offset():
    x, y = torch.randn(1007)[7:], torch.randn(2000)[::2]
    z = torch.full((1000,), float("nan"))
    add_kernel()(x, y, z, BLOCK_SIZE=128)
    assert_close(z, sum_of(x, y))


def test_transposed_output():
    x, y = torch.randn(M, N), torch.randn(M, N)
    base = torch.full((N, M), float("nan"))
    add_2d_kernel()(x, y, base.t(), **TILES)
    assert_close(base.t(), sum_of(x, y))


@pytest.mark.parametrize("transposed", (False, True))
def test_output_view_leaves_the_rest_of_its_base_alone(transposed):
    x, y = torch.randn(M, N), torch.randn(M, N)
    base = torch.full((2 * N + 3, M + 5) if transposed else (M + 5, 2 * N + 3), float("nan"))
    rows, columns = slice(2, 2 + M), slice(1, 1 + 2 * N, 2)
    z = base.t()[rows, columns] if transposed else base[rows, columns]
    assert z.shape == (M, N) and not z.is_contiguous()

    add_2d_kernel()(x, y, z, **TILES)

    assert_close(z, sum_of(x, y))
    written = torch.zeros(base.shape, dtype=torch.bool)
    (written.t() if transposed else written)[rows, columns] = True
    assert torch.isnan(base[~written]).all(), "a store reached elements outside the view"


# --- Scalars for 0-dim tensors --------------------------------------------------------------


@pytest.mark.parametrize(
    "alpha",
    (
        -2.5,
        3,
        np.float64(0.75),
        np.float32(-1.25),
        torch.tensor(0.5),
        torch.tensor(4.0, dtype=torch.float64),
    ),
    ids=("float", "int", "np_float64", "np_float32", "tensor_float32", "tensor_float64"),
)
def test_scalar_kinds(alpha):
    # The alphas are exact in float32, so every kind gives the same correctly rounded product.
    input = torch.randn(1000)
    output = torch.full((1000,), float("nan"))
    scale_kernel()(input, alpha, output, BLOCK_SIZE=128)
    assert_close(output, (input.double() * float(alpha)).float())


# --- Kernel source --------------------------------------------------------------------------


def test_source_is_opencl_c():
    x, y = torch.randn(10), torch.randn(10)
    z = torch.full((10,), float("nan"))
    kernel = add_kernel()
    kernel(x, y, z, BLOCK_SIZE=8)
    assert_close(z, sum_of(x, y))
    assert isinstance(kernel.source, str)
    assert "__kernel" in kernel.source


# --- Errors ---------------------------------------------------------------------------------


def vectors(n=8):
    return torch.randn(n), torch.randn(n), torch.full((n,), float("nan"))


@pytest.mark.parametrize("count", (0, 2, 4))
def test_wrong_number_of_arguments(count):
    arguments = (list(vectors()) + [torch.randn(8)])[:count]
    with pytest.raises(TypeError):
        add_kernel()(*arguments, BLOCK_SIZE=8)


@pytest.mark.parametrize(
    "bad", ([0.0] * 8, "abcdefgh", 1.5, None), ids=("list", "str", "float", "None")
)
def test_non_tensor_argument(bad):
    _, y, z = vectors()
    with pytest.raises(TypeError):
        add_kernel()(bad, y, z, BLOCK_SIZE=8)
    assert torch.isnan(z).all()


def test_wrong_ndim():
    x, y, z = vectors()
    with pytest.raises((TypeError, ValueError)):
        add_kernel()(x.reshape(2, 4), y, z, BLOCK_SIZE=8)
    with pytest.raises((TypeError, ValueError)):
        scale_kernel()(x, torch.ones(3), z, BLOCK_SIZE=8)
    assert torch.isnan(z).all()


def test_outermost_shapes_of_their_own_unravel_the_program_id_as_upstream():
    """The grid is the first tensor's outermost shape; a tensor with another unravels the program
    id over its own (upstream's rule): with more programs, only the grid's first ones run for it;
    with fewer, programs past its count leave it alone (its loads read `other`)."""
    x, y = torch.randn(1000), torch.randn(700)
    z = torch.full((2000,), float("nan"))
    add_kernel()(x, y, z, BLOCK_SIZE=128)  # 8 programs; y has 6 blocks, z 16
    expected = torch.full((2000,), float("nan"))
    expected[:1024] = 0  # the grid's 8 blocks of z; x's and y's masked elements read 0
    expected[:1000] += x
    expected[:700] += y
    torch.testing.assert_close(z, expected, rtol=0, atol=0, equal_nan=True)


def cache_arrangement(x, cache, out, BLOCK_C=TILE_N):
    return x.tile((1, BLOCK_C)), cache.tile((1, BLOCK_C)), out.tile((1, BLOCK_C))


def cache_application(x, cache, out):
    cache = x  # noqa: F841
    out = x * 2  # noqa: F841


@pytest.mark.parametrize("rows, columns, cache_rows", ((5, 70, 3), (3, 45, 7), (4, 32, 4)))
def test_a_cache_of_fewer_programs_is_written_by_the_programs_it_has(rows, columns, cache_rows):
    """ntops's attention with a KV cache: the cache's blocks are one a head, the query's one a
    block of rows, and program p writes the cache's block p (upstream's unravelling)."""
    block = 32
    kernel = ninetoothed.make(functools.partial(cache_arrangement, BLOCK_C=block), cache_application,
                              (Tensor(2), Tensor(2), Tensor(2)))
    x = torch.randn(rows, columns)
    cache = torch.full((cache_rows, block), float("nan"))
    out = torch.full_like(x, float("nan"))
    kernel(x, cache, out)
    assert torch.equal(out, x * 2)
    blocks_per_row = -(-columns // block)
    expected = torch.full_like(cache, float("nan"))
    for p in range(min(rows * blocks_per_row, cache_rows)):  # the programs the cache has
        row, column = divmod(p, blocks_per_row)
        values = x[row, column * block:(column + 1) * block]
        expected[p] = 0  # x's masked elements read 0
        expected[p, :len(values)] = values
    torch.testing.assert_close(cache, expected, rtol=0, atol=0, equal_nan=True)


def test_missing_constexpr_value():
    x, y, z = vectors()
    with pytest.raises((TypeError, ValueError), match="BLOCK_SIZE"):
        add_kernel()(x, y, z)
    assert torch.isnan(z).all()


def test_unknown_keyword():
    x, y, z = vectors()
    with pytest.raises(TypeError):
        add_kernel()(x, y, z, BLOCK_SIZE=8, BLOCK=4)
    assert torch.isnan(z).all()


def test_unsupported_dtype():
    x = torch.randn(8, dtype=torch.complex64)
    y = torch.randn(8, dtype=torch.complex64)
    z = torch.full((8,), complex("nan"), dtype=torch.complex64)
    with pytest.raises((TypeError, ValueError), match="(?i)complex"):
        add_kernel()(x, y, z, BLOCK_SIZE=8)
    assert torch.isnan(z).all()


def test_tensor_on_another_device():
    _, y, z = vectors()
    with pytest.raises((TypeError, ValueError), match="(?i)device|meta|cpu"):
        add_kernel()(torch.empty(8, device="meta"), y, z, BLOCK_SIZE=8)
    assert torch.isnan(z).all()


def masked_arrangement(x, mask, z, with_mask):
    return x.tile((BLOCK_SIZE,)), mask.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,)), with_mask


def masked_application(x, mask, z, with_mask):
    if with_mask:
        z = x + mask  # noqa: F841
    else:
        z = x  # noqa: F841


@pytest.mark.parametrize("size", (8, 1000))
def test_a_meta_tensor_stands_for_a_parameter_the_kernel_never_touches(size):
    """ntops's attention passes `torch.empty(shape, device="meta")` for an absent mask, which its
    application reads only under a constexpr flag; Triton takes it (its pointer is never used)."""
    kernel = ninetoothed.make(
        masked_arrangement, masked_application, (Tensor(1), Tensor(1), Tensor(1), Tensor(0, constexpr=True))
    )
    x, mask = torch.randn(size), torch.randn(size)
    z = torch.full((size,), float("nan"))
    kernel(x, torch.empty(size, device="meta"), z, False, BLOCK_SIZE=128)
    assert torch.equal(z, x)
    kernel(x, mask, z, True, BLOCK_SIZE=128)
    assert torch.equal(z, x + mask)
    z.fill_(float("nan"))
    with pytest.raises(ValueError, match="'mask'.*meta device.*reads it"):
        kernel(x, torch.empty(size, device="meta"), z, True, BLOCK_SIZE=128)
    assert torch.isnan(z).all()


class TritonStyleDtype:
    """What `str()` gives of Triton's dtypes (`triton.language.float16` is "fp16"): ntops's
    applications pass `triton.language.int32` to `ntl` functions, upstream's language being Triton's."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


TL_INT32, TL_FP16, TL_BF16 = TritonStyleDtype("int32"), TritonStyleDtype("fp16"), TritonStyleDtype("bf16")


def foreign_dtypes_application(x, y, z):
    index = ntl.zeros([], dtype=TL_INT32)  # ntops's median
    z = x.to(TL_FP16) + ntl.cast(y, TL_BF16) + ntl.full(x.shape, 2, dtype=torch.float16) + index  # noqa: F841


def test_language_functions_take_triton_and_torch_dtypes():
    x, y, z = vectors(1000)
    ninetoothed.make(add_arrangement, foreign_dtypes_application, (Tensor(1), Tensor(1), Tensor(1)))(
        x, y, z, BLOCK_SIZE=32
    )
    expected = x.half().float() + y.bfloat16().float() + 2
    assert torch.allclose(z, expected, rtol=0, atol=2e-2)  # summed in float16
    assert not torch.allclose(z, x + y + 2, rtol=0, atol=1e-5)  # the conversions happened
    z.fill_(float("nan"))
    with pytest.raises(TypeError, match="not an element dtype: 'complex64'"):
        ninetoothed.make(add_arrangement, bad_dtype_application, (Tensor(1), Tensor(1), Tensor(1)))(
            x, y, z, BLOCK_SIZE=32
        )
    assert torch.isnan(z).all()


def bad_dtype_application(x, y, z):
    z = x + ntl.zeros(x.shape, dtype="complex64")  # noqa: F841


def while_application(x, y, z):
    i = 0
    while i < 1:
        i += 1
    z = x + y  # noqa: F841


def lambda_application(x, y, z):
    double = lambda value: value * 2  # noqa: E731
    z = double(x) + y  # noqa: F841


def try_application(x, y, z):
    try:
        z = x + y  # noqa: F841
    except Exception:
        z = x  # noqa: F841


def line_of(function, text):
    """The line number in this file of the first line of `function` containing `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "application, construct",
    ((while_application, "while "), (lambda_application, "lambda "), (try_application, "try:")),
    ids=("while", "lambda", "try"),
)
def test_unsupported_syntax_names_file_and_line(application, construct):
    x, y, z = vectors()
    with pytest.raises(SyntaxError) as info:
        kernel = ninetoothed.make(add_arrangement, application, (Tensor(1), Tensor(1), Tensor(1)))
        kernel(x, y, z, BLOCK_SIZE=8)
    error = info.value
    text = f"{error} {error.filename}"
    line = line_of(application, construct)
    assert pathlib.Path(__file__).name in text, text
    assert error.lineno == line or re.search(rf"\b{line}\b", str(error)), (line, text)
    assert torch.isnan(z).all()
