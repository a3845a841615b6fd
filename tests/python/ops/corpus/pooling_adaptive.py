"""Adaptive pooling (1-D and 2-D): windows of varying size, chosen by the output's size.

Output position `o` of `O` along an input dim of size `L` pools `[floor(o * L / O),
ceil((o + 1) * L / O))`. Such windows are no tiling, so each program takes a block of output
positions (the output flattened), computes its windows' bounds from the positions' offsets
and the two tensors' sizes, and gathers the window from the input's source, stepping through
the largest window a position can have. Leading dims are flattened into one batch dim.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK_SIZE = ninetoothed.block_size()

MAX_NUM_CONFIGS = 1


def arrangement(input, output, block_size=None):
    if block_size is None:
        block_size = BLOCK_SIZE

    # The input is not tiled: every program reads its windows from the whole input.
    input_arranged = input

    output_arranged = output.flatten().tile((block_size,))

    return input_arranged, output_arranged


def window_bounds(index, input_size, output_size):
    """The input positions `[start, end)` output position `index` pools."""
    start = index * input_size // output_size
    end = ((index + 1) * input_size + output_size - 1) // output_size

    return start, end


def adaptive_avg_pool1d_application(input, output):
    batch = output.offsets(0)
    start, end = window_bounds(output.offsets(1), input.source.shape[1], output.source.shape[1])

    total = ntl.zeros(output.shape, dtype=ntl.float32)

    for i in range(ntl.cdiv(input.source.shape[1], output.source.shape[1]) + 1):
        position = start + i
        value = input.source[batch, position]
        total += ntl.where(position < end, value, 0)

    output = total / (end - start)  # noqa: F841


def adaptive_max_pool1d_application(input, output):
    batch = output.offsets(0)
    start, end = window_bounds(output.offsets(1), input.source.shape[1], output.source.shape[1])

    maximum = ntl.full(output.shape, float("-inf"), dtype=ntl.float32)

    for i in range(ntl.cdiv(input.source.shape[1], output.source.shape[1]) + 1):
        position = start + i
        value = input.source[batch, position]
        maximum = ntl.maximum(maximum, ntl.where(position < end, value, float("-inf")))

    output = maximum  # noqa: F841


def adaptive_avg_pool2d_application(input, output):
    batch = output.offsets(0)
    row_start, row_end = window_bounds(output.offsets(1), input.source.shape[1], output.source.shape[1])
    col_start, col_end = window_bounds(output.offsets(2), input.source.shape[2], output.source.shape[2])

    total = ntl.zeros(output.shape, dtype=ntl.float32)

    for i in range(ntl.cdiv(input.source.shape[1], output.source.shape[1]) + 1):
        row = row_start + i

        for j in range(ntl.cdiv(input.source.shape[2], output.source.shape[2]) + 1):
            col = col_start + j
            value = input.source[batch, row, col]
            total += ntl.where((row < row_end) & (col < col_end), value, 0)

    output = total / ((row_end - row_start) * (col_end - col_start))  # noqa: F841


def adaptive_max_pool2d_application(input, output):
    batch = output.offsets(0)
    row_start, row_end = window_bounds(output.offsets(1), input.source.shape[1], output.source.shape[1])
    col_start, col_end = window_bounds(output.offsets(2), input.source.shape[2], output.source.shape[2])

    maximum = ntl.full(output.shape, float("-inf"), dtype=ntl.float32)

    for i in range(ntl.cdiv(input.source.shape[1], output.source.shape[1]) + 1):
        row = row_start + i

        for j in range(ntl.cdiv(input.source.shape[2], output.source.shape[2]) + 1):
            col = col_start + j
            value = input.source[batch, row, col]
            inside = (row < row_end) & (col < col_end)
            maximum = ntl.maximum(maximum, ntl.where(inside, value, float("-inf")))

    output = maximum  # noqa: F841


APPLICATIONS = {
    ("avg", 1): adaptive_avg_pool1d_application,
    ("max", 1): adaptive_max_pool1d_application,
    ("avg", 2): adaptive_avg_pool2d_application,
    ("max", 2): adaptive_max_pool2d_application,
}


def premake(mode, num_spatial_dims, dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    ndim = 1 + num_spatial_dims
    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, APPLICATIONS[(mode, num_spatial_dims)], tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords), max_num_configs=MAX_NUM_CONFIGS)


def _adaptive_pool(mode, input, output_size, num_spatial_dims, out):
    assert input.ndim in (num_spatial_dims + 1, num_spatial_dims + 2), "expected (N, C, *spatial) or (C, *spatial)."

    spatial_shape = tuple(input.shape[-num_spatial_dims:])

    if isinstance(output_size, int):
        output_size = (output_size,) * num_spatial_dims

    # `None` keeps the input's size.
    output_size = tuple(size if wanted is None else wanted for size, wanted in zip(spatial_shape, output_size))

    batch_shape = tuple(input.shape[:-num_spatial_dims])

    if out is None:
        out = torch.empty(batch_shape + output_size, dtype=input.dtype, device=input.device)

    assert out.shape == batch_shape + output_size, f"`out` has shape {tuple(out.shape)}."

    kernel = _cached_make(premake, mode, num_spatial_dims)

    kernel(input.reshape((-1,) + spatial_shape), out.view((-1,) + output_size))

    return out


def adaptive_avg_pool1d(input, output_size, *, out=None):
    return _adaptive_pool("avg", input, output_size, 1, out)


def adaptive_avg_pool2d(input, output_size, *, out=None):
    return _adaptive_pool("avg", input, output_size, 2, out)


def adaptive_max_pool1d(input, output_size, return_indices=False, *, out=None):
    assert not return_indices, "`return_indices` is not supported."

    return _adaptive_pool("max", input, output_size, 1, out)


def adaptive_max_pool2d(input, output_size, return_indices=False, *, out=None):
    assert not return_indices, "`return_indices` is not supported."

    return _adaptive_pool("max", input, output_size, 2, out)
