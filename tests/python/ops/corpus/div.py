"""torch.div with `rounding_mode` None, "trunc" or "floor", for floating and integer tensors.

Integer division truncates toward zero on blocks (as in Triton), so floor division corrects the
quotient where the remainder is non-zero and the operands' signs differ.
"""

import functools

import torch
import ninetoothed.language as ntl
from ninetoothed import Tensor
from ninetoothed.language import libdevice

from corpus import element_wise
from corpus.caching import cached_make


def true_application(input, other, output):
    output = input / other  # noqa: F841


def trunc_application(input, other, output):
    if input.dtype.is_floating():
        output = libdevice.trunc(input / other)  # noqa: F841
    else:
        output = input // other  # noqa: F841


def floor_application(input, other, output):
    if input.dtype.is_floating():
        output = ntl.floor(input / other)  # noqa: F841
    else:
        quotient = input // other
        inexact = input % other != 0
        output = ntl.where(inexact & ((input < 0) != (other < 0)), quotient - 1, quotient)  # noqa: F841


def premake(ndim, rounding_mode=None, broadcast_dims=(), dtype=None, block_size=None):
    arrangement_ = functools.partial(
        element_wise.broadcasting_arrangement,
        broadcast_dims=((), broadcast_dims, ()),
        block_size=block_size,
    )

    if rounding_mode == "trunc":
        application = trunc_application
    elif rounding_mode == "floor":
        application = floor_application
    else:
        application = true_application

    tensors = (
        Tensor(ndim, dtype=dtype),
        Tensor(ndim, shape=element_wise.broadcast_shape(ndim, broadcast_dims), dtype=dtype),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, application, tensors


def div(input, other, *, rounding_mode=None, out=None):
    other, broadcast_dims = element_wise.broadcastable(other, input)
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, rounding_mode, broadcast_dims)

    kernel(input, other, output)

    return output
