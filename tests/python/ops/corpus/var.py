"""torch.var and torch.std along a dim with a `correction` (Bessel's by default), two passes in float32.

Positions past the end of the dim are masked by their index: `i * block + arange(block)`.
"""

import functools

import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make
from corpus.sum import reduced_output


def _variance(input, num_elements, correction):
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        acc += ntl.cast(input[i], ntl.float32)

    mean = ntl.sum(acc, 0) / num_elements
    block_size = input.dtype.shape[0]
    squares = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        valid = i * block_size + ntl.arange(0, block_size) < num_elements
        diff = ntl.where(valid, ntl.cast(input[i], ntl.float32) - mean, 0)
        squares += diff * diff

    return ntl.sum(squares, 0) / max(num_elements - correction, 0)


def var_application(input, num_elements, correction, output):
    output[0] = _variance(input, num_elements, correction)


def std_application(input, num_elements, correction, output):
    output[0] = ntl.sqrt(_variance(input, num_elements, correction))


def premake(ndim, dim, std=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    application = std_application if std else var_application

    tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(0), Tensor(0), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def _launch(input, dim, correction, keepdim, std, out):
    dim %= input.ndim
    out, output = reduced_output(input, (dim,), keepdim, out)

    cached_make(premake, input.ndim, dim, std)(input, input.shape[dim], correction, output)

    return out


def var(input, dim, correction=1, keepdim=False, *, out=None):
    return _launch(input, dim, correction, keepdim, False, out)


def std(input, dim, correction=1, keepdim=False, *, out=None):
    return _launch(input, dim, correction, keepdim, True, out)
