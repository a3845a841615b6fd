"""torch.add / torch.sub with a scalar `alpha`; `other` is broadcast by the arrangement."""

import functools

import ninetoothed
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def add_application(input, other, alpha, output):
    output = input + alpha * other  # noqa: F841


def sub_application(input, other, alpha, output):
    output = input - alpha * other  # noqa: F841


def premake(ndim, broadcast_dims=(), subtract=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(
        element_wise.broadcasting_arrangement,
        broadcast_dims=((), broadcast_dims, (), ()),
        block_size=block_size,
    )

    tensors = (
        Tensor(ndim, dtype=dtype),
        Tensor(ndim, shape=element_wise.broadcast_shape(ndim, broadcast_dims), dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, sub_application if subtract else add_application, tensors


def _launch(input, other, alpha, subtract, out):
    other, broadcast_dims = element_wise.broadcastable(other, input)
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, broadcast_dims, subtract)

    kernel(input, other, alpha, output)

    return output


def add(input, other, *, alpha=1, out=None):
    return _launch(input, other, alpha, False, out)


def sub(input, other, *, alpha=1, out=None):
    return _launch(input, other, alpha, True, out)
