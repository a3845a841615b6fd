"""torch.where(condition, input, other); `condition` and `other` may broadcast."""

import functools

import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def application(condition, input, other, output):
    output = ntl.where(condition, input, other)  # noqa: F841


def premake(ndim, condition_broadcast_dims=(), other_broadcast_dims=(), dtype=None, block_size=None):
    arrangement_ = functools.partial(
        element_wise.broadcasting_arrangement,
        broadcast_dims=(condition_broadcast_dims, (), other_broadcast_dims, ()),
        block_size=block_size,
    )

    tensors = (
        Tensor(ndim, shape=element_wise.broadcast_shape(ndim, condition_broadcast_dims), dtype=bool),
        Tensor(ndim, dtype=dtype),
        Tensor(ndim, shape=element_wise.broadcast_shape(ndim, other_broadcast_dims), dtype=dtype),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, application, tensors


def where(condition, input, other, *, out=None):
    condition, condition_broadcast_dims = element_wise.broadcastable(condition, input)
    other, other_broadcast_dims = element_wise.broadcastable(other, input)
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, condition_broadcast_dims, other_broadcast_dims)

    kernel(condition, input, other, output)

    return output
