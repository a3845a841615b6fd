"""batch_norm in inference form: (x - running_mean) / sqrt(running_var + eps) * weight + bias.

Element-wise over an (N, C, *) input; the per-channel tensors are tiled to the input's blocks
along C and expanded over the other dims in the arrangement.
"""

import functools

import ninetoothed
import ninetoothed.language as ntl
import torch
from ninetoothed import Tensor

from corpus import element_wise
from corpus.caching import cached_make


def arrangement(input, running_mean, running_var, weight, bias, eps, output, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    input_arranged, output_arranged = element_wise.arrangement(input, output, block_size=block_size)

    def _arrange_per_channel(tensor):
        if input.ndim == 2:
            # Channels are the innermost dim: the per-channel blocks are the input's blocks of C.
            arranged = tensor.tile((block_size,)).unsqueeze(0)
        else:
            arranged = tensor.tile((1,)).unsqueeze(0)

            for _ in range(input.ndim - 2):
                arranged = arranged.unsqueeze(2)

        return arranged.expand(tuple(size if dim != 1 else -1 for dim, size in enumerate(input_arranged.shape)))

    return (
        input_arranged,
        _arrange_per_channel(running_mean),
        _arrange_per_channel(running_var),
        _arrange_per_channel(weight),
        _arrange_per_channel(bias),
        eps,
        output_arranged,
    )


def application(input, running_mean, running_var, weight, bias, eps, output):
    rstd = ntl.rsqrt(ntl.cast(running_var, ntl.float32) + eps)
    output = (ntl.cast(input, ntl.float32) - running_mean) * rstd * weight + bias  # noqa: F841


def premake(ndim, dtype=None, block_size=None):
    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype),
        *(Tensor(1, dtype=dtype) for _ in range(4)),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, application, tensors


def batch_norm(input, running_mean, running_var, weight=None, bias=None, eps=1e-5, *, out=None):
    channels = input.shape[1]

    if weight is None:
        weight = torch.ones(channels, dtype=input.dtype)

    if bias is None:
        bias = torch.zeros(channels, dtype=input.dtype)

    output = torch.empty_like(input) if out is None else out

    kernel = cached_make(premake, input.ndim)

    kernel(input, running_mean, running_var, weight, bias, eps, output)

    return output
