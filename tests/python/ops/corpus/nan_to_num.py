"""torch.nan_to_num: NaN, +inf and -inf replaced (by default: 0 and the dtype's extremes)."""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor
from ninetoothed.language import libdevice

from corpus import element_wise
from corpus.caching import cached_make


def application(input, nan, posinf, neginf, output):
    result = ntl.where(input != input, nan, input)
    result = ntl.where(libdevice.isinf(input) & (input > 0), posinf, result)
    output = ntl.where(libdevice.isinf(input) & (input < 0), neginf, result)  # noqa: F841


def premake(ndim, dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, application, tensors


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    finfo = torch.finfo(input.dtype)
    posinf = finfo.max if posinf is None else posinf
    neginf = finfo.min if neginf is None else neginf

    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim)(input, nan, posinf, neginf, output)

    return output
