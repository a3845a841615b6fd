"""Python's built-ins with a meaning on blocks while an application is traced (`min`, `max`, `abs`,
`float`, `int`), as Triton maps them; on other values they are Python's own."""

import builtins
import functools

from ninetoothed import _core
from ninetoothed._tracing import block_of as _block
from ninetoothed._tracing import is_block

def _builtin_min(*args, **kwargs):
    """`min(a, b, ...)`: the elementwise minimum where a block takes part (as Triton maps it)."""
    if len(args) >= 2 and not kwargs and any(is_block(a) for a in args):
        return functools.reduce(lambda a, b: _core.block_binary("minimum", _block(a), _block(b)), args)
    return builtins.min(*args, **kwargs)


def _builtin_max(*args, **kwargs):
    """`max(a, b, ...)`: the elementwise maximum where a block takes part."""
    if len(args) >= 2 and not kwargs and any(is_block(a) for a in args):
        return functools.reduce(lambda a, b: _core.block_binary("maximum", _block(a), _block(b)), args)
    return builtins.max(*args, **kwargs)


def _builtin_abs(x):
    return _core.block_unary("abs", _block(x)) if is_block(x) else builtins.abs(x)


def _scalar_conversion(python_type, dtype):
    def convert(x=0):
        if is_block(x):
            block = _block(x)
            if block.ndim != 0:
                raise TypeError(f"{python_type.__name__}() of a block of shape {block.shape}; use ntl.cast")
            return _core.block_cast(block, dtype)
        return python_type(x)

    return convert


# Python built-ins with a meaning on blocks while tracing.
BUILTINS_ON_BLOCKS = {
    "min": _builtin_min,
    "max": _builtin_max,
    "abs": _builtin_abs,
    "float": _scalar_conversion(float, _core.DType.float32),
    "int": _scalar_conversion(int, _core.DType.int32),
}
