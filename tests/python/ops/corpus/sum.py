"""torch.sum and torch.mean over one dim or several, accumulated in float32."""

import functools

import torch
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def _sum(input):
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        acc += ntl.cast(input[i], ntl.float32)

    return ntl.sum(acc, 0)


def sum_application(input, output):
    output[0] = _sum(input)


def mean_application(input, num_elements, output):
    output[0] = _sum(input) / num_elements


def premake(ndim, dim, mean=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    if mean:
        application = mean_application
        tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(0), Tensor(ndim, dtype=dtype))
    else:
        application = sum_application
        tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _dims(dim, ndim):
    return tuple(sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim)))


def reduced_output(input, dims, keepdim, out):
    """The result (`out` if given) and its view with the reduced dims kept (size 1), which the kernel writes."""
    kept_shape = [1 if d in dims else size for d, size in enumerate(input.shape)]

    if out is None:
        out = torch.empty(kept_shape if keepdim else [size for d, size in enumerate(input.shape) if d not in dims], dtype=input.dtype)

    return out, out.view(kept_shape)


def sum(input, dim, keepdim=False, *, out=None):
    dims = _dims(dim, input.ndim)
    out, output = reduced_output(input, dims, keepdim, out)

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
