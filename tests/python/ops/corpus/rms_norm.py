"""rms_norm over the last dim: x / sqrt(mean(x^2) + eps) * weight (weight optional)."""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def arrangement(input, weight, eps, output, num_normalized_elements, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    input_arranged, output_arranged = reduction.arrangement(input, output, dim=-1, block_size=block_size)

    weight_arranged = weight.tile((block_size,)).tile((-1,))

    for _ in range(input.ndim - 1):
        weight_arranged = weight_arranged.unsqueeze(0)

    weight_arranged = weight_arranged.expand(tuple(input_arranged.shape[:-1]) + (-1,))

    return input_arranged, weight_arranged, eps, output_arranged, num_normalized_elements


def application(input, weight, eps, output, num_normalized_elements):
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        input_i = ntl.cast(input[i], ntl.float32)
        acc += input_i * input_i

    rstd = ntl.rsqrt(ntl.sum(acc, 0) / num_normalized_elements + eps)

    for i in range(input.shape[0]):
        output[i] = ntl.cast(input[i], ntl.float32) * rstd * weight[i]


def premake(ndim, dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype, other=0),
        Tensor(1, dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
        Tensor(0),
    )

    return arrangement_, application, tensors


def rms_norm(input, weight=None, eps=1e-6, *, out=None):
    if weight is None:
        weight = torch.ones(input.shape[-1], dtype=input.dtype)

    output = torch.empty_like(input) if out is None else out

    cached_make(premake, input.ndim)(input, weight, eps, output, input.shape[-1])

    return output
