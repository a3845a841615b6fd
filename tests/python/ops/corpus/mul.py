"""torch.mul of two tensors (`other` broadcast by the arrangement) or of a tensor and a number."""

import functools

import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def application(input, other, output):
    output = input * other  # noqa: F841


def premake(ndim, broadcast_dims=(), scalar_other=False, dtype=None, block_size=None):
    if scalar_other:
        arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)
        other = Tensor(0)
    else:
        arrangement_ = functools.partial(
            element_wise.broadcasting_arrangement,
            broadcast_dims=((), broadcast_dims, ()),
            block_size=block_size,
        )
        other = Tensor(ndim, shape=element_wise.broadcast_shape(ndim, broadcast_dims), dtype=dtype)

    tensors = (Tensor(ndim, dtype=dtype), other, Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def mul(input, other, *, out=None):
    output = torch.empty_like(input) if out is None else out

    if isinstance(other, torch.Tensor):
        other, broadcast_dims = element_wise.broadcastable(other, input)
        kernel = cached_make(premake, input.ndim, broadcast_dims)
    else:
        kernel = cached_make(premake, input.ndim, scalar_other=True)

    kernel(input, other, output)

    return output
