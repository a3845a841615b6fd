"""quantile along a dim with linear interpolation, for one q or a few, as torch.quantile.

One program per line along `dim`: the line is sorted (`ntl.sort`), and for every q the two
order statistics around `q * (n - 1)` are gathered from it and interpolated as torch's
`lerp` does. The qs are one untiled block that every program reads whole.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

from corpus.sort import arrange_lines


def arrangement(input, q, output, dim):
    # output: (num_qs, *reduced shape), arranged as lines of num_qs per program.
    output_arranged = output.permute(tuple(range(1, output.ndim)) + (0,))
    output_arranged = output_arranged.flatten(end_dim=-1)
    output_arranged = output_arranged.tile((1, -1))
    output_arranged.dtype = output_arranged.dtype.squeeze(0)

    return arrange_lines(input, dim), q, output_arranged


def application(input, q, output):
    last = input.shape[0] - 1
    ordered = ntl.cast(ntl.sort(input), ntl.float32)

    rank = q * last
    below = ntl.floor(rank)
    weight = rank - below
    below_index = ntl.cast(below, ntl.int32)
    above_index = ntl.minimum(below_index + 1, last)

    start = ntl.gather(ordered, below_index, 0)
    end = ntl.gather(ordered, above_index, 0)
    difference = end - start
    output = ntl.where(weight < 0.5, start + weight * difference, end - difference * (1 - weight))  # noqa: F841


def premake(ndim, dim, dtype=None):
    arrangement_ = functools.partial(arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(1, dtype=ninetoothed.float32, shape_options={"constexpr": True}),
        Tensor(max(ndim, 2), dtype=dtype, shape_options={"constexpr": True}),
    )

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def quantile(input, q, dim=-1, keepdim=False, *, out=None):
    """torch.quantile(input, q, dim, keepdim, interpolation="linear", out=out): `q` a float or
    a 1-D float tensor; the result has a leading dim of len(q) when q is a tensor."""
    scalar_q = not isinstance(q, torch.Tensor) or q.ndim == 0
    qs = torch.as_tensor(q, dtype=torch.float32).reshape(-1)
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")

    ndim = max(input.ndim, 1)
    dim = dim % ndim
    kept = list(input.shape)
    if input.ndim:
        kept[dim] = 1
    reduced = [size for d, size in enumerate(input.shape) if d != dim]
    result_shape = ([] if scalar_q else [len(qs)]) + (kept if keepdim else reduced)
    if out is None:
        out = torch.empty(result_shape, dtype=input.dtype)

    kernel = _cached_make(premake, input.ndim, dim)
    kernel(input, qs, out.view([len(qs)] + (reduced or [1])))

    return out
