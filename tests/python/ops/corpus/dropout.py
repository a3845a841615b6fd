"""dropout and alpha_dropout with counter-based random numbers (a seed gives the same mask).

An element is kept where the uniform number of its offset is at least `p`, so it is kept with
probability 1 - p (and always when p is 0).
"""

import functools
import math

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805

# The value a dropped unit of alpha dropout takes before the affine correction.
ALPHA_PRIME = -SELU_ALPHA * SELU_SCALE


def dropout_application(input, p, seed, output):
    keep = ntl.rand(seed, input.offsets()) >= p
    output = ntl.where(keep, input / (1 - p), 0)  # noqa: F841


def alpha_dropout_application(input, p, seed, a, b, output):
    keep = ntl.rand(seed, input.offsets()) >= p
    output = a * ntl.where(keep, input, ALPHA_PRIME) + b  # noqa: F841


def premake(ndim, alpha=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    p = Tensor(0, dtype=ninetoothed.float64)
    seed = Tensor(0, dtype=ninetoothed.int64)

    if alpha:
        application = alpha_dropout_application
        a, b = Tensor(0, dtype=ninetoothed.float64), Tensor(0, dtype=ninetoothed.float64)
        tensors = (Tensor(ndim, dtype=dtype), p, seed, a, b, Tensor(ndim, dtype=dtype))
    else:
        application = dropout_application
        tensors = (Tensor(ndim, dtype=dtype), p, seed, Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _seed(seed):
    return int(torch.randint(0, 2**31, ())) if seed is None else seed


def dropout(input, p=0.5, training=True, *, seed=None, out=None):
    if not training:
        return input.clone() if out is None else out.copy_(input)

    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim)(input, p, _seed(seed), output)

    return output


def alpha_dropout_coefficients(p):
    """The affine map `a * x + b` that keeps zero mean and unit variance after dropping."""
    a = 1 / math.sqrt((1 - p) * (1 + p * ALPHA_PRIME**2))
    b = -a * ALPHA_PRIME * p

    return a, b


def alpha_dropout(input, p=0.5, training=True, *, seed=None, out=None):
    if not training:
        return input.clone() if out is None else out.copy_(input)

    a, b = alpha_dropout_coefficients(p)
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, alpha=True)(input, p, _seed(seed), a, b, output)

    return output
