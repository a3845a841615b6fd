"""CUDA tensors, side by side: our kernels (CUDA C through NVRTC), upstream NineToothed (Triton) and
torch, in one run, on one GPU.

Run by scripts/gpu/run.sh (GPU_BENCHMARK=cuda) on a machine with an NVIDIA GPU. Every kernel is the
tutorial's (examples/tutorial_kernels.py), written out below so that it is made by our
`ninetoothed.make` and by upstream's where its `src/` is importable (UPSTREAM_SRC, default
.upstream/src), each with its own symbols. Each row's result is checked against torch first. "per call" is the host's wall time of one call as a
user makes it (arguments, launch), over a loop of calls with the stream synchronised only at its end;
"device" is the GPU time per call from CUDA events around such a loop. Rates are from the device
time: bytes read and written once, or 2mnk FLOPs.
"""

import importlib
import os
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "python")]

import ninetoothed  # noqa: E402
import ninetoothed.language  # noqa: E402

LOOP = int(os.environ.get("GPU_BENCH_LOOP", "50"))

# The tutorial's kernels (examples/tutorial_kernels.py), written so that each library makes them with its
# own symbols and language: _NT and ntl are the ninetoothed module whose make() is running and its
# language (ours, or upstream's while its kernels are made: it inlines what `ntl` names).
_NT = ninetoothed
ntl = ninetoothed.language


def add_application(x, y, z):
    z = x + y  # noqa: F841


def softmax_application(input, output):
    row_minus_max = input - ntl.max(input)
    numerator = ntl.exp(row_minus_max)
    denominator = ntl.sum(numerator)
    output = numerator / denominator  # noqa: F841


def matmul_application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator  # noqa: F841


def add_arrangement(x, y, z):
    block = _NT.block_size()
    return x.tile((block,)), y.tile((block,)), z.tile((block,))


def softmax_arrangement(input, output):
    block = _NT.Symbol("BLOCK_SIZE", constexpr=True)
    return input.tile((1, block)), output.tile((1, block))


def matmul_arrangement(a, b, c, bm=None, bn=None, bk=None):
    """The tutorial's; block sizes given (as upstream's conv2d gives them) or tuned."""
    bm, bn, bk = (_NT.block_size() if size is None else size for size in (bm, bn, bk))
    c_tiled = c.tile((bm, bn))
    a_tiled = a.tile((bm, bk)).tile((1, -1)).expand((-1, c_tiled.shape[1]))
    a_tiled.dtype = a_tiled.dtype.squeeze(0)
    b_tiled = b.tile((bk, bn)).tile((-1, 1)).expand((c_tiled.shape[0], -1))
    b_tiled.dtype = b_tiled.dtype.squeeze(1)
    return a_tiled, b_tiled, c_tiled


def made_by(nt, module, build):
    """build(nt)'s kernels, with `module`'s _NT and ntl (what its applications and arrangements name)
    set to the ninetoothed module `nt` and its language while they are made."""
    module._NT, module.ntl = nt, importlib.import_module(nt.__name__ + ".language")
    try:
        return build(nt)
    finally:
        module._NT, module.ntl = ninetoothed, ninetoothed.language


def tutorial_kernels(nt):
    """The three kernels made by the ninetoothed module `nt`."""
    Tensor = nt.Tensor
    return {
        "add": nt.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1))),
        "softmax": nt.make(softmax_arrangement, softmax_application, (Tensor(2, other=float("-inf")), Tensor(2))),
        "matmul": nt.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2))),
    }


def upstream_kernels(module=None, build=tutorial_kernels):
    """build(upstream's ninetoothed) (default: the tutorial's kernels, made with this module's
    names), or None where upstream NineToothed cannot be imported."""
    src = os.environ.get("UPSTREAM_SRC", os.path.join(ROOT, ".upstream", "src"))
    if not os.path.isdir(src):
        return None
    saved = {name: loaded for name, loaded in sys.modules.items() if name.split(".")[0] == "ninetoothed"}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, src)
    try:
        made = made_by(importlib.import_module("ninetoothed"), module or sys.modules[__name__], build)
    except Exception as error:  # noqa: BLE001 - the table says why the column is empty
        print(f"upstream NineToothed not usable: {error!r}")
        made = None
    finally:
        sys.path.remove(src)
        for name in [n for n in sys.modules if n.split(".")[0] == "ninetoothed"]:
            del sys.modules[name]
        sys.modules.update(saved)
    return made


def timed(call):
    """(host seconds per call, device seconds per call) over LOOP calls."""
    call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin = time.perf_counter()
    start.record()
    for _ in range(LOOP):
        call()
    stop.record()
    host = (time.perf_counter() - begin) / LOOP
    torch.cuda.synchronize()
    return host, start.elapsed_time(stop) * 1e-3 / LOOP


def best(call, repeats=3):
    runs = [timed(call) for _ in range(repeats)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def cases():
    """(name, kernel, arguments, constexpr values, reference, torch's own call, bytes, FLOPs)."""
    n = 1 << 24
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    yield "add 16M f32", "add", (x, y, torch.empty_like(x)), {}, lambda: x + y, None, 3 * 4 * n, None
    x3, y3 = torch.randn(3, device="cuda"), torch.randn(3, device="cuda")
    yield "add 3 f32 (launch)", "add", (x3, y3, torch.empty_like(x3)), {}, lambda: x3 + y3, None, None, None
    rows = torch.randn(4096, 4096, device="cuda")
    yield ("softmax 4096^2 f32", "softmax", (rows, torch.empty_like(rows)), {"BLOCK_SIZE": 4096},
           lambda: torch.softmax(rows, dim=-1), None, 2 * 4 * rows.numel(), None)
    # float32 operands: TF32 by default here as in Triton; torch's own call with TF32 allowed.
    for size in (2048, 4096):
        a, b = torch.randn(size, size, device="cuda"), torch.randn(size, size, device="cuda")
        yield (f"matmul {size}^2 f32 (TF32)", "matmul", (a, b, torch.empty_like(a)), {},
               lambda a=a, b=b: a @ b, lambda a=a, b=b: tf32_matmul(a, b), None, 2 * size**3)
    for size in (4096, 8192):
        for dtype, short in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            p, q = torch.randn(size, size, device="cuda"), torch.randn(size, size, device="cuda")
            p, q = p.to(dtype), q.to(dtype)
            # Checked against float32 products (the kernel's accumulator), timed against torch's own.
            yield (f"matmul {size}^2 {short}", "matmul", (p, q, torch.empty_like(p)), {},
                   lambda p=p, q=q, dtype=dtype: (p.float() @ q.float()).to(dtype),
                   lambda p=p, q=q: p @ q, None, 2 * size**3)


def tf32_matmul(a, b):
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return a @ b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


# Dense peaks of the device, for the rates' fractions (NVIDIA's H100/H200 SXM data sheets).
PEAK_TFLOPS = {"H100": {"f16": 989, "bf16": 989, "(TF32)": 494}, "H200": {"f16": 989, "bf16": 989, "(TF32)": 494}}


def peak_fraction(name, flops_rate):
    device = torch.cuda.get_device_name()
    for model, peaks in PEAK_TFLOPS.items():
        if model in device:
            dtype = name.split()[-1]
            if dtype in peaks:
                return f" ({flops_rate / peaks[dtype] * 100:.0f}% of {peaks[dtype]})"
    return ""


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    ours = made_by(ninetoothed, sys.modules[__name__], tutorial_kernels)
    upstream = upstream_kernels()
    print(f"device: {torch.cuda.get_device_name()}; {LOOP} calls a loop, best of 3; times per call in ms")
    header = "| kernel | ours per call | ours device | upstream per call | upstream device | torch per call | ours rate |"
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    chosen = []
    for name, which, args, keywords, reference, torch_call, bytes_moved, flops in cases():
        kernel = ours[which]
        kernel(*args, **keywords)  # builds and tunes
        expected = reference()
        tf32 = "TF32" in name  # checked at TF32's precision, against float products
        tolerance = 2e-2 if args[0].dtype in (torch.float16, torch.bfloat16) or tf32 else 1e-3
        torch.testing.assert_close(args[-1], expected, rtol=tolerance, atol=tolerance * (10 if tf32 else 1))
        mine = best(lambda: kernel(*args, **keywords))
        theirs = ("", "")
        if upstream is not None:
            try:
                upstream[which](*args, **keywords)
                torch.testing.assert_close(args[-1], expected, rtol=tolerance, atol=tolerance * 10)
                theirs = tuple(f"{t * 1e3:.4f}" for t in best(lambda: upstream[which](*args, **keywords)))
            except Exception as error:  # noqa: BLE001
                theirs = (f"failed: {type(error).__name__}", "")
        torch_time = best(torch_call or reference)
        rate = ""
        if bytes_moved:
            rate = f"{bytes_moved / mine[1] / 1e12:.2f} TB/s"
        elif flops:
            rate = f"{flops / mine[1] / 1e12:.1f} TFLOP/s" + peak_fraction(name, flops / mine[1] / 1e12)
        if flops and theirs[1] and not theirs[1].startswith("failed"):
            rate += f"; upstream {flops / (float(theirs[1]) * 1e-3) / 1e12:.1f}"
        if flops and torch_time[1]:
            rate += f"; torch {flops / torch_time[1] / 1e12:.1f}"
        report = kernel.tuning_report()
        if report:
            chosen.append(f"{name}: {report[-1]['chosen'] if isinstance(report[-1], dict) else report[-1]}")
        print(f"| {name} | {mine[0] * 1e3:.4f} | {mine[1] * 1e3:.4f} | {theirs[0]} | {theirs[1]} | "
              f"{torch_time[0] * 1e3:.4f} | {rate} |")
    for line in chosen:
        print("chosen:", line)


if __name__ == "__main__":
    main()
