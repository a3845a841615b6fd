"""Upstream's leniency in declarations, as ntops writes them (issue 26, item 1).

- A `dtype` that is not a dtype (ntops's logsumexp passes its block size there by position) is
  kept and ignored at JIT time; an ahead-of-time build, which uses declared dtypes, refuses it.
- A declared dtype does not refuse an argument of another dtype at a JIT launch: the kernel is
  specialised on the argument's dtype (ntops's mean declares float32 and gets int32 tensors; its
  bincount declares `int` and gets int32).
- `shape_options` (and shapes, tile shapes, paddings) may be any iterable, a generator included
  (ntops's quantile), read once.

What protects memory stays: ranks, devices and sizes are still checked.
"""

import functools
import math

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def poisoned(shape, dtype):
    fill = float("nan") if dtype.is_floating_point else -12345
    return torch.full(shape, fill, dtype=dtype)


def tolerance(dtype):
    return {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(dtype, 1e-5)


# --- a block size where the dtype goes (ntops's logsumexp) ------------------------------------


def reduction_arrangement(input, output, dim, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    ndim = input.ndim
    order = tuple(d for d in range(ndim) if d != dim) + (dim,)
    leading = tuple(range(ndim - 1))

    input_arranged = input.permute(order).tile((1,) * (ndim - 1) + (block_size,))
    input_arranged = input_arranged.tile((1,) * (ndim - 1) + (-1,))
    input_arranged.dtype = input_arranged.dtype.squeeze(leading)
    input_arranged.dtype.dtype = input_arranged.dtype.dtype.squeeze(leading)

    output_arranged = output.permute(order).tile((1,) * ndim)
    output_arranged.dtype = output_arranged.dtype.squeeze(leading)

    return input_arranged, output_arranged


def logsumexp_application(input, output):
    maximum = ntl.cast(float("-inf"), ntl.float32)
    for i in range(input.shape[0]):
        maximum = ntl.maximum(maximum, ntl.max(ntl.cast(input[i], ntl.float32)))
    total = ntl.cast(0, ntl.float32)
    for i in range(input.shape[0]):
        total += ntl.sum(ntl.exp(ntl.cast(input[i], ntl.float32) - maximum))
    output[0] = maximum + ntl.log(total)


def logsumexp_premake(ndim, dim, dtype=None, block_size=None):
    arrangement = functools.partial(reduction_arrangement, dim=dim, block_size=block_size)
    tensors = (
        Tensor(ndim, dtype=dtype, other=float("-inf"), shape_options={"constexpr": True}),
        Tensor(ndim, dtype=dtype),
    )
    return arrangement, logsumexp_application, tensors


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("shape, dim", (((13, 1001), 1), ((77, 5), 0), ((3, 4, 259), -1)))
def test_a_block_size_passed_where_the_dtype_goes(shape, dim, dtype):
    block_size = 256
    # As ntops's logsumexp calls its premake: (ndim, dim, block_size), so dtype=256.
    kernel = ninetoothed.make(*logsumexp_premake(len(shape), dim % len(shape), block_size))
    input = torch.randn(shape).to(dtype)
    output_shape = list(shape)
    output_shape[dim] = 1
    output = poisoned(output_shape, dtype)
    kernel(input, output)
    expected = torch.logsumexp(input.double(), dim=dim, keepdim=True)
    assert torch.allclose(output.double(), expected, rtol=tolerance(dtype), atol=tolerance(dtype))


def test_a_value_that_is_not_a_dtype_is_kept_and_read_back():
    for value in (256, "not a dtype", complex, (1, 2)):
        tensor = Tensor(2, dtype=value)
        assert tensor.dtype == value
        # The levels an arrangement makes have no element type: the argument's is used.
        assert tensor.tile((1, 4)).dtype.dtype is None
    tensor = Tensor(1, dtype=64)
    tensor.dtype = ninetoothed.float16
    assert tensor.dtype == ninetoothed.float16
    tensor.dtype = 128
    assert tensor.dtype == 128


def element_wise_arrangement(*tensors, block_size=ninetoothed.block_size()):
    return tuple(t.flatten().tile((block_size,)) for t in tensors)


def copy_application(input, output):
    output = input  # noqa: F841


def test_an_ahead_of_time_build_refuses_a_value_that_is_not_a_dtype(tmp_path):
    tensors = (Tensor(1, dtype=256), Tensor(1, dtype=ninetoothed.float32))
    with pytest.raises(ValueError, match="dtype=256, which is not a dtype"):
        ninetoothed.make(
            element_wise_arrangement, copy_application, tensors, caller="opencl", kernel_name="lenient_copy",
            output_dir=tmp_path,
        )

    def premake(dtype=None, block_size=None):
        return element_wise_arrangement, copy_application, (Tensor(1, dtype=dtype), Tensor(1, dtype=dtype))

    with pytest.raises(ValueError, match="dtype=64, which is not a dtype"):
        ninetoothed.build(premake, [((64,), {}, {})], kernel_name="lenient_copy_build", output_dir=tmp_path)
    # At a JIT launch the same declaration is ignored.
    kernel = ninetoothed.make(element_wise_arrangement, copy_application, tensors)
    input = torch.randn(1001)
    output = poisoned((1001,), torch.float32)
    kernel(input, output)
    assert torch.equal(output, input)


# --- a declared dtype and an argument of another (ntops's mean and bincount) ------------------


@pytest.mark.parametrize(
    "declared, input_dtype, output_dtype",
    (
        (ninetoothed.float32, torch.int32, torch.float32),  # ntops's mean of an int tensor
        (ninetoothed.float32, torch.float16, torch.float16),
        (ninetoothed.float16, torch.float32, torch.float32),
        (int, torch.int32, torch.int32),  # ntops's bincount: dtype=int, int32 indices
        (int, torch.int16, torch.int64),
        (ninetoothed.int32, torch.float16, torch.float32),
    ),
)
def test_the_arguments_dtype_wins_over_the_declared_one(declared, input_dtype, output_dtype):
    tensors = (Tensor(2, dtype=declared), Tensor(2, dtype=declared))
    kernel = ninetoothed.make(element_wise_arrangement, copy_application, tensors)
    for shape in ((37, 29), (1, 1), (300, 7)):
        if input_dtype.is_floating_point:
            input = torch.randn(shape).to(input_dtype)
        else:
            input = torch.randint(-1000, 1000, shape, dtype=input_dtype)
        output = poisoned(shape, output_dtype)
        kernel(input, output)
        assert torch.equal(output, input.to(output_dtype))


def sum_blocks_arrangement(input, output, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    return input.flatten().tile((block_size,)), output.tile((1,))


def sum_blocks_application(input, output):
    output[0] = ntl.sum(input, 0)


@pytest.mark.parametrize("input_dtype", (torch.int32, torch.int64, torch.float16, torch.float32))
def test_a_reduction_declared_float32_over_other_dtypes(input_dtype):
    # ntops's mean over all elements: both tensors declared with the computation dtype.
    block_size = 64
    tensors = (Tensor(1, dtype=ninetoothed.float32), Tensor(1, dtype=ninetoothed.float32))
    kernel = ninetoothed.make(functools.partial(sum_blocks_arrangement, block_size=block_size),
                              sum_blocks_application, tensors)
    size = 1000
    if input_dtype.is_floating_point:
        input = torch.randn(size).to(input_dtype)
    else:
        input = torch.randint(-50, 50, (size,), dtype=input_dtype)
    output = poisoned((math.ceil(size / block_size),), torch.float32)
    kernel(input, output)
    padded = torch.zeros(output.numel() * block_size, dtype=torch.float64)
    padded[:size] = input.double()
    expected = padded.view(-1, block_size).sum(1)
    assert torch.allclose(output.double(), expected, rtol=1e-5, atol=1e-3 if input_dtype == torch.float16 else 1e-4)


def test_the_checks_that_protect_memory_stay():
    tensors = (Tensor(2, dtype=ninetoothed.float32), Tensor(2, dtype=ninetoothed.float32))
    kernel = ninetoothed.make(element_wise_arrangement, copy_application, tensors)
    with pytest.raises(ValueError, match="2 dimensions"):
        kernel(torch.zeros(6, dtype=torch.int32), torch.zeros(6))
    with pytest.raises(TypeError, match="unsupported dtype"):
        kernel(torch.zeros(2, 3, dtype=torch.complex64), torch.zeros(2, 3))
    with pytest.raises(TypeError):
        kernel(np.zeros((2, 3), dtype=">f4"), torch.zeros(2, 3))


# --- shape_options (and other iterables) as generators (ntops's quantile) ---------------------


def sort_rows_arrangement(input, output, dim):
    def arrange(tensor):
        ndim = tensor.ndim
        order = tuple(d for d in range(ndim) if d != dim) + (dim,)
        arranged = tensor.permute(order).tile((1,) * (ndim - 1) + (-1,))
        arranged.dtype = arranged.dtype.squeeze(tuple(range(ndim - 1)))
        return arranged

    return arrange(input), arrange(output)


def sort_rows_application(input, output):
    output = ntl.sort(input)  # noqa: F841


def sort_rows_premake(ndim, dim, dtype=None):
    # As ntops's quantile: a generator of per-dimension options, constexpr where the block is whole.
    input_shape_options = (None if i != dim else {"constexpr": True} for i in range(ndim))
    output_shape_options = ({"constexpr": True} if i == dim else None for i in range(ndim))
    tensors = (
        Tensor(ndim, dtype=dtype, other=float("inf"), shape_options=input_shape_options),
        Tensor(ndim, dtype=dtype, shape_options=output_shape_options),
    )
    return functools.partial(sort_rows_arrangement, dim=dim), sort_rows_application, tensors


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("shape, dim", (((9, 37), 1), ((64, 3), 0), ((2, 5, 17), 2)))
def test_shape_options_given_as_a_generator(shape, dim, dtype):
    kernel = ninetoothed.make(*sort_rows_premake(len(shape), dim))
    input = torch.randn(shape).to(dtype)
    output = poisoned(shape, dtype)
    kernel(input, output)
    assert torch.equal(output, torch.sort(input, dim=dim).values)


def test_a_generator_is_read_once_and_applies_to_every_dim():
    options = ({"constexpr": True} if i % 2 else {"upper_bound": 64 + i} for i in range(4))
    tensor = Tensor(4, shape_options=options)
    assert [size.constexpr for size in tensor.shape] == [False, True, False, True]
    assert Tensor(shape=(n for n in (2, 3, 5))).shape == (2, 3, 5)
    assert Tensor(2).tile(n for n in (1, 4)).dtype.shape == (1, 4)
    assert Tensor(2).permute(d for d in (1, 0)).ndim == 2
    assert Tensor(1).pad(p for p in ((1, 2),)).ndim == 1
    with pytest.raises(ValueError, match="shape_options"):  # one entry per dim, still
        Tensor(3, shape_options=({} for _ in range(2)))
    with pytest.raises(TypeError, match="shape_options"):
        Tensor(2, shape_options="constexpr")


# --- an upper bound on a size is a hint (ntops's attention bounds its mask's key length by 128) ---


def row_sum_arrangement(input, output):
    return input.tile((1, -1)), output.tile((1,))


def row_sum_application(input, output):
    output = ntl.sum(input.to(ntl.float32), 1)  # noqa: F841


@pytest.mark.parametrize("columns", (3, 16, 97, 300))
def test_a_constexpr_size_beyond_its_upper_bound_is_taken(columns):
    sizes = (None, {"constexpr": True, "upper_bound": 16})
    kernel = ninetoothed.make(
        row_sum_arrangement, row_sum_application, (Tensor(2, shape_options=sizes), Tensor(1))
    )
    input = torch.randn(5, columns)
    output = poisoned((5,), torch.float32)
    kernel(input, output)
    torch.testing.assert_close(output.double(), input.double().sum(1), rtol=1e-5, atol=1e-5)
