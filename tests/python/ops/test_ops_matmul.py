"""The matmul family of the corpus (mm, bmm, addmm, addmv) and conv2d as an implicit GEMM.

Odd sizes (1, 17, 33, 65, 100) leave partial blocks on every side; float16 inputs accumulate
in float32 as upstream. References are float32 products of the (float16-rounded) inputs.

Tolerances: float32 results differ from torch's only by the order of the float32
accumulation, so the absolute tolerance grows with sqrt(K), K the length of the reduction.
With input_precision="tf32" a device may round the inputs to TF32 (10-bit mantissa) before
multiplying, so that case is held only to what TF32 guarantees (about 1e-3 relative per
product, again times sqrt(K)). float16 results are rounded once from float32: the default
float16 tolerance (one float16 ulp is under 1e-3 relative) is kept.
"""

import math
import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import addmm, addmv, bmm, conv2d, mm
from ops_testing import DTYPES, assert_matches, poisoned


@pytest.fixture(autouse=True)
def seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def tolerances(dtype, input_precision, k):
    """rtol, atol for a product with reductions of length k (see the module's docstring)."""
    if dtype == torch.float16:
        return {"rtol": 2e-3, "atol": 2e-3}

    if input_precision == "tf32":
        return {"rtol": 2e-3, "atol": 2e-3 * math.sqrt(k)}

    return {"rtol": 1e-5, "atol": 1e-5 * math.sqrt(k)}


def randn(*shape, dtype):
    return torch.randn(shape).to(dtype)


def with_precisions(cases, tf32_cases):
    """Every case with "ieee" in both dtypes, and the tf32 ones with "tf32" in both dtypes.

    (Each distinct configuration compiles kernels; the grid is kept to what exercises
    something different.)
    """
    return [
        pytest.param(*case, precision, dtype, id=f"{'-'.join(map(str, case))}-{precision}-{str(dtype)[6:]}")
        for precision, selected in (("ieee", cases), ("tf32", tf32_cases))
        for case in selected
        for dtype in DTYPES
    ]


@pytest.mark.parametrize(
    "m, k, n, input_precision, dtype",
    with_precisions(((1, 1, 1), (17, 33, 65), (100, 17, 1), (65, 100, 33)), ((1, 65, 100),)),
)
def test_mm(m, k, n, input_precision, dtype):
    input, mat2 = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype)
    expected = input.float() @ mat2.float()
    out = poisoned((m, n), dtype)

    assert mm.mm(input, mat2, input_precision=input_precision, out=out) is out
    assert_matches(out, expected, **tolerances(dtype, input_precision, k))


def test_mm_follows_torchs_float32_matmul_precision():
    input, mat2 = randn(33, 17, dtype=torch.float32), randn(17, 65, dtype=torch.float32)
    previous = torch.get_float32_matmul_precision()

    try:
        for precision, expected in (("highest", mm.InputPrecision.IEEE), ("high", mm.InputPrecision.TF32)):
            torch.set_float32_matmul_precision(precision)
            assert mm.input_precision_of(None) == expected
            out = mm.mm(input, mat2, out=poisoned((33, 65), torch.float32))
            assert_matches(out, input @ mat2, **tolerances(torch.float32, "tf32", 17))
    finally:
        torch.set_float32_matmul_precision(previous)


@pytest.mark.parametrize(
    "b, m, k, n, input_precision, dtype",
    with_precisions(((1, 1, 1, 1), (3, 17, 33, 65), (2, 100, 17, 33)), ((5, 1, 65, 17),)),
)
def test_bmm(b, m, k, n, input_precision, dtype):
    input, mat2 = randn(b, m, k, dtype=dtype), randn(b, k, n, dtype=dtype)
    expected = input.float() @ mat2.float()
    out = poisoned((b, m, n), dtype)

    assert bmm.bmm(input, mat2, input_precision=input_precision, out=out) is out
    assert_matches(out, expected, **tolerances(dtype, input_precision, k))


def test_bmm_of_transposed_operands():
    # Strided (non-contiguous) operands, as `x.transpose(1, 2)` gives them.
    input = randn(3, 33, 17, dtype=torch.float32).transpose(1, 2)
    mat2 = randn(3, 65, 33, dtype=torch.float32).transpose(1, 2)
    out = poisoned((3, 17, 65), torch.float32)

    bmm.bmm(input, mat2, input_precision="ieee", out=out)
    assert_matches(out, input @ mat2, **tolerances(torch.float32, "ieee", 33))


# (m, k, n, input shape, beta, alpha); beta == 0 ignores `input`, as torch does.
ADDMM_CASES = (
    (1, 1, 1, (1, 1), 1, 1),
    (17, 33, 65, (17, 65), 0.5, -2.0),
    (100, 17, 33, (33,), 0, 1.5),
    (65, 100, 1, (65, 1), 1, 1),
)


@pytest.mark.parametrize(
    "m, k, n, input_shape, beta, alpha, input_precision, dtype",
    with_precisions(ADDMM_CASES, ((33, 65, 17, (1, 17), -1, 0.25),)),
)
def test_addmm(m, k, n, input_shape, beta, alpha, input_precision, dtype):
    input, mat1, mat2 = randn(*input_shape, dtype=dtype), randn(m, k, dtype=dtype), randn(k, n, dtype=dtype)
    expected = torch.addmm(input.float(), mat1.float(), mat2.float(), beta=beta, alpha=alpha)
    out = poisoned((m, n), dtype)

    assert addmm.addmm(input, mat1, mat2, beta=beta, alpha=alpha, input_precision=input_precision, out=out) is out
    assert_matches(out, expected, **tolerances(dtype, input_precision, k))


@pytest.mark.parametrize("dtype", DTYPES)
def test_addmm_with_beta_0_ignores_nan_and_inf_in_input(dtype):
    input = randn(17, 33, dtype=dtype)
    input[::3, ::2] = float("nan")
    input[1::4] = float("inf")
    mat1, mat2 = randn(17, 65, dtype=dtype), randn(65, 33, dtype=dtype)
    out = poisoned((17, 33), dtype)

    addmm.addmm(input, mat1, mat2, beta=0, alpha=0.5, input_precision="ieee", out=out)
    assert_matches(out, 0.5 * (mat1.float() @ mat2.float()), **tolerances(dtype, "ieee", 65))


# (n, k, input shape, beta, alpha)
ADDMV_CASES = (
    (1, 1, (1,), 1, 1),
    (17, 33, (17,), 0.5, -2.0),
    (100, 65, (1,), 0, 1.5),
)


@pytest.mark.parametrize(
    "n, k, input_shape, beta, alpha, input_precision, dtype",
    with_precisions(ADDMV_CASES, ((33, 100, (33,), -1, 0.25),)),
)
def test_addmv(n, k, input_shape, beta, alpha, input_precision, dtype):
    input, mat, vec = randn(*input_shape, dtype=dtype), randn(n, k, dtype=dtype), randn(k, dtype=dtype)
    expected = torch.addmv(input.float(), mat.float(), vec.float(), beta=beta, alpha=alpha)
    out = poisoned((n,), dtype)

    assert addmv.addmv(input, mat, vec, beta=beta, alpha=alpha, input_precision=input_precision, out=out) is out
    assert_matches(out, expected, **tolerances(dtype, input_precision, k))


# (input shape, weight shape, stride, padding, dilation, bias, input_precision)
CONV2D_CASES = {
    "padding-0": ((2, 3, 11, 9), (5, 3, 3, 2), 1, 0, 1, True, "ieee"),
    "padding-0-1-no-bias": ((1, 4, 8, 13), (7, 4, 3, 3), (2, 1), (0, 1), (1, 2), False, "ieee"),
    "pointwise-strided-tf32": ((2, 5, 10, 10), (3, 5, 1, 1), 2, (1, 0), 1, True, "tf32"),
    "odd-sizes-dilated": ((3, 2, 7, 17), (17, 2, 5, 3), (1, 2), 2, (1, 3), True, "ieee"),
    "one-element": ((1, 1, 1, 1), (1, 1, 1, 1), 1, 0, 1, False, "ieee"),
}

# Every case in float32; float16 on the ones with padding (0, 1), and 2 with dilation.
CONV2D_PARAMS = [
    pytest.param(*case, torch.float32, id=f"{name}-float32") for name, case in CONV2D_CASES.items()
] + [
    pytest.param(*CONV2D_CASES[name], torch.float16, id=f"{name}-float16")
    for name in ("padding-0-1-no-bias", "odd-sizes-dilated")
]


@pytest.mark.parametrize(
    "input_shape, weight_shape, stride, padding, dilation, with_bias, input_precision, dtype", CONV2D_PARAMS
)
def test_conv2d(input_shape, weight_shape, stride, padding, dilation, with_bias, input_precision, dtype):
    input, weight = randn(*input_shape, dtype=dtype), randn(*weight_shape, dtype=dtype)
    bias = randn(weight_shape[0], dtype=dtype) if with_bias else None
    expected = F.conv2d(
        input.float(),
        weight.float(),
        None if bias is None else bias.float(),
        stride=stride,
        padding=padding,
        dilation=dilation,
    )
    out = poisoned(expected.shape, dtype)

    result = conv2d.conv2d(
        input, weight, bias, stride=stride, padding=padding, dilation=dilation, input_precision=input_precision, out=out
    )

    assert result is out
    assert_matches(out, expected, **tolerances(dtype, input_precision, math.prod(weight_shape[1:])))


def test_conv2d_of_a_channels_last_input():
    input = torch.randn(2, 5, 11, 9).to(memory_format=torch.channels_last)
    weight, bias = torch.randn(7, 5, 3, 3), torch.randn(7)
    expected = F.conv2d(input, weight, bias, stride=2, padding=1)
    out = poisoned(expected.shape, torch.float32)

    conv2d.conv2d(input, weight, bias, stride=2, padding=1, input_precision="ieee", out=out)
    assert_matches(out, expected, **tolerances(torch.float32, "ieee", 5 * 3 * 3))
