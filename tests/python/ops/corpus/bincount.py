"""bincount: counts (or summed weights) of non-negative integers, as torch.bincount.

Blocks of the input across programs; every program adds its elements' counts or weights to
the output bins with `ntl.atomic_add` at `output.source.data_ptr() + input`. Lanes past the end
of the input read -1 and are masked off.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def arrangement(input, weights, output, block_size):
    input_arranged = input.tile((block_size,))
    weights_arranged = weights.tile((block_size,))
    output_arranged = output.tile((-1,)).expand((input_arranged.shape[0],))

    return input_arranged, weights_arranged, output_arranged


def count_arrangement(input, output, block_size):
    input_arranged = input.tile((block_size,))
    output_arranged = output.tile((-1,)).expand((input_arranged.shape[0],))

    return input_arranged, output_arranged


def application(input, weights, output):
    ntl.atomic_add(output.source.data_ptr() + input, ntl.cast(weights, output.dtype), mask=input >= 0)


def count_application(input, output):
    ntl.atomic_add(output.source.data_ptr() + input, 1, mask=input >= 0)


def premake(weights_dtype=None, output_dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, block_size=block_size)

    tensors = (
        Tensor(1, dtype=ninetoothed.int64, other=-1),
        Tensor(1, dtype=weights_dtype),
        Tensor(1, dtype=output_dtype),
    )

    return arrangement_, application, tensors


def premake_count(block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(count_arrangement, block_size=block_size)

    tensors = (Tensor(1, dtype=ninetoothed.int64, other=-1), Tensor(1, dtype=ninetoothed.int64))

    return arrangement_, count_application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def bincount(input, weights=None, minlength=0, *, out=None, block_size=64):
    """torch.bincount(input, weights, minlength): int64 counts, or the weights summed per bin
    (float32 for float32 weights, float64 for other weights, as torch)."""
    if input.ndim != 1 or input.dtype.is_floating_point:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input.numel() and input.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and weights.shape != input.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")

    input = input.to(torch.int64)
    length = max(minlength, int(input.max()) + 1 if input.numel() else 0)
    if weights is None:
        dtype = torch.int64
    else:
        dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64
    output = torch.empty(length, dtype=dtype) if out is None else out
    output.zero_()
    if not input.numel():
        return output

    if weights is None:
        kernel = _cached_make(premake_count, block_size=block_size)
        kernel(input, output)
    else:
        kernel = _cached_make(premake, block_size=block_size)
        kernel(input, weights, output)

    return output
