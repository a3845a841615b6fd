"""The loop order of 2-D nests (cpp/codegen/c/emitter_loop_order.cpp).

Where every tensor a store, materialisation or packing nest touches steps by a stride that may
be 1 along the block's rows and by another stride along its columns, the source holds a second
copy of the nest with the rows innermost, chosen by the launch's unit-stride macros. The kernels
below run with both layouts (the swapped copy for transposed tensors, the usual one for
contiguous tensors) on odd sizes with partial blocks, in float32 and float16, each element
checked; the source is checked for which nests get the copy, in the distributed form (element
kernels) and the one-work-item form (kernels with a dot), and for the loop inside the copy.
"""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor
from test_kernels_convolution import (
    BLOCK_SIZE_K,
    BLOCK_SIZE_M,
    BLOCK_SIZE_N,
    matmul_application,
    matmul_arrangement,
)

BLOCK_ROWS = ninetoothed.Symbol("BLOCK_ROWS", constexpr=True)
BLOCK_COLUMNS = ninetoothed.Symbol("BLOCK_COLUMNS", constexpr=True)


def _tiled(*tensors):
    return tuple(t.tile((BLOCK_ROWS, BLOCK_COLUMNS)) for t in tensors)


def _scaled_sum(x, y, output):
    output = x * 2 + y  # noqa: F841


def _every_other_column(x, output):
    """The rows of `x`'s blocks are every other element of its rows (a Winograd tile's corners)."""
    return x[:, ::2].tile((BLOCK_ROWS, BLOCK_COLUMNS)), output.tile((BLOCK_ROWS, BLOCK_COLUMNS))


def _negated(x, output):
    output = -x  # noqa: F841


def _swapped_tests(source):
    return [line.strip() for line in source.splitlines() if line.strip().startswith("#if 1 && NT_UNIT_")]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("transposed", (True, False))
def test_rows_innermost_where_the_rows_are_contiguous(transposed, dtype):
    kernel = ninetoothed.make(_tiled, _scaled_sum, (Tensor(2), Tensor(2), Tensor(2)))
    shape = (37, 45)

    def make(fill=None):
        if transposed:
            t = torch.randn(shape[::-1]).to(dtype).t() if fill is None else torch.full(shape[::-1], fill).t()
        else:
            t = torch.randn(shape).to(dtype) if fill is None else torch.full(shape, fill)
        return t.to(dtype)

    x, y, output = make(), make(), make(float("nan"))
    assert output.is_contiguous() != transposed

    kernel(x, y, output, BLOCK_ROWS=16, BLOCK_COLUMNS=8)

    expected = (x.double() * 2 + y.double()).to(dtype)
    torch.testing.assert_close(output, expected, rtol=0, atol=0)
    tests = _swapped_tests(kernel.source)
    # Every tensor's rows may be contiguous and its columns are not: rows innermost, under the
    # three tensors' macros.
    assert tests and all(t.count("!NT_UNIT_") == 3 for t in tests), tests


def test_rows_a_few_elements_apart():
    kernel = ninetoothed.make(_every_other_column, _negated, (Tensor(2), Tensor(2)))
    x = torch.randn(29, 61).t()  # (61, 29): the rows of x[:, ::2] are two elements apart
    output = torch.full((15, 61), float("nan")).t()

    kernel(x, output, BLOCK_ROWS=8, BLOCK_COLUMNS=16)

    assert torch.equal(output, -x[:, ::2])
    tests = _swapped_tests(kernel.source)
    # x's columns step by twice its second stride, which no macro can call 1: only the output's
    # column stride is named.
    assert tests and all(t.count("!NT_UNIT_") == 1 for t in tests), tests


def test_the_usual_order_where_a_tensor_has_contiguous_columns():
    kernel = ninetoothed.make(_tiled, _scaled_sum, (Tensor(2), Tensor(2), Tensor(2)))
    x = torch.randn(23, 19).t()
    y, output = torch.randn(19, 23), torch.full((19, 23), float("nan"))

    kernel(x, y, output, BLOCK_ROWS=8, BLOCK_COLUMNS=8)

    torch.testing.assert_close(output, x * 2 + y, rtol=0, atol=0)
    # The swapped copy is built only where no tensor's columns are contiguous: its test names
    # the column stride of each of the three.
    tests = _swapped_tests(kernel.source)
    assert tests and all(t.count("!NT_UNIT_") == 3 for t in tests), tests


def _normalized(x, output):
    numerator = ntl.exp(x)
    output = numerator / ntl.sum(numerator)  # noqa: F841


def test_a_block_sum_folded_into_its_let_keeps_the_usual_order():
    """A Let's block-wide sum is folded into partial results by the lane of its innermost loop
    as the Let is written (write_array()): that nest keeps its order, and the result is right
    with rows that may be innermost."""
    kernel = ninetoothed.make(_tiled, _normalized, (Tensor(2), Tensor(2)))
    x = torch.randn(24, 40).t()  # (40, 24): rows contiguous
    output = torch.full((24, 40), float("nan")).t()

    kernel(x, output, BLOCK_ROWS=8, BLOCK_COLUMNS=8)

    blocks = x.double().reshape(5, 8, 3, 8).permute(0, 2, 1, 3)
    expected = (blocks.exp() / blocks.exp().sum((2, 3), keepdim=True)).permute(0, 2, 1, 3).reshape(40, 24)
    torch.testing.assert_close(output.double(), expected, rtol=1e-5, atol=1e-7)


def _rows_then_columns(source):
    """The extents of the two loops right after each swapped copy's #if, outer first."""
    lines = [line.strip() for line in source.splitlines()]
    found = []
    for i, line in enumerate(lines):
        if line.startswith("#if 1 && NT_UNIT_"):
            loops = [lines[i + 1], lines[i + 2]]
            found.append(tuple(loop.split(" < ")[1].split(";")[0] for loop in loops))
    return found


def test_a_dots_store_to_a_transposed_output_in_the_work_item_form():
    kernel = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)))
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    a, b = torch.randn(37, 20), torch.randn(20, 45)
    output = torch.full((45, 37), float("nan")).t()

    kernel(a, b, output)

    torch.testing.assert_close(output.double(), a.double() @ b.double(), rtol=1e-5, atol=1e-5)
    source = kernel.source
    # The store of the result tile (the work-item form: no work-items' test), columns outside,
    # rows inside.
    store = [t for t in _swapped_tests(source) if "NT_WORK_ITEMS" not in t and t.count("!NT_UNIT_") == 1]
    assert store, _swapped_tests(source)
    assert (BLOCK_SIZE_N.name, BLOCK_SIZE_M.name) in _rows_then_columns(source)


def _scattered(value, rows, columns, output):
    output[rows, columns] = value


def test_scatters_keep_their_order():
    """Which of two writes to one place lands last is the scatter's order: no second copy."""
    kernel = ninetoothed.make(
        lambda *tensors: tuple(t.tile((BLOCK_ROWS, BLOCK_COLUMNS)) for t in tensors),
        _scattered,
        (Tensor(2), Tensor(2), Tensor(2), Tensor(2)),
    )
    n = 8
    value = torch.arange(n * n, dtype=torch.float32).reshape(n, n).t().contiguous().t()
    rows = torch.arange(n).reshape(n, 1).expand(n, n).t().contiguous().t()
    columns = torch.arange(n).reshape(1, n).expand(n, n).t().contiguous().t()
    output = torch.full((n, n), -1.0)

    kernel(value, rows, columns, output, BLOCK_ROWS=n, BLOCK_COLUMNS=n)

    assert torch.equal(output, value)
    assert not _swapped_tests(kernel.source)


def _transposed(x, output):
    output = ntl.trans(x) * 2  # noqa: F841


def test_a_transposed_read_keeps_the_order():
    """x's block is read transposed: its rows are not the nest's, so the nest is not swapped."""
    kernel = ninetoothed.make(_tiled, _transposed, (Tensor(2), Tensor(2)))
    x = torch.randn(32, 32).t()
    output = torch.full((32, 32), float("nan")).t()

    kernel(x, output, BLOCK_ROWS=8, BLOCK_COLUMNS=8)

    assert torch.equal(output, (x.reshape(4, 8, 4, 8).transpose(1, 3) * 2).reshape(32, 32))
    assert not _swapped_tests(kernel.source)
