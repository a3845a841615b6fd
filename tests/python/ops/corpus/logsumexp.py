"""torch.logsumexp along a dim: the maximum first, then the sum of exponentials relative to it."""

import functools

import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make
from corpus.sum import reduced_output


def application(input, output):
    block_max = ntl.full(input.dtype.shape, float("-inf"), dtype=ntl.float32)

    for i in range(input.shape[0]):
        block_max = max(block_max, ntl.cast(input[i], ntl.float32))

    row_max = ntl.max(block_max, 0)
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        acc += ntl.exp(ntl.cast(input[i], ntl.float32) - row_max)

    output[0] = row_max + ntl.log(ntl.sum(acc, 0))


def premake(ndim, dim, dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    tensors = (Tensor(ndim, dtype=dtype, other=float("-inf")), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def logsumexp(input, dim, keepdim=False, *, out=None):
    dim %= input.ndim
    out, output = reduced_output(input, (dim,), keepdim, out)

    cached_make(premake, input.ndim, dim)(input, output)

    return out
