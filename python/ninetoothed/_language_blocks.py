"""Block operations of `ninetoothed.language` with Triton's names and meaning:
shapes (broadcast, reshape, permute, flip, cat, join, split, interleave, ...),
reductions and scans with a combine function, sort and top-k, gather,
histogram, atomics; and the Triton tensor methods on blocks (`x.reshape(...)`,
`x.sum(...)`, `x.to(dtype, bitcast=True)`, ...).

Combine functions (`reduce`, `associative_scan`) are traced like other helper
functions, once, on scalar placeholders: they may compute values (operators,
`ntl` functions, conditional expressions), not store or loop.
"""

import functools
import operator

from ninetoothed import _core
from ninetoothed._core import DType
from ninetoothed._tracing import block_of as _block
from ninetoothed._tracing import current_builder, trace_call

__all__ = [
    "broadcast",
    "broadcast_to",
    "expand_dims",
    "reshape",
    "view",
    "permute",
    "ravel",
    "flip",
    "cat",
    "join",
    "split",
    "interleave",
    "reduce",
    "associative_scan",
    "cumsum",
    "cumprod",
    "sort",
    "topk",
    "bitonic_merge",
    "gather",
    "histogram",
    "atomic_cas",
    "atomic_xchg",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "logical_and",
    "logical_or",
]


def _as_block(x):
    """A block (Python numbers become scalar blocks of their default dtype)."""
    x = _block(x)
    return x if _core.is_block(x) else _core.block_constant(x)


def _shape_args(shape):
    """Triton takes shapes as varargs or one sequence."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return list(shape[0])
    return list(shape)


# --- shapes -----------------------------------------------------------------------------------


def broadcast_to(input, *shape):
    """`input` broadcast to `shape` (numpy rules)."""
    return _core.block_broadcast_to(_as_block(input), _shape_args(shape))


def broadcast(input, other):
    """`input` and `other` broadcast to their common shape."""
    input, other = _as_block(input), _as_block(other)
    a, b = list(input.shape), list(other.shape)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    shape = [y if isinstance(x, int) and x == 1 else x for x, y in zip(a, b)]
    return broadcast_to(input, shape), broadcast_to(other, shape)


def expand_dims(input, axis):
    """`input` with size-1 dims inserted at `axis` (an int or a sequence, positions in the result)."""
    input = _as_block(input)
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    ndim = input.ndim + len(axes)
    normalized = sorted(a + ndim if a < 0 else a for a in axes)
    if len(set(normalized)) != len(normalized) or any(not 0 <= a < ndim for a in normalized):
        raise IndexError(f"expand_dims: axes {axis} are invalid for a {input.ndim}-d block")
    for a in normalized:
        input = _core.block_expand_dims(input, a)
    return input


def reshape(input, *shape, can_reorder=False):
    """`input` with the shape `shape`, elements in row-major order (`can_reorder` is accepted)."""
    return _core.block_reshape(_as_block(input), _shape_args(shape))


def view(input, *shape):
    """`reshape` (Triton's view may reorder elements; this one keeps row-major order)."""
    return reshape(input, *shape)


def permute(input, *dims):
    """`input` with its dims permuted: result dim d is input dim `dims[d]`."""
    return _core.block_permute(_as_block(input), _shape_args(dims))


def ravel(input, can_reorder=False):
    """`input` flattened to one dim, row-major."""
    input = _as_block(input)
    return reshape(input, [functools.reduce(operator.mul, input.shape, 1)])


def flip(x, dim=None):
    """`x` reversed along `dim` (the last dim when None)."""
    x = _as_block(x)
    return _core.block_flip(x, x.ndim - 1 if dim is None else dim)


def cat(input, other, can_reorder=False):
    """`input` and `other` concatenated along dim 0 (in order, which Triton's "may reorder" allows)."""
    return _core.block_cat(_as_block(input), _as_block(other))


def join(a, b):
    """`a` and `b` (broadcast together) stacked along a new last dim of size 2."""
    return _core.block_join(_as_block(a), _as_block(b))


def split(a):
    """The two halves of `a` along its last dim, which must have size 2."""
    a = _as_block(a)
    return _core.block_take(a, 0), _core.block_take(a, 1)


def interleave(a, b):
    """`a` and `b` interleaved along their last dim: join(a, b) reshaped to shape[:-1] + [2 * shape[-1]]."""
    c = join(a, b)
    if c.ndim == 1:
        return c
    shape = list(c.shape)
    return reshape(c, shape[:-2] + [2 * shape[-2]])


# --- reductions and scans with a combine function ---------------------------------------------


def _trace_combine(inputs, combine_fn):
    """The combine function's results over placeholders: the accumulated values, then the new elements."""
    dtypes = [x.dtype for x in inputs]
    args = [_core.block_combine_arg(i, d) for i, d in enumerate(dtypes + dtypes)]
    builder = current_builder()
    builder.begin_capture()
    try:
        results = trace_call(combine_fn, args)
    except BaseException:
        try:
            builder.end_capture([])
        except Exception:  # noqa: BLE001 - the trace failed: the original error is the one to show
            pass
        raise
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    return builder.end_capture([_as_block(r) for r in results])


def _combine(input, axis, combine_fn, scan, keep_dims=False, reverse=False):
    single = not isinstance(input, (tuple, list))
    inputs = [_as_block(x) for x in ([input] if single else input)]
    results = _trace_combine(inputs, combine_fn)
    outputs = _core.block_combine(inputs, results, axis, scan, keep_dims, reverse)
    return outputs[0] if single else tuple(outputs)


def reduce(input, axis, combine_fn, keep_dims=False):
    """`input` (a block or a tuple of blocks) reduced along `axis` (everything when None) with
    `combine_fn(a..., b...)`, which must be associative; folded in order."""
    return _combine(input, axis, combine_fn, False, keep_dims=keep_dims)


def associative_scan(input, axis, combine_fn, reverse=False):
    """The inclusive scan of `input` (a block or a tuple of blocks) along `axis` with
    `combine_fn(a..., b...)`; with `reverse`, from the end."""
    return _combine(input, axis, combine_fn, True, reverse=reverse)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    if x.dtype in (DType.int8, DType.int16, DType.bool):
        return DType.int32
    if x.dtype in (DType.uint8, DType.uint16):
        return DType.uint32
    if x.dtype == DType.bfloat16:
        return DType.float32
    return None


def _scan_of(input, axis, reverse, op, dtype=None):
    x = _as_block(input)
    dtype = _sum_dtype(x, dtype) if op is operator.add else (DType.float32 if x.dtype == DType.bfloat16 else None)
    if dtype is not None:
        x = x.to(dtype)
    a, b = _core.block_combine_arg(0, x.dtype), _core.block_combine_arg(1, x.dtype)
    return _core.block_combine([x], [op(a, b)], axis, True, False, reverse)[0]


def cumsum(input, axis=0, reverse=False, dtype=None):
    """The cumulative sum along `axis` (narrow integers in int32, bfloat16 in float32, or `dtype`)."""
    return _scan_of(input, axis, reverse, operator.add, dtype)


def cumprod(input, axis=0, reverse=False):
    """The cumulative product along `axis` (bfloat16 in float32)."""
    return _scan_of(input, axis, reverse, operator.mul)


# --- sort, gather, histogram ------------------------------------------------------------------


def sort(x, dim=None, descending=False):
    """`x` sorted along `dim` (the last dim when None), ascending or descending (stable)."""
    x = _as_block(x)
    return _core.block_sort(x, x.ndim - 1 if dim is None else dim, bool(descending), None)


def topk(x, k, dim=None):
    """The `k` largest elements of `x` along `dim` (the last dim when None), largest first."""
    x = _as_block(x)
    return _core.block_sort(x, x.ndim - 1 if dim is None else dim, True, k)


def bitonic_merge(x, dim=None, descending=False):
    """A bitonic sequence along the last dim merged into sorted order (any input is sorted)."""
    return sort(x, dim, descending)


def gather(src, index, axis):
    """`out[i] = src[i with i[axis] = index[i]]`; index has src's shape outside `axis`
    (indices outside [0, src.shape[axis]) are clamped into it)."""
    return _core.block_gather(_as_block(src), _as_block(index), axis)


def histogram(input, num_bins, mask=None):
    """Counts (int32, `num_bins` of them) of the values 0, 1, ... of a 1-D integer block;
    values outside [0, num_bins) and elements where `mask` is false are not counted."""
    return _core.block_histogram(_as_block(input), int(num_bins), None if mask is None else _as_block(mask))


# --- atomics ----------------------------------------------------------------------------------


def _atomic(fn, pointer, val, mask, compare=None):
    return current_builder().atomic(fn, pointer, _block(val), None if mask is None else _block(mask),
                             None if compare is None else _block(compare))


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Where the element equals `cmp` (bit for bit), stores `val`; returns the old values."""
    return _atomic("cas", pointer, val, None, cmp)


def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """Stores `val` atomically; returns the old values."""
    return _atomic("xchg", pointer, val, mask)


def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """The element becomes max(element, val) atomically; returns the old values."""
    return _atomic("max", pointer, val, mask)


def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """The element becomes min(element, val) atomically; returns the old values."""
    return _atomic("min", pointer, val, mask)


def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """The element becomes element & val atomically (integers); returns the old values."""
    return _atomic("and", pointer, val, mask)


def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """The element becomes element | val atomically (integers); returns the old values."""
    return _atomic("or", pointer, val, mask)


def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """The element becomes element ^ val atomically (integers); returns the old values."""
    return _atomic("xor", pointer, val, mask)


def logical_and(input, other):
    """`input and other` elementwise."""
    return _core.block_binary("and", _as_block(input), _as_block(other))


def logical_or(input, other):
    """`input or other` elementwise."""
    return _core.block_binary("or", _as_block(input), _as_block(other))
