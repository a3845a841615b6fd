"""embedding lookup, as torch.nn.functional.embedding: output[..., :] = weight[input[...], :].

Each program owns a block of lookups and a block of embedding columns. The weight is
arranged with all its rows as the middle level (every program sees every row), and each
lookup reads the row its index names, `weight[index]`: a data-valued middle index.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Tensor


def arrangement(input, weight, output, block_size_m, block_size_n):
    # output: (lookups, dim) -> outer (lookups / m, dim / n), middle (m,), blocks (n,).
    output_arranged = output.tile((1, block_size_n))
    output_arranged = output_arranged.tile((block_size_m, 1))
    output_arranged.dtype = output_arranged.dtype.squeeze(1)
    output_arranged.dtype.dtype = output_arranged.dtype.dtype.squeeze(0)

    # input: (lookups,) -> outer as the output's, blocks (m,).
    input_arranged = input.unsqueeze(1).tile((block_size_m, 1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(1)

    # weight: (rows, dim) -> outer as the output's, middle (rows,), blocks (n,).
    weight_arranged = weight.tile((1, block_size_n))
    weight_arranged = weight_arranged.tile((-1, 1))
    weight_arranged = weight_arranged.expand((output_arranged.shape[0], -1))
    weight_arranged.dtype = weight_arranged.dtype.squeeze(1)
    weight_arranged.dtype.dtype = weight_arranged.dtype.dtype.squeeze(0)

    return input_arranged, weight_arranged, output_arranged


def application(input, weight, output):
    for i in range(output.shape[0]):
        index = input[i]
        output[i] = weight[index]


def premake(dtype=None, block_size_m=None, block_size_n=None):
    if block_size_m is None:
        block_size_m = ninetoothed.block_size()
    if block_size_n is None:
        block_size_n = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, block_size_m=block_size_m, block_size_n=block_size_n)

    tensors = (
        Tensor(1, dtype=ninetoothed.int64),
        Tensor(2, dtype=dtype),
        Tensor(2, dtype=dtype),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def embedding(input, weight, *, out=None, block_size_m=4, block_size_n=16):
    """torch.nn.functional.embedding(input, weight) for an index tensor of any shape."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.numel() and ((input < 0) | (input >= weight.shape[0])).any():
        raise IndexError("index out of range in self")

    output = torch.empty((*input.shape, weight.shape[1]), dtype=weight.dtype) if out is None else out
    if not input.numel():
        return output

    kernel = _cached_make(premake, block_size_m=block_size_m, block_size_n=block_size_n)
    kernel(input.reshape(-1), weight, output.view(-1, weight.shape[1]))

    return output
