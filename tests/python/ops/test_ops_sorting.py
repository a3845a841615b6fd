"""The sorting operators of the corpus (sort, argsort, msort, topk, median, quantile) against
torch, element by element, on poisoned outputs: along the last dim and others, odd lengths,
float32, float16 and integers."""

import zlib

import pytest
import torch

from corpus import median, quantile, sort, topk
from ops_testing import DTYPES, assert_matches, poisoned

INTEGER = torch.int32


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def random_input(shape, dtype, ties=False):
    """Fresh data; with `ties`, few distinct values, so that stability is tested."""
    if not dtype.is_floating_point:
        high = 6 if ties else 1000
        return torch.randint(-high, high, shape, dtype=dtype)
    data = torch.randn(shape)
    if ties:
        data = torch.round(data * 2) / 2
    return data.to(dtype)


def reference(input):
    """What torch's CPU kernels take: float16 widened to float32 (an order-preserving map)."""
    return input.float() if input.dtype == torch.float16 else input


def assert_indices_point_at_values(input, dim, indices, values):
    """indices hold distinct positions along `dim`, and the input there is `values`."""
    assert ((indices >= 0) & (indices < input.shape[dim])).all()
    ordered = indices.sort(dim).values
    assert (ordered.diff(dim=dim) > 0).all()
    assert torch.equal(input.gather(dim, indices), values)


# --- sort, argsort, msort ------------------------------------------------------------------------

SORT_CASES = (
    ((1,), 0, False),
    ((7,), -1, True),
    ((5, 33), -1, False),
    ((33, 5), 0, True),
    ((2, 3, 4, 9), 1, False),
    ((3, 100), 1, True),
)


@pytest.mark.parametrize("dtype", DTYPES + (INTEGER,))
@pytest.mark.parametrize("shape, dim, descending", SORT_CASES)
def test_sort(shape, dim, descending, dtype):
    input = random_input(shape, dtype, ties=True)
    values, indices = poisoned(shape, dtype), poisoned(shape, torch.int64)
    result = sort.sort(input, dim, descending, out=(values, indices))
    expected_values, expected_indices = torch.sort(reference(input), dim=dim, descending=descending, stable=True)
    assert result[0] is values and result[1] is indices
    assert torch.equal(values, expected_values.to(dtype))
    assert torch.equal(indices, expected_indices)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", (0, -1))
def test_sort_non_contiguous(dtype, dim):
    input = random_input((2, 17, 6), dtype).permute(2, 0, 1)  # (6, 2, 17), strides permuted
    values, indices = poisoned(input.shape, dtype), poisoned(input.shape, torch.int64)
    sort.sort(input, dim, True, out=(values, indices))
    expected_values, expected_indices = torch.sort(reference(input), dim=dim, descending=True, stable=True)
    assert torch.equal(values, expected_values.to(dtype))
    assert torch.equal(indices, expected_indices)


@pytest.mark.parametrize("dtype", DTYPES + (INTEGER,))
@pytest.mark.parametrize("shape, dim, descending", (((4, 21), 1, True), ((19, 3, 2), 0, False)))
def test_argsort(shape, dim, descending, dtype):
    input = random_input(shape, dtype, ties=True)
    indices = poisoned(shape, torch.int64)
    assert sort.argsort(input, dim, descending, out=indices) is indices
    assert torch.equal(indices, torch.sort(reference(input), dim=dim, descending=descending, stable=True)[1])


@pytest.mark.parametrize("dtype", DTYPES + (INTEGER,))
def test_msort(dtype):
    input = random_input((13, 5), dtype)
    values = poisoned((13, 5), dtype)
    assert sort.msort(input, out=values) is values
    assert torch.equal(values, torch.msort(reference(input)).to(dtype))


# --- topk ----------------------------------------------------------------------------------------

TOPK_CASES = (
    ((1,), 0, 1, True),
    ((7,), 0, 3, False),
    ((5, 33), -1, 5, True),
    ((100, 3), 0, 7, False),
    ((2, 9, 4), 1, 9, True),
    ((2, 3, 4, 5), 2, 2, False),
)


@pytest.mark.parametrize("dtype", DTYPES + (torch.int64,))
@pytest.mark.parametrize("shape, dim, k, largest", TOPK_CASES)
def test_topk(shape, dim, k, largest, dtype):
    input = random_input(shape, dtype)
    out_shape = list(shape)
    out_shape[dim] = k
    values, indices = poisoned(out_shape, dtype), poisoned(out_shape, torch.int64)
    topk.topk(input, k, dim, largest, out=(values, indices))
    expected_values, expected_indices = torch.topk(reference(input), k, dim, largest)
    assert torch.equal(values, expected_values.to(dtype))
    assert_indices_point_at_values(input, dim, indices, values)
    if dtype == torch.float32:  # distinct values: the indices are determined
        assert torch.equal(indices, expected_indices)


# --- median --------------------------------------------------------------------------------------

MEDIAN_CASES = (((1,), 0), ((10,), -1), ((4, 33), 1), ((10, 7), 0), ((3, 2, 5, 4), 1))


@pytest.mark.parametrize("dtype", DTYPES + (torch.int64,))
@pytest.mark.parametrize("shape, dim", MEDIAN_CASES)
def test_median(shape, dim, dtype):
    input = random_input(shape, dtype)
    reduced = [size for d, size in enumerate(shape) if d != dim % len(shape)]
    values, indices = poisoned(reduced, dtype), poisoned(reduced, torch.int64)
    median.median(input, dim, out=(values, indices))
    expected_values, expected_indices = torch.median(reference(input), dim)
    assert torch.equal(values, expected_values.to(dtype))
    assert torch.equal(input.gather(dim, indices.unsqueeze(dim)).squeeze(dim), values)
    if dtype == torch.float32:
        assert torch.equal(indices, expected_indices)


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_keepdim_non_contiguous(dtype):
    input = random_input((9, 5), dtype).t()  # (5, 9) with strides (1, 5)
    values, indices = poisoned((5, 1), dtype), poisoned((5, 1), torch.int64)
    result = median.median(input, 1, keepdim=True, out=(values, indices))
    expected_values, expected_indices = torch.median(reference(input), 1, keepdim=True)
    assert result[0].shape == (5, 1)
    assert torch.equal(values, expected_values.to(dtype))
    assert torch.equal(input.gather(1, indices), values)


# --- quantile ------------------------------------------------------------------------------------

QUANTILE_CASES = (
    ((1,), 0, 0.3),
    ((7,), 0, (0.0, 0.25, 0.5, 0.9, 1.0)),
    ((5, 33), 1, 0.75),
    ((33, 4), 0, (0.0, 0.5, 0.99)),
    ((2, 3, 10), 1, (0.2, 0.4)),
    ((2, 3, 2, 6), -1, 1.0),
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim, q", QUANTILE_CASES)
def test_quantile(shape, dim, q, dtype):
    input = random_input(shape, dtype)
    q = q if isinstance(q, float) else torch.tensor(q)
    expected = torch.quantile(input.float(), q, dim)
    output = poisoned(expected.shape, dtype)
    assert quantile.quantile(input, q, dim, out=output) is output
    assert_matches(output, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_quantile_keepdim_non_contiguous(dtype):
    input = random_input((8, 3, 11), dtype).transpose(0, 2)  # (11, 3, 8)
    q = torch.tensor([0.1, 0.75])
    expected = torch.quantile(input.float(), q, 0, keepdim=True)
    output = poisoned(expected.shape, dtype)
    quantile.quantile(input, q, 0, keepdim=True, out=output)
    assert output.shape == (2, 1, 3, 8)
    assert_matches(output, expected)
