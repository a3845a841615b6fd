"""torch.pow with a tensor exponent or a number (an int exponent multiplies repeatedly)."""

import functools

import torch
from ninetoothed import Tensor
from ninetoothed.language import libdevice

from corpus import element_wise
from corpus.caching import cached_make


def application(input, exponent, output):
    output = libdevice.pow(input, exponent)  # noqa: F841


def premake(ndim, scalar_exponent=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    exponent = Tensor(0) if scalar_exponent else Tensor(ndim, dtype=dtype)

    tensors = (Tensor(ndim, dtype=dtype), exponent, Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def pow(input, exponent, *, out=None):
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, scalar_exponent=not isinstance(exponent, torch.Tensor))

    kernel(input, exponent, output)

    return output
