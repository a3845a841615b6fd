"""The GPU table of issue 12: our kernels on an OpenCL GPU beside torch (and upstream NineToothed).

Run by scripts/gpu/run.sh on a machine with an NVIDIA GPU (NINETOOTHED_DEVICE=NVIDIA). Our kernels
are the tutorial's (examples/tutorial_kernels.py) on host tensors: "per call" is the wall time of
a call (argument handling, copies over PCIe both ways, the kernel), "device" the kernel alone
(kernel.last_launch_seconds, from OpenCL profiling). The reference is torch on CUDA tensors (TF32 off),
timed with CUDA events. Every result is checked against torch first.
Effective rates are from the device time: bytes read + written once, or 2mnk FLOPs.
"""

import os
import statistics
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "python")]

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from tutorial_kernels import add_kernel, matmul_application, matmul_arrangement, matmul_kernel, softmax_kernel  # noqa: E402

# The tutorial's matmul on programs of 8 warps (256 work-items) instead of the default 4.
matmul_8_warps = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)),
                                  num_warps=8)

REPEATS = int(os.environ.get("GPU_BENCH_REPEATS", "3"))


def cases():
    n = 1 << 24
    x, y = torch.randn(n), torch.randn(n)
    yield ("add 16M f32", add_kernel, (x, y, torch.empty(n)), {}, lambda: x + y, 3 * 4 * n, None)
    rows = torch.randn(4096, 4096)
    yield ("softmax 4096^2 f32", softmax_kernel, (rows, torch.empty_like(rows)), {"BLOCK_SIZE": 4096},
           lambda: torch.softmax(rows, dim=-1), 2 * 4 * rows.numel(), None)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    yield ("matmul 2048^2 f32", matmul_kernel, (a, b, torch.empty(2048, 2048)), {}, lambda: a @ b, None,
           2 * 2048**3)
    a16, b16 = torch.randn(4096, 4096).half(), torch.randn(4096, 4096).half()
    yield ("matmul 4096^2 f16", matmul_kernel, (a16, b16, torch.empty(4096, 4096).half()), {},
           lambda: (a16.float() @ b16.float()).half(), None, 2 * 4096**3)
    a_bf, b_bf = torch.randn(4096, 4096).bfloat16(), torch.randn(4096, 4096).bfloat16()
    yield ("matmul 4096^2 bf16", matmul_kernel, (a_bf, b_bf, torch.empty(4096, 4096).bfloat16()), {},
           lambda: (a_bf.float() @ b_bf.float()).bfloat16(), None, 2 * 4096**3)
    yield ("matmul 2048^2 f32 (8 warps)", matmul_8_warps, (a, b, torch.empty(2048, 2048)), {}, lambda: a @ b, None,
           2 * 2048**3)
    yield ("matmul 4096^2 f16 (8 warps)", matmul_8_warps, (a16, b16, torch.empty(4096, 4096).half()), {},
           lambda: (a16.float() @ b16.float()).half(), None, 2 * 4096**3)


def ours(kernel, args, keywords):
    kernel(*args, **keywords)  # warm-up: builds and tunes
    walls, devices = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        kernel(*args, **keywords)
        walls.append(time.perf_counter() - start)
        devices.append(kernel.last_launch_seconds)
    for record in kernel.tuning_report()[-1:]:  # what tuning chose, and the candidates' device times
        times = ", ".join(f"{list(c.values())}: {t * 1e3:.3f} ms" for c, t in record["candidates"])
        print(f"  tuned {record['chosen']} ({times or 'from the disk cache'})", file=sys.stderr)
    return min(walls), min(devices)


def cuda_time(function, repeats=20):
    function()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        function()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def torch_references():
    """torch on CUDA tensors for the same operations (None without CUDA)."""
    if not torch.cuda.is_available():
        return {}
    d = "cuda"
    x, y = torch.randn(1 << 24, device=d), torch.randn(1 << 24, device=d)
    z = torch.empty_like(x)
    rows = torch.randn(4096, 4096, device=d)
    a, b = torch.randn(2048, 2048, device=d), torch.randn(2048, 2048, device=d)
    c = torch.empty(2048, 2048, device=d)
    a16, b16 = torch.randn(4096, 4096, device=d).half(), torch.randn(4096, 4096, device=d).half()
    c16 = torch.empty(4096, 4096, device=d).half()
    a_bf, b_bf, c_bf = a16.bfloat16(), b16.bfloat16(), c16.bfloat16()
    torch.backends.cuda.matmul.allow_tf32 = False
    return {
        "add 16M f32": cuda_time(lambda: torch.add(x, y, out=z)),
        "softmax 4096^2 f32": cuda_time(lambda: torch.softmax(rows, dim=-1)),
        "matmul 2048^2 f32": cuda_time(lambda: torch.matmul(a, b, out=c)),
        "matmul 4096^2 f16": cuda_time(lambda: torch.matmul(a16, b16, out=c16)),
        "matmul 4096^2 bf16": cuda_time(lambda: torch.matmul(a_bf, b_bf, out=c_bf)),
    }


def main():
    print(f"device: {ninetoothed.current_device()}")
    references = torch_references()
    print(f"{'kernel':<28}{'per call ms':>12}{'device ms':>11}{'effective':>16}{'torch ms':>10}{'device/torch':>14}")
    for name, kernel, args, keywords, expected, bytes_moved, flops in cases():
        output = args[-1]
        output.fill_(float("nan"))
        kernel(*args, **keywords)
        reference = expected()
        tolerance = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(output.dtype, 1e-3)
        if not torch.allclose(output.float(), reference.float(), rtol=tolerance, atol=tolerance):
            print(f"{name}: WRONG RESULT")
            continue
        wall, device = ours(kernel, args, keywords)
        rate = f"{bytes_moved / device / 1e12:.3f} TB/s" if bytes_moved else f"{flops / device / 1e12:.2f} TFLOP/s"
        theirs = references.get(name.split(" (")[0])
        ratio = f"{device / theirs:.0f}x" if theirs else "-"
        print(f"{name:<28}{wall * 1e3:>12.2f}{device * 1e3:>11.3f}{rate:>16}"
              f"{theirs * 1e3 if theirs else float('nan'):>10.3f}{ratio:>14}")


if __name__ == "__main__":
    main()
