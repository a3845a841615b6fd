"""relu, leaky_relu(negative_slope) and elu(alpha), out of place or in place (`inplace=True`).

elu computes its exponential in float32 when the input is float16 (`_upcast`), as operator
libraries do for transcendental functions on half precision.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def _upcast(x):
    return ntl.cast(x, ntl.float32) if x.dtype is ntl.float16 else x


def relu_application(input, output):
    output = max(input, 0)  # noqa: F841


def leaky_relu_application(input, negative_slope, output):
    output = ntl.where(input >= 0, input, negative_slope * input)  # noqa: F841


def elu_application(input, alpha, output):
    input_upcast = _upcast(input)
    output = ntl.where(input_upcast > 0, input_upcast, alpha * (ntl.exp(input_upcast) - 1))  # noqa: F841


def premake(ndim, op="relu", dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    if op == "relu":
        application = relu_application
        tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))
    else:
        application = leaky_relu_application if op == "leaky_relu" else elu_application
        tensors = (Tensor(ndim, dtype=dtype), Tensor(0, dtype=ninetoothed.float64), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _output(input, inplace, out):
    if inplace:
        return input

    return torch.empty_like(input) if out is None else out


def relu(input, inplace=False, *, out=None):
    output = _output(input, inplace, out)

    cached_make(premake, input.ndim, "relu")(input, output)

    return output


def leaky_relu(input, negative_slope=0.01, inplace=False, *, out=None):
    output = _output(input, inplace, out)

    cached_make(premake, input.ndim, "leaky_relu")(input, negative_slope, output)

    return output


def elu(input, alpha=1.0, inplace=False, *, out=None):
    output = _output(input, inplace, out)

    cached_make(premake, input.ndim, "elu")(input, alpha, output)

    return output
