"""isnan and isinf: bool results of floating inputs."""

import functools

import torch
from ninetoothed import Tensor
from ninetoothed.language import libdevice

from corpus import element_wise
from corpus.caching import cached_make


def isnan_application(input, output):
    output = input != input  # noqa: F841


def isinf_application(input, output):
    output = libdevice.isinf(input)  # noqa: F841


def premake(ndim, op="isnan", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    application = isnan_application if op == "isnan" else isinf_application

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=bool))

    return arrangement_, application, tensors


def _launch(input, op, out):
    output = torch.empty(input.shape, dtype=torch.bool) if out is None else out

    cached_make(premake, input.ndim, op)(input, output)

    return output


def isnan(input, *, out=None):
    return _launch(input, "isnan", out)


def isinf(input, *, out=None):
    return _launch(input, "isinf", out)
