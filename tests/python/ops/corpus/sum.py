"""torch.sum and torch.mean over one dim or several.

Floating inputs accumulate in float32, integer ones in int64 (torch's sum of integers is int64).
"""

import functools

import torch
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def _sum(input):
    acc_dtype = ntl.float32 if input.dtype.dtype.is_floating() else ntl.int64
    acc = ntl.zeros(input.dtype.shape, dtype=acc_dtype)

    for i in range(input.shape[0]):
        acc += ntl.cast(input[i], acc_dtype)

    return ntl.sum(acc, 0)


def sum_application(input, output):
    output[0] = _sum(input)


def mean_application(input, num_elements, output):
    output[0] = _sum(input) / num_elements


def premake(ndim, dim, mean=False, dtype=None, output_dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    if mean:
        application = mean_application
        tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(0), Tensor(ndim, dtype=output_dtype))
    else:
        application = sum_application
        tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(ndim, dtype=output_dtype))

    return arrangement_, application, tensors


def _dims(dim, ndim):
    return tuple(sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim)))


def reduced_output(input, dims, keepdim, out, dtype=None):
    """The result (`out` if given) and its view with the reduced dims kept (size 1), which the kernel writes."""
    kept_shape = [1 if d in dims else size for d, size in enumerate(input.shape)]

    if out is None:
        shape = kept_shape if keepdim else [size for d, size in enumerate(input.shape) if d not in dims]
        out = torch.empty(shape, dtype=input.dtype if dtype is None else dtype)

    return out, out.view(kept_shape)


def sum(input, dim, keepdim=False, *, dtype=None, out=None):
    if dtype is None and not input.dtype.is_floating_point:
        dtype = torch.int64

    dims = _dims(dim, input.ndim)
    out, output = reduced_output(input, dims, keepdim, out, dtype)

    cached_make(premake, input.ndim, dims)(input, output)

    return out


def mean(input, dim, keepdim=False, *, out=None):
    dims = _dims(dim, input.ndim)
    out, output = reduced_output(input, dims, keepdim, out)
    num_elements = 1

    for d in dims:
        num_elements *= input.shape[d]

    cached_make(premake, input.ndim, dims, mean=True)(input, num_elements, output)

    return out
