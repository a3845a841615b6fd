"""The tutorial's matmul on CUDA tensors, configuration by configuration: block sizes, num_warps and
num_stages pinned (Kernel.pin), each timed on the device. What tuning could choose from, and how far
each choice is from torch (cuBLAS) in the same run.

Usage (on a machine with an NVIDIA GPU): python3 benchmarks/gpu_matmul_configs.py [size] [dtype]
"""

import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.dirname(os.path.abspath(__file__))]

import ninetoothed  # noqa: E402
from gpu_cuda import best, tutorial_kernels  # noqa: E402

CONFIGS = [  # (BM, BN, BK, num_warps, num_stages); on Hopper, 8 warps keep NT_STAGES + 1 buffers
    (128, 128, 32, 4, 3),
    (128, 128, 64, 4, 2),
    (128, 128, 64, 4, 3),
    (128, 128, 64, 4, 4),
    (128, 128, 32, 8, 3),
    (128, 128, 64, 8, 3),
    (128, 128, 64, 8, 4),
    (128, 256, 32, 8, 3),
    (128, 256, 64, 8, 2),
    (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3),
    (256, 128, 32, 8, 4),
    (64, 128, 64, 4, 4),
    (128, 64, 64, 4, 4),
]


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float16
    kernel = tutorial_kernels(ninetoothed)["matmul"]
    a, b = torch.randn(size, size, device="cuda").to(dtype), torch.randn(size, size, device="cuda").to(dtype)
    c = torch.empty_like(a)
    expected = (a.float() @ b.float()).to(dtype)
    flops = 2 * size**3
    torch_device = best(lambda: a @ b)[1]
    print(f"{torch.cuda.get_device_name()}, matmul {size}^2 {dtype}: torch {flops / torch_device / 1e12:.1f} TFLOP/s")
    print("| BM | BN | BK | warps | stages | ms | TFLOP/s | of torch |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for bm, bn, bk, warps, stages in CONFIGS:
        kernel.pin({"ninetoothed_BLOCK_SIZE_1": bm, "ninetoothed_BLOCK_SIZE_2": bn, "ninetoothed_BLOCK_SIZE_3": bk,
                    "num_warps": warps, "num_stages": stages})
        try:
            kernel(a, b, c)
            torch.testing.assert_close(c, expected, rtol=2e-2, atol=2e-2)
            seconds = best(lambda: kernel(a, b, c))[1]
        except Exception as error:  # noqa: BLE001 - the row says what failed
            print(f"| {bm} | {bn} | {bk} | {warps} | {stages} | failed: {type(error).__name__}: {error} | | |")
            continue
        rate = flops / seconds / 1e12
        print(f"| {bm} | {bn} | {bk} | {warps} | {stages} | {seconds * 1e3:.4f} | {rate:.1f} | "
              f"{torch_device / seconds:.2f} |")


if __name__ == "__main__":
    main()
