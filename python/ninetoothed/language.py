"""The application language (`import ninetoothed.language as ntl`).

Each name here is what an application may call on its blocks while it is
traced; the functions only forward to the compiler core, where their meaning
(dtype promotion, broadcasting, code generation) lives. Python numbers are
weakly typed: they take the dtype of the block they meet. The names and
semantics are Triton's (`triton.language` 3.x): shape operations, scans,
sorts and atomics are in `_language_blocks.py`, trace-time names (constexpr,
static_range, hints, device_print) in `_language_meta.py`, libdevice in
`_libdevice.py`; docs/api.md lists every triton.language name with its status.
"""

import functools
import operator
import os
import sys

from ninetoothed import _core
from ninetoothed import _libdevice as libdevice
from ninetoothed._core import DType
from ninetoothed._parameters import Parameter as _Parameter
from ninetoothed._parameters import element_dtype as _element_dtype
from ninetoothed._tracing import block_of as _block
from ninetoothed._tracing import current_builder as _current_builder

bfloat16 = DType.bfloat16
float16 = DType.float16
float32 = DType.float32
float64 = DType.float64
int8 = DType.int8
int16 = DType.int16
int32 = DType.int32
int64 = DType.int64
uint8 = DType.uint8
uint16 = DType.uint16
uint32 = DType.uint32
uint64 = DType.uint64
float8e5 = float8_e5m2 = DType.float8_e5m2  # Triton's names and torch's
float8e4nv = float8_e4m3fn = DType.float8_e4m3fn
int1 = DType.bool
dtype = DType
tensor = _core.Block
TRITON_MAX_TENSOR_NUMEL = 1048576


class PropagateNan:
    """Whether maximum/minimum/clamp propagate NaN: NONE returns the other operand, ALL returns NaN."""

    NONE = 0
    ALL = 0xFFFF


def zeros(shape, dtype=float32):
    """A block of `shape` filled with zeros."""
    return _core.block_full(shape, 0, _element_dtype(dtype))


def full(shape, value, dtype=float32):
    """A block of `shape` filled with `value`."""
    return _core.block_full(shape, _block(value), _element_dtype(dtype))


def arange(start, end):
    """The int32 block `[start, start + 1, ..., end - 1]` (constant bounds)."""
    return _core.block_arange(start, end)


_INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")


def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32):
    """The matrix product of two 2-D blocks (plus `acc`); floats accumulate in float32.

    `input_precision` says how float32 operands are multiplied, as Triton does: "tf32" (on tensor
    cores, operands rounded to TF32's 10-bit mantissa), "tf32x3" (three TF32 products of high and
    low parts, close to float) or "ieee" (in float). None takes the environment's TRITON_F32_DEFAULT,
    else "tf32"; `allow_tf32=False` (Triton's older keyword) means "ieee". Devices without tensor
    cores (CPUs) multiply in float whatever is asked: never less accurate. Other dtypes ignore it.
    `max_num_imprecise_acc` is accepted and ignored (accumulation is in float32 throughout)."""
    if input_precision is None:
        if allow_tf32 is not None:
            input_precision = "tf32" if allow_tf32 else "ieee"
        else:
            input_precision = os.environ.get("TRITON_F32_DEFAULT", "tf32")
    input_precision = str(input_precision).lower()
    if input_precision not in _INPUT_PRECISIONS:
        raise ValueError(f"input_precision must be one of {_INPUT_PRECISIONS}, got {input_precision!r}")
    result = _core.block_dot(_block(input), _block(other), input_precision)
    if out_dtype is not float32 and out_dtype != result.dtype:
        result = result.to(out_dtype)
    if acc is not None:
        acc = _block(acc)
        result = (acc + result).to(acc.dtype)
    return result


def trans(input, *dims):
    """`input` with its dims permuted by `dims`; with none, a 2-D block transposed."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if not dims:
        return _core.block_trans(_block(input))
    return _core.block_permute(_block(input), list(dims))


def sum(input, axis=None, keep_dims=False, dtype=None):
    """The sum over `axis` (everything when None), in `dtype` when given
    (integers narrower than 32 bits sum in int32)."""
    input = _block(input)
    if dtype is not None:
        input = input.to(dtype)
    return _core.block_reduce("sum", input, axis, keep_dims)


def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """The maximum over `axis` (everything when None); with `return_indices`, also its
    index (the first one on ties)."""
    values = _core.block_reduce("max", _block(input), axis, keep_dims)
    if return_indices:
        return values, _core.block_reduce("argmax", _block(input), axis, keep_dims)
    return values


def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """The minimum over `axis` (everything when None); with `return_indices`, also its
    index (the first one on ties)."""
    values = _core.block_reduce("min", _block(input), axis, keep_dims)
    if return_indices:
        return values, _core.block_reduce("argmin", _block(input), axis, keep_dims)
    return values


def argmax(input, axis=None, tie_break_left=True, keep_dims=False):
    """The index of the maximum over `axis` (flat index when None; the first on ties)."""
    return _core.block_reduce("argmax", _block(input), axis, keep_dims)


def argmin(input, axis=None, tie_break_left=True, keep_dims=False):
    """The index of the minimum over `axis` (flat index when None; the first on ties)."""
    return _core.block_reduce("argmin", _block(input), axis, keep_dims)


def maximum(x, y, propagate_nan=PropagateNan.NONE):
    """The elementwise maximum; NaN loses unless `propagate_nan` is PropagateNan.ALL."""
    if propagate_nan == PropagateNan.ALL and _is_float(x, y):
        return _core.block_call("maximum_nan", [_block(x), _block(y)])
    return _core.block_binary("maximum", _block(x), _block(y))


def minimum(x, y, propagate_nan=PropagateNan.NONE):
    """The elementwise minimum; NaN loses unless `propagate_nan` is PropagateNan.ALL."""
    if propagate_nan == PropagateNan.ALL and _is_float(x, y):
        return _core.block_call("minimum_nan", [_block(x), _block(y)])
    return _core.block_binary("minimum", _block(x), _block(y))


def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    """`x` limited to [min, max] elementwise (min > max is undefined, as in Triton); with
    PropagateNan.ALL a NaN operand gives NaN. Integer blocks are clamped as integers."""
    if not _is_float(x, min, max):
        return minimum(maximum(x, min), max)
    name = "clamp_nan" if propagate_nan == PropagateNan.ALL else "clamp"
    return _core.block_call(name, [_block(x), _block(min), _block(max)])


def umulhi(x, y):
    """The high half of the unsigned double-width product of two integer blocks."""
    return _core.block_call("umulhi", [_block(x), _block(y)])


def div_rn(x, y):
    """`x / y` correctly rounded (round to nearest even)."""
    return _core.block_call("div_rn", [_block(x), _block(y)])


def fdiv(x, y, ieee_rounding=False):
    """`x / y` for floats; with `ieee_rounding`, correctly rounded."""
    return _core.block_call("div_rn" if ieee_rounding else "fdiv", [_block(x), _block(y)])


def sqrt_rn(x):
    """The square root, correctly rounded."""
    return _core.block_call("sqrt_rn", [_block(x)])


def add(x, y, sanitize_overflow=True):
    """`x + y`."""
    return _block(x) + _block(y)


def sub(x, y, sanitize_overflow=True):
    """`x - y`."""
    return _block(x) - _block(y)


def mul(x, y, sanitize_overflow=True):
    """`x * y`."""
    return _block(x) * _block(y)


def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """exp(x - max(x)) / sum(exp(x - max(x))) along `dim` (0 when None), as Triton's softmax."""
    dim = 0 if dim is None else dim
    z = _block(x) - max(x, dim, keep_dims=keep_dims)
    numerator = exp(z)
    return fdiv(numerator, sum(numerator, dim, keep_dims=keep_dims), ieee_rounding)


def zeros_like(input):
    """Zeros of `input`'s shape and dtype."""
    input = _block(input)
    return _core.block_full(list(input.shape), 0, input.dtype)


def swizzle2d(i, j, size_i, size_j, size_g):
    """Row-major indices (i, j) of a size_i x size_j matrix mapped to column-major order within
    groups of size_g rows (Triton's swizzle2d)."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g


def xor_sum(input, axis=None, keep_dims=False):
    """The bitwise xor of the elements over `axis` (everything when None); integers only."""
    return _builtin_reduce(input, axis, keep_dims, "xor_sum", lambda a, b: a ^ b)


def reduce_or(input, axis, keep_dims=False):
    """The bitwise or of the elements over `axis`; integers only."""
    return _builtin_reduce(input, axis, keep_dims, "reduce_or", lambda a, b: a | b)


def _builtin_reduce(input, axis, keep_dims, name, combine):
    input = _block(input)
    if input.dtype in _FLOATS:
        raise TypeError(f"{name} needs integers, got {input.dtype.name}")
    a, b = _core.block_combine_arg(0, input.dtype), _core.block_combine_arg(1, input.dtype)
    return _core.block_combine([input], [combine(a, b)], axis, False, keep_dims, False)[0]


_FLOATS = (DType.float8_e5m2, DType.float8_e4m3fn, DType.float16, DType.bfloat16, DType.float32, DType.float64)


def _is_float(*values):
    for v in values:
        v = _block(v)
        if isinstance(v, float) or getattr(v, "dtype", None) in _FLOATS:
            return True
    return False


def where(condition, x, y):
    """`x` where `condition` holds, else `y` (broadcast together)."""
    return _core.block_where(_block(condition), _block(x), _block(y))


def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """`input` converted to `dtype`; with `bitcast=True` its bits read as `dtype` (same width).

    Floats convert with round-to-nearest-even (`fp_downcast_rounding` "rtne",
    the default; "rtz" is not supported)."""
    if fp_downcast_rounding not in (None, "rtne"):
        raise ValueError(f"fp_downcast_rounding={fp_downcast_rounding!r} is not supported; use 'rtne'")
    return _core.block_cast(_block(input), _element_dtype(dtype), bool(bitcast))


def fma(x, y, z):
    """`x * y + z` rounded once, elementwise."""
    return _core.block_fma(_block(x), _block(y), _block(z))


def cdiv(x, y):
    """`x` divided by `y`, rounded up (for non-negative operands)."""
    return (_block(x) + _block(y) - 1) // _block(y)


def program_id(axis):
    """The current program's index along outermost dimension `axis`."""
    return _current_builder().program_id(axis)


def num_programs(axis):
    """The number of programs along outermost dimension `axis`."""
    return _current_builder().num_programs(axis)


def rand(seed, offsets, n_rounds=10):
    """Uniform float32 numbers in [0, 1), one per offset: counter-based (Philox4x32-10),
    so the same seed and offsets give the same numbers on every run and device.
    (The top 24 bits of `randint(seed, offsets)` times 2**-24.)"""
    if n_rounds != 10:
        return _uniform(randint(seed, offsets, n_rounds))
    return _core.block_random(_block(seed), _block(offsets), False)


def randn(seed, offsets, n_rounds=10):
    """Standard normal float32 numbers, one per offset (Philox4x32-10 and Box-Muller)."""
    if n_rounds != 10:
        return randn4x(seed, offsets, n_rounds)[0]
    return _core.block_random(_block(seed), _block(offsets), True)


def randint4x(seed, offsets, n_rounds=10):
    """The four 32-bit words of Philox4x32 (`n_rounds` rounds) of counter (offset's low
    and high 32 bits, 0, 0) under key `seed` (its low and high 32 bits), as Triton's
    randint4x: int32 blocks (uint32 for unsigned offsets), the first of which `rand` uses."""
    offsets = _block(offsets)
    unsigned = getattr(offsets, "dtype", None) in (DType.uint32, DType.uint64)
    offsets = offsets.to(int64)
    low, high = offsets.to(uint32), (offsets >> 32).to(uint32)
    words = philox(seed, low, high, 0, 0, n_rounds)
    return tuple(w if unsigned else w.to(int32, bitcast=True) for w in words)


def randint(seed, offsets, n_rounds=10):
    """The first word of `randint4x(seed, offsets, n_rounds)`."""
    return randint4x(seed, offsets, n_rounds)[0]


def rand4x(seed, offsets, n_rounds=10):
    """Four blocks of uniform float32 numbers in [0, 1), from the words of randint4x (the first is `rand`)."""
    return tuple(_uniform(w) for w in randint4x(seed, offsets, n_rounds))


def randn4x(seed, offsets, n_rounds=10):
    """Four blocks of standard normal float32 numbers (Box-Muller of rand4x's pairs; the first is `randn`)."""
    u1, u2, u3, u4 = rand4x(seed, offsets, n_rounds)
    n1, n2 = _box_muller(u1, u2)
    n3, n4 = _box_muller(u3, u4)
    return n1, n2, n3, n4


def _uniform(word):
    return (word.to(uint32, bitcast=True) >> 8).to(float32) * 5.9604644775390625e-08


def _box_muller(u1, u2):
    r = sqrt(-2.0 * log(maximum(u1, 2.9802322387695312e-08)))
    angle = 6.283185307179586 * u2
    return r * cos(angle), r * sin(angle)


def philox(seed, c0, c1, c2, c3, n_rounds=10):
    """Philox4x32 of the counter (c0, c1, c2, c3) (32-bit words) under key `seed` (its low
    and high 32 bits): four uint32 blocks."""
    seed = _block(seed)
    seed = seed.to(uint64) if _core.is_block(seed) else seed % 18446744073709551616
    return philox_impl(c0, c1, c2, c3, seed % 4294967296, seed // 4294967296, n_rounds)


def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=10):
    """`n_rounds` rounds of Philox4x32 of the counter (c0, c1, c2, c3) under key (k0, k1):
    four uint32 blocks."""
    if not isinstance(n_rounds, int) or n_rounds < 0:
        raise TypeError("n_rounds must be a non-negative int")
    args = [_block(a) for a in (c0, c1, c2, c3, k0, k1, n_rounds)]
    return tuple(_core.block_call(f"philox{k}", args) for k in (0, 1, 2, 3))


def uint_to_uniform_float(x):
    """Random integers to float32 in [0, 1) as Triton does (the bits read as signed,
    |x| scaled by 2**-31, or 2**-63 for 64-bit integers)."""
    x = _block(x)
    wide = x.dtype in (DType.int64, DType.uint64)
    x = x.to(int64 if wide else int32, bitcast=True)
    x = where(x < 0, -x - 1, x)
    return x.to(float32) * (1.0842020e-19 if wide else 4.656613e-10)


def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two standard normal blocks from two uniform ones (as Triton's)."""
    u1 = maximum(1.0e-7, u1)
    angle = 6.283185307179586 * _block(u2)
    r = sqrt(-2.0 * log(u1))
    return r * cos(angle), r * sin(angle)


def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """The elements `pointer` points at (`p.source.data_ptr()` plus offsets).

    Where `mask` is false, and wherever a pointer leaves the tensor, the
    value is `other` (0 if None). Triton's cache and eviction keywords are
    accepted and ignored; `boundary_check`/`padding_option` belong to block
    pointers, which are not supported."""
    _no_block_pointer_options(boundary_check, padding_option)
    return _current_builder().load_pointer(pointer, _optional_block(mask), _optional_block(other))


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Stores `value` where `pointer` points, where `mask` holds and inside the tensor
    (Triton's cache and eviction keywords are accepted and ignored)."""
    _no_block_pointer_options(boundary_check, "")
    _current_builder().store_pointer(pointer, _block(value), _optional_block(mask), False)


def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """Adds `val` atomically where `pointer` points (float32, float64, 32/64-bit integers);
    returns the old values (0 where masked). `sem` and `scope` are accepted and ignored
    (every atomic is relaxed and device-wide)."""
    return _current_builder().atomic("add", pointer, _block(val), _optional_block(mask), None)


def _no_block_pointer_options(boundary_check, padding_option):
    if boundary_check or padding_option:
        raise NotImplementedError("boundary_check and padding_option need block pointers, which are not supported")


def _optional_block(x):
    return None if x is None else _block(x)


def _unary(name, doc):
    def function(x):
        return _core.block_unary(name, _block(x))

    function.__name__ = name
    function.__doc__ = doc
    return function


exp = _unary("exp", "e raised to each element.")
exp2 = _unary("exp2", "2 raised to each element.")
log = _unary("log", "The natural logarithm of each element.")
log2 = _unary("log2", "The base-2 logarithm of each element.")
sqrt = _unary("sqrt", "The square root of each element.")
rsqrt = _unary("rsqrt", "The reciprocal square root of each element.")
abs = _unary("abs", "The absolute value of each element.")
sigmoid = _unary("sigmoid", "1 / (1 + exp(-x)) of each element.")
sin = _unary("sin", "The sine of each element.")
cos = _unary("cos", "The cosine of each element.")
erf = _unary("erf", "The error function of each element.")
floor = _unary("floor", "The largest integer not above each element.")
ceil = _unary("ceil", "The smallest integer not below each element.")


from ninetoothed._language_blocks import *  # noqa: E402,F401,F403
from ninetoothed._language_meta import *  # noqa: E402,F401,F403
from ninetoothed import _language_meta as _meta  # noqa: E402

math = _meta.namespace(
    "math",
    abs=abs, ceil=ceil, clamp=clamp, cos=cos, div_rn=div_rn, erf=erf, exp=exp, exp2=exp2, fdiv=fdiv,
    floor=floor, fma=fma, log=log, log2=log2, maximum=maximum, minimum=minimum, rsqrt=rsqrt, sigmoid=sigmoid,
    sin=sin, softmax=softmax, sqrt=sqrt, sqrt_rn=sqrt_rn, umulhi=umulhi, cdiv=cdiv,
)
extra = _meta.namespace("extra", libdevice=libdevice, cuda=_meta.namespace("cuda", libdevice=libdevice))

# --- Triton's tensor methods on blocks --------------------------------------------------------


def _install_methods():
    """Triton's tensor methods on blocks (`x.to(...)`, `x.T`, `x.sum(...)`, ...), and on the
    parameters that stand for them."""
    ntl = sys.modules[__name__]
    block = _core.Block

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        return ntl.cast(self, dtype, fp_downcast_rounding, bitcast)

    block.to = to
    block.T = property(lambda self: ntl.trans(self))
    block.numel = property(lambda self: functools.reduce(operator.mul, self.shape, 1))
    block.type = property(lambda self: self.dtype)
    methods = ["to"]
    for name in ("reshape", "view", "permute", "ravel", "flip", "split", "broadcast_to", "expand_dims", "reduce",
                 "associative_scan", "cumsum", "cumprod", "sort", "topk", "gather", "histogram", "trans", "sum",
                 "max", "min", "argmax", "argmin", "xor_sum", "reduce_or", "softmax", "cast", "abs", "exp", "exp2",
                 "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "erf", "floor", "ceil", "sigmoid", "cdiv",
                 "div_rn", "logical_and", "logical_or"):
        if hasattr(ntl, name):
            setattr(block, name, getattr(ntl, name))
            methods.append(name)
    # A parameter stands for its block: the same methods, on the block it loads.
    def forward(name):
        def method(self, *args, **kwargs):
            return getattr(self._ninetoothed_block(), name)(*args, **kwargs)

        method.__name__ = name
        return method

    for name in methods:
        if name == "to" or not hasattr(_Parameter, name):
            setattr(_Parameter, name, forward(name))
    for name in ("T", "numel", "type"):
        if not hasattr(_Parameter, name):
            setattr(_Parameter, name, property(lambda self, name=name: getattr(self._ninetoothed_block(), name)))


_install_methods()
