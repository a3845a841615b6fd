"""Run with NINETOOTHED_PROGRAM_LAYOUT set: prints the work-items per program, then checks
element-wise kernels (odd sizes, partial blocks, float16, strided views) exactly; prints 'ok'."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
for path in (ROOT / "python", ROOT / "examples", ROOT / "tests" / "python"):
    sys.path.insert(0, str(path))

import torch  # noqa: E402

from ninetoothed import _core  # noqa: E402
from test_program_layout import scale_shift, scale_shift_reference  # noqa: E402
from tutorial_kernels import add_kernel  # noqa: E402


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
    print("ok")


if __name__ == "__main__":
    main()
