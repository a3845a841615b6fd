"""Upstream's `ninetoothed.auto_tuner.AutoTuner`: calls whichever of several functions (kernels built
for different configurations, say) was fastest for arguments like these, timing each once.

    tuner = AutoTuner((add_256, add_1024), ("block 256", "block 1024"))
    tuner(x, y, z)   # times both on the first call with these shapes and dtypes, then calls the winner

Arguments are told apart by `_make_arg_key`: tensors (anything with `shape` and `dtype`) by shape and
dtype, other values by `str()`. Timings are kept on disk under `CACHE_DIR/auto_tuning/<namespace>`
(`ninetoothed.generation.CACHE_DIR`; the namespace defaults to a hash of this package's files): one
JSON file per candidate key ({argument key: milliseconds}) and one per tuner ({argument key: every
candidate's milliseconds}), so another process with the same candidates times nothing again. A
candidate whose timing raises (a failed launch, an error reported when the device is synchronised)
counts as infinitely slow and is not written to disk; where every candidate fails, a RuntimeError
names each with its error. The winner is remembered only once a call of it has returned.
`benchmark(function, args, kwargs)` replaces `_default_benchmark`, which returns milliseconds per call.
"""

import functools
import hashlib
import json
import math
import os
import threading
import time

from ninetoothed import generation

_WARMUP = 3
_REPEATS = 10


class AutoTuner:
    def __init__(self, funcs, keys, benchmark=None, cache_namespace=None):
        self._funcs = tuple(funcs)
        self._keys = tuple(keys)
        if len(self._funcs) != len(self._keys) or not self._funcs:
            raise ValueError("AutoTuner needs one key per function, and at least one function")
        self._func_to_key = dict(zip(self._funcs, self._keys))
        self._benchmark = benchmark if benchmark is not None else _default_benchmark
        namespace = cache_namespace if cache_namespace is not None else f"{_project_key()}_ninetoothed"
        self._cache_dir = generation.CACHE_DIR / "auto_tuning" / namespace
        try:
            self._cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError:  # an unwritable CACHE_DIR: timings are kept in memory only
            pass
        self._cache_path = self._cache_dir / f"{_digest(self._keys)}.json"
        self._timings = _read_json(self._cache_path)
        self._candidate_timings = {key: {} for key in self._keys}
        self._failures = {}
        self._best_func = {}

    def __call__(self, *args, **kwargs):
        arg_key = self._make_arg_key(args, kwargs)
        if arg_key in self._best_func:
            return self._best_func[arg_key](*args, **kwargs)
        timings = self._get_timings(arg_key, args, kwargs)
        best = self._funcs[timings.index(min(timings))]
        result = best(*args, **kwargs)
        self._best_func[arg_key] = best
        return result

    def _get_timings(self, arg_key, args, kwargs):
        if arg_key in self._timings:
            return self._timings[arg_key]
        timings = [self._get_timing(func, arg_key, args, kwargs) for func in self._funcs]
        if all(math.isinf(t) for t in timings):
            reasons = "; ".join(f"{key}: {self._failures.get((key, arg_key), 'no time')}" for key in self._keys)
            raise RuntimeError(f"every auto-tuning candidate failed for ({arg_key}): {reasons}")
        self._timings[arg_key] = timings
        if not any(math.isinf(t) for t in timings):
            _write_json(self._cache_path, self._timings)
        return timings

    def _get_timing(self, func, arg_key, args, kwargs):
        key = self._func_to_key[func]
        data = self._candidate_timings[key]
        if arg_key in data:
            return data[arg_key]
        path = self._get_func_cache_path(func)
        data.update({k: v for k, v in _read_json(path).items() if k not in data})
        if arg_key in data:
            return data[arg_key]
        try:
            timing = float(self._benchmark(func, args, kwargs))
        except Exception as error:  # noqa: BLE001 - a failed candidate is a slow one, with its reason kept
            self._failures[(key, arg_key)] = f"{type(error).__name__}: {error}"
            data[arg_key] = math.inf
            return math.inf
        data[arg_key] = timing
        _write_json(path, {k: v for k, v in data.items() if not math.isinf(v)})
        return timing

    def _get_func_cache_path(self, func):
        return self._cache_dir / f"{_digest(self._func_to_key[func])}.json"

    @staticmethod
    def _make_arg_key(args, kwargs):
        def part(value):
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                return AutoTuner._make_tensor_key(value)
            return str(value)

        parts = [part(value) for value in args]
        parts += [f"{name}={part(value)}" for name, value in sorted(kwargs.items())]
        return ", ".join(parts)

    @staticmethod
    def _make_tensor_key(tensor):
        return f"tensor(shape={tuple(tensor.shape)}, dtype={str(tensor.dtype).split('.')[-1]})"


def _default_benchmark(function, args, kwargs):
    """Milliseconds per call of `function(*args, **kwargs)`: 3 calls to warm up, then 10 timed ones.

    Where an argument lives on an accelerator (a tensor whose device type names a torch module, such
    as `torch.cuda`), the calls are timed by that module's events; where it has no events or they
    cannot time, by the wall clock between two synchronisations of it. Host arguments (our launches
    on host tensors return when the kernel is done) are timed by the wall clock."""
    runtime = _accelerator_runtime(args, kwargs)
    for _ in range(_WARMUP):
        function(*args, **kwargs)
    synchronize = getattr(runtime, "synchronize", None)
    event = getattr(runtime, "Event", None)
    if event is not None:
        if synchronize is not None:
            synchronize()
        start, end = event(enable_timing=True), event(enable_timing=True)
        start.record()
        for _ in range(_REPEATS):
            function(*args, **kwargs)
        end.record()
        end.synchronize()  # an asynchronous failure of the calls surfaces here
        try:
            return start.elapsed_time(end) / _REPEATS
        except (NotImplementedError, AttributeError):
            pass  # events that cannot time: the wall clock below
    if synchronize is not None:
        synchronize()
    begin = time.perf_counter()
    for _ in range(_REPEATS):
        function(*args, **kwargs)
    if synchronize is not None:
        synchronize()
    return (time.perf_counter() - begin) * 1e3 / _REPEATS


def _accelerator_runtime(args, kwargs):
    """The torch module of the first argument on a device other than the host (torch.cuda, ...)."""
    for value in list(args) + list(kwargs.values()):
        device = getattr(value, "device", None)
        kind = getattr(device, "type", None)
        if isinstance(kind, str) and kind != "cpu":
            try:
                import torch
            except ImportError:
                return None
            return getattr(torch, kind, None)
    return None


def _digest(value):
    return hashlib.sha256(str(value).encode("utf-8")).hexdigest()


@functools.cache
def _project_key():
    """A hash of this package's files: timings from another version of it are not reused."""
    total = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            with open(os.path.join(directory, name), "rb") as file:
                total.update(hashlib.sha256(file.read()).digest())
    return total.hexdigest()[:32]


def _read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write_json(path, data):
    """Written whole or not at all: a temporary file renamed over the old one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        temporary.write_text(json.dumps(data))
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
