"""Ahead-of-time kernels: `make(..., caller="opencl")` writes a C library.

`make` with a caller other than "torch" traces the application with the
tensors' declared dtypes and writes into `output_dir`, in upstream's C API:

- `ninetoothed.h`: `NineToothedTensor`, `NineToothedStream`,
  `NineToothedResult`, the `NineToothedDataType` enum, the result codes and
  `ninetoothed_error_string`;
- `NAME.h`: `NineToothedResult launch_NAME(NineToothedStream stream,
  NineToothedTensor ...)`, one tensor per parameter of the application;
- `NAME.cpp`: that function over the kernel's launch plan (its OpenCL C and
  what a launch binds), embedded as text;
- `NAME.so` (and the link `libNAME.so`): those compiled with the system C++
  compiler against the core's static archive and libOpenCL. The library
  needs no Python: the core's driver in it builds the OpenCL program at first
  use (device binaries cached in NINETOOTHED_CACHE_DIR), tunes meta symbols
  and launches, on the device NINETOOTHED_DEVICE names (PoCL's CPU device by
  default).

`make` then returns an `AotKernel`: a Python callable over that library
taking torch tensors, numpy arrays and Python scalars.
"""

import contextlib
import ctypes
import fcntl
import hashlib
import json
import keyword
import os
import pathlib
import re
import shutil
import struct
import subprocess
import tempfile
import threading

from ninetoothed import _core
from ninetoothed._core import DType, Tensor

SUPPORTED_CALLERS = ("opencl",)

_RUNTIME_DIR = pathlib.Path(__file__).parent / "aot_runtime"

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

_HEADER = """\
#ifndef NINETOOTHED_H
#define NINETOOTHED_H

/* Written by NineToothed (ninetoothed.make / ninetoothed.build with an
   ahead-of-time caller): the types every generated kernel header uses. */

#include <stdint.h>

#define NINETOOTHED_TRUE 1

#define NINETOOTHED_FALSE 0

#define NINETOOTHED_NONE 0

enum NineToothedDataType {
    NINETOOTHED_INT8,
    NINETOOTHED_INT16,
    NINETOOTHED_INT32,
    NINETOOTHED_INT64,
    NINETOOTHED_UINT8,
    NINETOOTHED_UINT16,
    NINETOOTHED_UINT32,
    NINETOOTHED_UINT64,
    NINETOOTHED_FLOAT16,
    NINETOOTHED_BFLOAT16,
    NINETOOTHED_FLOAT32,
    NINETOOTHED_FLOAT64
};

/* data: the element at index (0, ..., 0); shape: one size per dimension;
   strides: in elements, any sign. A 0-dim tensor (a scalar parameter) needs
   only data, pointing to a value of the parameter's dtype. */
typedef struct {
    void *data;
    uint64_t *shape;
    int64_t *strides;
} NineToothedTensor;

/* A cl_command_queue, or NULL: the kernel runs on the library's own queue on
   the device NINETOOTHED_DEVICE names (PoCL's CPU device by default). */
typedef void *NineToothedStream;

/* 0 on success; otherwise one of the codes below. */
typedef int NineToothedResult;

#define NINETOOTHED_SUCCESS 0
#define NINETOOTHED_ERROR_NO_VARIANT 1
#define NINETOOTHED_ERROR_INVALID_ARGUMENT 2
#define NINETOOTHED_ERROR_INVALID_VALUE 3
#define NINETOOTHED_ERROR_DEVICE 4
#define NINETOOTHED_ERROR_BUILD 5
#define NINETOOTHED_ERROR_FORKED 6
#define NINETOOTHED_ERROR_OUT_OF_MEMORY 7
#define NINETOOTHED_ERROR_STREAM 8
#define NINETOOTHED_ERROR_INTERNAL 9

#ifdef __cplusplus
extern "C" {
#endif

/* A sentence describing a result code (never NULL). */
const char *ninetoothed_error_string(NineToothedResult code);

#ifdef __cplusplus
}
#endif

#endif /* NINETOOTHED_H */
"""

# Names a generated parameter may not have: C11 and C++20 keywords, macros and names the
# generated code uses.
_RESERVED = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class co_await co_return co_yield compl concept const consteval constexpr constinit
    const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern
    false float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr
    operator or or_eq private protected public register reinterpret_cast requires restrict return short
    signed sizeof static static_assert static_cast struct switch template this thread_local throw true
    try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
    _Thread_local NULL stream NtAotTensor""".split()
)


class AotError(RuntimeError):
    """An ahead-of-time kernel failed to launch (code and message from its library)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def check_caller(caller):
    if caller not in SUPPORTED_CALLERS:
        raise NotImplementedError(
            f"caller={caller!r} is not supported: NineToothed on OpenCL builds ahead-of-time kernels for "
            f"caller='opencl' (a C library over OpenCL, called with NineToothedTensors) and runs kernels "
            f"from Python with caller='torch'"
        )


def c_identifier(name):
    """`name` as a C identifier that is no keyword, macro or name the generated code uses."""
    name = re.sub(r"\W", "_", str(name), flags=re.ASCII)
    if not name or name[0].isdigit():
        name = "_" + name
    if name in _RESERVED or keyword.iskeyword(name) or name.startswith("ninetoothed_"):
        name += "_"
    return name


def c_identifiers(names, taken=()):
    """c_identifier of each name, made unique (among themselves and `taken`) by a numeric suffix."""
    result, used = [], set(taken)
    for name in names:
        candidate = base = c_identifier(name)
        number = 1
        while candidate in used:
            candidate = f"{base}_{number}"
            number += 1
        used.add(candidate)
        result.append(candidate)
    return result


def check_kernel_name(kernel_name):
    if not isinstance(kernel_name, str) or not re.fullmatch(r"[A-Za-z_]\w*", kernel_name):
        raise ValueError(f"kernel_name must be a C identifier for an ahead-of-time build, got {kernel_name!r}")


# --- writing a kernel's files ---------------------------------------------------


def write_header(output_dir):
    path = pathlib.Path(output_dir) / "ninetoothed.h"
    if not path.exists() or path.read_text() != _HEADER:
        _write_atomically(path, _HEADER)


def _write_atomically(path, text):
    path = pathlib.Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _c_string(data):
    """`data` (bytes) as C string literal lines, every byte outside plain ASCII escaped."""
    lines, line = [], []
    for byte in data:
        char = chr(byte)
        if byte == 0x0A:
            line.append("\\n")
            lines.append('"' + "".join(line) + '"')
            line = []
            continue
        if 0x20 <= byte < 0x7F and char not in '"\\?':
            line.append(char)
        else:
            line.append(f"\\{byte:03o}")
    if line or not lines:
        lines.append('"' + "".join(line) + '"')
    return "\n    ".join(lines)


def kernel_files(kernel_name, param_names, plan):
    """The texts of NAME.h and NAME.cpp for a kernel with that launch plan."""
    params = c_identifiers(param_names)
    signature = ", ".join(["NineToothedStream stream"] + [f"NineToothedTensor {p}" for p in params])
    guard = f"NINETOOTHED_KERNEL_{kernel_name}_H"
    header = f"""#ifndef {guard}
#define {guard}

#include "ninetoothed.h"

#ifdef __cplusplus
extern "C" {{
#endif

NineToothedResult launch_{kernel_name}({signature});

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""
    if params:
        tensors = ", ".join(f"{{{p}.data, {p}.shape, {p}.strides}}" for p in params)
        arguments = f"  const NtAotTensor ninetoothed_arguments_[] = {{{tensors}}};\n"
        pointer = "ninetoothed_arguments_"
    else:
        arguments, pointer = "", "nullptr"
    source = f"""// Written by NineToothed: the ahead-of-time kernel {kernel_name}. Its launch
// plan (the OpenCL C and what a launch binds) is embedded as text; the core's
// runtime, linked into this library, builds, tunes and launches it.
#include "{kernel_name}.h"

#include "aot_runtime.h"

namespace {{

const char ninetoothed_plan_[] =
    {_c_string(plan)};

void* ninetoothed_state_ = nullptr;

}}  // namespace

extern "C" __attribute__((visibility("default"))) NineToothedResult launch_{kernel_name}({signature}) {{
{arguments}  return ninetoothed_aot_launch(ninetoothed_plan_, sizeof ninetoothed_plan_ - 1, &ninetoothed_state_, stream,
                                {pointer}, {len(params)});
}}
"""
    return header, source


# --- compiling a library --------------------------------------------------------


def _compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return name
    raise RuntimeError("an ahead-of-time build needs a C++ compiler (c++, g++ or clang++) on PATH")


def _runtime_files():
    archive = _RUNTIME_DIR / "libninetoothed_core.a"
    if not archive.exists():
        raise RuntimeError(
            f"{archive} is missing: build NineToothed (scripts/setup.sh) so that ahead-of-time libraries "
            "can link its runtime"
        )
    opencl = (_RUNTIME_DIR / "opencl_library.txt").read_text().strip()
    return archive, opencl


_COMPILE_FLAGS = ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden"]
_LINK_FLAGS = ["-lpthread", "-Wl,--exclude-libs,ALL", "-Wl,--gc-sections"]


def compile_objects(sources, include_dir, object_dir):
    """Compiles each C++ source to an object in `object_dir`, in parallel compiler processes."""
    compiler = _compiler()
    objects = []
    processes = []
    jobs = max(1, os.cpu_count() or 1)
    for source in sources:
        obj = pathlib.Path(object_dir) / (pathlib.Path(source).stem + ".o")
        command = [compiler, *_COMPILE_FLAGS, "-c", str(source), "-o", str(obj),
                   "-I", str(include_dir), "-I", str(_RUNTIME_DIR)]
        processes.append((subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), command))
        objects.append(obj)
        if len(processes) >= jobs:
            _wait(processes.pop(0))
    for process in processes:
        _wait(process)
    return objects


def _wait(entry):
    process, command = entry
    output = process.communicate()[0].decode(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"compiling an ahead-of-time kernel failed: {' '.join(command)}\n{output}")


def link_library(kernel_name, objects, output_dir, object_dir):
    """Links the objects, the exports and the runtime into NAME.so (and the link libNAME.so)."""
    output_dir = pathlib.Path(output_dir)
    archive, opencl = _runtime_files()
    exports_dir = pathlib.Path(object_dir) / "runtime"
    exports_dir.mkdir(exist_ok=True)
    exports = compile_objects([_RUNTIME_DIR / "exports.cpp"], output_dir, exports_dir)
    library = output_dir / f"{kernel_name}.so"
    temporary = output_dir / f".{kernel_name}.{os.getpid()}.{threading.get_ident()}.so"
    command = [_compiler(), "-shared", "-o", str(temporary), *map(str, objects), *map(str, exports), str(archive),
               opencl, *_LINK_FLAGS]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        temporary.unlink(missing_ok=True)
        raise RuntimeError(
            f"linking the ahead-of-time library {library} failed: {' '.join(command)}\n"
            + result.stdout.decode(errors="replace")
        )
    os.replace(temporary, library)
    link = output_dir / f"lib{kernel_name}.so"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(library.name)
    return library


_RUNTIME_FINGERPRINT = None


def _runtime_fingerprint():
    """What else a library is made of: the runtime archive, its header and exports, the compiler."""
    global _RUNTIME_FINGERPRINT
    if _RUNTIME_FINGERPRINT is None:
        digest = hashlib.sha256()
        for name in ("libninetoothed_core.a", "aot_runtime.h", "exports.cpp", "opencl_library.txt"):
            path = _RUNTIME_DIR / name
            digest.update(path.read_bytes() if path.exists() else b"missing")
        digest.update(" ".join(_COMPILE_FLAGS + _LINK_FLAGS).encode())
        digest.update(str(shutil.which(_compiler()) or "").encode())
        _RUNTIME_FINGERPRINT = digest.hexdigest()
    return _RUNTIME_FINGERPRINT


@contextlib.contextmanager
def build_lock(output_dir, kernel_name):
    """Holds `output_dir/.NAME.lock`: one process or thread at a time checks, builds and loads NAME."""
    path = pathlib.Path(output_dir) / f".{kernel_name}.lock"
    with _THREAD_LOCK:
        with open(path, "a") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(file, fcntl.LOCK_UN)


_THREAD_LOCK = threading.RLock()


def fingerprint(*texts):
    """A hash of a library's generated sources and of the runtime and compiler it is built with."""
    digest = hashlib.sha256(_runtime_fingerprint().encode())
    for text in texts:
        digest.update(text if isinstance(text, bytes) else str(text).encode())
        digest.update(b"\0")
    return digest.hexdigest()


# --- make(..., caller="opencl") -------------------------------------------------


def param_records(kernel, arranged):
    """What the Python wrapper checks per parameter: name, dtype, source ndim, scalar."""
    records = []
    for param, tensor in zip(kernel._params, arranged):
        dtype = param.dtype
        if dtype is None and not param.constexpr:
            raise ValueError(
                f"'{param.name}' has no dtype: an ahead-of-time kernel is built for declared dtypes "
                f"(Tensor(..., dtype=ninetoothed.float32))"
            )
        records.append({
            "name": param.name,
            "dtype": DTYPE_NAMES[dtype] if dtype is not None else None,
            "ndim": 0 if param.scalar else tensor.source.ndim,
            "scalar": param.scalar,
            "constexpr": param.constexpr,
        })
    return records


def trace_kernel(arrangement, application, tensors, kernel_name):
    """Traces a kernel for its declared dtypes; returns (plan bytes, param records)."""
    from ninetoothed.kernel import Kernel

    arranged = arrangement(*tensors)
    if not isinstance(arranged, (tuple, list)):
        arranged = (arranged,)
    kernel = Kernel(application, tuple(arranged), kernel_name=kernel_name)
    records = param_records(kernel, arranged)
    key = []
    fixed = {}
    for index, param in enumerate(kernel._params):
        if param.constexpr:
            value = param.arranged.value
            if value is None:
                raise ValueError(
                    f"the constexpr parameter '{param.name}' needs a value for an ahead-of-time build "
                    f"(Tensor(0, constexpr=True, value=...)): it is compiled into the kernel"
                )
            if isinstance(value, bool):
                value = int(value)
            key.append(("constexpr", value))
            fixed[index] = float(value)
        else:
            key.append(param.dtype)
    compiled = kernel._specialize(tuple(key))
    if compiled.constexpr_symbols:
        raise ValueError(
            f"{kernel_name}: the constexpr symbols {', '.join(compiled.constexpr_symbols)} have no values; an "
            "ahead-of-time kernel needs them fixed in the arrangement (e.g. functools.partial(arrangement, "
            "BLOCK_SIZE=64)), or made meta symbols (ninetoothed.block_size()) to be tuned at run time"
        )
    plan = compiled.launch_plan(fixed)
    try:
        again = _core.CompiledKernel(plan)
    except ValueError as error:
        raise ValueError(f"{kernel_name} cannot be built ahead of time: {error}") from None
    if again.launch_plan() != plan:
        raise ValueError(f"{kernel_name} cannot be built ahead of time: its launch plan does not read back unchanged")
    return plan, records


def make(arrangement, application, tensors, caller, kernel_name, output_dir):
    """make()'s ahead-of-time path: writes and compiles the library, returns its AotKernel."""
    check_caller(caller)
    check_kernel_name(kernel_name)
    if output_dir is None:
        raise ValueError("an ahead-of-time build needs output_dir: the directory the library is written to")
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    plan, records = trace_kernel(arrangement, application, tensors, kernel_name)
    header, source = kernel_files(kernel_name, [r["name"] for r in records], plan)
    manifest = {
        "kernel_name": kernel_name,
        "fingerprint": fingerprint(header, source),
        "variants": [{"name": kernel_name, "combination": {}, "params": records}],
        "config_params": [],
        "meta_params": [],
        "tuned": None,
    }
    with build_lock(output_dir, kernel_name):
        if library_matches(output_dir, kernel_name, manifest["fingerprint"]):
            return AotKernel(output_dir, kernel_name)
        begin_install(output_dir, kernel_name)
        write_header(output_dir)
        _write_atomically(output_dir / f"{kernel_name}.h", header)
        _write_atomically(output_dir / f"{kernel_name}.cpp", source)
        with tempfile.TemporaryDirectory(prefix="ninetoothed-aot-") as object_dir:
            objects = compile_objects([output_dir / f"{kernel_name}.cpp"], output_dir, object_dir)
            link_library(kernel_name, objects, output_dir, object_dir)
        write_manifest(output_dir, kernel_name, manifest)
        return AotKernel(output_dir, kernel_name)


def begin_install(output_dir, kernel_name):
    """Drops NAME.json before a new NAME.so is installed: a build that stops half-way leaves no manifest
    that could vouch for a library it does not describe."""
    (pathlib.Path(output_dir) / f"{kernel_name}.json").unlink(missing_ok=True)


def write_manifest(output_dir, kernel_name, manifest):
    _write_atomically(pathlib.Path(output_dir) / f"{kernel_name}.json", json.dumps(manifest, indent=1))


def read_manifest(output_dir, kernel_name):
    try:
        return json.loads((pathlib.Path(output_dir) / f"{kernel_name}.json").read_text())
    except (OSError, ValueError):
        return None


def library_matches(output_dir, kernel_name, expected):
    """Is the library in `output_dir` the one these sources make (so it need not be rebuilt)?"""
    manifest = read_manifest(output_dir, kernel_name)
    return (
        manifest is not None
        and manifest.get("fingerprint") == expected
        and (pathlib.Path(output_dir) / f"{kernel_name}.so").is_file()
    )


# --- calling a library from Python ------------------------------------------------


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


def _load(library):
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
    import enum

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
        handle = _load(self._library)
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
            arguments.append(_c_tensor(record, name, value, keep) if record else _CTensor())
        arguments += [ctypes.c_int(v) for v in config]
        code = self._launch(*arguments)
        if code != 0:
            detail = self._last_error().decode(errors="replace")
            message = f"{self.kernel_name}: {self._error_string(code).decode()}" + (f": {detail}" if detail else "")
            if code in (NO_VARIANT, _INVALID_ARGUMENT, _INVALID_VALUE):
                raise ValueError(message)
            raise AotError(code, message)


def _c_tensor(record, name, value, keep):
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
