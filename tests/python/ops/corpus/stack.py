"""stack: join tensors along a new dim, as torch.stack.

One launch per input: the arrangement selects the input's place in the output with a
constexpr index along the new dim (the dim goes away), and that view and the input are
flattened and tiled alike, so the application is a copy.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Symbol, Tensor

POSITION = Symbol("position", constexpr=True)


def arrangement(input, output, dim, block_size):
    place = output[(slice(None),) * dim + (POSITION,)]

    return input.flatten().tile((block_size,)), place.flatten().tile((block_size,))


def application(input, output):
    output = input  # noqa: F841


def premake(ndim, dim, dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, dim=dim, block_size=block_size)

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim + 1, dtype=dtype))

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def stack(tensors, dim=0, *, out=None, block_size=32):
    """torch.stack(tensors, dim, out=out) for tensors of one dtype and shape (at least 1-D)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = list(tensors[0].shape)
    if any(list(tensor.shape) != shape for tensor in tensors):
        raise RuntimeError("stack expects each tensor to be equal size")
    dim = dim % (len(shape) + 1)

    output = torch.empty(shape[:dim] + [len(tensors)] + shape[dim:], dtype=tensors[0].dtype) if out is None else out

    kernel = _cached_make(premake, len(shape), dim, block_size=block_size)
    for position, tensor in enumerate(tensors):
        kernel(tensor, output, position=position)

    return output
