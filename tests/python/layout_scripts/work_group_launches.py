"""Run with NINETOOTHED_PROGRAM_LAYOUT set: prints the work-items per program, then checks kernels
of every kind (element-wise; reductions, dots, values shared between work-items, block operations,
a parameter stored and loaded) on odd sizes, partial blocks, float16 and strided views against
float64 references; prints 'ok'."""


import _paths  # noqa: F401  (sys.path: the package, the examples, the tests)

import torch  # noqa: E402

from ninetoothed import _core  # noqa: E402
from test_program_layout import (  # noqa: E402
    accumulate,
    argmax_and_double,
    recenter,
    transpose_in_place,
    row_statistics,
    scale_shift,
    scale_shift_reference,
    transpose_blocks,
    transpose_blocks_reference,
)
from tutorial_kernels import add_kernel, matmul_kernel, softmax_kernel  # noqa: E402


def main():
    print(_core.program_work_items())
    for n in (1, 127, 128, 129, 100_003):
        for dtype in (torch.float32, torch.float16):
            x, y = torch.randn(n).to(dtype), torch.randn(n).to(dtype)
            z = torch.full((n,), float("nan"), dtype=dtype)
            add_kernel(x, y, z)
            assert torch.equal(z, x + y), (n, dtype)
    for rows, columns in ((1, 1), (37, 300), (129, 1000)):
        x = torch.randn(columns, rows).t()  # not contiguous: strides (1, rows)
        y = torch.full((rows, columns), float("nan"))
        scale_shift(x, y, BLOCK_M=16, BLOCK_N=128)
        torch.testing.assert_close(y, scale_shift_reference(x), rtol=3e-7, atol=0)  # exp: within 2 ulp
    for rows, columns, block in ((1, 1, 1), (37, 300, 512), (5, 1000, 1024)):
        x = torch.randn(rows, columns)
        y = torch.full_like(x, float("nan"))
        softmax_kernel(x, y, BLOCK_SIZE=block)
        torch.testing.assert_close(y, torch.softmax(x.double(), 1).float(), rtol=1e-5, atol=1e-7)
    # Shared values past the device's local memory (PoCL's CPU device has 1 MiB, GPUs tens of
    # KiB): one work-item.
    columns = 200_000 if _core.current_device()["is_cpu"] else 10_000
    x = torch.randn(2, columns)
    y = torch.full_like(x, float("nan"))
    softmax_kernel(x, y, BLOCK_SIZE=1 << (columns - 1).bit_length())
    torch.testing.assert_close(y, torch.softmax(x.double(), 1).float(), rtol=1e-5, atol=1e-9)
    for m, k, n, dtype in ((1, 1, 1, torch.float32), (67, 45, 93, torch.float32), (130, 70, 33, torch.float16)):
        a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
        c = torch.full((m, n), float("nan"), dtype=dtype)
        matmul_kernel(a, b, c)
        tolerance = 2e-3 if dtype == torch.float16 else 1e-5
        torch.testing.assert_close(c.double(), (a.double() @ b.double()).to(dtype).double(), rtol=tolerance, atol=tolerance)
    for n, block in ((1, 1), (37, 16), (64, 32)):
        x = torch.randn(n, n)
        y = torch.full_like(x, float("nan"))
        transpose_blocks(x, y, BLOCK=block)
        assert torch.equal(y, transpose_blocks_reference(x, block)), (n, block)
    for rows, columns in ((1, 1), (37, 300), (3, 129)):
        x = torch.randint(0, 4, (rows, columns)).float()  # ties
        index = torch.full((rows,), -1, dtype=torch.int64)
        centered = torch.full_like(x, float("nan"))
        row_statistics(x, index, centered, BLOCK_M=16, BLOCK_N=1 << (columns - 1).bit_length())
        assert torch.equal(index, x.argmax(1)), (rows, columns)  # the first of equal maxima
        torch.testing.assert_close(centered, torch.cumsum(x - x.amax(1, keepdim=True), 1), rtol=0, atol=0)
    for rows, columns in ((1, 1), (37, 300)):
        x = torch.randn(rows, columns)
        index = torch.full((rows,), -1, dtype=torch.int64)
        y = torch.full_like(x, float("nan"))
        block = 1 << (columns - 1).bit_length()
        argmax_and_double(x, index, y, BLOCK_M=16, BLOCK_N=block)
        assert torch.equal(index, x.argmax(1)) and torch.equal(y, x * 2), (rows, columns)
        x0 = torch.randn(rows, columns)
        x, y = x0.clone(), torch.full_like(x0, float("nan"))
        recenter(x, y, BLOCK_M=16, BLOCK_N=block)
        expected = x0 - x0.amax(1, keepdim=True)
        assert torch.equal(x, expected) and torch.equal(y, expected), (rows, columns)
    for n, block in ((1, 1), (32, 16), (64, 32)):
        x0 = torch.randn(n, n)
        x = x0.clone()
        transpose_in_place(x, BLOCK=block)
        reference = x0.reshape(n // block, block, n // block, block).transpose(1, 3).reshape(n, n) * 2
        assert torch.equal(x, reference), (n, block)
    x, y = torch.randn(37, 300), torch.randn(37, 300)
    expected = y + x
    accumulate(x, y, BLOCK_M=16, BLOCK_N=128)
    assert torch.equal(y, expected)
    print("ok")


if __name__ == "__main__":
    main()
