"""Run with NINETOOTHED_PROGRAM_LAYOUT=work-group: dots of float16 and bfloat16 in the mma tile layout
(lower/program_layout.h), on tensor cores where the device has them (NVIDIA, compute capability 8.0+)
and with the layout forced elsewhere (_core.set_mma_layout_for_testing). Matmuls of odd sizes over block
shapes whose layouts are and are not the mma one, on 1 to 8 warps, and flash attention (a row reduction
and a second dot over the first's result) give the float64 references' results; prints whether tensor
cores ran, then 'ok'."""

import math

import _paths  # noqa: F401  (sys.path: the package, the examples, the tests)

import torch  # noqa: E402

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from test_device_memory import matmul_arrangement  # noqa: E402  (block sizes given: no tuning)
from test_kernels_attention import KERNEL as attention, attention_reference  # noqa: E402
from tutorial_kernels import matmul_application  # noqa: E402

tensor_cores = ninetoothed._core.tensor_cores()
if not tensor_cores:
    ninetoothed._core.set_mma_layout_for_testing(True)


def check_matmuls():
    # On 4 warps (64, 64, 32) is a 2 x 2 grid of warps and (64, 256, 32) a 1 x 4 one; (64, 64, 24)
    # multiplies in float in the mma layout (k not a multiple of 16); (48, 40, 16) does not divide:
    # the cyclic layout. On 8 warps (128, 128, 32) is 2 x 4; on 1, (32, 64, 16) is one warp's.
    cases = {1: ((32, 64, 16), (16, 16, 16)), 4: ((64, 64, 32), (64, 256, 32), (64, 64, 24), (48, 40, 16)),
             8: ((128, 128, 32), (64, 64, 32))}
    for num_warps, blocks in cases.items():
        matmul = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)),
                                  num_warps=num_warps)
        for block_m, block_n, block_k in blocks:
            for dtype in (torch.float16, torch.bfloat16) + ((torch.float32,) if num_warps == 4 else ()):
                m, k, n = 131, 77, 259  # partial blocks in every dimension
                a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
                c = torch.full((m, n), float("nan"), dtype=dtype)
                matmul(a, b, c, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
                # Exact products summed in float, then rounded once to the output's type.
                expected = (a.double() @ b.double()).to(dtype).double()
                ulp = {torch.float16: 2**-10, torch.bfloat16: 2**-7, torch.float32: 2**-22}[dtype]
                torch.testing.assert_close(c.double(), expected, rtol=ulp, atol=1e-4,
                                           msg=lambda text: f"{num_warps} warps, {block_m, block_n, block_k}, "
                                                            f"{dtype}: {text}")


def check_attention():
    # Each dtype and each mask once (the work-group pass runs every combination outside the mma
    # layout): these are the script's slowest builds, about 90 s each for PoCL.
    for dtype, seq_len, is_causal in ((torch.float16, 77, False), (torch.bfloat16, 200, True)):
        q, k, v = (torch.randn(1, 2, seq_len, 64).to(dtype) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        scale = 1 / math.sqrt(64)
        attention(q, k, v, scale, is_causal, o, BLOCK_M=64, BLOCK_N=32)
        expected = attention_reference(q, k, v, scale, is_causal)
        tolerance = 3e-3 if dtype == torch.float16 else 2e-2
        torch.testing.assert_close(o.double(), expected, rtol=tolerance, atol=tolerance,
                                   msg=lambda text: f"{dtype}, {seq_len}, causal {is_causal}: {text}")


check_matmuls()
check_attention()
print("tensor cores" if tensor_cores else "mma layout")
print("ok")
