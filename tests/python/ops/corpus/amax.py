"""torch.amax and torch.amin over one dim or several; padding reads the identity (-inf or +inf)."""

import functools

import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make
from corpus.sum import reduced_output


def amax_application(input, output):
    acc = ntl.full(input.dtype.shape, float("-inf"), dtype=input.dtype.dtype)

    for i in range(input.shape[0]):
        acc = max(acc, input[i])

    output[0] = ntl.max(acc, 0)


def amin_application(input, output):
    acc = ntl.full(input.dtype.shape, float("inf"), dtype=input.dtype.dtype)

    for i in range(input.shape[0]):
        acc = min(acc, input[i])

    output[0] = ntl.min(acc, 0)


def premake(ndim, dim, op="amax", dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    application, identity = (amax_application, float("-inf")) if op == "amax" else (amin_application, float("inf"))

    tensors = (Tensor(ndim, dtype=dtype, other=identity), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, dim, keepdim, op, out):
    dims = tuple(sorted(d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)))
    out, output = reduced_output(input, dims, keepdim, out)

    cached_make(premake, input.ndim, dims, op)(input, output)

    return out


def amax(input, dim, keepdim=False, *, out=None):
    return _launch(input, dim, keepdim, "amax", out)


def amin(input, dim, keepdim=False, *, out=None):
    return _launch(input, dim, keepdim, "amin", out)
