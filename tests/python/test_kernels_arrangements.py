"""Kernels over arrangements beyond tiling: sliced views handed in as non-tensor arguments."""

import numpy
import pytest
import torch

import ninetoothed
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
