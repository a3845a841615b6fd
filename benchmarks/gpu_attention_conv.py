"""Flash attention forward and conv2d on CUDA tensors, side by side: our kernels (CUDA C through
NVRTC), upstream NineToothed (Triton) and torch, in one run, on one GPU (issue 28's rows).

Run by scripts/gpu/run.sh (GPU_BENCHMARK=attention; GPU_ROWS=conv2d for those rows alone) on a
machine with an NVIDIA GPU. The kernels are upstream's own tests' (tests/test_attention.py: block_size(64, 128) x block_size(32, 64),
tuned; tests/test_conv2d.py: an implicit GEMM over the tutorial's matmul arrangement, gpu_cuda's, at 64 x 64 x 64
blocks as its premake gives them), written out below so that each library makes them with its own
symbols and language (gpu_cuda.made_by). Each row's result is checked against torch's (float32 math
on the 16-bit inputs) first. Times as in gpu_cuda.py: "device" from CUDA events around a loop of
calls; rates are 2 FLOPs a multiply-add (attention: 4 b h s² d, half of it where causal; conv2d:
2 n k p q c r s) and fractions of the data sheet's dense 16-bit peak.
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_cuda import best, made_by, matmul_arrangement, peak_fraction, upstream_kernels  # noqa: E402  (our package first on sys.path)

import ninetoothed  # noqa: E402
import ninetoothed.language  # noqa: E402

_NT = ninetoothed
ntl = ninetoothed.language


def attention_arrangement(q, k, v, is_causal, o):
    block_m = _NT.block_size(lower_bound=64, upper_bound=128)
    block_n = _NT.block_size(lower_bound=32, upper_bound=64)

    def arrange_q_or_o(input):
        arranged = input.tile((1, 1, block_m, -1))
        arranged.dtype = arranged.dtype.squeeze((0, 1))
        return arranged

    def arrange_k_or_v(input):
        arranged = input.tile((1, 1, block_n, -1)).tile((1, 1, -1, -1)).expand((-1, -1, q_arranged.shape[-2], -1))
        arranged.dtype = arranged.dtype.squeeze((0, 1, 3))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))
        return arranged

    q_arranged = arrange_q_or_o(q)
    return q_arranged, arrange_k_or_v(k), arrange_k_or_v(v), is_causal, arrange_q_or_o(o)


def attention_application(q, k, v, is_causal, o):
    q_loaded = (q * 1.44269504089).to(q.dtype)
    acc = ntl.zeros((q.shape[-2], q.shape[-1]), dtype=ntl.float32)
    l_i = ntl.full((q.shape[-2],), 1, dtype=ntl.float32)
    m_i = ntl.full((q.shape[-2],), float("-inf"), dtype=ntl.float32)
    for i in range(k.shape[0]):
        qk = ntl.dot(q_loaded, ntl.trans(k[i]))
        qk = ntl.where(k[i].offsets(-2) < k.source.shape[-2], qk, float("-inf"))
        if is_causal:
            mask = q.offsets(-2)[:, None] >= k[i].offsets(-2)[None, :]
            qk = ntl.where(mask, qk, float("-inf"))
        m_ij = ntl.maximum(m_i, ntl.max(qk, 1))
        p = ntl.exp2(qk - m_ij[:, None])
        l_ij = ntl.sum(p, 1)
        alpha = ntl.exp2(m_i - m_ij)
        acc = acc * alpha[:, None] + ntl.dot(p.to(v[i].dtype), v[i])
        m_i = m_ij
        l_i = l_i * alpha + l_ij
    acc /= l_i[:, None]
    o = acc  # noqa: F841


def matmul_application(lhs, rhs, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(lhs.shape[0]):
        accumulator += ntl.dot(lhs[k], rhs[k])
    output = accumulator.to(ntl.float16)  # noqa: F841


def conv2d_arrangement(input, filter, output):
    # Each output point's receptive field as a row: (N P Q) x (C R S), against the filter's (C R S) x K.
    input_tiled = input.tile((1, *filter.shape[1:]), strides=(-1, -1, 1, 1))
    input_squeezed = input_tiled.squeeze(1)
    input_squeezed.dtype = input_squeezed.dtype.squeeze(0)
    input_flattened = input_squeezed.ravel().flatten(end_dim=3).flatten(start_dim=1)
    filter_permuted = filter.flatten(start_dim=1).permute((1, 0))
    output_flattened = output.permute((0, 2, 3, 1)).flatten(end_dim=3)
    return matmul_arrangement(input_flattened, filter_permuted, output_flattened, 64, 64, 64)


def kernels(nt):
    """Attention and conv2d made by the ninetoothed module `nt`."""
    Tensor = nt.Tensor
    attention_tensors = tuple(
        Tensor(4, shape_options=(None, None, {"constexpr": True}, {"constexpr": True, "upper_bound": 128}))
        for _ in range(3)
    )
    attention_tensors += (Tensor(0, constexpr=True),)
    attention_tensors += (
        Tensor(4, shape_options=(None, None, {"constexpr": True}, {"constexpr": True, "upper_bound": 128})),
    )
    return {
        "attention": nt.make(attention_arrangement, attention_application, attention_tensors),
        "conv2d": nt.make(conv2d_arrangement, matmul_application, (Tensor(4), Tensor(4), Tensor(4))),
    }


def cases():
    """(name, kernel, arguments, reference, torch's own call, FLOPs)."""
    for head_dim in (64, 128):
        for causal in (False, True):
            b, h, s = 4, 32, 4096
            q, k, v = (torch.randn(b, h, s, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.empty_like(q)
            flops = 4 * b * h * s * s * head_dim // (2 if causal else 1)

            def reference(q=q, k=k, v=v, causal=causal):
                return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                      scale=1).half()

            def torch_call(q=q, k=k, v=v, causal=causal):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1)

            yield (f"attention 4x32x4096x{head_dim}{' causal' if causal else ''} f16", "attention",
                   (q, k, v, causal, o), reference, torch_call, flops)
    # ResNet's 3x3 layers (stride 1, no padding here: inputs 2 larger than the outputs), batch 32.
    for n, c, hw, k in ((32, 64, 56, 64), (32, 128, 28, 128), (32, 256, 14, 256)):
        x = torch.randn(n, c, hw + 2, hw + 2, device="cuda", dtype=torch.float16)
        w = torch.randn(k, c, 3, 3, device="cuda", dtype=torch.float16) / (3 * c**0.5)
        y = torch.empty(n, k, hw, hw, device="cuda", dtype=torch.float16)
        flops = 2 * n * k * hw * hw * c * 9
        yield (f"conv2d {n}x{c}x{hw + 2}^2 * {k}x3x3 f16", "conv2d", (x, w, y),
               lambda x=x, w=w: F.conv2d(x.float(), w.float()).half(), lambda x=x, w=w: F.conv2d(x, w), flops)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module = sys.modules[__name__]
    ours = made_by(ninetoothed, module, kernels)
    upstream = upstream_kernels(module, kernels)
    print(f"device: {torch.cuda.get_device_name()}; best of 3 loops; times per call in ms")
    header = ("| kernel | ours per call | ours device | upstream per call | upstream device | torch per call "
              "| upstream device / ours | ours rate; upstream's; torch's |")
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    chosen = []
    rows = os.environ.get("GPU_ROWS", "")  # e.g. GPU_ROWS=conv2d: only the rows whose names hold it
    for name, which, args, reference, torch_call, flops in cases():
        if rows not in name:
            continue
        expected = reference()
        output = args[-1]
        tolerance = 2e-2

        def call(kernel):
            return lambda: kernel(*args)

        kernel = ours[which]
        output.fill_(float("nan"))
        kernel(*args)  # builds and tunes
        torch.testing.assert_close(output, expected, rtol=tolerance, atol=tolerance)
        mine = best(call(kernel))
        theirs, ratio = ("", ""), ""
        if upstream is not None:
            try:
                output.fill_(float("nan"))
                upstream[which](*args)
                torch.testing.assert_close(output, expected, rtol=tolerance, atol=tolerance)
                upstream_time = best(call(upstream[which]))
                theirs = tuple(f"{t * 1e3:.4f}" for t in upstream_time)
                ratio = f"{upstream_time[1] / mine[1]:.2f}x"
            except Exception as error:  # noqa: BLE001 - the table says why the column is empty
                theirs = (f"failed: {type(error).__name__}: {str(error)[:80]}", "")
        torch_time = best(torch_call)
        rate = f"{flops / mine[1] / 1e12:.1f} TFLOP/s" + peak_fraction("f16", flops / mine[1] / 1e12)
        if theirs[1]:
            rate += f"; {flops / (float(theirs[1]) * 1e-3) / 1e12:.1f}"
        rate += f"; {flops / torch_time[1] / 1e12:.1f}"
        report = kernel.tuning_report()
        if report:
            chosen.append(f"{name}: {report[-1]['chosen']}")
        print(f"| {name} | {mine[0] * 1e3:.4f} | {mine[1] * 1e3:.4f} | {theirs[0]} | {theirs[1]} | "
              f"{torch_time[0] * 1e3:.4f} | {ratio} | {rate} |", flush=True)
    for line in chosen:
        print("chosen:", line)


if __name__ == "__main__":
    main()
