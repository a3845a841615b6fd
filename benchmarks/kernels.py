"""Benchmark: the tutorial's kernels against torch (and numpy's BLAS for matmul).

    PYTHONPATH=python /usr/bin/python3 benchmarks/kernels.py [--quick]

Runs everything in one process on the CPU: ours on the OpenCL device (PoCL),
torch with 2 threads, numpy with its BLAS. Each kernel's result is checked
once against a reference (outputs poisoned with NaN first), then both sides
are timed: one warm-up call, then the best of several runs
(time.perf_counter; the launch-overhead row is a mean over many calls). Prints
the machine and a table; ratio = ours / theirs (time, lower is better),
speed-up = theirs / ours (higher is better).
"""

import argparse
import os
import platform
import sys
import time

import numpy as np
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor
from ninetoothed._core import current_device

# --- The kernels: the tutorial's, from the main job's examples, and rms_norm -------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from tutorial_kernels import BLOCK_SIZE  # noqa: E402
from tutorial_kernels import add_kernel as add  # noqa: E402
from tutorial_kernels import matmul_kernel as matmul  # noqa: E402
from tutorial_kernels import softmax_kernel as softmax  # noqa: E402


def rms_norm_arrangement(input, eps, num_cols, output):
    return input.tile((1, BLOCK_SIZE)), eps, num_cols, output.tile((1, BLOCK_SIZE))


def rms_norm_application(input, eps, num_cols, output):
    output = input * ntl.rsqrt(ntl.sum(input * input) / num_cols + eps)  # noqa: F841


rms_norm = ninetoothed.make(
    rms_norm_arrangement, rms_norm_application, (Tensor(2), Tensor(0), Tensor(0), Tensor(2))
)

# --- Timing and checking -----------------------------------------------------------------------


def best_of(function, repeats):
    function()  # warm-up (builds the program on the first call of a kernel)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def mean_of(function, calls):
    for _ in range(20):
        function()
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def check(name, actual, expected, rtol, atol):
    """Every element of `actual` (compared in float64) must be close to `expected`."""
    actual, expected = actual.double(), expected.double()
    if not torch.allclose(actual, expected, rtol=rtol, atol=atol):
        error = (actual - expected).abs().nan_to_num(float("inf")).max().item()
        raise AssertionError(f"{name}: result disagrees with the reference (max abs error {error:.3g})")


def blas_libraries():
    """The BLAS shared libraries this process has loaded (numpy's and torch's matmul use them)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.rsplit("/", 1)[-1]}
    return sorted(os.path.realpath(path) for path in paths)


def poisoned_like(x, dtype=None):
    return torch.full(x.shape, float("nan"), dtype=dtype or x.dtype)


# --- The rows ----------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    torch.set_num_threads(2)
    torch.manual_seed(0)
    quick = parser.parse_args().quick
    repeats = 3 if quick else 10
    vector_size = 1 << (20 if quick else 24)
    rows_n = 1024 if quick else 4096
    matmul_sizes = (256, 512) if quick else (1024, 2048)
    half_size = 256 if quick else 1024
    rows = []  # (label, ours s, theirs s, flops or None)

    def compare(label, ours, theirs, flops=None, runs=repeats):
        rows.append((label, best_of(ours, runs), best_of(theirs, runs), flops))

    # Vector add.
    x, y = torch.randn(vector_size), torch.randn(vector_size)
    z, out = poisoned_like(x), torch.empty_like(x)
    add(x, y, z)
    check("vector add", z, (x.double() + y.double()).float(), rtol=0, atol=0)  # exact
    compare(f"vector add {vector_size >> 20}M f32 / torch.add",
            lambda: add(x, y, z), lambda: torch.add(x, y, out=out))

    # Row softmax. torch.softmax allocates its output on every call; the same softmax into a
    # preallocated output shows how much of its time is the fresh allocation's page faults.
    x = torch.randn(rows_n, rows_n) * 3
    z, out = poisoned_like(x), torch.empty_like(x)
    softmax(x, z, BLOCK_SIZE=rows_n)
    check("softmax", z, torch.softmax(x.double(), dim=-1), rtol=1e-4, atol=1e-7)
    ours = lambda: softmax(x, z, BLOCK_SIZE=rows_n)  # noqa: E731
    compare(f"softmax {rows_n}x{rows_n} f32 / torch.softmax", ours, lambda: torch.softmax(x, dim=-1))
    compare("  same / torch softmax into preallocated out", ours,
            lambda: torch.ops.aten._softmax.out(x, -1, False, out=out))

    # Matmul, float32 (a reference matmul can take seconds: fewer runs).
    for n in matmul_sizes:
        a, b = torch.randn(n, n), torch.randn(n, n)
        a_np, b_np = a.numpy(), b.numpy()
        c = poisoned_like(a)
        matmul(a, b, c)
        check(f"matmul {n}", c, a.double() @ b.double(), rtol=1e-4, atol=2e-6 * n)
        runs = 3 if quick or n >= 2048 else 5
        ours = lambda: matmul(a, b, c)  # noqa: E731
        compare(f"matmul {n} f32 / torch.matmul", ours, lambda: torch.matmul(a, b), 2 * n**3, runs)
        compare(f"matmul {n} f32 / numpy @", ours, lambda: a_np @ b_np, 2 * n**3, runs)

    # Matmul, float16 inputs and output, float32 accumulator (torch cannot matmul float16 here).
    n = half_size
    a, b = torch.randn(n, n).half(), torch.randn(n, n).half()
    a32, b32 = a.float(), b.float()
    c = poisoned_like(a)
    matmul(a, b, c)
    check(f"matmul {n} float16", c, a32 @ b32, rtol=2e-3, atol=1e-3 * n**0.5)
    compare(f"matmul {n} f16 / torch f32 copies",
            lambda: matmul(a, b, c), lambda: torch.matmul(a32, b32), 2 * n**3, runs=3 if quick else 5)

    # RMS norm; again also against the same torch expression with its big temporaries preallocated.
    x, eps = torch.randn(rows_n, rows_n), 1e-6
    z, squares, out = poisoned_like(x), torch.empty_like(x), torch.empty_like(x)

    def torch_rms_norm():
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def torch_rms_norm_preallocated():
        mean = torch.pow(x, 2, out=squares).mean(-1, keepdim=True)
        return torch.mul(x, torch.rsqrt(mean + eps), out=out)

    rms_norm(x, eps, rows_n, z, BLOCK_SIZE=rows_n)
    xd = x.double()
    check("rms_norm", z, xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps), 1e-5, 1e-6)
    check("torch rms_norm, preallocated", torch_rms_norm_preallocated(), torch_rms_norm(), 1e-6, 1e-6)
    ours = lambda: rms_norm(x, eps, rows_n, z, BLOCK_SIZE=rows_n)  # noqa: E731
    compare(f"rms_norm {rows_n}x{rows_n} f32 / torch expr", ours, torch_rms_norm)
    compare("  same / torch expr, preallocated outs", ours, torch_rms_norm_preallocated)

    # Launch overhead: a 3-element vector add, mean over many calls.
    x, y = torch.tensor((1.0, 2.0, 3.0)), torch.tensor((4.0, 5.0, 6.0))
    z, out = poisoned_like(x), torch.empty_like(x)
    add(x, y, z)
    check("vector add (3)", z, x + y, rtol=0, atol=0)
    calls = 500 if quick else 2000
    ours, theirs = mean_of(lambda: add(x, y, z), calls), mean_of(lambda: torch.add(x, y, out=out), calls)
    rows.append((f"launch: add of 3 (mean of {calls}) / torch", ours, theirs, None))

    # Report.
    device = current_device()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    print(f"CPU: {cpu}, {os.cpu_count()} cores; OpenCL device: {device['name']} "
          f"({device['platform']}, {device['compute_units']} compute units)")
    print(f"Python {platform.python_version()}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), numpy {np.__version__}"
          + (" [--quick]" if quick else ""))
    print(f"BLAS loaded (numpy, torch): {', '.join(blas_libraries()) or 'none found'}")
    print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
    print(f"{'kernel / reference':45} {'ours ms':>9} {'theirs ms':>9} {'ours/th':>8} {'speed-up':>8}"
          f" {'ours GF/s':>9} {'th GF/s':>8}")
    for label, ours, theirs, flops in rows:
        line = f"{label:45} {ours * 1e3:>9.3f} {theirs * 1e3:>9.3f} {ours / theirs:>8.2f} {theirs / ours:>8.2f}"
        if flops:
            line += f" {flops / ours / 1e9:>9.1f} {flops / theirs / 1e9:>8.1f}"
        print(line)
    print(f"launch overhead: {rows[-1][1] * 1e6:.1f} us per call (torch.add: {rows[-1][2] * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
