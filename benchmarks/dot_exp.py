"""Benchmark: the register-blocked dot (matmul) and the exp of softmax, against BLAS and torch.

    PYTHONPATH=python /usr/bin/python3 benchmarks/dot_exp.py [--quick]

To compare with OpenBLAS, put Debian's libopenblas0-pthread in front of the
reference BLAS that numpy loads, for this command only:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \
        PYTHONPATH=python /usr/bin/python3 benchmarks/dot_exp.py

Rows: the tutorial's matmul (auto-tuned block sizes) in float32 and float16
against numpy's `@` (float32 copies for float16), the tutorial's softmax
against torch's softmax into a preallocated output, and flash attention (two
dots and exp2 per key block; tests/python/test_kernels_attention.py's kernel)
against torch's softmax(q k^T * scale) v. Every result is checked
first (outputs poisoned with NaN); times are the best of several runs after a
warm-up (which is where the matmul is tuned).
"""

import argparse
import math
import os
import sys
import time

import numpy as np
import torch


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "python")]
from test_kernels_attention import KERNEL as attention  # noqa: E402
from tutorial_kernels import matmul_kernel as matmul  # noqa: E402
from tutorial_kernels import softmax_kernel as softmax  # noqa: E402


def best_of(function, repeats):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def check(name, actual, expected, rtol, atol):
    actual, expected = actual.double(), expected.double()
    if not torch.allclose(actual, expected, rtol=rtol, atol=atol):
        error = (actual - expected).abs().nan_to_num(float("inf")).max().item()
        raise AssertionError(f"{name}: result disagrees with the reference (max abs error {error:.3g})")


def blas_libraries():
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.rsplit("/", 1)[-1]}
    return sorted(os.path.realpath(path) for path in paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    quick = parser.parse_args().quick
    torch.set_num_threads(2)
    torch.manual_seed(0)
    rows = []

    def row(label, ours, theirs, flops=None, runs=5):
        rows.append((label, best_of(ours, runs), best_of(theirs, runs), flops))

    for n, dtype in ((512, torch.float32), (256, torch.float16)) if quick else (
            (2048, torch.float32), (1024, torch.float16)):
        a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
        a_np, b_np = a.float().numpy(), b.float().numpy()
        c = torch.full((n, n), float("nan"), dtype=dtype)
        matmul(a, b, c)
        tolerance = dict(rtol=2e-3, atol=1e-3 * n**0.5) if dtype == torch.float16 else dict(rtol=1e-4, atol=2e-6 * n)
        check(f"matmul {n}", c, a.double() @ b.double(), **tolerance)
        name = "f16" if dtype == torch.float16 else "f32"
        row(f"matmul {n} {name} / numpy @ (f32)", lambda: matmul(a, b, c), lambda: a_np @ b_np, 2 * n**3, 3)

    n = 1024 if quick else 4096
    x = torch.randn(n, n) * 3
    z, out = torch.full_like(x, float("nan")), torch.empty_like(x)
    softmax(x, z, BLOCK_SIZE=n)
    check("softmax", z, torch.softmax(x.double(), dim=-1), rtol=1e-4, atol=1e-7)
    row(f"softmax {n}x{n} f32 / torch into preallocated out", lambda: softmax(x, z, BLOCK_SIZE=n),
        lambda: torch.ops.aten._softmax.out(x, -1, False, out=out), runs=10)

    batch, heads, seq_len, head_dim = (1, 2, 256, 64) if quick else (2, 8, 1024, 64)
    q, k, v = (torch.randn(batch, heads, seq_len, head_dim) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 1 / math.sqrt(head_dim)
    attention(q, k, v, scale, False, o, BLOCK_M=64, BLOCK_N=32)
    expected = torch.softmax(q.double() @ k.double().transpose(-1, -2) * scale, dim=-1) @ v.double()
    check("attention", o, expected, rtol=1e-4, atol=1e-5)
    flops = 4 * batch * heads * seq_len * seq_len * head_dim
    row(f"attention {batch}x{heads}x{seq_len}x{head_dim} f32 / torch softmax(q k^T) v",
        lambda: attention(q, k, v, scale, False, o, BLOCK_M=64, BLOCK_N=32),
        lambda: torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1) @ v, flops)

    print("BLAS loaded:", ", ".join(blas_libraries()) or "none")
    print(f"{'kernel / reference':<56}{'ours ms':>9}{'theirs ms':>10}{'ours/th':>9}{'ours GF/s':>10}{'th GF/s':>9}")
    for label, ours, theirs, flops in rows:
        line = f"{label:<56}{ours * 1e3:>9.3f}{theirs * 1e3:>10.3f}{ours / theirs:>9.2f}"
        if flops:
            line += f"{flops / ours / 1e9:>10.1f}{flops / theirs / 1e9:>9.1f}"
        print(line)


if __name__ == "__main__":
    main()
