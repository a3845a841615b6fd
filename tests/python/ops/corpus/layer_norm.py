"""layer_norm over the trailing `normalized_shape` dims with weight, bias and eps.

The input is arranged by the reduction arrangement over the normalized dims; weight and bias
(shaped like them) are arranged the same way and expanded over the leading dims, so a program
reads the weight and bias blocks beside each input block.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import reduction
from corpus.caching import cached_make


def arrangement(input, weight, bias, eps, output, num_normalized_elements, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    num_leading_dims = input.ndim - weight.ndim
    dims = tuple(range(num_leading_dims, input.ndim))

    input_arranged, output_arranged = reduction.arrangement(input, output, dim=dims, block_size=block_size)

    def _arrange_affine(tensor):
        arranged = reduction.arrangement(tensor, dim=tuple(range(tensor.ndim)), block_size=block_size)[0]

        for _ in range(num_leading_dims):
            arranged = arranged.unsqueeze(0)

        return arranged.expand(tuple(input_arranged.shape[:num_leading_dims]) + (-1,) * tensor.ndim)

    return (
        input_arranged,
        _arrange_affine(weight),
        _arrange_affine(bias),
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
        diff = ntl.cast(input[i], ntl.float32) - mean
        diff = ntl.where(input[i].offsets(-1) < input.source.shape[-1], diff, 0)
        acc += diff * diff

    rstd = ntl.rsqrt(ntl.sum(acc, 0) / num_normalized_elements + eps)

    for i in range(input.shape[0]):
        normalized = (ntl.cast(input[i], ntl.float32) - mean) * rstd
        output[i] = normalized * ntl.cast(weight[i], ntl.float32) + ntl.cast(bias[i], ntl.float32)


def premake(ndim, normalized_ndim, dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype, other=0),
        Tensor(normalized_ndim, dtype=dtype),
        Tensor(normalized_ndim, dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
        Tensor(0),
    )

    return arrangement_, application, tensors


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *, out=None):
    normalized_shape = tuple(normalized_shape)
    assert tuple(input.shape[-len(normalized_shape) :]) == normalized_shape

    if weight is None:
        weight = torch.ones(normalized_shape, dtype=input.dtype)

    if bias is None:
        bias = torch.zeros(normalized_shape, dtype=input.dtype)

    output = torch.empty_like(input) if out is None else out
    num_normalized_elements = weight.numel()

    kernel = cached_make(premake, input.ndim, len(normalized_shape))

    kernel(input, weight, bias, eps, output, num_normalized_elements)

    return output
