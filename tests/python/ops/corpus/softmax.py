"""softmax and log_softmax along a dim, with an online maximum and normaliser in float32."""

import functools

import torch
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def _max_and_normalizer(input):
    row_max = ntl.cast(float("-inf"), ntl.float32)
    normalizer = ntl.cast(0, ntl.float32)

    for i in range(input.shape[0]):
        input_i = ntl.cast(input[i], ntl.float32)
        new_max = max(row_max, ntl.max(input_i))
        normalizer = normalizer * ntl.exp(row_max - new_max) + ntl.sum(ntl.exp(input_i - new_max))
        row_max = new_max

    return row_max, normalizer


def softmax_application(input, output):
    row_max, normalizer = _max_and_normalizer(input)

    for i in range(input.shape[0]):
        output[i] = ntl.exp(ntl.cast(input[i], ntl.float32) - row_max) / normalizer


def log_softmax_application(input, output):
    row_max, normalizer = _max_and_normalizer(input)
    log_normalizer = ntl.log(normalizer)

    for i in range(input.shape[0]):
        output[i] = ntl.cast(input[i], ntl.float32) - row_max - log_normalizer


def premake(ndim, dim, log=False, dtype=None, block_size=None):
    arrangement_ = functools.partial(reduction.arrangement, dim=dim, block_size=block_size)

    application = log_softmax_application if log else softmax_application

    tensors = (Tensor(ndim, dtype=dtype, other=float("-inf")), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


def softmax(input, dim, *, out=None):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, dim % input.ndim)(input, output)

    return output


def log_softmax(input, dim, *, out=None):
    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim, dim % input.ndim, log=True)(input, output)

    return output
