"""Calling an ahead-of-time library from Python (what `make(..., caller="opencl")` and `build` return).

An `AotKernel` loads a private copy of `NAME.so` and reads `NAME.json`, the manifest the writer
(ninetoothed.aot, ninetoothed.build) leaves beside it: the variants, their parameters' dtypes and
numbers of dimensions (which a NineToothedTensor cannot carry, so they are checked here), the
configuration arguments and any tuned table. A call converts torch tensors, numpy arrays and Python
numbers to NineToothedTensors and calls `launch_NAME`; a non-zero result becomes an exception.
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
        arguments = [ctypes.c_void_p(None)]
        for name, value in zip(self._tensor_names, tensors):
            record = records.get(name)
            arguments.append(c_tensor(record, name, value, keep) if record else _CTensor())
        arguments += [ctypes.c_int(v) for v in config]
        code = self._launch(*arguments)
        if code != 0:
            detail = self._last_error().decode(errors="replace")
            message = f"{self.kernel_name}: {self._error_string(code).decode()}" + (f": {detail}" if detail else "")
            if code in (NO_VARIANT, _INVALID_ARGUMENT, _INVALID_VALUE):
                raise ValueError(message)
            raise AotError(code, message)


def c_tensor(record, name, value, keep):
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
    pointer, shape, strides, dtype = _tensor_view(name, value)
    if dtype != record["dtype"]:
        raise TypeError(f"'{name}' must have dtype {record['dtype']}, got {dtype}")
    if len(shape) != record["ndim"]:
        raise ValueError(f"'{name}' must have {record['ndim']} dimensions, got {len(shape)}")
    shape_array = (ctypes.c_uint64 * max(len(shape), 1))(*shape)
    strides_array = (ctypes.c_int64 * max(len(strides), 1))(*strides)
    keep += [shape_array, strides_array, value]
    return _CTensor(pointer, shape_array, strides_array)


def _tensor_view(name, value):
    module = type(value).__module__
    if module.startswith("torch"):
        if value.device.type != "cpu":
            raise ValueError(f"'{name}' is on the {value.device.type} device; NineToothed on OpenCL takes CPU tensors")
        dtype = str(value.dtype).replace("torch.", "")
        return value.data_ptr(), tuple(value.shape), tuple(value.stride()), dtype
    if module == "numpy" and type(value).__name__ == "ndarray":
        itemsize = value.itemsize
        if any(s % itemsize for s in value.strides):
            raise ValueError(f"'{name}' has strides that are not whole elements: {value.strides}")
        return (value.__array_interface__["data"][0], value.shape, tuple(s // itemsize for s in value.strides),
                value.dtype.name)
    raise TypeError(f"'{name}' must be a torch.Tensor or a numpy.ndarray, got {type(value).__name__}")
