"""What is being traced on this thread, for the language's functions: the Builder and the Tracer of
the application (set by _frontend.Tracer while it runs), and a value as the block it stands for.

The bottom of the frontend's modules: it imports nothing of ninetoothed but the core, so that the
language (language, _language_blocks, _language_meta), the parameters (_parameters) and the
tracer (_frontend) all build on it without importing each other in circles.
"""

import contextlib
import threading
import types

from ninetoothed import _core

_state = threading.local()


def current_builder():
    """The Builder of the application being traced (for ntl.program_id and friends)."""
    builder = getattr(_state, "builder", None)
    if builder is None:
        raise RuntimeError("this ntl function can be called only inside an application being traced")
    return builder


@contextlib.contextmanager
def tracing(builder, tracer):
    """`builder` and `tracer` are what is traced on this thread inside the `with`."""
    outer = getattr(_state, "builder", None), getattr(_state, "tracer", None)
    _state.builder, _state.tracer = builder, tracer
    try:
        yield
    finally:
        _state.builder, _state.tracer = outer


def block_of(x):
    """A parameter as the block it loads; anything else (blocks, numbers, Symbols) as it is."""
    as_block = getattr(x, "_ninetoothed_block", None)
    return as_block() if as_block is not None else x


def is_block(x):
    """Is `x` a block, or a parameter that stands for one?"""
    return _core.is_block(x) or hasattr(x, "_ninetoothed_block")


def is_user_function(function):
    """A plain Python function of the user's (not a lambda, not ninetoothed's): traced, not called."""
    if not isinstance(function, types.FunctionType) or function.__name__ == "<lambda>":
        return False  # lambdas are called: their blocks' operators build the IR
    module = getattr(function, "__module__", "") or ""
    return not module.startswith("ninetoothed")


def trace_call(function, arguments):
    """Calls `function` on `arguments` while an application is traced: a plain Python
    function is traced like a helper (combine functions of ntl.reduce and friends), others
    (ntl functions, lambdas) are called."""
    tracer = getattr(_state, "tracer", None)
    if tracer is None or not is_user_function(function):
        return function(*arguments)
    return tracer._run_function(function, list(arguments), None)
