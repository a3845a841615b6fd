"""The application language (`import ninetoothed.language as ntl`).

Each name here is what an application may call on its blocks while it is
traced; the functions only forward to the compiler core, where their meaning
(dtype promotion, broadcasting, code generation) lives. Python numbers are
weakly typed: they take the dtype of the block they meet.
"""

from ninetoothed import _core
from ninetoothed._core import DType

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


def _builder():
    """The IR builder of the application being traced (for functions that record statements)."""
    from ninetoothed._frontend import current_builder

    return current_builder()


def _block(x):
    """A block from a parameter, a block, a number or a Symbol."""
    as_block = getattr(x, "_ninetoothed_block", None)
    return as_block() if as_block is not None else x


def zeros(shape, dtype=float32):
    """A block of `shape` filled with zeros."""
    return _core.block_full(shape, 0, dtype)


def full(shape, value, dtype=float32):
    """A block of `shape` filled with `value`."""
    return _core.block_full(shape, _block(value), dtype)


def arange(start, end):
    """The int32 block `[start, start + 1, ..., end - 1]` (constant bounds)."""
    return _core.block_arange(start, end)


def dot(input, other):
    """The matrix product of two 2-D blocks; floats accumulate in float32."""
    return _core.block_dot(_block(input), _block(other))


def trans(input):
    """A 2-D block transposed."""
    return _core.block_trans(_block(input))


def sum(input, axis=None, keep_dims=False):
    """The sum over `axis` (everything when None)."""
    return _core.block_reduce("sum", _block(input), axis, keep_dims)


def max(input, axis=None, keep_dims=False):
    """The maximum over `axis` (everything when None)."""
    return _core.block_reduce("max", _block(input), axis, keep_dims)


def min(input, axis=None, keep_dims=False):
    """The minimum over `axis` (everything when None)."""
    return _core.block_reduce("min", _block(input), axis, keep_dims)


def argmax(input, axis=None, keep_dims=False):
    """The index of the maximum over `axis` (flat index when None)."""
    return _core.block_reduce("argmax", _block(input), axis, keep_dims)


def argmin(input, axis=None, keep_dims=False):
    """The index of the minimum over `axis` (flat index when None)."""
    return _core.block_reduce("argmin", _block(input), axis, keep_dims)


def maximum(x, y):
    """The elementwise maximum."""
    return _core.block_binary("maximum", _block(x), _block(y))


def minimum(x, y):
    """The elementwise minimum."""
    return _core.block_binary("minimum", _block(x), _block(y))


def where(condition, x, y):
    """`x` where `condition` holds, else `y` (broadcast together)."""
    return _core.block_where(_block(condition), _block(x), _block(y))


def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """`input` converted to `dtype`; with `bitcast=True` its bits read as `dtype` (same width).

    Floats convert with round-to-nearest-even (`fp_downcast_rounding` "rtne",
    the default; "rtz" is not supported)."""
    if fp_downcast_rounding not in (None, "rtne"):
        raise ValueError(f"fp_downcast_rounding={fp_downcast_rounding!r} is not supported; use 'rtne'")
    from ninetoothed._frontend import element_dtype

    return _core.block_cast(_block(input), element_dtype(dtype), bool(bitcast))


def fma(x, y, z):
    """`x * y + z` rounded once, elementwise."""
    return _core.block_fma(_block(x), _block(y), _block(z))


def cdiv(x, y):
    """`x` divided by `y`, rounded up (for non-negative operands)."""
    return (_block(x) + _block(y) - 1) // _block(y)


def program_id(axis):
    """The current program's index along outermost dimension `axis`."""
    return _builder().program_id(axis)


def num_programs(axis):
    """The number of programs along outermost dimension `axis`."""
    return _builder().num_programs(axis)


def rand(seed, offsets):
    """Uniform float32 numbers in [0, 1), one per offset: counter-based (Philox4x32-10),
    so the same seed and offsets give the same numbers on every run and device."""
    return _core.block_random(_block(seed), _block(offsets), False)


def randn(seed, offsets):
    """Standard normal float32 numbers, one per offset (Philox4x32-10 and Box-Muller)."""
    return _core.block_random(_block(seed), _block(offsets), True)


def load(pointer, mask=None, other=None):
    """The elements `pointer` points at (`p.source.data_ptr()` plus offsets).

    Where `mask` is false, and wherever a pointer leaves the tensor, the
    value is `other` (0 if None)."""
    return _builder().load_pointer(pointer, _optional_block(mask), _optional_block(other))


def store(pointer, value, mask=None):
    """Stores `value` where `pointer` points, where `mask` holds and inside the tensor."""
    _builder().store_pointer(pointer, _block(value), _optional_block(mask), False)


def atomic_add(pointer, value, mask=None):
    """Adds `value` atomically where `pointer` points (float32, float64, 32/64-bit integers)."""
    _builder().store_pointer(pointer, _block(value), _optional_block(mask), True)


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


class libdevice:
    """Extra math, as Triton's `libdevice`."""

    @staticmethod
    def pow(x, y):
        """`x` raised to the power `y`, elementwise."""
        return _core.block_binary("pow", _block(x), _block(y))

    tanh = staticmethod(_unary("tanh", "The hyperbolic tangent of each element."))
    erf = staticmethod(erf)
    exp = staticmethod(exp)
    exp2 = staticmethod(exp2)
    log = staticmethod(log)
    log2 = staticmethod(log2)
    sqrt = staticmethod(sqrt)
    rsqrt = staticmethod(rsqrt)
    sin = staticmethod(sin)
    cos = staticmethod(cos)
    floor = staticmethod(floor)
    ceil = staticmethod(ceil)
    tan = staticmethod(_unary("tan", "The tangent of each element."))
    asin = staticmethod(_unary("asin", "The arcsine of each element."))
    acos = staticmethod(_unary("acos", "The arccosine of each element."))
    atan = staticmethod(_unary("atan", "The arctangent of each element."))
    sinh = staticmethod(_unary("sinh", "The hyperbolic sine of each element."))
    cosh = staticmethod(_unary("cosh", "The hyperbolic cosine of each element."))
    log1p = staticmethod(_unary("log1p", "log(1 + x) of each element."))
    expm1 = staticmethod(_unary("expm1", "exp(x) - 1 of each element."))
    cbrt = staticmethod(_unary("cbrt", "The cube root of each element."))
    log10 = staticmethod(_unary("log10", "The base-10 logarithm of each element."))
    exp10 = staticmethod(_unary("exp10", "10 raised to each element."))
    trunc = staticmethod(_unary("trunc", "The integer part (toward zero) of each element."))
    round = staticmethod(_unary("round", "The nearest integer (halves away from zero) of each element."))
