"""`make`, `jit` and the kernel handle they return.

A kernel is specialised per argument signature (the dtypes of the tensors,
the kinds of untyped scalars and the values of constexpr scalars): the
first launch with a new signature traces the application into the C++ IR
(ninetoothed._frontend) and generates its OpenCL C; later launches with that
signature only bind arguments and run. Torch tensors and numpy arrays reach
the kernel by buffer: their data pointers, shapes and strides (in elements).
"""

import inspect
import warnings

from ninetoothed import _core
from ninetoothed._core import DType, Tensor
from ninetoothed._frontend import Parameter, Tracer

_NUMPY_DTYPES = {
    "bool": getattr(DType, "bool"),
    "float16": DType.float16,
    "float32": DType.float32,
    "float64": DType.float64,
    "int8": DType.int8,
    "int16": DType.int16,
    "int32": DType.int32,
    "int64": DType.int64,
    "uint8": DType.uint8,
    "uint16": DType.uint16,
    "uint32": DType.uint32,
    "uint64": DType.uint64,
}


def _torch_dtypes():
    try:
        import torch
    except ImportError:
        return {}
    table = {
        torch.float16: DType.float16,
        torch.bfloat16: DType.bfloat16,
        torch.float32: DType.float32,
        torch.float64: DType.float64,
        torch.int8: DType.int8,
        torch.int16: DType.int16,
        torch.int32: DType.int32,
        torch.int64: DType.int64,
        torch.uint8: DType.uint8,
        torch.bool: getattr(DType, "bool"),
    }
    return table


_TORCH_DTYPES = None


def _element_dtype(tensor):
    """The scalar dtype under all levels of an arranged tensor (None if unset)."""
    dtype = tensor.dtype
    while isinstance(dtype, Tensor):
        dtype = dtype.dtype
    return dtype


class _ParamSpec:
    def __init__(self, name, arranged):
        self.name = name
        self.arranged = arranged
        self.scalar = arranged.ndim == 0
        self.constexpr = bool(arranged.constexpr) if self.scalar else False
        self.dtype = _element_dtype(arranged)


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
        self._compiled[key] = compiled
        return compiled

    @property
    def source(self):
        """The OpenCL C of the most recently used specialisation."""
        return (self._last or self._specialize(self._default_signature())).source

    @property
    def ir(self):
        """The lowered kernel IR of the most recently used specialisation, as text."""
        return (self._last or self._specialize(self._default_signature())).ir

    # --- launch -----------------------------------------------------------------

    def __call__(self, *args, **constexpr_values):
        params = self._params
        if len(args) != len(params):
            raise TypeError(f"{self.kernel_name}() takes {len(params)} arguments, got {len(args)}")
        key = []
        launch_args = []
        for param, arg in zip(params, args):
            if param.scalar:
                entry, value = _scalar_argument(param, arg)
                key.append(entry)
                launch_args.append(value)
            else:
                dtype, value = _tensor_argument(param, arg)
                key.append(dtype)
                launch_args.append(value)
        compiled = self._specialize(tuple(key))
        self._last = compiled
        for name, value in constexpr_values.items():
            if name not in compiled.constexpr_symbols:
                raise TypeError(f"{self.kernel_name}() got an unexpected keyword argument '{name}'")
            if isinstance(value, bool) or not isinstance(value, int):
                try:
                    constexpr_values[name] = int(value.__index__())
                except (AttributeError, TypeError):
                    raise TypeError(f"the constexpr value {name}={value!r} must be an int") from None
        if self._pinned is not None:
            unknown = sorted(set(self._pinned) - set(compiled.meta_symbols))
            if unknown:
                raise ValueError(
                    f"pin(): {', '.join(map(repr, unknown))} is not a meta symbol of {self.kernel_name}; "
                    f"its meta symbols: {', '.join(compiled.meta_symbols) or 'none'}"
                )
        compiled.launch(launch_args, constexpr_values, self._pinned)
        warning = _core.take_cache_warning()
        if warning:
            warnings.warn(warning, RuntimeWarning, stacklevel=2)

    def pin(self, config):
        """Uses `config` ({meta symbol name: value}) for every launch instead of tuning; None unpins."""
        self._pinned = None if config is None else {str(k): int(v) for k, v in config.items()}

    def tuning_report(self):
        """What auto-tuning did: per key, the candidates with their times in seconds and the choice."""
        return [record for compiled in self._compiled.values() for record in compiled.tuning_report()]


def _tensor_argument(param, arg):
    global _TORCH_DTYPES
    module = type(arg).__module__
    if module.startswith("torch"):
        if _TORCH_DTYPES is None:
            _TORCH_DTYPES = _torch_dtypes()
        if arg.device.type != "cpu":
            raise ValueError(
                f"'{param.name}' is on the {arg.device.type} device; NineToothed on OpenCL takes CPU tensors"
            )
        dtype = _TORCH_DTYPES.get(arg.dtype)
        if dtype is None:
            raise TypeError(f"'{param.name}' has the unsupported dtype {arg.dtype}")
        value = (arg.data_ptr(), tuple(arg.shape), arg.stride())
    elif module == "numpy" and type(arg).__name__ == "ndarray":
        dtype = _NUMPY_DTYPES.get(arg.dtype.name)
        if dtype is None:
            raise TypeError(f"'{param.name}' has the unsupported dtype {arg.dtype}")
        itemsize = arg.itemsize
        if any(s % itemsize for s in arg.strides):
            raise ValueError(f"'{param.name}' has strides that are not whole elements: {arg.strides}")
        value = (arg.__array_interface__["data"][0], arg.shape, tuple(s // itemsize for s in arg.strides))
    else:
        raise TypeError(
            f"'{param.name}' must be a torch.Tensor or a numpy.ndarray, got {type(arg).__name__}"
        )
    if param.dtype is not None and param.dtype != dtype:
        raise TypeError(f"'{param.name}' must have dtype {param.dtype}, got {dtype}")
    if len(value[1]) != param.arranged.source.ndim:
        raise ValueError(
            f"'{param.name}' must have {param.arranged.source.ndim} dimensions, got {len(value[1])}"
        )
    return dtype, value


def _scalar_argument(param, arg):
    if type(arg).__module__.startswith("torch") or type(arg).__module__ == "numpy":
        if getattr(arg, "ndim", 0) != 0:
            raise TypeError(f"'{param.name}' is a scalar parameter; got an array of shape {tuple(arg.shape)}")
        arg = arg.item()
    if isinstance(arg, bool):
        value, kind = int(arg), DType.int64
    elif isinstance(arg, int):
        value, kind = arg, DType.int64
    elif isinstance(arg, float):
        value, kind = arg, DType.float32
    else:
        raise TypeError(f"'{param.name}' is a scalar parameter; got {type(arg).__name__}")
    if param.constexpr:
        return ("constexpr", value), value
    if param.dtype is not None:
        kind = param.dtype
        if not _is_float(kind):
            value = int(value)
    return kind, value


def _is_float(dtype):
    return dtype in (DType.float16, DType.bfloat16, DType.float32, DType.float64)


def _launch_options(num_warps, num_stages, max_num_configs):
    """Checks make()/jit()'s upstream keywords; returns them as Kernel keywords."""
    for name, value in (("num_warps", num_warps), ("num_stages", num_stages), ("max_num_configs", max_num_configs)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    return {"num_warps": num_warps, "num_stages": num_stages, "max_num_configs": max_num_configs}


def make(
    arrangement,
    application,
    tensors,
    caller="torch",
    kernel_name=None,
    output_dir=None,
    num_warps=None,
    num_stages=None,
    max_num_configs=None,
):
    """Integrates an arrangement and an application into a kernel.

    `arrangement(*tensors)` gives the arranged tensors; `application`'s
    parameters match them by position. The keywords are upstream's:
    `kernel_name` names the kernel; `max_num_configs` caps the auto-tuning
    candidates; `num_warps` and `num_stages` are kept on the kernel (they will
    steer the work-group size once kernels run on work-groups). A `caller`
    other than "torch" ("opencl") builds the kernel ahead of time into a C
    library in `output_dir` named `kernel_name` (ninetoothed.aot) and returns
    a callable over that library.
    """
    options = _launch_options(num_warps, num_stages, max_num_configs)
    if caller != "torch":
        from ninetoothed import aot

        return aot.make(arrangement, application, tensors, caller, kernel_name, output_dir)
    if output_dir is not None:
        raise ValueError(
            "output_dir is where an ahead-of-time build is written: give caller='opencl' with it, "
            "or leave it out for a kernel called from Python"
        )
    arranged = arrangement(*tensors)
    if not isinstance(arranged, (tuple, list)):
        arranged = (arranged,)
    return Kernel(application, tuple(arranged), kernel_name=kernel_name, **options)


def jit(func=None, *, caller="torch", kernel_name=None, num_warps=None, num_stages=None, max_num_configs=None):
    """Compiles a function whose parameters are annotated with arranged tensors (keywords as make())."""
    if caller != "torch":
        raise NotImplementedError(
            f"jit(caller={caller!r}): ahead-of-time kernels are built with ninetoothed.make(..., "
            "caller='opencl', kernel_name=..., output_dir=...) or ninetoothed.build; jit makes kernels "
            "called from Python (caller='torch')"
        )
    options = _launch_options(num_warps, num_stages, max_num_configs)

    def decorate(function):
        annotations = []
        for name, parameter in inspect.signature(function).parameters.items():
            if not isinstance(parameter.annotation, Tensor):
                raise TypeError(f"parameter '{name}' of {function.__name__} must be annotated with a Tensor")
            annotations.append(parameter.annotation)
        return Kernel(function, tuple(annotations), kernel_name=kernel_name, **options)

    return decorate(func) if func is not None else decorate
