"""Stress: threads, fork and spawn, guard pages, interrupts, shared and corrupt caches, huge
tensors, bad input. Scripts that could crash run as subprocesses (tests/python/stress_scripts),
so that a crash or a hang is a failed test, not a dead test run."""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest
import torch

import ninetoothed

SCRIPTS = pathlib.Path(__file__).resolve().parent / "stress_scripts"
sys.path.insert(0, str(SCRIPTS))
from stress_kernels import BLOCK_SIZE, add_one, busy  # noqa: E402


def script(name, *args, cache, timeout=240, check=True):
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1")
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check:
        assert result.returncode == 0, f"{name} exited with {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


# --- Threads ---------------------------------------------------------------------------------


@pytest.mark.parametrize("run", range(3))
def test_threads_launching_at_once_with_a_cold_cache(tmp_path, run):
    # 4 threads x 150 launches x 2 kernels, tuning and building concurrently.
    assert script("threads.py", 4, 150, cache=tmp_path).stdout.strip() == "ok"


def test_threads_launching_at_once_with_a_warm_cache(tmp_path):
    script("threads.py", 1, 2, cache=tmp_path)
    assert script("threads.py", 8, 100, cache=tmp_path).stdout.strip() == "ok"


def test_threads_launching_one_kernel_over_ever_wider_grids(tmp_path):
    # PoCL 3.1 aborted here (a release dropped another launch's loaded kernel); launches of one
    # kernel take turns on PoCL since. 60 rounds x 6 threads x 40 launches.
    assert script("widening_grids.py", 60, cache=tmp_path).stdout.strip() == "ok"


def test_integer_division_by_zero_or_of_min_by_minus_one_never_traps(tmp_path):
    # With faulthandler's SIGFPE handler over PoCL's, such a division killed the process.
    assert script("integer_division.py", cache=tmp_path).stdout.strip() == "ok"


def test_the_gil_is_released_while_a_kernel_runs():
    busy.pin({BLOCK_SIZE.name: 256})
    x = torch.randn(1 << 17)
    y = torch.empty_like(x)
    interval = {}

    def launch():
        interval["start"] = time.monotonic()
        busy(x, y)
        interval["end"] = time.monotonic()

    ticks = []
    thread = threading.Thread(target=launch)
    thread.start()
    while thread.is_alive():
        ticks.append(time.monotonic())
    thread.join()
    busy.pin(None)
    start, end = interval["start"], interval["end"]
    middle = [t for t in ticks if start + 0.25 * (end - start) < t < start + 0.75 * (end - start)]
    # Python in this thread ran in the middle of the launch: the launch did not hold the GIL.
    assert end - start > 0.01 and middle, (end - start, len(ticks))


# --- fork, spawn -----------------------------------------------------------------------------


def test_a_forked_child_refuses_at_once_and_spawned_children_work(tmp_path):
    lines = dict(line.split(": ", 1) for line in script("fork_child.py", cache=tmp_path).stdout.splitlines())
    for method in ("os.fork", "fork"):
        assert lines[method].startswith("RuntimeError: this process was forked"), lines[method]
        assert "spawn" in lines[method]
    assert lines["spawn"] == "ran exact"
    assert lines["forkserver"] == "ran exact"


# --- Guard pages -----------------------------------------------------------------------------


def test_masked_kernels_stay_inside_guard_pages(tmp_path):
    out = script("guard_pages.py", cache=tmp_path).stdout.split("\n")
    assert sum(line.startswith("ok ") for line in out) == 10, out


# --- Interrupts and the shared cache ---------------------------------------------------------


def test_ctrl_c_during_tuning_is_prompt_and_leaves_the_cache_usable(tmp_path):
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "interrupted_tuning.py"), str(1 << 20)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "tuning"
    time.sleep(1.0)  # tuning 1M elements through 12 candidates takes far longer
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    waited = time.monotonic() - sent
    assert process.returncode == 3 and out.startswith("interrupted"), (process.returncode, out)
    print(f"KeyboardInterrupt {waited:.2f} s after SIGINT")
    assert not list(tmp_path.rglob("*.tmp.*"))
    assert script("threads.py", 2, 20, cache=tmp_path).stdout.strip() == "ok"


def test_processes_sharing_a_cache_tune_a_key_once(tmp_path):
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path))
    processes = [
        subprocess.Popen([sys.executable, str(SCRIPTS / "tune_once.py")], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=240)[0].strip() for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    assert sorted(o.split()[0] for o in outputs) == ["from_disk=False", "from_disk=True", "from_disk=True"]
    assert len({o.split(" ", 1)[1] for o in outputs}) == 1  # one choice for all


def test_a_killed_tuner_leaves_no_stale_lock(tmp_path):
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "interrupted_tuning.py"), str(1 << 21)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "tuning"
    time.sleep(0.5)  # (2**21 elements: tuning takes seconds even with the kernel's programs cached)
    process.kill()
    process.wait(timeout=30)
    assert "finished" not in process.stdout.read()  # killed while it tuned, holding the lock
    assert list(tmp_path.rglob("*.lock"))
    result = script("interrupted_tuning.py", 1 << 21, cache=tmp_path, timeout=240, check=False)
    assert result.stdout.split("\n")[-2] == "finished", result.stdout


# --- Corrupt and unusable caches -------------------------------------------------------------


def test_directories_in_place_of_cache_files_are_survived(tmp_path):
    script("threads.py", 1, 3, cache=tmp_path)
    entries = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    assert entries
    for entry in entries:
        entry.unlink()
        (entry / "inner").mkdir(parents=True)
    assert script("threads.py", 2, 10, cache=tmp_path).stdout.strip() == "ok"


def test_an_unwritable_cache_directory_warns_and_works(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    result = script("threads.py", 2, 10, cache=blocker / "cache")
    assert result.stdout.strip() == "ok"
    assert "RuntimeWarning" in result.stderr and "memory" in result.stderr


# --- Tensors beyond the device's largest buffer ----------------------------------------------


def available_bytes():
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def test_a_tensor_of_more_than_2_to_the_31_elements():
    n = 2**31 + 1000
    if available_bytes() < 3 * n:
        pytest.skip(f"needs {3 * n / 2**30:.1f} GiB of free memory, the machine has {available_bytes() / 2**30:.1f}")
    x = torch.zeros(n, dtype=torch.uint8)
    x[-1000:] = torch.arange(1000, dtype=torch.int32).to(torch.uint8)
    y = torch.empty_like(x)
    limit = ninetoothed.current_device()["max_allocation"]
    if n > limit:
        with pytest.raises(ValueError, match=rf"the tensor 'x' spans {n} bytes, more than the {limit} bytes"):
            add_one.pin({BLOCK_SIZE.name: 1024})
            add_one(x, y)
    else:
        add_one(x, y)
        assert torch.equal(y[-1000:], x[-1000:] + 1) and torch.equal(y[:1000], x[:1000] + 1)
    add_one.pin(None)


def test_devices_say_whether_division_is_correctly_rounded():
    for device in ninetoothed.list_devices():
        assert isinstance(device["correctly_rounded_divide_sqrt"], bool)
        assert device["max_allocation"] > 0


# --- Bad input: each a clear exception naming the problem, never a crash ---------------------

from ninetoothed import Symbol, Tensor  # noqa: E402


def _x():
    return Tensor(2, name="x")


def _launch(*args, **kwargs):
    add_one.pin({BLOCK_SIZE.name: 64})
    try:
        add_one(*args, **kwargs)
    finally:
        add_one.pin(None)


def _make(arrangement, application, tensors):
    return ninetoothed.make(arrangement, application, tensors)


def _identity(*tensors):
    return tensors


def _one_parameter(x):
    x = x  # noqa: PLW0127


BAD_INPUTS = {
    # Symbols and tensors
    "symbol from a list": (lambda: Symbol([1, 2]), TypeError, "list"),
    "symbol bad expression": (lambda: Symbol("a +"), (ValueError, SyntaxError), "a \\+"),
    "symbol meta and not constexpr": (lambda: Symbol("m", meta=True, constexpr=False), ValueError, "meta"),
    "symbol options on a number": (lambda: Symbol(3, constexpr=True), ValueError, "name"),
    "tensor without ndim or shape": (lambda: Tensor(), (TypeError, ValueError), "ndim"),
    "tensor negative ndim": (lambda: Tensor(-1), ValueError, "ndim"),
    "tensor ndim and shape disagree": (lambda: Tensor(3, shape=(2, 2)), ValueError, "shape"),
    "tensor jagged in dimension 0": (lambda: Tensor(2, jagged_dim=0), ValueError, "after the first"),
    "tensor jagged not an int": (lambda: Tensor(2, jagged_dim="1"), TypeError, "jagged_dim"),
    "tensor bad shape_options": (lambda: Tensor(1, shape_options=5), TypeError, "shape_options"),
    # Meta-operations
    "tile too few sizes": (lambda: _x().tile((2,)), ValueError, "tile"),
    "tile zero size": (lambda: _x().tile((0, 2)), ValueError, "0"),
    "tile bad strides": (lambda: _x().tile((2, 2), strides=(1,)), ValueError, "strides"),
    "tile non-int": (lambda: _x().tile(("a", 2)), (TypeError, ValueError), "a"),
    "expand a size that is not 1": (lambda: Tensor(shape=(3, 1)).expand((5, 4)), ValueError, "expand"),
    "squeeze a size that is not 1": (lambda: Tensor(shape=(3, 1)).squeeze(0), ValueError, "squeeze"),
    "squeeze out of range": (lambda: _x().squeeze(5), (IndexError, ValueError), "5"),
    "permute not a permutation": (lambda: _x().permute((0, 0)), ValueError, "permut"),
    "permute wrong length": (lambda: _x().permute((0,)), ValueError, "permut"),
    "unsqueeze out of range": (lambda: _x().unsqueeze(7), (IndexError, ValueError), "7"),
    "flatten bad range": (lambda: _x().flatten(1, 0), ValueError, "flatten"),
    "index out of range": (lambda: Tensor(shape=(3, 4))[5], IndexError, "5"),
    "slice step zero": (lambda: Tensor(shape=(3, 4))[::0], ValueError, "step"),
    "too many indices": (lambda: Tensor(shape=(3, 4))[0, 0, 0], IndexError, "indices"),
    "pad not pairs": (lambda: _x().pad((1, 2, 3)), TypeError, "pair"),
    # make / jit
    "application takes fewer": (lambda: _make(_identity, _one_parameter, (Tensor(1), Tensor(1))), TypeError, "parameters"),
    "arrangement gives a non-tensor": (lambda: _make(lambda x: (3,), _one_parameter, (Tensor(1),)), TypeError, "Tensor"),
    "jit without annotations": (lambda: ninetoothed.jit(_one_parameter), TypeError, "annotated"),
    "aot caller": (lambda: _make(_identity, _one_parameter, (Tensor(1),)) and ninetoothed.make(_identity, _one_parameter, (Tensor(1),), caller="hip"), NotImplementedError, "ahead-of-time"),
    "num_warps zero": (lambda: ninetoothed.make(_identity, _one_parameter, (Tensor(1),), num_warps=0), ValueError, "num_warps"),
    # Launch arguments
    "too few arguments": (lambda: _launch(torch.zeros(3)), TypeError, "arguments"),
    "too many arguments": (lambda: _launch(torch.zeros(3), torch.zeros(3), torch.zeros(3)), TypeError, "arguments"),
    "wrong rank": (lambda: _launch(torch.zeros(3, 3), torch.zeros(3)), ValueError, "dimension"),
    "a string": (lambda: _launch("abc", torch.zeros(3)), TypeError, "str"),
    "None": (lambda: _launch(None, torch.zeros(3)), TypeError, "None"),
    "a list": (lambda: _launch([1.0, 2.0], torch.zeros(2)), TypeError, "list"),
    "complex dtype": (lambda: _launch(torch.zeros(3, dtype=torch.complex64), torch.zeros(3)), TypeError, "complex"),
    "unknown keyword": (lambda: _launch(torch.zeros(3), torch.zeros(3), nonsense=1), TypeError, "nonsense"),
    "a meta device tensor": (lambda: _launch(torch.zeros(3, device="meta"), torch.zeros(3)), ValueError, "meta"),
    "a numpy object array": (lambda: _launch(__import__("numpy").array([object()]), torch.zeros(1)), TypeError, "object"),
    "pin with a wrong name": (lambda: (add_one.pin({"nope": 4}), add_one(torch.zeros(3), torch.zeros(3))), ValueError, "'nope' is not a meta symbol"),
    "pin with zero": (lambda: (add_one.pin({BLOCK_SIZE.name: 0}), add_one(torch.zeros(3), torch.zeros(3))), ValueError, "0"),
    "select an unknown device": (lambda: ninetoothed.select_device("no such device at all"), RuntimeError, "no such device"),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_raises_a_clear_exception(case):
    make_call, expected, pattern = BAD_INPUTS[case]
    try:
        with pytest.raises(expected, match=pattern):
            make_call()
    finally:
        add_one.pin(None)
