"""rot90: rotate by k quarter turns in the plane of two dims, from the first towards the
second, as torch.rot90.

A quarter turn is a flip of the second dim followed by swapping the two dims; three are a flip
of the first followed by the swap; two flip both. The arrangement builds that view of the
input (step -1 slices, then a permutation) and tiles it as the output is tiled, so the
application is a copy.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Tensor


def rotated(input, k, dims):
    first, second = dims
    flipped = {1: (second,), 2: (first, second), 3: (first,)}.get(k, ())
    view = input[tuple(slice(None, None, -1) if d in flipped else slice(None) for d in range(input.ndim))]
    if k % 2:
        order = list(range(input.ndim))
        order[first], order[second] = second, first
        view = view.permute(tuple(order))
    return view


def arrangement(input, output, k, dims, block_shape):
    return rotated(input, k, dims).tile(block_shape), output.tile(block_shape)


def application(input, output):
    output = input  # noqa: F841


def premake(ndim, k, dims, dtype=None, block_shape=None):
    if block_shape is None:
        block_shape = tuple(ninetoothed.block_size() for _ in range(ndim))

    arrangement_ = functools.partial(arrangement, k=k, dims=dims, block_shape=block_shape)

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def rot90(input, k=1, dims=(0, 1), *, out=None):
    """torch.rot90(input, k, dims)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    dims = tuple(dim % input.ndim for dim in dims)
    if dims[0] == dims[1]:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4

    shape = list(input.shape)
    if k % 2:
        shape[dims[0]], shape[dims[1]] = shape[dims[1]], shape[dims[0]]
    output = torch.empty(shape, dtype=input.dtype) if out is None else out

    # Blocks of 8 along the two dims of the plane, 2 along the others.
    block_shape = tuple(8 if d in dims else 2 for d in range(input.ndim))
    kernel = _cached_make(premake, input.ndim, k, dims, block_shape=block_shape)
    kernel(input, output)

    return output
