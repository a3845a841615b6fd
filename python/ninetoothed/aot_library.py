"""Calling an ahead-of-time library from Python (what `make(..., caller="opencl" or "cuda")` and `build`
return).

An `AotKernel` loads a private copy of `NAME.so` and reads `NAME.json`, the manifest the writer
(ninetoothed.aot, ninetoothed.build) leaves beside it: the variants, their parameters' dtypes and
numbers of dimensions (which a NineToothedTensor cannot carry, so they are checked here), the
configuration arguments and any tuned table. A call converts torch tensors, numpy arrays and Python
numbers to NineToothedTensors and calls `launch_NAME`; a non-zero result becomes an exception. A
CUDA library (caller="cuda") takes torch CUDA tensors (or objects with `__cuda_array_interface__`) and
runs on torch's current stream of their device (or the stream the interface names), as a JIT
kernel does.
"""

import ctypes
import enum
import json
import os
import pathlib
import shutil
import struct
import tempfile

from ninetoothed._core import DType

# Upstream's NineToothedDataType order: configuration arguments that are
# dtypes are passed to dispatchers as these indices.
DTYPE_INDICES = {
    DType.int8: 0,
    DType.int16: 1,
    DType.int32: 2,
    DType.int64: 3,
    DType.uint8: 4,
    DType.uint16: 5,
    DType.uint32: 6,
    DType.uint64: 7,
    DType.float16: 8,
    DType.bfloat16: 9,
    DType.float32: 10,
    DType.float64: 11,
}

DTYPE_NAMES = {
    DType.int8: "int8",
    DType.int16: "int16",
    DType.int32: "int32",
    DType.int64: "int64",
    DType.uint8: "uint8",
    DType.uint16: "uint16",
    DType.uint32: "uint32",
    DType.uint64: "uint64",
    DType.float16: "float16",
    DType.bfloat16: "bfloat16",
    DType.float32: "float32",
    DType.float64: "float64",
    getattr(DType, "bool"): "bool",
    DType.float8_e5m2: "float8_e5m2",
    DType.float8_e4m3fn: "float8_e4m3fn",
}
_DTYPES_BY_NAME = {name: dtype for dtype, name in DTYPE_NAMES.items()}

# Result codes (cpp/aot/aot_runtime.h).
NO_VARIANT = 1
_INVALID_ARGUMENT = 2
_INVALID_VALUE = 3

class AotError(RuntimeError):
    """An ahead-of-time kernel failed to launch (code and message from its library)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def read_manifest(output_dir, kernel_name):
    try:
        return json.loads((pathlib.Path(output_dir) / f"{kernel_name}.json").read_text())
    except (OSError, ValueError):
        return None


class _CTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("shape", ctypes.POINTER(ctypes.c_uint64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
    ]


_SCALAR_FORMATS = {
    "float16": "e", "float32": "f", "float64": "d", "int8": "b", "int16": "h", "int32": "i", "int64": "q",
    "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q", "bool": "?",
}


def load(library):
    """Loads a private copy of the library, so that rebuilding it never changes a loaded one."""
    with tempfile.NamedTemporaryFile(suffix=".so", delete=False) as copy:
        shutil.copyfile(library, copy.name)
    try:
        return ctypes.CDLL(copy.name)
    finally:
        os.unlink(copy.name)


def config_value(value):
    """A configuration argument as the int a dispatcher compares (upstream's rules), within C's int."""
    number = _config_number(value)
    if not -(2**31) <= number < 2**31:
        raise ValueError(f"a configuration argument must fit a C int, got {value!r}")
    return number


def _config_number(value):
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, DType) and value in DTYPE_INDICES:
        return DTYPE_INDICES[value]
    if isinstance(value, str) and value in _DTYPES_BY_NAME and _DTYPES_BY_NAME[value] in DTYPE_INDICES:
        return DTYPE_INDICES[_DTYPES_BY_NAME[value]]
    if isinstance(value, enum.Enum):
        return _config_number(value.value)
    raise TypeError(f"a configuration argument must be an int, bool, None or dtype, got {value!r}")


class AotKernel:
    """A callable over an ahead-of-time library: tensors, then any configuration arguments."""

    def __init__(self, output_dir, kernel_name):
        output_dir = pathlib.Path(output_dir)
        manifest = read_manifest(output_dir, kernel_name)
        if manifest is None:
            raise ValueError(f"{output_dir} holds no ahead-of-time kernel {kernel_name!r} ({kernel_name}.json)")
        self.kernel_name = kernel_name
        self._library = str(output_dir / f"{kernel_name}.so")
        self._manifest = manifest
        handle = load(self._library)
        self._handle = handle
        self._launch = getattr(handle, f"launch_{kernel_name}")
        self._launch.restype = ctypes.c_int
        self._last_error = handle.ninetoothed_last_error_message
        self._last_error.restype = ctypes.c_char_p
        self._error_string = handle.ninetoothed_error_string
        self._error_string.restype = ctypes.c_char_p
        self._variants = manifest["variants"]
        self._config_params = manifest["config_params"]
        self._meta_params = manifest["meta_params"]
        tuned = manifest.get("tuned")
        self._tuned = None if tuned is None else {tuple(row[0]): tuple(row[1]) for row in tuned}
        self._tensor_names = manifest.get("tensor_params") or [p["name"] for p in self._variants[0]["params"]]
        self.caller = manifest.get("caller", "opencl")

    @property
    def library(self):
        return self._library

    def _variant(self, config):
        """The variant the configuration arguments select (as the dispatcher does)."""
        if not self._config_params:
            return self._variants[0]
        names = [n for n in self._config_params if n not in self._meta_params]
        values = dict(zip(names, config))
        if self._tuned is not None:
            key = tuple(values[n] for n in names)
            if key not in self._tuned:
                return None
            values.update(zip(self._meta_params, self._tuned[key]))
        for variant in self._variants:
            if all(values.get(name) == value for name, value in variant["combination"].items()):
                return variant
        return None

    def __call__(self, *args):
        num_tensors = len(self._tensor_names)
        num_config = len([n for n in self._config_params if n not in self._meta_params]) if self._tuned is not None \
            else len(self._config_params)
        if len(args) != num_tensors + num_config:
            raise TypeError(
                f"{self.kernel_name}() takes {num_tensors} tensors"
                + (f" and {num_config} configuration arguments" if num_config else "")
                + f", got {len(args)} arguments"
            )
        tensors, config = args[:num_tensors], [config_value(v) for v in args[num_tensors:]]
        variant = self._variant(config)
        if variant is None:
            raise ValueError(
                f"{self.kernel_name}: no built variant matches the configuration {tuple(config)}; built: "
                + "; ".join(str(v["combination"]) for v in self._variants)
            )
        records = {p["name"]: p for p in variant["params"]}
        keep = []
        arguments = [ctypes.c_void_p(_stream_of(tensors) if self.caller == "cuda" else None)]
        for name, value in zip(self._tensor_names, tensors):
            record = records.get(name)
            arguments.append(c_tensor(record, name, value, keep, self.caller) if record else _CTensor())
        arguments += [ctypes.c_int(v) for v in config]
        code = self._launch(*arguments)
        if code != 0:
            detail = self._last_error().decode(errors="replace")
            message = f"{self.kernel_name}: {self._error_string(code).decode()}" + (f": {detail}" if detail else "")
            if code in (NO_VARIANT, _INVALID_ARGUMENT, _INVALID_VALUE):
                raise ValueError(message)
            raise AotError(code, message)


def _stream_of(tensors):
    """The CUstream a CUDA library's call runs on: torch's current stream of the first CUDA tensor's
    device, or the stream a `__cuda_array_interface__` names (None: the legacy default stream)."""
    for value in tensors:
        if type(value).__module__.startswith("torch") and getattr(value, "is_cuda", False):
            import torch

            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # no Stream object a call
            stream = raw(value.get_device()) if raw else torch.cuda.current_stream(value.device).cuda_stream
            return stream or None
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is not None:
            stream = interface.get("stream")  # 1: the legacy default stream (NULL); 2: per-thread's handle
            return None if stream in (None, 1) else stream
    return None


def c_tensor(record, name, value, keep, caller="opencl"):
    if record["scalar"]:
        if record["constexpr"]:
            return _CTensor()  # compiled into the kernel, as upstream
        if hasattr(value, "ndim") and value.ndim == 0 and hasattr(value, "item"):
            value = value.item()
        if not isinstance(value, (bool, int, float)):
            raise TypeError(f"'{name}' is a scalar parameter; got {type(value).__name__}")
        dtype = record["dtype"]
        if dtype == "bfloat16":
            bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
            data = struct.pack("<H", bits)
        elif dtype in ("float16", "float32", "float64"):
            data = struct.pack("<" + _SCALAR_FORMATS[dtype], float(value))
        else:
            data = struct.pack("<" + _SCALAR_FORMATS[dtype], int(value))
        buffer = ctypes.create_string_buffer(data, max(len(data), 8))
        keep.append(buffer)
        return _CTensor(ctypes.cast(buffer, ctypes.c_void_p), None, None)
    pointer, shape, strides, dtype = _tensor_view(name, value, caller)
    if dtype != record["dtype"]:
        raise TypeError(f"'{name}' must have dtype {record['dtype']}, got {dtype}")
    if len(shape) != record["ndim"]:
        raise ValueError(f"'{name}' must have {record['ndim']} dimensions, got {len(shape)}")
    shape_array = (ctypes.c_uint64 * max(len(shape), 1))(*shape)
    strides_array = (ctypes.c_int64 * max(len(strides), 1))(*strides)
    keep += [shape_array, strides_array, value]
    return _CTensor(pointer, shape_array, strides_array)


def _tensor_view(name, value, caller="opencl"):
    module = type(value).__module__
    if module.startswith("torch"):
        wanted = "cuda" if caller == "cuda" else "cpu"
        if value.device.type != wanted:
            raise ValueError(
                f"'{name}' is on the {value.device.type} device; this library (caller='{caller}') takes "
                + ("CUDA tensors" if caller == "cuda" else "CPU tensors")
            )
        dtype = str(value.dtype).replace("torch.", "")
        return value.data_ptr(), tuple(value.shape), tuple(value.stride()), dtype
    if caller == "cuda" and hasattr(value, "__cuda_array_interface__"):
        interface = value.__cuda_array_interface__
        return _interface_view(name, interface)
    if caller != "cuda" and module == "numpy" and type(value).__name__ == "ndarray":
        itemsize = value.itemsize
        if any(s % itemsize for s in value.strides):
            raise ValueError(f"'{name}' has strides that are not whole elements: {value.strides}")
        return (value.__array_interface__["data"][0], value.shape, tuple(s // itemsize for s in value.strides),
                value.dtype.name)
    wanted = "a CUDA torch.Tensor or an object with __cuda_array_interface__" if caller == "cuda" else \
        "a torch.Tensor or a numpy.ndarray"
    raise TypeError(f"'{name}' must be {wanted}, got {type(value).__name__}")


# __cuda_array_interface__ typestr (little-endian) -> dtype name.
_TYPESTRS = {
    "<f2": "float16", "<f4": "float32", "<f8": "float64", "|i1": "int8", "<i2": "int16", "<i4": "int32",
    "<i8": "int64", "|u1": "uint8", "<u2": "uint16", "<u4": "uint32", "<u8": "uint64", "|b1": "bool",
}


def _interface_view(name, interface):
    dtype = _TYPESTRS.get(interface["typestr"])
    if dtype is None:
        raise TypeError(f"'{name}' has the element type {interface['typestr']!r}, which no library takes")
    itemsize = int(interface["typestr"][2:])
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], 1
        for size in reversed(shape):
            strides.insert(0, step)
            step *= size
    else:
        if any(s % itemsize for s in strides):
            raise ValueError(f"'{name}' has strides that are not whole elements: {strides}")
        strides = [s // itemsize for s in strides]
    return interface["data"][0], shape, tuple(strides), dtype
