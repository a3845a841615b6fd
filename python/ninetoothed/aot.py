"""Ahead-of-time kernels: `make(..., caller="opencl")` or `caller="cuda"` writes a C library.

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

With caller="cuda" the library launches on CUDA devices instead: the tensors'
`data` are device pointers, `NineToothedStream` is a `CUstream` (NULL: the
legacy default stream), and the call enqueues the kernel and returns. The
kernel's binaries are compiled by NVRTC when the library is built, for the
architectures NINETOOTHED_CUDA_ARCHITECTURES lists (default: this machine's
GPUs, and PTX for compute_80 that the driver compiles for any later device),
every configuration tuning may time among them, and embedded in `NAME.cpp`:
the library needs neither NVRTC nor Python at run time, only `libcuda.so.1`.

`make` then returns an `AotKernel` (ninetoothed.aot_library): a Python
callable over that library taking torch tensors, numpy arrays and Python
scalars.
"""

import contextlib
import fcntl
import hashlib
import json
import keyword
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import threading

from ninetoothed import _core, aot_cuda
from ninetoothed.kernel import Kernel, _launch_options
from ninetoothed.aot_library import DTYPE_NAMES, AotError, AotKernel, read_manifest  # noqa: F401 (AotError: public here)

SUPPORTED_CALLERS = ("opencl", "cuda")

_RUNTIME_DIR = pathlib.Path(__file__).parent / "aot_runtime"

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

/* OpenCL libraries: a cl_command_queue, or NULL: the kernel runs on the
   library's own queue on the device NINETOOTHED_DEVICE names (PoCL's CPU
   device by default). CUDA libraries: a CUstream of the device the tensors are
   on, or NULL for its legacy default stream; the call does not wait. */
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


def check_caller(caller):
    if caller not in SUPPORTED_CALLERS:
        raise NotImplementedError(
            f"caller={caller!r} is not supported: NineToothed builds ahead-of-time kernels for "
            f"caller='opencl' (a C library over OpenCL) or caller='cuda' (a C library over the CUDA driver), "
            f"both called with NineToothedTensors, and runs kernels from Python with caller='torch'"
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


def kernel_files(kernel_name, param_names, plan, cuda_images=None):
    """The texts of NAME.h and NAME.cpp for a kernel with that launch plan; `cuda_images` (a list of
    (architecture, options, bytes)) makes it a CUDA library's kernel carrying those binaries."""
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
    if cuda_images is None:
        what = "the OpenCL C and what a launch binds"
        images = ""
        call = (f"ninetoothed_aot_launch(ninetoothed_plan_, sizeof ninetoothed_plan_ - 1, &ninetoothed_state_, "
                f"stream,\n                                {pointer}, {len(params)})")
    else:
        what = "the OpenCL C, the CUDA C and what a launch binds; the CUDA binaries below"
        images = _cuda_image_table(cuda_images)
        call = (f"ninetoothed_aot_launch_cuda(ninetoothed_plan_, sizeof ninetoothed_plan_ - 1, ninetoothed_images_,\n"
                f"                                     {len(cuda_images)}, &ninetoothed_state_, stream, {pointer}, "
                f"{len(params)})")
    source = f"""// Written by NineToothed: the ahead-of-time kernel {kernel_name}. Its launch
// plan ({what}) is embedded; the core's runtime, linked into this library,
// tunes and launches it.
#include "{kernel_name}.h"

#include "aot_runtime.h"

namespace {{

const char ninetoothed_plan_[] =
    {_c_string(plan)};
{images}
void* ninetoothed_state_ = nullptr;

}}  // namespace

extern "C" __attribute__((visibility("default"))) NineToothedResult launch_{kernel_name}({signature}) {{
{arguments}  return {call};
}}
"""
    return header, source


def _cuda_image_table(cuda_images):
    """C++ for the binaries: one byte array each, and the NtAotCudaImage table over them."""
    arrays, entries = [], []
    for index, (architecture, options, image) in enumerate(cuda_images):
        arrays.append(f"const unsigned char ninetoothed_image_{index}_[] = {{\n    {_byte_lines(image)}}};")
        entries.append(f"    {{{_c_string(architecture.encode())}, {_c_string(options.encode())}, "
                       f"ninetoothed_image_{index}_, {len(image)}}},")
    return ("\n" + "\n".join(arrays) + "\n\nconst NtAotCudaImage ninetoothed_images_[] = {\n" + "\n".join(entries)
            + "\n};\n")


def _byte_lines(data):
    """`data` as comma-separated numbers, 24 to a line."""
    return ",\n    ".join(",".join(str(b) for b in data[i:i + 24]) for i in range(0, len(data), 24))


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
_LINK_FLAGS = ["-lpthread", "-ldl", "-Wl,--exclude-libs,ALL", "-Wl,--gc-sections"]


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


# --- make(..., caller="opencl" or "cuda") ----------------------------------------


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


def trace_kernel(arrangement, application, tensors, kernel_name, num_warps=None, caller="opencl"):
    """Traces a kernel for its declared dtypes; returns (plan bytes, param records). `num_warps` goes
    into the plan: the library runs programs on work-groups of num_warps x 32 work-items on GPUs. A
    plan for caller="cuda" holds the kernel's CUDA C too."""
    _launch_options(num_warps, None, None)  # build()'s compilation_configs come here unchecked
    arranged = arrangement(*tensors)
    if not isinstance(arranged, (tuple, list)):
        arranged = (arranged,)
    kernel = Kernel(application, tuple(arranged), kernel_name=kernel_name, num_warps=num_warps)
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
    try:
        plan = compiled.launch_plan(fixed, cuda=caller == "cuda")
        again = _core.CompiledKernel(plan)
    except ValueError as error:
        raise ValueError(f"{kernel_name} cannot be built ahead of time: {error}") from None
    if again.launch_plan() != plan:
        raise ValueError(f"{kernel_name} cannot be built ahead of time: its launch plan does not read back unchanged")
    return plan, records


def make(arrangement, application, tensors, caller, kernel_name, output_dir, num_warps=None):
    """make()'s ahead-of-time path: writes and compiles the library, returns its AotKernel."""
    check_caller(caller)
    check_kernel_name(kernel_name)
    if output_dir is None:
        raise ValueError("an ahead-of-time build needs output_dir: the directory the library is written to")
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    plan, records = trace_kernel(arrangement, application, tensors, kernel_name, num_warps, caller)
    images = aot_cuda.compile_cuda_images(kernel_name, plan, aot_cuda.cuda_architectures()) if caller == "cuda" else None
    header, source = kernel_files(kernel_name, [r["name"] for r in records], plan, images)
    manifest = {
        "kernel_name": kernel_name,
        "caller": caller,
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


def library_matches(output_dir, kernel_name, expected):
    """Is the library in `output_dir` the one these sources make (so it need not be rebuilt)?"""
    manifest = read_manifest(output_dir, kernel_name)
    return (
        manifest is not None
        and manifest.get("fingerprint") == expected
        and (pathlib.Path(output_dir) / f"{kernel_name}.so").is_file()
    )
