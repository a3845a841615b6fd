"""Small launches on PoCL's single-threaded companion device, big ones on the pthread device.

The choice must not show in results: the same kernels give identical results on both devices
(odd sizes, float16, outputs poisoned, every element against a float64 reference); the basic
device is not listed unless the user asked PoCL for it; a user's POCL_DEVICES is respected.
The launch binding in C++ is covered by test_kernel_arguments.py and by the cases here.
"""

import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import ninetoothed
from ninetoothed import _core

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples"))
from tutorial_kernels import add_kernel, matmul_kernel, softmax_kernel  # noqa: E402

ALWAYS_SMALL = 1 << 62
NEVER_SMALL = -1

companion = pytest.mark.skipif(
    ninetoothed.current_device()["small_launches_on"] is None,
    reason="the current device has no single-threaded companion (POCL_DEVICES without basic?)",
)


@pytest.fixture
def limit():
    """Sets the small-launch limit for a test, restoring the default after it."""
    default = _core.small_launch_limit()
    yield _core.set_small_launch_limit
    _core.set_small_launch_limit(default)


def run_on_both(limit, launch):
    """`launch()` (which returns its output) on the pthread device, then on the basic one."""
    launch()  # tunes (timing runs launch too) and builds
    results = []
    for value in (NEVER_SMALL, ALWAYS_SMALL):
        limit(value)
        before = _core.num_small_launches()
        out = launch()
        small = _core.num_small_launches() - before
        assert small == (0 if value == NEVER_SMALL else 1), "the launch ran on the other device"
        results.append(out)
    return results


def assert_close(actual, expected, rtol=0.0, atol=0.0):
    torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol)


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype)


@companion
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("size", (1, 3, 1001, 65537))
def test_vector_add_is_identical_on_both_devices(limit, dtype, size):
    x, y = torch.randn(size).to(dtype), torch.randn(size).to(dtype)

    def launch():
        z = poisoned((size,), dtype)
        add_kernel(x, y, z)
        return z

    threaded, small = run_on_both(limit, launch)
    assert torch.equal(threaded, small)
    assert_close(small, (x.double() + y.double()).to(dtype))


@companion
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("rows, cols", ((1, 1), (7, 33), (130, 257)))
def test_softmax_is_identical_on_both_devices(limit, dtype, rows, cols):
    x = (torch.randn(rows, cols) * 3).to(dtype)
    block = 1 << (cols - 1).bit_length()

    def launch():
        z = poisoned((rows, cols), dtype)
        softmax_kernel(x, z, BLOCK_SIZE=block)
        return z

    threaded, small = run_on_both(limit, launch)
    assert torch.equal(threaded, small)
    tolerance = (1e-5, 1e-7) if dtype == torch.float32 else (2e-3, 1e-4)
    assert_close(small, torch.softmax(x.double(), dim=-1), *tolerance)


@companion
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("m, k, n", ((1, 1, 1), (17, 33, 65), (100, 70, 129)))
def test_matmul_is_identical_on_both_devices(limit, dtype, m, k, n):
    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)

    def launch():
        c = poisoned((m, n), dtype)
        matmul_kernel(a, b, c)
        return c

    threaded, small = run_on_both(limit, launch)
    assert torch.equal(threaded, small)
    tolerance = (1e-5, 1e-5 * k) if dtype == torch.float32 else (2e-3, 2e-3 * k**0.5)
    assert_close(small, a.double() @ b.double(), *tolerance)


@companion
def test_numpy_arrays_and_views_alternate_between_devices_on_the_same_memory(limit):
    # One buffer written on one device and read on the other, many times over.
    x = np.random.default_rng(0).standard_normal(3001).astype(np.float32)
    out = np.full(3001, np.nan, dtype=np.float32)
    expected = x.astype(np.float64)
    for i in range(20):
        limit(ALWAYS_SMALL if i % 2 else NEVER_SMALL)
        add_kernel(x if i == 0 else out, x, out)
        expected = expected + x
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    view = out[::-2]  # negative strides, through the small device
    limit(ALWAYS_SMALL)
    add_kernel(x[:1501], x[:1501], view)
    np.testing.assert_array_equal(view, x[:1501] * 2)


@companion
def test_the_default_sends_small_launches_to_the_companion_and_big_ones_to_the_device(limit):
    limit(_core.small_launch_limit())
    before = _core.num_small_launches()
    x = torch.randn(3)
    z = poisoned((3,), torch.float32)
    add_kernel(x, x, z)
    assert _core.num_small_launches() == before + 1
    assert torch.equal(z, x * 2)
    big = torch.randn(1 << 20)
    z = poisoned(big.shape, torch.float32)
    before = _core.num_small_launches()
    add_kernel(big, big, z)
    assert _core.num_small_launches() == before
    assert torch.equal(z, big * 2)


@companion
def test_threads_mixing_small_and_big_launches(limit):
    limit(_core.small_launch_limit())
    failures = []

    def work(t):
        try:
            for i in range(40):
                n = 200_003 if i % 5 == 0 else 17 + t + i
                x, y = torch.randn(n), torch.randn(n)
                z = poisoned((n,), torch.float32)
                add_kernel(x, y, z)
                if not torch.equal(z, x + y):
                    failures.append(f"thread {t} launch {i}: wrong result")
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(f"thread {t}: {error!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]


# --- Devices as users see them, per POCL_DEVICES (fresh processes) ----------------------------

PROBE = """
import json, os, subprocess, sys
sys.path[:0] = [{python!r}, {examples!r}]
import torch, ninetoothed
from ninetoothed import _core
from tutorial_kernels import add_kernel
x = torch.randn(3)
z = torch.full((3,), float("nan"))
add_kernel(x, x, z)  # the first call may tune (each candidate's runs are launches too)
before = _core.num_small_launches()
add_kernel(x, x, z)
assert torch.equal(z, x * 2)
child = subprocess.run(["env"], capture_output=True, text=True).stdout
print(json.dumps({{
    "listed": [d["name"].split("-")[0] for d in ninetoothed.list_devices()],
    "current": ninetoothed.current_device()["name"].split("-")[0],
    "companion": (ninetoothed.current_device()["small_launches_on"] or "-").split("-")[0],
    "small_launches": _core.num_small_launches() - before,  # of the second call
    "environ": os.environ.get("POCL_DEVICES"),
    "child_environ": [line for line in child.splitlines() if line.startswith("POCL_DEVICES=")],
}}))
"""


# POCL_DEVICES is PoCL's: machines whose OpenCL is another vendor's alone (the lent GPUs) have nothing to probe.
# PoCL before 4 names its CPU devices pthread and basic (Debian 12's 3.1); later ones cpu and cpu-minimal.
needs_pocl = pytest.mark.skipif(
    not any("Portable Computing Language" in d.get("platform", "") and d["name"].startswith("pthread")
            for d in ninetoothed.list_devices()),
    reason="no PoCL with pthread/basic devices here",
)


def probe(pocl_devices):
    import json

    env = {k: v for k, v in os.environ.items() if k != "POCL_DEVICES"}
    if pocl_devices is not None:
        env["POCL_DEVICES"] = pocl_devices
    source = PROBE.format(python=str(HERE.parents[1] / "python"), examples=str(HERE.parents[1] / "examples"))
    result = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@needs_pocl
def test_unset_pocl_devices_hides_the_companion_and_leaves_the_environment_alone():
    seen = probe(None)
    assert seen["listed"] == ["pthread"]
    assert seen["current"] == "pthread"
    assert seen["companion"] == "basic"
    assert seen["small_launches"] == 1
    assert seen["environ"] is None
    assert seen["child_environ"] == []  # processes started later do not inherit it


@needs_pocl
def test_a_user_pocl_devices_without_basic_is_respected():
    seen = probe("pthread")
    assert seen["listed"] == ["pthread"]
    assert seen["companion"] == ""
    assert seen["small_launches"] == 0
    assert seen["child_environ"] == ["POCL_DEVICES=pthread"]


@needs_pocl
def test_a_user_pocl_devices_with_basic_lists_it_and_prefers_pthread():
    seen = probe("basic pthread")
    assert seen["listed"] == ["basic", "pthread"]
    assert seen["current"] == "pthread"
    assert seen["small_launches"] == 1


@needs_pocl
def test_a_user_pocl_devices_of_basic_alone_runs_everything_there():
    seen = probe("basic")
    assert seen["listed"] == ["basic"]
    assert seen["current"] == "basic"
    assert seen["small_launches"] == 0  # the device itself, not a companion


# --- Argument binding in C++ -------------------------------------------------------------------


def test_numpy_arrays_of_another_byte_order_are_refused():
    x = np.arange(5, dtype=">f4")
    with pytest.raises(TypeError, match="unsupported dtype >f4"):
        add_kernel(x, x, np.zeros(5, dtype=np.float32))


def test_read_only_numpy_inputs_are_accepted():
    x = np.arange(7, dtype=np.float32)
    x.flags.writeable = False
    out = np.full(7, np.nan, dtype=np.float32)
    add_kernel(x, x, out)
    np.testing.assert_array_equal(out, np.arange(7, dtype=np.float32) * 2)


def test_a_tensor_that_requires_grad_and_a_non_contiguous_one():
    x = torch.randn(10, requires_grad=True)
    y = torch.randn(20)[::2]
    z = poisoned((10,), torch.float32)
    add_kernel(x, y, z)
    assert torch.equal(z, x.detach() + y)


def test_a_kernel_called_with_new_shapes_many_times_stays_correct():
    # More shapes than a kernel keeps plans for: the cache is dropped and refilled.
    for n in range(1, 600):
        x = torch.full((n,), float(n))
        z = poisoned((n,), torch.float32)
        add_kernel(x, x, z)
        assert torch.equal(z, x * 2), n


def test_kernel_source_follows_the_most_recent_specialisation():
    add_kernel(torch.zeros(3, dtype=torch.float16), torch.zeros(3, dtype=torch.float16),
               torch.zeros(3, dtype=torch.float16))
    assert "__global half* nt_p0_data" in add_kernel.source
    add_kernel(torch.zeros(3), torch.zeros(3), torch.zeros(3))
    assert "__global float* nt_p0_data" in add_kernel.source


def test_a_kernel_that_is_no_longer_referenced_is_freed():
    import gc
    import weakref

    from tutorial_kernels import add_application, add_arrangement

    kernel = ninetoothed.make(add_arrangement, add_application, (ninetoothed.Tensor(1),) * 3)
    x = torch.ones(5)
    z = poisoned((5,), torch.float32)
    kernel(x, x, z)
    assert torch.equal(z, x * 2)
    reference = weakref.ref(kernel)
    del kernel
    gc.collect()
    assert reference() is None  # the C++ binder holds Kernel._specialize weakly
