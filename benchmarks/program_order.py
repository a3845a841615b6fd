"""Program order for a 2048^2 float32 matmul: the grid row-major (as written) vs column-major (permuted).

    PYTHONPATH=python /usr/bin/python3 benchmarks/program_order.py

The bound on what a grouped program order (Triton's GROUP_SIZE_M) could gain: the two extreme
orders, each streaming one operand once per row (column) of programs. Both results are checked
against float64 first; the same configuration is pinned for both; runs alternate.
"""

import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from tutorial_kernels import BLOCK_SIZE_K, BLOCK_SIZE_M, BLOCK_SIZE_N  # noqa: E402
from tutorial_kernels import matmul_application, matmul_arrangement, matmul_kernel  # noqa: E402


def column_major_arrangement(input, other, output):
    arranged = matmul_arrangement(input, other, output)
    return tuple(tensor.permute((1, 0)) for tensor in arranged)


def main():
    column_major = ninetoothed.make(column_major_arrangement, matmul_application, (Tensor(2),) * 3)
    kernels = {"row-major": matmul_kernel, "column-major": column_major}
    n = 2048
    a, b = torch.randn(n, n), torch.randn(n, n)
    expected = a.double() @ b.double()
    c = torch.empty(n, n)
    for kernel in kernels.values():
        kernel.pin({BLOCK_SIZE_M.name: 128, BLOCK_SIZE_N.name: 128, BLOCK_SIZE_K.name: 32})
        c.fill_(float("nan"))
        kernel(a, b, c)
        torch.testing.assert_close(c.double(), expected, rtol=1e-4, atol=2e-6 * n)
    times = {name: [] for name in kernels}
    for _ in range(4):
        for name, kernel in kernels.items():
            start = time.perf_counter()
            kernel(a, b, c)
            times[name].append(time.perf_counter() - start)
    for name, t in times.items():
        print(f"{name}: best {min(t) * 1e3:.1f} ms, all {[round(x * 1e3) for x in t]}")


if __name__ == "__main__":
    main()
