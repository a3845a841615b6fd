"""index_select along a dim, as torch.index_select.

One program per line along `dim` (the dim permuted last, the others flattened into rows):
it loads its line whole and reads it at the positions the index holds, `input[index]`. The
index is one untiled block every program reads whole.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Tensor

from corpus.sort import arrange_lines


def arrangement(input, index, output, dim):
    return arrange_lines(input, dim), index, arrange_lines(output, dim)


def application(input, index, output):
    output = input[index]  # noqa: F841


def premake(ndim, dim, dtype=None):
    arrangement_ = functools.partial(arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(1, dtype=ninetoothed.int64, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def index_select(input, dim, index, *, out=None):
    """torch.index_select(input, dim, index, out=out) for a 1-D index."""
    ndim = max(input.ndim, 1)
    dim = dim % ndim
    index = index.reshape(-1)
    size = input.shape[dim] if input.ndim else 1
    if ((index < 0) | (index >= size)).any():
        raise IndexError("index out of range in self")

    shape = list(input.shape)
    shape[dim] = len(index)
    output = torch.empty(shape, dtype=input.dtype) if out is None else out

    kernel = _cached_make(premake, input.ndim, dim)
    kernel(input, index, output)

    return output
