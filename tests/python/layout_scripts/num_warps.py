"""Run with NINETOOTHED_PROGRAM_LAYOUT=work-group: kernels made with num_warps = 1, 2, 3, 8 run their
programs on num_warps x 32 work-items (3 rounds down to 2, a power of two), and element-wise,
reduction, dot and shared-value kernels give the float64 references' results, float16 and partial
blocks included; prints the work-items of each, then 'ok'."""


import _paths  # noqa: F401  (sys.path: the package, the examples, the tests)

import torch  # noqa: E402

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from test_program_layout import (  # noqa: E402
    square_blocks_arrangement,
    transpose_blocks_application,
    transpose_blocks_reference,
)
from test_device_memory import add_arrangement, matmul_arrangement  # noqa: E402  (block sizes given: no tuning)
from tutorial_kernels import add_arrangement as tutorial_add_arrangement  # noqa: E402  (tuned)
from tutorial_kernels import add_application, matmul_application, softmax_arrangement, softmax_application  # noqa: E402


def main():
    for num_warps in (1, 2, 3, 8):
        add = ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)), num_warps=num_warps)
        softmax = ninetoothed.make(softmax_arrangement, softmax_application,
                                   (Tensor(2, other=float("-inf")), Tensor(2)), num_warps=num_warps)
        matmul = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)),
                                  num_warps=num_warps)
        transpose = ninetoothed.make(square_blocks_arrangement, transpose_blocks_application,
                                     (Tensor(2), Tensor(2)), num_warps=num_warps)
        used = set()
        for dtype in (torch.float32, torch.float16):
            x, y = torch.randn(1001).to(dtype), torch.randn(1001).to(dtype)
            z = torch.full_like(x, float("nan"))
            add(x, y, z, BLOCK=256)
            assert torch.equal(z, x + y), (num_warps, dtype)
            used.add(add._binder.last.last_work_items)
        x = torch.randn(37, 300)
        y = torch.full_like(x, float("nan"))
        softmax(x, y, BLOCK_SIZE=512)
        torch.testing.assert_close(y, torch.softmax(x.double(), 1).float(), rtol=1e-5, atol=1e-7)
        used.add(softmax._binder.last.last_work_items)
        for m, k, n, dtype in ((67, 45, 93, torch.float32), (130, 70, 33, torch.float16)):
            a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
            c = torch.full((m, n), float("nan"), dtype=dtype)
            matmul(a, b, c, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
            tolerance = 2e-3 if dtype == torch.float16 else 1e-5
            torch.testing.assert_close(c.double(), (a.double() @ b.double()).to(dtype).double(),
                                       rtol=tolerance, atol=tolerance)
            used.add(matmul._binder.last.last_work_items)
        x = torch.randn(50, 50)  # partial blocks
        y = torch.full_like(x, float("nan"))
        transpose(x, y, BLOCK=16)
        assert torch.equal(y, transpose_blocks_reference(x, 16)), num_warps
        used.add(transpose._binder.last.last_work_items)
        print(num_warps, *sorted(used))
    check_tuned_warps()
    print("ok")


def check_tuned_warps():
    # Tuned without num_warps: the two fastest configurations again on 2 and 8 warps, the chosen
    # launched on its warps; with num_warps given, none.
    largest = ninetoothed._core.current_device()["max_work_group_size"]
    for given in (None, 2):
        add = ninetoothed.make(tutorial_add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)),
                               num_warps=given)
        x, y = torch.randn(3001), torch.randn(3001)
        z = torch.full_like(x, float("nan"))
        add(x, y, z)  # BLOCK_SIZE tuned
        assert torch.equal(z, x + y), given
        (record,) = add.tuning_report()
        warps = sorted(config["num_warps"] for config, _ in record["candidates"] if "num_warps" in config)
        chosen = record["chosen"].get("num_warps", given or 4)
        assert add._binder.last.last_work_items == min(32 * chosen, 1 << (largest.bit_length() - 1))
        print("tuned warps", given, *warps)
        if given is None:
            tuned, tuned_record = add, record
    # A tuned configuration can be pinned, its warps included; max_num_configs caps the warps too.
    tuned.pin(dict(tuned_record["chosen"], num_warps=8))
    z.fill_(float("nan"))
    tuned(x, y, z)
    assert torch.equal(z, x + y) and tuned._binder.last.last_work_items == min(256, 1 << (largest.bit_length() - 1))
    capped = ninetoothed.make(tutorial_add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)),
                              max_num_configs=3)
    capped(x, y, z)
    (record,) = capped.tuning_report()
    assert len(record["candidates"]) == 3, record
    print("capped", *sorted(config.get("num_warps", 4) for config, _ in record["candidates"]))


main()
