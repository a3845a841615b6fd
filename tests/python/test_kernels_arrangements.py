"""Kernels over arrangements beyond tiling: sliced views handed in as non-tensor arguments."""

import numpy
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def _sliced_arrangement(input, output, input_slices, output_slices, BLOCK=ninetoothed.block_size()):
    return input[input_slices].tile((1, BLOCK)), output[output_slices].tile((1, BLOCK))


def _doubled(input, output):
    output = input * 2  # noqa: F841


@pytest.mark.parametrize(
    "input_shape, output_shape, input_slices, output_slices",
    (
        ((6, 9), (7, 6), (slice(1, 4), slice(None, None, 2)), (slice(2, 5), slice(1, None))),
        ((5, 5), (5, 5), (slice(None, None, -1), slice(-3, None)), (slice(None), slice(0, 3))),
        ((40, 1100), (40, 1100), (slice(3, -3), slice(None)), (slice(6, None), slice(None))),
    ),
)
def test_sliced_views_given_as_non_tensor_arguments(input_shape, output_shape, input_slices, output_slices):
    kernel = ninetoothed.make(
        _sliced_arrangement, _doubled, (Tensor(2), Tensor(2), input_slices, output_slices)
    )
    input = torch.randn(input_shape)
    output = torch.full(output_shape, float("nan"))
    kernel(input, output)
    expected = numpy.full(output_shape, numpy.nan, dtype=numpy.float32)
    expected[output_slices] = input.numpy()[input_slices] * 2  # numpy: negative steps allowed
    assert torch.allclose(output, torch.from_numpy(expected), equal_nan=True)


OFFSET_ROWS = ninetoothed.Symbol("OFFSET_ROWS", constexpr=True)
OFFSET_COLS = ninetoothed.Symbol("OFFSET_COLS", constexpr=True)


def _offsets_arrangement(x, rows, cols, flat):
    tile = (OFFSET_ROWS, OFFSET_COLS)
    return x.tile(tile), rows.tile(tile), cols.tile(tile), flat.tile(tile)


def _offsets_application(x, rows, cols, flat):
    rows = x.offsets(0)[:, None]  # 1-D along the block's rows
    cols = x.offsets(-1)[None, :] + x.source.shape[1] * 1000
    flat = x.offsets()  # noqa: F841


@pytest.mark.parametrize("transposed", (False, True))
def test_offsets_and_source_shape(transposed):
    x = torch.randn(10, 7).t() if transposed else torch.randn(7, 10)
    outputs = [torch.full((7, 10), -1, dtype=torch.int64) for _ in range(3)]
    kernel = ninetoothed.make(_offsets_arrangement, _offsets_application, tuple(Tensor(2) for _ in range(4)))
    kernel(x, *outputs, OFFSET_ROWS=4, OFFSET_COLS=4)
    rows, cols = torch.arange(7)[:, None], torch.arange(10)[None, :]
    assert torch.equal(outputs[0], rows.expand(7, 10))
    assert torch.equal(outputs[1], cols.expand(7, 10) + 10000)
    assert torch.equal(outputs[2], rows * x.stride(0) + cols * x.stride(1))


ROW_BLOCK = ninetoothed.Symbol("ROW_BLOCK", constexpr=True)


def _even_columns_arrangement(x, output):
    x_arranged = x.tile((1, ROW_BLOCK)).tile((1, -1))
    x_arranged.dtype = x_arranged.dtype.squeeze(0)
    return x_arranged, output.tile((1, 1))


def _even_columns_application(x, output):
    total = ntl.zeros((1, ROW_BLOCK), dtype=ntl.float32)
    for k in range(x.shape[0]):
        columns = x[k].offsets(1)[None, :]
        total += ntl.where((columns % 2 == 0) & (columns < x.source.shape[1]), x[k], 0.0)
    output = ntl.sum(total, axis=1, keep_dims=True)  # noqa: F841


@pytest.mark.parametrize("rows, cols", ((3, 17), (1, 1), (5, 64)))
def test_offsets_of_indexed_middle_levels(rows, cols):
    kernel = ninetoothed.make(_even_columns_arrangement, _even_columns_application, (Tensor(2), Tensor(2)))
    x = torch.randn(rows, cols)
    output = torch.full((rows, 1), float("nan"))
    kernel(x, output, ROW_BLOCK=8)
    expected = x.double()[:, ::2].sum(1, keepdim=True)
    torch.testing.assert_close(output.double(), expected, rtol=1e-5, atol=1e-5)


def test_parameters_sharing_a_source_must_agree_on_strides():
    shared = Tensor(2)
    kernel = ninetoothed.make(_offsets_arrangement, _offsets_application, (shared,) * 4)
    x = torch.randn(10, 7).t()
    outputs = [torch.full((7, 10), -1, dtype=torch.int64) for _ in range(3)]
    with pytest.raises(ValueError, match="share its strides"):
        kernel(x, *outputs, OFFSET_ROWS=4, OFFSET_COLS=4)
    assert all((o == -1).all() for o in outputs)


CHUNK = ninetoothed.Symbol("CHUNK", constexpr=True)
GROUP = ninetoothed.Symbol("GROUP", constexpr=True)


def _four_level_arrangement(x, output):
    # Programs over rows; each row is groups of chunks of elements: four levels.
    return x.tile((1, CHUNK)).tile((1, GROUP)).tile((1, -1)), output.tile((1, 1))


def _four_level_application(x, output):
    total = ntl.zeros((1, CHUNK), dtype=ntl.float32)
    for i in range(x.shape[1]):
        group = x[0, i]
        for j in range(group.shape[1]):
            total += group[0, j]
    output = ntl.sum(total, axis=1, keep_dims=True)  # noqa: F841


@pytest.mark.parametrize("rows, cols", ((3, 100), (1, 1), (4, 64)))
def test_four_levels(rows, cols):
    kernel = ninetoothed.make(_four_level_arrangement, _four_level_application, (Tensor(2), Tensor(2)))
    x = torch.randn(rows, cols)
    output = torch.full((rows, 1), float("nan"))
    kernel(x, output, CHUNK=8, GROUP=3)
    torch.testing.assert_close(output.double(), x.double().sum(1, keepdim=True), rtol=1e-5, atol=1e-5)
