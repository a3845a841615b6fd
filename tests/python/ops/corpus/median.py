"""median along a dim (values and indices; the lower of the two middle values), as torch.

One program per line along `dim`: the line is sorted (`ntl.sort`) and the middle value
gathered from it; the index is that of the element whose stable rank is the middle one.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus.sort import arrange_lines, stable_ranks


def arrange_reduced(tensor):
    """The output of a reduction along `dim` (that dim removed, the rest flattened as the
    lines are): one element per program."""
    return tensor.flatten().tile((1,))


def arrangement(input, values, indices, dim):
    return arrange_lines(input, dim), arrange_reduced(values), arrange_reduced(indices)


def application(input, values, indices):
    middle = (input.shape[0] - 1) // 2
    values = ntl.gather(ntl.sort(input), ntl.full((1,), middle, ntl.int32), 0)  # noqa: F841
    at_middle = stable_ranks(input, False) == middle
    indices = ntl.sum(ntl.where(at_middle, ntl.arange(0, input.shape[0]), 0))  # noqa: F841


def premake(ndim, dim, dtype=None):
    arrangement_ = functools.partial(arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(max(ndim - 1, 1), dtype=dtype),
        Tensor(max(ndim - 1, 1), dtype=ninetoothed.int64),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def median(input, dim=-1, keepdim=False, *, out=None):
    """torch.median(input, dim, keepdim, out=(values, indices))."""
    ndim = max(input.ndim, 1)
    dim = dim % ndim

    shape = list(input.shape)
    if input.ndim:
        shape[dim] = 1
    if out is None:
        out = (torch.empty(shape, dtype=input.dtype), torch.empty(shape, dtype=torch.int64))
    values, indices = out
    reduced = tuple(size for d, size in enumerate(input.shape) if d != dim)

    kernel = _cached_make(premake, input.ndim, dim)
    kernel(input, values.view(reduced or (1,)), indices.view(reduced or (1,)))

    if not keepdim:
        values, indices = values.view(reduced), indices.view(reduced)
    return values, indices
