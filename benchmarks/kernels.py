"""Benchmark: our kernels against torch and OpenBLAS, each row with its share of the machine's limit.

    ./scripts/bench.sh [--quick]      (installs OpenBLAS when missing, puts it first, runs this)
    PYTHONPATH=python /usr/bin/python3 benchmarks/kernels.py [--quick]

Runs everything in one process on the CPU: ours on the OpenCL device (PoCL), torch with 2 threads,
numpy and torch with whichever BLAS the process loaded (printed; scripts/bench.sh makes it
OpenBLAS's pthread build). Each kernel's result is checked once against a float64 reference
(outputs poisoned with NaN first), then both sides are timed: one warm-up call (where our kernels
with block_size() symbols are auto-tuned), then the best of several runs (time.perf_counter); the
launch row is a mean over many calls. The machine's limits are measured in the same run: memory
bandwidth from a large copy (torch with 2 threads and numpy; the faster), and the float32 FLOP peak
from a register-only FMA loop, a tiny C program compiled at run time with
`cc -O3 -march=native -fopenmp` (one thread per core). A row's "% limit" is its bytes moved
(compulsory traffic: each input read once, each output written once) over the bandwidth, or its
FLOPs over the peak.
"""

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time


def blas_libraries():
    """The BLAS shared libraries this process has loaded so far."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.rsplit("/", 1)[-1]}
    return sorted(os.path.realpath(path) for path in paths)


import numpy as np  # noqa: E402

NUMPY_BLAS = blas_libraries()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

TORCH_BLAS = blas_libraries()

import ninetoothed  # noqa: E402
import ninetoothed.language as ntl  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from ninetoothed._core import current_device  # noqa: E402

# --- The kernels: the tutorial's (examples/), rms_norm, and the tests' conv2d and attention ------

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "python"),
                os.path.join(ROOT, "tests", "python", "ops")]
from corpus import conv2d_winograd  # noqa: E402
from test_kernels_attention import KERNEL as attention  # noqa: E402
from test_kernels_convolution import _conv2d_kernel  # noqa: E402
from tutorial_kernels import BLOCK_SIZE  # noqa: E402
from tutorial_kernels import add_kernel as add  # noqa: E402
from tutorial_kernels import matmul_kernel as matmul  # noqa: E402
from tutorial_kernels import softmax_kernel as softmax  # noqa: E402

conv2d = _conv2d_kernel(True)


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


def poisoned_like(x, dtype=None):
    return torch.full(x.shape, float("nan"), dtype=dtype or x.dtype)


# --- The machine's limits ------------------------------------------------------------------------

FMA_PEAK_C = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
/* The widest vector registers: 12 chains of them (and 2 operands) fit AVX2's 16 and AVX-512's 32. */
#if defined(__AVX512F__)
#define LANES 16
#else
#define LANES 8
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));
int main(int argc, char** argv) {
  long iters = atol(argv[1]);
  float seed = (float)argc * 1e-9f;  /* unknown to the compiler: nothing folds */
  double start = omp_get_wtime(), total = 0;
  int threads = 1;
#pragma omp parallel reduction(+ : total)
  {
#pragma omp single
    threads = omp_get_num_threads();
    vec acc[12], m, a;
    for (int j = 0; j < LANES; ++j) { m[j] = 1.0f - seed; a[j] = seed; }
    for (int k = 0; k < 12; ++k) acc[k] = a * (float)k;
    for (long i = 0; i < iters; ++i)
      for (int k = 0; k < 12; ++k) acc[k] = acc[k] * m + a;  /* 12 independent FMA chains */
    for (int k = 0; k < 12; ++k)
      for (int j = 0; j < LANES; ++j) total += acc[k][j];
  }
  double seconds = omp_get_wtime() - start;
  printf("%.6f %d %d %g\n", seconds, threads, LANES, total);
  return 0;
}
"""


def fma_peak_gflops():
    """float32 FLOP/s of 12 independent FMA chains per core, as wide as the CPU's vector registers
    (16 floats with AVX-512, else 8), in registers only; None if no cc."""
    with tempfile.TemporaryDirectory() as directory:
        source, binary = os.path.join(directory, "peak.c"), os.path.join(directory, "peak")
        with open(source, "w") as f:
            f.write(FMA_PEAK_C)
        try:
            subprocess.run(["cc", "-O3", "-march=native", "-fopenmp", source, "-o", binary],
                           check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        iters, best = 20_000_000, 0.0
        for _ in range(3):
            seconds, threads, lanes, _ = subprocess.run([binary, str(iters)], check=True, capture_output=True,
                                                        text=True).stdout.split()
            best = max(best, 2 * int(lanes) * 12 * iters * int(threads) / float(seconds) / 1e9)
        return best


def copy_bandwidth_gbs(quick):
    """Bytes read plus bytes written per second by the faster of torch's (2 threads) and numpy's copy."""
    n = (1 << 24) if quick else (1 << 26)  # 256 MiB per array
    src, dst = torch.randn(n), torch.empty(n)
    src_np, dst_np = src.numpy(), dst.numpy()
    seconds = min(best_of(lambda: dst.copy_(src), 5), best_of(lambda: np.copyto(dst_np, src_np), 5))
    return 2 * 4 * n / seconds / 1e9


# --- The rows ----------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    torch.set_num_threads(2)
    torch.manual_seed(0)
    quick = parser.parse_args().quick
    repeats = 3 if quick else 10
    rows = []  # (label, ours s, theirs s, "bytes" or "flops" or None, amount)

    def compare(label, ours, theirs, kind=None, amount=0, runs=repeats):
        rows.append((label, best_of(ours, runs), best_of(theirs, runs), kind, amount))

    # Launch overhead: a 3-element vector add, mean over many calls.
    x, y = torch.tensor((1.0, 2.0, 3.0)), torch.tensor((4.0, 5.0, 6.0))
    z, out = poisoned_like(x), torch.empty_like(x)
    add(x, y, z)
    check("vector add (3)", z, x + y, rtol=0, atol=0)
    calls = 2000 if quick else 10000
    ours = min(mean_of(lambda: add(x, y, z), calls) for _ in range(3))
    theirs = min(mean_of(lambda: torch.add(x, y, out=out), calls) for _ in range(3))
    rows.append((f"launch: add of 3 (mean of {calls}) / torch.add", ours, theirs, None, 0))

    # Vector add.
    n = 1 << (20 if quick else 24)
    x, y = torch.randn(n), torch.randn(n)
    z, out = poisoned_like(x), torch.empty_like(x)
    add(x, y, z)
    check("vector add", z, (x.double() + y.double()).float(), rtol=0, atol=0)  # exact
    compare(f"vector add {n >> 20}M f32 / torch.add out=", lambda: add(x, y, z),
            lambda: torch.add(x, y, out=out), "bytes", 3 * 4 * n)

    # Row softmax, torch into a preallocated output (torch.softmax's fresh 64 MB output would time
    # the page faults of the allocation).
    rows_n = 1024 if quick else 4096
    x = torch.randn(rows_n, rows_n) * 3
    z, out = poisoned_like(x), torch.empty_like(x)
    softmax(x, z, BLOCK_SIZE=rows_n)
    check("softmax", z, torch.softmax(x.double(), dim=-1), rtol=1e-4, atol=1e-7)
    compare(f"softmax {rows_n}^2 f32 / torch softmax out=", lambda: softmax(x, z, BLOCK_SIZE=rows_n),
            lambda: torch.ops.aten._softmax.out(x, -1, False, out=out), "bytes", 2 * 4 * rows_n**2)

    # Matmul, float32, against the BLAS (numpy's @ and torch.matmul: the faster).
    n = 512 if quick else 2048
    a, b = torch.randn(n, n), torch.randn(n, n)
    a_np, b_np = a.numpy(), b.numpy()
    c, c_out = poisoned_like(a), torch.empty(n, n)
    matmul(a, b, c)
    check(f"matmul {n}", c, a.double() @ b.double(), rtol=1e-4, atol=2e-6 * n)
    runs = 3 if quick else 5
    ours = lambda: matmul(a, b, c)  # noqa: E731
    torch_time = best_of(lambda: torch.matmul(a, b, out=c_out), runs)
    numpy_time = best_of(lambda: a_np @ b_np, runs)
    rows.append((f"matmul {n}^2 f32 / BLAS ({'torch' if torch_time < numpy_time else 'numpy'})",
                 best_of(ours, runs), min(torch_time, numpy_time), "flops", 2 * n**3))

    # A linear layer's product, x @ w.t() with w (out, in) contiguous: b read down its columns.
    w = torch.randn(n, n)
    matmul(a, w.t(), c)
    check(f"matmul {n} w.t()", c, a.double() @ w.double().t(), rtol=1e-4, atol=2e-6 * n)
    compare(f"matmul {n}^2 f32, b = w.t() / torch", lambda: matmul(a, w.t(), c),
            lambda: torch.matmul(a, w.t(), out=c_out), "flops", 2 * n**3, runs=runs)

    # Matmul, float16 in and out, float32 accumulator; the BLAS has no float16: float32 copies.
    n = 256 if quick else 1024
    a, b = torch.randn(n, n).half(), torch.randn(n, n).half()
    a32, b32 = a.float(), b.float()
    c, c_out = poisoned_like(a), torch.empty(n, n)
    matmul(a, b, c)
    check(f"matmul {n} float16", c, a32.double() @ b32.double(), rtol=2e-3, atol=1e-3 * n**0.5)
    compare(f"matmul {n}^2 f16 / BLAS f32 (torch)", lambda: matmul(a, b, c),
            lambda: torch.matmul(a32, b32, out=c_out), "flops", 2 * n**3, runs=runs)

    # RMS norm against the same torch expression (fresh temporaries, as it is usually written).
    x, eps = torch.randn(rows_n, rows_n), 1e-6
    z = poisoned_like(x)
    rms_norm(x, eps, rows_n, z, BLOCK_SIZE=rows_n)
    xd = x.double()
    check("rms_norm", z, xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps), 1e-5, 1e-6)
    compare(f"rms_norm {rows_n}^2 f32 / torch expression",
            lambda: rms_norm(x, eps, rows_n, z, BLOCK_SIZE=rows_n),
            lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps), "bytes", 2 * 4 * rows_n**2)

    # conv2d as an implicit GEMM (tests/python/test_kernels_convolution.py), padding 1.
    batch, channels, size, filters = (1, 16, 28, 32) if quick else (4, 64, 56, 128)
    input, filter = torch.randn(batch, channels, size, size), torch.randn(filters, channels, 3, 3)
    output = torch.full((batch, filters, size, size), float("nan"))
    conv2d(input, filter, output, padding_h=1, padding_w=1)
    check("conv2d", output, F.conv2d(input.double(), filter.double(), padding=1), 1e-4, 1e-4 * 24)
    compare(f"conv2d {batch}x{channels}x{size}^2 * {filters}x3x3 / torch",
            lambda: conv2d(input, filter, output, padding_h=1, padding_w=1),
            lambda: F.conv2d(input, filter, padding=1), "flops",
            2 * batch * filters * size * size * channels * 9, runs=runs)

    # The same convolution by Winograd's F(2x2, 3x3) (tests/python/ops/corpus/conv2d_winograd.py):
    # the filter transform and the convolution in every call, blocks of 32 tiles, 32 channels and
    # 128 filters (chosen by hand for this CPU; the corpus's own make() tunes one candidate).
    winograd = ninetoothed.make(*conv2d_winograd.premake(
        padding_h=1, padding_w=1, block_size_t=32, block_size_c=32, block_size_k=128))
    bias, transformed = torch.zeros(filters), torch.empty(4, 4, filters, channels)

    def conv2d_by_winograd():  # into one buffer for U, as conv2d_winograd.conv2d() does
        winograd(input, conv2d_winograd.transform_weight(filter, out=transformed), bias, output)

    output.fill_(float("nan"))
    conv2d_by_winograd()
    check("conv2d (Winograd)", output, F.conv2d(input.double(), filter.double(), padding=1), 1e-4, 1e-4 * 24)
    compare(f"conv2d {batch}x{channels}x{size}^2 * {filters}x3x3, Winograd / torch", conv2d_by_winograd,
            lambda: F.conv2d(input, filter, padding=1), "flops",
            2 * batch * filters * size * size * channels * 9, runs=runs)

    # Flash attention (tests/python/test_kernels_attention.py) against torch's eager expression.
    batch, heads, seq, dim = (1, 2, 256, 64) if quick else (2, 8, 1024, 64)
    q, k, v = (torch.randn(batch, heads, seq, dim) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 1 / math.sqrt(dim)
    blocks = {"BLOCK_M": 64, "BLOCK_N": 32}
    attention(q, k, v, scale, False, o, **blocks)
    expected = torch.softmax(q.double() @ k.double().transpose(-1, -2) * scale, -1) @ v.double()
    check("attention", o, expected, 1e-5, 1e-5)
    compare(f"attention {batch}x{heads}x{seq}x{dim} f32 / torch eager",
            lambda: attention(q, k, v, scale, False, o, **blocks),
            lambda: torch.softmax(q @ k.transpose(-1, -2) * scale, -1) @ v, "flops",
            4 * batch * heads * seq * seq * dim, runs=runs)

    # The machine's limits, then the report.
    bandwidth = copy_bandwidth_gbs(quick)
    peak = fma_peak_gflops()
    device = current_device()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    print(f"CPU: {cpu}, {os.cpu_count()} cores; OpenCL device: {device['name']} "
          f"({device['platform']}, {device['compute_units']} compute units, "
          f"{4 * device['preferred_float_vector']}-byte vectors; small launches on "
          f"{device['small_launches_on']})")
    print(f"Python {platform.python_version()}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), numpy {np.__version__}" + (" [--quick]" if quick else ""))
    print(f"BLAS loaded by numpy: {', '.join(NUMPY_BLAS) or 'none found'}; by torch: "
          f"{', '.join(sorted(set(TORCH_BLAS) - set(NUMPY_BLAS))) or 'the same'}")
    print("OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s" % (os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
                                                        os.environ.get("OPENBLAS_L2_SIZE", "(unset)")))
    print(f"limits: copy bandwidth {bandwidth:.1f} GB/s (read + write); float32 FMA peak "
          + (f"{peak:.0f} GFLOP/s (C loop, cc -O3 -march=native -fopenmp)" if peak else "unknown (no cc)"))
    print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
    print(f"{'kernel / reference':44} {'ours ms':>9} {'theirs ms':>9} {'ours/th':>7} "
          f"{'ours':>11} {'theirs':>11} {'ours %':>6} {'th %':>6}")
    for label, ours, theirs, kind, amount in rows:
        line = f"{label:44} {ours * 1e3:>9.3f} {theirs * 1e3:>9.3f} {ours / theirs:>7.2f}"
        limit = {"bytes": bandwidth, "flops": peak}.get(kind)
        unit = {"bytes": "GB/s", "flops": "GF/s"}.get(kind, "")
        if kind:
            line += f" {amount / ours / 1e9:>6.1f} {unit} {amount / theirs / 1e9:>6.1f} {unit}"
        if limit:
            line += f" {100 * amount / ours / 1e9 / limit:>5.0f}% {100 * amount / theirs / 1e9 / limit:>5.0f}%"
        print(line)
    print(f"launch overhead: {rows[0][1] * 1e6:.1f} us per call (torch.add: {rows[0][2] * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
