"""gather along a dim, as torch.gather: output[..., j, ...] = input[..., index[..., j, ...], ...].

Lines along `dim` (that dim permuted last, the others flattened into rows), a few rows per
program: each program gathers its rows of the input at its rows of the index with
`ntl.gather` along the last block dim. Where the index is smaller than the input in another
dim, the torch-facing function narrows the input to it (a strided view).
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def arrangement(input, index, output, dim, block_size):
    ndim = input.ndim
    non_target_dims = tuple(d for d in range(ndim) if d != dim)

    def _arrangement(tensor):
        arranged = tensor.permute(non_target_dims + (dim,))
        if ndim == 1:
            arranged = arranged.unsqueeze(0)
        arranged = arranged.flatten(end_dim=-1)
        return arranged.tile((block_size, -1)).squeeze(1)

    return _arrangement(input), _arrangement(index), _arrangement(output)


def application(input, index, output):
    output = ntl.gather(input, index, 1)  # noqa: F841


def premake(ndim, dim, dtype=None, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    arrangement_ = functools.partial(arrangement, dim=dim, block_size=block_size)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=ninetoothed.int64, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def gather(input, dim, index, *, out=None, block_size=4):
    """torch.gather(input, dim, index, out=out)."""
    ndim = max(input.ndim, 1)
    dim = dim % ndim
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(input.ndim):
        if d != dim and index.shape[d] > input.shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d}")
    if index.numel() and ((index < 0) | (index >= (input.shape[dim] if input.ndim else 1))).any():
        raise RuntimeError("index out of bounds for gather")

    for d in range(input.ndim):
        if d != dim:
            input = input.narrow(d, 0, index.shape[d])
    output = torch.empty(index.shape, dtype=input.dtype) if out is None else out

    kernel = _cached_make(premake, input.ndim, dim, block_size=block_size)
    kernel(input, index, output)

    return output
