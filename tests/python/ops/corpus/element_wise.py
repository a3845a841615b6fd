"""The arrangement element-wise operators share: every tensor tiled into rows of blocks.

Each tensor with dimensions is tiled by `(1, ..., 1, block_size)`, so a program sees one block
of the innermost dimension (any strides work: nothing is flattened). 0-dim tensors (scalars such
as `alpha`) pass through. `broadcasting_arrangement` also expands operands whose sizes are 1
along some dimensions, the way torch broadcasts them.
"""

import ninetoothed


def arrangement(*tensors, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    ndim = max(tensor.ndim for tensor in tensors)

    assert all(tensor.ndim == ndim or tensor.ndim == 0 for tensor in tensors)

    block_shape = tuple(1 for _ in range(ndim - 1)) + (block_size,)

    return tuple(tensor.tile(block_shape) if tensor.ndim != 0 else tensor for tensor in tensors)


def broadcasting_arrangement(*tensors, broadcast_dims, block_size=None):
    """As `arrangement`; `broadcast_dims[i]` are the dims where `tensors[i]` has size 1.

    The last tensor is the output and has the full shape. Along a broadcast dim a tensor is tiled
    by 1 and its outer level expanded to the output's, so each program reads the one element
    there (a broadcast innermost dim gives a block of one, broadcast against the others).
    """
    if block_size is None:
        block_size = ninetoothed.block_size()

    ndim = tensors[-1].ndim
    block_shape = tuple(1 for _ in range(ndim - 1)) + (block_size,)

    output_arranged = tensors[-1].tile(block_shape)

    def _arrange(tensor, dims):
        if tensor.ndim == 0:
            return tensor

        dims = tuple(dim % ndim for dim in dims)
        tile_shape = tuple(1 if dim in dims else size for dim, size in enumerate(block_shape))
        arranged = tensor.tile(tile_shape)

        if dims:
            arranged = arranged.expand(
                tuple(output_arranged.shape[dim] if dim in dims else -1 for dim in range(ndim))
            )

        return arranged

    return tuple(_arrange(tensor, dims) for tensor, dims in zip(tensors[:-1], broadcast_dims[:-1])) + (
        output_arranged,
    )


def broadcast_shape(ndim, broadcast_dims):
    """The `shape` of a `Tensor(ndim, shape=...)` that has size 1 along `broadcast_dims`."""
    return tuple(1 if dim in broadcast_dims else None for dim in range(ndim))


def broadcastable(tensor, target):
    """`tensor` with `target`'s number of dims (leading 1s added, a view) and the dims it broadcasts."""
    tensor = tensor.reshape((1,) * (target.ndim - tensor.ndim) + tuple(tensor.shape))

    assert all(size in (1, target_size) for size, target_size in zip(tensor.shape, target.shape))

    broadcast_dims = tuple(
        dim for dim, (size, target_size) in enumerate(zip(tensor.shape, target.shape)) if size != target_size
    )

    return tensor, broadcast_dims
