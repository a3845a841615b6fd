"""Run with NINETOOTHED_PROGRAM_LAYOUT=work-group: devices whose local memory is small, as NVIDIA's
OpenCL gives 48 KiB (_core.set_local_memory_for_testing), where issue 28 found the corpus's attention
failing at enqueue (its tuned blocks fit no work-group, so each program ran on one work-item holding
them in a few hundred KB of private memory). Checks, with fresh data against float32 references:

- tuning (the corpus's max_num_configs=1) takes a configuration whose blocks fit a work-group;
- a program whose local memory grows with its work-items runs on fewer of them (128, then 64 and 32);
- blocks that fit no work-group still run, one work-item a program, as a CPU can.

Prints the work-items of each case, then 'ok'."""

import sys

import _paths  # noqa: F401  (sys.path: the package, the examples, the tests)

import torch  # noqa: E402

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from tutorial_kernels import softmax_application, softmax_arrangement  # noqa: E402

sys.path.insert(0, str(_paths.ROOT / "tests" / "python" / "ops"))
from corpus import attention  # noqa: E402
from test_ops_attention import TOLERANCES, reference  # noqa: E402

NVIDIA_LOCAL_MEMORY = 48 * 1024


def work_items(kernel):
    return kernel._binder.last.last_work_items


def check_attention_tunes_to_what_runs():
    # With a work-group's 48 KiB, some configurations fit (head dim 64 since the accumulator stays
    # in registers: its blocks of (BLOCK_M, head dim of q) and (BLOCK_M, head dim of v) share a
    # layout), and tuning takes one of them. With 12 KiB none does (the blocks are at least
    # 32 x 32, and held as floats), and tuning takes one whose program needs at most 64 KiB on one
    # work-item (the 64 x 128 blocks it took before needed 217 KB).
    for dtype, length, head_dim, room in ((torch.float32, 63, 16, NVIDIA_LOCAL_MEMORY),
                                          (torch.float16, 77, 16, NVIDIA_LOCAL_MEMORY),
                                          (torch.float32, 63, 64, NVIDIA_LOCAL_MEMORY),
                                          (torch.float16, 77, 64, NVIDIA_LOCAL_MEMORY),
                                          (torch.float32, 63, 64, 12 * 1024), (torch.float16, 77, 64, 12 * 1024)):
        ninetoothed._core.set_local_memory_for_testing(room)
        attention._cached_make.cache_clear()  # a kernel of its own: its tuning report is this case's
        kernel = attention._cached_make(attention.premake, emb_dim=None)
        query, key, value = (torch.randn(2, 3, length, head_dim).to(dtype) for _ in range(3))
        out = torch.full(query.shape, float("nan"), dtype=dtype)
        attention.scaled_dot_product_attention(query, key, value, is_causal=True, out=out)
        expected = reference(query, key, value, None, True, None)
        torch.testing.assert_close(out.float(), expected, **TOLERANCES[dtype])
        chosen = kernel.tuning_report()[-1]["chosen"]
        block_m, block_n = (chosen[name] for name in sorted(chosen))
        print("attention", dtype, head_dim, room, chosen, work_items(kernel), flush=True)
        if room == NVIDIA_LOCAL_MEMORY:
            assert work_items(kernel) >= 32, (dtype, chosen, work_items(kernel))
        else:
            assert work_items(kernel) == 1 and block_m * block_n <= 32 * 64, (dtype, chosen, work_items(kernel))


def check_softmax_runs_on_fewer_work_items():
    # Its local memory is 8 bytes a work-item (the row's float partials, of a max and a sum) and 8 more.
    x = torch.randn(37, 1000)
    expected = torch.softmax(x.double(), dim=-1).float()
    for room, items in ((1032, 128), (1000, 64), (300, 32), (200, 1)):
        ninetoothed._core.set_local_memory_for_testing(room)
        tensors = (Tensor(2, other=float("-inf")), Tensor(2))
        kernel = ninetoothed.make(softmax_arrangement, softmax_application, tensors, num_warps=4)
        y = torch.full_like(x, float("nan"))
        kernel(x, y, BLOCK_SIZE=1024)
        torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
        assert work_items(kernel) == min(items, ninetoothed._core.program_work_items(4)), (room, work_items(kernel))
        print("softmax", room, work_items(kernel))


check_attention_tunes_to_what_runs()
check_softmax_runs_on_fewer_work_items()
ninetoothed._core.set_local_memory_for_testing(0)
print("ok")
