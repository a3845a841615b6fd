"""abs (torch.absolute; `abs` itself is the built-in the application calls) and neg, for floating and integer tensors."""

import functools

import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def abs_application(input, output):
    output = abs(input)  # noqa: F841


def neg_application(input, output):
    output = -input  # noqa: F841


def premake(ndim, op="abs", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    application = abs_application if op == "abs" else neg_application

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, op, out):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, op)(input, output)

    return output


def absolute(input, *, out=None):
    return _launch(input, "abs", out)


def neg(input, *, out=None):
    return _launch(input, "neg", out)
