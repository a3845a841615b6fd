"""`ninetoothed.build`: every configuration of a premake in one C library.

Each configuration `(args, kwargs, compilation_configs)` is one variant:
`premake(*args, **kwargs)` gives its arrangement, application and tensors,
traced and written as the ahead-of-time kernel `NAME_<values>` (ninetoothed.aot).
The library's `launch_NAME(stream, tensors..., int configuration...)` is a
dispatcher, as upstream's: the configuration arguments are premake's
parameters (named `<name>_`, defaults applied) and the compilation configs,
as ints (a dtype is its NineToothedDataType, a bool 0/1, None 0); the variant
whose values they equal runs, and none matching returns
NINETOOTHED_ERROR_NO_VARIANT.

With `meta_parameters`, those configuration arguments (and the compilation
configs) are tuned at build time instead of passed: for each combination of
the other arguments, every variant is timed on representative tensors (the
premake's sizes where it fixes them, 256 per symbolic size — 65536 for a
one-dimensional tensor — otherwise) and the fastest kept; the dispatcher
then takes only the other arguments. The choices are written to NAME.csv in
upstream's layout and kept in NAME.json.

Variants are traced in this process (tracing takes milliseconds) and
compiled by parallel compiler processes; a library whose sources are
unchanged is reused from `output_dir` rather than rebuilt.
"""

import ctypes
import inspect
import itertools
import pathlib
import hashlib
import sys
import tempfile
import threading
import time
import warnings

from ninetoothed import aot, aot_cuda, aot_library
from ninetoothed.kernel import check_declared_dtypes

_DEFAULT_SIZE = 256
_DEFAULT_SIZE_1D = 65536


def build(premake, configs, *, meta_parameters=None, caller=None, kernel_name=None, output_dir=None, lazy=False):
    """Builds a kernel from a ``premake`` function and its ``configs`` into one library.

    :param premake: returns ``(arrangement, application, tensors)`` for a configuration.
    :param configs: ``(args, kwargs, compilation_configs)`` tuples; ``args`` and ``kwargs`` go to
        ``premake``, ``compilation_configs`` (e.g. ``num_warps``) to ``make``. ``num_warps`` and
        ``num_stages`` may be tuples or lists of candidates: a variant is built for each, and they are
        tuned at build time (as with ``meta_parameters``) instead of passed.
    :param meta_parameters: names of premake parameters tuned at build time instead of passed.
    :param caller: who calls the kernel: "opencl" (the default) for a C library over OpenCL, "cuda"
        for one over the CUDA driver (device pointers, a ``CUstream``; binaries built now by NVRTC).
    :param kernel_name: the library's name: ``launch_<kernel_name>`` in ``<kernel_name>.h``.
    :param output_dir: where the library is written.
    :param lazy: build at the first call instead of now.
    :return: a callable taking the tensors, then the configuration arguments.
    """
    caller = "opencl" if caller is None else caller
    aot.check_caller(caller)
    aot.check_kernel_name(kernel_name)
    if output_dir is None:
        raise ValueError("build() needs output_dir: the directory the library is written to")
    output_dir = pathlib.Path(output_dir)
    configs = tuple(configs)
    if not configs:
        raise ValueError("build() needs at least one configuration")
    for config in configs:
        if not (isinstance(config, tuple) and len(config) == 3):
            raise ValueError(f"a configuration is (args, kwargs, compilation_configs); got {config!r}")
    meta_parameters = tuple(meta_parameters) if meta_parameters is not None else None
    if lazy:
        return _LazyKernel(lambda: build(premake, configs, meta_parameters=meta_parameters, caller=caller,
                                         kernel_name=kernel_name, output_dir=output_dir))
    output_dir.mkdir(parents=True, exist_ok=True)
    configs, candidates = _expand_candidates(configs)

    variants = []
    for config in configs:
        combination = _combination(premake, config)
        if any(v["record"]["combination"] == combination for v in variants):
            raise ValueError(f"configurations repeat: {combination}")
        variants.append(_variant(premake, config, combination, _variant_name(kernel_name, combination, variants),
                                 caller))
    tensor_params = _union(v["record"]["params"] for v in variants)
    config_params = list(dict.fromkeys(name for v in variants for name in v["record"]["combination"]))
    meta_params = []
    if meta_parameters is not None:
        compilation = {name for config in configs for name in config[2]}
        meta_params = [n for n in config_params if n.removesuffix("_") in meta_parameters or n in compilation]
        unknown = set(meta_parameters) - {n.removesuffix("_") for n in config_params}
        if unknown:
            raise ValueError(f"meta_parameters {sorted(unknown)} are not parameters of the premake")
    elif candidates:  # num_warps=(4, 8) and the like: tuned at build time, not passed
        meta_params = [n for n in config_params if n in candidates]
    files = {v["name"]: v["files"] for v in variants}
    expected = aot.fingerprint(*(text for name in sorted(files) for text in files[name]),
                               repr(tensor_params), repr(config_params), repr(meta_params))
    with aot.build_lock(output_dir, kernel_name):
        if aot.library_matches(output_dir, kernel_name, expected):
            return aot.AotKernel(output_dir, kernel_name)
        aot.begin_install(output_dir, kernel_name)
        return _build_library(kernel_name, variants, files, output_dir, expected, tensor_params, config_params,
                              meta_params, caller)


def _build_library(kernel_name, variants, files, output_dir, expected, tensor_params, config_params, meta_params,
                   caller):
    aot.write_header(output_dir)
    sources = []
    for name, (header, source) in files.items():
        aot._write_atomically(output_dir / f"{name}.h", header)
        aot._write_atomically(output_dir / f"{name}.cpp", source)
        sources.append(output_dir / f"{name}.cpp")
    records = [v["record"] for v in variants]
    manifest = {
        "kernel_name": kernel_name,
        "caller": caller,
        "fingerprint": expected,
        "variants": records,
        "tensor_params": tensor_params,
        "config_params": config_params,
        "meta_params": meta_params,
        "tuned": None,
    }
    start = time.perf_counter()
    _progress(kernel_name, f"compiling {len(sources)} variants")
    with tempfile.TemporaryDirectory(prefix="ninetoothed-build-") as object_dir:
        objects = aot.compile_objects(sources, output_dir, object_dir)
        if meta_params:
            _progress(kernel_name, f"tuning {', '.join(meta_params)} over {len(variants)} variants")
            manifest["tuned"] = _tune(variants, config_params, meta_params, objects, object_dir, kernel_name, caller)
            _write_csv(output_dir / f"{kernel_name}.csv", manifest["tuned"])
        header, source = _dispatcher(kernel_name, records, tensor_params, config_params, meta_params,
                                     manifest["tuned"])
        aot._write_atomically(output_dir / f"{kernel_name}.h", header)
        aot._write_atomically(output_dir / f"{kernel_name}.cpp", source)
        objects += aot.compile_objects([output_dir / f"{kernel_name}.cpp"], output_dir, object_dir)
        aot.link_library(kernel_name, objects, output_dir, object_dir)
    aot.write_manifest(output_dir, kernel_name, manifest)
    _progress(kernel_name, f"built {output_dir / (kernel_name + '.so')} in {time.perf_counter() - start:.1f} s")
    return aot.AotKernel(output_dir, kernel_name)


def _progress(kernel_name, message):
    """One line per phase of a build on stderr (building and tuning can take a while)."""
    print(f"[ninetoothed.build] {kernel_name}: {message}", file=sys.stderr, flush=True)


class _LazyKernel:
    """Builds at the first call (build(..., lazy=True)); threads calling first wait for one build."""

    def __init__(self, factory):
        self._factory = factory
        self._kernel = None
        self._lock = threading.Lock()

    def __call__(self, *args):
        if self._kernel is None:
            with self._lock:
                if self._kernel is None:
                    self._kernel = self._factory()
        return self._kernel(*args)


def _expand_candidates(configs):
    """Configurations whose compilation configs give num_warps or num_stages as candidates (a tuple or
    list, as make() takes them) become one configuration per combination of them; returns the
    configurations and the names given several candidates (tuned at build time, as upstream's
    make() tunes over them)."""
    from ninetoothed.kernel import _tuning_space

    expanded, candidates = [], set()
    for args, kwargs, compilation_configs in configs:
        compilation_configs = dict(compilation_configs)
        spaces = {}
        for name in ("num_warps", "num_stages"):
            value = _tuning_space(name, compilation_configs.get(name))
            if isinstance(value, tuple):
                spaces[name] = value
                if len(value) > 1:
                    candidates.add(name)
        if not spaces:
            expanded.append((args, kwargs, compilation_configs))
            continue
        for values in itertools.product(*spaces.values()):
            expanded.append((args, kwargs, dict(compilation_configs, **dict(zip(spaces, values)))))
    return tuple(expanded), candidates


def _combination(premake, config):
    """The configuration arguments of a config: premake's parameters as `<name>_`, then the compilation
    configs, as the ints a dispatcher compares."""
    args, kwargs, compilation_configs = config
    bound = inspect.signature(premake).bind(*args, **kwargs)
    bound.apply_defaults()
    combination = {f"{name}_": aot_library.config_value(value) for name, value in bound.arguments.items()}
    for name, value in compilation_configs.items():
        combination[name] = aot_library.config_value(value)
    return combination


def _variant_name(kernel_name, combination, earlier):
    """Upstream's `NAME_<values>`; where two combinations share their values, a hash of the names too."""
    suffix = "_".join(str(v).replace("-", "m") for v in combination.values()) or "0"
    name = f"{kernel_name}_{suffix}"
    if any(v["name"] == name for v in earlier):
        name += "_" + hashlib.sha256(repr(sorted(combination.items())).encode()).hexdigest()[:8]
    return name


def _variant(premake, config, combination, name, caller):
    args, kwargs, compilation_configs = config
    arrangement, application, tensors = premake(*args, **kwargs)
    tensors = tuple(tensors)  # any iterable, read once
    check_declared_dtypes(tensors, name)
    plan, params = aot.trace_kernel(arrangement, application, tensors, name, compilation_configs.get("num_warps"),
                                    caller)
    # A CUDA library's binaries (NVRTC's disk cache makes a second build of the same plans quick).
    images = aot_cuda.compile_cuda_images(name, plan, aot_cuda.cuda_architectures()) if caller == "cuda" else None
    files = aot.kernel_files(name, [p["name"] for p in params], plan, images)
    return {
        "name": name,
        "files": files,
        "record": {"name": name, "combination": combination, "params": params,
                   "shapes": _representative_shapes(tensors)},
    }


def _representative_shapes(tensors):
    """The shapes tuning runs the tensors at: their fixed sizes; a symbolic size 65536 when only
    one-dimensional tensors have it, else 256 (one value per symbol, so tensors sharing it agree)."""
    ranks = {}
    for tensor in tensors:
        for size in getattr(tensor, "shape", ()) if tensor.ndim else ():
            if not isinstance(size, int):
                ranks[str(size)] = max(ranks.get(str(size), 0), tensor.ndim)
    shapes = []
    for tensor in tensors:
        if tensor.ndim == 0:
            shapes.append([])
            continue
        shapes.append([size if isinstance(size, int) else
                       (_DEFAULT_SIZE_1D if ranks[str(size)] == 1 else _DEFAULT_SIZE) for size in tensor.shape])
    return shapes


def _union(param_lists):
    """The tensor parameters of all variants, longest lists first, each name once (as upstream)."""
    names = {}
    for params in sorted(param_lists, key=len, reverse=True):
        for p in params:
            names.setdefault(p["name"], None)
    return list(names)


def _dispatcher(kernel_name, records, tensor_params, config_params, meta_params, tuned):
    passed = [n for n in config_params if n not in meta_params] if tuned is not None else config_params
    # One C name per tensor and per configuration argument, none shared (a tensor `size_` and the
    # premake parameter `size` would both be `size_`).
    tensor_ids = dict(zip(tensor_params, aot.c_identifiers(tensor_params)))
    config_ids = dict(zip(config_params, aot.c_identifiers(config_params, taken=tensor_ids.values())))
    tensors = [f"NineToothedTensor {tensor_ids[n]}" for n in tensor_params]
    ints = [f"int {config_ids[n]}" for n in passed]
    signature = ", ".join(["NineToothedStream stream"] + tensors + ints)
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
    body = []
    if tuned is not None:
        body += [f"  int {config_ids[n]} = 0;" for n in meta_params]
        branches = []
        for key, meta in tuned:
            condition = " && ".join(f"{config_ids[n]} == {v}" for n, v in zip(passed, key)) or "1"
            assignments = " ".join(f"{config_ids[n]} = {v};" for n, v in zip(meta_params, meta))
            branches.append(f"if ({condition}) {{ {assignments} }}")
        body.append("  " + "\n  else ".join(branches + ["return NINETOOTHED_ERROR_NO_VARIANT;"]))
    for record in records:
        condition = " && ".join(f"{config_ids[n]} == {v}" for n, v in record["combination"].items()) or "1"
        arguments = ", ".join(["stream"] + [tensor_ids[p["name"]] for p in record["params"]])
        body.append(f"  if ({condition}) return launch_{record['name']}({arguments});")
    body.append("  return NINETOOTHED_ERROR_NO_VARIANT;")
    includes = "\n".join(f'#include "{record["name"]}.h"' for record in records)
    source = f"""// Written by NineToothed (ninetoothed.build): the dispatcher of {kernel_name}'s variants.
#include "{kernel_name}.h"

{includes}

extern "C" __attribute__((visibility("default"))) NineToothedResult launch_{kernel_name}({signature}) {{
""" + "\n".join(body) + "\n}\n"
    return header, source


def _tune(variants, config_params, meta_params, objects, object_dir, kernel_name, caller):
    """Times each variant per combination of the passed arguments; returns [(key, best meta values)]."""
    import torch

    passed = [n for n in config_params if n not in meta_params]
    # The variants alone (their launch functions are exported), timed before the dispatcher exists.
    timing_name = f"{kernel_name}__tuning"
    library = aot.link_library(timing_name, objects, object_dir, object_dir)
    handle = aot_library.load(library)

    groups = {}
    for variant in variants:
        combination = variant["record"]["combination"]
        key = tuple(combination.get(n, 0) for n in passed)
        groups.setdefault(key, []).append(variant)
    tuned = []
    for key, group in groups.items():
        best, best_meta = float("inf"), None
        for variant in group:
            record = variant["record"]
            launch = getattr(handle, f"launch_{record['name']}")
            launch.restype = ctypes.c_int
            seconds = _time_variant(launch, record, torch, caller)
            meta = tuple(record["combination"].get(n, 0) for n in meta_params)
            if best_meta is None or seconds < best:
                best, best_meta = seconds, meta
        if best == float("inf"):
            warnings.warn(
                f"{kernel_name}: every variant for {dict(zip(passed, key))} failed on the representative tensors "
                f"{group[0]['record']['shapes']}; the first, {dict(zip(meta_params, best_meta))}, is kept untimed",
                RuntimeWarning, stacklevel=3)
        tuned.append([list(key), list(best_meta)])
    return tuned


def _time_variant(launch, record, torch, caller):
    """Best of three runs after a warm-up (which builds the program); infinity if it fails. A CUDA
    library's variants run on cuda:0's legacy default stream, waited for in each run."""
    device = "cuda" if caller == "cuda" else "cpu"
    finish = torch.cuda.synchronize if caller == "cuda" else (lambda: None)
    keep = []
    arguments = [ctypes.c_void_p(None)]
    for param, shape in zip(record["params"], record["shapes"]):
        if param["scalar"]:
            value = 1 if param["dtype"] is None or not param["dtype"].startswith("float") else 1.0
            arguments.append(aot_library.c_tensor(param, param["name"], value, keep))
            continue
        dtype = getattr(torch, param["dtype"])
        tensor = torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype)
        arguments.append(aot_library.c_tensor(param, param["name"], tensor.to(device), keep, caller))
    if launch(*arguments) != 0:
        return float("inf")
    finish()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        if launch(*arguments) != 0:
            return float("inf")
        finish()
        best = min(best, time.perf_counter() - start)
    return best


def _write_csv(path, tuned):
    """The choices in upstream's NAME.csv layout: an empty row, the default, then key and choice rows."""
    rows = [[], tuned[0][1] if tuned else []]
    for key, meta in tuned:
        rows += [key, meta]
    aot._write_atomically(path, "".join(",".join(str(v) for v in row) + "\n" for row in rows))
