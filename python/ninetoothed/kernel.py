"""The kernel handle `make` and `jit` (ninetoothed._make) return, and their keywords' checks.

A kernel is specialised per argument signature (the dtypes of the tensors,
the kinds of untyped scalars and the values of constexpr scalars): the
first launch with a new signature traces the application into the C++ IR
(ninetoothed._frontend) and generates its OpenCL C; later launches with that
signature only bind arguments and run. Torch tensors and numpy arrays reach
the kernel by buffer: their data pointers, shapes and strides (in elements).
"""

import inspect
import warnings
import weakref

from ninetoothed import _core
from ninetoothed._core import DType, Tensor
from ninetoothed._frontend import Tracer
from ninetoothed._parameters import Parameter

def _element_dtype(tensor):
    """The scalar dtype under all levels of an arranged tensor (None if unset, or if what was declared
    is not a dtype: upstream keeps such a value and a JIT launch ignores it)."""
    dtype = tensor.dtype
    while isinstance(dtype, Tensor):
        dtype = dtype.dtype
    return dtype if isinstance(dtype, DType) else None


class _ParamSpec:
    def __init__(self, name, arranged):
        self.name = name
        self.arranged = arranged
        self.scalar = arranged.ndim == 0
        self.constexpr = bool(arranged.constexpr) if self.scalar else False
        self.dtype = _element_dtype(arranged)
        self.source_ndim = 0 if self.scalar else arranged.source.ndim
        self.jagged_dim = None if self.scalar else arranged.source.jagged_dim


class Kernel:
    """A NineToothed kernel: call it with one argument per arranged tensor."""

    def __init__(self, application, arranged, kernel_name=None, num_warps=None, num_stages=None, max_num_configs=None):
        self._application = application
        self.kernel_name = kernel_name or getattr(application, "__name__", "kernel")
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.max_num_configs = max_num_configs
        names = list(inspect.signature(application).parameters)
        if len(names) != len(arranged):
            raise TypeError(
                f"the application takes {len(names)} parameters but the arrangement gives "
                f"{len(arranged)} tensors"
            )
        for name, tensor in zip(names, arranged):
            if not isinstance(tensor, Tensor):
                raise TypeError(f"the arrangement must give Tensors, got {type(tensor).__name__} for '{name}'")
        self._params = [_ParamSpec(n, t) for n, t in zip(names, arranged)]
        self._binder = _core.LaunchBinder(
            self.kernel_name,
            [(p.name, p.scalar, p.constexpr, p.dtype, p.source_ndim, p.jagged_dim) for p in self._params],
            weakref.WeakMethod(self._specialize),
        )
        self._compiled = {}
        self._last = None
        self._pinned = None
        # Trace once with the declared dtypes (float32 where none is declared),
        # so that unsupported syntax surfaces at make() time. Other errors may
        # depend on the dtypes the arguments will have; they wait for a launch.
        try:
            self._last = self._specialize(self._default_signature())
        except (SyntaxError, NameError):
            raise
        except Exception:  # noqa: BLE001 - raised again by the launch that has real dtypes
            pass

    def _default_signature(self):
        return tuple(self._default_key(p) for p in self._params)

    # --- specialisation ---------------------------------------------------------

    @staticmethod
    def _default_key(param):
        if param.constexpr:
            return ("constexpr", 0)
        return param.dtype if param.dtype is not None else DType.float32

    def _specialize(self, key):
        compiled = self._compiled.get(key)
        if compiled is not None:
            return compiled
        builder = _core.Builder(self.kernel_name)
        arguments = []
        for index, (param, entry) in enumerate(zip(self._params, key)):
            if param.constexpr:
                builder.add_param(param.name, param.arranged, DType.int64, True, True)
                arguments.append(entry[1])
                continue
            builder.add_param(param.name, param.arranged, entry, param.scalar, False)
            if param.scalar:
                arguments.append(builder.load(index, []))
            else:
                arguments.append(Parameter(builder, index, param.name, param.arranged, entry))
        Tracer(builder).trace(self._application, arguments)
        compiled = builder.finish()
        if self.max_num_configs:
            compiled.set_max_num_configs(self.max_num_configs)
        if isinstance(self.num_warps, tuple) or self.num_stages is not None:
            compiled.set_tuning_candidates(_candidates(self.num_warps), _candidates(self.num_stages))
        elif self.num_warps:
            compiled.set_num_warps(self.num_warps)
        self._compiled[key] = compiled
        return compiled

    def _most_recent(self):
        return self._binder.last or self._last or self._specialize(self._default_signature())

    @property
    def source(self):
        """The OpenCL C of the most recently used specialisation."""
        return self._most_recent().source

    @property
    def cuda_source(self):
        """The CUDA C of the most recently used specialisation (what runs on CUDA tensors)."""
        return self._most_recent().cuda_source

    @property
    def ir(self):
        """The lowered kernel IR of the most recently used specialisation, as text."""
        return self._most_recent().ir

    # --- launch -----------------------------------------------------------------

    def __call__(self, *args, **constexpr_values):
        # One call into the core (cpp/bindings/launch_bindings.cpp): it converts the
        # arguments (torch CPU tensors and numpy arrays by pointer, shape and strides in
        # elements; torch CUDA tensors and CuPy arrays likewise, launched on their device's
        # current stream; scalars: bool and int as int64, float as float32, or the parameter's
        # declared dtype; a 0-dim torch tensor or numpy value by its item()), finds the
        # specialisation for their dtypes and constexpr values (tracing a new one through
        # self._specialize), checks the constexpr keywords and the pinned configuration,
        # and launches with the GIL released.
        warning = self._binder.launch(args, constexpr_values, self._pinned)
        if warning:
            warnings.warn(warning, RuntimeWarning, stacklevel=2)

    @property
    def last_launch_seconds(self):
        """The device's execution time of the last launch in seconds (OpenCL profiling; host copies and
        argument handling excluded), or None before the first launch and after a launch on CUDA
        tensors (which does not wait for its kernel)."""
        return self._binder.last_launch_seconds

    def pin(self, config):
        """Uses `config` ({meta symbol name: value}, and `num_warps`, `num_stages` as the tuning report
        shows them) for every launch instead of tuning; None unpins."""
        self._pinned = None if config is None else {str(k): int(v) for k, v in config.items()}

    def tuning_report(self):
        """What auto-tuning did: per key, the candidates with their times in seconds and the choice."""
        return [record for compiled in self._compiled.values() for record in compiled.tuning_report()]


def check_declared_dtypes(tensors, what):
    """Refuses tensors whose declared dtype is not a dtype where it is used: an ahead-of-time kernel is
    built for the declared dtypes (at a JIT launch such a value is ignored: the argument's dtype is used)."""
    for index, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor) or tensor.constexpr:
            continue
        dtype = tensor.dtype
        while isinstance(dtype, Tensor):
            dtype = dtype.dtype
        if dtype is not None and not isinstance(dtype, DType):
            raise ValueError(
                f"{what}: tensor {index} declares dtype={dtype!r}, which is not a dtype; an ahead-of-time "
                "kernel is built for its tensors' declared dtypes (e.g. Tensor(..., dtype=ninetoothed.float32))"
            )


def _positive_int(value):
    return not isinstance(value, bool) and isinstance(value, int) and value >= 1


def _tuning_space(name, value):
    """num_warps/num_stages as upstream takes them: None, a positive int, or an iterable of them (the
    candidates tuning chooses among: a tuple, a list, a generator, read once) as a tuple without repeats."""
    if value is None or _positive_int(value):
        return value
    if not isinstance(value, (str, bytes, dict)):
        try:
            candidates = tuple(dict.fromkeys(value))
        except TypeError:
            candidates = None
        if candidates and all(_positive_int(c) for c in candidates):
            return candidates
    raise ValueError(f"{name} must be a positive int, a tuple or list of them (candidates to tune), or None, "
                     f"got {value!r}")


def _candidates(value):
    """A num_warps/num_stages keyword (None, an int or candidates) as the core's list of candidates."""
    return [] if value is None else list(value) if isinstance(value, tuple) else [value]


def _launch_options(num_warps, num_stages, max_num_configs):
    """Checks make()/jit()'s upstream keywords; returns them as Kernel keywords."""
    if max_num_configs is not None and not _positive_int(max_num_configs):
        raise ValueError(f"max_num_configs must be a positive int or None, got {max_num_configs!r}")
    return {
        "num_warps": _tuning_space("num_warps", num_warps),
        "num_stages": _tuning_space("num_stages", num_stages),
        "max_num_configs": max_num_configs,
    }
