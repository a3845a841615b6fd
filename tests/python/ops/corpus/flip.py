"""flip along one or several dims.

The arrangement reverses the input along each flipped dim with a step -1 slice, so that
copying it element by element into the output, both flattened and tiled alike, is the flip.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Tensor


def arrangement(input, output, dims, block_size):
    reversing = tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(input.ndim))
    input_arranged = input[reversing].flatten().tile((block_size,))
    output_arranged = output.flatten().tile((block_size,))

    return input_arranged, output_arranged


def application(input, output):
    output = input  # noqa: F841


def premake(ndim, dims, dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, dims=dims, block_size=block_size)

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def _normalize_dims(dims, ndim):
    if isinstance(dims, int):
        dims = (dims,)
    normalized = []
    for dim in dims:
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (got {dim} for {ndim} dims)")
        if dim % ndim in normalized:
            raise RuntimeError(f"dim {dim % ndim} appears multiple times in the list of dims")
        normalized.append(dim % ndim)
    return tuple(sorted(normalized))


def flip(input, dims, *, out=None, block_size=64):
    """torch.flip(input, dims)."""
    dims = _normalize_dims(dims, input.ndim)
    output = torch.empty(input.shape, dtype=input.dtype) if out is None else out

    kernel = _cached_make(premake, input.ndim, dims, block_size=block_size)
    kernel(input, output)

    return output
