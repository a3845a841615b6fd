"""Upstream's module names that its tests and examples import: `ninetoothed.generation.CACHE_DIR` and
`ninetoothed.auto_tuner.AutoTuner` (with its `_default_benchmark`), used as upstream's tests use them.
Every tuner here keeps its timings under a temporary CACHE_DIR."""

import math
import time
import uuid
from types import SimpleNamespace

import pytest
import torch

import ninetoothed
import ninetoothed.generation
from ninetoothed import Tensor
from ninetoothed.auto_tuner import AutoTuner, _default_benchmark


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(ninetoothed.generation, "CACHE_DIR", tmp_path / "ninetoothed")
    return tmp_path / "ninetoothed"


def test_cache_dir_is_upstreams():
    import importlib
    import pathlib

    module = importlib.reload(ninetoothed.generation)
    assert module.CACHE_DIR == pathlib.Path.home() / ".ninetoothed"


def slow(*args, **kwargs):
    time.sleep(0.001 * (2 * len(args) + len(kwargs)))


def fast(*args, **kwargs):
    time.sleep(0.001 * (len(args) + 2 * len(kwargs)))


def delay(function, args, kwargs):
    return 0.001 * ((2 * len(args) + len(kwargs)) if function is slow else (len(args) + 2 * len(kwargs)))


@pytest.mark.parametrize("kwargs", ({"a": 2, "b": 4}, {"a": 2, "b": 4, "c": 6, "d": 8}))
@pytest.mark.parametrize("args", ((1,), (1, 3, 5)))
def test_the_fastest_candidate_is_called_and_remembered(args, kwargs, cache_dir):
    timed = []

    def benchmark(function, candidate_args, candidate_kwargs):
        timed.append(function)
        return delay(function, candidate_args, candidate_kwargs)

    namespace = f"test_{uuid.uuid4().hex}"
    tuner = AutoTuner((slow, fast), ("slow", "fast"), benchmark=benchmark, cache_namespace=namespace)
    assert not tuner._cache_path.exists() and not tuner._get_func_cache_path(slow).exists()
    tuner(*args, **kwargs)
    assert timed == [slow, fast]
    assert tuner._cache_path.exists() and tuner._get_func_cache_path(fast).exists()
    assert str(tuner._cache_path).startswith(str(cache_dir / "auto_tuning" / namespace))
    # The same tuner calls its choice; another with the same candidates and namespace reads the timings.
    tuner(*args, **kwargs)
    assert timed == [slow, fast]
    again = []
    AutoTuner((slow, fast), ("slow", "fast"), benchmark=lambda *call: again.append(call) or 0.0,
              cache_namespace=namespace)(*args, **kwargs)
    assert again == []
    winner = tuner._best_func[tuner._make_arg_key(args, kwargs)]
    assert winner is (slow if delay(slow, args, kwargs) < delay(fast, args, kwargs) else fast)


def test_arguments_are_told_apart_by_shape_and_dtype():
    key = AutoTuner._make_arg_key((torch.empty(3, 4), 5), {"b": torch.empty(2, dtype=torch.float16), "a": "x"})
    assert key == "tensor(shape=(3, 4), dtype=float32), 5, a=x, b=tensor(shape=(2,), dtype=float16)"


def test_every_failed_candidate_is_reported():
    def fail(function, args, kwargs):
        raise RuntimeError(f"candidate {function.__name__} failed")

    tuner = AutoTuner((slow, fast), ("first", "second"), benchmark=fail, cache_namespace=uuid.uuid4().hex)
    with pytest.raises(RuntimeError, match="first.*slow failed.*second.*fast failed"):
        tuner(1)
    assert not tuner._cache_path.exists()  # failures are not kept on disk


def test_a_winner_that_fails_is_not_remembered():
    def broken(*args):
        raise RuntimeError("the winner failed")

    tuner = AutoTuner((broken,), ("only",), benchmark=lambda *call: 1.0, cache_namespace=uuid.uuid4().hex)
    with pytest.raises(RuntimeError, match="the winner failed"):
        tuner(1)
    assert tuner._best_func == {}


def test_mismatched_keys_are_refused():
    with pytest.raises(ValueError, match="one key per function"):
        AutoTuner((slow, fast), ("one",))


def fake_tensor():
    return SimpleNamespace(shape=(1,), dtype="float32", device=SimpleNamespace(type="vendor_test"), stride=lambda: (1,))


def fake_runtime(calls, elapsed_ms=10.0, elapsed_error=None, synchronize=None, event_synchronize=None):
    class Event:
        def __init__(self, *, enable_timing):
            assert enable_timing

        def record(self):
            calls.append("record")

        def synchronize(self):
            calls.append("event-synchronize")
            if event_synchronize is not None:
                event_synchronize()

        def elapsed_time(self, other):
            if elapsed_error is not None:
                raise elapsed_error
            return elapsed_ms

    runtime = SimpleNamespace(Event=Event)
    if synchronize is not None:
        runtime.synchronize = synchronize
    return runtime


def test_default_benchmark_times_by_device_events(monkeypatch):
    calls = []
    monkeypatch.setattr(torch, "vendor_test", fake_runtime(calls, elapsed_ms=25.0), raising=False)
    assert _default_benchmark(lambda *_: calls.append("kernel"), (fake_tensor(),), {}) == 2.5
    assert calls.count("kernel") == 13 and calls.count("record") == 2 and calls.count("event-synchronize") == 1


@pytest.mark.parametrize("events_fail", (False, True))
def test_default_benchmark_falls_back_to_the_wall_clock(monkeypatch, events_fail):
    calls = []
    synchronize = lambda: calls.append("synchronize")  # noqa: E731
    runtime = SimpleNamespace(synchronize=synchronize)
    if events_fail:
        runtime = fake_runtime(calls, elapsed_error=NotImplementedError(), synchronize=synchronize)
    monkeypatch.setattr(torch, "vendor_test", runtime, raising=False)
    assert _default_benchmark(lambda *_: calls.append("kernel"), (fake_tensor(),), {}) >= 0
    assert calls.count("kernel") == (23 if events_fail else 13)
    assert calls.count("synchronize") == (3 if events_fail else 2)


def test_default_benchmark_times_the_accelerator_not_a_host_scalar(monkeypatch):
    calls = []
    runtime = fake_runtime(calls, synchronize=lambda: calls.append("accelerator-synchronize"))
    monkeypatch.setattr(torch, "vendor_test", runtime, raising=False)
    assert _default_benchmark(lambda *_: calls.append("kernel"), (torch.tensor(1.0), fake_tensor()), {}) == 1.0
    assert calls.count("accelerator-synchronize") == 1


@pytest.mark.parametrize("reported_by", ("runtime", "event"))
def test_an_asynchronous_failure_is_never_the_winner(monkeypatch, reported_by):
    pending = [False]

    def synchronize():
        if pending[0]:
            pending[0] = False
            raise RuntimeError("asynchronous launch failed")

    options = {"synchronize": synchronize} if reported_by == "runtime" else {"event_synchronize": synchronize}
    monkeypatch.setattr(torch, "vendor_test", fake_runtime([], **options), raising=False)

    def bad(*_):
        pending[0] = True

    def good(*_):
        pass

    tuner = AutoTuner((bad, good), ("bad", "good"), cache_namespace=uuid.uuid4().hex)
    tensor = fake_tensor()
    tuner(tensor)
    arg_key = tuner._make_arg_key((tensor,), {})
    assert tuner._best_func[arg_key] is good
    assert math.isinf(tuner._candidate_timings["bad"][arg_key])


BLOCK_SIZE = ninetoothed.Symbol("BLOCK_SIZE", constexpr=True)


def add_arrangement(x, y, z):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


def test_tuning_between_kernels_on_host_tensors():
    kernel = ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))
    candidates = [lambda x, y, z, b=b: kernel(x, y, z, BLOCK_SIZE=b) for b in (64, 1024)]
    tuner = AutoTuner(candidates, ("block 64", "block 1024"), cache_namespace=uuid.uuid4().hex)
    x, y = torch.randn(10007), torch.randn(10007)
    z = torch.full_like(x, float("nan"))
    tuner(x, y, z)
    assert torch.equal(z, x + y)
    timings = tuner._timings[tuner._make_arg_key((x, y, z), {})]
    assert len(timings) == 2 and all(0 < t < math.inf for t in timings)
