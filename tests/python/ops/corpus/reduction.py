"""The arrangement reductions share: one program per slice along the reduced dim(s).

Every tensor with dimensions is tiled so that a program holds all of its elements along `dim`
(an int or a tuple of ints): the outermost level keeps the other dims (size 1 along `dim`), the
middle level runs over the blocks along `dim` and the innermost level is a 1-D block of
`block_size` elements of the innermost reduced dim. With several reduced dims the middle level
is flattened, so `input.shape[0]` always counts the blocks a program visits. A tensor of size 1
along `dim` (a keepdim result) gets one middle position, whose first element is the real one.
"""

import ninetoothed


def arrangement(*tensors, dim, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()

    ndim = max(tensor.ndim for tensor in tensors)

    assert all(tensor.ndim == ndim or tensor.ndim == 0 for tensor in tensors)

    dims = tuple(sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim)))
    innermost = dims[-1]
    other_dims = tuple(d for d in range(ndim) if d not in dims)

    inner_block_shape = tuple(block_size if d == innermost else 1 for d in range(ndim))
    outer_block_shape = tuple(-1 if d in dims else 1 for d in range(ndim))

    def _arrange(tensor):
        arranged = tensor.tile(inner_block_shape).tile(outer_block_shape)

        if other_dims:
            arranged.dtype = arranged.dtype.squeeze(other_dims)
            arranged.dtype.dtype = arranged.dtype.dtype.squeeze(other_dims)

        if len(dims) > 1:
            arranged.dtype.dtype = arranged.dtype.dtype.squeeze(tuple(range(len(dims) - 1)))
            arranged.dtype = arranged.dtype.flatten()

        return arranged

    return tuple(_arrange(tensor) if tensor.ndim != 0 else tensor for tensor in tensors)
