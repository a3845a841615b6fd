"""group_norm: statistics over each group of C // G channels and the spatial dims, affine per channel.

The input is viewed as (N, G, C // G, S). A program holds one (n, g): a middle level of
(C // G, blocks of S) that the application walks with two indices, the per-channel weight and
bias (viewed as (G, C // G)) arranged with a middle level of C // G beside it.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus.caching import cached_make


def arrangement(input, weight, bias, eps, output, num_normalized_elements, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    def _arrange_grouped(tensor):
        arranged = tensor.tile((1, 1, 1, block_size)).tile((1, 1, -1, -1))
        arranged.dtype = arranged.dtype.squeeze((0, 1))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1, 2))

        return arranged

    def _arrange_per_channel(tensor):
        arranged = tensor.tile((1, 1)).tile((1, -1))
        arranged.dtype = arranged.dtype.squeeze(0)
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze(0)
        arranged = arranged.unsqueeze(0).unsqueeze(3)

        return arranged.expand((input.shape[0], -1, -1, -1))

    return (
        _arrange_grouped(input),
        _arrange_per_channel(weight),
        _arrange_per_channel(bias),
        eps,
        _arrange_grouped(output),
        num_normalized_elements,
    )


def application(input, weight, bias, eps, output, num_normalized_elements):
    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for c in range(input.shape[0]):
        for j in range(input.shape[1]):
            acc += ntl.cast(input[c, j], ntl.float32)

    mean = ntl.sum(acc, 0) / num_normalized_elements

    acc = ntl.zeros(input.dtype.shape, dtype=ntl.float32)

    for c in range(input.shape[0]):
        for j in range(input.shape[1]):
            valid = input[c, j].offsets(-1) < input.source.shape[-1]
            diff = ntl.where(valid, ntl.cast(input[c, j], ntl.float32) - mean, 0)
            acc += diff * diff

    rstd = ntl.rsqrt(ntl.sum(acc, 0) / num_normalized_elements + eps)

    for c in range(input.shape[0]):
        scale = rstd * ntl.cast(weight[c], ntl.float32)
        shift = ntl.cast(bias[c], ntl.float32) - mean * scale

        for j in range(input.shape[1]):
            output[c, j] = ntl.cast(input[c, j], ntl.float32) * scale + shift


def premake(dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(4, dtype=dtype, other=0),
        Tensor(2, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(4, dtype=dtype),
        Tensor(0),
    )

    return arrangement_, application, tensors


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, *, out=None):
    batch, channels = input.shape[:2]
    assert channels % num_groups == 0

    if weight is None:
        weight = torch.ones(channels, dtype=input.dtype)

    if bias is None:
        bias = torch.zeros(channels, dtype=input.dtype)

    grouped_shape = (batch, num_groups, channels // num_groups, -1)
    grouped_input = input.reshape(grouped_shape)
    output = torch.empty(input.shape, dtype=input.dtype) if out is None else out
    grouped_output = output.view(grouped_input.shape)
    num_normalized_elements = grouped_input[0, 0].numel()

    kernel = cached_make(premake)

    kernel(
        grouped_input,
        weight.view(num_groups, -1),
        bias.view(num_groups, -1),
        eps,
        grouped_output,
        num_normalized_elements,
    )

    return output
