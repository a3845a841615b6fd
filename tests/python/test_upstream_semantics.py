"""Upstream NineToothed semantics that operator code relies on, written as such code writes them.

`~` on bool blocks, arrangements that do not tile, constexpr values of 0, `p.dtype` of
multi-level parameters, Python built-ins on blocks, block-valued indices, outermost
shapes of different ranks, bitcasts.
"""

import math

import pytest
import torch
import torch.nn.functional as F

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = ninetoothed.block_size()
BLOCK = Symbol("block", constexpr=True)


def poisoned(shape, dtype):
    fill = float("nan") if dtype.is_floating_point else -12345
    return torch.full(shape, fill, dtype=dtype)


def reference_tolerance(dtype):
    return {"rtol": 0, "atol": 0} if dtype == torch.float32 else {"rtol": 1e-3, "atol": 1e-3}


# --- `~` on a bool block is logical not --------------------------------------------------------


def element_wise_arrangement(input, output, block_size=BLOCK_SIZE):
    return input.flatten().tile((block_size,)), output.flatten().tile((block_size,))


def masked_fill_application(input, output):
    mask = input < 0.25
    output = ntl.where(~mask, 0, input)  # noqa: F841


def bitwise_not_application(input, output):
    output = ~input  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("shape", ((1000,), (7, 33)))
def test_invert_of_a_bool_block_is_logical_not(dtype, shape):
    kernel = ninetoothed.make(element_wise_arrangement, masked_fill_application, (Tensor(len(shape)), Tensor(len(shape))))
    input = torch.randn(shape).to(dtype)
    output = poisoned(shape, dtype)
    kernel(input, output)
    expected = torch.where(~(input.float() < 0.25), torch.zeros(()), input.float()).to(dtype)
    assert torch.equal(output, expected)


def test_invert_of_an_integer_block_stays_bitwise():
    kernel = ninetoothed.make(element_wise_arrangement, bitwise_not_application, (Tensor(1), Tensor(1)))
    input = torch.randint(-1000, 1000, (777,), dtype=torch.int32)
    output = poisoned((777,), torch.int32)
    kernel(input, output)
    assert torch.equal(output, ~input)


# --- Arrangements that do not tile: the whole arranged tensor is every program's block ----------


def untiled_fill_arrangement(output, value):
    return output, value


def untiled_fill_application(output, value):
    output = value  # noqa: F841


def untiled_copy_arrangement(input, output, input_slices, output_slices):
    return input[input_slices], output[output_slices]


def untiled_copy_application(input, output):
    output = input  # noqa: F841


def pad(input, pads, value):
    """F.pad(input, pads, value=value) by untiled slices: fill, then copy the overlap."""
    ndim = input.ndim
    per_dim = [(0, 0)] * ndim
    for d in range(len(pads) // 2):
        per_dim[ndim - 1 - d] = (pads[2 * d], pads[2 * d + 1])
    output_shape = [size + before + after for size, (before, after) in zip(input.shape, per_dim)]
    input_slices = tuple(
        slice(max(-before, 0), size - max(-after, 0)) for size, (before, after) in zip(input.shape, per_dim)
    )
    output_slices = tuple(
        slice(max(before, 0), size - max(after, 0)) for size, (before, after) in zip(output_shape, per_dim)
    )
    output = poisoned(output_shape, input.dtype)
    fill = ninetoothed.make(untiled_fill_arrangement, untiled_fill_application, (Tensor(ndim), Tensor(0)))
    copy = ninetoothed.make(
        untiled_copy_arrangement, untiled_copy_application, (Tensor(ndim), Tensor(ndim), input_slices, output_slices)
    )
    fill(output, value)
    copy(input, output)
    return output


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("value", (0.5, float("-inf"), math.pi))
@pytest.mark.parametrize(
    "shape, pads",
    (((5, 7), (1, 2, 3, 0)), ((5, 7), (-1, 2, 0, -2)), ((3, 4, 6), (2, -3, 1, 1, -1, 2)), ((2, 9, 13), (0, 0, 4, 1))),
)
def test_constant_pad_by_untiled_slices(dtype, value, shape, pads):
    input = torch.randn(shape).to(dtype)
    output = pad(input, pads, value)
    expected = F.pad(input.float(), pads, value=value).to(dtype)
    assert torch.equal(output, expected)


def transpose_arrangement(input, output):
    return input.permute((1, 0)), output


def test_an_untiled_permuted_view_is_one_block():
    constexpr = {"constexpr": True}
    tensors = (Tensor(2, shape_options=constexpr), Tensor(2, shape_options=constexpr))
    kernel = ninetoothed.make(transpose_arrangement, untiled_copy_application, tensors)
    input = torch.randn(9, 14)
    output = poisoned((14, 9), torch.float32)
    kernel(input, output)
    assert torch.equal(output, input.t())


def repeat_rows_arrangement(input_1d, output_col, stride, input_size, block_size=BLOCK_SIZE):
    return input_1d, output_col.flatten().tile((block_size,)), stride, input_size


def repeat_rows_application(input_1d, output_1d, stride, input_size):
    for k in range(output_1d.shape[0]):
        src = (ntl.program_id(0) * output_1d.shape[0] + k) // stride % input_size
        output_1d[k] = input_1d[src]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_untiled_source_indexed_by_computed_positions(dtype):
    # An untiled input read at data-dependent positions, an output block written element by element.
    kernel = ninetoothed.make(
        repeat_rows_arrangement, repeat_rows_application, (Tensor(1), Tensor(2), Tensor(0), Tensor(0))
    )
    input = torch.randn(13).to(dtype)
    num_rows, stride = 101, 3
    output = poisoned((num_rows, 1), dtype)
    kernel(input, output, stride, 13)
    expected = input[(torch.arange(num_rows) // stride) % 13][:, None]
    assert torch.equal(output, expected)


# --- Constexpr symbols take any integer at launch ----------------------------------------------

SHIFT = Symbol("shift", constexpr=True)


def shifted_copy_arrangement(input, output, block_size=BLOCK_SIZE):
    return input[SHIFT:].tile((block_size,)), output.tile((block_size,))


@pytest.mark.parametrize("shift", (0, 3))
def test_a_constexpr_value_may_be_zero(shift):
    kernel = ninetoothed.make(shifted_copy_arrangement, untiled_copy_application, (Tensor(1), Tensor(1)))
    input = torch.randn(200)
    output = poisoned((200 - shift,), torch.float32)
    kernel(input, output, shift=shift)
    assert torch.equal(output, input[shift:])


def offset_add_arrangement(input, output, offset, block_size=BLOCK_SIZE):
    return input.tile((block_size,)), output.tile((block_size,)), offset


def offset_add_application(input, output, offset):
    output = input + offset  # noqa: F841


@pytest.mark.parametrize("offset", (0, -7, 5))
def test_constexpr_scalars_take_zero_and_negative_values(offset):
    kernel = ninetoothed.make(
        offset_add_arrangement, offset_add_application, (Tensor(1), Tensor(1), Tensor(0, constexpr=True))
    )
    input = torch.randint(-50, 50, (301,), dtype=torch.int32)
    output = poisoned((301,), torch.int32)
    kernel(input, output, offset)
    assert torch.equal(output, input + offset)


def test_a_block_size_of_zero_is_refused():
    block = Symbol("block", constexpr=True)
    kernel = ninetoothed.make(
        lambda input, output: (input.tile((block,)), output.tile((block,))),
        untiled_copy_application,
        (Tensor(1), Tensor(1)),
    )
    with pytest.raises(ValueError, match="'block' = 0 is a block size"):
        kernel(torch.randn(10), torch.empty(10), block=0)


# --- p.dtype of a multi-level parameter is its next level ---------------------------------------

INNER = Symbol("inner", constexpr=True)


def three_level_arrangement(input, output):
    def arrange(tensor):
        arranged = tensor.tile((1, INNER)).tile((1, -1))
        arranged.dtype = arranged.dtype.squeeze(0)
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze(0)
        return arranged

    return arrange(input), arrange(output)


def row_sum_application(input, output):
    accumulator = ntl.zeros(input.dtype.shape, dtype=ntl.float32)
    for i in range(input.shape[0]):
        accumulator += ntl.cast(input[i], ntl.float32)
    total = ntl.sum(accumulator)
    for i in range(output.shape[0]):
        output[i] = ntl.cast(ntl.full(output.dtype.shape, 0, ntl.float32) + total, output.dtype.dtype)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("shape, inner", (((5, 37), 8), ((3, 16), 16)))
def test_dtype_of_a_three_level_parameter_is_its_block(dtype, shape, inner):
    kernel = ninetoothed.make(three_level_arrangement, row_sum_application, (Tensor(2), Tensor(2)))
    input = torch.randn(shape).to(dtype)
    output = poisoned(shape, dtype)
    kernel(input, output, inner=inner)
    expected = input.float().sum(1, keepdim=True).expand(shape).to(dtype)
    torch.testing.assert_close(output, expected, rtol=1e-5 if dtype == torch.float32 else 2e-3, atol=1e-4)


# --- Python built-ins on blocks and trace-time values --------------------------------------------


def builtins_arrangement(input, other, bias, output, alpha, block_size=BLOCK_SIZE):
    return tuple(t.tile((block_size,)) for t in (input, other, bias, output)) + (alpha,)


def add_bias(value, bias):
    if bias is None:
        return value
    return value + bias


def builtins_value(input, other, alpha):
    if input.dtype is ntl.float16:
        scale = 2.0
    else:
        scale = 3.0
    return max(input, other) * scale + min(input, other) + abs(input - other) * float(alpha)


def builtins_with_bias_application(input, other, bias, output, alpha):
    output = add_bias(builtins_value(input, other, alpha), bias)  # noqa: F841


def builtins_without_bias_application(input, other, bias, output, alpha):
    output = add_bias(builtins_value(input, other, alpha), None)  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("with_bias", (False, True))
def test_python_builtins_on_blocks(dtype, with_bias):
    application = builtins_with_bias_application if with_bias else builtins_without_bias_application
    tensors = (Tensor(1), Tensor(1), Tensor(1), Tensor(1), Tensor(0, constexpr=True))
    kernel = ninetoothed.make(builtins_arrangement, application, tensors)
    n = 517
    input, other, bias = (torch.randn(n).to(dtype) for _ in range(3))
    output = poisoned((n,), dtype)
    kernel(input, other, bias, output, 2)
    input, other = input.float(), other.float()
    scale = 2.0 if dtype == torch.float16 else 3.0
    expected = torch.maximum(input, other) * scale + torch.minimum(input, other) + (input - other).abs() * 2.0
    if with_bias:
        expected = expected + bias.float()
    atol = 1e-6 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(output.float(), expected.to(dtype).float(), rtol=1e-6, atol=atol)


def bitcast_application(input, output):
    output = ntl.cast(input, ntl.int32, bitcast=True) ^ 0x7FFFFFFF  # noqa: F841


def half_bits_application(input, output):
    output = ntl.cast(input, ntl.int16, bitcast=True)  # noqa: F841


def test_cast_with_bitcast():
    kernel = ninetoothed.make(element_wise_arrangement, bitcast_application, (Tensor(1), Tensor(1)))
    input = torch.randn(333)
    output = poisoned((333,), torch.int32)
    kernel(input, output)
    assert torch.equal(output, input.view(torch.int32) ^ 0x7FFFFFFF)
    kernel = ninetoothed.make(element_wise_arrangement, half_bits_application, (Tensor(1), Tensor(1)))
    input = torch.randn(333).half()
    output = poisoned((333,), torch.int16)
    kernel(input, output)
    assert torch.equal(output, input.view(torch.int16))


def test_bitcast_between_widths_is_refused():
    def application(input, output):
        output = ntl.cast(input, ntl.int16, bitcast=True)  # noqa: F841

    kernel = ninetoothed.make(element_wise_arrangement, application, (Tensor(1), Tensor(1)))
    with pytest.raises(ValueError, match="same width"):
        kernel(torch.randn(4), torch.empty(4, dtype=torch.int16))


# --- Block-valued indices -----------------------------------------------------------------------


def index_copy_arrangement(input, index, output, block_size=BLOCK):
    input_arranged = input.tile((1, block_size)).tile((1, -1))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    input_arranged.dtype.dtype = input_arranged.dtype.dtype.squeeze(0)
    output_arranged = output.tile((1, block_size)).tile((-1, -1))
    output_arranged = output_arranged.expand((input_arranged.shape[0], -1))
    output_arranged.dtype.dtype = output_arranged.dtype.dtype.squeeze(0)
    index_arranged = index.tile((1,)).expand((-1,))
    index_arranged.dtype = index_arranged.dtype.squeeze(0)
    return input_arranged, index_arranged, output_arranged


def index_copy_application(input, index, output):
    row = index
    for j in range(input.shape[0]):
        output[row, j] = input[j]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_scatter_by_data_into_a_middle_level(dtype):
    # output.index_copy_(0, index, input): each program writes row index[i].
    kernel = ninetoothed.make(index_copy_arrangement, index_copy_application, (Tensor(2), Tensor(1), Tensor(2)))
    rows, columns, output_rows = 6, 37, 11
    input = torch.randn(rows, columns).to(dtype)
    index = torch.randperm(output_rows)[:rows]
    output = torch.randn(output_rows, columns).to(dtype)
    expected = output.clone().index_copy_(0, index, input)
    kernel(input, index, output, block=8)
    assert torch.equal(output, expected)


def gather_arrangement(input, index, output, block_size=BLOCK):
    return input.tile((block_size,)), index.tile((block_size,)), output.tile((block_size,))


def reverse_in_block_application(input, index, output):
    positions = input.shape[0] - 1 - ntl.arange(0, input.shape[0])
    output = input[positions]  # noqa: F841


def scatter_in_block_application(input, index, output):
    output[index] = input * 2


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_gather_and_scatter_at_positions_of_the_block(dtype):
    n, block = 45, 16
    input = torch.randn(n).to(dtype)
    index = torch.cat([torch.randperm(block) for _ in range(3)])[:n].to(torch.int64)
    gather = ninetoothed.make(gather_arrangement, reverse_in_block_application, (Tensor(1), Tensor(1), Tensor(1)))
    output = poisoned((n,), dtype)
    gather(input, index, output, block=block)
    expected = torch.empty(n, dtype=dtype)
    for start in range(0, n, block):
        chunk = input[start : start + block]
        padded = torch.cat([chunk, torch.zeros(block - len(chunk), dtype=dtype)])
        expected[start : start + block] = padded.flip(0)[: len(chunk)]
    assert torch.equal(output, expected)

    scatter = ninetoothed.make(gather_arrangement, scatter_in_block_application, (Tensor(1), Tensor(1), Tensor(1)))
    output = poisoned((n,), dtype)
    scatter(input, index, output, block=block)
    expected = poisoned((n,), dtype)
    for i in range(n):
        start = i // block * block
        position = start + int(index[i])
        if position < n:
            expected[position] = input[i] * 2
    torch.testing.assert_close(output, expected, rtol=0, atol=0, equal_nan=True)


# --- Outermost levels of different ranks --------------------------------------------------------


def global_sum_arrangement(input, output):
    return input.tile((-1, -1, -1)), output.tile((1, 1))


def global_sum_application(input, output):
    output = ntl.sum(ntl.cast(input, ntl.float32))  # noqa: F841


def test_outermost_shapes_of_different_ranks_with_as_many_programs():
    kernel = ninetoothed.make(
        global_sum_arrangement, global_sum_application, (Tensor(3, shape_options={"constexpr": True}), Tensor(2))
    )
    input = torch.randn(3, 5, 7)
    output = poisoned((1, 1), torch.float32)
    kernel(input, output)
    torch.testing.assert_close(output, input.sum().reshape(1, 1), rtol=1e-5, atol=1e-5)


def sum_into_arrangement(input, output):
    return input.tile((4, 4)), output.tile((4,))


def test_outermost_shapes_with_different_program_counts_unravel_their_own():
    """Upstream unravels the program id over each tensor's own outermost shape: program p (of the
    input's 2 x 2) writes the output's block p; the output's fifth block has no program."""
    kernel = ninetoothed.make(sum_into_arrangement, global_sum_application, (Tensor(2), Tensor(1)))
    input = torch.randn(8, 8)
    output = poisoned((20,), torch.float32)
    kernel(input, output)
    expected = poisoned((20,), torch.float32)
    for p in range(4):
        row, column = divmod(p, 2)
        expected[4 * p:4 * p + 4] = input[4 * row:4 * row + 4, 4 * column:4 * column + 4].sum()
    torch.testing.assert_close(output, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
