"""The OpenCL runtime as Python sees it: devices, build failures, resource limits."""

import functools
import os

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor


@pytest.mark.skipif(bool(os.environ.get("NINETOOTHED_DEVICE")), reason="NINETOOTHED_DEVICE chooses another device")
def test_default_device_is_a_cpu_and_listed():
    devices = ninetoothed.list_devices()
    assert devices, "no OpenCL device"
    current = ninetoothed.current_device()
    assert current["is_cpu"]
    assert current["name"] in [d["name"] for d in devices]


def test_select_device_by_index_and_unknown_selector():
    current = ninetoothed.current_device()
    assert ninetoothed.select_device(str(current["index"]))["name"] == current["name"]
    with pytest.raises(RuntimeError, match="no-such-device"):
        ninetoothed.select_device("no-such-device")


def test_build_failure_carries_the_log_and_the_saved_source():
    source = "__kernel void broken(__global float* p) { p[0] = undefined_name; }"
    with pytest.raises(RuntimeError) as raised:
        ninetoothed._core.build_opencl(source)
    message = str(raised.value)
    assert "undefined_name" in message  # the compiler's log
    saved = message.split("source saved to ")[1].split()[0].rstrip(";")
    assert os.path.exists(saved)
    with open(saved) as f:
        assert f.read() == source


def test_blocks_too_large_for_private_memory_are_refused():
    block = Symbol("BLOCK", constexpr=True)

    def arrangement(input, output):
        return input.tile((1, block)), output.tile((1, block))

    def application(input, output):
        loaded = input
        output = loaded - ntl.max(loaded)  # noqa: F841

    kernel = ninetoothed.make(arrangement, application, (Tensor(2), Tensor(2)))
    input = torch.randn(2, 8)
    output = torch.full((2, 8), float("nan"))
    with pytest.raises(ValueError, match="private memory"):
        kernel(input, output, BLOCK=2**20)
    assert torch.isnan(output).all()
    kernel(input, output, BLOCK=8)
    assert torch.equal(output, input - input.max(dim=1, keepdim=True).values)


def _scale_arrangement(x, y, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,))


def _scale_application(x, y):
    y = x * 2  # noqa: F841


@pytest.mark.host_tensors  # a launch on CUDA tensors does not wait for its kernel: None there
def test_the_last_launch_reports_its_device_time():
    kernel = ninetoothed.make(_scale_arrangement, _scale_application, (Tensor(1), Tensor(1)))
    assert kernel.last_launch_seconds is None
    for size in (5, 1 << 20):  # a small launch (single-threaded companion) and a big one
        x = torch.randn(size)
        y = torch.full((size,), float("nan"))
        kernel(x, y)
        assert torch.equal(y, x * 2)
        assert isinstance(kernel.last_launch_seconds, float) and kernel.last_launch_seconds > 0


def test_opencl_options_reach_every_build_and_key_the_caches(tmp_path):
    """NINETOOTHED_OPENCL_OPTIONS is added to every OpenCL build and is part of the program cache's
    key: a process with an option the compiler refuses builds anew, and fails naming it, where a
    process without it built and kept the same kernel in the same cache."""
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    program = ("import sys, torch; sys.path.insert(0, 'examples'); from tutorial_kernels import add_kernel; "
               "x = torch.arange(1000.0); z = torch.full_like(x, float('nan')); add_kernel(x, x, z); "
               "assert torch.equal(z, x + x); print('ok')")
    # POCL_KERNEL_CACHE=0: on PoCL too, the binaries are ours to keep (cpp/runtime/program.cpp).
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root / "python"),
               POCL_KERNEL_CACHE="0")
    env.pop("NINETOOTHED_OPENCL_OPTIONS", None)
    run = functools.partial(subprocess.run, [sys.executable, "-c", program], cwd=root, capture_output=True,
                            text=True, timeout=600)
    first = run(env=env)
    assert first.returncode == 0 and first.stdout == "ok\n", first.stderr
    assert any((tmp_path / "programs").iterdir())  # the chosen configuration's binary
    refused = run(env=dict(env, NINETOOTHED_OPENCL_OPTIONS="-cl-no-such-option"))
    assert refused.returncode != 0 and "-cl-no-such-option" in refused.stderr, refused.stdout + refused.stderr
    again = run(env=dict(env, NINETOOTHED_OPENCL_OPTIONS="-cl-opt-disable"))
    assert again.returncode == 0 and again.stdout == "ok\n", again.stderr
