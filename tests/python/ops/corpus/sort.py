"""sort, argsort and msort along any dim, stable, ascending or descending.

Each program owns one line along `dim` (the dim is permuted last and the others flattened
into rows), loads it whole, sorts the values with `ntl.sort` and places every element's
index at its stable rank, `indices[rank] = positions`.
"""

import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def arrange_lines(tensor, dim):
    """`tensor` as rows of whole lines along `dim`: outer (rows,), blocks (size,)."""
    ndim = tensor.ndim
    non_target_dims = tuple(d for d in range(ndim) if d != dim)

    arranged = tensor.permute(non_target_dims + (dim,))
    if ndim == 1:
        arranged = arranged.unsqueeze(0)
    arranged = arranged.flatten(end_dim=-1)
    arranged = arranged.tile((1, -1))
    arranged.dtype = arranged.dtype.squeeze(0)

    return arranged


def arrangement(input, values, indices, descending, dim):
    return (
        arrange_lines(input, dim),
        arrange_lines(values, dim),
        arrange_lines(indices, dim),
        descending,
    )


def argsort_arrangement(input, indices, descending, dim):
    return arrange_lines(input, dim), arrange_lines(indices, dim), descending


def stable_ranks(line, descending):
    """Where each element of `line` lands in a stable sort: the number of elements that go
    before it (strictly smaller, or larger when descending), plus the equal ones left of it."""
    positions = ntl.arange(0, line.shape[0])
    mine = line[:, None]
    theirs = line[None, :]
    if descending:
        ahead = theirs > mine
    else:
        ahead = theirs < mine
    tied_left = (theirs == mine) & (positions[None, :] < positions[:, None])
    return ntl.sum(ntl.where(ahead | tied_left, 1, 0), 1)


def application(input, values, indices, descending):
    values = ntl.sort(input, descending=descending)  # noqa: F841
    indices[stable_ranks(input, descending)] = ntl.arange(0, input.shape[0])


def argsort_application(input, indices, descending):
    indices[stable_ranks(input, descending)] = ntl.arange(0, input.shape[0])


def premake(ndim, dim, dtype=None):
    arrangement_ = functools.partial(arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=ninetoothed.int64, shape_options={"constexpr": True}),
        Tensor(0, constexpr=True),
    )

    return arrangement_, application, tensors


def premake_argsort(ndim, dim, dtype=None):
    arrangement_ = functools.partial(argsort_arrangement, dim=dim)

    tensors = (
        Tensor(ndim, dtype=dtype, shape_options={"constexpr": True}),
        Tensor(ndim, dtype=ninetoothed.int64, shape_options={"constexpr": True}),
        Tensor(0, constexpr=True),
    )

    return arrangement_, argsort_application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def _normalize_dim(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (got {dim} for {ndim} dims)")
    return dim % max(ndim, 1)


def sort(input, dim=-1, descending=False, stable=True, *, out=None):
    """torch.sort(input, dim, descending, stable=True, out=(values, indices)). Always stable."""
    dim = _normalize_dim(dim, input.ndim)
    if out is None:
        out = (torch.empty_like(input), torch.empty(input.shape, dtype=torch.int64))
    values, indices = out

    kernel = _cached_make(premake, input.ndim, dim)
    kernel(input, values, indices, bool(descending))

    return values, indices


def argsort(input, dim=-1, descending=False, *, out=None):
    """torch.argsort(input, dim, descending, stable=True)."""
    dim = _normalize_dim(dim, input.ndim)
    indices = torch.empty(input.shape, dtype=torch.int64) if out is None else out

    kernel = _cached_make(premake_argsort, input.ndim, dim)
    kernel(input, indices, bool(descending))

    return indices


def msort(input, *, out=None):
    """torch.msort(input): the values sorted along dim 0."""
    values = torch.empty_like(input) if out is None else out
    return sort(input, 0, out=(values, torch.empty(input.shape, dtype=torch.int64)))[0]
