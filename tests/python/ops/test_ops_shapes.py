"""The shape operators of the corpus (flip, rot90, cat, stack) against torch, element by
element (exact: pure data movement), on poisoned outputs: 1-D to 4-D, odd sizes, partial
blocks, non-contiguous inputs, float32 and float16."""

import zlib

import pytest
import torch

from corpus import cat, flip, rot90, stack
from ops_testing import DTYPES, poisoned


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def random_input(shape, dtype):
    return torch.randn(shape).to(dtype)


def transposed(input):
    """The same values with the first and last dims' strides swapped (not contiguous)."""
    return input.transpose(0, -1).contiguous().transpose(0, -1)


# --- flip ----------------------------------------------------------------------------------------

FLIP_CASES = (
    ((1,), (0,)),
    ((77,), (0,)),
    ((3, 33), (1,)),
    ((3, 33), (0, 1)),
    ((5, 4, 6), (0, 2)),
    ((2, 3, 5, 7), (0, 1, 2, 3)),
    ((9, 2, 3), (-1, 1)),
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dims", FLIP_CASES)
def test_flip(shape, dims, dtype):
    for input in (random_input(shape, dtype), transposed(random_input(shape, dtype))):
        output = poisoned(shape, dtype)
        assert flip.flip(input, dims, out=output) is output
        assert torch.equal(output, torch.flip(input, dims))


def test_flip_of_a_sliced_view():
    input = random_input((8, 40), torch.float32)[1::2, 3:37:3]  # (4, 12), strides (80, 3)
    output = poisoned((4, 12), torch.float32)
    flip.flip(input, 1, out=output)
    assert torch.equal(output, torch.flip(input, (1,)))


# --- rot90 ---------------------------------------------------------------------------------------

ROT90_CASES = (((7, 5), (0, 1)), ((3, 33, 4), (2, 0)), ((2, 5, 3, 7), (1, 3)))


@pytest.mark.parametrize("k", (1, 2, 3, -1))
@pytest.mark.parametrize("shape, dims", ROT90_CASES)
def test_rot90(shape, dims, k):
    input = random_input(shape, torch.float32)
    expected = torch.rot90(input, k, dims)
    output = poisoned(expected.shape, torch.float32)
    assert rot90.rot90(input, k, dims, out=output) is output
    assert torch.equal(output, expected)


@pytest.mark.parametrize("k", (1, 2, 3))
def test_rot90_float16(k):
    input = random_input((5, 3, 9), torch.float16)
    expected = torch.rot90(input, k, (2, 1))
    output = poisoned(expected.shape, torch.float16)
    rot90.rot90(input, k, (2, 1), out=output)
    assert torch.equal(output, expected)


@pytest.mark.parametrize("k", (0, 1, 6))
def test_rot90_non_contiguous(k):
    input = transposed(random_input((9, 4, 11), torch.float32))
    expected = torch.rot90(input, k, (0, 2))
    output = poisoned(expected.shape, torch.float32)
    rot90.rot90(input, k, (0, 2), out=output)
    assert torch.equal(output, expected)


# --- cat -----------------------------------------------------------------------------------------

CAT_CASES = (
    (((7,), (1,), (12,)), 0),
    (((5, 33), (5, 17)), 1),
    (((5, 4, 6), (1, 4, 6)), 0),
    (((3, 5, 4, 6), (3, 5, 1, 6), (3, 5, 7, 6)), -2),
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes, dim", CAT_CASES)
def test_cat(shapes, dim, dtype):
    inputs = [random_input(shape, dtype) for shape in shapes]
    inputs[0] = transposed(inputs[0])
    expected = torch.cat(inputs, dim)
    output = poisoned(expected.shape, dtype)
    assert cat.cat(inputs, dim, out=output) is output
    assert torch.equal(output, expected)


def test_cat_with_an_empty_input():
    inputs = [random_input((2, 3), torch.float32), torch.empty((2, 0)), random_input((2, 5), torch.float32)]
    output = poisoned((2, 8), torch.float32)
    cat.cat(inputs, 1, out=output)
    assert torch.equal(output, torch.cat(inputs, 1))


# --- stack ---------------------------------------------------------------------------------------

STACK_CASES = (((7,), 0, 3), ((7,), 1, 2), ((5, 33), 1, 2), ((2, 3, 5, 2), 2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim, count", STACK_CASES)
def test_stack(shape, dim, count, dtype):
    inputs = [random_input(shape, dtype) for _ in range(count)]
    inputs[-1] = transposed(inputs[-1])
    expected = torch.stack(inputs, dim)
    output = poisoned(expected.shape, dtype)
    assert stack.stack(inputs, dim, out=output) is output
    assert torch.equal(output, expected)
