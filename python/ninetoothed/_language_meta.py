"""Trace-time names of `ninetoothed.language`: constexpr, loop iterables,
static assertions and prints, device_print/device_assert, compiler hints, and
the Triton names that have no meaning on OpenCL (they raise with the reason).

An application is traced once per specialisation, so Python values (ints,
floats, strings, bools, dtypes) are already compile-time constants: constexpr
is the identity, static_range unrolls while tracing, static_assert and
static_print run while tracing.
"""

import builtins
import sys
import types

from ninetoothed._tracing import block_of as _block
from ninetoothed._tracing import current_builder, is_block, trace_call

__all__ = [
    "constexpr",
    "static_range",
    "range",
    "static_assert",
    "static_print",
    "device_print",
    "device_assert",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "assume",
    "debug_barrier",
    "map_elementwise",
    "inline_asm_elementwise",
    "make_block_ptr",
    "advance",
    "make_tensor_descriptor",
    "load_tensor_descriptor",
    "store_tensor_descriptor",
    "tensor_descriptor",
    "dot_scaled",
]


def namespace(name, **members):
    """A module-like namespace (`ntl.math`, `ntl.extra.libdevice`)."""
    module = types.ModuleType(f"ninetoothed.language.{name}")
    module.__dict__.update(members)
    return module


class constexpr:
    """A compile-time value: `x: ntl.constexpr = 3` (the annotation is accepted) and
    `ntl.constexpr(3)`, which is the value itself, since values computed while tracing are
    compile-time already (ints, floats, strings, bools, dtypes)."""

    def __new__(cls, value):
        if is_block(value):
            raise TypeError("constexpr needs a value known while tracing, not a block")
        return value


class static_range:
    """`for i in ntl.static_range(start, end, step)`: unrolled while tracing, `i` an int."""

    def __init__(self, arg1, arg2=None, step=None):
        start, end = (0, arg1) if arg2 is None else (arg1, arg2)
        for value in (start, end, 1 if step is None else step):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"static_range bounds must be ints known while tracing, got {value!r}")
        self.range = builtins.range(start, end, 1 if step is None else step)

    def __iter__(self):
        return iter(self.range)


class range:
    """`for i in ntl.range(start, end, step, num_stages=..., ...)`: a loop in the kernel, as
    `range`; Triton's scheduling keywords (num_stages, loop_unroll_factor,
    disallow_acc_multi_buffer, flatten, warp_specialize, disable_licm) are accepted and
    ignored."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False):
        self.start, self.end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.step = 1 if step is None else step

    def __iter__(self):  # outside a kernel: Python's range
        return iter(builtins.range(self.start, self.end, self.step))


def static_assert(cond, msg=""):
    """Raises AssertionError while tracing when `cond` (a value known while tracing) is false."""
    if is_block(cond):
        raise TypeError("static_assert needs a condition known while tracing, not a block (see device_assert)")
    from ninetoothed import _core

    if isinstance(cond, _core.Symbol):
        raise TypeError("static_assert: a symbolic condition cannot be decided while tracing")
    if not cond:
        raise AssertionError(f"static_assert failed: {msg}" if msg else "static_assert failed")


def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """Prints while tracing (once per specialisation), as `print`."""
    builtins.print(*values, sep=sep, end=end, file=file or sys.stdout, flush=flush)


def device_print(prefix, *args, hex=False):
    """Prints each element of each argument from the kernel (OpenCL printf): one line
    `pid (p, ...) idx (i, ...) <prefix> <value>` per element (with ` (operand k)` after the
    prefix when several are given); floats as %f (%a with hex), integers as %d (0x%x)."""
    if not isinstance(prefix, str):
        args = (prefix,) + args
        prefix = ""
    current_builder().device_print(prefix, [_block(a) for a in args], hex)


def device_assert(cond, msg="", mask=None):
    """Prints `pid (...) idx (...) device_assert failed: <msg>` from the kernel for each
    element where `cond` is false (and `mask`, if given, true). The kernel goes on: OpenCL
    cannot stop it."""
    if not is_block(cond):
        static_assert(cond, msg)
        return
    current_builder().device_assert(_block(cond), msg, None if mask is None else _block(mask))


def multiple_of(input, values):
    """A hint: returns `input`."""
    return input


def max_contiguous(input, values):
    """A hint: returns `input`."""
    return input


def max_constancy(input, values):
    """A hint: returns `input`."""
    return input


def assume(cond):
    """A hint to the compiler: nothing is generated."""


def debug_barrier():
    """A barrier between the threads of a program: one work-item runs a program here, so nothing."""


def map_elementwise(scalar_fn, *args, pack=1):
    """`scalar_fn` applied elementwise to the broadcast blocks `args` (traced once on the
    blocks: its body must use elementwise operations and conditional expressions, not `if`)."""
    return trace_call(scalar_fn, [_block(a) for a in args])


def _unsupported(name, reason):
    def function(*args, **kwargs):
        raise NotImplementedError(f"ntl.{name} is not supported: {reason}")

    function.__name__ = name
    function.__doc__ = f"Not supported: {reason}."
    return function


inline_asm_elementwise = _unsupported("inline_asm_elementwise", "it runs GPU assembly; OpenCL C has none")
_BLOCK_POINTERS = "block pointers are out of scope; index `p.source` or use pointer arithmetic"
make_block_ptr = _unsupported("make_block_ptr", _BLOCK_POINTERS)
advance = _unsupported("advance", _BLOCK_POINTERS)
_DESCRIPTORS = "tensor descriptors (TMA) are out of scope; arrange the tensor instead"
make_tensor_descriptor = _unsupported("make_tensor_descriptor", _DESCRIPTORS)
load_tensor_descriptor = _unsupported("load_tensor_descriptor", _DESCRIPTORS)
store_tensor_descriptor = _unsupported("store_tensor_descriptor", _DESCRIPTORS)
tensor_descriptor = _unsupported("tensor_descriptor", _DESCRIPTORS)
dot_scaled = _unsupported("dot_scaled", "microscaled float8/float4 formats have no OpenCL type")


def _install_dtype_methods():
    """Triton's dtype queries on NineToothed's dtypes (`x.dtype.is_floating()`, ...)."""
    from ninetoothed._core import DType

    floats = {DType.float8_e5m2: 8, DType.float8_e4m3fn: 8, DType.float16: 16, DType.bfloat16: 16,
              DType.float32: 32, DType.float64: 64}
    signed = {DType.int8: 8, DType.int16: 16, DType.int32: 32, DType.int64: 64}
    unsigned = {DType.uint8: 8, DType.uint16: 16, DType.uint32: 32, DType.uint64: 64}
    mantissa = {DType.float8_e5m2: 2, DType.float8_e4m3fn: 3, DType.float16: 10, DType.bfloat16: 7,
                DType.float32: 23, DType.float64: 52}
    queries = {
        "is_floating": lambda d: d in floats,
        "is_int": lambda d: d in signed or d in unsigned or d == DType.bool,
        "is_int_signed": lambda d: d in signed,
        "is_int_unsigned": lambda d: d in unsigned,
        "is_bool": lambda d: d == DType.bool,
        "is_fp8": lambda d: d in (DType.float8_e5m2, DType.float8_e4m3fn),
        "is_fp8e5": lambda d: d == DType.float8_e5m2,
        "is_fp8e4nv": lambda d: d == DType.float8_e4m3fn,
        "is_fp16": lambda d: d == DType.float16,
        "is_bf16": lambda d: d == DType.bfloat16,
        "is_fp32": lambda d: d == DType.float32,
        "is_fp64": lambda d: d == DType.float64,
        "is_int8": lambda d: d == DType.int8,
        "is_int16": lambda d: d == DType.int16,
        "is_int32": lambda d: d == DType.int32,
        "is_int64": lambda d: d == DType.int64,
        "is_uint8": lambda d: d == DType.uint8,
        "is_uint16": lambda d: d == DType.uint16,
        "is_uint32": lambda d: d == DType.uint32,
        "is_uint64": lambda d: d == DType.uint64,
        "is_ptr": lambda d: False,
        "is_block": lambda d: False,
    }
    for name, query in queries.items():
        setattr(DType, name, query)
    widths = {**floats, **signed, **unsigned, DType.bool: 1}
    DType.primitive_bitwidth = property(lambda d: widths[d])
    DType.int_bitwidth = property(lambda d: signed.get(d) or unsigned.get(d) or (1 if d == DType.bool else 0))
    DType.fp_mantissa_width = property(lambda d: mantissa.get(d, 0))
    DType.scalar = property(lambda d: d)
    DType.element_ty = property(lambda d: d)


_install_dtype_methods()
