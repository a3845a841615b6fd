"""cat: join tensors along an existing dim, as torch.cat.

One launch per input: the arrangement narrows the output to the input's place along `dim`
(a slice from a constexpr start), and that slice and the input are tiled alike, so the
application is a copy. Inputs may have any strides.
"""

import functools

import torch

import ninetoothed
from ninetoothed import Symbol, Tensor

START = Symbol("start", constexpr=True)


def arrangement(input, output, dim, block_shape):
    place = (slice(None),) * dim + (slice(START, START + input.shape[dim]),)

    return input.tile(block_shape), output[place].tile(block_shape)


def application(input, output):
    output = input  # noqa: F841


def premake(ndim, dim, dtype=None, block_shape=None):
    if block_shape is None:
        block_shape = tuple(ninetoothed.block_size() for _ in range(ndim))

    arrangement_ = functools.partial(arrangement, dim=dim, block_shape=block_shape)

    tensors = (Tensor(ndim, dtype=dtype), Tensor(ndim, dtype=dtype))

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords))


def cat(tensors, dim=0, *, out=None):
    """torch.cat(tensors, dim, out=out) for tensors of one dtype and rank."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ndim = tensors[0].ndim
    dim = dim % ndim
    for tensor in tensors:
        if tensor.ndim != ndim or any(
            tensor.shape[d] != tensors[0].shape[d] for d in range(ndim) if d != dim
        ):
            raise RuntimeError("torch.cat(): sizes of tensors must match except in the concatenated dim")

    shape = list(tensors[0].shape)
    shape[dim] = sum(tensor.shape[dim] for tensor in tensors)
    output = torch.empty(shape, dtype=tensors[0].dtype) if out is None else out

    block_shape = tuple(16 if d == ndim - 1 else 4 for d in range(ndim))
    kernel = _cached_make(premake, ndim, dim, block_shape=block_shape)
    start = 0
    for tensor in tensors:
        if tensor.shape[dim]:
            kernel(tensor, output, start=start)
        start += tensor.shape[dim]

    return output
