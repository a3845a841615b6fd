"""topk along any dim: the k largest (or smallest) values, sorted, with their indices.

One program per line along `dim`. The values come from `ntl.topk` (largest first; the
smallest are the largest of the negated line); each element's index is scattered to its
stable rank in the output block, which holds only k places, so ranks from k on write
nothing.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus.sort import arrange_lines, stable_ranks


def arrangement(input, values, indices, largest, dim):
    return (
        arrange_lines(input, dim),
        arrange_lines(values, dim),
        arrange_lines(indices, dim),
        largest,
    )


def application(input, values, indices, largest):
    k = values.shape[0]
    if largest:
        values = ntl.topk(input, k)  # noqa: F841
    else:
        values = -ntl.topk(-input, k)  # noqa: F841
    indices[stable_ranks(input, largest)] = ntl.arange(0, input.shape[0])


def premake(ndim, dim, dtype=None):
    arrangement_ = functools.partial(arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=ninetoothed.int64, shape_options={"constexpr": True}),
        Tensor(0, constexpr=True),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """torch.topk(input, k, dim, largest, sorted=True, out=(values, indices)).

    Among equal values the one with the smaller index comes first."""
    ndim = max(input.ndim, 1)
    dim = dim % ndim
    size = input.shape[dim] if input.ndim else 1
    if not 0 < k <= size:
        raise RuntimeError(f"selected index k out of range (k={k}, size {size})")

    if out is None:
        shape = list(input.shape)
        shape[dim] = k
        out = (torch.empty(shape, dtype=input.dtype), torch.empty(shape, dtype=torch.int64))
    values, indices = out

    kernel = _cached_make(premake, input.ndim, dim)
    kernel(input, values, indices, bool(largest))

    return values, indices
