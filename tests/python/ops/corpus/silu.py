"""sigmoid and silu (x * sigmoid(x))."""

import functools

import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def sigmoid_application(input, output):
    output = ntl.sigmoid(ntl.cast(input, ntl.float32))  # noqa: F841


def silu_application(input, output):
    input_f32 = ntl.cast(input, ntl.float32)
    output = input_f32 / (1 + ntl.exp(-input_f32))  # noqa: F841


def premake(ndim, op="silu", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    application = silu_application if op == "silu" else sigmoid_application

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, op, out):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, op)(input, output)

    return output


def sigmoid(input, *, out=None):
    return _launch(input, "sigmoid", out)


def silu(input, *, out=None):
    return _launch(input, "silu", out)
