"""gelu with approximate "none" (erf) or "tanh", computed in float32 for float16 inputs."""

import functools
import math

import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor
from ninetoothed.language import libdevice

from corpus import element_wise
from corpus.caching import cached_make


def erf_application(input, output):
    x = ntl.cast(input, ntl.float32) if input.dtype is ntl.float16 else input
    output = 0.5 * x * (1 + ntl.erf(x * (1 / math.sqrt(2))))  # noqa: F841


def tanh_application(input, output):
    x = ntl.cast(input, ntl.float32) if input.dtype is ntl.float16 else input
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
    output = 0.5 * x * (1 + libdevice.tanh(inner))  # noqa: F841


def premake(ndim, approximate="none", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    application = tanh_application if approximate == "tanh" else erf_application

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def gelu(input, approximate="none", *, out=None):
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, approximate)

    kernel(input, output)

    return output
