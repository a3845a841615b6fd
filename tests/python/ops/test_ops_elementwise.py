"""Element-wise operators of the corpus against torch, element by element.

Outputs are poisoned before every launch, inputs are fresh random data, and references are
computed from float32 copies of the inputs (torch 1.13 lacks many float16 CPU kernels) and
rounded to the output's dtype.
"""

import math
import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import abs as abs_ops
from corpus import add, caching, clamp, div, dropout, gelu, hardswish, isnan, logical_not, mul, nan_to_num
from corpus import pow as pow_ops
from corpus import relu, rotary_embedding, silu, where
from ops_testing import DTYPES, assert_matches, poisoned

caching.set_default_max_num_configs(1)


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


def randn(shape, dtype, transposed=False):
    """Normal data of `shape`; `transposed` gives a view with its last two dims swapped."""
    if transposed:
        return torch.randn(*shape[:-2], shape[-1], shape[-2]).to(dtype).transpose(-1, -2)

    return torch.randn(shape).to(dtype)


dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)


# --- add / sub -------------------------------------------------------------------------------

BINARY_CASES = (
    # input shape, other shape, input transposed
    ((1,), (1,), False),
    ((1023,), (1023,), False),
    ((7, 33), (1, 33), False),
    ((257, 9), (1, 9), False),
    ((33, 7), (33, 1), True),
    ((3, 5, 257), (3, 1, 1), False),
    ((2, 3, 4, 9), (3, 1, 9), False),
)


@dtypes
@pytest.mark.parametrize("alpha", (1, 2.5, -0.75))
@pytest.mark.parametrize("input_shape, other_shape, transposed", BINARY_CASES)
def test_add(input_shape, other_shape, transposed, alpha, dtype):
    input = randn(input_shape, dtype, transposed)
    other = randn(other_shape, dtype)
    out = poisoned(input_shape, dtype)

    assert add.add(input, other, alpha=alpha, out=out) is out

    assert_matches(out, torch.add(input.float(), other.float(), alpha=alpha))


@dtypes
@pytest.mark.parametrize("input_shape, other_shape, transposed", BINARY_CASES[2:5])
def test_sub(input_shape, other_shape, transposed, dtype):
    input = randn(input_shape, dtype, transposed)
    other = randn(other_shape, dtype)
    out = poisoned(input_shape, dtype)

    add.sub(input, other, alpha=3, out=out)

    assert_matches(out, torch.sub(input.float(), other.float(), alpha=3))


@dtypes
def test_add_of_views_into_a_strided_out(dtype):
    # A sliced input (storage offset), an expanded other (stride 0), a transposed out.
    base = randn((9, 40), dtype)
    input = base[2:9, 3:36]
    other = randn((33,), dtype).expand(7, 33)
    out = poisoned((33, 7), dtype).t()

    add.add(input, other, alpha=0.5, out=out)

    assert_matches(out, torch.add(input.float(), other.float(), alpha=0.5))


# --- mul / div / pow -------------------------------------------------------------------------


@dtypes
@pytest.mark.parametrize("input_shape, other_shape, transposed", BINARY_CASES[2:4])
def test_mul(input_shape, other_shape, transposed, dtype):
    input = randn(input_shape, dtype, transposed)
    other = randn(other_shape, dtype)
    out = poisoned(input_shape, dtype)

    mul.mul(input, other, out=out)

    assert_matches(out, input.float() * other.float())


@dtypes
@pytest.mark.parametrize("shape", ((1,), (257,), (1023,)))
def test_mul_by_a_number(shape, dtype):
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    mul.mul(input, -1.25, out=out)

    assert_matches(out, input.float() * -1.25)


def nonzero_randn(shape, dtype):
    """Normal data kept away from zero, for divisors."""
    data = torch.randn(shape)
    data = torch.where(data.abs() < 0.125, torch.full_like(data, 0.5), data)

    return data.to(dtype)


@dtypes
@pytest.mark.parametrize(
    "rounding_mode, input_shape, other_shape",
    (
        (None, (1023,), (1023,)),
        (None, (3, 5, 257), (3, 5, 1)),
        ("trunc", (7, 33), (1, 33)),
        ("trunc", (257, 9), (1, 9)),
        ("floor", (7, 33), (1, 33)),
        ("floor", (257, 9), (1, 9)),
    ),
)
def test_div(input_shape, other_shape, rounding_mode, dtype):
    input = randn(input_shape, dtype) * 8
    other = nonzero_randn(other_shape, dtype)
    out = poisoned(input_shape, dtype)

    div.div(input, other, rounding_mode=rounding_mode, out=out)

    assert_matches(out, torch.div(input.float(), other.float(), rounding_mode=rounding_mode))


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64), ids=dtype_id)
@pytest.mark.parametrize("rounding_mode", ("trunc", "floor"))
@pytest.mark.parametrize("shape", ((1,), (257,), (1023,)))
def test_div_of_integers(shape, rounding_mode, dtype):
    input = torch.randint(-1000, 1000, shape, dtype=dtype)
    other = torch.randint(1, 20, shape, dtype=dtype) * (torch.randint(0, 2, shape, dtype=dtype) * 2 - 1)
    out = poisoned(shape, dtype)

    div.div(input, other, rounding_mode=rounding_mode, out=out)

    assert torch.equal(out, torch.div(input, other, rounding_mode=rounding_mode))


@dtypes
@pytest.mark.parametrize("shape, transposed", (((1,), False), ((33,), False), ((9, 33), True), ((257, 7), True)))
def test_pow_of_tensors(shape, transposed, dtype):
    input = (randn(shape, dtype, transposed).abs() + 0.25).to(dtype)
    exponent = randn(shape, dtype) * 2
    out = poisoned(shape, dtype)

    pow_ops.pow(input, exponent, out=out)

    assert_matches(out, torch.pow(input.float(), exponent.float()))


@dtypes
@pytest.mark.parametrize("exponent", (3, 2, 0.5, -1.5))
@pytest.mark.parametrize("shape", ((1,), (7,), (1023,)))
def test_pow_by_a_number(shape, exponent, dtype):
    input = randn(shape, dtype)

    if isinstance(exponent, float):
        input = (input.abs() + 0.25).to(dtype)

    out = poisoned(shape, dtype)

    pow_ops.pow(input, exponent, out=out)

    assert_matches(out, torch.pow(input.float(), exponent))


# --- clamp / hardtanh / where ------------------------------------------------------------------


@dtypes
@pytest.mark.parametrize(
    "shape, bounds",
    (
        ((7,), (-0.5, 0.75)),
        ((1023,), (1.0, -1.0)),
        ((33, 257), (-0.25, None)),
        ((1, 1), (-0.25, None)),
        ((2, 3, 5, 9), (None, 0.3)),
    ),
)
def test_clamp(shape, bounds, dtype):
    low, high = bounds
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    clamp.clamp(input, low, high, out=out)

    assert_matches(out, torch.clamp(input.float(), low, high))


@dtypes
@pytest.mark.parametrize("limits", ((-1.0, 1.0), (-0.5, 2.0)))
@pytest.mark.parametrize("shape, transposed", (((1023,), False), ((7, 33), True)))
def test_hardtanh(shape, transposed, limits, dtype):
    input = randn(shape, dtype, transposed) * 2
    out = poisoned(shape, dtype)

    clamp.hardtanh(input, *limits, out=out)

    assert_matches(out, F.hardtanh(input.float(), *limits))


@dtypes
@pytest.mark.parametrize(
    "shape, condition_shape, other_shape",
    (((1,), (1,), (1,)), ((1023,), (1023,), (1023,)), ((5, 7, 257), (5, 1, 257), (7, 1))),
)
def test_where(shape, condition_shape, other_shape, dtype):
    condition = torch.randn(condition_shape) > 0
    input = randn(shape, dtype)
    other = randn(other_shape, dtype)
    out = poisoned(shape, dtype)

    where.where(condition, input, other, out=out)

    assert_matches(out, torch.where(condition, input.float(), other.float()))


# --- activations -------------------------------------------------------------------------------

ACTIVATION_SHAPES = ((1,), (1023,), (7, 33), (3, 5, 257), (2, 3, 4, 9))


@dtypes
@pytest.mark.parametrize("shape", ACTIVATION_SHAPES)
def test_relu(shape, dtype):
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    relu.relu(input, out=out)

    assert_matches(out, F.relu(input.float()))


@dtypes
@pytest.mark.parametrize("negative_slope", (0.01, 0.2, -0.5))
@pytest.mark.parametrize("shape", ((1, 1), (7, 33), (257, 3)))
def test_leaky_relu(shape, negative_slope, dtype):
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    relu.leaky_relu(input, negative_slope, out=out)

    assert_matches(out, F.leaky_relu(input.float(), negative_slope))


@dtypes
@pytest.mark.parametrize("alpha", (1.0, 0.5, 1.7))
@pytest.mark.parametrize("shape", ((3, 5, 257), (1, 7, 1)))
def test_elu(shape, alpha, dtype):
    input = randn(shape, dtype) * 3
    out = poisoned(shape, dtype)

    relu.elu(input, alpha, out=out)

    assert_matches(out, F.elu(input.float(), alpha))


@dtypes
@pytest.mark.parametrize("op, arguments", (("relu", ()), ("leaky_relu", (0.1,)), ("elu", (0.7,))))
@pytest.mark.parametrize("shape, transposed", (((1023,), False), ((7, 33), True)))
def test_activations_in_place(shape, transposed, op, arguments, dtype):
    input = randn(shape, dtype, transposed) * 3
    expected = getattr(F, op)(input.float(), *arguments)

    result = getattr(relu, op)(input, *arguments, inplace=True)

    assert result is input
    assert_matches(input, expected)


@dtypes
@pytest.mark.parametrize("approximate", ("none", "tanh"))
@pytest.mark.parametrize("shape, transposed", (((1,), False), ((1023,), False), ((33, 257), True)))
def test_gelu(shape, transposed, approximate, dtype):
    input = randn(shape, dtype, transposed) * 3
    out = poisoned(shape, dtype)

    gelu.gelu(input, approximate, out=out)

    assert_matches(out, F.gelu(input.float(), approximate=approximate))


@dtypes
@pytest.mark.parametrize(
    "op, shape", (("silu", (1023,)), ("silu", (1,)), ("sigmoid", (7, 33)), ("sigmoid", (257, 1)))
)
def test_silu_and_sigmoid(shape, op, dtype):
    input = randn(shape, dtype) * 4
    out = poisoned(shape, dtype)

    getattr(silu, op)(input, out=out)

    assert_matches(out, F.silu(input.float()) if op == "silu" else torch.sigmoid(input.float()))


@dtypes
@pytest.mark.parametrize(
    "op, shape",
    (("hardswish", (3, 5, 257)), ("hardswish", (1, 1, 7)), ("hardsigmoid", (1023,)), ("hardsigmoid", (33,))),
)
def test_hardswish_and_hardsigmoid(shape, op, dtype):
    input = randn(shape, dtype) * 4
    out = poisoned(shape, dtype)

    getattr(hardswish, op)(input, out=out)

    assert_matches(out, getattr(F, op)(input.float()))


# --- abs / neg, isnan / isinf, bitwise_not / logical_not, nan_to_num ----------------------------


def random_data(shape, dtype):
    if dtype.is_floating_point:
        return randn(shape, dtype)

    return torch.randint(-1000, 1000, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", (*DTYPES, torch.int32), ids=dtype_id)
@pytest.mark.parametrize("op", ("abs", "neg"))
@pytest.mark.parametrize("shape", ((1,), (257,), (1023,)))
def test_abs_and_neg(shape, op, dtype):
    input = random_data(shape, dtype)
    out = poisoned(shape, dtype)

    (abs_ops.absolute if op == "abs" else abs_ops.neg)(input, out=out)

    expected = input.abs() if op == "abs" else -input
    assert torch.equal(out, expected)


def with_specials(shape, dtype):
    """Normal data with NaN, +inf and -inf at random places."""
    data = torch.randn(shape)
    kind = torch.randint(0, 8, shape)
    data[kind == 0] = float("nan")
    data[kind == 1] = float("inf")
    data[kind == 2] = float("-inf")

    return data.to(dtype)


@dtypes
@pytest.mark.parametrize(
    "op, shape", (("isnan", (1,)), ("isnan", (1023,)), ("isinf", (7, 33)), ("isinf", (257, 1)))
)
def test_isnan_and_isinf(shape, op, dtype):
    input = with_specials(shape, dtype)
    out = poisoned(shape, torch.bool)

    getattr(isnan, op)(input, out=out)

    assert torch.equal(out, getattr(torch, op)(input.float()))


@pytest.mark.parametrize("dtype", (torch.bool, torch.int32, torch.int8), ids=dtype_id)
@pytest.mark.parametrize("shape", ((1,), (257,), (1023,)))
def test_bitwise_not(shape, dtype):
    if dtype == torch.bool:
        input = torch.randint(0, 2, shape).bool()
        out = input.clone()  # the opposite of the result: every element must be written
    else:
        input = torch.randint(-100, 100, shape, dtype=dtype)
        out = torch.full(shape, -123, dtype=dtype)  # a sentinel: ~x is never -123 here

    logical_not.bitwise_not(input, out=out)

    assert torch.equal(out, torch.bitwise_not(input))


@pytest.mark.parametrize("dtype", (torch.bool, torch.int32, torch.float32, torch.float16), ids=dtype_id)
@pytest.mark.parametrize("shape", ((1, 1, 1), (5, 7, 33), (2, 1, 257)))
def test_logical_not(shape, dtype):
    input = torch.randint(-2, 3, shape).to(dtype)
    out = input.ne(0)  # the opposite of the result: every element must be written

    logical_not.logical_not(input, out=out)

    assert torch.equal(out, torch.logical_not(input))


@dtypes
@pytest.mark.parametrize("values", ((0.0, None, None), (1.5, 100.0, -200.0)))
@pytest.mark.parametrize("shape", ((1,), (1023,), (7, 33)))
def test_nan_to_num(shape, values, dtype):
    input = with_specials(shape, dtype)
    out = poisoned(shape, dtype)

    nan_to_num.nan_to_num(input, *values, out=out)

    nan, posinf, neginf = values
    finfo = torch.finfo(dtype)  # the defaults are the extremes of the input's dtype
    posinf = finfo.max if posinf is None else posinf
    neginf = finfo.min if neginf is None else neginf
    expected = torch.nan_to_num(input.float(), nan, posinf, neginf)
    assert torch.isfinite(out).all()
    assert_matches(out, expected)


# --- dropout / alpha_dropout ---------------------------------------------------------------------


def dropout_input(shape, dtype):
    input = torch.randn(shape)
    input[input.abs() < 1e-3] = 1.0  # a kept value near zero would look dropped

    return input.to(dtype)


def assert_kept_fraction(kept, p):
    n = kept.numel()
    fraction = kept.float().mean().item()
    assert abs(fraction - (1 - p)) < 5 * math.sqrt(p * (1 - p) / n) + 1e-9, fraction


@dtypes
@pytest.mark.parametrize("shape", ((1,), (1023,), (7, 33), (1, 1)))
def test_dropout_with_p_0_is_the_identity(shape, dtype):
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    dropout.dropout(input, 0.0, seed=1234, out=out)

    assert torch.equal(out, input)


@dtypes
@pytest.mark.parametrize("p", (0.1, 0.5, 0.8))
@pytest.mark.parametrize("shape", ((20011,), (97, 257)))
def test_dropout(shape, p, dtype):
    input = dropout_input(shape, dtype)
    seed = int(torch.randint(0, 2**31, ()))
    out = poisoned(shape, dtype)

    dropout.dropout(input, p, seed=seed, out=out)

    kept = out != 0
    assert_kept_fraction(kept, p)
    assert_matches(out[kept], input.float()[kept] / (1 - p))

    again = poisoned(shape, dtype)
    dropout.dropout(input, p, seed=seed, out=again)
    assert torch.equal(again, out)

    other_seed = poisoned(shape, dtype)
    dropout.dropout(input, p, seed=seed + 1, out=other_seed)
    assert not torch.equal(other_seed != 0, kept)


@dtypes
@pytest.mark.parametrize("shape", ((1,), (1023,), (7, 33)))
def test_alpha_dropout_with_p_0_is_the_identity(shape, dtype):
    input = randn(shape, dtype)
    out = poisoned(shape, dtype)

    dropout.alpha_dropout(input, 0.0, seed=99, out=out)

    assert torch.equal(out, input)


@dtypes
@pytest.mark.parametrize("p", (0.2, 0.5))
@pytest.mark.parametrize("shape", ((20011,), (97, 257)))
def test_alpha_dropout(shape, p, dtype):
    input = dropout_input(shape, dtype)
    seed = int(torch.randint(0, 2**31, ()))
    out = poisoned(shape, dtype)

    dropout.alpha_dropout(input, p, seed=seed, out=out)

    a, b = dropout.alpha_dropout_coefficients(p)
    dropped_value = torch.tensor(a * dropout.ALPHA_PRIME + b, dtype=torch.float64).to(dtype)
    kept_values = (a * input.double() + b).to(dtype)
    # In float16 the application's constant meets a float16 block and is rounded to float16 first.
    rtol, atol = (1e-6, 1e-6) if dtype == torch.float32 else (1e-3, 1e-3)
    dropped = torch.isclose(out, dropped_value.expand(shape), rtol=rtol, atol=atol)
    kept = torch.isclose(out, kept_values, rtol=rtol, atol=atol)
    assert (dropped | kept).all()
    assert_kept_fraction(~dropped, p)

    again = poisoned(shape, dtype)
    dropout.alpha_dropout(input, p, seed=seed, out=again)
    assert torch.equal(again, out)


# --- rotary position embedding -------------------------------------------------------------------


def rope_reference(input, sin, cos):
    half = input.shape[-1] // 2
    x1, x2 = input[..., :half].float(), input[..., half:].float()
    sin, cos = sin.float()[None, :, None, :], cos.float()[None, :, None, :]

    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


@dtypes
@pytest.mark.parametrize(
    "batch, seq_len, num_heads, head_dim, heads_first",
    ((1, 1, 1, 2, False), (2, 7, 3, 64, False), (3, 33, 4, 12, True), (1, 257, 2, 32, True)),
)
def test_rotary_embedding(batch, seq_len, num_heads, head_dim, heads_first, dtype):
    if heads_first:
        # (batch, heads, seq, head_dim) data seen as (batch, seq, heads, head_dim): not contiguous.
        input = torch.randn(batch, num_heads, seq_len, head_dim).to(dtype).transpose(1, 2)
    else:
        input = torch.randn(batch, seq_len, num_heads, head_dim).to(dtype)

    sin, cos = rotary_embedding.rope_tables(seq_len, head_dim, dtype=dtype)
    out = poisoned((batch, seq_len, num_heads, head_dim), dtype)

    rotary_embedding.rotary_embedding(input, sin, cos, out=out)

    assert_matches(out, rope_reference(input, sin, cos))
