"""The indexing operators of the corpus (gather, index_select, select_copy, embedding, diag,
bincount) against torch, element by element, on poisoned outputs: odd sizes, partial blocks,
1-D to 4-D, non-contiguous inputs, float32 and float16."""

import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import bincount, diag, embedding, gather, index_select, select_copy
from ops_testing import DTYPES, assert_matches, poisoned


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def random_input(shape, dtype):
    return torch.randn(shape).to(dtype)


def transposed(input):
    """The same values with the first and last dims' strides swapped (not contiguous)."""
    return input.transpose(0, -1).contiguous().transpose(0, -1)


# --- gather --------------------------------------------------------------------------------------

GATHER_CASES = (
    ((7,), (11,), 0),
    ((1,), (3,), 0),
    ((5, 33), (3, 40), 1),
    ((5, 33), (9, 2), 0),
    ((4, 6, 5), (4, 6, 5), -1),
    ((3, 5, 4, 6), (3, 2, 4, 1), 1),
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, index_shape, dim", GATHER_CASES)
def test_gather(shape, index_shape, dim, dtype):
    input = random_input(shape, dtype)
    index = torch.randint(0, shape[dim], index_shape)
    output = poisoned(index_shape, dtype)
    assert gather.gather(input, dim, index, out=output) is output
    assert torch.equal(output, torch.gather(input, dim, index))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_non_contiguous(dtype):
    input = transposed(random_input((6, 5, 9), dtype))
    index = transposed(torch.randint(0, 5, (6, 13, 7)))
    output = poisoned(index.shape, dtype)
    gather.gather(input, 1, index, out=output)
    assert torch.equal(output, torch.gather(input, 1, index))


# --- index_select --------------------------------------------------------------------------------

INDEX_SELECT_CASES = (((7,), 0, 11), ((5, 33), 1, 9), ((5, 33), 0, 3), ((2, 3, 4, 5), 2, 6), ((3, 1, 6), 1, 4))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim, length", INDEX_SELECT_CASES)
def test_index_select(shape, dim, length, dtype):
    input = random_input(shape, dtype)
    index = torch.randint(0, shape[dim], (length,))  # repeats included
    expected = torch.index_select(input, dim, index)
    output = poisoned(expected.shape, dtype)
    assert index_select.index_select(input, dim, index, out=output) is output
    assert torch.equal(output, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_non_contiguous(dtype):
    input = random_input((10, 4, 7), dtype).permute(1, 2, 0)  # (4, 7, 10)
    index = torch.randint(0, 10, (12,))[::2]  # a strided index
    expected = torch.index_select(input, 2, index)
    output = poisoned(expected.shape, dtype)
    index_select.index_select(input, 2, index, out=output)
    assert torch.equal(output, expected)


# --- select_copy ---------------------------------------------------------------------------------

SELECT_CASES = (((7,), 0, 3), ((5, 33), 1, -1), ((5, 33), 0, 4), ((5, 4, 6), 1, 2), ((3, 5, 4, 6), 3, 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim, index", SELECT_CASES)
def test_select_copy(shape, dim, index, dtype):
    input = random_input(shape, dtype)
    expected = input.select(dim, index)
    output = poisoned(expected.shape, dtype)
    assert select_copy.select_copy(input, dim, index, out=output) is output
    assert torch.equal(output, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_select_copy_every_index_of_a_non_contiguous_input(dtype):
    input = transposed(random_input((3, 5, 7), dtype))
    for index in range(-5, 5):
        output = poisoned((3, 7), dtype)
        select_copy.select_copy(input, 1, index, out=output)
        assert torch.equal(output, input[:, index])


# --- embedding -----------------------------------------------------------------------------------

EMBEDDING_CASES = (((7,), 10, 33), ((3, 5), 100, 1), ((2, 3, 5), 7, 17), ((1,), 1, 1), ((4, 2, 3, 2), 20, 16))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_shape, num_embeddings, embedding_dim", EMBEDDING_CASES)
def test_embedding(index_shape, num_embeddings, embedding_dim, dtype):
    weight = random_input((num_embeddings, embedding_dim), dtype)
    index = torch.randint(0, num_embeddings, index_shape)
    output = poisoned((*index_shape, embedding_dim), dtype)
    assert embedding.embedding(index, weight, out=output) is output
    assert torch.equal(output, F.embedding(index, weight))


@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding_non_contiguous_weight(dtype):
    weight = random_input((19, 30), dtype).t()  # (30, 19), column-major
    index = torch.randint(0, 30, (6, 7))
    output = poisoned((6, 7, 19), dtype)
    embedding.embedding(index, weight, out=output)
    assert torch.equal(output, F.embedding(index, weight))


# --- diag ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", (1, 7, 33))
@pytest.mark.parametrize("diagonal", (0, 2, -3))
def test_diag_of_a_vector(length, diagonal, dtype):
    input = random_input((length,), dtype)
    size = length + abs(diagonal)
    output = poisoned((size, size), dtype)
    assert diag.diag(input, diagonal, out=output) is output
    assert torch.equal(output, torch.diag(input.float(), diagonal).to(dtype))  # no float16 diag in torch


DIAG_MATRIX_CASES = (((7, 33), (0, 5, -3, 32, -6)), ((20, 5), (0, 4, -1, -19)), ((1, 1), (0,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, diagonals", DIAG_MATRIX_CASES)
def test_diag_of_a_matrix(shape, diagonals, dtype):
    for input in (random_input(shape, dtype), transposed(random_input(shape, dtype))):
        for diagonal in diagonals:
            expected = torch.diag(input.float(), diagonal).to(dtype)
            output = poisoned(expected.shape, dtype)
            assert diag.diag(input, diagonal, out=output) is output
            assert torch.equal(output, expected)


# --- bincount ------------------------------------------------------------------------------------

BINCOUNT_CASES = ((1, 1, 0), (333, 7, 0), (1000, 50, 60), (77, 3, 2), (4097, 500, 0))


@pytest.mark.parametrize("size, high, minlength", BINCOUNT_CASES)
def test_bincount(size, high, minlength):
    input = torch.randint(0, high, (size,))
    expected = torch.bincount(input, minlength=minlength)
    output = poisoned(expected.shape, torch.int64)
    assert bincount.bincount(input, minlength=minlength, out=output) is output
    assert torch.equal(output, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size, high, minlength", BINCOUNT_CASES)
def test_bincount_with_weights(size, high, minlength, dtype):
    input = torch.randint(0, high, (size,))
    weights = random_input((size,), dtype)
    expected = torch.bincount(input, weights.double(), minlength=minlength)
    result_dtype = torch.bincount(input[:1], weights[:1]).dtype  # float32 for float32, else float64
    output = poisoned(expected.shape, result_dtype)
    assert bincount.bincount(input, weights, minlength=minlength, out=output) is output
    # The bins add in whatever order the atomics land in: a float32 tolerance.
    torch.testing.assert_close(output, expected.to(result_dtype), rtol=1e-5, atol=1e-4)


def test_bincount_of_a_non_contiguous_input():
    input = torch.randint(0, 9, (300,))[::3]
    weights = random_input((200,), torch.float32)[::2]
    output = poisoned((9,), torch.float32)
    bincount.bincount(input, weights, minlength=9, out=output)
    assert_matches(output, torch.bincount(input, weights.double(), minlength=9), atol=1e-4)
