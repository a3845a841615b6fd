"""Acceptance tests: Triton's trace-time names in `ninetoothed.language` (constexpr,
static_range, range with Triton's keywords, static_assert/static_print, device_print,
device_assert, hints, dtype objects, unsupported names)."""

import re
import zlib

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)
BLOCK = 64


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def arrangement(x, output):
    return x.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def launch(application, x, output_dtype=torch.float32):
    kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)))
    output = torch.full(x.shape, float("nan") if output_dtype.is_floating_point else -7, dtype=output_dtype)
    kernel(x, output, BLOCK_SIZE=BLOCK)
    return output


def static_range_application(x, output):
    acc = ntl.zeros(x.shape, ntl.float32)
    for i in ntl.static_range(1, 7, 2):  # 1, 3, 5: unrolled, `i` an int
        if i == 3:  # decided while tracing
            acc += x * 100
        else:
            acc += x * i
    output = acc  # noqa: F841


def range_application(x, output):
    acc = ntl.zeros(x.shape, ntl.float32)
    for i in ntl.range(0, 5, 2, num_stages=3, loop_unroll_factor=2, disallow_acc_multi_buffer=True,
                       flatten=True, warp_specialize=False):
        acc += x * i
    for j in ntl.range(3):
        acc += 1
    output = acc  # noqa: F841


def scale(x, factor: ntl.constexpr, mode: ntl.constexpr = "double"):
    if mode == "double":
        return x * factor * 2
    return x * factor


def constexpr_application(x, output):
    factor: ntl.constexpr = 1.5
    shift = ntl.constexpr(3)
    flag = ntl.constexpr(True)
    result = scale(x, factor) + scale(x, 0.5, "plain") + shift
    if flag:
        result += ntl.constexpr(0.25)
    output = result  # noqa: F841


@pytest.mark.parametrize("size", (1, 1001))
def test_static_range_range_and_constexpr(size):
    x = torch.randn(size)
    torch.testing.assert_close(launch(static_range_application, x), x * 106, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(launch(range_application, x), x * 6 + 3, rtol=1e-6, atol=1e-6)
    expected = x * 3 + x * 0.5 + 3 + 0.25
    torch.testing.assert_close(launch(constexpr_application, x), expected, rtol=1e-6, atol=1e-6)


def test_constexpr_is_the_value_outside_kernels():
    assert ntl.constexpr(3) == 3 and ntl.constexpr("a") == "a" and ntl.constexpr(2.5) == 2.5
    assert list(ntl.static_range(2, 8, 3)) == [2, 5]
    assert list(ntl.range(4)) == [0, 1, 2, 3]


def static_assert_application(x, output):
    ntl.static_assert(x.shape[0] == BLOCK_SIZE, "one block")
    ntl.static_assert(len(x.shape) == 2, "two dims")
    output = x  # noqa: F841


def test_static_assert():
    with pytest.raises(AssertionError, match="static_assert failed: two dims"):
        launch(static_assert_application, torch.randn(10))


def static_print_application(x, output):
    ntl.static_print("tracing", x.shape, sep="|")
    output = x + 1  # noqa: F841


def test_static_print_prints_while_tracing(capsys):
    x = torch.randn(5)
    torch.testing.assert_close(launch(static_print_application, x), x + 1)
    assert "tracing|(BLOCK_SIZE,)" in capsys.readouterr().out


def hints_application(x, output):
    y = ntl.multiple_of(x, 16)
    y = ntl.max_contiguous(y, [16])
    y = ntl.max_constancy(y, 1)
    ntl.assume(BLOCK_SIZE > 0)
    ntl.debug_barrier()
    output = y * 2  # noqa: F841


def test_hints_return_their_input():
    x = torch.randn(1001)
    torch.testing.assert_close(launch(hints_application, x), x * 2)


def print_arrangement(x, output):
    return x.tile((4,)), output.tile((4,))


def device_print_application(x, output):
    ntl.device_print("x=", x)
    ntl.device_print("pair", x, x.to(ntl.int32) * 2, hex=False)
    ntl.device_print("hex", x.to(ntl.int32), hex=True)
    output = x  # noqa: F841


def test_device_print_prints_every_element(capfd):
    kernel = ninetoothed.make(print_arrangement, device_print_application, (Tensor(1), Tensor(1)))
    x = torch.tensor([1.5, -2.0, 3.25, 4.0, 10.0, 11.0])
    output = torch.empty(6)
    kernel(x, output)
    lines = capfd.readouterr().out.splitlines()
    printed = [line for line in lines if line.startswith("pid")]
    # Two programs of 4 elements; the second block's last two elements are masked (read as 0).
    assert sum("x=" in line for line in printed) == 8
    assert "pid (0) idx (2) x= 3.250000" in printed
    assert "pid (1) idx (1) x= 11.000000" in printed
    assert "pid (1) idx (0) pair (operand 1) 20" in printed
    assert "pid (0) idx (1) hex 0xfffffffe" in printed
    assert sum(line.startswith("pid") and "pair (operand 0)" in line for line in printed) == 8


def device_assert_application(x, output):
    ntl.device_assert(x < 10, "x is too large")
    ntl.device_assert(x > -100, "never fails")
    output = x  # noqa: F841


def test_device_assert_reports_failing_elements(capfd):
    kernel = ninetoothed.make(print_arrangement, device_assert_application, (Tensor(1), Tensor(1)))
    x = torch.tensor([1.0, 12.0, 3.0, 4.0, 10.0, 11.0])
    output = torch.empty(6)
    kernel(x, output)
    torch.testing.assert_close(output, x)  # the kernel goes on
    failed = [line for line in capfd.readouterr().out.splitlines() if "device_assert failed" in line]
    assert sorted(failed) == sorted([
        "pid (0) idx (1) device_assert failed: x is too large",
        "pid (1) idx (0) device_assert failed: x is too large",
        "pid (1) idx (1) device_assert failed: x is too large",
    ])


def dtypes_application(x, output):
    ntl.static_assert(isinstance(ntl.full((2,), 1, ntl.int1), ntl.tensor))
    ntl.static_assert(ntl.int1 == ntl.dtype.bool)
    mask = (x > 0).to(ntl.int1)
    output = ntl.where(mask, x, 0.0).to(ntl.float16).to(ntl.float32)  # noqa: F841


def test_dtype_objects():
    x = torch.randn(1001)
    torch.testing.assert_close(launch(dtypes_application, x), torch.where(x > 0, x, 0.0).half().float())
    assert isinstance(ntl.float32, ntl.dtype)
    assert ntl.TRITON_MAX_TENSOR_NUMEL == 1048576
    assert ntl.math.fdiv is ntl.fdiv and ntl.extra.cuda.libdevice.erfc is ntl.libdevice.erfc


@pytest.mark.parametrize("name", ("make_block_ptr", "advance", "make_tensor_descriptor", "inline_asm_elementwise",
                                  "dot_scaled"))
def test_out_of_scope_names_say_why(name):
    with pytest.raises(NotImplementedError, match="not supported"):
        getattr(ntl, name)()


def test_float8_offers_torchs_formats_only():
    """e5m2 and e4m3fn (Triton's float8e5 and float8e4nv, torch's float8_e5m2 and float8_e4m3fn);
    Triton's other float8 formats (e4b15, e4b8, e5b16) are not offered."""
    offered = {name for name in dir(ntl) if re.match("float8", name)}
    assert offered == {"float8e5", "float8_e5m2", "float8e4nv", "float8_e4m3fn"}


def dtype_query_application(x, output):
    if x.dtype.is_floating() and x.dtype.primitive_bitwidth == 16:
        output = x * 2  # noqa: F841
    elif x.dtype.is_int_signed() and x.dtype.int_bitwidth == 32:
        output = x + 1  # noqa: F841
    else:
        output = x  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float16, torch.int32, torch.float32))
def test_dtype_queries_decide_while_tracing(dtype):
    x = (torch.randn(301) * 100).to(dtype)
    output = launch(dtype_query_application, x, dtype)
    expected = {torch.float16: x * 2, torch.int32: x + 1, torch.float32: x}[dtype]
    assert torch.equal(output, expected)
    assert ntl.float32.fp_mantissa_width == 23 and ntl.uint8.is_int_unsigned() and not ntl.int1.is_floating()
