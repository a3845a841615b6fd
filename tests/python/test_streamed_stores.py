"""Streamed stores (codegen/c/emitter_prefetch.cpp, strip_mined_loop()): in a program on one
work-item (a kernel with a reduction, or an element-wise kernel's distributed form where a
program has one work-item), a store's unmasked, unit-stride innermost loop whose target spans
16 MiB or more and whose row starts at a 64-byte boundary is written 16 elements at a time
through a private buffer and one non-temporal vector store (the last strip of a row shorter
than 16 element by element); other rows, smaller targets and float16 targets are stored as
before."""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK = Symbol("BLOCK", constexpr=True)
STREAMED = "__builtin_nontemporal_store("


def _rows_arrangement(input, output):
    return input.tile((1, BLOCK)), output.tile((1, BLOCK))


def _minus_max(input, output):
    output = input - ntl.max(input)  # noqa: F841


def _kernel(dtype, other):
    return ninetoothed.make(
        _rows_arrangement, _minus_max, (Tensor(2, dtype=dtype, other=other), Tensor(2, dtype=dtype))
    )


KERNELS = {
    torch.float32: _kernel(ninetoothed.float32, float("-inf")),
    torch.int32: _kernel(ninetoothed.int32, -(2**31)),
}

# 4 Mi elements of 4 bytes are 16 MiB.
BIG = 4 << 20


def _check(input, output, block):
    """Each element less the max of its block of `block` columns; exact: the subtraction rounds
    once, in the inputs' type, on both sides."""
    rows, columns = input.shape
    blocks = -(-columns // block)
    low = float("-inf") if input.dtype.is_floating_point else -(2**31)
    padded = torch.full((rows, blocks * block), low, dtype=input.dtype)
    padded[:, :columns] = input
    maxima = padded.view(rows, blocks, block).max(dim=2).values
    assert torch.equal(output, input - maxima.repeat_interleave(block, dim=1)[:, :columns])


@pytest.mark.parametrize("dtype", (torch.float32, torch.int32))
@pytest.mark.parametrize("columns, block", ((1024, 1024), (100, 100), (1000, 256)))
def test_big_rows_stream(dtype, columns, block):
    """Rows of 1024 (whole strips, every row aligned), 100 in blocks of 100 (6 strips and a tail
    of 4; a row starts at a 64-byte boundary one time in four) and 1000 in blocks of 256 (the
    partial last block takes the masked path)."""
    rows = BIG // columns + 3
    if dtype == torch.int32:
        input = torch.randint(-1000, 1000, (rows, columns), dtype=dtype)
    else:
        input = torch.randn(rows, columns)
    output = torch.full((rows, columns), -7, dtype=dtype)
    kernel = KERNELS[dtype]
    kernel(input, output, BLOCK=block)
    _check(input, output, block)
    assert STREAMED in kernel.source


def test_misaligned_and_small_targets():
    """A target view one element past a 64-byte boundary, and one under 16 MiB: the same results
    through the plain loop."""
    kernel = KERNELS[torch.float32]
    input = torch.randn(BIG // 1024 + 1, 1024)
    storage = torch.full((input.numel() + 2,), float("nan"))
    output = storage[1:-1].view(input.shape)
    kernel(input, output, BLOCK=1024)
    _check(input, output, 1024)
    assert torch.isnan(storage[0]) and torch.isnan(storage[-1])
    small = torch.randn(33, 1024)
    small_output = torch.full_like(small, float("nan"))
    kernel(small, small_output, BLOCK=1024)
    _check(small, small_output, 1024)


def test_float16_targets_are_not_streamed():
    kernel = _kernel(ninetoothed.float16, float("-inf"))
    input = torch.randn(BIG // 1024 + 1, 1024).half()
    output = torch.full_like(input, float("nan"))
    kernel(input, output, BLOCK=1024)
    expected = input.float() - input.float().max(dim=1, keepdim=True).values
    torch.testing.assert_close(output.float(), expected, rtol=1e-3, atol=2e-3)
    assert STREAMED not in kernel.source


def _add_arrangement(x, y, z):
    return x.tile((BLOCK,)), y.tile((BLOCK,)), z.tile((BLOCK,))


def _add(x, y, z):
    z = x + y  # noqa: F841


@pytest.mark.parametrize("block", (1024, 1000))
def test_element_wise_streams(block):
    """The tutorial's vector add: blocks of 1024 (whole strips) and 1000 (a tail of 8; a block
    starts at a 64-byte boundary one time in two), the last block partial (masked)."""
    kernel = ninetoothed.make(_add_arrangement, _add, (Tensor(1), Tensor(1), Tensor(1)))
    x, y = torch.randn(BIG + 37), torch.randn(BIG + 37)
    z = torch.full_like(x, float("nan"))
    kernel(x, y, z, BLOCK=block)
    assert torch.equal(z, x + y)
    assert STREAMED in kernel.source
