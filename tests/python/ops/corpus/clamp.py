"""torch.clamp with `min` and/or `max` (either may be None), and hardtanh as a clamp."""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def clamp_application(input, min_val, max_val, output):
    output = min(max(input, min_val), max_val)  # noqa: F841


def clamp_min_application(input, min_val, output):
    output = max(input, min_val)  # noqa: F841


def clamp_max_application(input, max_val, output):
    output = min(input, max_val)  # noqa: F841


def hardtanh_application(input, min_val, max_val, output):
    output = ntl.clamp(input, min_val, max_val)  # noqa: F841


def premake(ndim, has_min=True, has_max=True, hardtanh=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(element_wise.arrangement, block_size=block_size)

    if hardtanh:
        application = hardtanh_application
    elif has_min and has_max:
        application = clamp_application
    elif has_min:
        application = clamp_min_application
    else:
        application = clamp_max_application

    bounds = tuple(Tensor(0, dtype=ninetoothed.float64) for _ in range(int(has_min) + int(has_max)))

    tensors = (Tensor(ndim, dtype=dtype), *bounds, Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def clamp(input, min=None, max=None, *, out=None):
    assert min is not None or max is not None

    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, min is not None, max is not None)

    kernel(input, *(bound for bound in (min, max) if bound is not None), output)

    return output


def hardtanh(input, min_val=-1.0, max_val=1.0, *, out=None):
    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim, hardtanh=True)

    kernel(input, min_val, max_val, output)

    return output
