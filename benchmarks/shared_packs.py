"""Shared packs on and off, in one process: benchmarks/kernels.py's matmuls, conv2d and attention.

    PYTHONPATH=python /usr/bin/python3 benchmarks/shared_packs.py     (ROUNDS=3 by default)

Dot operands that several programs read are packed once per launch on a CPU device
(codegen/c/shared_packs.h). Each kernel is tuned once (with them), then timed with its launches'
workspace and without (set_workspace_limit_for_testing(0): every program packs its own), the
two alternating, best of 5 calls a round; the report gives the best of the rounds.
"""

import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "python")]
import torch  # noqa: E402

from kernels import best_of  # noqa: E402 (benchmarks/kernels.py: a warm-up, then the best)
from ninetoothed._core import set_workspace_limit_for_testing  # noqa: E402
from test_kernels_attention import KERNEL as attention  # noqa: E402
from test_kernels_convolution import _conv2d_kernel  # noqa: E402
from tutorial_kernels import matmul_kernel as matmul  # noqa: E402

conv2d = _conv2d_kernel(True)


def main():
    torch.manual_seed(0)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a16, b16 = torch.randn(1024, 1024).half(), torch.randn(1024, 1024).half()
    x, w = torch.randn(4, 64, 56, 56), torch.randn(128, 64, 3, 3)
    q, k, v = (torch.randn(2, 8, 1024, 64) for _ in range(3))
    c, c16 = torch.empty(2048, 2048), torch.empty(1024, 1024).half()
    y, o = torch.empty(4, 128, 56, 56), torch.empty_like(q)
    blocks = {"BLOCK_M": 64, "BLOCK_N": 32}
    # name: (the call, its output, its float64 reference, tolerance)
    rows = {
        "matmul 2048^2 f32": (lambda: matmul(a, b, c), c, lambda: a.double() @ b.double(), 1e-4 * 45),
        "matmul 2048^2 f32, b = w.t()": (lambda: matmul(a, b.t(), c), c, lambda: a.double() @ b.double().t(), 1e-4 * 45),
        "matmul 1024^2 f16": (lambda: matmul(a16, b16, c16), c16, lambda: a16.double() @ b16.double(), 0.1),
        "conv2d 4x64x56^2 * 128x3x3": (
            lambda: conv2d(x, w, y, padding_h=1, padding_w=1), y,
            lambda: torch.nn.functional.conv2d(x.double(), w.double(), padding=1), 1e-4 * 24),
        "attention 2x8x1024x64": (
            lambda: attention(q, k, v, 0.125, False, o, **blocks), o,
            lambda: torch.softmax(q.double() @ k.double().transpose(-1, -2) * 0.125, -1) @ v.double(), 1e-5),
    }
    modes = (("shared", 1 << 30), ("own", 0))
    times = {name: {mode: [] for mode, _ in modes} for name in rows}
    for name, (call, output, reference, tolerance) in rows.items():
        expected = reference()
        for mode, limit in modes:  # tuned on the first call, with the workspace
            set_workspace_limit_for_testing(limit)
            output.fill_(float("nan"))
            call()
            torch.testing.assert_close(output.double(), expected, rtol=1e-3, atol=tolerance)
    for _ in range(int(os.environ.get("ROUNDS", 3))):
        for name, (call, *_) in rows.items():
            for mode, limit in modes:
                set_workspace_limit_for_testing(limit)
                times[name][mode].append(best_of(call, 5))
    set_workspace_limit_for_testing(1 << 30)
    print(f"{'kernel':32s} {'shared ms':>10s} {'own ms':>10s} {'shared/own':>11s}")
    for name, by_mode in times.items():
        shared, own = min(by_mode["shared"]) * 1e3, min(by_mode["own"]) * 1e3
        print(f"{name:32s} {shared:10.3f} {own:10.3f} {shared / own:11.3f}")


if __name__ == "__main__":
    main()
