"""Row reductions through the lane-parallel path of the code generator.

A reduction over a block's last dimension keeps 16 partial results (8 for 64-bit types): each
group of 16 elements is first computed into a small array (a loop the vectoriser handles, whatever
the element's expression), then combined into the partial results (unrolled, so they stay in
registers); the elements past the last full group go to the first partial result. These tests
cover element expressions (exp, products, casts), row lengths around the group size and odd
ones, masked tails, float16 and integer data, against float64 (or exact integer) references.
"""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK = Symbol("BLOCK", constexpr=True)


def _arrangement(x, y):
    return x.tile((1, BLOCK)), y.tile((1, 1))


def _sum_of_exp(x, y):
    y = ntl.sum(ntl.exp(x))  # noqa: F841


def _max_of_square(x, y):
    y = ntl.max(x * x)  # noqa: F841


def _min(x, y):
    y = ntl.min(x)  # noqa: F841


def _sum(x, y):
    y = ntl.sum(x)  # noqa: F841


# name: (application, value read past the row, float64 reference of a row block)
CASES = {
    "sum_exp": (_sum_of_exp, float("-inf"), lambda x: torch.exp(x).sum(-1, keepdim=True)),
    "max_square": (_max_of_square, 0.0, lambda x: (x * x).amax(-1, keepdim=True)),
    "min": (_min, float("inf"), lambda x: x.amin(-1, keepdim=True)),
    "sum": (_sum, 0.0, lambda x: x.sum(-1, keepdim=True)),
}

_KERNELS = {}


def _kernel(name, dtype):
    key = (name, dtype)
    if key not in _KERNELS:
        application, other, _ = CASES[name]
        tensors = (Tensor(2, other=other), Tensor(2))
        _KERNELS[key] = ninetoothed.make(_arrangement, application, tensors)
    return _KERNELS[key]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cols, block", ((1, 1), (15, 16), (16, 16), (17, 32), (33, 33), (1037, 1037), (1037, 2048)))
def test_row_reduction(name, dtype, cols, block):
    rows = 5
    x = (torch.randn(rows, cols) * 2).to(dtype)
    y = torch.full((rows, 1), float("nan"), dtype=dtype)
    _kernel(name, dtype)(x, y, BLOCK=block)
    expected = CASES[name][2](x.double())
    if dtype == torch.float16:
        tolerance = dict(rtol=2e-3, atol=2e-3)
    else:
        tolerance = dict(rtol=2e-6, atol=1e-6 * cols**0.5) if name.startswith("sum") else dict(rtol=0, atol=0)
    torch.testing.assert_close(y.double(), expected.to(dtype).double(), **tolerance)


def _int_sum(x, y):
    # The padding past a row reads 0, which the expression keeps 0.
    y = ntl.sum(x * 3)  # noqa: F841


def test_int32_row_sum_is_exact():
    tensors = (Tensor(2, dtype=ninetoothed.int32), Tensor(2, dtype=ninetoothed.int32))
    kernel = ninetoothed.make(_arrangement, _int_sum, tensors)
    x = torch.randint(-1000, 1000, (7, 1001), dtype=torch.int32)
    y = torch.full((7, 1), -12345, dtype=torch.int32)
    kernel(x, y, BLOCK=1024)
    assert torch.equal(y.long(), (x.long() * 3).sum(-1, keepdim=True))
