"""instance_norm (statistics of each instance and channel over the spatial dims), weight and bias per channel.

The input is arranged by the reduction arrangement over dims 2, 3, ...: the outermost level is
(N, C, 1, ...). The per-channel weight and bias are arranged as (N, C) by expanding over N: an
outermost shape of another rank holding as many programs. The block size is fixed (32) by the
torch-facing function instead of tuned.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def arrangement(input, weight, bias, eps, output, num_normalized_elements, block_size=None):
    dims = tuple(range(2, input.ndim))

    input_arranged, output_arranged = reduction.arrangement(input, output, dim=dims, block_size=block_size)

    def _arrange_per_channel(tensor):
        arranged = tensor.tile((1,))
        arranged = arranged.unsqueeze(0)

        return arranged.expand((input.shape[0], -1))

    return (
        input_arranged,
        _arrange_per_channel(weight),
        _arrange_per_channel(bias),
        eps,
        output_arranged,
        num_normalized_elements,
    )


def application(input, weight, bias, eps, output, num_normalized_elements):
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        acc += ntl.cast(input[i], ntl.float32)

    mean = ntl.sum(acc, 0) / num_normalized_elements

    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for i in range(input.shape[0]):
        diff = ntl.where(input[i].offsets(-1) < input.source.shape[-1], ntl.cast(input[i], ntl.float32) - mean, 0)
        acc += diff * diff

    std = ntl.sqrt(ntl.sum(acc, 0) / num_normalized_elements + eps)

    for i in range(input.shape[0]):
        output[i] = (ntl.cast(input[i], ntl.float32) - mean) / std * weight + bias


def premake(ndim, dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype, other=0),
        Tensor(1, dtype=dtype),
        Tensor(1, dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
        Tensor(0),
    )

    return arrangement_, application, tensors


def instance_norm(input, weight=None, bias=None, eps=1e-5, *, out=None):
    channels = input.shape[1]

    if weight is None:
        weight = torch.ones(channels, dtype=input.dtype)

    if bias is None:
        bias = torch.zeros(channels, dtype=input.dtype)

    output = torch.empty_like(input) if out is None else out
    num_normalized_elements = input[0, 0].numel()

    kernel = cached_make(premake, input.ndim, block_size=32)

    kernel(input, weight, bias, eps, output, num_normalized_elements)

    return output
