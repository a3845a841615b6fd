"""hardswish and hardsigmoid: piecewise-linear activations with clamp."""

import functools

import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def hardswish_application(input, output):
    output = input * ntl.clamp(input + 3, 0, 6) / 6  # noqa: F841


def hardsigmoid_application(input, output):
    output = min(max(input / 6 + 0.5, 0), 1)  # noqa: F841


def premake(ndim, op="hardswish", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    application = hardswish_application if op == "hardswish" else hardsigmoid_application

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, op, out):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, op)(input, output)

    return output


def hardswish(input, *, out=None):
    return _launch(input, "hardswish", out)


def hardsigmoid(input, *, out=None):
    return _launch(input, "hardsigmoid", out)
