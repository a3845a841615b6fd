"""torch.amax and torch.amin over one dim or several, and torch.max along a dim with the indices.

Padding reads the identity of the reduction (-inf or +inf). max keeps, per lane of the block, the
largest value seen and where it was; the row's index is the smallest of the lanes holding the maximum.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make
from corpus.sum import reduced_output


def amax_application(input, output):
    acc = ntl.full(input.dtype.shape, float("-inf"), dtype=input.dtype.dtype)

    for i in range(input.shape[0]):
        acc = max(acc, input[i])

    output[0] = ntl.max(acc, 0)


def amin_application(input, output):
    acc = ntl.full(input.dtype.shape, float("inf"), dtype=input.dtype.dtype)

    for i in range(input.shape[0]):
        acc = min(acc, input[i])

    output[0] = ntl.min(acc, 0)


def max_application(input, values, indices):
    block_size = input.dtype.shape[0]
    best = ntl.full(input.dtype.shape, float("-inf"), dtype=ntl.float32)
    best_index = ntl.zeros(input.dtype.shape, dtype=ntl.int64)

    for i in range(input.shape[0]):
        input_i = ntl.cast(input[i], ntl.float32)
        index = i * block_size + ntl.arange(0, block_size)
        better = input_i > best
        best = ntl.where(better, input_i, best)
        best_index = ntl.where(better, index, best_index)

    row_max = ntl.max(best, 0)

    values[0] = row_max
    indices[0] = ntl.min(ntl.where(best == row_max, best_index, input.shape[0] * block_size), 0)


def premake(ndim, dim, op="amax", dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    if op == "max":
        tensors = (
            Tensor(ndim, dtype=dtype, other=float("-inf")),
            Tensor(ndim, dtype=dtype),
            Tensor(ndim, dtype=ninetoothed.int64),
        )

        return arrangement_, max_application, tensors

    application, identity = (amax_application, float("-inf")) if op == "amax" else (amin_application, float("inf"))

    tensors = (Tensor(ndim, dtype=dtype, other=identity), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, dim, keepdim, op, out):
    dims = tuple(sorted(d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)))
    out, output = reduced_output(input, dims, keepdim, out)

    cached_make(premake, input.ndim, dims, op)(input, output)

    return out


def amax(input, dim, keepdim=False, *, out=None):
    return _launch(input, dim, keepdim, "amax", out)


def amin(input, dim, keepdim=False, *, out=None):
    return _launch(input, dim, keepdim, "amin", out)


def max_dim(input, dim, keepdim=False, *, out=None):
    """torch.max(input, dim): the largest values along `dim` and their indices (the first of equal ones)."""
    dim %= input.ndim

    if out is None:
        out = (None, None)

    values, values_kept = reduced_output(input, (dim,), keepdim, out[0])
    indices, indices_kept = reduced_output(input, (dim,), keepdim, out[1], torch.int64)

    cached_make(premake, input.ndim, dim, "max")(input, values_kept, indices_kept)

    return values, indices
