"""diag, as torch.diag: a vector to a square matrix with it on the `diagonal`-th diagonal,
or a matrix's `diagonal`-th diagonal to a vector.

Vector to matrix: the output is tiled in 2-D blocks; each block reads the vector (one untiled
block every program sees whole) at `min(row, column)` and keeps it on the diagonal, zero off
it. Matrix to vector: the output is tiled in 1-D blocks, and each reads the matrix (untiled)
at the positions of its diagonal, one position block per matrix dim. The diagonal's number
is a runtime scalar, so one kernel serves every diagonal.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def embed_arrangement(input, output, diagonal, block_shape):
    return input, output.tile(block_shape), diagonal


def embed_application(input, output, diagonal):
    rows = output.offsets(0)[:, None]
    columns = output.offsets(1)[None, :]
    values = input[ntl.minimum(rows, columns)]
    output = ntl.where(columns - rows == diagonal, values, 0)  # noqa: F841


def extract_arrangement(input, output, diagonal, block_size):
    return input, output.tile((block_size,)), diagonal


def extract_application(input, output, diagonal):
    positions = output.offsets(0)
    output = input[positions + max(-diagonal, 0), positions + max(diagonal, 0)]  # noqa: F841


def premake_embed(dtype=None, block_shape=None):
    if block_shape is None:
        block_shape = (ninetoothed.block_size(), ninetoothed.block_size())

    arrangement_ = functools.partial(embed_arrangement, block_shape=block_shape)

    tensors = (
        Tensor(1, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(2, dtype=dtype),
        Tensor(0, dtype=ninetoothed.int64),
    )

    return arrangement_, embed_application, tensors


def premake_extract(dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(extract_arrangement, block_size=block_size)

    tensors = (
        Tensor(2, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(1, dtype=dtype),
        Tensor(0, dtype=ninetoothed.int64),
    )

    return arrangement_, extract_application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def diag(input, diagonal=0, *, out=None):
    """torch.diag(input, diagonal, out=out) for a 1-D or 2-D input."""
    if input.ndim == 1:
        size = input.shape[0] + abs(diagonal)
        output = torch.empty((size, size), dtype=input.dtype) if out is None else out
        kernel = _cached_make(premake_embed, block_shape=(8, 16))
    elif input.ndim == 2:
        rows, columns = input.shape
        length = max(0, min(rows, columns - diagonal) if diagonal >= 0 else min(rows + diagonal, columns))
        output = torch.empty((length,), dtype=input.dtype) if out is None else out
        if not length:
            return output
        kernel = _cached_make(premake_extract, block_size=16)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")

    kernel(input, output, diagonal)

    return output
