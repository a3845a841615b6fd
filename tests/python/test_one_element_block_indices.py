"""Indices that are one-element blocks, as upstream's tests write them (issue 26, item 3).

`indices.tile((1,))` gives each program a block of one index; upstream's application then
writes `output[row] = input` with `row` that block. Wherever an integer scalar indexes a
middle level (loads, stores, gathers and scatters at positions), a one-element integer block
does too, as its one value.
"""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

SENTINEL = -7.25  # what the rows no program writes must still hold


def scatter_rows_arrangement(input, indices, output):
    input_arranged = input.tile((1, -1)).squeeze(1)
    input_arranged.dtype = input_arranged.dtype.squeeze(0)

    indices_arranged = indices.tile((1,))

    output_arranged = output.tile((1, -1)).tile((-1, -1)).squeeze(0).expand((input_arranged.shape[0],))
    output_arranged.dtype = output_arranged.dtype.squeeze(1)
    output_arranged.dtype.dtype = output_arranged.dtype.dtype.squeeze(0)

    return input_arranged, indices_arranged, output_arranged


def scatter_rows_application(input, index, output):
    row = index

    output[row] = input


def accumulate_rows_application(input, index, output):
    row = index

    output[row] = output[row] + input


def gather_rows_arrangement(input, indices, output):
    input_arranged = input.tile((1, -1)).tile((-1, -1)).squeeze(0).expand((indices.shape[0],))
    input_arranged.dtype = input_arranged.dtype.squeeze(1)
    input_arranged.dtype.dtype = input_arranged.dtype.dtype.squeeze(0)

    indices_arranged = indices.tile((1,))

    output_arranged = output.tile((1, -1)).squeeze(1)
    output_arranged.dtype = output_arranged.dtype.squeeze(0)

    return input_arranged, indices_arranged, output_arranged


def gather_rows_application(input, index, output):
    output = input[index]  # noqa: F841


def gather_at_positions_application(input, index, output):
    # A middle-level index and positions in the block: the row, then its columns reversed.
    positions = ntl.arange(0, output.shape[0])
    output = input[index, output.shape[0] - 1 - positions]  # noqa: F841


def _tensors():
    # The -1 tiles of input and output must agree in size: constexpr shapes, as upstream's test.
    shape_options = {"constexpr": True}
    return (
        Tensor(2, shape_options=shape_options),
        Tensor(1, shape_options=shape_options),
        Tensor(2, shape_options=shape_options),
    )


@pytest.mark.parametrize("index_dtype", (torch.int64, torch.int32))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("num_rows, num_cols, num_indices", ((1000, 129, 11), (37, 1, 37), (5, 300, 1)))
def test_scatter_rows_by_one_element_blocks(num_rows, num_cols, num_indices, dtype, index_dtype):
    # Upstream's test_squeezing_the_innermost_level, at odd sizes.
    kernel = ninetoothed.make(scatter_rows_arrangement, scatter_rows_application, _tensors())
    input = torch.randn((num_indices, num_cols)).to(dtype)
    indices = torch.randperm(num_rows)[:num_indices].to(index_dtype)
    output = torch.full((num_rows, num_cols), SENTINEL, dtype=dtype)
    kernel(input, indices, output)
    expected = torch.full((num_rows, num_cols), SENTINEL, dtype=torch.float64)
    expected[indices.long()] = input.double()
    assert torch.equal(output.double(), expected)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_load_and_store_through_one_element_blocks(dtype):
    kernel = ninetoothed.make(scatter_rows_arrangement, accumulate_rows_application, _tensors())
    num_rows, num_cols, num_indices = 301, 67, 45
    input = torch.randn((num_indices, num_cols)).to(dtype)
    indices = torch.randperm(num_rows)[:num_indices]
    start = torch.randn((num_rows, num_cols)).to(dtype)
    output = start.clone()
    kernel(input, indices, output)
    expected = start.double()
    expected[indices] = (start[indices].float() + input.float()).to(dtype).double()
    assert torch.equal(output.double(), expected)


@pytest.mark.parametrize("index_dtype", (torch.int64, torch.int32, torch.int16))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_gather_rows_by_one_element_blocks(dtype, index_dtype):
    num_rows, num_cols, num_indices = 93, 131, 250  # indices repeat: every program reads
    kernel = ninetoothed.make(gather_rows_arrangement, gather_rows_application, _tensors())
    input = torch.randn((num_rows, num_cols)).to(dtype)
    indices = torch.randint(0, num_rows, (num_indices,), dtype=index_dtype)
    output = torch.full((num_indices, num_cols), float("nan"), dtype=dtype)
    kernel(input, indices, output)
    assert torch.equal(output.double(), input.double()[indices.long()])


def test_gather_at_positions_after_a_one_element_block_index():
    kernel = ninetoothed.make(
        gather_rows_arrangement, gather_at_positions_application, _tensors()
    )
    num_rows, num_cols, num_indices = 17, 64, 23
    input = torch.randn((num_rows, num_cols))
    indices = torch.randint(0, num_rows, (num_indices,))
    output = torch.full((num_indices, num_cols), float("nan"))
    kernel(input, indices, output)
    assert torch.equal(output, input[indices].flip(1))


def test_an_index_block_of_more_than_one_element_is_still_refused():
    def arrangement(input, indices, output):
        input_arranged, _, output_arranged = scatter_rows_arrangement(input, indices, output)
        return input_arranged, indices.tile((2,)), output_arranged

    kernel = ninetoothed.make(arrangement, scatter_rows_application, _tensors())
    with pytest.raises(TypeError, match="integer scalars"):
        kernel(torch.randn(4, 3), torch.arange(4), torch.zeros(8, 3))


def test_a_float_index_block_is_still_refused():
    kernel = ninetoothed.make(scatter_rows_arrangement, scatter_rows_application, _tensors())
    with pytest.raises(TypeError, match="integer scalars"):
        kernel(torch.randn(4, 3), torch.arange(4.0), torch.zeros(8, 3))
