"""bitwise_not (bool and integer tensors) and logical_not (any tensor, bool result), with `~`."""

import functools

import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def bitwise_not_application(input, output):
    output = ~input  # noqa: F841


def logical_not_application(input, output):
    output = ~(input != 0)  # noqa: F841


def premake(ndim, op="bitwise_not", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    if op == "bitwise_not":
        application = bitwise_not_application
        tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))
    else:
        application = logical_not_application
        tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=bool))

    return arrangement_, application, tensors


def bitwise_not(input, *, out=None):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, "bitwise_not")(input, output)

    return output


def logical_not(input, *, out=None):
    output = torch.empty(input.shape, dtype=torch.bool) if out is None else out

    cached_make(premake, input.ndim, "logical_not")(input, output)

    return output
