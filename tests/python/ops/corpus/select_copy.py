"""select_copy: torch.select(input, dim, index) copied into a new tensor.

The arrangement selects the slice with an integer index (the dim goes away), and the
selected view and the output are flattened and tiled alike; the index is a constexpr symbol
given at launch, so one kernel serves every index.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Symbol, Tensor

INDEX = Symbol("index", constexpr=True)


def arrangement(input, output, dim, block_size):
    selected = input[(slice(None),) * dim + (INDEX,)]
    if selected.ndim == 0:
        selected = selected.unsqueeze(0)

    return selected.flatten().tile((block_size,)), output.flatten().tile((block_size,))


def application(input, output):
    output = input  # noqa: F841


def premake(ndim, dim, dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, dim=dim, block_size=block_size)

    tensors = (Tensor(ndim, dtype=dtype), Tensor(max(ndim - 1, 1), dtype=dtype))

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def select_copy(input, dim, index, *, out=None, block_size=64):
    """torch.select_copy(input, dim, index, out=out)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = dim % input.ndim
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {size} at dimension {dim}")
    index %= size

    shape = [s for d, s in enumerate(input.shape) if d != dim]
    output = torch.empty(shape, dtype=input.dtype) if out is None else out

    kernel = _cached_make(premake, input.ndim, dim, block_size=block_size)
    kernel(input, output.view(shape or [1]), index=index)

    return output
